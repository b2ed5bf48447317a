"""Events mode on classes of like transfers: one flow per transfer type per step, weighted by how
many transfers of the type cross each resource of a class (symmetry.py proves they move in lockstep).

A type T of mult(T) transfers from rank class a to rank class b stands for all of them: it starts
when the ranks of a and b have started its step, its segments cross resource classes R with weight
mult(T) x (crossings of R per transfer) / |R| (the flows of T that each resource of R carries), each
rank of b receives mult(T) / |b| of them (what it reduces). The event loop (events.run) is the one
that moves single transfers; only the sizes change: a hierarchical allreduce on 16,384 ranks is one
flow per step instead of 16,384.
"""

from __future__ import annotations

import numpy as np

from collperf.schedule.arrays import ArraySchedule
from collperf.simulate.events import Flows, csr_rows
from collperf.simulate.network import RoutedPairs
from collperf.simulate.symmetry import Partition


def type_count(part: Partition) -> np.ndarray:
    """Types per step class."""
    first = np.unique(part.type_of, return_index=True)[1]
    return np.bincount(part.cls[first], minlength=int(part.cls.max(initial=-1)) + 1)


def grouped_flows(s: ArraySchedule, of_step, part: Partition, net: RoutedPairs, chunk_bytes: float) -> Flows | None:
    """The schedule's flows, one per (type, step); None where the classes are not whole (a type whose
    transfers do not spread evenly over a class: never at a stable colouring, kept as a guard)."""
    types, rep, mult = np.unique(part.type_of, return_index=True, return_counts=True)
    rank_size = np.bincount(part.rank_class)
    res_size = np.bincount(part.res_class)
    # every segment of each type's representative transfer, and the resource classes it crosses
    pair = part.pair[rep]
    seg_count = net.seg_ptr[pair + 1] - net.seg_ptr[pair]
    seg_owner, seg = csr_rows(net.seg_ptr, None, pair)
    q_seg, res = csr_rows(net.seg_res_ptr, net.seg_res, seg)
    classes = int(res_size.size)
    keys, crossings = np.unique(q_seg * classes + part.res_class[res], return_counts=True)
    q_seg_of, q_res = keys // classes, keys % classes
    weight = mult[seg_owner[q_seg_of]] * crossings / res_size[q_res]
    in_weight = mult / rank_size[part.rank_class[part.dst[rep]]]
    if not (np.allclose(weight, np.round(weight)) and np.allclose(in_weight, np.round(in_weight))):
        return None
    capacity = np.zeros(classes)
    capacity[part.res_class] = net.capacity
    seg_ptr = np.concatenate([[0], np.cumsum(seg_count)])
    # the types of each step class, in order, then one flow per type per step of every run
    by_class = [types[part.cls[rep] == k] for k in range(int(part.cls.max(initial=-1)) + 1)]
    steps, flow_type, k0 = [], [], 0
    for st, k in zip(s.steps, of_step):
        steps.append(np.repeat(np.arange(k0, k0 + st.repeat), len(by_class[k])))
        flow_type.append(np.tile(by_class[k], st.repeat))
        k0 += st.repeat
    t = np.concatenate(flow_type) if flow_type else np.zeros(0, dtype=np.int64)
    return Flows(
        s.step_count,
        np.concatenate(steps) if steps else t,
        part.rank_class[part.src[rep]][t],
        part.rank_class[part.dst[rep]][t],
        (part.count[rep] * chunk_bytes)[t],
        part.red[rep][t],
        in_weight[t],
        seg_ptr[:-1][t],
        seg_ptr[1:][t],
        np.searchsorted(q_seg_of, np.arange(len(seg) + 1)),
        q_res,
        weight,
        net.seg_latency[seg],
        capacity,
    )
