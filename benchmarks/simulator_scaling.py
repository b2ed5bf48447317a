"""How the simulator's time and memory grow with the rank count.

Builds (array form, model/algorithms/vectorized.py) and simulates the flat ring and rhd allreduce and the
two-level ring/ring one of 1 GiB on two-level clusters cluster:Nx8 (the `chapter` preset: 8 ranks
per node, NVLink switch inside, one NIC per rank) of 64 to 65536 ranks, in rounds mode, and in
events mode up to --events-max-transfers transfers. Each case runs in a fresh process, timed after
start-up (imports, scipy included, and the topology), so that its peak resident memory
(getrusage ru_maxrss) is its own. The flat ring and the two-level ring/ring are checked against
their closed forms (model/costs.py with the inter-node link; model/hierarchy.two_level_cost):
on this topology every ring step waits on one contention-free hop, so they must agree exactly.

    .venv/bin/python benchmarks/simulator_scaling.py [--events-max-transfers 5e6] [--max-ranks 65536]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

ALGORITHMS = ("ring", "rhd", "hierarchical")
RANKS = (64, 512, 4096, 32768, 65536)


def transfers_of(algorithm: str, p: int) -> int:
    """Transfers of the schedule, counted without building it."""
    if algorithm == "ring":
        return 2 * p * (p - 1)
    if algorithm == "rhd":
        return 2 * p * (p.bit_length() - 1)
    nodes, g = p // 8, 8
    return 2 * p * (g - 1) + 2 * p * (nodes - 1)   # hierarchical ring/ring


def run_case(mode: str, algorithm: str, p: int) -> dict:
    """One case, in this process: seconds to build and to simulate, peak memory, closed form."""
    import resource

    import scipy.sparse  # noqa: F401  start-up, not simulation

    from collperf import topology
    from collperf.model.costs import cost
    from collperf.model.hierarchy import two_level_cost
    from collperf.model.presets import get_preset
    from collperf.model.algorithms.build import build_array, build_hierarchical_array
    from collperf.simulate import simulate

    size = float(1 << 30)
    cluster = get_preset("chapter", p // 8)
    topo = topology.two_level(cluster)
    start = time.perf_counter()
    if algorithm == "hierarchical":
        sched = build_hierarchical_array("allreduce", p // 8, 8, "ring", "ring")
    else:
        sched = build_array("allreduce", algorithm, p)
    built = time.perf_counter() - start
    start = time.perf_counter()
    result = simulate(sched, topo, size, mode)
    simulated = time.perf_counter() - start
    closed = None
    if algorithm == "ring":
        closed = float(cost("allreduce", "ring", p, [size], cluster.inter).total_s[0])
    elif algorithm == "hierarchical":
        closed = float(two_level_cost("allreduce", cluster, [size], "ring", "ring").total_s[0])
    return {"mode": mode, "ranks": p, "algorithm": algorithm, "transfers": sched.transfer_count,
            "steps": sched.step_count, "runs": len(sched.steps), "build_s": built, "sim_s": simulated,
            "peak_MiB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "time_s": result.time_s,
            "closed_s": closed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events-max-transfers", type=float, default=5e6)
    parser.add_argument("--max-ranks", type=int, default=65536)
    parser.add_argument("--case", help=argparse.SUPPRESS)       # mode,algorithm,ranks: run one, print JSON
    args = parser.parse_args()
    if args.case:
        mode, algorithm, p = args.case.split(",")
        print(json.dumps(run_case(mode, algorithm, int(p))))
        return
    print(f"{'mode':6} {'ranks':>6} {'algorithm':12} {'transfers':>13} {'steps':>7} {'runs':>5} {'build s':>8} "
          f"{'sim s':>7} {'peak MiB':>9} {'time ms':>10}  closed form")
    for mode in ("rounds", "events"):
        for p in (p for p in RANKS if p <= args.max_ranks):
            for algorithm in ALGORITHMS:
                count = transfers_of(algorithm, p)
                if mode == "events" and count > args.events_max_transfers:
                    print(f"{mode:6} {p:6} {algorithm:12} {count:13,} skipped (over {args.events_max_transfers:,.0f} "
                          "transfers: events holds every transfer)")
                    continue
                out = subprocess.run([sys.executable, __file__, "--case", f"{mode},{algorithm},{p}"],
                                     capture_output=True, text=True, check=True)
                r = json.loads(out.stdout.strip().splitlines()[-1])
                closed = "-" if r["closed_s"] is None else (
                    f"{r['closed_s'] * 1e3:.6f} ms, rel. diff {abs(r['time_s'] / r['closed_s'] - 1):.1e}")
                print(f"{mode:6} {p:6} {algorithm:12} {r['transfers']:13,} {r['steps']:7} {r['runs']:5} "
                      f"{r['build_s']:8.2f} {r['sim_s']:7.2f} {r['peak_MiB']:9.0f} {r['time_s'] * 1e3:10.3f}  {closed}",
                      flush=True)


if __name__ == "__main__":
    main()
