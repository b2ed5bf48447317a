"""Which transfers move in lockstep: the coarsest equitable partition of ranks, resources and
transfers, found by colour refinement (1-dimensional Weisfeiler-Leman) over the schedule's step
classes and the routes they take.

Colours start from what timing reads (a resource's capacity; a segment's latency) and are refined
until stable: a transfer's *type* is (step class, colour of its source and of its destination, chunk
count, reduce, the colours of its route segment by segment); a rank's colour adds how many transfers
of each type it sends and receives; a resource's colour adds how many transfers of each type cross
it in each segment position. At the fixed point every rank of a class sends and receives the same
transfers, and every resource of a class carries the same number of flows of each type, so progressive
filling gives every flow of a type the same rate and, by induction over events, the ranks of a class
start and finish every step together: the event simulation on classes is exact (grouped.py). On a
symmetric fabric (fat-tree, rail-optimized, two-level cluster) with a symmetric schedule, a handful
of classes stand for thousands of ranks; on an irregular one the partition stays fine and the caller
simulates transfer by transfer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from collperf.simulate.events import csr_rows
from collperf.simulate.network import RoutedPairs

# a padded row matrix bigger than this (cells) means an irregular case: refinement gives up
_MAX_CELLS = 20_000_000


@dataclass
class Partition:
    """The stable colouring. Transfers are those of every step class, end to end (`cls` tells
    which); `type_of` is each one's type, `rank_class` and `res_class` the colours."""

    cls: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    count: np.ndarray
    red: np.ndarray
    pair: np.ndarray
    type_of: np.ndarray
    rank_class: np.ndarray
    res_class: np.ndarray


class _Irregular(Exception):
    """Refinement is not worth finishing: the partition is too fine."""


def _row_ids(ptr: np.ndarray, values: np.ndarray, sort: bool, lead: np.ndarray | None = None) -> np.ndarray:
    """One id per CSR row, equal for equal rows (as multisets when `sort`), exactly: the rows padded
    to one width, after the `lead` columns (one row of them per CSR row), compressed column by column."""
    rows = len(ptr) - 1
    lengths = np.diff(ptr)
    owner = np.repeat(np.arange(rows), lengths)
    if sort and len(values):
        values = values[np.lexsort((values, owner))]
    width = int(lengths.max()) if rows and len(values) else 0
    front = 1 + (0 if lead is None else lead.shape[1])
    if rows * (front + width) > _MAX_CELLS:
        raise _Irregular
    mat = np.full((rows, front + width), -1, dtype=np.int64)
    mat[:, 0] = lengths
    if lead is not None:
        mat[:, 1:front] = lead
    mat[owner, front + np.arange(len(values)) - ptr[owner]] = values
    return _relabel(*mat.T)


def _relabel(*columns) -> np.ndarray:
    """Dense ids of the distinct rows of the given columns (in the rows' lexicographic order),
    folding the columns into one integer key (mixed radix) as long as it fits in 62 bits, then
    ranking it: 1-D sorts only, as few as the widths allow."""
    ids = np.zeros(len(columns[0]), dtype=np.int64)
    span_ids = 1
    for col in columns:
        col = np.asarray(col, dtype=np.int64)
        low = int(col.min(initial=0))
        span = int(col.max(initial=0)) - low + 1
        if span_ids * span >= 2**62:  # the key would overflow: rank what is folded so far
            ids = np.unique(ids, return_inverse=True)[1].ravel()
            span_ids = int(ids.max(initial=0)) + 1
            if span_ids * span >= 2**62:  # one wide column: rank its values first
                col = np.unique(col, return_inverse=True)[1].ravel()
                low, span = 0, int(col.max(initial=0)) + 1
        ids = ids * span + (col - low)
        span_ids *= span
    return np.unique(ids, return_inverse=True)[1].ravel()


def _signature(owner: np.ndarray, feature: np.ndarray, owners: int, old: np.ndarray) -> np.ndarray:
    """New colours: the old colour and the multiset of features (with their counts) of each owner."""
    keys, counts = np.unique(owner * (int(feature.max(initial=0)) + 1) + feature, return_counts=True)
    width = int(feature.max(initial=0)) + 1
    who, what = keys // width, keys % width
    ptr = np.searchsorted(who, np.arange(owners + 1))
    return _relabel(old, _row_ids(ptr, what * (int(counts.max(initial=0)) + 1) + counts, sort=False))


def refine(members, net: RoutedPairs, ranks: int, max_classes: int, max_rounds: int = 200) -> Partition | None:
    """The stable colouring of the step classes (rounds.step_classes' members) on `net`; None when
    it would have more than `max_classes` rank classes or take more than `max_rounds` rounds."""
    if not members:
        return None
    cls = np.concatenate([np.full(len(m[0]), k, dtype=np.int64) for k, m in enumerate(members)])
    src, dst, count = (np.concatenate([m[i] for m in members]).astype(np.int64) for i in range(3))
    red = np.concatenate([m[3] for m in members]).astype(np.int64)
    pair = np.concatenate([net.pair_index(m[0], m[1], m[4]) for m in members])
    # every transfer's resources, with the position of their segment in the route
    seg_pos = np.arange(len(net.seg_latency)) - np.repeat(net.seg_ptr[:-1], np.diff(net.seg_ptr))
    seg_of = np.repeat(np.arange(len(net.seg_latency)), np.diff(net.seg_res_ptr))
    inc_t, inc = csr_rows(net.seg_res_ptr[net.seg_ptr], None, pair)
    inc_res, inc_pos = net.seg_res[inc], seg_pos[seg_of[inc]]
    latency = _relabel(net.seg_latency.view(np.int64))[:, None]
    rank_class = np.zeros(ranks, dtype=np.int64)
    res_class = _relabel(net.capacity.view(np.int64))
    try:
        for _ in range(max_rounds):
            seg_tok = _row_ids(net.seg_res_ptr, res_class[net.seg_res], sort=True, lead=latency)
            route = _row_ids(net.seg_ptr, seg_tok, sort=False)
            type_of = _relabel(cls, rank_class[src], rank_class[dst], count, red, route[pair])
            new_rank = _signature(
                np.concatenate([src, dst]), np.concatenate([2 * type_of, 2 * type_of + 1]), ranks, rank_class
            )
            positions = int(inc_pos.max(initial=0)) + 1
            new_res = _signature(inc_res, type_of[inc_t] * positions + inc_pos, len(res_class), res_class)
            stable = new_rank.max() == rank_class.max() and new_res.max() == res_class.max()
            rank_class, res_class = new_rank, new_res
            if rank_class.max() + 1 > max_classes:
                return None
            if stable:
                return Partition(cls, src, dst, count, red.astype(bool), pair, type_of, rank_class, res_class)
    except _Irregular:
        return None
    return None
