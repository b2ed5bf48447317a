"""A round's tests priced together (contention.py): tests that share an uplink are expected at their share of it,
by hand; a healthy cross round under blocking uplinks is not blamed; the alone stage's recheck."""

from __future__ import annotations

import pytest

from collperf.lab.doctor.campaign import Outcome, Test as Probe, adaptive, default_groups
from collperf.lab.doctor.contention import round_times_s
from collperf.lab.doctor.judge import Judge, Measured
from collperf.lab.doctor.plan import Fault, simulated
from collperf.lab.doctor.testbed import TestbedRunner as Runner, topology
from collperf.lab.doctor.testbed_spec import parse_spec

MIB = 1 << 20
RATE = 5e6  # 40 Mbit/s in bytes/s


def test_a_pair_alone_and_four_pairs_on_one_blocking_uplink_by_hand():
    # a 2-rank ring allreduce: reduce-scatter then allgather, n/2 each way per step: 2 x (n/2) / rate = n / rate
    healthy = topology(parse_spec("hosts=8,leaves=2,rate=40mbit"), faulty=False)  # uplinks 160 Mbit/s
    assert round_times_s(healthy, [(0, 4)], MIB) == pytest.approx([MIB / RATE])
    # four pairs across the leaves on non-blocking uplinks: each still at its host links' rate
    assert round_times_s(healthy, [(0, 6), (1, 7), (4, 2), (5, 3)], MIB) == pytest.approx([MIB / RATE] * 4)
    # uplinks at 40 Mbit/s: four flows each way share each uplink, every pair at a quarter of the rate
    blocking = topology(parse_spec("hosts=8,leaves=2,rate=40mbit,uplink=40mbit"), faulty=False)
    assert round_times_s(blocking, [(0, 6), (1, 7), (4, 2), (5, 3)], MIB) == pytest.approx([4 * MIB / RATE] * 4)
    # tests within a leaf cross no uplink: a leaf's ring of 4, 2 x 3/4 n / rate, whatever the uplinks; alone: 0
    assert round_times_s(
        blocking,
        [
            (0, 1, 2, 3),
            (4, 5, 6, 7),
        ],
        MIB,
    ) == pytest.approx([1.5 * MIB / RATE] * 2)
    assert round_times_s(blocking, [(0,), (1, 2)], MIB) == pytest.approx([0.0, MIB / RATE])
    with pytest.raises(ValueError, match="share a rank"):
        round_times_s(blocking, [(0, 1), (1, 2)], MIB)


def test_a_healthy_cross_round_under_blocking_uplinks_is_not_blamed_but_a_slower_one_is():
    spec = parse_spec("hosts=8,leaves=2,rate=40mbit,uplink=40mbit")
    runner = Runner(spec, bed=None)
    leaves = [Probe("screen", (0, 1, 2, 3)), Probe("screen", (4, 5, 6, 7))]
    leaf_s = 1.5 * MIB / RATE / 0.9  # the box at 0.9 of the model
    runner.judge(leaves, [t.hosts for t in leaves], [Measured(t.hosts, [leaf_s] * 5) for t in leaves])
    assert runner.efficiency == pytest.approx(0.9)
    cross = [Probe("cross", h) for h in ((0, 6), (1, 7), (4, 2), (5, 3))]
    ordered = [t.hosts for t in cross]
    shared_s = 4 * MIB / RATE / 0.9  # each pair at its quarter of the uplinks
    got = runner.judge(cross, ordered, [Measured(h, [shared_s] * 5) for h in ordered])
    assert all(o.passed for o in got) and got[0].ratio == pytest.approx(1.0)
    # priced each alone (the pairs' own time), the same round reads a quarter of the expected speed: blamed
    alone = Judge(lambda tests: [runner.simulated_s(h) for h in tests], spec.leaf_of)
    alone.efficiency, alone.box_noise = 0.9, 0.0
    assert not any(o.passed for o in alone(cross, ordered, [Measured(h, [shared_s] * 5) for h in ordered]))
    # an uplink at half of that: the pooled round reads half the expected speed
    got = runner.judge(cross, ordered, [Measured(h, [2 * shared_s] * 5) for h in ordered])
    assert not any(o.passed for o in got) and got[0].ratio == pytest.approx(0.5)


def _flaky_alone(fail: dict[int, int]):
    """A runner where host h fails its first fail[h] tests alone (and recheck), everything else passes."""
    seen: dict[int, int] = {}

    def run(batch):
        out = []
        for t in batch:
            h = t.hosts[0]
            slow = len(t.hosts) == 1 and seen.get(h, 0) < fail.get(h, 0)
            if len(t.hosts) == 1:
                seen[h] = seen.get(h, 0) + 1
            out.append(Outcome(t, not slow, 0.8 if slow else 1.0))
        return out

    return run


def test_a_host_slow_alone_once_is_rechecked_and_not_accused_slow_twice_it_is():
    groups = default_groups(8, 2)
    once = adaptive(8, groups, _flaky_alone({3: 1}))
    assert not once.accused()
    # the recheck: host3 beside two hosts that passed (more references than suspects), one round more
    assert [sorted(t.test.hosts[0] for t in r) for r in once.rounds[:2]] == [list(range(8)), [0, 1, 3]]
    assert [r[0].test.stage for r in once.rounds] == ["alone", "recheck", "screen", "cross"]
    twice = adaptive(8, groups, _flaky_alone({3: 2}))
    assert [(v.component, v.kind) for v in twice.accused()] == [("host3", "degraded")]
    evidence = twice.verdicts["host3"].evidence
    assert evidence[0].startswith("alone host3") and evidence[1].startswith("recheck host3")
    # a rank slowed on its CPU fails both; a dead host is named at once, without a recheck
    rank = adaptive(8, groups, simulated([Fault("rank", 5)], groups))
    assert [(v.component, v.kind) for v in rank.accused()] == [("host5", "degraded")]
    assert len(rank.rounds) <= 6  # ceil(log2 8) + 3
    dead = adaptive(8, groups, simulated([Fault("dead", 6)], groups))
    assert [(v.component, v.kind) for v in dead.accused()] == [("host6", "failed")]
    assert "recheck" not in [r[0].test.stage for r in dead.rounds]
