"""The array IR and the array simulator: lossless against the tuple form, identical to the old simulator."""

import numpy as np
import pytest
import sim_reference as reference

from collperf import topology as T
from collperf.model.algorithms import ALGORITHMS
from collperf.model.costs import cost
from collperf.model.two_level.hierarchy import two_level_cost
from collperf.model.network import Cluster, Link
from collperf.model.hardware.presets import get_preset
from collperf.schedule.arrays import (
    ArraySchedule,
    ArrayStep,
    from_schedule,
    make_arrays,
)
from collperf.model.two_level.build import build, build_array, build_hierarchical, build_hierarchical_array
from collperf.model.schedule_cost import coefficients, messages_per_rank, step_loads
from collperf.schedule.verify import VerificationError, verify
from collperf.simulate import simulate
from collperf.simulate.rounds import step_classes

LINK = Link(2e-6, 10e9, 40e9)
IDS = lambda a: f"{a.collective}-{a.name}"


def _plain(s):
    """A tuple schedule as plain data (chunks as tuples: a range and a tuple of the same ids match)."""
    return (
        (s.collective, s.algorithm, s.ranks, s.chunks, s.root, s.chunks_per_buffer),
        [[(t.src, t.dst, tuple(t.chunks), t.op) for t in st.transfers] for st in s.steps],
    )


@pytest.mark.parametrize("alg", ALGORITHMS, ids=IDS)
def test_array_form_is_the_tuple_schedule_transfer_for_transfer(alg):
    for p in range(1, 14):
        if alg.unavailable(p):
            continue
        for root in {0, p - 1}:
            tuples = build(alg.collective, alg.name, p, root=root, segments=2)
            arrays = build_array(alg.collective, alg.name, p, root=root, segments=2)
            assert _plain(arrays.to_schedule()) == _plain(tuples)
            assert _plain(from_schedule(tuples).to_schedule()) == _plain(tuples)
            assert arrays.step_count == len(tuples.steps)
            assert arrays.transfer_count == sum(len(st.transfers) for st in tuples.steps)
            assert coefficients(arrays) == pytest.approx(coefficients(tuples), rel=1e-12)
            assert step_loads(arrays) == step_loads(tuples)
            assert messages_per_rank(arrays) == messages_per_rank(tuples)


@pytest.mark.parametrize("inter", ["ring", "rhd", "mesh", "double-binary-tree"])
def test_two_level_allreduce_in_array_form_is_the_tuple_schedule(inter):
    for nodes, g in ((1, 4), (2, 1), (2, 4), (3, 2), (4, 3)):
        for intra in ("ring", "mesh"):
            tuples = build_hierarchical("allreduce", nodes, g, intra, inter, segments=2)
            arrays = build_hierarchical_array("allreduce", nodes, g, intra, inter, segments=2)
            assert _plain(arrays.to_schedule()) == _plain(tuples)
            verify(arrays)


def test_ring_is_two_runs_of_like_steps():
    # the 2(p - 1) steps of a ring allreduce are two step classes: p - 1 reduces, p - 1 copies,
    # every one p transfers r -> r + 1 of one chunk (Patarasuk & Yuan 2009)
    s = build_array("allreduce", "ring", 1000)
    assert [(st.repeat, st.transfer_count, st.shift) for st in s.steps] == [(999, 1000, -1), (999, 1000, -1)]
    assert s.step_count == 1998 and s.transfer_count == 2 * 1000 * 999
    assert coefficients(s) == pytest.approx((1998, 2 * 999 / 1000, 999 / 1000))


def test_verifier_reads_the_array_form_and_catches_a_broken_run():
    vectorized = [a for a in ALGORITHMS if a.array_builder is not None]
    assert len(vectorized) == 20  # the regular algorithms have a vectorized builder (bruck alltoall too)
    for alg in vectorized:
        verify(build_array(alg.collective, alg.name, 8))
    good = build_array("allgather", "ring", 5)
    run = good.steps[0]
    short = ArrayStep(run.src, run.dst, run.start, run.stop, run.reduce, repeat=3, shift=-1, modulus=5)
    with pytest.raises(VerificationError, match="after the last step"):
        verify(make_arrays("allgather", "ring", 5, 5, [short]))


