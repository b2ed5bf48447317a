"""Who waits, who is slow: Flight Recorder dumps and Kineto traces recorded from real gloo ranks
(fixtures/traces/record_flight.py: a hang, a compute straggler, a network straggler on the testbed), the
transfer after the last arrival against a hand computation, and one rank's trace judged with care."""

import importlib.util
import json
import pickle
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from collperf import api
from collperf.cli import app
from collperf.errors import UsageError
from collperf.diagnose.verdict import Kind, Verdict
from collperf.trace import flight, ranks, verdicts
from collperf.trace.events import Call
from collperf.trace.judge import DURATION, TRANSFER, Row, one_rank
from collperf.trace.read import read_traces

TRACES = Path(__file__).parent / "fixtures" / "traces"
FLIGHT = TRACES / "flight"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, TRACES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


REC = _load("record_flight")
N = _load("make_nccl")


def _kinds(report) -> list[str]:
    return [v.kind for v in report.verdicts]


# --- the Flight Recorder reader ---------------------------------------------------------------------------------


@pytest.mark.parametrize("form", ["fr", "fr_json"])
def test_a_dump_reads_into_the_calls_the_script_made(form):
    traces = read_traces(str(FLIGHT / "compute" / form))
    assert [t.rank for t in traces] == list(range(REC.RANKS)) and {t.world_size for t in traces} == {REC.RANKS}
    t = traces[1]
    assert t.kind == flight.KIND and t.backend == "gloo" and t.groups["default_pg"] == (0, 1, 2, 3)
    collectives = [c for c in t.calls if c.collective != flight.BARRIER]
    assert [c.collective for c in collectives] == ["allreduce", "allgather"] * REC.STEPS
    assert {c.size_bytes for c in collectives} == {REC.ALLREDUCE_ELEMS * 4} == {REC.ALLGATHER_ELEMS * 4 * REC.RANKS}
    assert [c.seq for c in t.calls] == list(range(1, 2 * REC.STEPS + 2))  # the barrier last
    assert t.windows["default_pg"].last_seq == 2 * REC.STEPS + 1
    # each call ends when the rank enqueues its next one; the last has no end
    assert t.calls[0].end_s == pytest.approx(t.calls[1].start_s) and np.isnan(t.calls[-1].time_s)


def test_pickle_and_json_dumps_give_the_same_calls():
    a, b = read_traces(str(FLIGHT / "hang" / "fr")), read_traces(str(FLIGHT / "hang" / "fr_json"))
    key = lambda t: [(c.seq, c.collective, c.size_bytes, round(c.start_s, 6)) for c in t.calls]
    assert [key(t) for t in a] == [key(t) for t in b]


def test_a_file_that_is_not_a_dump_says_so(tmp_path):
    evil = tmp_path / "rank0"
    evil.write_bytes(pickle.dumps(print))  # a class reference: refused, never called
    with pytest.raises(UsageError, match="rank0: not a readable Flight Recorder dump.*builtins.print"):
        read_traces(str(evil))
    bad = tmp_path / "rank1.json"
    bad.write_text(json.dumps({"entries": 3, "version": "2.10"}))
    with pytest.raises(UsageError, match=r"rank1.json: \$.entries is not a list"):
        read_traces(str(bad))
    nameless = tmp_path / "dump.json"
    nameless.write_text(json.dumps({"entries": [], "version": "2.10"}))
    with pytest.raises(UsageError, match="names its rank only in its file name"):
        read_traces(str(nameless))
    entry = tmp_path / "rank2.json"
    entry.write_text(json.dumps({"entries": [{"process_group": ["0", "default_pg"], "time_created_ns": "soon"}]}))
    with pytest.raises(UsageError, match=r"rank2.json: \$.entries\[0\].time_created_ns 'soon'"):
        read_traces(str(entry))


# --- the verdicts on the recorded runs --------------------------------------------------------------------------


@pytest.mark.parametrize("form", ["fr", "fr_json"])
def test_the_hang_names_the_missing_rank_and_the_call(form):
    report = api.trace(str(FLIGHT / "hang" / form))
    hang = [v for v in report.verdicts if v.kind == "hang"]
    assert len(hang) == 1
    missed = 2 * REC.HANG_STEP + 1  # the all_reduce of the step rank 2 skipped
    assert (hang[0].rank, hang[0].seq, hang[0].process_group) == (REC.HANG_RANK, missed, "default_pg")
    assert hang[0].text.startswith(
        f"hang: rank {REC.HANG_RANK} did not join allreduce seq {missed} of group default_pg"
    )
    assert "desync" not in _kinds(report)


