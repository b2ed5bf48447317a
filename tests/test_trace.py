"""`collperf trace` on real gloo traces (recorded by fixtures/traces/record_gloo.py) and on NCCL/RCCL traces written
in Kineto's schema (fixtures/traces/make_nccl.py): sizes, counts, algorithms, busbw, exposed communication,
the straggler, the choice check, the what-if, the JSON fields, the CLI and the report."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from collperf import api
from collperf.cli.options import app
from collperf.diagnose.core import Expectation
from collperf.errors import UsageError
from collperf.model import predict
from collperf.model.nccl import select
from collperf.model.network import Network
from collperf.model.hardware.catalogue import get_system
from collperf.trace import judge, whatif
from collperf.plan.from_trace import kind_of

TRACES = Path(__file__).parent / "fixtures" / "traces"
US = 1e-6


def _load(name):
    spec = importlib.util.spec_from_file_location(name, TRACES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


G = _load("record_gloo")  # what the gloo script ran
N = _load("make_nccl")  # what the NCCL traces hold


@pytest.fixture(scope="module")
def gloo():
    return api.trace(str(TRACES / "gloo"))


@pytest.fixture(scope="module")
def nccl():
    return api.trace(str(TRACES / "nccl"))


def _row(report, collective, size):
    found = [r for r in report.collectives if r.collective == collective and r.size_bytes == size]
    assert len(found) == 1, [(r.collective, r.size_bytes) for r in report.collectives]
    return found[0]


# --- gloo: every size and count against what the script ran ---------------------------------------------------


def test_gloo_sizes_and_counts_are_what_the_script_ran(gloo):
    p, f32 = G.RANKS, 4
    expected = {
        ("allreduce", G.ddp_elems() * f32, "float32"),
        ("allreduce", G.ALLREDUCE_ELEMS * f32, "float32"),
        ("allgather", G.ALLGATHER_ELEMS * f32 * p, "float32"),  # the whole output
        ("allgather", G.GATHER_TENSOR_ELEMS * f32 * p, "float32"),
        ("reducescatter", G.REDUCE_SCATTER_ELEMS * f32, "float32"),  # the whole input
        ("broadcast", G.BROADCAST_ELEMS * 8, "float64"),
        ("alltoall", G.ALLTOALL_ELEMS * f32, "float32"),
        ("reduce", G.REDUCE_ELEMS * f32, "float32"),
    }
    assert {(r.collective, r.size_bytes, r.dtype) for r in gloo.collectives} == expected
    for r in gloo.collectives:  # one call per profiled step, matched over the 4 ranks
        assert (r.calls, r.group_size, r.process_group, r.algorithm) == (G.STEPS, p, "default_pg", "-")
    for t in gloo.traces:  # per rank: 8 collectives per step (the barrier is not one of ours)
        assert len(t.calls) == 8 * G.STEPS
    names = [f"ProfilerStep#{G.WAIT + G.WARMUP + k}" for k in range(G.STEPS)]
    assert [s.name for s in gloo.steps] == names * p and [s.rank for s in gloo.steps] == sorted(
        list(range(p)) * G.STEPS
    )


def test_gloo_busbw_is_size_over_time_times_the_factor(gloo):
    r = _row(gloo, "allreduce", G.ALLREDUCE_ELEMS * 4)
    assert r.busbw_GBps == pytest.approx(G.ALLREDUCE_ELEMS * 4 / r.time_s * 2 * 3 / 4 / 1e9)
    r = _row(gloo, "broadcast", G.BROADCAST_ELEMS * 8)
    assert r.busbw_GBps == pytest.approx(G.BROADCAST_ELEMS * 8 / r.time_s / 1e9)
    assert r.time_s == pytest.approx(float(np.median(r.times_s)))
    assert r.total_s == pytest.approx(sum(r.times_s))


def test_gloo_steps_are_consistent(gloo):
    for s in gloo.steps:
        assert 0 <= s.exposed_comm_s <= s.comm_s + 1e-12
        assert 0 < s.comm_s and 0 < s.compute_s < s.time_s
    assert gloo.assumed.system is None
    assert all(r.verdict.text.startswith("not judged: the trace names no GPU") for r in gloo.collectives)
    assert len(gloo.ranks) == G.RANKS and gloo.straggler is not None


# --- NCCL: names, sizes, busbw, overlap, skew, choice --------------------------------------------------------


def test_nccl_sizes_algorithms_protocols(nccl):
    big = _row(nccl, "allreduce", N.BIG_ELEMS * 2)
    small = _row(nccl, "allreduce", N.SMALL_ELEMS * 4)
    tp = _row(nccl, "allgather", 2 * N.TP_IN_ELEMS * 2)
    a2a = _row(nccl, "alltoall", sum(N.SPLITS) * 4)
    assert (big.algorithm, big.protocol, big.dtype, big.calls, big.group_size) == ("ring", "LL", "bfloat16", 2, 4)
    assert (small.algorithm, small.protocol, small.dtype, small.calls) == ("ring", "LL", "float32", 2)
    # two tp groups ({0,1} and {2,3}), two steps each
    assert (tp.process_group, tp.group_size, tp.calls, tp.protocol) == ("tp", 2, 4, "LL")
    assert (a2a.algorithm, a2a.calls) == ("-", 2)
    assert nccl.traces[0].calls[2].splits == json.dumps(N.SPLITS)


def test_nccl_time_is_the_last_arrivals_and_busbw_exact(nccl):
    big = _row(nccl, "allreduce", N.BIG_ELEMS * 2)
    assert big.time_s == pytest.approx((4000 - N.SKEW_US) * US)  # rank 3's: it waited for nobody
    assert big.busbw_GBps == pytest.approx(N.BIG_ELEMS * 2 / ((4000 - N.SKEW_US) * US) * 1.5 / 1e9)
    assert big.rank_spread_s == pytest.approx(N.SKEW_US * US)
    tp = _row(nccl, "allgather", 2 * N.TP_IN_ELEMS * 2)
    assert tp.busbw_GBps == pytest.approx(2 * N.TP_IN_ELEMS * 2 / (100 * US) * 0.5 / 1e9)


def test_exposed_communication_by_hand(nccl):
    """Per step: compute [0,3000] [5000,5500] [7200,9000]; allreduce [2000,6000] hides 1000 + 500; allgather
    [6500,6600] hides nothing; all-to-all [7000,7400] hides 200; the small allreduce [9000,9560] nothing."""
    expect = {
        0: (5300, 5060, 2500 + 100 + 200 + 560),
        3: (5300, 3500 + 100 + 400 + 60, (3500 - 500 - 500) + 100 + 200 + 60),
    }  # rank 3 starts late
    for s in nccl.steps:
        compute, comm, exposed = expect[0 if s.rank < 3 else 3]
        assert s.time_s == pytest.approx(N.STEP_US * US)
        assert s.compute_s == pytest.approx(compute * US)
        assert s.comm_s == pytest.approx(comm * US)
        assert s.exposed_comm_s == pytest.approx(exposed * US)
    worst = max(nccl.critical_path, key=lambda c: c["exposed_s"])
    assert (worst["collective"], worst["exposed_s"]) == ("allreduce", pytest.approx(2500 * US))


def test_straggler_and_its_cost(nccl):
    st = nccl.straggler
    # rank 3 is late SKEW_US on both default_pg allreduces of both steps; three ranks wait each time
    assert st["rank"] == 3 and st["last_arrivals"] == 2 * N.STEPS
    assert st["cost_to_others_s"] == pytest.approx(2 * N.STEPS * 3 * N.SKEW_US * US)
    assert st["share_of_all_waiting"] == pytest.approx(1.0) and st["clear"]
    others = [s for s in nccl.ranks if s.rank != 3]
    assert all(s.last_arrivals == 0 and s.cost_s == 0 for s in others)
    assert all(s.waited_s == pytest.approx(2 * N.STEPS * N.SKEW_US * US) for s in others)


def test_choice_check_fires_on_the_forced_protocol_only(nccl):
    big = _row(nccl, "allreduce", N.BIG_ELEMS * 2)
    system = judge.sized(nccl.assumed, big).system
    pick = select("allreduce", [N.BIG_ELEMS * 2], system)
    assert (pick.algorithm[0], pick.protocol[0]) == ("ring", "Simple")  # what the fixture forces against
    assert big.choice_note.startswith("RING/LL at 25 MiB where NCCL's default picks RING/Simple: NCCL_PROTO")
    assert "model cost" in big.choice_note
    for r in nccl.collectives:
        if r is not big:
            assert r.choice_note == "", r
    assert judge.choice_note("allreduce", N.BIG_ELEMS * 2, "ring", "Simple", system) == ""


def test_verdicts_go_through_one_function(monkeypatch):
    """Every verdict comes from judge.expected_and_bound: replace it and the verdicts follow."""

    def measured_is_expected(collective, sizes, assumed, *_):
        n = len(sizes)
        return Expectation(np.full(n, 3.5e-3), None, [""] * n, [""] * n, np.full(n, 1e-6), [""] * n, None, "x", "y")

    monkeypatch.setattr(judge, "expected_and_bound", measured_is_expected)
    report = api.trace(str(TRACES / "nccl"))
    big = _row(report, "allreduce", N.BIG_ELEMS * 2)
    assert (big.expected_s, big.verdict.text) == (3.5e-3, "as expected")
    assert all(r.expected_s == 3.5e-3 for r in report.collectives)


def test_above_the_bound_counts_the_bounds_latency_as_diagnose_does(monkeypatch):
    """A call faster than the bound's bandwidth term plus its latency is above the bound; without the latency the
    same call is not (a bound of 1 us of data and 1 s of latency, against calls of milliseconds)."""

    def with_latency(latency_s):
        def expected(collective, sizes, assumed, *_):
            n = len(sizes)
            return Expectation(
                np.full(n, 3.5e-3),
                None,
                [""] * n,
                [""] * n,
                np.full(n, 1e-6),
                [""] * n,
                None,
                "x",
                "y",
                bound_latency_s=latency_s,
            )

        return expected

    monkeypatch.setattr(judge, "expected_and_bound", with_latency(1.0))
    big = _row(api.trace(str(TRACES / "nccl")), "allreduce", N.BIG_ELEMS * 2)
    assert big.time_s < 0.98 * (1e-6 + 1.0) and big.verdict.text.startswith(
        "above the bound: faster than the 1 s the assumed hardware allows"
    )
    assert "finding" not in big.verdict.text  # a trace prints none to point at
    monkeypatch.setattr(judge, "expected_and_bound", with_latency(0.0))
    big = _row(api.trace(str(TRACES / "nccl")), "allreduce", N.BIG_ELEMS * 2)
    assert not big.verdict.text.startswith("above the bound")


def test_old_kernel_names_and_a_call_without_size():
    report = api.trace(str(TRACES / "nccl_old" / "rank0.json.gz"))
    assert report.assumed.system.name == "dgx-a100"
    assert {(r.collective, r.size_bytes, r.protocol) for r in report.collectives} == {
        ("allreduce", 16384 * 4, "LL"),
        ("allgather", 1048576 * 4, "Simple"),
        ("reducescatter", 4194304 * 2, "Simple"),
        ("broadcast", None, "LL"),
        ("reduce", 2048 * 4, "LL"),
    }  # the reduce's size from record_param_comms
    unknown = _row(report, "broadcast", None)
    assert unknown.verdict.text.startswith("not judged") and unknown.busbw_GBps is None
    assert any("without a size" in n for n in report.notes)
    assert [s.name for s in report.steps] == ["whole trace"] and report.ranks == []


def test_rccl_generic_kernels():
    report = api.trace(str(TRACES / "rccl"))
    ar = _row(report, "allreduce", 8388608 * 2)
    assert (ar.algorithm, ar.protocol, ar.group_size) == ("-", "-", 8)
    # MI300X is in the hardware catalogue (mi300x: RCCL priced with NCCL's model and the xGMI links)
    assert report.assumed.system.name == "mi300x" and ar.expected_s is not None
    judged = api.trace(str(TRACES / "rccl"), cluster="dgx-h100")
    assert _row(judged, "allreduce", 8388608 * 2).expected_s is not None


# --- what-if ------------------------------------------------------------------------------------------------


def test_what_if_on_another_system_by_hand(nccl):
    report = api.trace(str(TRACES / "nccl"), what_if_cluster="dgx-b200", what_if_nodes=2)
    w = report.what_if
    assert w.system == "dgx-b200"
    t = {(c["collective"], c["size_bytes"]): c["what_if_s"] for c in w.collectives}
    for c in w.collectives:
        assert c["ratio"] == pytest.approx(c["what_if_s"] / c["time_s"])
    # rank 0's step: the allreduce hides 1500 us, the all-to-all 200 us, the others nothing
    parts = [
        max(0.0, t[("allreduce", N.BIG_ELEMS * 2)] - 1500 * US),
        t[("allgather", 2 * N.TP_IN_ELEMS * 2)],
        max(0.0, t[("alltoall", sum(N.SPLITS) * 4)] - 200 * US),
        t[("allreduce", N.SMALL_ELEMS * 4)],
    ]
    step = next(s for s in w.steps if s["rank"] == 0)
    assert step["what_if_exposed_comm_s"] == pytest.approx(sum(parts))
    assert w.to_json()["exposed_change_s"] < 0


def test_what_if_with_our_algorithms_is_the_registry_price(nccl):
    report = api.trace(str(TRACES / "nccl"), algorithm="ring")
    system = report.assumed.system
    c = next(c for c in report.what_if.collectives if c["size_bytes"] == N.BIG_ELEMS * 2)
    net = Network.of(whatif.cluster_of(system).intra, system.ranks)
    cost, _ = predict.best("allreduce", net, [N.BIG_ELEMS * 2], algorithm=["ring"])
    assert c["what_if_s"] == pytest.approx(float(cost.total_s[0]))
    assert any("alltoall" in n for n in report.what_if.notes)  # no ring all-to-all: NCCL's choice prices it


def test_what_if_needs_a_system():
    with pytest.raises(UsageError, match="-A prices"):
        api.trace(str(TRACES / "gloo"), algorithm="ring")
    with pytest.raises(UsageError, match="--what-if-cluster nope"):
        api.trace(str(TRACES / "gloo"), what_if_cluster="nope")
    report = api.trace(str(TRACES / "gloo"), what_if_cluster="dgx-h100")
    assert get_system("dgx-h100").name == report.what_if.system


# --- output ----------------------------------------------------------------------------------------------------


def test_json_fields_as_documented(nccl):
    doc = json.loads(json.dumps(nccl.to_json()))
    row_keys = {
        "process_group",
        "collective",
        "size_bytes",
        "dtype",
        "group_size",
        "algorithm",
        "protocol",
        "calls",
        "time_s",
        "total_s",
        "busbw_GBps",
        "expected_s",
        "bound_s",
        "verdict",
        "choice_note",
    }
    assert all(row_keys <= set(r) for r in doc["collectives"])
    assert all({"name", "time_s", "compute_s", "comm_s", "exposed_comm_s"} <= set(s) for s in doc["steps"])
    assert {"system", "values", "expected_from", "bound_from"} <= set(doc["system"])
    assert [r["rank"] for r in doc["ranks"]] == [0, 1, 2, 3] and doc["straggler"]["rank"] == 3


def test_cli_table_json_and_errors(tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["trace", str(TRACES / "nccl")])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "rank 3 (host node0) arrives last" in text and "compute-side" in text and "RING/LL at 25 MiB" in text
    result = runner.invoke(
        app, ["trace", str(TRACES / "nccl"), "--json", "--what-if-cluster", "dgx-h100", "--what-if-nodes", "2"]
    )
    assert json.loads(result.output)["what_if"]["system"] == "dgx-h100"
    for args, message in (
        (["trace", str(tmp_path / "none.json")], "no such file"),
        (["trace", str(TRACES / "nccl"), "--what-if-nodes", "2"], "--what-if-nodes 2 without"),
        (["trace", str(TRACES / "nccl"), "--what-if-nodes", "0", "-A", "ring"], "what-if-nodes 0"),
    ):
        result = runner.invoke(app, args)
        assert isinstance(result.exception, UsageError) and message in str(result.exception)


def test_report_shows_the_timeline_coloured_by_verdict(tmp_path):
    out = tmp_path / "step.html"
    result = CliRunner().invoke(app, ["report", str(TRACES / "nccl"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    page = out.read_text()
    assert "Step timeline" in page and "rank 3" in page
    # the calls of both steps on 4 ranks of the three collectives slower than expected (the 1 MiB allgather is
    # as expected)
    assert page.count('fill="#cf222e"') >= 3 * 2 * 4
    assert "<script" not in page
    again = api.report(api.trace(str(TRACES / "gloo")), tmp_path / "gloo.html").read_text()
    assert "ProfilerStep#2" in again
    # the time axis: round ticks from 0 over the three steps shown
    svg = again[again.index('aria-label="step timeline"') :]
    assert ">0</text>" in svg and "time from the first step&#x27;s start" in svg
    # one binary unit in the size column: the gloo sizes (1 KiB .. 16 KiB, and the 16 KB allgather) in KiB
    table = again[again.index("<h3>Collectives</h3>") : again.index("<h3>Steps</h3>")]
    assert "15.62 KiB" in table and "16 KB" not in table


def test_time_axis_ticks_are_round():
    from collperf.report.trace_page import ticks

    assert ticks(0.2224) == pytest.approx([0, 0.05, 0.1, 0.15, 0.2])
    assert ticks(0.041) == pytest.approx([0, 0.01, 0.02, 0.03, 0.04])
    assert ticks(7e-6) == pytest.approx([k * 1e-6 for k in range(8)])
    assert len(ticks(123.0)) <= 9 and ticks(0) == [0.0]


def test_the_size_column_has_one_unit():
    result = CliRunner().invoke(app, ["trace", str(TRACES / "gloo")], terminal_width=200)
    assert result.exit_code == 0, result.output
    table = result.output[: result.output.index("steps:")]
    assert "15.62 KiB" in table and "16 KB" not in table and " MiB" not in table


# --- the planner, from a trace ----------------------------------------------------------------------------------


def test_planner_takes_compute_and_overlap_from_a_trace():
    """Rank 0's step: DP (default_pg) 4000 + 400 + 560 us with 1500 + 200 + 0 hidden; TP 100 us, none hidden."""
    net = api.NetworkSpec(nodes=1, ranks_per_node=4)
    spec = api.plan_spec(
        "7b", layout=dict(tp=2, dp=2), network=net, cluster="dgx-h100", from_trace=str(TRACES / "nccl")
    )
    p = api.plan(spec)
    m = p.measured
    assert m.kinds == {"default_pg": "DP", "tp": "TP"}
    assert m.compute_s == pytest.approx(5300 * US) and p.compute_s == pytest.approx(5300 * US)
    assert m.comm_s["DP"] == pytest.approx(4960 * US) and m.comm_s["TP"] == pytest.approx(100 * US)
    assert m.hidden == {"DP": pytest.approx(1700 / 4960), "TP": pytest.approx(0.0, abs=1e-9)}
    dp = p.by_kind()["DP"]
    assert p.exposed["DP"] == pytest.approx(dp * (1 - 1700 / 4960))
    assert p.to_json()["from_trace"]["hidden_fraction"]["DP"] == pytest.approx(1700 / 4960)
    # what the user gives wins over the trace
    own = api.plan(
        api.plan_spec(
            "7b",
            layout=dict(tp=2, dp=2),
            network=net,
            cluster="dgx-h100",
            compute="1s",
            overlap="dp=1",
            from_trace=str(TRACES / "nccl"),
        )
    )
    assert own.compute_s == 1.0 and own.exposed["DP"] == 0.0


def test_a_process_group_of_unclear_dimension_is_an_error():
    sizes = {"TP": 2, "PP": 1, "CP": 1, "DP": 2}
    assert kind_of("data_parallel", 2, sizes) == "DP" and kind_of("tensor_model_parallel", 2, sizes) == "TP"
    assert kind_of("7", 4, {"TP": 2, "PP": 1, "CP": 1, "DP": 4}) == "DP"  # the one dimension of 4 ranks
    with pytest.raises(UsageError, match="layout dimension is not clear"):
        kind_of("7", 2, sizes)
