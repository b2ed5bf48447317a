"""Reading real and synthetic logs, fitting them, diagnosing them; fuzzed parsers never crash."""

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from typer.testing import CliRunner

from collperf import api
from collperf.cli import app
from collperf.errors import UsageError
from collperf.diagnose import diagnose
from collperf.fit import fit
from collperf.ingest import IngestError, Row, Table, load, parse

SAMPLES = Path(__file__).resolve().parents[1] / "examples"  # public nccl-tests logs, each with its source
FIXTURES = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).parent.parent
runner = CliRunner()

# (file, tables, rows in the first table, ranks, nodes, collective)
SAMPLE_FACTS = [
    ("01_superbench-a100x8-allreduce.txt", 1, 68, 8, 1, "allreduce"),
    ("09_aws-eks-efa-t4-2node-allreduce.txt", 1, 62, 2, 2, "allreduce"),
    ("10_pcie-2080ti-x2-allreduce.txt", 1, 56, 2, 1, "allreduce"),
    ("14_h100-ib400-2node-16gpu-allreduce.txt", 1, 64, 16, 2, "allreduce"),
    ("19_lambda-b200-2node-16gpu-allreduce.txt", 1, 58, 16, None, "allreduce"),
]


@pytest.mark.parametrize("name, tables, rows, ranks, nodes, collective", SAMPLE_FACTS)
def test_every_sample_parses(name, tables, rows, ranks, nodes, collective):
    parsed = load(SAMPLES / name)
    assert len(parsed) == tables
    t = parsed[0]
    assert (len(t.rows), t.ranks, t.nodes, t.collective) == (rows, ranks, nodes, collective)
    assert not t.skipped
    assert t.footer["out_of_bounds"] == 0
    f = fit(t)
    assert f.median_error < 0.10 and f.r2 > 0.98  # figures per sample in docs/diagnose.md
    assert f.median_error <= f.single_median_error  # regimes never fit worse than one line


def test_sample_headers():
    t = load(SAMPLES / "14_h100-ib400-2node-16gpu-allreduce.txt")[0]
    assert t.header["gpus"] == ["NVIDIA H100 80GB HBM3"] and t.header["hosts"] == ["bm-h100-01", "bm-h100-02"]
    assert t.header["nccl_version"] == "2.26.2+cuda12.8"
    t = load(SAMPLES / "19_lambda-b200-2node-16gpu-allreduce.txt")[0]
    assert t.header["nccl_tests_version"] == "2.17.6" and "inferred 16" in t.notes[0]
    t = load(SAMPLES / "09_aws-eks-efa-t4-2node-allreduce.txt")[0]  # mpirun --tag-output, NCCL INFO in the table
    assert t.rows[0].size == 0 and t.rows[-1].size == 1 << 30


@pytest.mark.parametrize(
    "name, rows, ranks, collective",
    [
        ("current_allreduce.txt", 26, 8, "allreduce"),
        ("tagged_noise.txt", 26, 16, "allreduce"),
        ("markdown_stripped.txt", 26, 8, "allreduce"),
        ("legacy_allreduce.txt", 18, 8, "allreduce"),
        ("legacy_allgather_old_algbw.txt", 12, 12, "allgather"),
        ("per_iter_timestamp.txt", 14, 8, "allreduce"),
        ("nccl_tests.json", 12, 8, "reducescatter"),
        ("osu_allreduce.txt", 19, None, "allreduce"),
        ("imb_allgather.txt", 9, 4, "allgather"),
    ],
)
def test_fixture_formats(name, rows, ranks, collective):
    t = load(FIXTURES / name)[0]
    assert (len(t.rows), t.ranks, t.collective) == (rows, ranks, collective)
    assert all(r.time_s > 0 for r in t.rows)


def test_legacy_and_old_conventions():
    t = load(FIXTURES / "legacy_allgather_old_algbw.txt")[0]
    assert t.header["old_algbw_convention"] and "pre-June-2020" in " ".join(t.notes)
    r = t.rows[-1]
    assert r.algbw_GBps == pytest.approx(r.size / r.time_s / 1e9)  # recomputed
    legacy = load(FIXTURES / "legacy_allreduce.txt")[0]
    assert all(r.wrong == 0 for r in legacy.rows) and legacy.rows[0].op == "sum"
    imb = load(FIXTURES / "imb_allgather.txt")[0]
    assert imb.rows[1].size == 4 * 4  # per process bytes x 4 processes


