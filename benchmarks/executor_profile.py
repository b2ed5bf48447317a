"""Where the executor's time goes: one schedule run repeatedly on local ranks, rank 0 under cProfile.

Prints, per (ranks, collective, algorithm, size), the p50 time of our executor and of gloo's built-in
in the same run, then the top functions of rank 0's profile (cumulative and own time).

    .venv/bin/python benchmarks/executor_profile.py [--ranks 2,4] [--sizes 1M,16M] [--iters 10]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import statistics
import sys
import time
from collperf.collectives import get_collective
from collperf.model.two_level.build import build
from collperf.runtime.builtin import run_builtin
from collperf.runtime.execute import run_schedule
from collperf.runtime.launch import Job, run_local
from collperf.units import parse_size


EXTRA_SLICES: list[int] = []


def job(collective: str, algorithm: str, size_bytes: int, iters: int, slice_bytes: int, top: int, extra=()):
    EXTRA_SLICES[:] = list(extra)
    import torch
    import torch.distributed as dist

    p = dist.get_world_size()
    coll = get_collective(collective)
    _, _, in_elems, out_elems = coll.counts(size_bytes, p, 4)
    inp, out = torch.ones(in_elems), torch.zeros(out_elems)
    s = build(collective, algorithm, p)
    calls = {
        "ours": lambda: run_schedule(s, inp, out, "sum", in_elems, slice_bytes),
        "builtin": lambda: run_builtin(collective, inp, out, "sum"),
    }
    for extra in EXTRA_SLICES:  # the same schedule with other slice sizes, for comparison
        calls[f"slice {extra}"] = lambda extra=extra: run_schedule(s, inp, out, "sum", in_elems, extra)
    samples = {name: [] for name in calls}
    for call in calls.values():
        call()
    for _ in range(iters):  # interleaved, so that the machine's load changes hit every variant alike
        for name, call in calls.items():
            dist.barrier()
            t0 = time.perf_counter()
            call()
            samples[name].append(time.perf_counter() - t0)
    times = {name: statistics.median(v) for name, v in samples.items()}
    profile = cProfile.Profile()
    dist.barrier()
    if dist.get_rank() == 0:
        profile.enable()
    for _ in range(iters):
        calls["ours"]()
    profile.disable()
    text = io.StringIO()
    if dist.get_rank() == 0:
        stats = pstats.Stats(profile, stream=text)
        stats.sort_stats("tottime").print_stats(top)
    return times, text.getvalue()


def main() -> None:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _interleaved import common_args

    parser = common_args(argparse.ArgumentParser(description=__doc__.splitlines()[0]), "1M,16M", 10)
    parser.add_argument("--slice", default="1M")
    parser.add_argument("--top", type=int, default=14)
    parser.add_argument("--compare-slices", default="", help="Also time these slice sizes, interleaved.")
    args = parser.parse_args()
    for p in (int(r) for r in args.ranks.split(",")):
        for size in args.sizes.split(","):
            times, text = run_local(
                Job(
                    "executor_profile:job",
                    (
                        args.collective,
                        args.algorithm,
                        parse_size(size),
                        args.iters,
                        parse_size(args.slice),
                        args.top,
                        [parse_size(x) for x in args.compare_slices.split(",") if x],
                    ),
                ),
                p,
                timeout_s=600,
            )
            print(
                f"== {p} ranks {args.collective} {args.algorithm} {size}, p50 ms: "
                + ", ".join(f"{k} {v * 1e3:.2f}" for k, v in times.items())
                + f"; builtin/ours {times['builtin'] / times['ours']:.2f}"
            )
            print("\n".join(line for line in text.splitlines() if line.strip())[:4000])


if __name__ == "__main__":
    main()
