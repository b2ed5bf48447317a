"""Counts read from the table before any guess: the rank count from the count column (size / (count x type size))
where the device lines are elided; a collapse of busbw in the verdict line, judged or not; --peak gives a verdict
where no system is assumed, in diagnose and in trace (whose messages suggest it)."""

import importlib.util
import math
from pathlib import Path

import pytest

from collperf import api
from collperf.diagnose import Assumed, diagnose
from collperf.ingest import parse
from collperf.spec import TraceSpec

MIB = 1 << 20
TRACES = Path(__file__).parent / "fixtures" / "traces"
HEAD = (
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
    "#wrong"
)


def _log(binary, rows, devices=()):
    """An nccl-tests log of (size, count, time_us, algbw, busbw) rows."""
    lines = [
        "# nccl-tests version 2.17.6 nccl-headers=22603 nccl-library=22603",
        f"# Collective test starting: {binary}",
        "# nThread 1 nGpus 1 minBytes 1024 maxBytes 2147483648 step: 2(factor) warmup iters: 5 iters: 20 agg "
        "iters: 1 validation: 1 graph: 0",
        "#",
    ]
    if devices:
        lines += ["# Using devices", *devices, "#"]
    lines += [HEAD]
    op = "sum" if binary == "all_reduce_perf" else "none"
    for size, count, t, alg, bus in rows:
        lines.append(
            f"{size:12d}  {count:12d}     float    {op:>4}      -1  {t:9.2f}  {alg:6.2f}  {bus:6.2f}       0"
            f"  {t:9.2f}  {alg:6.2f}  {bus:6.2f}       0"
        )
    return "\n".join(lines + ["# Out of bounds values : 0 OK", "#"]) + "\n"


def _alltoall_128():
    rows = []
    for size in (MIB << k for k in range(0, 11, 2)):
        t = 50 + size / 40e3
        alg = size / t / 1e3
        rows.append((size, size // 4 // 128, t, alg, alg * 127 / 128))
    devices = [
        "#  Rank  0 Group  0 Pid   1000 on node-000 device  0 [0000:00:00] NVIDIA GB200",
        "#  ...",
        "#  Rank 127 Group  0 Pid   1127 on node-031 device  3 [0000:03:00] NVIDIA GB200",
    ]
    return _log("alltoall_perf", rows, devices)


def test_the_count_column_gives_the_rank_count_where_device_lines_are_elided():
    table = parse(_alltoall_128(), "a2a.txt")[0]
    assert (table.collective, table.ranks) == ("alltoall", 128)
    assert table.header["ranks_from"] == "count x type size"
    assert any("rank count 128 read from size / (count x type size)" in n for n in table.notes)
    # diagnosed, it is 128 ranks, not one NVL72 rack of 72
    d = diagnose(table)
    assert d.table.ranks == 128 and (d.assumed.system is None or d.assumed.system.ranks == 128)


def _collapsing():
    """8-rank allreduce, no device lines (no system assumed): busbw rises to 88.9 GB/s at 16 MiB, then falls 20x."""
    rows, size = [], 1024
    while size <= 2048 * MIB:
        if size <= 16 * MIB:
            bus = 100 * size / (size + 2 * MIB)
        else:
            bus = 100 * 16 / 18 * (16 * MIB / size) ** (math.log(20) / math.log(128))
        alg = bus / 1.75
        rows.append((size, size // 4, size / alg / 1e3, alg, bus))
        size *= 2
    return _log("all_reduce_perf", rows)


def test_a_collapse_of_busbw_is_in_the_verdict_line_judged_or_not():
    d = diagnose(parse(_collapsing(), "collapse.txt")[0])
    assert (
        d.verdict.text.startswith("not judged")
        and "busbw falls 20x from 88.9 GB/s at 16 MiB to 4.44 GB/s at 2 GiB" in d.verdict.text
    )


def test_peak_judges_a_log_with_no_system_assumed():
    d = diagnose(parse(_collapsing(), "collapse.txt")[0], peak_Bps=100e9)
    assert d.verdict.text.startswith("slower than the bound allows"), d.verdict
    assert "busbw falls 20x" in d.verdict.text
    judged = [s for s in d.sizes if not s.verdict.text.startswith("not judged")]
    assert len(judged) >= 10 and all(s.size_bytes >= 2 * MIB for s in judged)
    # a peak below what the log reached: the bound (or the rank count) is wrong, said as such
    assert diagnose(parse(_collapsing(), "collapse.txt")[0], peak_Bps=50e9).verdict.text.startswith("above the bound")


def test_trace_takes_the_peak_its_messages_suggest(monkeypatch):
    from collperf.trace import core

    spec = importlib.util.spec_from_file_location("make_nccl", TRACES / "make_nccl.py")
    N = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(N)
    # a GPU the catalogue lacks: no system, and the message says to give --peak
    monkeypatch.setattr(
        core,
        "assume_system",
        lambda traces, hardware: Assumed(None, why_none="the catalogue has no parts for this GPU: give --peak BUSBW"),
    )
    size = N.BIG_ELEMS * 2
    unjudged = next(
        r
        for r in api.trace(TraceSpec(paths=str(TRACES / "nccl"))).collectives
        if r.collective == "allreduce" and r.size_bytes == size
    )
    assert unjudged.verdict.text.startswith("not judged") and "--peak" in unjudged.verdict.text
    report = api.trace(TraceSpec(paths=str(TRACES / "nccl"), peak="1000GB/s"))
    big = next(r for r in report.collectives if r.collective == "allreduce" and r.size_bytes == size)
    assert big.size_bytes >= MIB and big.bound_s == pytest.approx(size * 2 * 3 / 4 / 1e12)
    # judged against that bound: how many times it, where no expected time is known
    assert "x the bound" in big.verdict.text and "only the bound" in big.verdict.text, big.verdict
    assert "--peak" in report.bound_from
