"""Blink's packed spanning trees: the optimal broadcast rate on a heterogeneous topology and a set
of weighted trees that reaches it.

Blink (Wang et al., "Blink: Fast and Generic Collectives for Distributed ML", MLSys 2020; appendix
A.2) replaces rings, whose rate is their slowest link, by spanning trees
packed so that every link is used at its own rate.

- The bound. With every link full-duplex at one rate per direction, the directed link graph is
  Eulerian, so the rate of a broadcast from `root` to a group of ranks is min over the other ranks
  v of maxflow(root, v): Edmonds (1973) for spanning arborescences, and with non-participating
  devices in between, Mader's directed splitting-off (1982) removes them without lowering any
  ranks' pairwise connectivity (Bang-Jensen, Frank & Jackson 1995 for the Steiner version).
  Splitting off means routing through a device: no copying happens outside the group.
- The packing. A linear program over trees whose arcs are routes (paths through other devices),
  solved by column generation: the master LP (scipy linprog, HiGHS) gives link prices; the
  cheapest tree at those prices is a minimum-cost arborescence (Chu-Liu/Edmonds) on the group
  with arc cost = the cheapest route. The loop stops when no tree improves the LP, i.e. at the LP
  optimum, which the bound certifies. A basic optimal solution uses at most one tree per link.
- Several roots at once (allgather: every rank broadcasts its block) is the same LP with a common
  rate per root; ports (a rank's injection/ejection limit) are resources of the LP too.

Pure: networkx/scipy are imported inside the functions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from collperf.errors import UsageError
from collperf.model.trees import depths_of
from collperf.topology import subset

LINK_KINDS = ("all", "nvlink", "pcie")
TRANSIT = ("any", "devices")
_TOL = 1e-9


@dataclass(frozen=True)
class Tree:
    """One packed tree on the group's local ranks."""

    root: int
    parent: tuple[int, ...]  # parent of every local rank, -1 for the root
    routes: dict  # (parent, child) -> vertex path in the group's topology
    rate_Bps: float  # the data rate this tree carries

    def depth(self) -> list[int]:
        return depths_of(list(self.parent))


@dataclass(frozen=True)
class Packing:
    """Trees rooted at each of `roots` (local ranks), all carrying `rate_Bps` per root together."""

    ranks: tuple[int, ...]  # the topology's ranks; local rank i is ranks[i]
    roots: tuple[int, ...]
    rate_Bps: float  # per root: what each root's trees carry together
    bound_Bps: float  # min over roots and ranks of max-flow (the single-root bound)
    trees: tuple[Tree, ...]
    topology: object  # topology.subset(...) view the routes are written in
    links: str = "all"
    direction: str = "down"  # "up": the trees' arcs are used child -> parent (reduce)
    loads: dict = field(default_factory=dict, compare=False)  # (u, v) link -> bytes/s used

    def trees_of(self, root: int) -> list[Tree]:
        return [t for t in self.trees if t.root == root]

    def describe(self) -> str:
        lines = [
            (
                f"{len(self.trees)} trees on ranks {list(self.ranks)}, {self.rate_Bps / 1e9:.4g} GB/s per root "
                f"(bound {self.bound_Bps / 1e9:.4g} GB/s)"
            )
        ]
        for t in self.trees:
            edges = ", ".join(
                f"{self.ranks[u]}->{self.ranks[v]}" + ("" if len(p) == 2 else f" via {p[1:-1]}")
                for (u, v), p in sorted(t.routes.items())
            )
            lines.append(f"  {t.rate_Bps / 1e9:8.4g} GB/s from {self.ranks[t.root]}: {edges}")
        return "\n".join(lines)


# --- the group's directed link graph --------------------------------------------------------------


def link_kind(attrs: dict) -> str:
    """nvlink for DGX NVLink edges (names NV1, NV2, ...), pcie for PCIe and QPI, other otherwise."""
    name = str(attrs.get("name", ""))
    if name.startswith("NV"):
        return "nvlink"
    return "pcie" if name in ("pcie", "qpi") else "other"


def _check(links: str, transit: str, direction: str = "down"):
    if links not in LINK_KINDS:
        raise UsageError(f"links {links!r}: expected one of {', '.join(LINK_KINDS)}")
    if transit not in TRANSIT:
        raise UsageError(
            f"transit {transit!r}: expected any (idle ranks forward too) or devices (switches and CPUs only)"
        )
    if direction not in ("down", "up"):
        raise UsageError(f"direction {direction!r}: expected down (broadcast) or up (reduce)")


