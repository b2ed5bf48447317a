"""One measured number is judged as a log of that one size would be: the bound with the links' latency (no time
faster than one message is "good"), the log's margin beyond the band's slow edge, no "slower" call from a band
that is not the run's (borrowed, or holding no run of this collective), and what the p2p time is."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from collperf import api
from collperf.cli import app
from collperf.diagnose import diagnose
from collperf.diagnose.core import SizeVerdict, overall
from collperf.diagnose.corpus_fit import _flagged, hardware_for, read_index
from collperf.expect.expectation import holds
from collperf.diagnose.measurement import as_a_log_would
from collperf.diagnose.verdict import BAND_MARGIN, Kind, Verdict
from collperf.ingest import load
from collperf.expect.band import Sample, band
from collperf.expect.band_fit import fit_bands
from collperf.model.nccl import system_bound_latency_s
from collperf.model.network import Network
from collperf.model.predict import network_lower_bound
from collperf.model.hardware.catalogue import CATALOGUE, to_cluster
from collperf.spec import HardwareSpec

MIB, GIB = 1 << 20, 1 << 30
CORPUS = Path(__file__).resolve().parent.parent / "src" / "collperf" / "data" / "corpus"
runner = CliRunner()
DGX2 = dict(ranks=16, cluster="dgx-h100", nodes=2)


def _log(tmp_path, rows, collective="all_reduce_perf"):
    """A 2 x 8 H100 nccl-tests log of the given (size, time in us) rows."""
    devices = [
        f"#  Rank {r:2d} Group  0 Pid {r} on node{'AB'[r // 8]} device {r % 8} [0x1b] NVIDIA H100 80GB HBM3"
        for r in range(16)
    ]
    table = [f"{n:12d} {n // 4:12d}     float     sum      -1  {t:8.2f} 0 0 0 {t:8.2f} 0 0 0" for n, t in rows]
    path = tmp_path / "run.txt"
    path.write_text(
        "\n".join(
            [
                f"# {collective}",
                "# nThread 1 nGpus 1 minBytes 8 maxBytes 1073741824",
                "# Using devices",
                *devices,
                "#       size         count      type   redop    root     time   algbw   busbw #wrong"
                "     time   algbw   busbw #wrong",
                *table,
            ]
        )
        + "\n"
    )
    return load(path)[0]


# ---- above the bound: its bandwidth term plus the links' latency ------------------------------------------


def test_3us_for_1mib_on_two_dgx_h100_is_above_the_bound_with_its_latency():
    j = api.diagnose_measurement(collective="allreduce", size="1MiB", time="3us", **DGX2)
    # the network binds: 2 (N-1)/N x 1 MiB / (8 NICs x 400 Gb/s = 400e9 B/s) = 2.62144 us; plus one message over the
    # network, the catalogue's 5 us inter-node latency: 7.62144 us. 3 us < 0.98 x 7.62 us (but > 0.98 x 2.62 us)
    assert j.row.bound_s == pytest.approx(MIB / 400e9) and j.row.bound_latency_s == pytest.approx(5e-6)
    assert j.verdict.text.startswith("above the bound: 3 us is faster than the assumed hardware allows")
    assert "2.621 us for the data (network) plus the links' 5 us latency: 7.621 us" in j.verdict.text
    # one number prints no findings: the verdict says what to check in the number itself
    for check in (
        "the time's unit",
        "one call's (not a loop of calls or a whole step)",
        "nccl-tests' size for allreduce (the vector every rank holds, not the total over ranks)",
        "the rank count",
        "--nic-rate",
    ):
        assert check in j.verdict.text
    assert "see the above-bound finding" not in j.verdict.text and not j.row.causes
    # the edge: 0.98 x 7.62144 us = 7.469 us
    assert api.diagnose_measurement(collective="allreduce", size="1MiB", time="7.4us", **DGX2).verdict.text.startswith(
        "above the bound"
    )
    assert not api.diagnose_measurement(
        collective="allreduce", size="1MiB", time="7.5us", **DGX2
    ).verdict.text.startswith("above the bound")


def test_a_log_row_faster_than_any_hop_is_above_the_bound_too(tmp_path):
    table = _log(tmp_path, [(MIB, 3.0), (GIB, 5000.0)])
    d = diagnose(table, hardware=HardwareSpec(cluster="dgx-h100", nodes=2))
    row = {v.size_bytes: v for v in d.sizes}[MIB]
    assert row.verdict.kind is Kind.ABOVE_BOUND and d.verdict.kind is Kind.ABOVE_BOUND
    (finding,) = [f for f in d.findings if f.kind == "above-bound"]
    assert "bound 7.621 us with the links' 5 us latency" in finding.message


@pytest.mark.parametrize("name", sorted(CATALOGUE))
@pytest.mark.parametrize("nodes", [1, 2])
def test_the_bounds_latency_is_predicts(name, nodes):
    """The same latency term predict adds to its bound on the system's alpha-beta view."""
    system = CATALOGUE[name].with_("test", nodes=nodes)
    for collective in ("allreduce", "alltoall", "sendrecv"):
        theirs = network_lower_bound(collective, Network.of(to_cluster(system)), [MIB]).latency_s[0]
        assert system_bound_latency_s(collective, system) == pytest.approx(theirs)


