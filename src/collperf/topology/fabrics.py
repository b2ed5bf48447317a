"""The fabrics of large GPU clusters as graphs and routers: rail-optimized fat-tree, 3-tier fat-tree
with oversubscription, dragonfly. The package (topology/__init__.py) wraps them into Topology objects
(and adds the NVL72 domain, a two-level cluster); this module knows graphs, not topologies, so that
the two do not import each other.

Every fabric hangs off the same node: `ranks_per_node` GPUs behind an intra-node switch (NVSwitch-
like, the intra link's latency split over its two hops), NICs shared evenly by the node's GPUs, each
GPU reaching its NIC for free (the PCIe attach is not the bottleneck modelled). A NIC's latency is
split over the two NIC hops of an inter-node route; switch-to-switch links add bandwidth limits,
not latency. A switch tier is one vertex per switch group with one trunk per downstream switch of
the group's whole uplink bandwidth: ECMP over parallel spines assumed perfectly balanced, so the
graph and its classes of like links stay small (a 16,384-GPU fabric is a few thousand vertices).
Routing is minimal and deterministic.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from collperf.errors import UsageError
from collperf.model.network import Cluster, Link

if TYPE_CHECKING:  # networkx is imported where a graph is built, so that importing this stays light
    import networkx as nx

# NVIDIA GB200 NVL72 data sheet: 72 Blackwell GPUs in one NVLink domain, NVLink 5 at 1.8 TB/s
# bidirectional per GPU (900 GB/s per direction); DGX GB200: one ConnectX-7 400 Gb/s NIC per GPU.
NVL72 = Cluster(
    1,
    72,
    Link(1e-6, 900e9, name="NVLink 5 (NVL72)"),
    Link(5e-6, 400e9 / 8, name="400G NIC"),
    nics_per_node=72,
    name="nvl72",
    source="NVIDIA GB200 NVL72 / DGX GB200 data sheets",
)


# what a spec may give after commas: its name -> (the builder's keyword, type)
OPTIONS = {
    "rail": {"su": ("su_nodes", int), "oversub": ("oversubscription", float)},
    "fattree": {
        "rack": ("rack_nodes", int),
        "pod": ("pod_racks", int),
        "oversub": ("oversubscription", float),
        "core-oversub": ("core_oversubscription", float),
    },
    "dragonfly": {"routers": ("routers", int), "router-nodes": ("router_nodes", int)},
}


def _nic_of(local: int, gpn: int, nics: int) -> int:
    """The NIC a local rank uses: ranks share NICs evenly (with more NICs than ranks, the first)."""
    return local * nics // gpn


def _nodes(g: nx.Graph, c: Cluster, uplink_of) -> None:
    """Every node: its GPUs, intra switch and NICs, NIC j of node n linked to vertex uplink_of(n, j)."""
    gpn, nics, a, nic = c.ranks_per_node, c.nics_per_node, c.intra, c.inter
    for n in range(c.nodes):
        ranks = range(n * gpn, (n + 1) * gpn)
        g.add_nodes_from(ranks, port_Bps=a.bandwidth_Bps + nic.bandwidth_Bps * nics / gpn)
        for i, r in enumerate(ranks):
            g.add_edge(r, f"n{n}.switch", latency_s=a.latency_s / 2, bandwidth_Bps=a.bandwidth_Bps, name="intra")
            g.add_edge(r, f"n{n}.nic{_nic_of(i, gpn, nics)}", latency_s=0.0, bandwidth_Bps=math.inf, name="attach")
        for j in range(nics):
            g.add_edge(
                f"n{n}.nic{j}",
                uplink_of(n, j),
                latency_s=nic.latency_s / 2,
                bandwidth_Bps=nic.bandwidth_Bps,
                name="nic",
            )


def _trunk(g: nx.Graph, low: str, high: str, bandwidth_Bps: float, name: str) -> None:
    g.add_edge(low, high, latency_s=0.0, bandwidth_Bps=bandwidth_Bps, name=name)


def _router(c: Cluster, middle):
    """Routes: inside a node through its switch; between nodes NIC, middle(node, nic, node, nic), NIC."""
    gpn, nics = c.ranks_per_node, c.nics_per_node

    def route(src: int, dst: int) -> list:
        (ns, ls), (nd, ld) = divmod(src, gpn), divmod(dst, gpn)
        if ns == nd:
            return [src, f"n{ns}.switch", dst]
        js, jd = _nic_of(ls, gpn, nics), _nic_of(ld, gpn, nics)
        return [src, f"n{ns}.nic{js}", *middle(ns, js, nd, jd), f"n{nd}.nic{jd}", dst]

    return route


def _check_ratio(name: str, value: float) -> None:
    if not value >= 1:
        raise UsageError(f"{name} {value} is below 1: give 1 (non-blocking) or more (e.g. 2 for 2:1)")


def rail_fat_tree(c: Cluster, su_nodes: int = 32, oversubscription: float = 1.0):
    """Rail-optimized leaf/spine (NVIDIA DGX SuperPOD reference architecture): nodes in scalable
    units of `su_nodes`; NIC j of every node of a unit goes to that unit's leaf of rail j, so
    same-rail traffic inside a unit crosses one leaf; every leaf reaches the spine layer with its
    downlink bandwidth / oversubscription. Cross-rail traffic goes up to the spines (no PXN)."""
    import networkx as nx

    _check_ratio("oversub", oversubscription)
    if su_nodes < 1:
        raise UsageError(f"su {su_nodes}: a scalable unit holds at least one node")
    g = nx.Graph()
    _nodes(g, c, lambda n, j: f"su{n // su_nodes}.rail{j}")
    units = -(-c.nodes // su_nodes)
    if units > 1 or c.nics_per_node > 1:
        for s in range(units):
            down = min(su_nodes, c.nodes - s * su_nodes) * c.inter.bandwidth_Bps
            for j in range(c.nics_per_node):
                _trunk(g, f"su{s}.rail{j}", "spine", down / oversubscription, "leaf-spine")

    def middle(ns, js, nd, jd):
        a, b = f"su{ns // su_nodes}.rail{js}", f"su{nd // su_nodes}.rail{jd}"
        return [a] if a == b else [a, "spine", b]

    return g, _router(c, middle)


def fat_tree(
    c: Cluster,
    rack_nodes: int = 16,
    pod_racks: int = 8,
    oversubscription: float = 1.0,
    core_oversubscription: float = 1.0,
):
    """3-tier fat-tree: every node's NICs to its rack's top-of-rack (edge) switch, `rack_nodes` nodes
    a rack; `pod_racks` racks a pod under an aggregation tier; pods under the core. A rack reaches
    its pod with its NIC bandwidth / oversubscription, a pod the core with its racks' uplink
    bandwidth / core_oversubscription (k:1 oversubscription: k times more bandwidth below a tier
    than above it)."""
    import networkx as nx

    _check_ratio("oversub", oversubscription)
    _check_ratio("core-oversub", core_oversubscription)
    if rack_nodes < 1 or pod_racks < 1:
        raise UsageError(f"rack {rack_nodes}, pod {pod_racks}: a rack holds at least one node, a pod one rack")
    g = nx.Graph()
    _nodes(g, c, lambda n, j: f"tor{n // rack_nodes}")
    racks = -(-c.nodes // rack_nodes)
    pods = -(-racks // pod_racks)
    node_Bps = c.inter.bandwidth_Bps * c.nics_per_node
    pod_up = [0.0] * pods
    if racks > 1:
        for r in range(racks):
            up = min(rack_nodes, c.nodes - r * rack_nodes) * node_Bps / oversubscription
            pod_up[r // pod_racks] += up
            _trunk(g, f"tor{r}", f"pod{r // pod_racks}", up, "tor-aggregation")
    if pods > 1:
        for p in range(pods):
            _trunk(g, f"pod{p}", "core", pod_up[p] / core_oversubscription, "aggregation-core")

    def middle(ns, js, nd, jd):
        (rs, rd) = ns // rack_nodes, nd // rack_nodes
        if rs == rd:
            return [f"tor{rs}"]
        (ps, pd) = rs // pod_racks, rd // pod_racks
        return (
            [f"tor{rs}", f"pod{ps}", f"tor{rd}"]
            if ps == pd
            else [f"tor{rs}", f"pod{ps}", "core", f"pod{pd}", f"tor{rd}"]
        )

    return g, _router(c, middle)


def dragonfly(c: Cluster, routers: int = 8, router_nodes: int = 4):
    """Dragonfly (Kim, Dally, Scott, Abts, ISCA 2008): groups of `routers` routers joined all-to-all
    by local links; `router_nodes` nodes on each router; one global link between every two groups,
    group g's link to group h on its router ((h - g - 1) mod G) // ceil((G - 1) / routers). Every
    router-to-router link runs at the NIC rate x NICs of a node. Minimal routing: local hop to the
    router holding the global link, global link, local hop to the destination's router."""
    import networkx as nx

    if routers < 1 or router_nodes < 1:
        raise UsageError(f"routers {routers}, nodes per router {router_nodes}: give at least 1 of each")
    per_group = routers * router_nodes
    groups = -(-c.nodes // per_group)
    h = max(1, -(-(groups - 1) // routers))
    link_Bps = c.inter.bandwidth_Bps * c.nics_per_node
    g = nx.Graph()
    _nodes(g, c, lambda n, j: f"g{n // per_group}.r{n % per_group // router_nodes}")
    used = {n // router_nodes for n in range(c.nodes)}  # (group, router) pairs that exist

    def name(gr: int, r: int) -> str:
        return f"g{gr}.r{r}"

    for gr in range(groups):
        here = [r for r in range(routers) if gr * routers + r in used]
        for i, u in enumerate(here):
            for v in here[i + 1 :]:
                _trunk(g, name(gr, u), name(gr, v), link_Bps, "local")

    def gateway(gs: int, gd: int) -> int:
        return ((gd - gs - 1) % groups) // h

    for gs in range(groups):
        for gd in range(gs + 1, groups):
            a, b = (gs, gateway(gs, gd)), (gd, gateway(gd, gs))
            for gr, r in (a, b):  # a gateway router with no nodes still routes
                g.add_node(name(gr, r))
            for gr, r in (a, b):
                for v in range(routers):
                    if v != r and gr * routers + v in used and not g.has_edge(name(gr, r), name(gr, v)):
                        _trunk(g, name(gr, r), name(gr, v), link_Bps, "local")
            _trunk(g, name(*a), name(*b), link_Bps, "global")

    def middle(ns, js, nd, jd):
        (gs, rs), (gd, rd) = divmod(ns // router_nodes, routers), divmod(nd // router_nodes, routers)
        if gs == gd:
            return [name(gs, rs)] if rs == rd else [name(gs, rs), name(gd, rd)]
        out, into = gateway(gs, gd), gateway(gd, gs)
        path = [name(gs, rs)] + ([name(gs, out)] if out != rs else []) + [name(gd, into)]
        return path + ([name(gd, rd)] if rd != into else [])

    return g, _router(c, middle)


def options(text: str, kind: str, given: str) -> dict:
    """The options after the commas of a fabric spec (rail:64x8,su=16), as keyword arguments."""
    known, out = OPTIONS[kind], {}
    for item in filter(None, given.split(",")):
        key, _, value = item.partition("=")
        if key not in known:
            raise UsageError(
                f"topology {text}: unknown option {key!r} for {kind}; expected "
                f"{', '.join(known)} (e.g. {kind}:64x8,{next(iter(known))}=...)"
            )
        name, kind_of = known[key]
        try:
            out[name] = kind_of(value)
        except ValueError:
            raise UsageError(
                f"topology {text}: {key}={value} is not a {'whole ' if kind_of is int else ''}number"
            ) from None
    return out