def group_arcs(sub, links: str = "all", transit: str = "any", direction: str = "down"):
    """(vertices, arcs): the arcs (u, v, capacity_Bps) usable by a group on topology view `sub`.
    direction "up" reverses every arc (a reduce flows child -> parent): arc u->v has v->u's rate."""
    _check(links, transit, direction)
    g = sub.graph
    keep = [v for v in g if not (transit == "devices" and "rank" in g.nodes[v])]
    kept = set(keep)
    arcs = []
    for u, v, attrs in g.edges(data=True):
        if u in kept and v in kept and (links == "all" or link_kind(attrs) == links):
            arcs += [(u, v, attrs["bandwidth_Bps"]), (v, u, attrs["bandwidth_Bps"])]
    return keep, arcs


def broadcast_bound(topo, ranks, root: int, links: str = "all", transit: str = "any", direction: str = "down") -> float:
    """min over the group's other ranks of max-flow(root -> rank) in bytes/s (root: a topology rank)."""
    import networkx as nx

    group = list(ranks)
    sub = subset(topo, group)
    if root not in group:
        raise UsageError(f"root {root} is not one of the ranks {group}")
    vertices, arcs = group_arcs(sub, links, transit, direction)
    r = group.index(root)
    others = [v for v in range(len(group)) if v != r]
    fast = _integer_max_flows(vertices, arcs, r, others)
    if fast is not None:
        return fast
    d = nx.DiGraph()
    d.add_nodes_from(range(len(group)))
    for u, v, cap in arcs:
        d.add_edge(u, v, capacity=cap)
    return min((nx.maximum_flow_value(d, r, v) for v in others), default=math.inf)


def _integer_max_flows(vertices, arcs, source, sinks, unit_Bps: float = 1e6):
    """min over sinks of max-flow with scipy's integer max flow, when every capacity is a whole
    number of MB/s (all presets); None otherwise (the caller falls back on networkx)."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_flow

    caps = np.array([cap for _, _, cap in arcs], dtype=float) / unit_Bps
    if not sinks or not np.all(np.isfinite(caps)) or np.any(np.abs(caps - np.round(caps)) > 1e-9) or caps.sum() > 2**30:
        return None if sinks else math.inf
    index = {v: i for i, v in enumerate(vertices)}
    n = len(vertices)
    u = np.array([index[a] for a, _, _ in arcs])
    v = np.array([index[b] for _, b, _ in arcs])
    graph = csr_matrix((np.round(caps).astype(np.int32), (u, v)), shape=(n, n))  # parallel arcs add up
    graph.sum_duplicates()
    return min(maximum_flow(graph, index[source], index[t]).flow_value for t in sinks) * unit_Bps


# --- minimum-cost arborescence (Chu-Liu / Edmonds), dense, for small groups -----------------------


def min_arborescence(cost: np.ndarray, root: int) -> list[int]:
    """Parent list of a minimum-cost spanning arborescence rooted at `root`; cost[u, v] is arc u->v
    (inf: no arc). Raises ValueError when some vertex cannot be reached."""
    n = len(cost)
    c = np.array(cost, dtype=float)
    np.fill_diagonal(c, np.inf)
    c[:, root] = np.inf
    parent = [-1] * n
    for v in range(n):
        if v != root:
            parent[v] = int(np.argmin(c[:, v]))
            if not np.isfinite(c[parent[v], v]):
                raise ValueError(f"vertex {v} cannot be reached from {root}")
    cycle = _find_cycle(parent, root)
    if cycle is None:
        return parent
    # contract the cycle into one vertex; entering arcs pay the cycle arc they replace
    cyc = np.array(cycle)
    outside = np.array([v for v in range(n) if v not in set(cycle)])
    m = len(outside) + 1
    small = np.full((m, m), np.inf)
    small[:-1, :-1] = c[np.ix_(outside, outside)]
    with np.errstate(invalid="ignore"):
        entering = c[np.ix_(outside, cyc)] - c[[parent[v] for v in cycle], cyc][None, :]
    entering = np.where(np.isnan(entering), np.inf, entering)
    enter = cyc[np.argmin(entering, axis=1)]  # per outside u: the cycle vertex it would enter
    small[:-1, -1] = entering.min(axis=1)
    leaving = c[np.ix_(cyc, outside)]
    leave = cyc[np.argmin(leaving, axis=0)]  # per outside w: the cycle vertex it leaves from
    small[-1, :-1] = leaving.min(axis=0)
    local_root = int(np.nonzero(outside == root)[0][0])
    sub_parent = min_arborescence(small, local_root)
    result = list(parent)
    for i, w in enumerate(outside):
        if w != root:
            up = sub_parent[i]
            result[w] = int(leave[i]) if up == m - 1 else int(outside[up])
    i = sub_parent[m - 1]
    result[int(enter[i])] = int(outside[i])
    return result


def _find_cycle(parent: list[int], root: int):
    state = [0] * len(parent)  # 0 new, 1 on the current walk, 2 done
    for start in range(len(parent)):
        walk, v = [], start
        while v != root and v >= 0 and state[v] == 0:
            state[v] = 1
            walk.append(v)
            v = parent[v]
        if v != root and v >= 0 and state[v] == 1:
            return walk[walk.index(v) :]
        for w in walk:
            state[w] = 2
    return None


# --- the packing LP (column generation) -----------------------------------------------------------


def pack(
    topo, ranks, roots=None, links: str = "all", transit: str = "any", direction: str = "down", max_rounds: int = 500
) -> Packing:
    """Weighted trees rooted at each of `roots` (topology ranks; default: the first rank) that
    maximise the common rate per root. One root: Blink's broadcast packing. Every rank: allgather."""
    group = list(ranks)
    sub = subset(topo, group)
    roots = [group[0]] if roots is None else list(roots)
    if not roots or any(r not in group for r in roots):
        raise UsageError(f"roots {roots} are not all among the ranks {group}")
    local_roots = [group.index(r) for r in roots]
    p = len(group)
    if p == 1:
        return Packing(tuple(group), tuple(local_roots), math.inf, math.inf, (), sub, links, direction)
    bound = min(broadcast_bound(topo, group, group[r], links, transit, direction) for r in local_roots)
    lp = Master(sub, p, local_roots, *group_arcs(sub, links, transit, direction))
    # one root: the bound is exact (see the module docstring), so reaching it ends the search early;
    # several roots share links and their common rate can be below it: the LP decides alone
    lp.solve(max_rounds, bound if len(local_roots) == 1 else math.inf)
    return lp.result(tuple(group), bound, links, direction)