@pytest.mark.parametrize("record", ["fr", "fr_json", "kineto"])
def test_the_compute_straggler_is_named_compute_side(record):
    report = api.trace(str(FLIGHT / "compute" / record))
    assert _kinds(report) == ["compute-side"]
    v = report.verdicts[0]
    assert v.rank == REC.SLOW_RANK and f"rank {REC.SLOW_RANK}" in v.text
    # by a median of about the sleep
    late_ms = float(v.text.split("by a median of ")[1].split(" ms")[0])
    assert REC.SLEEP_S * 1e3 * 0.8 < late_ms < REC.SLEEP_S * 1e3 * 1.5


@pytest.mark.parametrize("record", ["fr", "fr_json", "kineto"])
def test_the_network_straggler_is_named_network_side_not_a_late_rank(record):
    report = api.trace(str(FLIGHT / "network" / record))
    assert _kinds(report) == ["network-side"]
    assert "after everyone arrived" in report.verdicts[0].text


def test_the_verdicts_in_the_cli_and_json():
    result = CliRunner().invoke(app, ["trace", str(FLIGHT / "hang" / "fr")])
    assert result.exit_code == 0, result.output
    assert "hang: rank 2 did not join allreduce seq 7 of group default_pg" in " ".join(result.output.split())
    result = CliRunner().invoke(app, ["trace", str(FLIGHT / "compute" / "kineto"), "--json"])
    doc = json.loads(result.output)
    assert [v["kind"] for v in doc["verdicts"]] == ["compute-side"] and doc["verdicts"][0]["rank"] == 3
    assert {c["basis"] for c in doc["collectives"]} == {TRANSFER}


# --- wait vs wire -----------------------------------------------------------------------------------------------


def _call(rank, start_ms, end_ms, collective="allreduce"):
    return Call(
        rank,
        "g",
        (0, 1, 2),
        collective,
        1024,
        "float32",
        3,
        "-",
        "-",
        start_ms / 1e3,
        (end_ms - start_ms) / 1e3,
        start_ms / 1e3,
        seq=1,
    )


def test_transfer_is_the_time_after_the_last_arrival_minimum_across_ranks():
    m = ranks.Matched("g", 1, {0: _call(0, 0.0, 5.0), 1: _call(1, 1.0, 5.5), 2: _call(2, 3.0, 6.0)})
    assert m.arrival_s == pytest.approx(3e-3) and m.skew_s == pytest.approx(3e-3)
    assert m.transfer_s == pytest.approx(2e-3) and m.time_s == pytest.approx(2e-3)  # 5 - 3, not 6 - 3
    # a broadcast root that ended before the last arrival did not need it: left out
    b = ranks.Matched("g", 2, {0: _call(0, 0.0, 0.5, "broadcast"), 1: _call(1, 1.0, 4.0, "broadcast")})
    assert b.transfer_s == pytest.approx(3e-3)


def test_transfer_on_the_nccl_fixture_equals_the_hand_computation():
    report = api.trace(str(TRACES / "nccl"))
    big = next(r for r in report.collectives if r.collective == "allreduce" and r.size_bytes == N.BIG_ELEMS * 2)
    # ranks 0-2 run [o+2000, o+6000] us; rank 3 starts SKEW_US late and ends with them: 6000 - (2000 + 500)
    assert big.time_s == pytest.approx((6000 - 2000 - N.SKEW_US) * 1e-6)
    assert big.wait_s == pytest.approx(N.SKEW_US * 1e-6) and big.basis == TRANSFER


def test_one_rank_says_durations_include_waiting_and_judges_only_what_grows_with_size():
    report = api.trace(str(TRACES / "nccl" / "rank0.json.gz"))
    assert {r.basis for r in report.collectives} == {DURATION} and report.verdicts == []
    assert any("includes waiting for the other ranks" in n and "give every rank's trace" in n for n in report.notes)
    rows = [
        Row(
            "g",
            "allreduce",
            size,
            "bfloat16",
            2,
            "ring",
            "LL",
            5,
            t,
            5 * t,
            None,
            1e-3,
            1e-4,
            Verdict(Kind.SLOWER, "slower than expected by 12x"),
            "",
        )
        for size, t in ((8 << 20, 10e-3), (32 << 20, 5e-3))
    ]
    notes = one_rank(rows)
    assert rows[0].verdict.text.startswith("not judged: takes longer (10 ms) than the 32 MiB allreduce (5 ms)")
    # the row judged slower says its time may be waiting for a peer
    assert (
        rows[1].verdict.text == "slower than expected by 12x; one rank's duration: part of it may be waiting for a "
        "late peer (give every rank's trace)"
    )
    assert any(n.startswith("1 (group, collective, size) rows take longer") for n in notes)


