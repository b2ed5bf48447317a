"""Test data whose result is exact whatever the order of reduction, and the expected outputs.

As nccl-tests' `verifiable/` does: small integers stored in floating point, so that every partial
sum is exactly representable and any summation order gives the same bits. Sum: values 0..4, so p
ranks sum to at most 4p (exact in bfloat16 up to p = 64). Product: values 1 or 2 (powers of two).
Min/max: 0..16. Non-reducing collectives: (rank, index) -> 1..251, exact in every dtype, distinct
enough that a block in the wrong place shows. Expected outputs are computed here in float64 from
the formulas (in closed form, chunk by chunk: see reduced_table), never by running a collective.
"""

from __future__ import annotations

import torch

from collperf.collectives import get_collective
from collperf.errors import UsageError

DTYPES = {
    "float32": torch.float32,
    "float": torch.float32,
    "float64": torch.float64,
    "double": torch.float64,
    "float16": torch.float16,
    "half": torch.float16,
    "bfloat16": torch.bfloat16,
    "int32": torch.int32,
    "int64": torch.int64,
}
OPS = ("sum", "prod", "min", "max", "avg")
NCCL_TESTS_TYPE = {
    torch.float32: "float",
    torch.float64: "double",
    torch.float16: "half",
    torch.bfloat16: "bfloat16",
    torch.int32: "int32",
    torch.int64: "int64",
}


def get_dtype(name: str) -> torch.dtype:
    if name not in DTYPES:
        raise UsageError(f"unknown dtype {name!r}: expected one of {', '.join(DTYPES)}")
    return DTYPES[name]


def values(rank, index: torch.Tensor, op: str) -> torch.Tensor:
    """The float64 value rank `rank` contributes at element `index` (rank may be a tensor)."""
    if op in ("sum", "avg"):
        return ((rank * 31 + index * 7) % 5).double()
    if op == "prod":
        return (1 + (rank + index) % 2).double()
    if op in ("min", "max"):
        return ((rank * 13 + index * 3) % 17).double()
    return ((rank * 67 + index * 13) % 251 + 1).double()  # no reduction: identify (rank, index)


# values(rank, index, op) repeats with this period both in rank and in index (31*5, 7*5 are 0 mod 5;
# (r + i) mod 2; 13*17, 3*17 are 0 mod 17), so the reduction over p ranks at index i depends only on
# i mod period, and is q full cycles over the ranks (q = p // period) plus the first p % period ranks
# of one more: a table of `period` entries computed in O(period^2), whatever p and the buffer size.
_PERIOD = {"sum": 5, "avg": 5, "prod": 2, "min": 17, "max": 17}


def reduced_table(p: int, op: str) -> torch.Tensor:
    """The float64 reduction over ranks 0..p-1 of values(rank, i, op), for i = 0..period-1."""
    period = _PERIOD[op]
    residues = torch.arange(period)
    cycle = torch.stack([values(r, residues, op) for r in range(period)])  # [rank mod period, i mod period]
    q, s = divmod(p, period)
    head = cycle[:s]
    if op in ("sum", "avg"):
        table = q * cycle.sum(0) + head.sum(0)  # integers < 2^53: exact in float64
        return table / p if op == "avg" else table
    if op == "prod":
        return cycle.prod(0) ** q * head.prod(0)  # powers of two: exact
    pick = (lambda t: t.min(0).values) if op == "min" else (lambda t: t.max(0).values)
    return pick(cycle) if q else pick(head)


def reduced(p: int, index: torch.Tensor, op: str) -> torch.Tensor:
    """The reduction over all p ranks of values(rank, index), in float64 (closed form, see reduced_table)."""
    if p < 1:
        return torch.zeros(len(index), dtype=torch.float64)
    return reduced_table(p, op)[index % _PERIOD[op]]


# Expected values and inputs are made this many elements at a time, so that a check costs O(chunk) extra
# memory per rank (a few MB), whatever the buffer size and the number of ranks.
CHUNK_ELEMENTS = 1 << 18


def fill_input(tensor: torch.Tensor, collective, rank: int, op: str) -> torch.Tensor:
    """Write rank `rank`'s input data into `tensor` (any device), chunk by chunk; returns it."""
    kind = op if get_collective(collective).reduces else "none"
    for start in range(0, tensor.numel(), CHUNK_ELEMENTS):
        stop = min(start + CHUNK_ELEMENTS, tensor.numel())
        tensor[start:stop].copy_(values(rank, torch.arange(start, stop), kind).to(tensor.dtype))
    return tensor


def expected_chunks(collective, rank: int, p: int, in_elements: int, dtype, op: str, root: int = 0):
    """What rank `rank`'s output must hold, as (offset in the output, expected values in `dtype`) pieces of at
    most CHUNK_ELEMENTS; nothing where nccl-tests does not check the output.

    Read from the collective's blocks (collectives.py): each block the output must hold is the block
    at the same place in its source rank's input, or the reduction of that block over all ranks."""
    coll = get_collective(collective)
    wanted = coll.output_blocks(rank, p, root)
    if not wanted:
        return
    sources = coll.sources(p, root)
    table = reduced_table(p, op).to(dtype) if coll.reduces and p >= 1 else None
    offset = 0
    for block in wanted:
        source = sources[block]
        held = coll.input_blocks(rank if source is None else source, p, root)
        m = in_elements // len(held)  # elements per block of an input
        first = held.index(block) * m
        for start in range(first, first + m, CHUNK_ELEMENTS):
            index = torch.arange(start, min(start + CHUNK_ELEMENTS, first + m))
            piece = table[index % len(table)] if source is None else values(source, index, "none").to(dtype)
            yield offset, piece
            offset += len(index)


def expected_output(collective, rank: int, p: int, in_elements: int, dtype, op: str, root: int = 0):
    """What rank `rank`'s output must hold, whole (for tests and small buffers), or None where not checked."""
    pieces = [piece for _, piece in expected_chunks(collective, rank, p, in_elements, dtype, op, root)]
    return (
        torch.cat(pieces)
        if pieces
        else (None if not get_collective(collective).output_blocks(rank, p, root) else torch.zeros(0, dtype=dtype))
    )


def check_output(out: torch.Tensor, collective, rank: int, p: int, in_elements: int, op: str, root: int = 0) -> int:
    """Mismatching elements of `out` (any device), compared chunk by chunk with the expected values."""
    wrong, covered = 0, 0
    for offset, want in expected_chunks(collective, rank, p, in_elements, out.dtype, op, root):
        wrong += count_wrong(out[offset : offset + len(want)], want, op)
        covered = offset + len(want)
    if get_collective(collective).output_blocks(rank, p, root) and covered != out.numel():
        wrong += abs(out.numel() - covered)  # a buffer of the wrong length: the missing or extra elements
    return wrong


def count_wrong(out: torch.Tensor, want: torch.Tensor | None, op: str = "sum") -> int:
    """Mismatching elements, compared bit for bit (avg on floats: within 2 ulps, as nccl-tests)."""
    if want is None:
        return 0
    got = out.detach().to("cpu")
    if got.shape != want.shape:
        return max(got.numel(), want.numel())
    if op == "avg" and got.dtype.is_floating_point:
        spacing = torch.abs(want.double()) * _eps(got.dtype) + torch.finfo(got.dtype).tiny
        return int((torch.abs(got.double() - want.double()) > 2 * spacing).sum())
    return int((got != want).sum())


def _eps(dtype) -> float:
    return torch.finfo(dtype).eps
