"""Schedules of the registered algorithms (model/algorithms), with their arguments checked."""

from __future__ import annotations

from collperf.collectives import check_ranks, get_collective
from collperf.errors import UsageError
from collperf.model.algorithms import get_algorithm, hierarchical
from collperf.schedule.ir import Schedule, relabel


def build(collective: str, algorithm: str, ranks: int, root: int = 0, segments: int = 1) -> Schedule:
    """The schedule of a flat algorithm on `ranks` ranks (rooted collectives: rooted at `root`)."""
    alg = get_algorithm(collective, algorithm)
    p = check_ranks(ranks)
    reason = alg.unavailable(p)
    if reason:
        raise UsageError(f"{alg.collective} {alg.name} cannot run on {p} ranks: {reason}")
    if isinstance(segments, bool) or not isinstance(segments, int) or segments < 1:
        raise UsageError(f"segments {segments!r} is not a whole number >= 1")
    if not 0 <= root < p:
        raise UsageError(f"root {root} is not a rank of 0..{p - 1}")
    schedule = alg.builder(p, segments)
    return relabel(schedule, root) if get_collective(alg.collective).rooted else schedule


def build_hierarchical(collective: str, nodes: int, ranks_per_node: int, intra_algorithm: str,
                       inter_algorithm: str, segments: int = 1) -> Schedule:
    """The two-level schedule (model/hierarchy.py) with the given phase algorithms."""
    name = get_collective(collective).name
    if name not in hierarchical.PLANS:
        raise UsageError(f"no two-level algorithm for {name}")

    def intra(phase_collective, ranks):
        return build(phase_collective, intra_algorithm, ranks, segments=segments)

    def inter(phase_collective, ranks):
        return build(phase_collective, inter_algorithm, ranks, segments=segments)

    return hierarchical.build(name, check_ranks(nodes), check_ranks(ranks_per_node), intra, inter)


# The default phase algorithms of a two-level schedule when none is given.
DEFAULT_PHASES = {"allreduce": "ring", "allgather": "ring", "reducescatter": "ring", "alltoall": "pairwise",
                  "broadcast": "binomial", "reduce": "binomial", "scatter": "binomial", "gather": "binomial"}


def default_phase(collective: str) -> str:
    """The phase algorithm `bench -A hierarchical`, auto and the user collectives run (and price)."""
    return DEFAULT_PHASES.get(get_collective(collective).name, "best")


def build_two_level(collective: str, nodes: int, ranks_per_node: int, segments: int = 1) -> Schedule:
    """The two-level schedule the executor runs: every phase with its default algorithm."""
    phase = default_phase(collective)
    return build_hierarchical(collective, nodes, ranks_per_node, phase, phase, segments=segments)


def roots_at_zero(collective: str, root: int) -> bool:
    """Whether a two-level schedule can serve this root: its rooted collectives are rooted at rank 0."""
    return root == 0 or not get_collective(collective).rooted
