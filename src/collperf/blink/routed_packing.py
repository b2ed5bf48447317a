"""Packed trees on fixed routes: Blink's packing where every pair of ranks has one route, the network's.

blink/packing.py lets each tree edge take the cheapest route at the current link prices, as GPUs that
forward for each other can. A routed network (the testbed: IP forwarding by destination) has one route
per pair of hosts, whatever the tree: a tree edge u -> v loads every link of route(u, v). The linear
program is the same (maximise the common rate per root; trees as columns, links and ports as
resources), and so is the pricing problem, a minimum-cost arborescence on the group, with the arc cost
of u -> v now the price of its one route. Column generation stops at the LP optimum over such trees;
the max-flow bound of packing.py, which assumes free routing, is reported beside it and may not be
reached.

Pure: numpy, scipy (through packing.Master).
"""

from __future__ import annotations

import math

import numpy as np

from collperf.blink.packing import broadcast_bound, group_arcs, Master, min_arborescence, Packing
from collperf.errors import UsageError
from collperf.topology import subset


class _RoutedMaster(Master):
    """packing.Master whose tree edges take the topology's route between the two ranks."""

    def __init__(self, sub, p, roots, vertices, arcs):
        super().__init__(sub, p, roots, vertices, arcs)
        self.paths = {}  # (u, v) local ranks -> (vertex index path, resource ids of its finite links)
        for u in range(p):
            for v in range(p):
                if u != v:
                    path = [self.index[w] for w in sub.path(u, v)]
                    hops = [self.arc_id[(a, b)] for a, b in zip(path[:-1], path[1:]) if (a, b) in self.arc_id]
                    self.paths[(u, v)] = (tuple(path), np.array(hops, dtype=np.int64))

    def _column(self, root, price):
        p, n_arcs = self.p, len(self.arc_id)
        cost = np.full((p, p), np.inf)
        for (u, v), (path, hops) in self.paths.items():
            # a hop's worth per link as in packing._routes: fewest hops among equal prices
            cost[u, v] = float(price[hops].sum()) + 1e-9 * (len(path) - 1)
        cost += price[n_arcs : n_arcs + p][:, None] + price[n_arcs + p :][None, :]
        parent = min_arborescence(cost, root)
        routes, load = {}, np.zeros(len(self.cap))
        for v, u in enumerate(parent):
            if u < 0:
                continue
            path, hops = self.paths[(u, v)]
            routes[(u, v)] = path
            np.add.at(load, hops, 1)
            load[n_arcs + u] += 1
            load[n_arcs + p + v] += 1
        return root, tuple(parent), routes, load


def pack_on_routes(topo, ranks, roots=None, direction: str = "down", max_rounds: int = 500) -> Packing:
    """Weighted trees rooted at each of `roots` (topology ranks; default the first of `ranks`) whose edges
    follow `topo`'s routes (Topology.path), maximising the common rate per root. The returned Packing's
    bound_Bps is the free-routing max-flow bound (packing.broadcast_bound), for comparison."""
    group = [int(r) for r in ranks]
    sub = subset(topo, group)
    roots = [group[0]] if roots is None else [int(r) for r in roots]
    if not roots or any(r not in group for r in roots):
        raise UsageError(f"roots {roots} are not all among the ranks {group}")
    local_roots = [group.index(r) for r in roots]
    p = len(group)
    if p == 1:
        return Packing(tuple(group), tuple(local_roots), math.inf, math.inf, (), sub, "all", direction)
    if direction == "up":
        raise UsageError("pack_on_routes packs broadcast trees (direction down); reduce on fixed routes is not built")
    bound = min(broadcast_bound(topo, group, group[r]) for r in local_roots)
    lp = _RoutedMaster(sub, p, local_roots, *group_arcs(sub))
    lp.solve(max_rounds)
    return lp.result(tuple(group), bound, "all", direction)


def ring_rate_Bps(topo, ranks) -> float:
    """The rate of a pipelined chain (ring broadcast) through `ranks` in order on the routes: every link
    shared by k hops of the chain gives each capacity / k; the chain runs at the slowest."""
    load: dict = {}
    group = [int(r) for r in ranks]
    for u, v in zip(group[:-1], group[1:]):
        path = topo.path(u, v)
        for a, b in zip(path[:-1], path[1:]):
            load[(a, b)] = load.get((a, b), 0) + 1
    return min((topo.link(a, b)["bandwidth_Bps"] / k for (a, b), k in load.items()), default=math.inf)
