"""Run a Schedule on a torch.distributed process group.

Each step's sends and receives are posted together (batch_isend_irecv), receives first: with gloo, two
ranks that exchange data and both post their send first take turns instead of overlapping (a pairwise
exchange ran at half the link rate on the testbed until this order was fixed). A transfer reads what its
source held when the step began (the schedule's semantics), so data is received into scratch and
applied after the step's sends have been posted; copies that cannot alias go straight to their
destination. Large messages are cut into slices of `slice_bytes`: all slices are posted at once and
each received slice is reduced as soon as it arrives, overlapping the reduction with the rest of
the transfer; with slice_bytes=0 the number of slices follows the message size (slices_for). On gloo,
a step whose receives are all reductions has them posted while the step before is still running.

Where chunks live on a rank (`BufferLayout`): the work buffer of the collective (allreduce, broadcast,
reduce: the output; allgather/gather: the output's blocks; reducescatter: a scratch copy of the
input), the input for data a rank only sends, the output for data it ends with, and scratch for
data it only forwards (Bruck, trees, alltoall).
"""

from __future__ import annotations

import math

import torch
import torch.distributed as dist

from collperf.collectives import get_collective
from collperf.schedule.ir import COPY, Schedule, coalesce

_REDUCE = {
    "sum": lambda acc, x: acc.add_(x),
    "avg": lambda acc, x: acc.add_(x),  # divided by p at the end
    "prod": lambda acc, x: acc.mul_(x),
    "min": lambda acc, x: torch.minimum(acc, x, out=acc),
    "max": lambda acc, x: torch.maximum(acc, x, out=acc),
}


def split_sizes(elements: int, pieces: int) -> list[int]:
    """tensor_split / array_split sizes: the first elements % pieces pieces get one more."""
    base, extra = divmod(elements, pieces)
    return [base + (1 if i < extra else 0) for i in range(pieces)]