def test_a_desync_names_the_call_and_what_each_rank_ran():
    a, b = _call(0, 0, 1), _call(1, 0, 1, "allgather")
    out = verdicts.desyncs([ranks.Matched("g", 1, {0: a, 1: b})])
    assert [v.kind for v in out] == ["desync"]
    assert (
        out[0].text == "desync: call seq 1 of group g differs between ranks (rank(s) 0: allreduce 1 KiB; rank(s) 1: "
        "allgather 1 KiB)"
    )


def test_compute_exposed_communication_and_idle_add_up_to_the_step():
    report = api.trace(str(FLIGHT / "compute" / "kineto"))
    assert report.steps
    for v in report.steps:
        assert v.idle_s >= 0
        if v.compute_s + v.exposed_comm_s <= v.time_s:
            assert v.compute_s + v.exposed_comm_s + v.idle_s == pytest.approx(v.time_s)
    assert "idle_s" in report.to_json()["steps"][0]


def test_idle_names_the_host_bound_gaps_by_hand(tmp_path):
    """One 100 us step: a GEMM 10-30 us, an all-reduce kernel 25-50 us (5 us hidden under the GEMM), CPU ops at
    2-8 us and 40-70 us. Compute 20, exposed 20, idle 60 = 100 - 20 - 20; the GPU is idle at 0-10 and 50-100 us,
    and the host runs CPU ops in 2-8 and 50-70 of that: 26 us host-bound, 34 us with nothing recorded running."""
    w = N.Writer(0)
    w.cpu("ProfilerStep#1", 0, 100)
    w.cpu("aten::to", 2, 6, cat="cpu_op")
    w.cpu("Optimizer.step#SGD.step", 40, 30, cat="cpu_op")
    w.kernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", 10, 20, 7, 1)
    w.kernel(
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
        25,
        25,
        20,
        2,
        N.meta("allreduce", 1024, 1024, 2, "Float", "0", "default_pg", [0, 1]),
    )
    w.write(
        tmp_path / "rank0.json.gz",
        N.H100,
        {"backend": "nccl", "rank": 0, "world_size": 2, "pg_config": [N._pg("0", "default_pg", [0, 1])]},
    )
    (v,) = api.trace(str(tmp_path / "rank0.json.gz")).steps
    assert (v.time_s, v.compute_s, v.comm_s, v.exposed_comm_s) == pytest.approx((100e-6, 20e-6, 25e-6, 20e-6))
    assert v.idle_s == pytest.approx(60e-6) and v.host_bound_s == pytest.approx(26e-6)
    assert v.compute_s + v.exposed_comm_s + v.idle_s == pytest.approx(v.time_s)
    assert v.to_json()["host_bound_s"] == pytest.approx(26e-6)


def test_a_cpu_job_has_no_host_bound_split():
    """A gloo job's CPU ops are its computation: idle is not split."""
    report = api.trace(str(FLIGHT / "compute" / "kineto"))
    assert all(v.host_bound_s is None for v in report.steps)


# --- the network-side verdict with a model -----------------------------------------------------------------------


