"""Schedules of the registered algorithms by name (model/algorithms), in tuple and array form, with one
check of their arguments; and what `-A hierarchical` runs (its default phases)."""

from __future__ import annotations

from typing import Callable

import numpy as np

from collperf.collectives import check_ranks, get_collective
from collperf.errors import UsageError
from collperf.model.algorithms import Algorithm, get_algorithm
from collperf.model.two_level import hierarchical
from collperf.model.two_level.hierarchy import PLANS, TwoLevelPlan, get_plan, phase_ranks
from collperf.schedule.arrays import ArraySchedule, embed_groups, from_schedule, make_arrays, relabel_arrays
from collperf.schedule.ir import Schedule, relabel


def build(collective: str, algorithm: str, ranks: int, root: int = 0, segments: int = 1) -> Schedule:
    """The schedule of a flat algorithm on `ranks` ranks (rooted collectives: rooted at `root`)."""
    alg = get_algorithm(collective, algorithm)
    p = checked_ranks(alg, ranks, root, segments)
    assert alg.builder is not None  # Algorithm.__post_init__: every algorithm has a builder
    schedule = alg.builder(p, segments)
    return relabel(schedule, root) if get_collective(alg.collective).rooted else schedule


def build_hierarchical(
    collective: str, nodes: int, ranks_per_node: int, intra_algorithm: str, inter_algorithm: str, segments: int = 1
) -> Schedule:
    """The two-level schedule (model/two_level/hierarchy.py) with the given phase algorithms."""
    name = get_plan(collective).collective

    def intra(phase_collective: str, ranks: int) -> Schedule:
        return build(phase_collective, intra_algorithm, ranks, segments=segments)

    def inter(phase_collective: str, ranks: int) -> Schedule:
        return build(phase_collective, inter_algorithm, ranks, segments=segments)

    return hierarchical.build(name, check_ranks(nodes), check_ranks(ranks_per_node), intra, inter)


# The default phase algorithm of each two-level schedule when none is given (a column of the plans' table).
DEFAULT_PHASES = {name: plan.default_algorithm for name, plan in PLANS.items()}


def default_phase(collective: str) -> str:
    """The phase algorithm `bench -A hierarchical`, auto and the user collectives run (and price); "best"
    for a collective without a two-level plan."""
    plan = PLANS.get(get_collective(collective).name)
    return plan.default_algorithm if plan is not None else "best"


def build_two_level(collective: str, nodes: int, ranks_per_node: int, segments: int = 1) -> Schedule:
    """The two-level schedule the executor runs: every phase with its default algorithm."""
    phase = default_phase(collective)
    return build_hierarchical(collective, nodes, ranks_per_node, phase, phase, segments=segments)


def roots_at_zero(collective: str, root: int) -> bool:
    """Whether a two-level schedule can serve this root: its rooted collectives are rooted at rank 0."""
    return root == 0 or not get_collective(collective).rooted


# block-indexed rooted collectives rotate chunks with ranks (ir.relabel): built as tuples off root 0
_ROTATES_CHUNKS = ("scatter", "gather")


def build_array(collective: str, algorithm: str, ranks: int, root: int = 0, segments: int = 1) -> ArraySchedule:
    """The array form of a flat algorithm's schedule: vectorized where the algorithm has an array builder,
    otherwise the tuple builder's schedule packed into arrays. Checked as build is (checked_ranks)."""
    alg = get_algorithm(collective, algorithm)
    if not alg.builds_arrays or (root and alg.collective in _ROTATES_CHUNKS):
        return from_schedule(build(collective, algorithm, ranks, root, segments))
    p = checked_ranks(alg, ranks, root, segments)
    assert alg.array_builder is not None  # builds_arrays, checked above
    s = alg.array_builder(p, segments)
    return relabel_arrays(s, root) if get_collective(alg.collective).rooted else s


def checked_ranks(alg: Algorithm, ranks: int, root: int, segments: int) -> int:
    """The one check of a build's arguments (tuple or array form): the rank count, that the algorithm runs on
    it, the segments and the root; the rank count checked."""
    p = check_ranks(ranks)
    reason = alg.unavailable(p)
    if reason:
        raise UsageError(f"{alg.collective} {alg.name} cannot run on {p} ranks: {reason}")
    if isinstance(segments, bool) or not isinstance(segments, int) or segments < 1:
        raise UsageError(f"segments {segments!r} is not a whole number >= 1")
    if not 0 <= root < p:
        raise UsageError(f"root {root} is not a rank of 0..{p - 1}")
    return p


def build_hierarchical_array(
    collective: str, nodes: int, ranks_per_node: int, intra_algorithm: str, inter_algorithm: str, segments: int = 1
) -> ArraySchedule:
    """The two-level schedule of model/two_level/hierarchical.py in array form: composed from the phases'
    array forms where the plan's layout has an array composer (_ARRAY_COMPOSERS), otherwise built as tuples
    and packed."""
    plan = get_plan(collective)
    composer = _ARRAY_COMPOSERS.get(plan.layout)
    if composer is None:
        return from_schedule(
            build_hierarchical(plan.collective, nodes, ranks_per_node, intra_algorithm, inter_algorithm, segments)
        )
    nodes, g = check_ranks(nodes), check_ranks(ranks_per_node)
    phases = []
    for level, phase_collective, _ in plan.phases:
        ranks = phase_ranks(level, nodes, g)
        if ranks > 1:
            algorithm = intra_algorithm if level == "intra" else inter_algorithm
            phases.append((level, build_array(phase_collective, algorithm, ranks, segments=segments)))
    return composer(plan, nodes, g, phases)


def _split_blocks_arrays(
    plan: TwoLevelPlan, nodes: int, g: int, phases: list[tuple[str, ArraySchedule]]
) -> ArraySchedule:
    """Every node, every local-index group at once; global chunk b * c + j: sub-chunk j (of the inter
    phase's c) of intra block b (hierarchical._split_blocks)."""
    c = next((s.chunks for level, s in phases if level == "inter"), 1)
    local = np.arange(g)
    steps = []
    for level, sub in phases:
        if level == "intra":
            groups = np.arange(nodes)[:, None] * g + local[None, :]
            steps += embed_groups(sub, groups, c, np.zeros(nodes, dtype=np.int64))
        else:
            groups = np.arange(nodes)[None, :] * g + local[:, None]
            steps += embed_groups(sub, groups, 1, local * c)
    return make_arrays(plan.collective, "hierarchical", nodes * g, g * c, steps)


# the layouts composed straight in array form (the others are packed from tuples)
_ARRAY_COMPOSERS: dict[str, Callable[[TwoLevelPlan, int, int, list[tuple[str, ArraySchedule]]], ArraySchedule]] = {
    "split-blocks": _split_blocks_arrays
}
