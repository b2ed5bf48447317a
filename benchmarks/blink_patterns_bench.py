"""Blink's micro-benchmarks (appendix A.1) measured on local gloo ranks: `collperf bench --pattern NAME`
for every pattern, throughput = size / time (the out-of-place mean over ranks), #wrong checked.

    PYTHONPATH=src python benchmarks/blink_patterns_bench.py [--sizes 64K,1M,16M] [--iters 5] [--segments 8]

Chains run on 4 ranks (dgx1v GPUs 0 -> 1 -> 2 -> 3), fans on 5 (sources 5,6,7 -> center 4 -> successor 0;
source 5 -> center 4 -> 0,6,7), the appendix's GPUs. On one host the ranks share its memory bus and
cores, so the numbers say what gloo over loopback does with each pattern, not what NVLink would.
"""

from __future__ import annotations

import argparse

from collperf import api, units
from collperf.spec import PATTERNS, BenchSpec, SweepSpec


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="64K,1M,16M")
    parser.add_argument("--iters", type=int, default=5)
    parser.add_argument("--segments", type=int, default=8)
    args = parser.parse_args()
    sizes = [units.parse_size(s) for s in args.sizes.split(",")]
    print(f"| pattern | ranks | {' | '.join(units.format_size(n) for n in sizes)} | #wrong |")
    print("|---|---|" + "---|" * len(sizes) + "---|")
    for name in PATTERNS:
        ranks = 5 if name.startswith("fan") else 4
        row, wrong = [], 0
        for n in sizes:  # one sweep per size: -b = -e keeps the rows exactly at the sizes asked
            sweep = SweepSpec(
                collective="allreduce",
                algorithms="builtin",
                min_bytes=n,
                max_bytes=n,
                factor=2,
                iters=args.iters,
                warmup=2,
                segments=args.segments,
                in_place=False,
                progress=False,
            )
            res = api.bench(BenchSpec(sweep=sweep, ranks=ranks, timeout_s=600, pattern=name))
            m = res.rows[0]["out_of_place"]
            row.append(f"{m['algbw']:.3f}")
            wrong += m["wrong"] or 0
        print(f"| {name} | {ranks} | {' | '.join(row)} | {wrong} |", flush=True)


if __name__ == "__main__":
    main()
