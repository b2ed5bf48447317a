"""How the simulator's time grows with the rank count.

Builds and simulates the flat ring and rhd allreduce, and the two-level ring/ring one, on two-level
clusters (the `chapter` preset: 8 ranks per node, NVLink switch inside, one NIC per rank) of 64 to
32768 ranks in rounds mode, and of 64 to 1024 ranks in events mode. Prints seconds to build and to
simulate, the transfers, and microseconds per transfer (near-constant = linear growth). Schedules
above --max-transfers are skipped with their transfer count: a flat ring on p ranks has 2p(p-1)
transfers (33.5 M at 4096 ranks), past what one Python process builds in reasonable memory.

    .venv/bin/python benchmarks/simulator_scaling.py [--max-transfers 5000000] [--events-max-transfers 300000]
"""

from __future__ import annotations

import argparse
import time

from collperf import topology
from collperf.model.presets import get_preset
from collperf.schedule.build import build, build_hierarchical
from collperf.simulate import simulate


def transfers_of(algorithm: str, p: int) -> int:
    """Transfers of the schedule, counted without building it."""
    if algorithm == "ring":
        return 2 * p * (p - 1)
    if algorithm == "rhd":
        return 2 * p * (p.bit_length() - 1)
    nodes, g = p // 8, 8
    return 2 * p * (g - 1) + 2 * p * (nodes - 1)   # hierarchical ring/ring


def make(algorithm: str, p: int):
    if algorithm == "hierarchical":
        return build_hierarchical("allreduce", p // 8, 8, "ring", "ring")
    return build("allreduce", algorithm, p)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-transfers", type=float, default=5e6)
    parser.add_argument("--events-max-transfers", type=float, default=3e5)
    args = parser.parse_args()
    print(f"{'mode':7} {'ranks':>6} {'algorithm':13} {'transfers':>10} {'build s':>8} {'sim s':>8} {'us/transfer':>11}  time")
    for mode, sizes, cap in (("rounds", (64, 512, 4096, 32768), args.max_transfers),
                             ("events", (64, 128, 256, 512, 1024), args.events_max_transfers)):
        for p in sizes:
            topo = None
            for algorithm in ("ring", "rhd", "hierarchical"):
                count = transfers_of(algorithm, p)
                if count > cap:
                    print(f"{mode:7} {p:6} {algorithm:13} {count:10} skipped (over {cap:.0f} transfers)")
                    continue
                topo = topo or topology.two_level(get_preset("chapter", p // 8))
                start = time.perf_counter()
                sched = make(algorithm, p)
                built = time.perf_counter() - start
                start = time.perf_counter()
                result = simulate(sched, topo, 1 << 30, mode)
                simulated = time.perf_counter() - start
                print(f"{mode:7} {p:6} {algorithm:13} {count:10} {built:8.2f} {simulated:8.2f} "
                      f"{1e6 * (built + simulated) / count:11.2f}  {result.time_s * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