# ---- the margin beyond the slow edge: one number as a one-row log ----------------------------------------


def _row(ratio: float, logs: int = 10, **band) -> SizeVerdict:
    """1 GiB against a band 0.7-1 ms on `logs` runs, `ratio` x its slow edge, as the row verdict calls it."""
    time_s = ratio * 1e-3
    said = (
        Verdict(Kind.SLOWER, f"slower than expected by {ratio - 1:.0%}")
        if ratio > 1.005
        else Verdict(Kind.AS_EXPECTED, "as expected")
    )
    return SizeVerdict(
        GIB,
        time_s,
        0.8e-3,
        0.5e-3,
        None,
        0.5e-3 / time_s,
        "bandwidth",
        said,
        expected_low_s=0.7e-3,
        expected_high_s=1e-3,
        band_logs=logs,
        band_from="calibrated on 10 public runs of this fabric class (ib) from 6 sources",
        **band,
    )


@pytest.mark.parametrize(
    "ratio, label",
    [
        (1.01, "as expected, at the slow end of healthy runs"),
        (1.42, "as expected, at the slow end of healthy runs"),
        (1.44, "slower than expected"),
    ],
)
def test_one_number_follows_the_one_row_logs_rule(ratio, label):
    # a band on 10 runs calls a run slower from 1.3 x (1 + 1/10) = 1.43 x its slow edge
    assert BAND_MARGIN * 1.1 == pytest.approx(1.43)
    one, log = as_a_log_would(_row(ratio), "allreduce", 2), overall([_row(ratio)], [], "allreduce", 2)
    assert one.label == log.label == label
    if label.startswith("as expected"):
        assert one.text == (
            f"as expected, at the slow end of healthy runs: {ratio - 1:.0%} beyond the slow edge "
            f"({ratio:g} ms vs 1 ms; a band on 10 runs calls a run slower from 43%)"
        )
    else:
        assert one == _row(ratio).verdict  # the row's own words: "slower than expected by 44%"


