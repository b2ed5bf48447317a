"""-A auto against the backend's built-in, side by side in one run: p50 busbw per size and their ratio.

For allreduce, allgather, reducescatter, broadcast and alltoall on 2 and 4 local gloo ranks from 64 KiB
to 64 MiB (or on a testbed with --testbed hosts=4,rate=200mbit: needs root, see README "A cluster on one
box"). auto chooses per size from a quick calibration of the run's own network and confirms a close call
between ours and the built-in by timing both (runtime/auto/run.py); auto and builtin are then timed in rounds
(runtime/measure.py head_to_head: every round runs both, each after a barrier, the order alternating; at
least --iters rounds, more for short calls up to --min-time seconds each), out-of-place, float32 sum, and
each is checked bit-exactly (#wrong). auto's speedup is the median over rounds of builtin's time / auto's
time in the same round, with its 90 % bounds (model/auto/paired_ratio.py): > 1, auto faster. "decided by" says
what made auto's pick; a confirmation's ratio is printed the same way, builtin's time / ours (> 1: ours
faster). --aa times the built-in against itself instead of auto: the harness's own spread.

    .venv/bin/python benchmarks/auto_vs_builtin.py [--ranks 2,4] [-b 64K] [-e 64M] [--iters 5] [--min-time 1]
    .venv/bin/python benchmarks/auto_vs_builtin.py --aa --ranks 2 -b 1M -e 64M
    .venv/bin/python benchmarks/auto_vs_builtin.py --testbed hosts=4,rate=200mbit -b 1M -e 16M -f 4 --iters 3
"""

from __future__ import annotations

import argparse
import os
import time

from collperf.lab.bench import auto_plan
from collperf.runtime.job import BenchJob
from collperf.runtime.launch import Job, run_local, run_testbed
from collperf.api import testbed as parse_testbed, testbed_up
from collperf.errors import run_main
from collperf.spec import SweepSpec

COLLECTIVES = ("allreduce", "allgather", "reducescatter", "broadcast", "alltoall")


def one(collective: str, ranks: int, args, bed=None) -> dict:
    config = BenchJob.of(
        SweepSpec(
            collective=collective,
            algorithms="builtin,builtin" if args.aa else "auto,builtin",
            min_bytes=args.minbytes,
            max_bytes=args.maxbytes,
            factor=args.factor,
            iters=args.iters,
            warmup=args.warmup,
            slice_bytes=args.slice_bytes,
            in_place=False,
            progress=False,
            min_time_s=args.min_time,
        )
    )
    if not args.aa:
        config = auto_plan(config, ranks, None, bed.ranks_per_host if bed is not None else ranks)
    job = Job("collperf.runtime.measure:head_to_head", (config,))
    return run_testbed(job, bed, 1800) if bed is not None else run_local(job, ranks, 900)


def table(collective: str, ranks: int, result: dict, where: str) -> list[dict]:
    """Print one collective's table; return each size's paired ratio (model/auto/paired_ratio.py to_json)."""
    mine_label, theirs_label = list(result["table"])
    chose = f"; auto chose on {result['auto_network']}" if result["auto_network"] else ""
    print(f"\n{collective}, {ranks} ranks ({where}){chose}")
    print(
        f"| size | {mine_label} ran | decided by | {mine_label} busbw (GB/s) | {theirs_label} busbw (GB/s) | "
        f"{mine_label} speedup: {theirs_label} time / {mine_label} time, median over rounds [90 % bounds] | "
        "rounds | #wrong |"
    )
    print("|---|---|---|---|---|---|---|---|")
    ratios = []
    for mine, theirs in zip(result["table"][mine_label], result["table"][theirs_label]):
        size = mine["size"]
        label = f"{size >> 20} MiB" if size >= 1 << 20 else f"{size >> 10} KiB"
        auto = mine.get("auto") or {"algorithm": "builtin", "decided_by": "(A/A)"}
        name = auto["algorithm"] + (f" k={auto['segments']}" if auto.get("segments") else "")
        r = mine["vs_last"]
        ratios.append(r)
        print(
            f"| {label} | {name} | {decided(auto)} | {mine['busbw']:.4f} | {theirs['busbw']:.4f} | "
            f"{r['median']:.2f} [{r['low']:.2f}, {r['high']:.2f}] | {r['rounds']} | {mine['wrong']}/{theirs['wrong']} |",
            flush=True,
        )
    return ratios


def decided(choice: dict) -> str:
    """'model', or 'measured ring 1.2 ms vs builtin 1.5 ms (builtin / ring 1.25 [1.18, 1.33], 7 rounds)': the
    confirmation's medians at the size it timed and, as in the speedup column, builtin's time / ours per round
    with its bounds (> 1: ours faster); a tie adds the runner-up's. The measurement holds ours / builtin
    (model/auto/confirm.py summary): inverted here, so its bounds swap."""
    m = choice.get("measured")
    if choice.get("decided_by") != "measured" or not m:
        return choice.get("decided_by", "model")
    text = (
        f"measured {m['algorithm']} {m['ours_us'] / 1e3:.3g} ms vs builtin {m['builtin_us'] / 1e3:.3g} ms "
        f"(builtin / {m['algorithm']} {1 / m['paired_ratio']:.2f} [{1 / m['ratio_high']:.2f}, "
        f"{1 / m['ratio_low']:.2f}], {m['rounds']} rounds)"
    )
    if m.get("runner_up"):
        text += f"; builtin / {m['runner_up']['algorithm']} {1 / m['runner_up']['paired_ratio']:.2f}"
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", default="2,4")
    parser.add_argument("--collectives", default=",".join(COLLECTIVES))
    parser.add_argument("-b", "--minbytes", default="64K")
    parser.add_argument("-e", "--maxbytes", default="64M")
    parser.add_argument("-f", "--factor", type=int, default=4)
    parser.add_argument("--iters", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument(
        "--min-time",
        type=float,
        default=1.0,
        help="seconds of rounds per algorithm and size "
        "at least (more rounds than --iters for short calls; 0: --iters rounds)",
    )
    parser.add_argument("--aa", action="store_true", help="the built-in against itself (the harness's spread)")
    parser.add_argument("--slice-bytes", default="0", help="0: per message size (execute.slices_for)")
    parser.add_argument("--testbed", default=None, help="hosts=4,rate=200mbit (root, iproute2)")
    args = parser.parse_args()
    start = time.time()
    print(
        f"machine: {os.cpu_count()} cores, shared with other jobs (load average {os.getloadavg()[0]:.1f}); "
        f">= {args.iters} interleaved rounds, >= {args.min_time:g} s per algorithm and size; float32 sum; "
        "out-of-place" + ("; A/A: the built-in against itself" if args.aa else "")
    )
    ratios = []
    if args.testbed:
        bed = parse_testbed(args.testbed)
        with testbed_up(bed) as up:
            for collective in args.collectives.split(","):
                ratios += table(collective, up.ranks, one(collective, up.ranks, args, up), up.describe())
    else:
        for ranks in (int(r) for r in args.ranks.split(",")):
            for collective in args.collectives.split(","):
                ratios += table(collective, ranks, one(collective, ranks, args), "local gloo over loopback")
    medians = [r["median"] for r in ratios]
    print(
        f"\nmedians {min(medians):.2f} to {max(medians):.2f}; bounds {min(r['low'] for r in ratios):.2f} to "
        f"{max(r['high'] for r in ratios):.2f}; {sum(m < 0.95 for m in medians)} of {len(medians)} medians < 0.95"
    )
    print(f"({time.time() - start:.0f} s; load average at the end {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    run_main(main)
