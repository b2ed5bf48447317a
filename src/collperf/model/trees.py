"""Shapes the algorithms are built on: NCCL's double binary tree, pipelined tree profiles, fold-in.

Pure combinatorics over rank numbers, shared by the closed forms (model/algorithms/) and the
schedule builders, so that both describe the same algorithm.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

import numpy as np
import numpy.typing as npt


def ceil_log2(p: int) -> int:
    return max(0, (p - 1).bit_length())


def floor_pow2(p: int) -> int:
    """The largest power of two <= p (p >= 1)."""
    return 1 << (p.bit_length() - 1)


def is_pow2(p: int) -> bool:
    return p >= 1 and p & (p - 1) == 0


# ---------------------------------------------------------------------------------------------
# NCCL's binary trees (NVIDIA/nccl src/graph/trees.cc, ncclGetBtree / ncclGetDtree), ported.


def nccl_btree_parent(nranks: int) -> list[int]:
    """Parent of every rank in NCCL's in-order binary tree rooted at 0 (-1 for the root)."""
    parent = [-1] * nranks
    for rank in range(1, nranks):
        bit = 1
        while bit < nranks and not bit & rank:
            bit <<= 1
        up = (rank ^ bit) | (bit << 1)
        if up >= nranks:
            up = rank ^ bit
        parent[rank] = up
    return parent


def nccl_dtree_parents(nranks: int) -> tuple[list[int], list[int]]:
    """The two complementary trees: the btree, and its mirror (even nranks) or shift (odd)."""
    first = nccl_btree_parent(nranks)
    second = [-1] * nranks
    for rank in range(nranks):
        if nranks % 2 == 1:
            up = first[(rank - 1) % nranks]
            second[rank] = -1 if up == -1 else (up + 1) % nranks
        else:
            up = first[nranks - 1 - rank]
            second[rank] = -1 if up == -1 else nranks - 1 - up
    return first, second


def children_of(parent: list[int]) -> list[list[int]]:
    children: list[list[int]] = [[] for _ in parent]
    for rank, up in enumerate(parent):
        if up >= 0:
            children[up].append(rank)
    return children


def depths_of(parent: list[int]) -> list[int]:
    depth = [-1] * len(parent)

    def walk(rank: int) -> int:
        if depth[rank] < 0:
            depth[rank] = 0 if parent[rank] < 0 else walk(parent[rank]) + 1
        return depth[rank]

    for rank in range(len(parent)):
        walk(rank)
    return depth


def rooted_dtree_parents(nranks: int, root: int = 0) -> tuple[list[int], list[int]]:
    """Two trees for a rooted broadcast/reduce (Sanders-Speck-Traeff two-tree shape).

    The other nranks-1 ranks form NCCL's double binary tree; the root is the parent of both
    tree roots and feeds one half of the buffer into each tree.
    """
    others = [r for r in range(nranks) if r != root]
    trees = []
    for sub in nccl_dtree_parents(len(others)):
        parent = [-1] * nranks
        for local, up in enumerate(sub):
            parent[others[local]] = root if up < 0 else others[up]
        trees.append(parent)
    return trees[0], trees[1]


# ---------------------------------------------------------------------------------------------
# Pipelined trees. The buffer is split evenly over the trees, each tree's share into k segments.
# Broadcast direction: a rank at depth d sends segment j (1..k) to all its children at step d + j.
# The reduce direction is the exact time reversal. Per step the cost model charges one alpha and
# the busiest rank's max(bytes sent, bytes received) (full-duplex port shared by its messages).


@dataclass(frozen=True)
class TreeProfile:
    """Step count and load of a pipelined forest, in units of one segment (n / (trees * k))."""

    steps: int
    port_units: int  # sum over steps of the busiest rank's max(sent, received) segments
    reduce_units: int  # same for segments reduced (reduce direction: received from children)


@lru_cache(maxsize=None)
def _signatures(trees: tuple[tuple[int, ...], ...]) -> tuple[int, tuple[tuple[tuple[int, int, bool], ...], ...]]:
    """Distinct per-rank shapes (depth, children, has parent) across the trees, and the height."""
    shapes = set()
    height = 0
    for parent in trees:
        depth = depths_of(list(parent))
        height = max(height, max(depth) if depth else 0)
    per_tree = [(depths_of(list(p)), [len(c) for c in children_of(list(p))], p) for p in trees]
    for rank in range(len(trees[0])):
        shapes.add(tuple((d[rank], n[rank], p[rank] >= 0) for d, n, p in per_tree))
    return height, tuple(shapes)


def _profile_direct(trees: tuple[tuple[int, ...], ...], k: int) -> TreeProfile:
    height, shapes = _signatures(trees)
    steps = k + height - 1
    port = reduce = 0
    for step in range(1, steps + 1):
        busiest_port = busiest_reduce = 0
        for shape in shapes:
            sent = sum(n for d, n, _ in shape if d + 1 <= step <= d + k)
            received = sum(1 for d, _, has_parent in shape if has_parent and d <= step <= d + k - 1)
            busiest_port = max(busiest_port, sent, received)
            busiest_reduce = max(busiest_reduce, sent)
        port += busiest_port
        reduce += busiest_reduce
    return TreeProfile(steps, port, reduce)