def test_one_number_and_a_one_row_log_on_the_committed_band(tmp_path):
    high = api.diagnose_measurement(collective="allreduce", size="1GiB", time="5ms", **DGX2).row
    margin = BAND_MARGIN * (1 + 1 / high.band_logs)
    for ratio in (1.01, margin - 0.01, margin + 0.01):
        time_s = ratio * high.expected_high_s
        one = api.diagnose_measurement(collective="allreduce", size="1GiB", time=f"{time_s * 1e6:.3f}us", **DGX2)
        d = diagnose(_log(tmp_path, [(GIB, time_s * 1e6)]), hardware=HardwareSpec(cluster="dgx-h100", nodes=2))
        (row,) = d.sizes
        assert row.expected_high_s == pytest.approx(high.expected_high_s)
        assert row.verdict.text.startswith("slower than expected by")  # a log's rows keep their own verdict
        assert one.row.verdict == row.verdict  # and one number's row too
        want = "slower than expected" if ratio > margin else "as expected, at the slow end of healthy runs"
        assert one.verdict.label == d.verdict.label == want
        assert bool(one.row.causes) == (ratio > margin)  # no causes of a slower run where it is not called slower


def test_just_under_the_fast_edge_is_as_expected_as_in_a_log():
    row = _row(0.65)  # 0.7 ms / 0.65 ms = 1.077 below the fast edge, margin 1.43
    row.verdict = Verdict(
        Kind.FASTER_THAN_TYPICAL,
        "faster than typical (650 us vs 700 us, the fast edge of healthy public runs' 700 us-1 ms): good",
    )
    assert as_a_log_would(row, "allreduce", 2).text.startswith("as expected, at the fast end of healthy runs: 8% under")
    assert overall([row], [], "allreduce", 2).kind is Kind.AS_EXPECTED


# ---- a band that is not the run's own calls nothing slower --------------------------------------------------


def test_a_borrowed_band_judges_one_number_as_a_log():
    row = _row(2.0, band_borrowed=True)
    one, log = as_a_log_would(row, "allreduce", 2), overall([row], [], "allreduce", 2)
    assert one.text.startswith(
        "not judged: slower than the band (2 ms vs 1 ms, its slow edge), but that band is borrowed "
        "from other fabric classes (calibrated on 10 public runs"
    )
    assert log.text.startswith(
        "not judged: 1 of 1 bandwidth-bound sizes are slower than the band, but that band is "
        "borrowed from other fabric classes (calibrated on 10 public runs"
    )
    assert one.text.endswith("; give --fabric if the network is not the one assumed")
    # on one node no network is used: say what would judge it instead (the bound: 0.5 ms / 2 ms = 25 % of it)
    alone = as_a_log_would(row, "allreduce", 1).text
    assert "--fabric would not change it: judge it by the bound instead (25% of it)" in alone
    assert "give --fabric" not in alone and "--model-from" in alone


def test_a_borrowed_band_on_one_node_from_the_cli():
    # a 4 x T4 g4dn: one pcie-p2p run in the corpus, so its band is the node group's
    args = [
        "diagnose",
        "allreduce",
        "--size",
        "1GiB",
        "--time",
        "400ms",
        "--ranks",
        "4",
        "--cluster",
        "aws-g4dn-12xlarge",
    ]
    doc = json.loads(runner.invoke(app, args + ["--json"]).output)
    assert doc["band_borrowed"] and doc["verdict_label"] == "not judged" and "give --fabric" not in doc["verdict"]


