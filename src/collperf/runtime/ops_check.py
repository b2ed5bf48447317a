"""A self-test of the user collectives (runtime/ops.py) on real ranks, against values computed in closed form
(tests/test_user_api.py, tests/test_auto_confirm.py): run as the job collperf.runtime.ops_check:selftest."""

from __future__ import annotations

import torch
import torch.distributed as dist

from collperf.errors import UsageError
from collperf.runtime import data
from collperf.runtime.ops import (
    _size,
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    all_to_all,
    all_to_all_single,
    broadcast,
    decisions,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    set_network,
)


def selftest_decisions(plan) -> dict:
    """selftest(plan), then what auto decided on the world group: {"wrong": ..., "decisions": ...}."""
    return {"wrong": selftest(plan), "decisions": decisions()}


def selftest(plan) -> list:
    """`plan`: [(members, cases[, network])], members a list of world ranks in group-rank order (None: the
    world), network one for set_network on the group (what auto and "hierarchical" go by). Each case
    (function, elements, dtype, op, algorithm, root as a group rank) runs on every member with integer data
    in floating point (any summation order gives the same bits) and is compared with values computed here
    in closed form; rank 0 returns [(members, case, mismatching elements over all ranks)]."""
    groups = [(None if entry[0] is None else dist.new_group(entry[0]), *entry) for entry in plan]
    out = []
    for group, members, cases, *network in groups:  # every rank creates every group, in the same order
        if network and (members is None or dist.get_rank() in members):
            set_network(network[0], group)
        for case in cases:
            wrong = torch.zeros(1, dtype=torch.int64)
            if members is None or dist.get_rank() in members:
                wrong[0] = _one_case(case, group, data)
            dist.all_reduce(wrong)
            out.append((members, case, int(wrong.item())))
    return out


def _one_case(case, group, data) -> int:
    fn, n, dtype_name, op, algorithm, root = case
    dtype = data.get_dtype(dtype_name)
    p, me = _size(group), dist.get_rank(group)
    gl = (lambda r: dist.get_global_rank(group, r)) if group is not None else (lambda r: r)
    idx = torch.arange(n)

    def mine(r, kind="none", offset=0):  # group rank r's input block: values of (r, offset + i)
        return data.values(r, idx + offset, kind).to(dtype)

    def reduced(offset=0):
        return data.reduced(p, idx + offset, op).to(dtype)

    if fn == "all_reduce":
        base = mine(me, op)
        # an even count also goes through a non-contiguous view (a transposed 2 x n/2)
        t = base.reshape(2, n // 2).t() if n and n % 2 == 0 else base
        all_reduce(t, op=op, group=group, algorithm=algorithm)
        return data.count_wrong(base, reduced(), op)
    if fn == "broadcast":
        t = mine(me) if me == root else torch.zeros(n, dtype=dtype)
        broadcast(t, src=gl(root), group=group, algorithm=algorithm)
        return data.count_wrong(t, mine(root))
    if fn == "reduce":
        t = mine(me, op)
        reduce(t, dst=gl(root), op=op, group=group, algorithm=algorithm)
        return data.count_wrong(t, reduced(), op) if me == root else 0
    if fn == "all_gather":
        outs = [torch.full((n,), -1, dtype=dtype) for _ in range(p)]
        all_gather(outs, mine(me), group=group, algorithm=algorithm)
        return sum(data.count_wrong(o, mine(r)) for r, o in enumerate(outs))
    if fn == "all_gather_into_tensor":
        o = torch.full((p * n,), -1, dtype=dtype)
        all_gather_into_tensor(o, mine(me), group=group, algorithm=algorithm)
        return sum(data.count_wrong(o[r * n : (r + 1) * n], mine(r)) for r in range(p))
    if fn in ("reduce_scatter", "reduce_scatter_tensor"):
        # rank r's whole input is values(r, 0 .. p n): block b of it is values(r, b n + i)
        whole = data.values(me, torch.arange(p * n), op).to(dtype)
        o = torch.full((n,), -1, dtype=dtype)
        if fn == "reduce_scatter":
            reduce_scatter(o, [whole[b * n : (b + 1) * n] for b in range(p)], op=op, group=group, algorithm=algorithm)
        else:
            reduce_scatter_tensor(o, whole, op=op, group=group, algorithm=algorithm)
        return data.count_wrong(o, reduced(me * n), op)
    if fn in ("all_to_all", "all_to_all_single"):
        # block j of rank r's input: values(r, j n + i); rank j's output block r must hold it
        whole = data.values(me, torch.arange(p * n), "none").to(dtype)
        if fn == "all_to_all":
            outs = [torch.full((n,), -1, dtype=dtype) for _ in range(p)]
            all_to_all(outs, [whole[b * n : (b + 1) * n] for b in range(p)], group=group, algorithm=algorithm)
            got = torch.cat(outs) if outs else torch.zeros(0, dtype=dtype)
        else:
            got = torch.full((p * n,), -1, dtype=dtype)
            all_to_all_single(got, whole, group=group, algorithm=algorithm)
        return sum(data.count_wrong(got[r * n : (r + 1) * n], mine(r, offset=me * n)) for r in range(p))
    raise UsageError(f"unknown function {fn!r}")