def test_shifted_range_wraps_into_two_rows_of_one_transfer():
    # two chunks [3, 5) of 5 shifted by 2: chunks 0 and 1 (wrapped), one transfer 0 -> 1
    st = ArrayStep([0], [1], [3], [5], [False], repeat=2, shift=1, modulus=5)
    second = st.occurrence(1).to_steps()[0]
    assert [tuple(t.chunks) for t in second.transfers] == [(4, 0)]
    with pytest.raises(ValueError, match="inside one block"):
        ArrayStep([0], [1], [4], [6], [False], repeat=2, shift=1, modulus=5)


def _topologies(p):
    tops = [T.full_mesh(p, LINK), T.single_switch(p, LINK), T.ring(p, LINK)]
    if p == 8:
        tops += [T.two_level(Cluster(2, 4, Link(1e-6, 100e9), Link(4e-6, 10e9), nics_per_node=1)), T.dgx1v()]
    return tops


def _same(old, new):
    scale = max(old.time_s, 1e-30)
    assert new.time_s == pytest.approx(old.time_s, rel=1e-9)
    assert np.allclose(new.step_start_s, old.step_start_s, rtol=0, atol=1e-9 * scale)
    assert np.allclose(new.step_end_s, old.step_end_s, rtol=0, atol=1e-9 * scale)
    assert sorted((u.link, round(u.bytes)) for u in new.links) == sorted((u.link, round(u.bytes)) for u in old.links)


@pytest.mark.parametrize("mode", ["rounds", "events"])
@pytest.mark.parametrize("alg", ALGORITHMS, ids=IDS)
def test_array_simulator_equals_the_old_one(alg, mode):
    for p in (5, 8):
        if alg.unavailable(p):
            continue
        tuples = build(alg.collective, alg.name, p, segments=2)
        arrays = build_array(alg.collective, alg.name, p, segments=2)
        for topo in _topologies(p):
            old = reference.simulate(tuples, topo, 1e6, mode, LINK.reduce_bandwidth_Bps)
            _same(old, simulate(arrays, topo, 1e6, mode, LINK.reduce_bandwidth_Bps))


@pytest.mark.parametrize("mode", ["rounds", "events"])
def test_array_simulator_equals_the_old_one_on_two_level_schedules(mode):
    cluster = Cluster(4, 2, Link(1e-6, 100e9), Link(4e-6, 10e9), nics_per_node=1)
    for inter in ("ring", "rhd"):
        tuples = build_hierarchical("allreduce", 4, 2, "ring", inter)
        arrays = build_hierarchical_array("allreduce", 4, 2, "ring", inter)
        for topo in (T.two_level(cluster), T.two_level(cluster, oversubscription=2)):
            _same(reference.simulate(tuples, topo, 3e8, mode, 40e9), simulate(arrays, topo, 3e8, mode, 40e9))


@pytest.mark.parametrize("mode", ["rounds", "events"])
def test_flat_ring_and_two_level_ring_on_a_cluster_equal_their_closed_forms(mode):
    # cluster:16x8 of the chapter preset, one NIC per rank: every ring step waits on one
    # inter-node hop (5 us + n/p at 50 GB/s); the two-level ring/ring is the model of
    # model/two_level/hierarchy.py (both phases contention-free)
    topo = T.parse("cluster:16x8")
    chapter = get_preset("chapter", 16)
    n = 1 << 30
    flat = simulate(build_array("allreduce", "ring", 128), topo, n, mode).time_s
    assert flat == pytest.approx(float(cost("allreduce", "ring", 128, [n], chapter.inter).total_s[0]), rel=1e-9)
    two = simulate(build_hierarchical_array("allreduce", 16, 8, "ring", "ring"), topo, n, mode).time_s
    assert two == pytest.approx(float(two_level_cost("allreduce", chapter, [n], "ring", "ring").total_s[0]), rel=1e-9)


def test_a_tuple_schedule_still_simulates():
    s = build("allreduce", "ring", 6)
    assert isinstance(from_schedule(s), ArraySchedule)
    r = simulate(s, T.ring(6, LINK), 6e8, reduce_bandwidth_Bps=LINK.reduce_bandwidth_Bps)
    assert r.time_s == pytest.approx(float(cost("allreduce", "ring", 6, [6e8], LINK).total_s[0]))


def test_like_steps_of_a_tuple_schedule_are_detected_as_one_class():

    packed = from_schedule(build("allreduce", "ring", 6))
    of_step, members = step_classes(packed)
    assert len(packed.steps) == 10 and of_step == [0] * 5 + [1] * 5 and len(members) == 2
