"""Flat algorithms on a two-level cluster: what per-level pricing (model/two_level/pricing.py) costs in time and what it
changes in the answer, against pricing every byte on the bottleneck link, side by side in one run.

For each DGX H100 cluster size: every flat algorithm of allreduce, allgather and alltoall over 64 sizes,
priced per level the first time (its schedules built, cold) and again (cached, warm), and on the bottleneck
link's closed form; then the mesh alltoall and ring allreduce at 1 GiB under both.

    PYTHONPATH=src python benchmarks/two_level_pricing.py [--nodes 2,8,32,64]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from collperf.model.algorithms import algorithms_for
from collperf.model.costs import NotApplicable, cost
from collperf.model.hardware.catalogue import get_system, to_cluster
from collperf.model.two_level import pricing as two_level

COLLECTIVES = ("allreduce", "allgather", "alltoall")


def _price_all(cluster, sizes, per_level: bool) -> float:
    start = time.perf_counter()
    for collective in COLLECTIVES:
        for alg in algorithms_for(collective):
            try:
                if per_level:
                    two_level.flat_cost(collective, alg.name, cluster, sizes)
                else:
                    cost(collective, alg.name, cluster.ranks, sizes, cluster.bottleneck)
            except NotApplicable:
                continue
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", default="2,8,32,64")
    args = parser.parse_args()
    sizes = np.geomspace(1 << 10, 1 << 32, 64).round()
    print(
        f"{'nodes x 8':>9} {'cold s':>8} {'warm s':>8} {'bottleneck s':>13} {'warm/bottleneck':>16} "
        f"{'mesh a2a 1G: two-level/bottleneck':>35} {'ring ar 1G':>11}"
    )
    for nodes in (int(x) for x in args.nodes.split(",")):
        cluster = to_cluster(get_system("dgx-h100", nodes=nodes))
        two_level._terms.cache_clear()
        cold = _price_all(cluster, sizes, True)
        warm = _price_all(cluster, sizes, True)
        flat = _price_all(cluster, sizes, False)
        ratios = []
        for collective, name in (("alltoall", "mesh"), ("allreduce", "ring")):
            per_level = two_level.flat_cost(collective, name, cluster, [1 << 30]).total_s[0]
            slow = cost(collective, name, cluster.ranks, [1 << 30], cluster.bottleneck).total_s[0]
            ratios.append(per_level / slow)
        print(
            f"{nodes:>9} {cold:8.2f} {warm:8.3f} {flat:13.3f} {warm / flat:15.1f}x {ratios[0]:35.3f} {ratios[1]:11.3f}"
        )


if __name__ == "__main__":
    main()
