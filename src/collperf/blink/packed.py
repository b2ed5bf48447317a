"""Packed trees (blink/packing.py) as schedules: broadcast, reduce, allreduce, allgather, reducescatter.

Each tree carries its share of the data: the buffer is cut into `segments` x `resolution` chunks
per root; every segment of tree t is m_t chunks, m_t / resolution being the tree's share (rounded
by largest remainders, at least one chunk per tree). Segments are pipelined down each tree as the
project's other pipelined trees are (model/algorithms/trees.py): a rank at depth d sends segment
j to its children at step d + j. The reduce direction is the time reversal.

A tree edge may be a route through other devices (a PCIe switch, an idle GPU): the schedule carries
it in meta["routes"], keyed (src, dst, op, first chunk), and simulate.py follows it. Ranks are the
group's local ranks; simulate on `packing.topology` (topology.subset), meta["ranks"] names the
topology's ranks.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from collperf.errors import UsageError
from collperf.schedule.ir import (
    COPY,
    REDUCE,
    Schedule,
    Step,
    Transfer,
    make,
    reverse,
    step,
)


def units(weights, resolution: int) -> list[int]:
    """Whole chunks per tree, summing to `resolution`, proportional to `weights` (largest remainders),
    every tree with a positive weight getting at least one."""
    w = np.asarray(weights, dtype=float)
    if resolution < len(w):
        raise UsageError(f"resolution {resolution} is below the {len(w)} trees: give at least {len(w)}")
    exact = w / w.sum() * resolution
    m = np.maximum(np.floor(exact).astype(int), 1)
    while m.sum() > resolution:
        m[np.argmax(np.where(m > 1, m - exact, -np.inf))] -= 1
    for i in np.argsort(-(exact - m))[: resolution - m.sum()]:
        m[i] += 1
    return [int(x) for x in m]


def _check(segments: int, resolution: int):
    for name, value in (("segments", segments), ("resolution", resolution)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise UsageError(f"{name} {value!r} is not a whole number >= 1")


def _forest(parts, p: int, segments: int, first_chunk: int = 0):
    """Broadcast steps of trees given as (tree, chunks per segment); returns (steps as lists of
    transfers, routes, chunks used, height)."""
    k = segments
    height = max((max(t.depth()) for t, _ in parts), default=0)
    steps = [[] for _ in range(k + height - 1)] if p > 1 else []
    routes = {}
    offset = first_chunk
    for tree, m in parts:
        depth = tree.depth()
        for child, up in enumerate(tree.parent):
            if up < 0:
                continue
            path = tree.routes[(up, child)]
            for j in range(k):
                chunks = range(offset + j * m, offset + (j + 1) * m)
                steps[depth[up] + j].append(Transfer(up, child, chunks, COPY))
                routes[(up, child, COPY, chunks[0])] = list(path)
        offset += k * m
    return steps, routes, offset - first_chunk, height


def _reversed_routes(routes: dict) -> dict:
    """The routes of the time-reversed transfers (child -> parent, reduce, same chunks)."""
    return {(b, a, REDUCE, c): list(reversed(path)) for (a, b, _, c), path in routes.items()}


def _parts(packing, root: int, resolution: int):
    trees = packing.trees_of(root)
    if not trees:
        raise UsageError(f"the packing has no trees rooted at local rank {root}")
    return list(zip(trees, units([t.rate_Bps for t in trees], resolution)))


def _meta(packing, **extra) -> dict:
    return {"ranks": list(packing.ranks), "topology": packing.topology.name, **extra}


def broadcast(packing, segments: int = 16, resolution: int = 128) -> Schedule:
    """The packed broadcast from the packing's (single) root."""
    _check(segments, resolution)
    root = _single_root(packing)
    steps, routes, chunks, _ = _forest(_parts(packing, root, resolution), len(packing.ranks), segments)
    s = make("broadcast", "blink", len(packing.ranks), chunks, [step(ts) for ts in steps], root, segments=segments)
    s.meta.update(_meta(packing), routes=routes)
    return s


def _time_reversed(down: Schedule, collective: str) -> Schedule:
    """`down` run backwards as `collective`: copies become reductions, every route reversed."""
    s = reverse(down, collective, "blink", reduce=True)
    return replace(s, meta={**down.meta, "routes": _reversed_routes(down.meta["routes"])})


def reduce(packing, segments: int = 16, resolution: int = 128) -> Schedule:
    """Reduce up the packed trees to their root (the broadcast's time reversal, routes reversed)."""
    return _time_reversed(broadcast(packing, segments, resolution), "reduce")


