"""The backend's own collectives, run as the algorithm named `builtin`, on the same buffers."""

from __future__ import annotations

import torch
import torch.distributed as dist

from collperf.collectives import COLLECTIVES, get_collective
from collperf.errors import UsageError

_OPS = {
    "sum": dist.ReduceOp.SUM,
    "prod": dist.ReduceOp.PRODUCT,
    "min": dist.ReduceOp.MIN,
    "max": dist.ReduceOp.MAX,
    "avg": dist.ReduceOp.AVG,
}


def _all_gather(inp, out, op, root, group):
    fn = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor  # the newer name first
    fn(out, inp, group=group)


def _reduce_scatter(inp, out, op, root, group):
    fn = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor
    fn(out, inp, op=op, group=group)


def _allreduce(inp, out, op, root, group):
    if out.data_ptr() != inp.data_ptr():
        out.copy_(inp)
    dist.all_reduce(out, op=op, group=group)


def _broadcast(inp, out, op, root, group):
    if _rank(group) == root and out.data_ptr() != inp.data_ptr():
        out.copy_(inp)
    dist.broadcast(out, src=_global(group, root), group=group)


def _reduce(inp, out, op, root, group):
    if out.data_ptr() != inp.data_ptr():
        out.copy_(inp)
    dist.reduce(out, dst=_global(group, root), op=op, group=group)


def _scatter(inp, out, op, root, group):
    p = dist.get_world_size(group)
    mine = list(torch.tensor_split(inp, p)) if _rank(group) == root else None
    dist.scatter(out, scatter_list=mine, src=_global(group, root), group=group)


def _gather(inp, out, op, root, group):
    p = dist.get_world_size(group)
    mine = list(torch.tensor_split(out, p)) if _rank(group) == root else None
    dist.gather(inp, gather_list=mine, dst=_global(group, root), group=group)


def _alltoall(inp, out, op, root, group):
    dist.all_to_all_single(out, inp, group=group)


def _sendrecv(inp, out, op, root, group):
    p, rank = dist.get_world_size(group), _rank(group)
    if p == 1:
        out.copy_(inp)
        return
    works = dist.batch_isend_irecv(
        [
            dist.P2POp(dist.isend, inp, _global(group, (rank + 1) % p), group),
            dist.P2POp(dist.irecv, out, _global(group, (rank - 1) % p), group),
        ]
    )
    for w in works:
        w.wait()


def _rank(group) -> int:
    return dist.get_rank(group) if group is not None else dist.get_rank()


def _global(group, group_rank: int) -> int:
    """torch.distributed names src/dst by global rank; ours are ranks of the group."""
    return dist.get_global_rank(group, group_rank) if group is not None else group_rank


# (inp, out, reduce op, root as a group rank, group) -> None, on nccl-tests' buffers (collectives.py)
_BUILTIN = {
    COLLECTIVES["allreduce"]: _allreduce,
    COLLECTIVES["allgather"]: _all_gather,
    COLLECTIVES["reducescatter"]: _reduce_scatter,
    COLLECTIVES["broadcast"]: _broadcast,
    COLLECTIVES["reduce"]: _reduce,
    COLLECTIVES["alltoall"]: _alltoall,
    COLLECTIVES["scatter"]: _scatter,
    COLLECTIVES["gather"]: _gather,
    COLLECTIVES["sendrecv"]: _sendrecv,
}


def run_builtin(collective, inp: torch.Tensor, out: torch.Tensor, op: str = "sum", root: int = 0, group=None) -> None:
    """One call of the backend's collective with nccl-tests' buffers (out-of-place unless out is inp), on
    `group` (None: the default group; root is a rank of the group)."""
    coll = get_collective(collective)
    if coll not in _BUILTIN:
        raise UsageError(f"no built-in for {coll.name!r}")
    _BUILTIN[coll](inp, out, _OPS[op], root, group)
