"""How many (algorithm, size) costs per second the closed-form model evaluates.

Sweeps 10^6 sizes (1 B .. 16 GiB, geometric) through every algorithm of every collective at 64
ranks, vectorized, and, side by side, the same model called one size at a time on 10^3 sizes, so
the printed ratio is the gain of the numpy vectorization measured in one run.

    make bench      (or: .venv/bin/python benchmarks/model_throughput.py [--sizes 1000000] [--ranks 64])
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from collperf.model.algorithms import ALGORITHMS
from collperf.model.costs import cost
from collperf.model.network import Link


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, default=10**6)
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--scalar-sizes", type=int, default=1000)
    args = parser.parse_args()
    link = Link(5e-6, 50e9, 200e9)
    sizes = np.geomspace(1, 16 * 2**30, args.sizes)
    scalar_sizes = sizes[:: max(1, args.sizes // args.scalar_sizes)][: args.scalar_sizes]
    algorithms = [a for a in ALGORITHMS if not a.unavailable(args.ranks)]

    print(f"{'collective':14} {'algorithm':20} {'vector costs/s':>15} {'scalar costs/s':>15} {'ratio':>8}")
    total_vector_s = total_scalar_s = 0.0
    for alg in algorithms:
        start = time.perf_counter()
        cost(alg.collective, alg.name, args.ranks, sizes, link)
        vector_s = time.perf_counter() - start
        start = time.perf_counter()
        for n in scalar_sizes:
            cost(alg.collective, alg.name, args.ranks, [n], link)
        scalar_s = time.perf_counter() - start
        total_vector_s += vector_s
        total_scalar_s += scalar_s
        v_rate, s_rate = args.sizes / vector_s, len(scalar_sizes) / scalar_s
        print(f"{alg.collective:14} {alg.name:20} {v_rate:15.3g} {s_rate:15.3g} {v_rate / s_rate:8.0f}x")
    v_rate = len(algorithms) * args.sizes / total_vector_s
    s_rate = len(algorithms) * len(scalar_sizes) / total_scalar_s
    print(
        f"\nall {len(algorithms)} algorithms x {args.sizes} sizes at {args.ranks} ranks: "
        f"{total_vector_s:.2f} s, {v_rate:.3g} costs/s vectorized; "
        f"{s_rate:.3g} costs/s one size at a time ({v_rate / s_rate:.0f}x)"
    )


if __name__ == "__main__":
    main()
