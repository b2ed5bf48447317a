"""Schedules: every algorithm verified for 1..64 ranks, broken ones caught, structure, cost == closed form."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from collperf.model.algorithms import ALGORITHMS
from collperf.model.costs import coefficients
from collperf.model.two_level.hierarchy import two_level_cost
from collperf.model.network import Cluster, Link
from collperf.model.two_level.build import DEFAULT_PHASES, build, build_hierarchical
from collperf.model.schedule_cost import coefficients as schedule_coefficients
from collperf.model.schedule_cost import messages_per_rank, schedule_cost
from collperf.schedule.ir import Step, Transfer, make
from collperf.schedule.verify import VerificationError, empty_chunks_for, verify

# 1 to 64 ranks in two parts: the core verifies up to 32, the slow part 33 to 64 (most of the work)
RANK_PARTS = [pytest.param(range(1, 33), id="1-32"), pytest.param(range(33, 65), marks=pytest.mark.slow, id="33-64")]


@pytest.mark.parametrize("ranks", RANK_PARTS)
@pytest.mark.parametrize("alg", ALGORITHMS, ids=lambda a: f"{a.collective}-{a.name}")
def test_every_algorithm_verifies_for_1_to_64_ranks(alg, ranks):
    for p in ranks:
        if alg.unavailable(p):
            continue
        for k in (1, 2, 5) if alg.pipeline else (1,):
            verify(build(alg.collective, alg.name, p, segments=k))


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(ALGORITHMS), st.integers(1, 40), st.integers(0, 200), st.integers(1, 4), st.data())
def test_verifies_for_any_size_including_empty_chunks(alg, p, elements, k, data):
    if alg.unavailable(p):
        return
    root = data.draw(st.integers(0, p - 1))
    s = build(alg.collective, alg.name, p, root=root, segments=k)
    verify(s, empty_chunks_for(s, elements))


def test_empty_chunks_follow_array_split():
    s = build("allgather", "ring", 8)
    assert empty_chunks_for(s, 5) == frozenset({5, 6, 7})
    assert empty_chunks_for(s, 8) == frozenset()


@pytest.mark.parametrize("collective", sorted(DEFAULT_PHASES))
def test_hierarchical_schedules_verify(collective):
    for nodes, g in [(1, 4), (4, 1), (2, 2), (3, 4), (4, 3), (2, 8), (5, 3)]:
        verify(build_hierarchical(collective, nodes, g, DEFAULT_PHASES[collective], DEFAULT_PHASES[collective]))


@pytest.mark.parametrize("intra, inter", [("mesh", "rhd"), ("ring", "double-binary-tree"), ("mesh", "one-shot")])
def test_hierarchical_allreduce_with_any_phase_algorithms(intra, inter):
    for nodes, g in [(2, 4), (3, 2), (4, 4)]:
        verify(build_hierarchical("allreduce", nodes, g, intra, inter, segments=3))


# --- broken schedules are caught, and the message names the place -------------------------------


def test_wrong_index_is_caught():
    good = build("allgather", "ring", 4)
    steps = list(good.steps)
    first = list(steps[1].transfers)
    first[2] = Transfer(first[2].src, first[2].dst, (3,), "copy")  # a block rank 2 does not hold yet
    steps[1] = Step(tuple(first))
    with pytest.raises(
        VerificationError, match=r"step 1, transfer 2->3\[3\]: rank 2 sends chunk 3, which it does not hold"
    ):
        verify(make("allgather", "ring", 4, 4, steps))


def test_double_reduce_is_caught():
    s = build("allreduce", "ring", 4)
    steps = list(s.steps)
    steps.insert(1, steps[0])  # the first reduce-scatter step twice
    with pytest.raises(
        VerificationError, match=r"step 1, transfer 0\+>1\[3\]: rank 1 chunk 3 would count contributions \{0\} twice"
    ):
        verify(make("allreduce", "ring", 4, 4, steps))


def test_missing_step_is_caught():
    s = build("reducescatter", "recursive-halving", 8)
    with pytest.raises(
        VerificationError,
        match=r"after the last step \(2 steps\), rank \d chunk \d holds .* expected \{0,1,2,3,4,5,6,7\}",
    ):
        verify(make("reducescatter", "recursive-halving", 8, 8, s.steps[:-1]))


def test_conflicting_writes_and_bad_ranks_are_caught():
    with pytest.raises(VerificationError, match="written twice in one step"):
        verify(make("allreduce", "x", 3, 1, [Step((Transfer(0, 2, (0,)), Transfer(1, 2, (0,))))]))
    with pytest.raises(VerificationError, match="rank out of range"):
        verify(make("broadcast", "x", 3, 1, [Step((Transfer(0, 3, (0,)),))]))
    with pytest.raises(VerificationError, match="sends to itself"):
        verify(make("broadcast", "x", 3, 1, [Step((Transfer(0, 0, (0,)),))]))


# --- structure ----------------------------------------------------------------------------------


@pytest.mark.parametrize("p", [2, 3, 5, 8, 13])
def test_ring_allreduce_sends_2_p_minus_1_messages_to_the_right(p):
    s = build("allreduce", "ring", p)
    counts = messages_per_rank(s)
    assert counts == {(r, (r + 1) % p): 2 * (p - 1) for r in range(p)}
    assert len(s.steps) == 2 * (p - 1)


@pytest.mark.parametrize("p", [2, 4, 16, 32])
def test_recursive_doubling_talks_to_rank_xor_2_to_the_k(p):
    for s in (build("allgather", "recursive-doubling", p), build("allreduce", "recursive-doubling", p)):
        for k, st_ in enumerate(s.steps):
            assert {(t.src, t.dst) for t in st_.transfers} == {(r, r ^ (1 << k)) for r in range(p)}


def test_recursive_halving_halves_the_data_each_step():
    s = build("reducescatter", "recursive-halving", 16)
    sizes = [{len(t.chunks) for t in st_.transfers} for st_ in s.steps]
    assert sizes == [{8}, {4}, {2}, {1}]
    assert [{t.src ^ t.dst for t in st_.transfers} for st_ in s.steps] == [{8}, {4}, {2}, {1}]


def test_fold_in_for_six_ranks():
    s = build("allreduce", "rhd", 6)  # p' = 4, ranks 0 and 2 fold into 1 and 3
    assert {(t.src, t.dst) for t in s.steps[0].transfers} == {(0, 1), (2, 3)}
    assert {(t.src, t.dst) for t in s.steps[-1].transfers} == {(1, 0), (3, 2)}


def test_binomial_and_bruck_step_counts_and_partners():
    for p in (5, 8, 12):
        assert len(build("broadcast", "binomial", p).steps) == (p - 1).bit_length()
        bruck = build("allgather", "bruck", p)
        for k, st_ in enumerate(bruck.steps):
            assert {(t.src, t.dst) for t in st_.transfers} == {(r, (r - (1 << k)) % p) for r in range(p)}


def test_mesh_is_one_step_to_every_peer_and_chain_is_a_pipeline():
    mesh = build("allgather", "mesh", 6)
    assert len(mesh.steps) == 1 and len(mesh.steps[0].transfers) == 30
    chain = build("broadcast", "chain", 5, segments=4)
    assert len(chain.steps) == 5 - 2 + 4
    assert set(messages_per_rank(chain)) == {(i, i + 1) for i in range(4)}


def test_double_binary_tree_each_rank_sends_to_at_most_two_children_per_tree():
    s = build("allreduce", "double-binary-tree", 16, segments=2)
    half = len(s.steps) // 2
    for st_ in s.steps[half:]:
        per_src = {}
        for t in st_.transfers:
            tree = t.chunks[0] // 2
            per_src.setdefault((t.src, tree), set()).add(t.dst)
        assert all(len(children) <= 2 for children in per_src.values())


def test_root_relabels_rooted_collectives():
    s = build("broadcast", "binomial", 8, root=5)
    assert s.steps[0].transfers[0].src == 5
    verify(s)
    g = build("gather", "binomial", 6, root=4)
    verify(g)
    assert g.root == 4


# --- cost from the schedule == closed form --------------------------------------------------------


@pytest.mark.parametrize("ranks", RANK_PARTS)
@pytest.mark.parametrize("alg", ALGORITHMS, ids=lambda a: f"{a.collective}-{a.name}")
def test_schedule_cost_equals_closed_form(alg, ranks):
    for p in ranks:
        if alg.unavailable(p):
            continue
        for k in (1, 3, 8) if alg.pipeline else (None,):
            s = build(alg.collective, alg.name, p, segments=k or 1)
            assert schedule_coefficients(s) == pytest.approx(
                coefficients(alg.collective, alg.name, p, segments=k), rel=1e-12, abs=1e-12
            )


def test_hierarchical_schedule_cost_equals_two_level_model_on_a_uniform_network():
    link = Link(3e-6, 20e9, 80e9)
    for collective, phase in DEFAULT_PHASES.items():
        for nodes, g in [(2, 4), (4, 2), (3, 3)]:
            s = build_hierarchical(collective, nodes, g, phase, phase)
            cluster = Cluster(nodes, g, link, link, nics_per_node=g)
            model = two_level_cost(collective, cluster, [1e6, 1e9], phase, phase)
            if collective in ("broadcast", "reduce", "scatter", "gather"):
                cluster = Cluster(nodes, g, link, link, nics_per_node=1)
                model = two_level_cost(collective, cluster, [1e6, 1e9], phase, phase)
            assert np.allclose(schedule_cost(s, [1e6, 1e9], link).total_s, model.total_s, rtol=1e-12), collective