def test_alltoall_is_not_called_slower_from_a_band_of_other_collectives():
    args = ["diagnose", "alltoall", "--size", "1GiB", "--time", "2.54ms", "--ranks", "8", "--cluster", "dgx-h100"]
    doc = json.loads(runner.invoke(app, args + ["--json"]).output)
    # 1 GiB in 2.54 ms: algbw 422.7 GB/s, busbw x 7/8 = 369.9 GB/s, what NCCL's alltoall reaches on NVSwitch
    assert doc["busbw_GBps"] == pytest.approx(GIB / 2.54e-3 / 1e9 * 7 / 8)
    assert not doc["band_holds"] and doc["band_from"].endswith("; no alltoall among them")
    assert doc["verdict_label"] != "slower than expected"
    assert doc["model_label"].startswith(
        "point-to-point at the links' rates as NCCL sees them (NCCL's tuning model has no alltoall"
    )
    assert "no alltoall among them" in doc["expected_from"] and "NCCL's model (" not in doc["expected_from"]
    text = " ".join(runner.invoke(app, args, terminal_width=250).output.split())
    assert "NCCL's model alone" not in text and "NCCL runs alltoall point-to-point, with no algorithm choice" in text
    # the band (4 runs) over the point-to-point time (2^30 x 7/8 B over the 12 x 30 GB/s NCCL's ring search finds
    # on 18 NVLinks: 2.610 ms, and the latency: 2.622 ms), plus the class's 80 us per call: typical 2.702 ms; its
    # slow edge 1.0495x that, 2.835 ms; margin 1.3 x (1 + 1/4) = 1.625, twice that for a band of other collectives:
    # 5 ms (1.76x its edge) is not judged, 10 ms (3.53x) is slower, saying whose band it was
    beyond = api.diagnose_measurement(collective="alltoall", size="1GiB", time="5ms", ranks=8, cluster="dgx-h100")
    assert (
        beyond.verdict.text.startswith("not judged: slower than the band")
        and "no public alltoall run" in beyond.verdict.text
    )
    assert beyond.row.expected_s == pytest.approx(
        80e-6 + beyond.row.model_s
    ) and beyond.row.expected_high_s == pytest.approx(2.835e-3, rel=1e-3)
    assert "; at 1.76x its slow edge, where such a band calls a run slower from 3.25x;" in beyond.verdict.text
    # just beyond the edge (1.2x, within the margin): the slow end, quoting where this band calls a run slower
    near = api.diagnose_measurement(collective="alltoall", size="1GiB", time="3.402ms", ranks=8, cluster="dgx-h100")
    assert near.verdict.text.startswith(
        "as expected, at the slow end of healthy runs: 20% beyond the slow edge"
    ) and near.verdict.text.endswith("a band of runs of other collectives calls a run slower from 3.25x its slow edge)")
    far = api.diagnose_measurement(collective="alltoall", size="1GiB", time="10ms", ranks=8, cluster="dgx-h100")
    assert far.verdict.text.startswith("slower than expected by 3.53x") and far.verdict.text.endswith(
        "(the band is from runs of other collectives: such a band calls a run slower from 3.25x its slow edge)"
    )
    allgather = json.loads(runner.invoke(app, ["diagnose", "allgather"] + args[2:] + ["--json"]).output)
    assert allgather["band_holds"] and "among them" not in allgather["band_from"]


@pytest.mark.parametrize(
    "collective, held, expected",
    [
        ("reducescatter", ("allreduce",), True),  # measured / NCCL's model carries over between priced ones
        ("broadcast", ("allgather", "allreduce"), True),
        ("alltoall", ("allreduce",), False),  # no tuning model: only its own runs say what it reaches
        ("sendrecv", ("allgather",), False),
        ("alltoall", ("alltoall", "allreduce"), True),
        ("allreduce", ("alltoall",), False),
        ("allreduce", (), True),  # a table that did not record them
    ],
)
def test_a_band_speaks_for_the_collectives_nccls_model_prices_alike(collective, held, expected):
    assert holds(collective, held) is expected


@pytest.mark.parametrize("collective", ["allreduce", "reducescatter", "allgather", "broadcast"])
def test_a_run_many_times_slower_is_slower_whatever_collective_the_band_measured(collective):
    # 1 GB in 1 s on 2 DGX H100 (the ib band: its public runs are all-reduces): tens of times beyond every edge
    row = api.diagnose_measurement(
        collective=collective, size="1GB", time="1s", ranks=16, cluster="dgx-h100", nodes=2
    ).row
    assert row.band_holds and row.verdict.kind is Kind.SLOWER
    # ... and the band says whose runs it is where they are not of this collective
    assert (collective == "allreduce") == ("among them" not in row.band_from)
    if collective != "allreduce":
        assert row.band_from.endswith(
            f"; no {collective} among them: their allreduce runs judge it through NCCL's model"
        )


