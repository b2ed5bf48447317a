"""How the simulator's time and memory grow with the rank count, in both modes.

Builds (array form, the array builders of model/algorithms/) and simulates the flat ring and rhd
allreduce and the two-level ring/ring one of 1 GiB on two-level clusters cluster:Nx8 (the nvlink300-400gbe preset:
8 ranks per node, NVLink switch inside, one NIC per rank) of 1,024 to 131,072 ranks, in rounds mode
and in events mode, and the two-level allreduce on a rail-optimized fat-tree (rail:Nx8, scalable
units of 32 nodes). Events mode runs where its own estimate (simulate/budget.py) is under
--events-max-s. Each case runs in a fresh process, timed after start-up (imports, scipy included,
and the topology), so that its peak resident memory (getrusage ru_maxrss) is its own; the load
average at its start is printed, the machine being shared.

Checks, printed beside each row: the flat ring and the two-level ring/ring against their closed forms
(model/costs.py with the inter-node link; model/hierarchy.two_level_cost): on these fabrics every ring
step waits on one contention-free hop, so they must agree; and events mode against rounds mode on the
same case, which must agree where nothing contends (all of these cases).

    .venv/bin/python benchmarks/simulator_scaling.py [--max-ranks 131072] [--events-max-s 40] [--modes rounds,events]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import scipy.sparse  # noqa: F401  start-up, not simulation

from collperf import topology
from collperf.model.costs import cost
from collperf.model.two_level.hierarchy import two_level_cost
from collperf.model.hardware.presets import get_preset
from collperf.model.two_level.build import build_array, build_hierarchical_array
from collperf.simulate import simulate

RANKS = (1024, 4096, 16384, 65536, 131072)
CASES = [("cluster", "ring"), ("cluster", "rhd"), ("cluster", "hierarchical"), ("rail", "hierarchical")]
SIZE = float(1 << 30)


def run_case(mode: str, fabric: str, algorithm: str, p: int, events_max_s: float) -> dict:
    """One case, in this process: seconds to build and to simulate, peak memory, closed form."""
    load = os.getloadavg()[0]
    cluster = get_preset("nvlink300-400gbe", p // 8)
    topo = topology.parse(f"{fabric}:{p // 8}x8")
    start = time.perf_counter()
    if algorithm == "hierarchical":
        sched = build_hierarchical_array("allreduce", p // 8, 8, "ring", "ring")
    else:
        sched = build_array("allreduce", algorithm, p)
    built = time.perf_counter() - start
    heard = []

    def estimate(e):
        heard.append(e)
        if mode == "events" and e.time_s > events_max_s:  # the set-up alone, or the whole run
            raise TimeoutError(e.describe())

    start = time.perf_counter()
    try:
        result = simulate(sched, topo, SIZE, mode, on_estimate=estimate)
    except TimeoutError as e:
        return {"skipped": f"estimate {e} over --events-max-s {events_max_s:g}", "load": load}
    simulated = time.perf_counter() - start
    # the agreement with rounds mode, measured here so that an events-only run prints it too
    rounds_s = simulate(sched, topo, SIZE, "rounds").time_s if mode == "events" else result.time_s
    closed = None
    if algorithm == "ring":
        closed = float(cost("allreduce", "ring", p, [SIZE], cluster.inter).total_s[0])
    elif algorithm == "hierarchical":
        closed = float(two_level_cost("allreduce", cluster, [SIZE], "ring", "ring").total_s[0])
    return {
        "transfers": sched.transfer_count,
        "steps": sched.step_count,
        "build_s": built,
        "sim_s": simulated,
        "peak_MiB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "time_s": result.time_s,
        "closed_s": closed,
        "rounds_s": rounds_s,
        "engine": result.engine,
        "flows": heard[-1].flows if heard else 0,
        "load": load,
        "estimate_s": heard[-1].time_s,
        "estimate_MiB": heard[-1].memory_bytes / 2**20,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-ranks", type=int, default=131072)
    parser.add_argument("--events-max-s", type=float, default=40.0)
    parser.add_argument("--modes", default="rounds,events")
    parser.add_argument("--case", help=argparse.SUPPRESS)  # mode,fabric,algorithm,ranks: run one, print JSON
    args = parser.parse_args()
    if args.case:
        mode, fabric, algorithm, p = args.case.split(",")
        print(json.dumps(run_case(mode, fabric, algorithm, int(p), args.events_max_s)))
        return
    print(
        f"{'mode':6} {'fabric':7} {'ranks':>6} {'algorithm':12} {'transfers':>13} {'flows':>9} {'load':>5} "
        f"{'build s':>7} {'sim s':>7} {'est. s':>7} {'peak MiB':>8} {'est. MiB':>8} {'time ms':>10}  checks"
    )
    for mode in args.modes.split(","):
        for p in (p for p in RANKS if p <= args.max_ranks):
            for fabric, algorithm in CASES:
                out = subprocess.run(
                    [
                        sys.executable,
                        __file__,
                        "--case",
                        f"{mode},{fabric},{algorithm},{p}",
                        "--events-max-s",
                        str(args.events_max_s),
                    ],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                r = json.loads(out.stdout.strip().splitlines()[-1])
                head = f"{mode:6} {fabric:7} {p:6} {algorithm:12}"
                if "skipped" in r:
                    print(f"{head} skipped: {r['skipped']}", flush=True)
                    continue
                checks = []
                if r["closed_s"] is not None:
                    checks.append(f"vs closed form {abs(r['time_s'] / r['closed_s'] - 1):.1e}")
                if mode == "events":
                    checks.append(f"vs rounds {abs(r['time_s'] / r['rounds_s'] - 1):.1e}")
                flows = f"{r['flows']:9,}" if mode == "events" else f"{'-':>9}"
                print(
                    f"{head} {r['transfers']:13,} {flows} {r['load']:5.1f} {r['build_s']:7.2f} {r['sim_s']:7.2f} "
                    f"{r['estimate_s']:7.1f} {r['peak_MiB']:8.0f} {r['estimate_MiB']:8.0f} "
                    f"{r['time_s'] * 1e3:10.3f}  {', '.join(checks)}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