def test_the_network_straggler_is_judged_against_the_peak_bound_by_hand():
    """Four testbed hosts at 1 Gbit/s (host 3 at 100 Mbit/s), --peak 1Gbit/s = 125e6 B/s per rank: the 1 MiB
    all-reduce's bound is 1.5 x 1048576 / 125e6 = 12.58 ms (busbw factor 2(p-1)/p), the all-gather's
    0.75 x 1048576 / 125e6 = 6.291 ms; the verdict is the median of the rows' transfer over their bound."""
    report = api.trace(str(FLIGHT / "network" / "fr"), peak="1Gbit/s")
    allreduce = next(r for r in report.collectives if r.collective == "allreduce")
    allgather = next(r for r in report.collectives if r.collective == "allgather")
    assert allreduce.bound_s == pytest.approx(1.5 * 1048576 / 125e6)
    assert allgather.bound_s == pytest.approx(0.75 * 1048576 / 125e6)
    z = float(np.median([allreduce.time_s / allreduce.bound_s, allgather.time_s / allgather.bound_s]))
    assert z > verdicts.SLOW_OVER_BOUND
    (net,) = [v for v in report.verdicts if v.kind == "network-side"]
    assert f"run at {z:.2g}x the bound" in net.text
    assert allreduce.verdict.text.startswith(f"{allreduce.time_s / allreduce.bound_s:.3g}x the bound")
    assert "given: --peak 125 MB/s" in report.bound_from
    # the compute straggler on loopback is not turned into a network one by the same bound
    compute = api.trace(str(FLIGHT / "compute" / "kineto"), peak="1Gbit/s")
    assert _kinds(compute) == ["compute-side"]


def test_a_bad_peak_names_the_option():
    with pytest.raises(UsageError, match="--peak 0"):
        api.trace(str(FLIGHT / "network" / "fr"), peak="0")


def _group_row(members, z):
    return Row(
        "g" + "".join(map(str, members)),
        "allreduce",
        1 << 20,
        "float32",
        len(members),
        "ring",
        "Simple",
        5,
        z * 1e-3,
        5 * z * 1e-3,
        None,
        1e-3,
        1e-4,
        Verdict(Kind.SLOWER, "slower than expected") if z > 1.5 else Verdict(Kind.AS_EXPECTED, "as expected"),
        "",
        pg_ranks=tuple(members),
    )


class _T:
    def __init__(self, rank):
        self.rank, self.host = rank, f"node{rank}"


def test_the_slow_host_is_the_one_in_every_slow_group_and_no_fast_one():
    """Pairs of four hosts: the three pairs with node3 run at 3-5x the model, the three without it at 1.0-1.2x."""
    rows = [
        _group_row((0, 1), 1.0),
        _group_row((0, 2), 1.1),
        _group_row((1, 2), 1.2),
        _group_row((0, 3), 3.0),
        _group_row((1, 3), 4.0),
        _group_row((2, 3), 5.0),
    ]
    (v,) = verdicts.slow_host([_T(r) for r in range(4)], rows)
    assert v.kind == "network-side"
    assert v.text == (
        "calls through host node3 run at 4x the model after everyone has arrived (3 process group(s) "
        "that include it), the 3 group(s) without it at 1.1x: network-side, host node3's link or NIC"
    )
    # one group alone cannot tell which member is slow; nor can two slow groups sharing two hosts
    assert verdicts.slow_host([_T(r) for r in range(4)], [_group_row((0, 1, 2, 3), 5.0)]) == []
    assert verdicts.slow_host([_T(r) for r in range(4)], [_group_row((2, 3), 5.0), _group_row((0, 1), 1.0)]) == []


# --- NCCL RAS ---------------------------------------------------------------------------------------------------

RAS = TRACES / "ras" / "ras_dead_and_lagging.json"


def test_ras_names_the_dead_and_the_lagging_rank():
    doc = json.loads(RAS.read_text())
    assert doc["_generated_by"].startswith("tests/fixtures/traces/make_ras.py")
    report = api.trace(str(RAS))
    assert [(v.kind, v.rank) for v in report.verdicts] == [("dead", 5), ("lagging", 2)]
    assert report.verdicts[0].text.startswith("dead: rank 5 (host node1) of communicator 0x5b1e9ad02c4f3e71")
    assert "has run 99 AllReduce calls" in report.verdicts[1].text and "where others ran 100" in report.verdicts[1].text


def test_ras_mixes_with_flight_recorder_dumps():
    report = api.trace([str(RAS), str(FLIGHT / "hang" / "fr")])
    assert _kinds(report)[:3] == ["dead", "lagging", "hang"] and report.world_size == 4


def test_a_ras_field_of_the_wrong_type_names_file_and_field(tmp_path):
    doc = json.loads(RAS.read_text())
    doc["communicators"][0]["missing_ranks"][0]["status"]["considered_dead"] = "yes"
    bad = tmp_path / "ras.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(UsageError, match=r"ras.json: \$.communicators\[0\].missing_ranks\[0\].status.considered_dead"):
        api.trace(str(bad))
