"""Our ring allreduce (the verified schedule, executed with batched p2p) against gloo's built-in
all_reduce, side by side in one run, on 2 and 4 local ranks from 1 MiB to 64 MiB.

Prints per size the p50 busbw of each and ours / gloo (>= 1.0: ours is as fast or faster), for
two slice sizes of the executor (slicing lets the reduction of one slice overlap the arrival of the
next). Each row is checked bit-exactly; a wrong row would be marked.

    .venv/bin/python benchmarks/ring_vs_gloo.py [--iters 10] [--ranks 2,4]
"""

from __future__ import annotations

import argparse
import os

from collperf.lab.bench import run
from collperf.spec import SweepSpec as BenchConfig


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=10)
    parser.add_argument("--ranks", default="2,4")
    parser.add_argument("--slices", default="256K,4M")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores; gloo over loopback; float32 sum; time = p50 of {args.iters} iterations")
    for ranks in (int(r) for r in args.ranks.split(",")):
        for slice_bytes in args.slices.split(","):
            config = BenchConfig(
                "allreduce",
                "ring,builtin",
                "1M",
                "64M",
                2,
                iters=args.iters,
                warmup=2,
                slice_bytes=slice_bytes,
                in_place=False,
                progress=False,
            )
            res = run(config, ranks=ranks, timeout_s=900)
            print(
                f"\n{ranks} ranks, slice {slice_bytes}:  {'size':>9} {'ring busbw':>11} {'gloo busbw':>11} "
                f"{'ring/gloo':>9}  #wrong"
            )
            by = {(r["algorithm"], r["size"]): r["out_of_place"] for r in res.rows}
            for size in sorted({r["size"] for r in res.rows}):
                ours, theirs = by[("ring", size)], by[("builtin", size)]
                factor = 2 * (ranks - 1) / ranks
                ours_bw = size / ours["p50_us"] / 1e3 * factor
                theirs_bw = size / theirs["p50_us"] / 1e3 * factor
                print(
                    f"{'':28}{size >> 20:>6} MiB {ours_bw:9.3f} GB/s {theirs_bw:7.3f} GB/s {ours_bw / theirs_bw:9.2f}  "
                    f"{ours['wrong']}/{theirs['wrong']}"
                )


if __name__ == "__main__":
    main()
