"""The executor before and after issue 17's changes, side by side in one run (interleaved iterations).

"before" is runtime/execute.py as of commit 45bf380 (git show), loaded into each rank beside the current
one; both run the same schedule on the same buffers: before with its fixed 1 MiB slices, after with
slice_bytes=0 (slices per message size) and early receives. Prints p50 busbw of each and after/before.

    .venv/bin/python benchmarks/executor_before_after.py [--ranks 2,4] [--sizes 1M,4M,16M,64M] [--iters 7]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import types
from collperf.collectives import get_collective
from collperf.model.two_level.build import build
from collperf.runtime import data
from collperf.runtime.execute import run_schedule
from collperf.runtime.launch import Job, run_local
from collperf.units import parse_size

BEFORE = "45bf380"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _before_module():
    text = subprocess.check_output(["git", "-C", ROOT, "show", f"{BEFORE}:src/collperf/runtime/execute.py"], text=True)
    module = types.ModuleType("execute_before")
    exec(compile(text, "execute_before.py", "exec"), module.__dict__)
    return module


def job(collective: str, algorithm: str, sizes: list, iters: int):
    import torch
    import torch.distributed as dist
    from _interleaved import time_interleaved

    before = _before_module()
    p, rank = dist.get_world_size(), dist.get_rank()
    coll = get_collective(collective)
    s = build(collective, algorithm, p)
    rows = []
    for size in sizes:
        _, size, in_elems, out_elems = coll.counts(size, p, 4)
        inp, out = torch.empty(in_elems), torch.empty(out_elems)
        data.fill_input(inp, coll, rank, "sum")
        calls = {
            "before": lambda: before.run_schedule(s, inp, out, "sum", in_elems, 1 << 20),
            "after": lambda: run_schedule(s, inp, out, "sum", in_elems, 0),
        }
        timed = time_interleaved(calls, out, lambda o: data.check_output(o, coll, rank, p, in_elems, "sum"), iters)
        row = {"size": size}
        for k, (t_s, wrong) in timed.items():
            row[k], row[k + "_wrong"] = coll.bandwidths_GBps(size, p, t_s)[1], wrong
        rows.append(row)
    return rows


def main() -> None:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _interleaved import common_args

    parser = common_args(argparse.ArgumentParser(description=__doc__.splitlines()[0]), "1M,4M,16M,64M", 7)
    args = parser.parse_args()
    print(
        f"{os.cpu_count()} cores shared with other jobs (load {os.getloadavg()[0]:.1f}); {args.collective} "
        f"{args.algorithm}; p50 of {args.iters} interleaved iterations (mean over ranks)"
    )
    print("| ranks | size | before busbw (GB/s) | after busbw (GB/s) | after / before | #wrong before/after |")
    print("|---|---|---|---|---|---|")
    for p in (int(r) for r in args.ranks.split(",")):
        rows = run_local(
            Job(
                "executor_before_after:job",
                (args.collective, args.algorithm, [parse_size(x) for x in args.sizes.split(",")], args.iters),
            ),
            p,
            timeout_s=900,
        )
        for r in rows:
            print(
                f"| {p} | {r['size'] >> 20} MiB | {r['before']:.3f} | {r['after']:.3f} | "
                f"{r['after'] / r['before']:.2f} | {r['before_wrong']}/{r['after_wrong']} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
