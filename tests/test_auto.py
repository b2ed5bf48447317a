"""-A auto: per size, the model's fastest of our runnable algorithms for the run's network; real runs bit-exact."""

import math

import pytest

from collperf.model.costs import cost
from collperf.model.network import Cluster, Link, Network
from collperf.model.auto.select import auto_choices, runnable_algorithms
from collperf.lab.bench import auto_plan, run
from collperf.model.profile import bandwidth_from
from collperf.runtime.execute import MAX_SLICES, slices_for
from collperf.runtime.job import BenchJob
from collperf.runtime.launch import Job, run_local
from collperf.spec import SweepSpec

COLLECTIVES = ("allreduce", "allgather", "reducescatter", "broadcast", "reduce", "alltoall")
NETWORKS = [
    Network.of(Link(50e-6, 2e9, 10e9), 4),
    Network.of(Link(1e-3, 25e6, 1e9), 3),
    Network.of(Cluster(4, 1, Link(1e-6, 1e10), Link(100e-6, 25e6)), 4),
    Network.of(Link(5e-6, 1e11), 5),
]
SIZES = [1024, 64 << 10, 1 << 20, 4 << 20, 64 << 20]


@pytest.mark.parametrize("collective", COLLECTIVES)
@pytest.mark.parametrize("network", NETWORKS, ids=lambda n: n.describe()[:30])
def test_auto_picks_the_model_best_of_the_runnable_algorithms(collective, network):
    # brute force, one algorithm and one size at a time: the least predicted time, ties to the first listed
    picked = auto_choices(collective, network, SIZES)
    names = runnable_algorithms(collective, network.ranks)
    assert names and "hierarchical" not in names
    for choice, size in zip(picked, SIZES):
        times = {}
        for name in names:
            times[name] = float(cost(collective, name, network.ranks, [size], network.flat_link).total_s[0])
        fastest = min(times.values())
        assert math.isclose(choice.predicted_s, fastest, rel_tol=1e-9), (size, choice, times)
        assert choice.algorithm == next(n for n in names if times[n] == fastest)
        assert choice.size_bytes == size


def test_auto_follows_the_network():
    # a latency-bound network (1 s per message, bandwidth effectively unlimited) picks fewer steps than a
    # bandwidth-bound one (no latency) at the same size: recursive doubling (lg p = 2 steps of the whole
    # buffer on 4 ranks) against ring (2(p-1) = 6 steps of n/p, i.e. 1.5 n on the wire instead of 2 n)
    slow_start = Network.of(Link(1.0, 1e15), 4)
    thin = Network.of(Link(1e-12, 1e6), 4)
    by_latency = auto_choices("allgather", slow_start, [1 << 20])[0]
    by_bandwidth = auto_choices("allgather", thin, [1 << 20])[0]
    assert by_latency.predicted_s < 4.0  # at most 2 .. 3 steps of 1 s
    assert by_latency.algorithm != "ring"
    assert by_bandwidth.predicted_s >= 0.75 * (1 << 20) / 1e6 * 0.999  # (p-1)/p n beta at best


@pytest.mark.multiprocess
def test_auto_runs_bit_exact_on_a_given_network_and_after_a_quick_calibration():
    pytest.importorskip("torch")
    network = Network.of(Link(20e-6, 1e9, 5e9), 3)
    config = SweepSpec(
        collective="broadcast",
        algorithms="auto,builtin",
        min_bytes="1K",
        max_bytes="256K",
        factor=16,
        iters=2,
        warmup=0,
        root=1,
        progress=False,
    )
    res = run(config, ranks=3, timeout_s=120, network=network)
    auto = [r for r in res.rows if r["algorithm"] == "auto"]
    assert len(auto) == 3 and all(r[pl]["wrong"] == 0 for r in auto for pl in ("out_of_place", "in_place"))
    want = auto_choices("broadcast", network, [r["size"] for r in auto])
    assert [r["auto"]["algorithm"] for r in auto] == [c.algorithm for c in want]
    assert [r["predicted_us"] for r in auto] == pytest.approx([c.predicted_s * 1e6 for c in want])
    # 4 ranks, a latency-bound network: every auto row exact, the choices the model's
    network = Network.of(Link(1e-3, 1e10, 1e10), 4)
    config = SweepSpec(
        collective="allgather",
        algorithms="auto",
        min_bytes="1K",
        max_bytes="16K",
        factor=4,
        iters=1,
        warmup=0,
        progress=False,
    )
    res = run(config, ranks=4, timeout_s=120, network=network)
    assert [r["auto"]["algorithm"] for r in res.rows] == [
        c.algorithm for c in auto_choices("allgather", network, [r["size"] for r in res.rows])
    ]
    assert all(r[pl]["wrong"] == 0 for r in res.rows for pl in ("out_of_place", "in_place"))
    # no network: the ranks calibrate first (the built-in too); every choice is runnable, every row exact
    config = SweepSpec(
        collective="allreduce",
        algorithms="auto",
        min_bytes="4K",
        max_bytes="64K",
        factor=4,
        iters=2,
        warmup=0,
        progress=False,
    )
    res = run(config, ranks=2, timeout_s=120)
    assert res.config["auto_network"].startswith("quick calibration")
    assert "builtin" in res.config["auto_network"]
    assert all(r["auto"]["algorithm"] in runnable_algorithms("allreduce", 2) + ["builtin"] for r in res.rows)
    assert all(r[pl]["wrong"] == 0 for r in res.rows for pl in ("out_of_place", "in_place"))