def test_two_tests_na_and_truncation():
    a, b = load(FIXTURES / "two_tests.txt")
    assert (a.collective, b.collective) == ("allreduce", "allgather")
    assert a.rows[0].wrong is None  # N/A
    t = load(FIXTURES / "truncated.txt")[0]
    assert len(t.skipped) == 2 and "line 25" in t.skipped[0] and "truncated" in " ".join(t.notes)


def test_broken_input_errors():
    with pytest.raises(IngestError, match="not a log collperf can read"):
        load(FIXTURES / "not_a_log.txt")
    with pytest.raises(IngestError, match="does not exist"):
        load(FIXTURES / "nope.txt")
    with pytest.raises(IngestError, match=r"line 1: broken JSON"):
        parse('{"results": [', "x.json")
    with pytest.raises(IngestError, match="no nccl-tests result rows"):
        parse("# nThread 1 nGpus 1\n#  size count type time busbw\n", "y.txt")


# --- fit ----------------------------------------------------------------------------------------


def synthetic(regimes, noise=0.0, seed=0, p=8):
    """A table from known piecewise parameters: [(up_to_bytes, alpha_s, busbw_GBps)]."""
    rng = np.random.default_rng(seed)
    t = Table("synthetic", "allreduce", p)
    factor = 2 * (p - 1) / p
    for k in range(3, 34):
        size = 2**k
        _, alpha, bus = next(r for r in regimes if size <= r[0])
        time = (alpha + size * factor / (bus * 1e9)) * (1 + noise * rng.standard_normal())
        t.rows.append(Row(size, time, size / time / 1e9, size / time / 1e9 * factor, 0))
    return t


def test_fit_recovers_known_piecewise_parameters():
    truth = [(2**16, 10e-6, 20.0), (2**24, 30e-6, 150.0), (2**40, 80e-6, 400.0)]
    f = fit(synthetic(truth, noise=0.01))
    assert len(f.regimes) == 3
    for got, (to, alpha, bus) in zip(f.regimes, truth):
        assert got.to_bytes <= to * 2 and got.latency_s == pytest.approx(alpha, rel=0.15)
        assert got.busbw_GBps == pytest.approx(bus, rel=0.15)
    assert f.median_error < 0.02


def test_one_line_stays_one_regime_and_n_half():
    f = fit(synthetic([(2**40, 20e-6, 100.0)], noise=0.005))
    assert len(f.regimes) == 1
    # busbw(n) = B n / (n + alpha B / f): half of the plateau at n = alpha B / f
    assert f.n_half_bytes == pytest.approx(20e-6 * 100e9 / 1.75, rel=0.3)


def test_fit_skips_wrong_rows_and_needs_two():
    t = synthetic([(2**40, 20e-6, 100.0)])
    for r in t.rows[:-1]:
        r.wrong = 3
    with pytest.raises(Exception, match="usable row"):
        fit(t)


# --- diagnose -----------------------------------------------------------------------------------


def kinds(path, **kw):
    return {f.kind for f in diagnose(load(FIXTURES / path)[0], **kw).findings}


def test_each_anomaly_is_flagged_where_present_and_only_there():
    clean = kinds("current_allreduce.txt", peak_Bps=200e9)
    assert not clean & {"correctness", "dip", "non-monotonic", "above-bound", "single-rank", "placement"}
    assert "correctness" in kinds("wrong_results.txt")
    assert {"dip", "non-monotonic"} <= kinds("dip.txt")
    assert "above-bound" in kinds("current_allreduce.txt", peak_Bps=20e9)
    assert "single-rank" in kinds("not_multirank.txt")
    assert "convention" in kinds("legacy_allgather_old_algbw.txt")
    assert "avg-busbw" in clean
    assert "skipped-lines" in kinds("truncated.txt")


def test_verdicts_against_a_given_peak():
    # --peak is the bound: efficiency = bound / measured, at most 100 %; the expected time is NCCL's
    # model of the log's 8 x H100 node (from its device lines)
    d = diagnose(load(FIXTURES / "current_allreduce.txt")[0], peak_Bps=110e9)
    big = d.sizes[-1]
    assert big.efficiency == pytest.approx(big.bound_s / big.time_s) and 0.85 < big.efficiency <= 1
    assert big.bound_s == pytest.approx(big.size_bytes * 2 * 7 / 8 / 110e9)
    assert d.sizes[0].regime == "latency"
    d = diagnose(load(FIXTURES / "current_allreduce.txt")[0], peak_Bps=20e9)  # below what it ran at
    assert all(s.efficiency is None or s.efficiency <= 1 for s in d.sizes)
    assert d.sizes[-1].verdict.text.startswith("above the bound")