def test_the_band_table_records_its_runs_collectives():
    sizes = 2.0 ** np.arange(20, 31)

    def sample(i, collective):
        model = 20e-6 + sizes / 100e9
        return Sample(f"log{i}", f"src{i}", "ib", sizes, 1.2 * model, model, sizes / 200e9, 8, collective)

    table = fit_bands([sample(i, "allreduce") for i in range(4)] + [sample(9, "allgather")])
    assert table["ib"]["30"]["collectives"] == ["allgather", "allreduce"]
    b = band([GIB], [1e-3], "ib", table)
    assert b.collectives == [("allgather", "allreduce")] and b.borrowed == [False]


@pytest.mark.parametrize(
    "log_id, label",
    [
        ("h100-roce-2x1-sendrecv-gh-cci-moc", "not judged"),
        ("h100-roce-2x4-sendrecv-gh-cci-moc", "slower than expected"),
    ],
)
def test_the_known_bad_sendrecv_runs_stay_flagged(log_id, label):
    # their band holds no send/recv run: the 2x1 run (about 1.4x beyond its slow edge) is not judged from it, the
    # 2x4 one (about 4.7x) is beyond twice the margin, so slower even so
    row = next(r for r in read_index(CORPUS) if r["id"] == log_id)
    d = diagnose(load(CORPUS / f"{log_id}.txt", "sendrecv")[0], hardware=hardware_for(row))
    assert d.verdict.label == label and "sendrecv among them" in " ".join(v.band_from or "" for v in d.sizes)
    assert (
        "where such a band calls a run slower from"
        if label == "not judged"
        else "(the band is from runs of other collectives: such a band calls a run slower from"
    ) in d.verdict.text
    assert _flagged(d) and any(f.kind == "slower-overall" and f.severity == "warning" for f in d.findings)


# ---- wording -----------------------------------------------------------------------------------------------


def test_efficiency_at_the_bound_reads_100_percent_and_the_algorithm_is_nccls_choice():
    args = [
        "diagnose",
        "allreduce",
        "--size",
        "1GB",
        "--time",
        "2.5ms",
        "--ranks",
        "16",
        "--cluster",
        "dgx-h100",
        "--nodes",
        "2",
    ]
    text = " ".join(runner.invoke(app, args, terminal_width=250).output.split())
    # 1e9 B over 8 x 400 Gb/s: the bound is 2.5 ms, so 2.5 ms is 100 % of it (and not under 0.98 x 2.505 ms)
    assert (
        "bound 2.5 ms (network), 2.505 ms with the links' 5 us latency; efficiency 100 % (bound with its latency / measured)"
        in text
    )
    assert "1e+02" not in text
    assert (
        "; NCCL's choice on dgx-h100: nvls-tree/Simple, bandwidth-bound (runner-up ring/Simple); NCCL's model "
        "alone" in text
    )


def test_predict_says_what_its_alltoall_time_is():
    args = ["predict", "alltoall", "--size", "1GiB", "--cluster", "dgx-h100"]
    text = " ".join(runner.invoke(app, args, terminal_width=250).output.split())
    assert (
        "NCCL model: point-to-point at the links' rates as NCCL sees them (NCCL's tuning model has no alltoall" in text
    )
    # --nccl says what its time is where it says where the time comes from, and heads its column so
    text = " ".join(runner.invoke(app, args + ["--nccl"], terminal_width=250).output.split())
    assert "expected: point-to-point at the links' rates as NCCL sees them (NCCL's tuning model has no alltoall" in text
    assert "NCCL's own model (tuning.cc)" not in text and "p2p rate" in text.split("per size", 1)[1]
    doc = json.loads(
        runner.invoke(
            app, ["predict", "allreduce", "--size", "1GiB", "--cluster", "dgx-h100", "--nccl", "--json"]
        ).output
    )
    assert doc["model_note"] == ""