@pytest.mark.multiprocess
def test_slices_follow_the_message_size_and_stay_exact():
    pytest.importorskip("torch")
    # k = round(sqrt(n gamma / a)) with gamma 0.2 ns/B and a 100 us: 1 below ~1.1 MB, 4 at 8 MiB (sqrt(16.8)), capped
    assert slices_for(0) == slices_for(64 << 10) == 1
    assert slices_for(8 << 20) == 4
    assert slices_for(1 << 34) == MAX_SLICES
    # uneven messages cut in 2 or 3 slices (slice_bytes=0), with the early receives of reduce steps, bit-exact
    cases = [
        (c, a, 1_000_003, "float32", "sum", 0, 1, 0, False)
        for c, a in (
            ("allreduce", "ring"),
            ("allreduce", "rhd"),
            ("reducescatter", "ring"),
            ("alltoall", "pairwise"),
            ("broadcast", "scatter-allgather"),
            ("reduce", "binomial"),
        )
    ]
    results = run_local(Job("collperf.runtime.measure:selftest", (cases,)), 3, timeout_s=120)
    assert [w for _, w in results] == [0] * len(cases)


@pytest.mark.multiprocess
def test_head_to_head_times_auto_and_builtin_interleaved_and_checks_both():
    pytest.importorskip("torch")
    config = BenchJob.of(
        SweepSpec(
            collective="reducescatter",
            algorithms="auto,builtin",
            min_bytes="4K",
            max_bytes="16K",
            factor=4,
            iters=2,
            warmup=0,
            progress=False,
        )
    )
    network = Network.of(Link(1e-3, 1e8), 2)
    config = auto_plan(config, 2, network, 2)
    out = run_local(Job("collperf.runtime.measure:head_to_head", (config,)), 2, timeout_s=120)
    assert [r["size"] for r in out["table"]["auto"]] == [4096, 16384]
    assert [r["auto"]["algorithm"] for r in out["table"]["auto"]] == [
        c.algorithm for c in auto_choices("reducescatter", network, [4096, 16384])
    ]
    assert all(r["wrong"] == 0 and r["p50_us"] > 0 for a in ("auto", "builtin") for r in out["table"][a])


@pytest.mark.multiprocess
def test_head_to_head_times_an_algorithm_against_itself_and_pairs_each_round():
    pytest.importorskip("torch")
    config = BenchJob.of(
        SweepSpec(
            collective="allreduce",
            algorithms="builtin,builtin",
            min_bytes="4K",
            max_bytes="4K",
            iters=3,
            warmup=1,
            progress=False,
            min_time_s=0.0,
        )
    )  # the asked rounds exactly
    out = run_local(Job("collperf.runtime.measure:head_to_head", (config,)), 2, timeout_s=120)
    assert list(out["table"]) == ["builtin", "builtin#2"]
    for label in ("builtin", "builtin#2"):
        (row,) = out["table"][label]
        assert row["wrong"] == 0 and row["rounds"] == 3 and row["vs_last"]["rounds"] == 3
        assert row["vs_last"]["low"] <= row["vs_last"]["median"] <= row["vs_last"]["high"]
    # the last one against itself: every round's ratio is exactly 1
    assert out["table"]["builtin#2"][0]["vs_last"] == {
        "median": 1.0,
        "low": 1.0,
        "high": 1.0,
        "rounds": 3,
        "confidence": 0.9,
    }


def test_a_noisy_calibration_never_reports_an_unbounded_bandwidth():
    # a resolved transfer: 4 MiB in 1 ms after a 100 us latency
    assert bandwidth_from(100e-6, 1.1e-3, 4 << 20) == pytest.approx((4 << 20) / 1e-3)
    # a loaded host's big ping-pong no slower than its small one (seen in a quick calibration of a
    # testbed host's loopback: 1.47 ms both ways, "4.2e6 TB/s"): the finite floor bytes / whole time
    for small, large in ((1.47e-3, 1.46e-3), (1.47e-3, 1.5e-3)):
        assert bandwidth_from(small, large, 4 << 20) == pytest.approx((4 << 20) / large)