def test_model_from_one_collective_predicts_another():
    # the A100 box of sample 01 (allreduce) fitted through NCCL's model predicts its allgather (sample 02)
    ag = load(ROOT / "examples/02_superbench-a100x8-allgather.txt")[0]
    d = diagnose(ag, model=str(ROOT / "examples/01_superbench-a100x8-allreduce.txt"))
    assert d.model_from.endswith("01_superbench-a100x8-allreduce.txt")
    big = d.sizes[-1]
    assert big.expected_s == pytest.approx(big.time_s, rel=0.15)


def test_diagnose_and_fit_cli(tmp_path):
    png = tmp_path / "d.png"
    res = runner.invoke(app, ["diagnose", str(FIXTURES / "dip.txt"), "--peak", "100GB/s", "--plot", str(png)])
    assert res.exit_code == 0, res.output
    assert "dip" in res.output and "per size" in res.output and png.stat().st_size > 10000
    res = runner.invoke(app, ["diagnose", str(FIXTURES / "current_allreduce.txt"), str(FIXTURES / "dip.txt"), "--json"])
    doc = json.loads(res.output)
    assert len(doc["diagnoses"]) == 2 and doc["comparison"][0]["ratio_1"] == pytest.approx(1.0, rel=0.01)
    res = runner.invoke(app, ["fit", str(FIXTURES / "legacy_allreduce.txt"), "--json"])
    fitted = json.loads(res.output)
    assert fitted["regimes"][-1]["busbw_GBps"] == pytest.approx(50, rel=0.02)
    res = runner.invoke(app, ["diagnose", str(FIXTURES / "current_allreduce.txt"), "--cluster", "dgx-h100"])
    assert res.exit_code == 0, res.output


def test_api_reads_our_own_bench_json(tmp_path):
    doc = {
        "version": "collperf",
        "collective": "allreduce",
        "ranks": 2,
        "results": [
            {
                "size": s,
                "count": s // 4,
                "type": "float",
                "redop": "sum",
                "root": -1,
                "algorithm": "ring",
                "out_of_place": {"time": 10 + s / 1e3, "alg_bw": 1.0, "bus_bw": 1.0, "nwrong": 0},
                "in_place": None,
            }
            for s in (1024, 4096, 16384, 65536)
        ],
    }
    (tmp_path / "b.json").write_text(json.dumps(doc))
    (t,) = api.read_logs(tmp_path / "b.json")
    assert t.collective == "allreduce" and len(t.rows) == 4


# --- fuzz ---------------------------------------------------------------------------------------

TEXTS = [p.read_text() for p in sorted(FIXTURES.glob("*.txt"))]


def _parse_and_fit_a_mutation(text, data):
    lines = text.splitlines()
    cut = data.draw(st.integers(0, len(lines)))
    lines = lines[:cut]
    for _ in range(data.draw(st.integers(0, 4))):
        if lines:
            i = data.draw(st.integers(0, len(lines) - 1))
            action = data.draw(st.sampled_from(["drop", "dup", "garble", "chop"]))
            if action == "drop":
                del lines[i]
            elif action == "dup":
                lines.insert(i, lines[i])
            elif action == "garble":
                lines[i] = data.draw(st.text(max_size=60))
            else:
                lines[i] = lines[i][: data.draw(st.integers(0, len(lines[i])))]
    try:
        tables = parse("\n".join(lines), "fuzz")
    except IngestError:
        return
    for t in tables:
        assert t.rows
        try:
            fit(t)
        except Exception as e:  # a fit may refuse too few rows, but only with a clear user error
            assert "usable row" in str(e)


# the core draws 30 mutations; the full fuzz (slow) 150
test_parsers_never_crash_on_mutated_logs = settings(max_examples=30, deadline=None)(
    given(st.sampled_from(TEXTS), st.data())(_parse_and_fit_a_mutation)
)
test_parsers_never_crash_on_many_mutated_logs = pytest.mark.slow(
    settings(max_examples=150, deadline=None)(given(st.sampled_from(TEXTS), st.data())(_parse_and_fit_a_mutation))
)


# --- ingest fixes found on real logs ---------------------------------------------------------------


