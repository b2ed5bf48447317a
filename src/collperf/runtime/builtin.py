"""The backend's own collectives, run as the algorithm named `builtin`, on the same buffers."""

from __future__ import annotations

import torch
import torch.distributed as dist

from collperf.collectives import COLLECTIVES, get_collective
from collperf.errors import UsageError

_OPS = {"sum": dist.ReduceOp.SUM, "prod": dist.ReduceOp.PRODUCT, "min": dist.ReduceOp.MIN,
        "max": dist.ReduceOp.MAX, "avg": dist.ReduceOp.AVG}


def _all_gather(out, inp):
    fn = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
    fn(out, inp)


def _reduce_scatter(out, inp, op):
    fn = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor
    fn(out, inp, op=op)


def _allreduce(inp, out, op, root, rank, p):
    if out.data_ptr() != inp.data_ptr():
        out.copy_(inp)
    dist.all_reduce(out, op=op)


def _broadcast(inp, out, op, root, rank, p):
    if rank == root and out.data_ptr() != inp.data_ptr():
        out.copy_(inp)
    dist.broadcast(out, src=root)


def _reduce(inp, out, op, root, rank, p):
    if out.data_ptr() != inp.data_ptr():
        out.copy_(inp)
    dist.reduce(out, dst=root, op=op)


def _scatter(inp, out, op, root, rank, p):
    dist.scatter(out, scatter_list=list(torch.tensor_split(inp, p)) if rank == root else None, src=root)


def _gather(inp, out, op, root, rank, p):
    dist.gather(inp, gather_list=list(torch.tensor_split(out, p)) if rank == root else None, dst=root)


def _sendrecv(inp, out, op, root, rank, p):
    works = dist.batch_isend_irecv([dist.P2POp(dist.isend, inp, (rank + 1) % p),
                                    dist.P2POp(dist.irecv, out, (rank - 1) % p)]) if p > 1 else []
    for w in works:
        w.wait()
    if p == 1:
        out.copy_(inp)


# (inp, out, reduce op, root, rank, p) -> None, on nccl-tests' buffers (collectives.py)
_BUILTIN = {
    COLLECTIVES["allreduce"]: _allreduce,
    COLLECTIVES["allgather"]: lambda inp, out, op, root, rank, p: _all_gather(out, inp),
    COLLECTIVES["reducescatter"]: lambda inp, out, op, root, rank, p: _reduce_scatter(out, inp, op),
    COLLECTIVES["broadcast"]: _broadcast,
    COLLECTIVES["reduce"]: _reduce,
    COLLECTIVES["alltoall"]: lambda inp, out, op, root, rank, p: dist.all_to_all_single(out, inp),
    COLLECTIVES["scatter"]: _scatter,
    COLLECTIVES["gather"]: _gather,
    COLLECTIVES["sendrecv"]: _sendrecv,
}


def run_builtin(collective, inp: torch.Tensor, out: torch.Tensor, op: str = "sum", root: int = 0) -> None:
    """One call of the backend's collective with nccl-tests' buffers (out-of-place unless out is inp)."""
    coll = get_collective(collective)
    if coll not in _BUILTIN:
        raise UsageError(f"no built-in for {coll.name!r}")
    _BUILTIN[coll](inp, out, _OPS[op], root, dist.get_rank(), dist.get_world_size())
