"""bench's outputs without running processes: text, JSON and CSV read back through ingest (what `collperf fit`
and `diagnose` read), a stream cut at any row is still a valid file, output paths and machine limits are
checked before any work."""

import json
import os

import pytest

from collperf import ingest
from collperf.lab.bench import check_capacity, max_local_ranks, rank_memory_bytes, TORCH_RANK_BYTES, CHECK_BYTES
from collperf.errors import UsageError
from collperf.spec import output_path
from collperf.lab.results import ResultFiles, Results, TextStream, to_csv, to_json, to_text
from collperf.spec import BenchSpec, SweepSpec

SIZES = [1024, 4096, 16384]


def _results(algorithms=("ring", "builtin"), in_place=True, ranks=4) -> Results:
    """Hand-made rows: allreduce on 4 ranks, time 100 us x (1 + size / 4096), busbw = algbw x 2(p-1)/p."""
    rows = []
    for a in algorithms:
        for size in SIZES:
            t_us = 100.0 * (1 + size / 4096) + (7.0 if a == "ring" else 0.0)
            algbw = size / t_us / 1e3
            m = {"time_us": t_us, "min_us": t_us, "p50_us": t_us, "algbw": algbw, "busbw": algbw * 1.5, "wrong": 0}
            rows.append(
                {
                    "algorithm": a,
                    "size": size,
                    "count": size // 4,
                    "type": "float",
                    "redop": "sum",
                    "root": -1,
                    "out_of_place": m,
                    "in_place": dict(m) if in_place else None,
                    "predicted_us": 110.0 if a == "ring" else None,
                }
            )
    config = {
        "sizes": SIZES,
        "step": "4(factor)",
        "factor": 4,
        "warmup": 1,
        "iters": 2,
        "check": 1,
        "dtype": "float32",
        "op": "sum",
        "algorithms": list(algorithms),
        "slice_bytes": 1 << 20,
    }
    devices = [{"rank": r, "host": "node0", "pid": 1000 + r, "device": 0, "name": "cpu"} for r in range(ranks)]
    return Results("allreduce", ranks, "gloo", config, rows, model="given: test", devices=devices)


def _read(text, name):
    return ingest.parse(text, name)


def _by_algorithm(tables):
    """{algorithm: [(size, placement, time_us)]} of parsed tables."""
    return {t.header["algorithm"]: [(r.size, r.placement, round(r.time_s * 1e6, 2)) for r in t.rows] for t in tables}


def _expected(res):
    return {
        a: [
            (r["size"], pl.replace("_", "-"), round(r[pl]["time_us"], 2))
            for r in res.rows
            if r["algorithm"] == a
            for pl in ("out_of_place", "in_place")
            if r[pl]
        ]
        for a in res.algorithms()
    }


@pytest.mark.parametrize("in_place", [True, False])
def test_text_reads_back_as_nccl_tests_with_sizes_times_algorithms_ranks(in_place):
    res = _results(in_place=in_place)
    tables = _read(to_text(res), "bench.txt")
    assert len(tables) == 2
    assert _by_algorithm(tables) == _expected(res)
    for t in tables:
        assert t.collective == "allreduce" and t.ranks == 4 and t.nodes == 1  # from the device lines
        assert not t.skipped and not t.flagged()


def test_json_and_csv_read_back_with_collective_and_ranks():
    res = _results()
    for text, name in ((json.dumps(to_json(res)), "b.json"), (to_csv(res), "b.csv")):
        tables = _read(text, name)
        assert _by_algorithm(tables) == _expected(res), name
        assert all(t.collective == "allreduce" and t.ranks == 4 for t in tables), name


def test_a_stream_cut_after_any_row_is_a_readable_log():
    res = _results()
    rows, res.rows = res.rows, []
    chunks = []
    stream = TextStream(chunks.append)
    for n, row in enumerate(rows, 1):
        res.rows.append(row)
        stream.row(res, row)
        tables = _read("".join(chunks), "partial.txt")  # as a reader would see the output at this moment
        assert sum(len(t.rows) for t in tables) == 2 * n
    res.stopped = "timed out after 6 rows"
    stream.close(res)
    text = "".join(chunks)
    assert "# collperf bench timed out after 6 rows" in text
    assert _by_algorithm(_read(text, "whole.txt")) == _expected(res)


def test_files_are_rewritten_whole_after_every_row(tmp_path):
    res = _results()
    rows, res.rows = res.rows, []
    files = ResultFiles(str(tmp_path / "r.json"), str(tmp_path / "r.csv"))
    for n, row in enumerate(rows, 1):
        res.rows.append(row)
        files.update(res)
        for name in ("r.json", "r.csv"):
            tables = ingest.load(tmp_path / name)
            assert sum(len(t.rows) for t in tables) == 2 * n
    assert not [p for p in os.listdir(tmp_path) if ".tmp-" in p]  # the temporary files are renamed away
    assert json.loads((tmp_path / "r.json").read_text())["complete"] is True


def test_output_paths_are_checked_before_any_work(tmp_path):
    output_path(str(tmp_path / "ok.json"), "--json-file")
    with pytest.raises(UsageError, match="does not exist"):
        output_path(str(tmp_path / "missing" / "r.json"), "--json-file")
    with pytest.raises(UsageError, match="is a folder"):
        output_path(str(tmp_path), "--csv-file")
    with pytest.raises(UsageError, match="--csv-file.*does not exist"):
        BenchSpec(sweep=SweepSpec(), ranks=2, csv_file=str(tmp_path / "no" / "r.csv"))
    if os.geteuid() != 0:  # root writes anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        with pytest.raises(UsageError, match="not writable"):
            output_path(str(locked / "r.json"), "--json-file")


def test_rank_counts_and_sweeps_the_machine_cannot_hold_are_refused():
    small = SweepSpec(min_bytes=1024, max_bytes=1024)
    assert check_capacity(small, 2) == []
    with pytest.raises(UsageError, match=r"--ranks 100000 is more local processes .* --force"):
        check_capacity(small, 100000)
    assert any("running anyway (--force)" in n for n in check_capacity(small, max_local_ranks() + 1, force=True))
    huge = SweepSpec(min_bytes="1K", max_bytes="1T")
    with pytest.raises(UsageError, match=r"needs an estimated .*MemAvailable.*lower -e"):
        check_capacity(huge, 2)
    assert any("may not fit" in n for n in check_capacity(huge, 2, force=True))
    # the estimate at 4 ranks, 64 MiB allreduce float32: send + receive + one buffer of scratch, per rank
    assert rank_memory_bytes(SweepSpec(min_bytes="64M", max_bytes="64M"), 4) == TORCH_RANK_BYTES + CHECK_BYTES + 3 * (
        64 << 20
    )
    # allgather's size is the whole output: the input is a quarter of it at 4 ranks
    assert rank_memory_bytes(
        SweepSpec(collective="allgather", min_bytes="64M", max_bytes="64M"), 4
    ) == TORCH_RANK_BYTES + CHECK_BYTES + (16 + 64 + 64) * (1 << 20)
