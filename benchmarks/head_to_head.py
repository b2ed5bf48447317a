"""Any algorithms of one collective timed side by side in one run, with each one's time over the last one's.

Every round runs every algorithm once, each after a barrier, the order reversed every other round
(runtime/measure.py head_to_head; at least --iters rounds, more for short calls up to --min-time seconds
each), out-of-place, float32 sum, each checked bit-exactly (#wrong). "last / a" is the median over rounds of
the last one's time over a's in the same round, with its 90 % bounds (model/auto/paired_ratio.py). On a testbed
it also prints the link's floor for the collective's bytes (busbw at the shaped rate): the most any
schedule can gain over the last algorithm there.

    .venv/bin/python benchmarks/head_to_head.py --collective alltoall -A mesh,pairwise,builtin --ranks 4
    .venv/bin/python benchmarks/head_to_head.py --collective alltoall -A mesh,pairwise,builtin \\
        --testbed hosts=4,rate=200mbit -b 4M -e 16M --iters 7
"""

from __future__ import annotations

import argparse
import os
import time

from collperf.api import testbed as parse_testbed, testbed_up
from collperf.errors import run_main
from collperf.runtime.job import BenchJob
from collperf.runtime.launch import Job, run_local, run_testbed
from collperf.spec import SweepSpec


def measure(args, bed) -> dict:
    config = BenchJob.of(
        SweepSpec(
            collective=args.collective,
            algorithms=args.algorithms,
            min_bytes=args.minbytes,
            max_bytes=args.maxbytes,
            factor=args.factor,
            iters=args.iters,
            warmup=args.warmup,
            in_place=False,
            progress=False,
            min_time_s=args.min_time,
        )
    )
    job = Job("collperf.runtime.measure:head_to_head", (config,))
    return run_testbed(job, bed, 1800) if bed is not None else run_local(job, args.ranks, 900)


def table(result: dict, link_Bps: float | None) -> None:
    names = list(result["table"])
    last = names[-1]
    floor = f" | {last} / link floor" if link_Bps else ""
    print(
        "| size | "
        + " | ".join(f"{a} ms (busbw GB/s, #wrong)" for a in names)
        + " | "
        + " | ".join(f"{last} / {a}" for a in names[:-1])
        + floor
        + " |"
    )
    print("|---" * (1 + 2 * len(names) - 1 + bool(link_Bps)) + "|")
    for rows in zip(*(result["table"][a] for a in names)):
        size = rows[0]["size"]
        cells = [f"{r['p50_us'] / 1e3:.1f} ({r['busbw']:.4f}, {r['wrong']})" for r in rows]
        ratios = [
            f"{r['vs_last']['median']:.2f} [{r['vs_last']['low']:.2f}, {r['vs_last']['high']:.2f}]" for r in rows[:-1]
        ]
        if link_Bps:  # busbw is the bytes each rank's link carries per second: at the link's rate it takes
            floor_s = rows[-1]["busbw"] * 1e9 * rows[-1]["p50_us"] / 1e6 / link_Bps  # this long at least
            ratios.append(f"{rows[-1]['p50_us'] / 1e6 / floor_s:.2f} (floor {floor_s * 1e3:.1f} ms)")
        label = f"{size >> 20} MiB" if size >= 1 << 20 else f"{size >> 10} KiB"
        print(f"| {label} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collective", default="alltoall")
    parser.add_argument(
        "-A", "--algorithms", default="mesh,pairwise,builtin", help="comma list; ratios are to the last"
    )
    parser.add_argument("--ranks", type=int, default=4)
    parser.add_argument("-b", "--minbytes", default="4M")
    parser.add_argument("-e", "--maxbytes", default="16M")
    parser.add_argument("-f", "--factor", type=int, default=4)
    parser.add_argument("--iters", type=int, default=7)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument(
        "--min-time",
        type=float,
        default=1.0,
        help="seconds of rounds per algorithm and size at least (0: --iters rounds)",
    )
    parser.add_argument("--testbed", default=None, help="hosts=4,rate=200mbit (root, iproute2)")
    parser.add_argument(
        "--link-MBps", type=float, default=None, help="the floor's link rate (testbed: its shaped rate unless given)"
    )
    args = parser.parse_args()
    start = time.time()
    print(f"{args.collective}; load average {os.getloadavg()[0]:.1f}; p50 of >= {args.iters} interleaved rounds")
    with testbed_up(parse_testbed(args.testbed)) as bed:
        result = measure(args, bed)
        link_Bps = args.link_MBps * 1e6 if args.link_MBps else getattr(bed, "rate_Bps", None)
        print(bed.describe() if bed is not None else f"{args.ranks} local gloo ranks")
    table(result, link_Bps)
    print(f"\n({time.time() - start:.0f} s; load average at the end {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    run_main(main)
