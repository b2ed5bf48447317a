"""The two-level plans are one table (model/hierarchy.PLANS) that the cost, the schedule builder and the
runner all read: each property below ties one reader to the table, so a row changed there changes all three."""

import pytest

from collperf.collectives import get_collective
from collperf.errors import UsageError
from collperf.model.algorithms import get_algorithm
from collperf.model.two_level.build import (
    DEFAULT_PHASES,
    build,
    build_hierarchical,
    build_hierarchical_array,
    build_two_level,
    default_phase,
)
from collperf.model.two_level.hierarchy import PLANS, get_plan, two_level_cost
from collperf.model.network import Cluster, Link
from collperf.schedule.verify import verify

INTRA = Link(1e-6, 300e9, name="nvlink")
INTER = Link(5e-6, 50e9, name="net")


@pytest.mark.parametrize("collective", sorted(PLANS))
def test_the_default_algorithm_runs_every_phase_on_any_rank_count(collective):
    plan = PLANS[collective]
    for phase in plan.phases:
        alg = get_algorithm(phase.collective, plan.default_algorithm)
        assert all(alg.unavailable(p) is None for p in range(1, 10)), (collective, phase)
    assert default_phase(collective) == DEFAULT_PHASES[collective] == plan.default_algorithm


@pytest.mark.parametrize("collective", sorted(PLANS))
def test_only_the_rooted_collectives_cross_on_one_group(collective):
    # the inter link a phase is priced on and the groups the builder runs follow the same flag
    assert PLANS[collective].all_ranks_cross == (not get_collective(collective).rooted)


@pytest.mark.parametrize("collective", sorted(PLANS))
def test_the_cost_walks_the_plan_phases_in_order(collective):
    plan = PLANS[collective]
    alg = plan.default_algorithm
    c = two_level_cost(collective, Cluster(3, 4, INTRA, INTER, 4), [1e6], alg, alg)
    assert [ph.name for ph in c.phases] == [f"{ph.level} {ph.collective}" for ph in plan.phases]
    assert [ph.ranks for ph in c.phases] == [4 if ph.level == "intra" else 3 for ph in plan.phases]
    # the inter phase is priced on the per-rank share of the node's NICs where all ranks cross, else on one NIC
    inter = [ph for ph in c.phases if ph.name.startswith("inter")][0]
    assert inter.link == ("net per rank" if plan.all_ranks_cross else "net")


@pytest.mark.parametrize("collective", sorted(PLANS))
@pytest.mark.parametrize("nodes, g", [(2, 3), (3, 2), (1, 4), (4, 1)])
def test_the_builder_runs_the_plan_phases_back_to_back(collective, nodes, g):
    """Identity: the two-level schedule's steps are the phases' flat schedules' steps, phase after phase,
    and it computes its collective (symbolic verification)."""
    plan = PLANS[collective]
    s = build_two_level(collective, nodes, g)
    verify(s)
    ranks = {"intra": g, "inter": nodes}
    expected = sum(
        len(build(ph.collective, plan.default_algorithm, ranks[ph.level]).steps)
        for ph in plan.phases
        if ranks[ph.level] > 1
    )
    assert len(s.steps) == expected
    assert s == build_hierarchical(collective, nodes, g, plan.default_algorithm, plan.default_algorithm)


@pytest.mark.parametrize("collective", sorted(PLANS))
def test_the_array_form_is_the_tuple_form(collective):
    alg = DEFAULT_PHASES[collective]
    tuples = build_hierarchical(collective, 3, 2, alg, alg)
    arrays = build_hierarchical_array(collective, 3, 2, alg, alg)
    assert _plain(arrays.to_schedule()) == _plain(tuples)


def _plain(s):
    return (
        (s.collective, s.algorithm, s.ranks, s.chunks, s.root, s.chunks_per_buffer),
        [[(t.src, t.dst, tuple(t.chunks), t.op) for t in st.transfers] for st in s.steps],
    )


def test_a_collective_without_a_plan_is_refused_with_the_ones_that_have_one():
    with pytest.raises(UsageError, match="no two-level algorithm for sendrecv: expected one of allreduce"):
        get_plan("sendrecv")
    with pytest.raises(UsageError, match="no two-level algorithm for sendrecv"):
        build_two_level("sendrecv", 2, 2)
    assert default_phase("sendrecv") == "best"
