"""Test data whose result is exact whatever the order of reduction, and the expected outputs.

As nccl-tests' `verifiable/` does: small integers stored in floating point, so that every partial
sum is exactly representable and any summation order gives the same bits. Sum: values 0..4, so p
ranks sum to at most 4p (exact in bfloat16 up to p = 64). Product: values 1 or 2 (powers of two).
Min/max: 0..16. Non-reducing collectives: (rank, index) -> 1..251, exact in every dtype, distinct
enough that a block in the wrong place shows. Expected outputs are computed here in float64 from
the formulas, never by running a collective.
"""

from __future__ import annotations

import torch

from collperf.collectives import get_collective
from collperf.errors import UsageError

DTYPES = {"float32": torch.float32, "float": torch.float32, "float64": torch.float64, "double": torch.float64,
          "float16": torch.float16, "half": torch.float16, "bfloat16": torch.bfloat16,
          "int32": torch.int32, "int64": torch.int64}
OPS = ("sum", "prod", "min", "max", "avg")
NCCL_TESTS_TYPE = {torch.float32: "float", torch.float64: "double", torch.float16: "half",
                   torch.bfloat16: "bfloat16", torch.int32: "int32", torch.int64: "int64"}


def get_dtype(name: str) -> torch.dtype:
    if name not in DTYPES:
        raise UsageError(f"unknown dtype {name!r}: expected one of {', '.join(DTYPES)}")
    return DTYPES[name]


def check_op(op: str, dtype: torch.dtype) -> None:
    if op not in OPS:
        raise UsageError(f"unknown reduction op {op!r}: expected one of {', '.join(OPS)}")
    if op == "avg" and not dtype.is_floating_point:
        raise UsageError(f"op avg needs a floating-point dtype (got {NCCL_TESTS_TYPE[dtype]}): use --dtype float32")


def values(rank, index: torch.Tensor, op: str) -> torch.Tensor:
    """The float64 value rank `rank` contributes at element `index` (rank may be a tensor)."""
    if op in ("sum", "avg"):
        return ((rank * 31 + index * 7) % 5).double()
    if op == "prod":
        return (1 + (rank + index) % 2).double()
    if op in ("min", "max"):
        return ((rank * 13 + index * 3) % 17).double()
    return ((rank * 67 + index * 13) % 251 + 1).double()   # no reduction: identify (rank, index)


def reduced(p: int, index: torch.Tensor, op: str) -> torch.Tensor:
    """The reduction over all p ranks of values(rank, index), in float64."""
    stack = torch.stack([values(r, index, op) for r in range(p)]) if p else torch.zeros(0, len(index))
    if op == "sum":
        return stack.sum(0)
    if op == "avg":
        return stack.sum(0) / p
    if op == "prod":
        return stack.prod(0)
    if op == "min":
        return stack.min(0).values
    return stack.max(0).values


def make_input(collective, rank: int, p: int, elements: int, dtype, op: str, root: int = 0) -> torch.Tensor:
    """Rank `rank`'s input tensor of `elements` (the collective's input size on that rank)."""
    index = torch.arange(elements, dtype=torch.int64)
    return values(rank, index, op if get_collective(collective).reduces else "none").to(dtype)


def expected_output(collective, rank: int, p: int, in_elements: int, dtype, op: str, root: int = 0):
    """What rank `rank`'s output must hold, or None where nccl-tests does not check it.

    Read from the collective's blocks (collectives.py): each block the output must hold is the block
    at the same place in its source rank's input, or the reduction of that block over all ranks."""
    coll = get_collective(collective)
    wanted = coll.output_blocks(rank, p, root)
    if not wanted:
        return None
    sources = coll.sources(p, root)
    pieces = []
    for block in wanted:
        source = sources[block]
        held = coll.input_blocks(rank if source is None else source, p, root)
        m = in_elements // len(held)           # elements per block of an input
        index = torch.arange(held.index(block) * m, (held.index(block) + 1) * m)
        pieces.append(reduced(p, index, op) if source is None else values(source, index, "none"))
    return torch.cat(pieces).to(dtype)


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
