"""Tree algorithms: binomial trees (MST), the pipelined chain, NCCL's double binary tree."""

from __future__ import annotations

from collperf.model import trees as shapes
from collperf.schedule.ir import COPY, Transfer, concat, make, reverse, step


def broadcast_binomial(p: int):
    # step k: every rank that has the data (r < 2^k) sends it all to r + 2^k
    steps = []
    distance = 1
    while distance < p:
        steps.append(step(Transfer(r, r + distance, (0,), COPY) for r in range(distance) if r + distance < p))
        distance *= 2
    return make("broadcast", "binomial", p, 1, steps)


def reduce_binomial(p: int):
    return reverse(broadcast_binomial(p), "reduce", "binomial", reduce=True)


def allreduce_reduce_broadcast(p: int):
    return concat(reduce_binomial(p), broadcast_binomial(p), "allreduce", "reduce-broadcast")


def scatter_binomial(p: int):
    # top-down: with mask m, each rank r holding blocks [r, r + 2m) hands [r + m, r + 2m) to r + m
    steps = []
    mask = 1 << max(0, shapes.ceil_log2(p) - 1)
    while mask >= 1 and p > 1:
        steps.append(step(Transfer(r, r + mask, range(r + mask, min(r + 2 * mask, p)), COPY)
                          for r in range(0, p, 2 * mask) if r + mask < p))
        mask //= 2
    return make("scatter", "binomial", p, p, steps)


def gather_binomial(p: int):
    return reverse(scatter_binomial(p), "gather", "binomial", reduce=False)


def broadcast_chain(p: int, segments: int = 1):
    # segment j leaves rank i at step i + j
    k = segments
    steps = [step(Transfer(i, i + 1, (s - i,), COPY) for i in range(p - 1) if 0 <= s - i < k)
             for s in range(p - 2 + k)]
    return make("broadcast", "chain", p, k, steps, segments=k)


def _forest_broadcast(trees, segments: int, collective: str, algorithm: str):
    """Pipelined broadcast down a forest: tree t carries chunks [t k, (t+1) k); a rank at depth d
    sends segment j (0-based) to all its children at step d + j."""
    p, k = len(trees[0]), segments
    height = shapes.tree_height(trees)
    by_step = [[] for _ in range(k + height - 1)] if p > 1 else []
    for t, parent in enumerate(trees):
        depth = shapes.depths_of(parent)
        for child, up in enumerate(parent):
            if up >= 0:
                for j in range(k):
                    by_step[depth[up] + j].append(Transfer(up, child, (t * k + j,), COPY))
    return make(collective, algorithm, p, len(trees) * k, [step(ts) for ts in by_step], segments=k)


def broadcast_double_binary_tree(p: int, segments: int = 1):
    if p == 1:
        return make("broadcast", "double-binary-tree", 1, 2 * segments, [])
    return _forest_broadcast(shapes.rooted_dtree_parents(p, 0), segments, "broadcast", "double-binary-tree")


def reduce_double_binary_tree(p: int, segments: int = 1):
    return reverse(broadcast_double_binary_tree(p, segments), "reduce", "double-binary-tree", reduce=True)


def allreduce_double_binary_tree(p: int, segments: int = 1):
    if p == 1:
        return make("allreduce", "double-binary-tree", 1, 2 * segments, [])
    down = _forest_broadcast(shapes.nccl_dtree_parents(p), segments, "allreduce", "double-binary-tree")
    up = reverse(down, "allreduce", "double-binary-tree", reduce=True)
    return concat(up, down, "allreduce", "double-binary-tree")