def test_legacy_error_rounding_is_not_a_wrong_result():
    t = load(FIXTURES / "legacy_error_rounding.txt")[0]  # error 2e-07 on every row, footer 0 OK
    assert all(r.max_error == pytest.approx(2e-7) and r.wrong == 0 for r in t.rows)
    assert "correctness" not in {f.kind for f in diagnose(t).findings}
    text = (FIXTURES / "legacy_error_rounding.txt").read_text()
    # without the footer the type's tolerance decides: float accepts 1e-5, so 2e-07 is fine, 2e+00 is not
    no_footer = text.replace("# Out of bounds values : 0 OK\n", "")
    assert all(r.wrong == 0 for r in parse(no_footer)[0].rows)
    failed = no_footer.replace("2e-07", "2e+00", 1)
    assert [r.wrong for r in parse(failed)[0].rows[:3]] == [1, 0, 0]


def test_legacy_alltoall_is_alltoall():
    t = load(FIXTURES / "legacy_alltoall.txt")[0]
    assert (t.collective, t.ranks) == ("alltoall", 8)


def test_elided_device_lines_do_not_set_the_rank_count():
    t = load(FIXTURES / "elided_devices.txt")[0]  # Rank 0, Rank 1, '...', Rank 15 on 16 ranks
    assert t.ranks == 16 and t.header["ranks_from"] == "busbw/algbw"
    assert any("elided" in n for n in t.notes) and any("inferred 16 from busbw/algbw" in n for n in t.notes)
    # the nodes come from the hosts' numbering of the lines that remain (node-a, node-b: 8 GPUs a host), not their
    # count (two hosts listed)
    assert t.nodes == 2 and t.header["nodes_from"] == "host numbering"
    gap = (FIXTURES / "elided_devices.txt").read_text().replace("#  ...\n", "")
    assert parse(gap)[0].ranks == 16  # a gap in the rank numbers is an elision too
    with pytest.raises(IngestError, match=r"--ranks 8 but the log says 16"):
        load(FIXTURES / "elided_devices.txt", ranks=8)


def test_imb_point_to_point_blocks_read_time_not_bandwidth():
    pingpong, sendrecv, exchange = load(FIXTURES / "imb_p2p.txt")
    assert pingpong.collective == sendrecv.collective == exchange.collective == "sendrecv"
    # t[usec] of PingPong, t_avg[usec] of the others; the Mbytes/sec column is never a time
    assert [r.time_s for r in pingpong.rows][-1] == pytest.approx(400e-6)
    assert [r.time_s for r in sendrecv.rows][-1] == pytest.approx(435e-6)
    assert [r.time_s for r in exchange.rows][-1] == pytest.approx(805e-6)
    assert pingpong.rows[-1].algbw_GBps == pytest.approx(4194304 / 400e-6 / 1e9)


def test_a_wide_dip_is_one_range_with_every_size():
    d = diagnose(load(FIXTURES / "wide_dip.txt")[0])
    dips = [f for f in d.findings if f.kind == "dip"]
    assert len(dips) == 1
    assert dips[0].sizes_bytes == [1 << k for k in range(24, 31)]  # 16 MiB .. 1 GiB, recovering at 2 GiB
    assert "16 MiB to 1 GiB (7 size(s)" in dips[0].message


# --- no silent wrong answers -------------------------------------------------------------------------

CURRENT = (FIXTURES / "current_allreduce.txt").read_text()


def _line_with(text: str, size: int) -> str:
    return next(line for line in text.splitlines() if line.split()[:1] == [str(size)])


def _replace_field(text: str, size: int, index: int, value: str) -> str:
    line = _line_with(text, size)
    fields = line.split()
    fields[index] = value
    return text.replace(line, "  ".join(fields))


@pytest.mark.parametrize("value", ["-5.00", "0.00", "nan"])
def test_negative_zero_or_nan_time_is_reported_not_judged(value):
    size = int(_line_with(CURRENT, 134217728).split()[0])
    t = parse(_replace_field(CURRENT, size, 5, value), "bad-time.txt")[0]
    assert any("line" in s and "time (us)" in s for s in t.skipped)
    d = diagnose(t, peak_Bps=110e9)
    assert size not in [s.size_bytes for s in d.sizes]  # no verdict, 'excellent' or other, for that row
    assert "skipped-lines" in {f.kind for f in d.findings}