class BufferLayout:
    """Chunk id -> tensor view on one rank, for a collective's input and output buffers."""

    def __init__(self, s: Schedule, rank: int, inp: torch.Tensor, out: torch.Tensor, in_elements: int):
        self.s, self.rank = s, rank
        self.views: dict[int, torch.Tensor] = {}
        self.scratch_like = inp if inp.numel() else out
        self.coll = get_collective(s.collective)
        p, name = s.ranks, self.coll.name
        n = self.coll.buffer_elements(in_elements, p)  # elements of the whole buffer
        if name in ("allreduce", "broadcast", "reduce"):
            if name != "broadcast" or rank == s.root:
                if out.data_ptr() != inp.data_ptr():
                    out.copy_(inp)
            self._split(out, s.chunks_per_buffer)
        elif name == "reducescatter":
            self.work = inp.clone()
            self.mine = self._split_blocks(self.work, p, s.chunks_per_buffer)[rank]
        elif name in ("allgather", "gather"):
            target = out if out.numel() == n else torch.empty(n, dtype=inp.dtype, device=inp.device)
            self._split_blocks(target, p, s.chunks_per_buffer)[rank].copy_(inp)
            self.target = target
        elif name == "scatter":
            if rank == s.root:
                self._split(inp, p)
                out.copy_(self.views[rank])
            self.views[rank] = out
        elif name == "alltoall":
            m = in_elements // p if p else 0
            for d in range(p):
                self.views[rank * p + d] = inp[d * m : (d + 1) * m]
                self.views[d * p + rank] = out[d * m : (d + 1) * m]
            self.views[rank * p + rank].copy_(inp[rank * m : (rank + 1) * m])
            self.block = m
        elif name == "sendrecv":
            self.views[rank] = inp
            if p == 1:
                out.copy_(inp)
            else:
                self.views[(rank - 1) % p] = out
        self.sizes = split_sizes(n, s.chunks_per_buffer)

    def _split(self, tensor: torch.Tensor, pieces: int) -> None:
        for i, view in enumerate(torch.tensor_split(tensor, pieces)):
            self.views[i] = view

    def _split_blocks(self, tensor: torch.Tensor, p: int, chunks: int) -> tuple:
        """Block r (rank r's data) is chunks r c .. r c + c - 1, c = chunks / p: one chunk per block for
        most algorithms, several for pipelined ones (Blink's packed trees, the fan-in pattern)."""
        per = max(1, chunks // p)
        blocks = torch.tensor_split(tensor, p)
        for b, block in enumerate(blocks):
            for i, view in enumerate(torch.tensor_split(block, per)):
                self.views[b * per + i] = view
        return blocks

    def chunk(self, c: int) -> torch.Tensor:
        """The chunk's storage, allocated as scratch the first time a forwarded chunk arrives."""
        if c not in self.views:
            size = self.sizes[c % self.s.chunks_per_buffer] if self.s.collective != "alltoall" else self.block
            self.views[c] = self.scratch_like.new_empty(size)
        return self.views[c]

    def finish(self, out: torch.Tensor, op: str) -> None:
        s, name = self.s, self.coll.name
        if op == "avg" and self.coll.reduces:
            if name == "allreduce" or (name == "reduce" and self.rank == s.root):
                out.div_(s.ranks)
        if name == "reducescatter":
            mine = self.mine
            out.copy_(mine / s.ranks if op == "avg" else mine)
        elif name == "gather" and self.rank == s.root and self.target.data_ptr() != out.data_ptr():
            out.copy_(self.target)


def _message(layout: BufferLayout, chunks) -> list[torch.Tensor]:
    return [layout.chunk(c) for c in chunks]


def _contiguous(views: list[torch.Tensor]) -> torch.Tensor | None:
    """One tensor over consecutive views of the same storage, else None."""
    if len(views) == 1:
        return views[0]
    first = views[0]
    total = sum(v.numel() for v in views)
    offset = first.storage_offset()
    for v in views:
        if v.untyped_storage().data_ptr() != first.untyped_storage().data_ptr() or v.storage_offset() != offset:
            return None
        offset += v.numel()
    return first.as_strided((total,), (1,), first.storage_offset())


# slice_bytes=0: the number of slices of a message from the pipelining trade-off. k slices of an n-byte
# message cost about k x (per-message cost) and leave n/k bytes to reduce after the last one arrives, so
# k* = sqrt(n gamma / per-message cost) (the optimum of k a + n g / k, as for a pipelined chain's
# segments: the cost-model chapter "The Collective Cost Model"). Measured on this 2-core box with gloo over loopback
# (benchmarks/executor_profile.py): about 100 us per extra message, about 5 GB/s of add_.
PER_MESSAGE_S = 100e-6
REDUCE_S_PER_BYTE = 1 / 5e9
MAX_SLICES = 16


def slices_for(message_bytes: int) -> int:
    """Slices of a message when the executor picks (slice_bytes=0): round(sqrt(n gamma / a)), 1..16."""
    k = round(math.sqrt(max(message_bytes, 0) * REDUCE_S_PER_BYTE / PER_MESSAGE_S))
    return max(1, min(MAX_SLICES, k))


def _slices(tensor: torch.Tensor, slice_elements: int) -> list[torch.Tensor]:
    """The pieces a message is sent as: of slice_elements each, or (slice_elements 0) slices_for its size.
    Sender and receiver cut the same message the same way (both know its size)."""
    if slice_elements == 0:
        k = slices_for(tensor.numel() * tensor.element_size())
        slice_elements = -(-tensor.numel() // k) if tensor.numel() else 1
    if slice_elements <= 0 or tensor.numel() <= slice_elements:
        return [tensor]
    return list(torch.split(tensor, slice_elements))


def run_schedule(
    s: Schedule,
    inp: torch.Tensor,
    out: torch.Tensor,
    op: str = "sum",
    in_elements: int | None = None,
    slice_bytes: int = 1 << 20,
    group=None,
) -> None:
    """Execute schedule `s` on this rank: `inp` and `out` as the nccl-tests buffers of the collective."""
    rank = dist.get_rank(group) if group is not None else dist.get_rank()
    layout = BufferLayout(s, rank, inp, out, inp.numel() if in_elements is None else in_elements)
    # slice_bytes 0: each message cut by slices_for (its size); else in pieces of slice_bytes
    slice_elements = 0 if not slice_bytes else max(1, slice_bytes // max(1, inp.element_size()))
    reduce_fn = _REDUCE[op]
    peer = (lambda r: dist.get_global_rank(group, r)) if group is not None else (lambda r: r)
    # gloo: each p2p op is its own request (batch_isend_irecv only loops over them), so requests are made
    # directly and the next step's receives can be posted early (below); NCCL needs them batched
    gloo = dist.get_backend(group) == "gloo"
    early = None
    steps = coalesced_steps(s)
    for index, step in enumerate(steps):
        sends = {c for t in step.transfers if t.src == rank for c in t.chunks}
        # receives are posted before sends: with gloo, a rank that first sends to a peer which is
        # sending to it too makes the two transfers take turns instead of overlapping
        if early is not None:
            ops, pending = early
        else:
            ops, pending = _receives(step, rank, layout, sends, inp, slice_elements, peer, group, index % 2)
        send_ops = []
        for t in step.transfers:
            if t.src == rank:
                views = _message(layout, t.chunks)
                payload = _contiguous(views)
                if payload is None:
                    payload = torch.cat(views)
                for piece in _slices(payload, slice_elements):
                    if piece.numel():
                        send_ops.append(len(ops))
                        ops.append(dist.P2POp(dist.isend, piece, peer(t.dst), group))
        # gloo counts completions: a work must be waited for exactly once
        works = _Once(_issue(ops, gloo))
        # a receiver that has posted its receive lets gloo's sender write at once instead of first asking
        # whether the receive is there (a round trip per message): post the next step's receives now when
        # they all go to scratch (reductions) and so cannot touch what this step still sends or reduces
        early = None
        if gloo and index + 1 < len(steps) and _all_reduce_receives(steps[index + 1], rank):
            next_ops, next_pending = _receives(
                steps[index + 1], rank, layout, set(), inp, slice_elements, peer, group, (index + 1) % 2
            )
            early = ([_Posted(w) for w in _issue(next_ops, gloo)], next_pending)
        sends_done = False
        for t, views, buffer, in_place, first, last in pending:
            if not sends_done and sends.intersection(t.chunks):
                # a chunk this rank is still sending must not change before its send is out
                for i in send_ops:
                    works.wait(i)
                sends_done = True
            if t.op == COPY:
                for i in range(first, last):
                    works.wait(i)
                if not in_place:
                    _scatter_back(buffer, views, lambda dst, src: dst.copy_(src))
            else:
                _reduce_as_slices_arrive(
                    buffer, views, [lambda i=i: works.wait(i) for i in range(first, last)], slice_elements, reduce_fn
                )
        works.wait_all()
    layout.finish(out, op)


_COALESCED: dict = {}


def coalesced_steps(s: Schedule) -> tuple:
    """coalesce() of every step of `s`, kept per schedule object (bench runs the same one many times)."""
    kept = _COALESCED.get(id(s))
    if kept is None or kept[0] is not s:
        if len(_COALESCED) > 64:
            _COALESCED.clear()
        kept = _COALESCED[id(s)] = (s, tuple(coalesce(step) for step in s.steps))
    return kept[1]


class _Posted:
    """A request already issued (an early receive): issuing it again returns it."""

    def __init__(self, work):
        self.work = work


def _issue(ops, gloo: bool):
    """The requests of `ops` (P2POps, or _Posted requests already issued), in order."""
    if not gloo:
        fresh = [o for o in ops if not isinstance(o, _Posted)]
        works = iter(dist.batch_isend_irecv(fresh) if fresh else [])
        return [o.work if isinstance(o, _Posted) else next(works) for o in ops]
    return [o.work if isinstance(o, _Posted) else o.op(o.tensor, o.peer, o.group) for o in ops]


def _all_reduce_receives(step, rank: int) -> bool:
    mine = [t for t in step.transfers if t.dst == rank]
    return bool(mine) and all(t.op != COPY for t in mine)


def _receives(step, rank, layout, sends, inp, slice_elements, peer, group, parity: int):
    """The receive ops of `step` on this rank and what each transfer needs once they are in. Scratch
    slots alternate between even and odd steps, so that early receives never share the current step's."""
    ops, pending = [], []
    for t in step.transfers:
        if t.dst == rank:
            views = _message(layout, t.chunks)
            direct = t.op == COPY and not sends.intersection(t.chunks)
            target = _contiguous(views) if direct else None
            buffer = (
                target if target is not None else _scratch((parity, len(pending)), sum(v.numel() for v in views), inp)
            )
            first = len(ops)
            for piece in _slices(buffer, slice_elements):
                if piece.numel():
                    ops.append(dist.P2POp(dist.irecv, piece, peer(t.src), group))
            pending.append((t, views, buffer, target is not None, first, len(ops)))
    return ops, pending


_POOL: dict = {}


def _scratch(slot: int, elements: int, like: torch.Tensor) -> torch.Tensor:
    """Receive buffer number `slot` of a step, kept between steps and calls: allocating (and page
    faulting) fresh megabytes at every step costs more than the reduction itself."""
    key = (slot, like.dtype, like.device)
    buffer = _POOL.get(key)
    if buffer is None or buffer.numel() < elements:
        buffer = _POOL[key] = torch.empty(max(elements, 1), dtype=like.dtype, device=like.device)
    return buffer[:elements]


class _Once:
    """Works of one step, each waited for at most once."""

    def __init__(self, works):
        self.works, self.done = works, [False] * len(works)

    def wait(self, i: int) -> None:
        if not self.done[i]:
            self.works[i].wait()
            self.done[i] = True

    def wait_all(self) -> None:
        for i in range(len(self.works)):
            self.wait(i)


def _scatter_back(buffer: torch.Tensor, views: list[torch.Tensor], apply) -> None:
    offset = 0
    for v in views:
        apply(v, buffer[offset : offset + v.numel()])
        offset += v.numel()


def _reduce_as_slices_arrive(buffer, views, works, slice_elements, reduce_fn) -> None:
    """Reduce each received slice into its destination as soon as it is in, while later slices
    are still on the wire."""
    targets = [(offset, v) for offset, v in _offsets(views)]
    position = 0
    for wait, piece in zip(works, [p for p in _slices(buffer, slice_elements) if p.numel()]):
        wait()
        start, end = position, position + piece.numel()
        for offset, v in targets:
            lo, hi = max(start, offset), min(end, offset + v.numel())
            if lo < hi:
                reduce_fn(v[lo - offset : hi - offset], buffer[lo:hi])
        position = end


def _offsets(views):
    offset = 0
    for v in views:
        yield offset, v
        offset += v.numel()
