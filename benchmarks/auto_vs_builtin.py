"""-A auto against the backend's built-in, side by side in one run: p50 busbw per size and their ratio.

For allreduce, allgather, reducescatter, broadcast and alltoall on 2 and 4 local gloo ranks from 64 KiB
to 64 MiB (or on a testbed with --testbed hosts=4,rate=200mbit: needs root, see README "A cluster on one
box"). auto chooses per size from a quick calibration of the run's own network and confirms a close call
between ours and the built-in by timing both (runtime/auto.py); auto and builtin are then timed interleaved
(runtime/measure.py head_to_head: every iteration runs both, each after a barrier, the order alternating),
out-of-place, float32 sum, and each is checked bit-exactly (#wrong). "decided by" says what made auto's pick.

    .venv/bin/python benchmarks/auto_vs_builtin.py [--ranks 2,4] [-b 64K] [-e 64M] [--iters 5]
    .venv/bin/python benchmarks/auto_vs_builtin.py --testbed hosts=4,rate=200mbit -b 1M -e 16M -f 4 --iters 3
"""

from __future__ import annotations

import argparse
import os
import time

from collperf.lab.bench import auto_plan
from collperf.runtime.launch import Job, run_local, run_testbed
from collperf.api import testbed as parse_testbed, testbed_up
from collperf.spec import SweepSpec

COLLECTIVES = ("allreduce", "allgather", "reducescatter", "broadcast", "alltoall")


def one(collective: str, ranks: int, args, bed=None) -> dict:
    config = SweepSpec(collective=collective, algorithms="auto,builtin", min_bytes=args.minbytes, max_bytes=args.maxbytes, factor=args.factor, iters=args.iters,
                       warmup=args.warmup, slice_bytes=args.slice_bytes, in_place=False, progress=False).to_job()
    auto_plan(config, ranks, None, bed.ranks_per_host if bed is not None else ranks)
    job = Job("collperf.runtime.measure:head_to_head", (config,))
    return run_testbed(job, bed, 1800) if bed is not None else run_local(job, ranks, 900)


def table(collective: str, ranks: int, result: dict, where: str) -> None:
    print(f"\n{collective}, {ranks} ranks ({where}); auto chose on {result['auto_network']}")
    print("| size | auto ran | decided by | auto busbw (GB/s) | builtin busbw (GB/s) | auto / builtin | "
          "#wrong auto/builtin |")
    print("|---|---|---|---|---|---|---|")
    for mine, theirs in zip(result["table"]["auto"], result["table"]["builtin"]):
        size = mine["size"]
        label = f"{size >> 20} MiB" if size >= 1 << 20 else f"{size >> 10} KiB"
        ratio = mine["busbw"] / theirs["busbw"] if theirs["busbw"] else float("nan")
        name = mine["auto"]["algorithm"] + (f" k={mine['auto']['segments']}" if mine["auto"].get("segments") else "")
        print(f"| {label} | {name} | {decided(mine['auto'])} | {mine['busbw']:.4f} | {theirs['busbw']:.4f} | {ratio:.2f} | "
              f"{mine['wrong']}/{theirs['wrong']} |", flush=True)


def decided(choice: dict) -> str:
    """'model', or 'measured ring 1.2 ms vs builtin 1.5 ms' (the confirmation's medians, at the size it timed)."""
    m = choice.get("measured")
    if choice.get("decided_by") != "measured" or not m:
        return choice.get("decided_by", "model")
    return f"measured {m['algorithm']} {m['ours_us'] / 1e3:.3g} ms vs builtin {m['builtin_us'] / 1e3:.3g} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", default="2,4")
    parser.add_argument("--collectives", default=",".join(COLLECTIVES))
    parser.add_argument("-b", "--minbytes", default="64K")
    parser.add_argument("-e", "--maxbytes", default="64M")
    parser.add_argument("-f", "--factor", type=int, default=4)
    parser.add_argument("--iters", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--slice-bytes", default="0", help="0: per message size (execute.slices_for)")
    parser.add_argument("--testbed", default=None, help="hosts=4,rate=200mbit (root, iproute2)")
    args = parser.parse_args()
    start = time.time()
    print(f"machine: {os.cpu_count()} cores, shared with other jobs (load average {os.getloadavg()[0]:.1f}); "
          f"p50 of {args.iters} interleaved iterations; float32 sum; out-of-place")
    if args.testbed:
        bed = parse_testbed(args.testbed)
        with testbed_up(bed) as up:
            for collective in args.collectives.split(","):
                table(collective, up.ranks, one(collective, up.ranks, args, up), up.describe())
    else:
        for ranks in (int(r) for r in args.ranks.split(",")):
            for collective in args.collectives.split(","):
                table(collective, ranks, one(collective, ranks, args), "local gloo over loopback")
    print(f"\n({time.time() - start:.0f} s; load average at the end {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
