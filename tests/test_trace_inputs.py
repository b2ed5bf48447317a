"""`collperf trace` on its newer inputs: NCCL's profiler plugin traces, NCCL Inspector JSON lines, any mix of records
of one job, and the recorded multi-group gloo run whose slow host is named. Expected numbers are computed by hand
from the generators' constants (tests/fixtures/traces/make_plugin.py, make_inspector.py)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from collperf import api
from collperf.cli import app
from collperf.errors import UsageError
from collperf.trace import ranks as R
from collperf.trace.inputs import read_job
from collperf.trace.read import trace_files

TRACES = Path(__file__).parent / "fixtures" / "traces"


def _module(name):
    spec = importlib.util.spec_from_file_location(name, TRACES / f"{name}.py")
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


PLUGIN, INSPECTOR = _module("make_plugin"), _module("make_inspector")


def _kinds(report, kind):
    return [v for v in report.verdicts if v.kind == kind]


# --- NCCL profiler plugin -------------------------------------------------------------------------------------


def test_plugin_straggler_transfer_skew_and_verdict():
    report = api.trace(str(TRACES / "plugin" / "straggler"))
    world = [r for r in report.collectives if r.process_group == "world"]
    # 8 MiB all-reduce (2Mi float32), all-gather of 256Ki float32 per rank from 4 ranks: 4 MiB whole
    assert sorted(r.size_bytes for r in world) == [4 << 20, 8 << 20]
    for r in world:  # every call: the ranks end LATE + TRANSFER after the first start; rank 3 starts LATE late
        assert r.time_s == pytest.approx(PLUGIN.TRANSFER_NS * 1e-9, abs=1e-6)
        assert r.wait_s == pytest.approx(PLUGIN.LATE_NS * 1e-9, abs=1e-6)
        assert (r.algorithm, r.protocol, r.calls) == ("ring", "Simple", PLUGIN.STEPS)
    (v,) = _kinds(report, "compute-side")
    assert v.rank == 3 and "100%" in v.text
    assert not _kinds(report, "network-side")


def test_plugin_sub_communicator_is_put_on_its_processes_world_ranks():
    traces = read_job(trace_files(TRACES / "plugin" / "straggler"))
    assert [t.rank for t in traces] == [0, 1, 2, 3]
    pair = "comm 0x2222333344445555"
    assert traces[2].groups[pair] == traces[3].groups[pair] == (2, 3)
    row = next(r for r in api.trace(str(TRACES / "plugin" / "straggler")).collectives if r.process_group == pair)
    assert (row.size_bytes, row.group_size, row.time_s) == (1 << 20, 2, pytest.approx(200e-6, abs=1e-6))


def test_plugin_matches_by_sequence_per_collective_type():
    """NCCL numbers AllReduce and AllGather apart: seq 0 of each is its own call, no desync."""
    traces = read_job(trace_files(TRACES / "plugin" / "straggler"))
    matched, notes = R.match(traces)
    world = [m for m in matched if m.process_group == "world"]
    assert len(world) == 2 * PLUGIN.STEPS and all(len(m.calls) == 4 for m in world) and not notes


def test_plugin_slow_link_is_named_from_the_proxy_waits():
    report = api.trace(str(TRACES / "plugin" / "slowlink"))
    link = [v for v in _kinds(report, "network-side") if "SendWait" in v.text]
    assert len(link) == 1 and link[0].rank == 3
    # per call: 2 channels x 2 network steps of SendWait, 800 us through rank 3's link, 50 us elsewhere
    per_call_slow = PLUGIN.CHANNELS * PLUGIN.NET_STEPS * PLUGIN.SLOW_WIRE_US
    per_call_fast = PLUGIN.CHANNELS * PLUGIN.NET_STEPS * PLUGIN.FAST_WIRE_US
    assert "2 -> 3, 3 -> 0" in link[0].text
    assert f"{per_call_slow / per_call_fast:.2g}x" in link[0].text and "3.2 ms" in link[0].text
    assert not _kinds(report, "compute-side")


def test_plugin_without_kernel_events_is_not_compared_across_ranks(tmp_path):
    for src in (TRACES / "plugin" / "slowlink").glob("*.json"):
        lines = [ln for ln in src.read_text().splitlines() if '"cat": "GPU"' not in ln]
        (tmp_path / src.name).write_text("\n".join(lines) + "\n")
    report = api.trace(str(tmp_path))
    assert any("without KernelCh" in n for n in report.notes)
    assert all(r.basis.startswith("one rank") or r.calls for r in report.collectives)
    assert not report.verdicts or all(v.kind != "compute-side" for v in report.verdicts)


def test_plugin_bad_lines_are_skipped_and_no_collective_is_refused(tmp_path):
    src = next((TRACES / "plugin" / "slowlink").glob("*_0.json")).read_text().splitlines()
    bad = tmp_path / "nccl_prof_1_0.json"
    bad.write_text("\n".join(src[:3] + ['{"name": "AllReduce", "cat": "COLL", "ph": "b", "ts": "x"},'] + src[3:]))
    t = read_job([bad])[0]
    assert any("1 line(s) skipped" in n for n in t.notes)
    empty = tmp_path / "nccl_prof_2_0.json"
    empty.write_text('[\n{"name": "Group API", "cat": "GROUP_API", "ph": "b", "id": 0, "pid": 1, "ts": 0.0},\n{}]\n')
    with pytest.raises(UsageError, match="no collective"):
        api.trace(str(empty))


# --- NCCL Inspector --------------------------------------------------------------------------------------------


def test_inspector_wait_transfer_drops_and_compute_side():
    report = api.trace(str(TRACES / "inspector"))
    rows = {r.collective: r for r in report.collectives}
    for coll, size, _algo, proto, transfer_us in INSPECTOR.CALLS:
        r = rows[coll.lower()]
        # the size: the all-gather's record holds one rank's share, the whole is n_ranks of them
        assert r.size_bytes == size and r.calls == INSPECTOR.STEPS
        assert r.time_s == pytest.approx(transfer_us * 1e-6)  # the shortest time: rank 1's
        assert r.wait_s == pytest.approx(INSPECTOR.LATE_US * 1e-6)  # the others' extra time: waiting for it
        assert r.protocol == {"LL": "LL", "SIMPLE": "Simple"}[proto]
    (v,) = _kinds(report, "compute-side")
    assert v.rank == 1 and "host node0" in v.text
    assert any(f"dropped {INSPECTOR.DROPPED} collective record" in n for n in report.notes)
    assert any("without kernel times" in n for n in report.notes)


def test_inspector_rows_are_priced_as_they_ran(monkeypatch):
    """coll_algo/coll_proto tell NCCL's model what ran (NCCL_ALGO/NCCL_PROTO on the row's system): the forced LL
    all-reduce is priced as RING/LL, and the choice check still names NCCL's default and its cost."""
    from collperf.model.nccl.expected import expect
    from collperf.trace import judge

    seen = {}
    real = judge.expected_and_bound

    def spy(collective, sizes, assumed, *rest):
        seen[collective] = assumed.system
        return real(collective, sizes, assumed, *rest)

    monkeypatch.setattr(judge, "expected_and_bound", spy)
    ran = api.trace(str(TRACES / "inspector"), cluster="dgx-h100")
    ar = next(r for r in ran.collectives if r.collective == "allreduce")
    assert (seen["allreduce"].nccl_algo, seen["allreduce"].nccl_proto) == ("Ring", "LL")
    assert (seen["allgather"].nccl_algo, seen["allgather"].nccl_proto) == ("Ring", "Simple")
    told = float(expect("allreduce", [ar.size_bytes], seen["allreduce"]).time_s[0])
    default = float(expect("allreduce", [ar.size_bytes], judge.sized(ran.assumed, ar).system).time_s[0])
    assert told > 1.5 * default  # NCCL's model of LL at 64 MiB, against its own pick (Simple)
    assert "RING/LL at 64 MiB where NCCL's default picks RING/Simple" in ar.choice_note
    assert any("model of what ran" in n for n in ran.notes)
    kineto = api.trace(str(TRACES / "nccl"))  # a Kineto trace is priced with NCCL's pick, as before
    assert not any("model of what ran" in n for n in kineto.notes)


