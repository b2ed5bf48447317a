"""gloo's calls: each `gloo:<op>` annotation (the work's run on gloo's thread, its duration) paired with the
`c10d::<op>` that enqueued it (its collective and shapes, torch 2.13 with record_shapes=True).

gloo runs some collectives as others (reduce_scatter_tensor as an all_reduce of the whole input), so
the collective is the c10d op's. The pairing is first-in first-out within compatible pairs (gloo works
off its queue in order): a work takes the earliest unpaired op enqueued before it whose input has the
work's element count.
"""

from __future__ import annotations

import math

from collperf.trace import kernels as K
from collperf.trace.events import Call, HostOp

US = 1e-6
# c10d op -> (collective, index of the input in 'Input Dims', index of the output), torch 2.13's schemas
# (torch/csrc/distributed/c10d/Ops.cpp); None: not recorded (a list of lists)
C10D_OPS = {
    "allreduce_": ("allreduce", 0, 0),
    "allreduce_coalesced_": ("allreduce", 0, 0),
    "allgather_": ("allgather", 1, None),
    "_allgather_base_": ("allgather", 1, 0),
    "allgather_into_tensor_coalesced_": ("allgather", 1, 0),
    "reduce_scatter_": ("reducescatter", None, 0),
    "_reduce_scatter_base_": ("reducescatter", 1, 0),
    "reduce_scatter_tensor_coalesced_": ("reducescatter", 1, 0),
    "broadcast_": ("broadcast", 0, 0),
    "reduce_": ("reduce", 0, 0),
    "alltoall_base_": ("alltoall", 1, 0),
    "alltoall_": ("alltoall", 1, 0),
    "gather_": ("gather", 1, None),
    "scatter_": ("scatter", None, 0),
    "send": ("sendrecv", 0, None),
    "recv_": ("sendrecv", None, 0),
    "recv_any_source_": ("sendrecv", None, 0),
}


def numel(dims) -> int:
    """Elements of a shape ([4, 8]) or of a tensor list's shapes ([[4], [8]])."""
    if not isinstance(dims, list) or not dims:
        return 0
    if all(isinstance(d, (int, float)) for d in dims):
        return int(math.prod(dims))
    return sum(numel(d) for d in dims)


def _arg(op: HostOp, index):
    return op.dims[index] if index is not None and index < len(op.dims) else []


def _first_type(types) -> str:
    return next((t for t in types if t and t not in ("TensorList", "Scalar", "ScalarList")), "")


def pair_gloo(works: list[HostOp], ops: list[HostOp], rank: int, group: str, ranks: tuple, notes: list):
    """gloo works and the c10d ops of one file -> Calls (a barrier is not a collective of ours: dropped)."""
    pending = sorted(
        (op for op in ops if op.name[len("c10d::") :] in C10D_OPS or op.name.endswith("barrier")), key=lambda op: op.ts
    )
    used = [False] * len(pending)
    calls, unpaired = [], 0
    p = len(ranks) or 1
    for work in sorted(works, key=lambda w: w.ts):
        n = numel(work.dims)
        match = None
        for i, op in enumerate(pending):
            if used[i] or op.ts > work.ts:
                continue
            spec = C10D_OPS.get(op.name[len("c10d::") :])
            if (spec is None and work.name.endswith("barrier")) or (
                spec and numel(_arg(op, spec[1])) == n and not work.name.endswith("barrier")
            ):
                match = i
                break
        if match is not None:
            used[match] = True
        op = pending[match] if match is not None else None
        spec = C10D_OPS.get(op.name[len("c10d::") :]) if op else None
        if work.name.endswith("barrier") or (op and spec is None):
            continue
        if spec is None:
            unpaired += 1
            collective = K.collective_of(work.name)
            if collective is None:
                continue
            in_n, out_n = n, 0
        else:
            collective = spec[0]
            in_n, out_n = numel(_arg(op, spec[1])), numel(_arg(op, spec[2]))
        dtype = _first_type(work.types) or (_first_type(op.types) if op else "")
        elt = K.element_bytes(dtype)
        size = K.whole_elements(collective, in_n, out_n, p) * elt if elt else None
        calls.append(
            Call(
                rank,
                group,
                tuple(ranks),
                collective,
                size,
                K.dtype_name(dtype),
                p,
                "-",
                "-",
                work.ts * US,
                work.dur * US,
                (op.ts if op else work.ts) * US,
            )
        )
    if unpaired:
        notes.append(
            f"{unpaired} gloo works without their c10d op (outside the profiled window?): sized from the "
            "work's own shape"
        )
    return calls
