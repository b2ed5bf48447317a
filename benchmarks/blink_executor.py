"""-A blink on local gloo ranks before and after the per-size segments and the coalesced messages, side by
side in one run (interleaved iterations on the same buffers).

Four variants of Blink's packed trees on dgx1v GPUs 0..p-1 (as `collperf bench --ranks p -A blink`):
  old        16 segments at every size (the former bench default), the executor as of commit bfa2fc3
             (git show; one message per transfer)
  coalesce   16 segments, the current executor (the transfers of a step between two ranks as one message)
  segments   the segments bench now picks per size (packed_runs.bench_schedules), the old executor
  new        both
and our ring (binomial for broadcast and reduce; current executor) for reference; --fixed K adds the
current executor on K segments at every size. Prints the p50 time of each (mean over ranks), old / new,
the messages each rank sends per call (old, coalesce, segments, new) and #wrong (must be 0).

    .venv/bin/python benchmarks/blink_executor.py [--ranks 4] [--collective allreduce] [--sizes 1K,32K,1M] [--iters 9]
                                                  [--fixed 1]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import types
from collperf.blink.runs import bench_schedules
from collperf.collectives import get_collective
from collperf.model.two_level.build import build
from collperf.runtime import data
from collperf.runtime.execute import coalesced_steps, run_schedule
from collperf.runtime.launch import Job, run_local
from collperf.spec import BenchSpec, SweepSpec
from collperf.units import format_size, parse_size

BEFORE = "bfa2fc3"  # runtime/execute.py before the coalesced messages
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VARIANTS = ("old", "coalesce", "segments", "new", "ring")


def _before_module():
    text = subprocess.check_output(["git", "-C", ROOT, "show", f"{BEFORE}:src/collperf/runtime/execute.py"], text=True)
    module = types.ModuleType("execute_before")
    exec(compile(text, "execute_before.py", "exec"), module.__dict__)
    return module


def job(collective: str, sizes: list, iters: int, schedules: list, variants_run: tuple = VARIANTS):
    """schedules[i]: {variant: schedule} for sizes[i]; runs every variant at every size, interleaved
    (broadcast and reduce from rank 0)."""
    import torch
    import torch.distributed as dist
    from _interleaved import time_interleaved

    before = _before_module()
    p, rank = dist.get_world_size(), dist.get_rank()
    coll = get_collective(collective)
    root = 0
    rows = []
    for size, variants in zip(sizes, schedules):
        _, size, in_elems, out_elems = coll.counts(size, p, 4)
        inp, out = torch.empty(in_elems), torch.empty(out_elems)
        data.fill_input(inp, coll, rank, "sum")
        calls = {}
        for v in variants_run:
            s = variants[v]
            runner = before.run_schedule if v in ("old", "segments") else run_schedule
            calls[v] = lambda s=s, runner=runner: runner(s, inp, out, "sum", in_elems, 1 << 20)
        timed = time_interleaved(
            calls, out, lambda o: data.check_output(o, coll, rank, p, in_elems, "sum", root), iters
        )
        row = {"size": size}
        for k, (t_s, wrong) in timed.items():
            row[k], row[k + "_wrong"] = t_s, wrong
        rows.append(row)
    return rows


def _messages(s, coalesced: bool) -> float:
    """Messages per rank per call (slices aside: these sizes are below 1 MiB slices)."""
    steps = coalesced_steps(s) if coalesced else s.steps
    return sum(len(st.transfers) for st in steps) / s.ranks


def main() -> None:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=4)
    parser.add_argument("--collective", default="allreduce")
    parser.add_argument("--sizes", default="1K,32K,1M")
    parser.add_argument("--iters", type=int, default=9)
    parser.add_argument("--fixed", type=int, default=0, help="also run the current executor on K segments")
    args = parser.parse_args()
    run = VARIANTS + ((f"k={args.fixed}",) if args.fixed else ())
    sizes = [parse_size(x) for x in args.sizes.split(",")]
    p = args.ranks

    def placed(n: int, segments: int | None):
        """bench's placement of -A blink at size n: segments fixed, or None (not given: bench picks)."""
        return bench_schedules(
            BenchSpec(
                sweep=SweepSpec(
                    collective=args.collective,
                    algorithms="blink",
                    min_bytes=n,
                    max_bytes=n,
                    factor=2,
                    segments=segments,
                ),
                ranks=p,
            )
        )

    reference = "ring" if args.collective not in ("broadcast", "reduce") else "binomial"
    ring = build(args.collective, reference, p)
    schedules, picked = [], []
    for n in sizes:
        old = placed(n, 16).schedules[("blink", n)]
        pl = placed(n, None)
        new = pl.schedules[("blink", n)]
        schedules.append({"old": old, "coalesce": old, "segments": new, "new": new, "ring": ring})
        if args.fixed:
            schedules[-1][run[-1]] = placed(n, args.fixed).schedules[("blink", n)]
        picked.append(pl.segments["blink"][n])
    print(
        f"{os.cpu_count()} cores shared with other jobs (load {os.getloadavg()[0]:.1f}); {args.collective} on {p} "
        f"local gloo ranks (dgx1v GPUs 0..{p - 1}); p50 of {args.iters} interleaved iterations (mean over ranks)"
    )
    names = [f"{v} (ms)" if v != "ring" else f"{reference} (ms)" for v in run]
    print(
        f"| size | segments old/new | messages per rank old/coalesce/segments/new | {' | '.join(names)} | old / new | #wrong |"
    )
    print("|---" * (len(run) + 5) + "|")
    rows = run_local(Job("blink_executor:job", (args.collective, sizes, args.iters, schedules, run)), p, timeout_s=900)
    for r, k, variants in zip(rows, picked, schedules):
        msgs = "/".join(
            f"{_messages(variants[v], v in ('coalesce', 'new')):.0f}" for v in ("old", "coalesce", "segments", "new")
        )
        times = " | ".join(f"{r[v] * 1e3:.2f}" for v in run)
        wrong = sum(r[v + "_wrong"] for v in run)
        print(
            f"| {format_size(r['size'])} | 16/{k} | {msgs} | {times} | {r['old'] / r['new']:.1f} | {wrong} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