class Master:
    """Column generation state: resources are the finite arcs and every rank's ports."""

    def __init__(self, sub, p, roots, vertices, arcs):
        self.sub, self.p, self.roots = sub, p, roots
        self.vertices = list(range(p)) + [v for v in vertices if not (isinstance(v, int) and v < p)]
        self.index = {v: i for i, v in enumerate(self.vertices)}
        finite = [(u, v, cap) for u, v, cap in arcs if math.isfinite(cap)]
        if not finite:
            raise UsageError(f"topology {sub.name!r}: the group has no link of finite bandwidth to pack trees on")
        self.arc_id = {(self.index[u], self.index[v]): i for i, (u, v, _) in enumerate(finite)}
        self.arcs = [(self.index[u], self.index[v]) for u, v, _ in arcs]
        self.arc_u = np.array([u for u, _ in self.arcs], dtype=np.int64)
        self.arc_v = np.array([v for _, v in self.arcs], dtype=np.int64)
        self.arc_res = np.array([self.arc_id.get(a, -1) for a in self.arcs], dtype=np.int64)
        ports = [sub.port_Bps(r) for r in range(p)] * 2  # out ports, then in ports
        caps = np.array([cap for _, _, cap in finite] + ports, dtype=float)
        self.scale = float(np.max(caps[np.isfinite(caps)]))
        self.cap = caps / self.scale
        self.columns: list = []  # (root, parent, routes as index paths, load vector)
        self.seen: set = set()
        self.x = np.zeros(0)
        self.rate = 0.0

    def _routes(self, price):
        """Cheapest route between every pair of vertices at the given arc prices (Floyd-Warshall,
        numpy; the graphs are small), with a hop's worth added per arc: fewest hops among equals."""
        n = len(self.vertices)
        dist = np.full((n, n), np.inf)
        np.fill_diagonal(dist, 0.0)
        dist[self.arc_u, self.arc_v] = self.arc_price(price) + 1e-9
        pred = np.where(np.isfinite(dist), np.arange(n)[:, None], -1)
        for k in range(n):
            via = dist[:, k : k + 1] + dist[k : k + 1, :]
            better = via < dist
            dist = np.where(better, via, dist)
            pred = np.where(better, pred[k : k + 1, :], pred)
        return dist[: self.p, : self.p], pred

    def arc_price(self, price):
        return np.where(self.arc_res >= 0, price[np.maximum(self.arc_res, 0)], 0.0)

    def _column(self, root, price):
        p, n_arcs = self.p, len(self.arc_id)
        dist, pred = self._routes(price)
        cost = dist + price[n_arcs : n_arcs + p][:, None] + price[n_arcs + p :][None, :]
        parent = min_arborescence(cost, root)
        routes, load = {}, np.zeros(len(self.cap))
        for v, u in enumerate(parent):
            if u < 0:
                continue
            path, w = [v], v
            while w != u:
                w = int(pred[u, w])
                path.append(w)
            path.reverse()
            routes[(u, v)] = tuple(path)
            for a, b in zip(path[:-1], path[1:]):
                if (a, b) in self.arc_id:
                    load[self.arc_id[(a, b)]] += 1
            load[n_arcs + u] += 1
            load[n_arcs + p + v] += 1
        return root, tuple(parent), routes, load

    def _add(self, column) -> bool:
        key = (column[0], tuple(sorted(column[2].items())))
        if key in self.seen:
            return False
        self.seen.add(key)
        self.columns.append(column[:4])
        return True

    def solve(self, max_rounds: int, bound_Bps: float = math.inf):
        """Multiplicative weights first (cheap trees, in batches), then column generation."""
        finite = np.isfinite(self.cap)
        price = np.where(finite, 1.0 / np.where(finite, self.cap, 1.0), 0.0)
        for batch in (10, 10, 10):
            price = self._warm_start(price, batch)
            if self._master() * self.scale >= bound_Bps * (1 - 1e-9):
                return
        for _ in range(max_rounds):
            duals = self.duals
            added = False
            for r, z in zip(self.roots, duals[1]):
                column = self._column(r, duals[0])
                if float(column[3] @ duals[0]) < z * (1 - 1e-9) - _TOL and self._add(column):
                    added = True
            if not added or self._master() * self.scale >= bound_Bps * (1 - 1e-9):
                return
        raise RuntimeError(f"packing did not converge in {max_rounds} rounds")

    def _master(self) -> float:
        """Solve the LP over the trees found so far; keep its solution and link prices."""
        from scipy.optimize import linprog

        m, k = len(self.columns), len(self.roots)
        loads = np.array([c[3] for c in self.columns]).T  # resources x trees
        live = np.isfinite(self.cap)
        a_res = np.hstack([loads[live], np.zeros((int(live.sum()), 1))])
        a_root = np.array([[-(c[0] == r) for c in self.columns] + [1.0] for r in self.roots])
        objective = np.zeros(m + 1)
        objective[-1] = -1.0  # maximise the common rate per root
        res = linprog(
            objective,
            A_ub=np.vstack([a_res, a_root]),
            b_ub=np.concatenate([self.cap[live], np.zeros(k)]),
            bounds=(0, None),
            method="highs",
        )
        if res.status == 3:
            raise UsageError("the trees' rate is unbounded: every link the group uses has infinite bandwidth")
        if res.status != 0:
            raise RuntimeError(f"packing LP failed: {res.message}")
        self.x, self.rate = res.x[:m], -res.fun
        duals = -res.ineqlin.marginals
        price = np.zeros(len(self.cap))
        price[live] = np.maximum(duals[: int(live.sum())], 0.0)
        self.duals = (price, np.maximum(duals[int(live.sum()) :], 0.0))
        return self.rate

    def _warm_start(self, price, rounds: int, step: float = 1.0):
        """Multiplicative weights (Garg & Koenemann 1998): price every resource by 1/capacity, take the
        cheapest tree, raise the prices of what it used, repeat. The distinct trees start the LP."""
        finite = np.isfinite(self.cap)
        for _ in range(rounds):
            for r in self.roots:
                column = self._column(r, price)
                self._add(column)
                use = np.where(finite, column[3] / np.where(finite, self.cap, 1.0), 0.0)
                price = price * np.exp(step * use / max(use.max(), 1e-12))
        return price

    def result(self, group, bound, links, direction) -> Packing:
        trees, loads = [], {}
        n_arcs = len(self.arc_id)
        arc_of = {i: a for a, i in self.arc_id.items()}
        used = np.zeros(len(self.cap))
        for (root, parent, routes, load), x in zip(self.columns, self.x):
            if x <= _TOL * max(self.rate, 1.0):
                continue
            named = {edge: [self.vertices[i] for i in path] for edge, path in routes.items()}
            trees.append(Tree(root, parent, named, float(x * self.scale)))
            used += load * x
        for i in range(n_arcs):
            if used[i] > 0:
                u, v = (self.vertices[w] for w in arc_of[i])
                # "up": the LP ran on reversed arcs; the data crosses v -> u
                loads[(u, v) if direction == "down" else (v, u)] = float(used[i] * self.scale)
        return Packing(
            group,
            tuple(self.roots),
            float(self.rate * self.scale),
            bound,
            tuple(trees),
            self.sub,
            links,
            direction,
            loads,
        )
