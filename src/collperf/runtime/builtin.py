"""The backend's own collectives, run as the algorithm named `builtin`, on the same buffers."""

from __future__ import annotations

import torch
import torch.distributed as dist

from collperf.errors import UsageError

_OPS = {"sum": dist.ReduceOp.SUM, "prod": dist.ReduceOp.PRODUCT, "min": dist.ReduceOp.MIN,
        "max": dist.ReduceOp.MAX, "avg": dist.ReduceOp.AVG}


def _all_gather(out, inp):
    fn = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
    fn(out, inp)


def _reduce_scatter(out, inp, op):
    fn = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor
    fn(out, inp, op=op)


def run_builtin(collective: str, inp: torch.Tensor, out: torch.Tensor, op: str = "sum", root: int = 0) -> None:
    """One call of the backend's collective with nccl-tests' buffers (out-of-place unless out is inp)."""
    rank, p = dist.get_rank(), dist.get_world_size()
    reduce_op = _OPS[op]
    if collective == "allreduce":
        if out.data_ptr() != inp.data_ptr():
            out.copy_(inp)
        dist.all_reduce(out, op=reduce_op)
    elif collective == "allgather":
        _all_gather(out, inp)
    elif collective == "reducescatter":
        _reduce_scatter(out, inp, reduce_op)
    elif collective == "broadcast":
        if rank == root and out.data_ptr() != inp.data_ptr():
            out.copy_(inp)
        dist.broadcast(out, src=root)
    elif collective == "reduce":
        if out.data_ptr() != inp.data_ptr():
            out.copy_(inp)
        dist.reduce(out, dst=root, op=reduce_op)
    elif collective == "alltoall":
        dist.all_to_all_single(out, inp)
    elif collective == "scatter":
        dist.scatter(out, scatter_list=list(torch.tensor_split(inp, p)) if rank == root else None, src=root)
    elif collective == "gather":
        dist.gather(inp, gather_list=list(torch.tensor_split(out, p)) if rank == root else None, dst=root)
    elif collective == "sendrecv":
        works = dist.batch_isend_irecv([dist.P2POp(dist.isend, inp, (rank + 1) % p),
                                        dist.P2POp(dist.irecv, out, (rank - 1) % p)]) if p > 1 else []
        for w in works:
            w.wait()
        if p == 1:
            out.copy_(inp)
    else:
        raise UsageError(f"no built-in for {collective!r}")