def allreduce(packing, segments: int = 16, resolution: int = 128, overlap: bool = True) -> Schedule:
    """Reduce up the packed trees, broadcast down the same trees (Blink's AllReduce). overlap: the
    broadcast of a segment starts as soon as the root has reduced it (the two directions of every
    full-duplex link carry the two phases at once); otherwise the two phases run one after the other."""
    _check(segments, resolution)
    root, p = _single_root(packing), len(packing.ranks)
    parts = _parts(packing, root, resolution)
    down_steps, routes, chunks, height = _forest(parts, p, segments)
    up = reverse(make("allreduce", "blink", p, chunks, [step(ts) for ts in down_steps]), "allreduce", "blink", True)
    if overlap:
        # root holds segment j fully reduced after reduce step (height-1) + (segments-1-j); send the
        # segments down in that order, `height` steps behind the reduce
        order = list(range(segments))[::-1]
        down_steps = _permute_segments(down_steps, parts, segments, order)
        routes_down = {
            (a, b, op, _relabel_chunk(c, parts, segments, order)): path for (a, b, op, c), path in routes.items()
        }
        depth = len(up.steps)
        merged = [list(up.steps[i].transfers) if i < depth else [] for i in range(height + len(down_steps))]
        for i, ts in enumerate(down_steps):
            merged[height + i] += ts
        steps = [Step(tuple(ts)) for ts in merged]
    else:
        routes_down = routes
        steps = list(up.steps) + [step(ts) for ts in down_steps]
    s = make("allreduce", "blink", p, chunks, steps, root, segments=segments, overlap=overlap)
    s.meta.update(_meta(packing), routes={**_reversed_routes(routes), **routes_down})
    return s


def _relabel_chunk(c: int, parts, segments: int, order) -> int:
    offset = 0
    for _, m in parts:
        if c < offset + segments * m:
            j, r = divmod(c - offset, m)
            return offset + order[j] * m + r
        offset += segments * m
    return c


def _permute_segments(steps, parts, segments, order):
    return [
        [
            Transfer(
                t.src,
                t.dst,
                range(
                    _relabel_chunk(t.chunks[0], parts, segments, order),
                    _relabel_chunk(t.chunks[0], parts, segments, order) + len(t.chunks),
                ),
                t.op,
            )
            for t in ts
        ]
        for ts in steps
    ]


def allgather(packing, segments: int = 8, resolution: int = 32) -> Schedule:
    """Every rank broadcasts its block down its own packed trees (a packing rooted at every rank,
    model.packing.pack(..., roots=ranks)); block r is chunks [r c, (r+1) c) as in the IR."""
    _check(segments, resolution)
    p = len(packing.ranks)
    if sorted(packing.roots) != list(range(p)):
        raise UsageError("an allgather needs a packing rooted at every rank: pack(topo, ranks, roots=ranks)")
    steps, routes = [], {}
    for r in range(p):
        st, rt, _, _ = _forest(_parts(packing, r, resolution), p, segments, first_chunk=r * segments * resolution)
        steps += [[] for _ in range(len(st) - len(steps))]
        for i, ts in enumerate(st):
            steps[i] += ts
        routes.update(rt)
    s = make("allgather", "blink", p, p * segments * resolution, [step(ts) for ts in steps], segments=segments)
    s.meta.update(_meta(packing), routes=routes)
    return s


def reducescatter(packing, segments: int = 8, resolution: int = 32) -> Schedule:
    """The allgather's time reversal: block r is reduced up rank r's trees into rank r."""
    return _time_reversed(allgather(packing, segments, resolution), "reducescatter")


def hybrid_broadcast(nvlink, pcie, pcie_fraction: float, segments: int = 16, resolution: int = 128) -> Schedule:
    """Two tree sets from one root, NVLink trees and PCIe trees, the data split pcie_fraction : rest
    (model.blink.hybrid_split). Both packings must be on the same group and root."""
    _check(segments, resolution)
    if nvlink.ranks != pcie.ranks or nvlink.roots != pcie.roots:
        raise UsageError("the NVLink and PCIe packings must cover the same ranks from the same root")
    if not 0 <= pcie_fraction <= 1:
        raise UsageError(f"pcie_fraction {pcie_fraction} is not within 0..1")
    root = _single_root(nvlink)
    trees = nvlink.trees_of(root) * (pcie_fraction < 1) + pcie.trees_of(root) * (pcie_fraction > 0)
    weights = [(1 - pcie_fraction) * t.rate_Bps / nvlink.rate_Bps for t in nvlink.trees_of(root)] * (
        pcie_fraction < 1
    ) + [pcie_fraction * t.rate_Bps / pcie.rate_Bps for t in pcie.trees_of(root)] * (pcie_fraction > 0)
    parts = list(zip(trees, units(weights, resolution)))
    steps, routes, chunks, _ = _forest(parts, len(nvlink.ranks), segments)
    s = make(
        "broadcast",
        "blink-hybrid",
        len(nvlink.ranks),
        chunks,
        [step(ts) for ts in steps],
        root,
        segments=segments,
        pcie_fraction=pcie_fraction,
    )
    s.meta.update(_meta(nvlink), routes=routes)
    return s


def _single_root(packing) -> int:
    if len(packing.roots) != 1:
        raise UsageError(f"this schedule needs a packing with one root, not {len(packing.roots)}")
    return packing.roots[0]