@lru_cache(maxsize=256)
def _profile_table(trees: tuple[tuple[int, ...], ...]) -> tuple[int, np.ndarray]:
    """Exact profiles for k = 1 .. k0+1 (k0 = height - 1, at least 1), as an array of rows."""
    height, _ = _signatures(trees)
    k0 = max(height - 1, 1)
    rows = [(0, 0, 0)] + [tuple(vars(_profile_direct(trees, k)).values()) for k in range(1, k0 + 2)]
    return k0, np.array(rows, dtype=float)


def tree_profile(trees: Sequence[Sequence[int]], k: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Profile of `trees` (parent lists over the same ranks) pipelined with k segments per tree.

    `k` may be an int or an array of ints; returns (steps, port_units, reduce_units) as floats
    or arrays. Past k0 = height - 1 every extra segment adds one steady-state step with a fixed
    load (fill and drain do not depend on k), so the profile is linear in k there.
    """
    key = tuple(tuple(t) for t in trees)
    k0, table = _profile_table(key)
    k = np.asarray(k, dtype=np.int64)
    small = np.minimum(k, k0 + 1)
    slope = table[k0 + 1] - table[k0]
    rows = table[small] + np.multiply.outer(np.maximum(k - (k0 + 1), 0), slope)
    steps, port, reduce = np.moveaxis(rows, -1, 0)
    return steps, port, reduce


def tree_height(trees: Sequence[Sequence[int]]) -> int:
    return _signatures(tuple(tuple(t) for t in trees))[0]


# ---------------------------------------------------------------------------------------------
# Fold-in for recursive algorithms on a non-power-of-two p (MPICH, Thakur et al. 2005):
# p' = 2^floor(lg p) ranks take part; the other r = p - p' fold their data into a neighbour first.


@dataclass(frozen=True)
class Fold:
    ranks: int
    pow2: int  # p'
    extra: int  # r = p - p'
    survivors: tuple[int, ...]  # real rank of each virtual rank 0..p'-1
    folded: tuple[tuple[int, int], ...]  # (folded-away rank, its survivor) pairs


def fold_plan(ranks: int, keep: str = "odd") -> Fold:
    """Pairs (2i, 2i+1), i < r. keep='odd': 2i folds into 2i+1 (allreduce, reducescatter);
    keep='even': 2i+1 folds into 2i, so that rank 0 survives (reduce to root 0)."""
    pow2 = floor_pow2(ranks)
    extra = ranks - pow2
    survivors, folded = [], []
    for v in range(pow2):
        if v < extra:
            gone, kept = (2 * v, 2 * v + 1) if keep == "odd" else (2 * v + 1, 2 * v)
            survivors.append(kept)
            folded.append((gone, kept))
        else:
            survivors.append(v + extra)
    return Fold(ranks, pow2, extra, tuple(survivors), tuple(folded))


def halving_ranges(pow2: int) -> list[tuple[int, list[tuple[int, int]], list[tuple[int, int]]]]:
    """Recursive halving on virtual ranks 0..pow2-1: per step (mask, for each v the kept range
    [lo, hi) and the range sent to v ^ mask)."""
    steps = []
    ranges = [(0, pow2)] * pow2
    mask = pow2 >> 1
    while mask:
        kept, sent = [], []
        for v in range(pow2):
            lo, hi = ranges[v]
            mid = lo + (hi - lo) // 2
            low_half, high_half = (lo, mid), (mid, hi)
            kept.append(low_half if not v & mask else high_half)
            sent.append(high_half if not v & mask else low_half)
        steps.append((mask, kept, sent))
        ranges = kept
        mask >>= 1
    return steps


@lru_cache(maxsize=None)
def recursive_halving_chunk_steps(ranks: int) -> tuple[int, ...]:
    """For the recursive-halving reduce-scatter on p ranks with p chunks (one final block per real
    rank): the largest number of chunks any virtual rank sends, per halving step."""
    fold = fold_plan(ranks, "odd")
    # virtual rank v owns the final blocks of its real rank and, if it absorbed one, of the folded rank
    owned = np.array([2 if v < fold.extra else 1 for v in range(fold.pow2)])
    prefix = np.concatenate([[0], np.cumsum(owned)])
    result = []
    for _, _, sent in halving_ranges(fold.pow2):
        result.append(int(max(prefix[hi] - prefix[lo] for lo, hi in sent)))
    return tuple(result)


def bruck_alltoall_blocks(ranks: int) -> int:
    """Blocks sent over all steps of the Bruck all-to-all: at step k every rank sends the blocks
    whose (rotated) index has bit k set (Bruck et al. 1997)."""
    return sum(bin(i).count("1") for i in range(ranks))