def test_fractional_wrong_in_current_format_is_not_zero():
    t = parse(_replace_field(CURRENT, 8192, 8, "0.5"), "frac.txt")[0]
    assert any("#wrong '0.5' is not a whole number" in s for s in t.skipped)
    assert 8192 not in [r.size for r in t.placement("out-of-place")]


def test_a_row_like_line_that_cannot_be_read_is_reported():
    line = _line_with(CURRENT, 8)
    t = parse(CURRENT.replace(line, "8x  2  float  sum  -1  20.0  0.00  0.00  0  20.0  0.00  0.00  0"), "x.txt")[0]
    assert t.skipped and "not a row of the table" in t.skipped[0]  # the first row: before any row was read


def test_time_and_algbw_that_disagree_are_flagged():
    t = parse(_replace_field(CURRENT, 33554432, 6, "99.99"), "edit.txt")[0]
    flagged = t.flagged()
    assert [r.size for r in flagged] == [33554432] and "disagrees with size / time" in flagged[0].flags[0]
    assert "inconsistent-rows" in {f.kind for f in diagnose(t).findings}
    assert 33554432 not in fit(t).sizes  # a minority of flagged rows is left out of the fit


def test_collective_inferred_only_when_every_row_agrees():
    unnamed = "\n".join(line for line in CURRENT.splitlines() if "all_reduce_perf" not in line)
    assert parse(unnamed, "u.txt")[0].collective == "allreduce"
    # one row's busbw edited (its algbw still matches its time): the rows disagree on busbw/algbw
    edited = _replace_field(unnamed, 8388608, 7, f"{float(_line_with(unnamed, 8388608).split()[6]) * 0.9:.2f}")
    with pytest.raises(IngestError, match="pass --collective"):
        parse(edited, "u.txt")
    assert parse(edited, "u.txt", collective="allreduce")[0].flagged()  # named: flagged, not refused


def test_two_tests_with_nbsp_and_tabs_keep_each_collective():
    text = (FIXTURES / "two_tests.txt").read_text()
    for odd in ("\xa0", "\t"):
        a, b = parse(text.replace("Collective test starting: ", f"Collective{odd}test{odd}starting:{odd}"), "p.txt")
        assert (a.collective, b.collective) == ("allreduce", "allgather")
    # a second table whose name line was lost does not inherit the first table's collective
    lost = text.replace("# Collective test starting: all_gather_perf", "#")
    assert parse(lost, "p.txt")[1].header["collective_from"] != "log"


def test_given_collective_that_the_ratio_contradicts_is_refused():
    with pytest.raises(IngestError, match=r"--collective allgather does not fit this log.*matches allreduce"):
        load(FIXTURES / "current_allreduce.txt", collective="allgather")
    res = runner.invoke(app, ["fit", str(FIXTURES / "current_allreduce.txt"), "--collective", "allgather"])
    assert res.exit_code != 0 and isinstance(res.exception, IngestError)


def test_given_ranks_that_the_log_contradicts_are_refused():
    with pytest.raises(IngestError, match=r"--ranks 3 but the log says 16 ranks"):
        api.fit_logs(FIXTURES / "tagged_noise.txt", ranks=3)
    assert load(FIXTURES / "tagged_noise.txt", ranks=16)[0].ranks == 16


def test_two_row_log_is_refused_and_peak_uses_every_digit():
    lines = CURRENT.splitlines()
    rows = [i for i, line in enumerate(lines) if line.split()[:1] and line.split()[0].isdigit()]
    two = "\n".join(line for i, line in enumerate(lines) if i not in rows[2:])
    with pytest.raises(UsageError, match="2 usable row.*at least 3 sizes"):
        fit(parse(two, "two.txt")[0])
    small = "\n".join(line for i, line in enumerate(lines) if i not in rows[4:])  # busbw printed 0.00 .. 0.04
    f = fit(parse(small, "small.txt")[0])
    assert f.peak_busbw_GBps > 0  # size x factor / time, not the printed 0.00


def test_osu_without_rank_count_does_not_call_algbw_busbw():
    t = load(FIXTURES / "osu_allreduce.txt")[0]
    assert t.ranks is None and all(r.busbw_GBps is None for r in t.rows)
    assert any("busbw cannot be computed" in n for n in t.notes)
    assert "no-busbw" in {f.kind for f in diagnose(t).findings}
    t = load(FIXTURES / "osu_allreduce.txt", ranks=4)[0]
    assert t.rows[-1].busbw_GBps == pytest.approx(t.rows[-1].algbw_GBps * 1.5)
