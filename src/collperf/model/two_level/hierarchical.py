"""Two-level schedules: the flat schedules of model/hierarchy.PLANS run on sub-groups, side by side.

Rank r = node * g + local. An intra phase runs the intra algorithm on every node at once; an inter
phase runs the inter algorithm on every group of ranks that share a local index (all g groups at
once) or, for rooted collectives, on the local-rank-0 group only. A sub-schedule's chunks are
mapped onto global chunks so that each phase moves exactly the data model/hierarchy prices.
"""

from __future__ import annotations

from typing import Callable, Sequence

from collperf.model.two_level.hierarchy import PLANS, TwoLevelPlan, phase_ranks
from collperf.schedule.ir import Schedule, embed, make, parallel

# a phase's schedule by (sub-collective, ranks); a group's ranks -> the global chunks of each of its chunks
PhaseBuilder = Callable[[str, int], Schedule]
ChunkMap = Callable[[list[int]], list[list[int]]]


def build(collective: str, nodes: int, g: int, intra: PhaseBuilder, inter: PhaseBuilder) -> Schedule:
    """intra(collective, ranks) / inter(collective, ranks) return flat schedules for a phase; the plan's
    layout (model/hierarchy.PLANS) says how their chunks sit in the whole buffer."""
    plan = PLANS[collective]
    phases = []
    for level, phase_collective, _ in plan.phases:
        ranks = phase_ranks(level, nodes, g)
        if ranks > 1:  # a level with one rank does nothing
            phases.append((level, (intra if level == "intra" else inter)(phase_collective, ranks)))
    return COMPOSERS[plan.layout](plan, nodes, g, phases)


def _groups(level: str, nodes: int, g: int, rooted: bool) -> list[list[int]]:
    if level == "intra":
        return [[n * g + i for i in range(g)] for n in range(nodes)]
    locals_: Sequence[int] = [0] if rooted else range(g)
    return [[n * g + b for n in range(nodes)] for b in locals_]


def _phase(
    sched: Schedule,
    level: str,
    nodes: int,
    g: int,
    rooted: bool,
    chunk_map: ChunkMap,
    chunks: int,
    collective: str,
    buffer_chunks: int = 0,
) -> Schedule:
    """One phase on all its groups at once; chunk_map(group) maps the phase's chunks to global ones."""
    p = nodes * g
    subs = [embed(sched, group, chunk_map(group), p, chunks) for group in _groups(level, nodes, g, rooted)]
    return parallel(subs, p, chunks, collective, "hierarchical", buffer_chunks)


def _assemble(collective: str, p: int, chunks: int, parts: Sequence[Schedule], buffer_chunks: int = 0) -> Schedule:
    return make(
        collective, "hierarchical", p, chunks, [s for part in parts for s in part.steps], buffer_chunks=buffer_chunks
    )


def _blocks(plan: TwoLevelPlan, nodes: int, g: int, phases: list[tuple[str, Schedule]]) -> Schedule:
    """Block-indexed collectives: global block (n, b) = chunk n * g + b. An intra phase's block i is
    the global blocks with local index i (of every node; rooted: of its own node); an inter phase's
    block n is node n's block at the group's local index (rooted: all of node n's blocks)."""
    p, collective = nodes * g, plan.collective
    rooted = not plan.all_ranks_cross

    def chunk_map(level: str) -> ChunkMap:
        if level == "intra":
            if rooted:
                return lambda group: [[group[0] + i] for i in range(g)]
            return lambda group: [[n * g + i for n in range(nodes)] for i in range(g)]
        if rooted:
            return lambda group: [[n * g + i for i in range(g)] for n in range(nodes)]
        return lambda group: [[n * g + group[0] % g] for n in range(nodes)]

    parts = [_phase(sched, level, nodes, g, rooted, chunk_map(level), p, collective) for level, sched in phases]
    return _assemble(collective, p, p, parts)


def _split_blocks(plan: TwoLevelPlan, nodes: int, g: int, phases: list[tuple[str, Schedule]]) -> Schedule:
    """Global chunk b * c + j: sub-chunk j (of the inter algorithm's c) of intra block b."""
    p = nodes * g
    c = next((s.chunks for level, s in phases if level == "inter"), 1)
    chunks = g * c
    parts = []
    for level, sched in phases:
        chunk_map: ChunkMap
        if level == "intra":
            chunk_map = lambda group: [[b * c + j for j in range(c)] for b in range(g)]  # noqa: E731
        else:
            chunk_map = lambda group: [[(group[0] % g) * c + j] for j in range(c)]  # noqa: E731
        parts.append(_phase(sched, level, nodes, g, False, chunk_map, chunks, plan.collective))
    return _assemble(plan.collective, p, chunks, parts)


def _whole_buffer(plan: TwoLevelPlan, nodes: int, g: int, phases: list[tuple[str, Schedule]]) -> Schedule:
    """broadcast and reduce: two phases on the whole buffer; global chunk i * c1 + j is chunk i of
    the first phase and chunk j of the second."""
    p, collective, rooted = nodes * g, plan.collective, not plan.all_ranks_cross
    counts = [s.chunks for _, s in phases] + [1, 1]
    c0, c1 = counts[0], counts[1]
    maps = [
        lambda group: [[i * c1 + j for j in range(c1)] for i in range(c0)],
        lambda group: [[i * c1 + j for i in range(c0)] for j in range(c1)],
    ]
    parts = [
        _phase(sched, level, nodes, g, rooted, maps[k], c0 * c1, collective) for k, (level, sched) in enumerate(phases)
    ]
    return _assemble(collective, p, c0 * c1, parts)


def _pairs(plan: TwoLevelPlan, nodes: int, g: int, phases: list[tuple[str, Schedule]]) -> Schedule:
    """alltoall: chunk (s, d) = s * p + d. Intra: rank (n, a) sends to (n, b) every block bound for
    local index b on any node; inter: rank (n, b) sends to (m, b) every block that came from node n
    and is bound for (m, b)."""
    p = nodes * g

    def intra_map(group: list[int]) -> list[list[int]]:
        n = group[0] // g
        return [[(n * g + a) * p + m * g + b for m in range(nodes)] for a in range(g) for b in range(g)]

    def inter_map(group: list[int]) -> list[list[int]]:
        b = group[0] % g
        return [[(n * g + a) * p + m * g + b for a in range(g)] for n in range(nodes) for m in range(nodes)]

    maps = {"intra": intra_map, "inter": inter_map}
    parts = [
        _phase(sched, level, nodes, g, False, maps[level], p * p, plan.collective, buffer_chunks=p)
        for level, sched in phases
    ]
    return _assemble(plan.collective, p, p * p, parts, buffer_chunks=p)


# how a plan's phases sit in the whole buffer, by TwoLevelPlan.layout
COMPOSERS: dict[str, Callable[[TwoLevelPlan, int, int, list[tuple[str, Schedule]]], Schedule]] = {
    "blocks": _blocks,
    "split-blocks": _split_blocks,
    "whole-buffer": _whole_buffer,
    "pairs": _pairs,
}