def test_inspector_kernel_times_give_real_arrivals(tmp_path):
    """With NCCL_INSPECTOR_DUMP_VERBOSE=1 each record has its kernel's start and stop: arrivals are those."""
    for src in sorted((TRACES / "inspector").glob("*.log")):
        out = []
        for line in src.read_text().splitlines():
            rec = json.loads(line)
            if "coll_perf" in rec:
                perf = rec["coll_perf"]
                at = 1_000_000 * (2 * perf["coll_sn"] + (perf["coll"] == "AllGather") + 1)
                start = at + (500 if rec["header"]["rank"] == 3 else 0)
                perf["event_trace_ts"] = {
                    "kernel_events": [{"channel_id": 0, "kernel_start_ts": start, "kernel_stop_ts": at + 900}]
                }
            out.append(json.dumps(rec))
        (tmp_path / src.name).write_text("\n".join(out) + "\n")
    report = api.trace(str(tmp_path))
    assert all(r.time_s == pytest.approx(400e-6) and r.wait_s == pytest.approx(500e-6) for r in report.collectives)
    assert not any("without kernel times" in n for n in report.notes)


def test_inspector_v40_without_algorithm_reads(tmp_path):
    (tmp_path / "a.jsonl").write_text((TRACES.parent / "inspector.jsonl").read_text())
    report = api.trace(str(tmp_path / "a.jsonl"))
    assert report.collectives and report.collectives[0].algorithm in ("ring", "-")


