"""-A blink and the patterns choose their segments from what one step costs on the backend that runs them."""

import pytest

from collperf import topology as T
from collperf.blink import patterns as P
from collperf.blink.runs import SEGMENT_CANDIDATES, bench_schedules, best_segments, pattern_schedule
from collperf.model.network import Link
from collperf.spec import BenchSpec, NetworkSpec, SweepSpec
from collperf.api.runs import _step_cost

DGX1V = T.parse("dgx1v")
CHAIN = list(P.DGX1V_CHAIN[:4])  # 3 hops
MiB = 1 << 20


def chain(k):
    return pattern_schedule(DGX1V, "chain-forward", CHAIN, segments=k)[:2]


def hand_best(alpha_s: float, bandwidth_Bps: float, n: float) -> int:
    # a broadcast pipelined down 3 hops in k segments: k + 2 steps, each moving n / k bytes per port,
    # T(k) = (k + 2) (alpha + n / (k B)); the fewest segments among equal times
    times = {k: (k + 2) * (alpha_s + n / (k * bandwidth_Bps)) for k in SEGMENT_CANDIDATES}
    return min(times, key=lambda k: (times[k], k))


@pytest.mark.parametrize("alpha_s, expected", [(10e-3, 1), (1e-3, 2), (1e-6, 32)])
def test_segments_follow_the_per_step_cost_of_the_backend(alpha_s, expected):
    link = Link(alpha_s, 1e9, name="a backend's step")
    chosen = best_segments(chain, [MiB], step_link=link)[MiB]
    # by hand at 1 MiB, 1 GB/s: alpha 10 ms: T(1) = 3 (10 + 1.05) = 33.1 ms < T(2) = 4 (10 + 0.52) = 42.1 ms;
    # alpha 1 ms: T(2) = 6.10 ms < T(1) = 6.15 ms < T(4) = 7.57 ms; alpha 1 us: T(32) = 34 (1 us + 32.8 us) = 1.15 ms
    assert chosen[0] == expected == hand_best(alpha_s, 1e9, MiB)
    assert chosen[2] == pytest.approx((expected + 2) * (alpha_s + MiB / (expected * 1e9)), rel=1e-9)


def test_a_higher_per_message_cost_never_gives_more_segments():
    sizes = [64 << 10, MiB, 16 * MiB]
    cheap = best_segments(chain, sizes, step_link=Link(5e-6, 1e9))
    dear = best_segments(chain, sizes, step_link=Link(500e-6, 1e9))
    for n in sizes:
        assert dear[n][0] <= cheap[n][0]
        assert dear[n][0] == hand_best(500e-6, 1e9, n) and cheap[n][0] == hand_best(5e-6, 1e9, n)
    assert dear[MiB][0] < cheap[MiB][0]


def test_bench_placement_uses_the_step_cost_it_is_given():
    spec = BenchSpec(
        sweep=SweepSpec(collective="broadcast", algorithms="blink", min_bytes="1M", max_bytes="1M"),
        ranks=4,
        topology="dgx1v",
    )
    asked = []

    def step_cost(ranks):
        asked.append(ranks)
        return Link(10e-3, 1e9, name="slow steps")

    slow = bench_schedules(spec, step_cost=step_cost)
    fast = bench_schedules(spec)  # the topology's NVLink links, simulated
    assert asked == [4]
    assert slow.segments["blink"][MiB] == 1  # 10 ms a step: one segment, the fewest steps
    assert fast.segments["blink"][MiB] > 1
    assert any("per step" in note for note in slow.notes)


def test_bench_prices_blink_steps_on_the_given_link():
    spec = BenchSpec(
        sweep=SweepSpec(collective="broadcast", algorithms="blink", min_bytes="1M", max_bytes="1M"),
        ranks=4,
        topology="dgx1v",
        network=NetworkSpec(latency="10ms", bandwidth="1GB/s"),
    )
    link = _step_cost(spec)(4)
    assert link.latency_s == pytest.approx(10e-3) and link.bandwidth_Bps == pytest.approx(1e9)
    assert bench_schedules(spec, step_cost=_step_cost(spec)).segments["blink"][MiB] == 1