# --- any mix of one job; a real multi-group recording -------------------------------------------------------


def test_kineto_and_flight_recorder_of_one_job_mix():
    base = TRACES / "flight" / "compute"
    mixed = api.trace([str(base / "kineto"), str(base / "fr"), str(TRACES / "ras" / "ras_dead_and_lagging.json")])
    alone = api.trace(str(base / "kineto"))
    assert [t.kind for t in mixed.traces] == ["kineto"] * 4
    assert [v.text for v in _kinds(mixed, "compute-side")] == [v.text for v in _kinds(alone, "compute-side")]
    assert _kinds(mixed, "dead") and any("flight recorder records add" in n for n in mixed.notes)


def test_two_records_of_one_kind_for_a_rank_are_refused():
    fr = TRACES / "flight" / "compute"
    with pytest.raises(UsageError, match="two records of rank 0"):
        api.trace([str(fr / "fr" / "rank0"), str(fr / "fr_json" / "rank0.json")])


def test_recorded_groups_name_the_throttled_host():
    """Four testbed hosts, host 3's link at 100 Mbit/s, four groups of three: only the group without host 3 runs
    near the bound, 1 MiB x 2(3-1)/3 / 125 MB/s = 11.18 ms."""
    report = api.trace(str(TRACES / "flight" / "groups" / "fr"), peak="1Gbit/s")
    bound = (1 << 20) * 2 * 2 / 3 / 125e6
    rows = {r.process_group: r for r in report.collectives}
    assert set(rows) == {"hosts_012", "hosts_123", "hosts_023", "hosts_013"}
    assert all(r.bound_s == pytest.approx(bound) and r.group_size == 3 for r in rows.values())
    assert rows["hosts_012"].time_s < 2 * bound
    assert all(rows[g].time_s > 4 * bound for g in ("hosts_123", "hosts_023", "hosts_013"))
    (v,) = [v for v in _kinds(report, "network-side") if "calls through" in v.text]
    assert v.rank == 3 and "3 process group(s) that include it" in v.text
    assert not _kinds(report, "compute-side")


def test_dump_groups_without_ranks_take_the_ranks_that_hold_them():
    traces = read_job(trace_files(TRACES / "flight" / "groups" / "fr_json"))
    assert {t.world_size for t in traces} == {4}
    got = {c.process_group: c.pg_ranks for t in traces for c in t.calls if c.collective != "barrier"}
    assert got == {"hosts_012": (0, 1, 2), "hosts_123": (1, 2, 3), "hosts_023": (0, 2, 3), "hosts_013": (0, 1, 3)}


def test_cli_reads_plugin_and_inspector():
    result = CliRunner().invoke(app, ["trace", str(TRACES / "plugin" / "slowlink"), "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert any("SendWait" in v["text"] for v in doc["verdicts"])
    assert np.isfinite(doc["collectives"][0]["time_s"])


def test_an_all_gather_in_a_group_the_dump_does_not_list_is_its_whole_output(tmp_path):
    """Rank 3's dump (rank + 1 = 4 is no group size here) holds an all-gather of 100 float32 per rank in a group of
    three: nccl-tests' size is the whole output, 300 x 4 bytes, whatever the rank count guessed."""
    for src in sorted((TRACES / "flight" / "groups" / "fr_json").glob("*.json")):
        doc = json.loads(src.read_text())
        for e in doc["entries"]:
            if e["process_group"][1] == "hosts_123" and e["collective_seq_id"] == 1:
                e.update(
                    profiling_name="gloo:all_gather",
                    input_sizes=[[100]],
                    output_sizes=[[300]],
                    input_dtypes=["Float"],
                    output_dtypes=["Float"],
                )
        (tmp_path / src.name).write_text(json.dumps(doc))
    traces = read_job(trace_files(tmp_path))
    got = {(t.rank, c.size_bytes) for t in traces for c in t.calls if c.collective == "allgather"}
    assert got == {(1, 1200), (2, 1200), (3, 1200)}
