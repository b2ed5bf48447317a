"""Topologies: ranks, switches and full-duplex links (networkx), routes, presets, a JSON file format.

A topology is an undirected multigraph-free graph whose vertices are ranks (ints 0..p-1) and other
devices (strings: switches, NICs, CPUs). Every edge is a full-duplex link with `latency_s` and
`bandwidth_Bps` per direction. Each rank also has a port: what it can inject (and eject) per second
in all, `port_Bps` (default: the sum of its links, i.e. no extra limit). Routes are shortest paths
by hop count (ties broken by the lowest-numbered path), unless given explicitly.

File format (JSON):
    {"name": "my-box", "ranks": 4,
     "devices": ["sw"],                                   # non-rank vertices
     "links": [{"a": 0, "b": "sw", "latency": "1us", "bandwidth": "25GB/s"}, ...],
     "ports": {"0": "25GB/s"},                            # optional per-rank port limits
     "routes": {"0-3": [0, "sw", 3]}}                     # optional explicit routes
"""

from __future__ import annotations

import itertools
import math
import re
from pathlib import Path

from collperf import units
from collperf.errors import UsageError
from collperf.jsonfile import read_json
from collperf.model.network import Cluster, Link
from collperf.model.hardware.catalogue import resolve_name
from collperf.model.hardware.presets import get_preset
from collperf.topology import fabrics
from collperf.topology.graph import Topology


MAX_RANKS = 1 << 16


def load(path) -> Topology:
    """Read a topology file (format in the module docstring); errors name the file and the field."""
    return from_json(read_json(path, "topology file"), str(path))


def from_json(doc: dict, where: str = "topology") -> Topology:
    """A topology from its JSON document; every inconsistency is a UsageError naming the field."""
    import networkx as nx

    if not isinstance(doc, dict):
        raise UsageError(
            f"{where}: expected a JSON object with ranks, links (and devices, ports, routes), "
            f"got a {type(doc).__name__ if not isinstance(doc, list) else 'JSON array'}"
        )
    try:
        ranks = int(doc["ranks"])
        if not 1 <= ranks <= MAX_RANKS:  # a graph node per rank: a typo'd 10**30 would never finish
            raise ValueError(f"ranks {ranks} must be 1..{MAX_RANKS}")
        devices = [_vertex(v) for v in doc.get("devices", [])]
        graph = nx.Graph()
        graph.add_nodes_from(range(ranks))
        graph.add_nodes_from(devices)
        known = set(range(ranks)) | set(devices)
        for i, link in enumerate(doc["links"]):
            a, b = _vertex(link["a"]), _vertex(link["b"])
            for end in (a, b):
                if end not in known:
                    what = (
                        f"rank {end} >= ranks ({ranks})" if isinstance(end, int) else f"device {end!r} is not declared"
                    )
                    raise ValueError(
                        f'links[{i}] ({a} - {b}): {what}; declare devices in "devices" and use ranks 0..{ranks - 1}'
                    )
            if a == b:
                raise ValueError(f"links[{i}] joins {a!r} to itself")
            if graph.has_edge(a, b):
                raise ValueError(f"links[{i}] ({a} - {b}) is given twice: links are full-duplex, give each pair once")
            graph.add_edge(
                a,
                b,
                latency_s=units.parse_time(link["latency"]),
                bandwidth_Bps=units.parse_bandwidth(link["bandwidth"]),
                name=link.get("name", ""),
            )
        for rank, rate in doc.get("ports", {}).items():
            if _vertex(rank) not in range(ranks):
                raise ValueError(f"ports[{rank!r}]: not a rank of 0..{ranks - 1}")
            graph.nodes[int(rank)]["port_Bps"] = units.parse_bandwidth(rate)
        routes = {}
        for pair, path in doc.get("routes", {}).items():
            ends = _route_ends(pair, ranks)
            routes[ends] = _route(ends, pair, [_vertex(v) for v in path], graph)
    except KeyError as e:
        raise UsageError(
            f"{where}: missing field {e.args[0]!r}; see the format in `collperf simulate --help`"
        ) from None
    except (TypeError, ValueError, AttributeError, OverflowError) as e:  # OverflowError: "ranks": Infinity
        raise UsageError(f"{where}: {e}") from None
    return Topology(doc.get("name", where), ranks, graph, routes)


def _route_ends(pair: str, ranks: int) -> tuple[int, int]:
    s, sep, d = str(pair).partition("-")
    if not (sep and s.isdigit() and d.isdigit() and int(s) < ranks and int(d) < ranks):
        raise ValueError(f'routes[{pair!r}]: expected SRC-DST with ranks of 0..{ranks - 1}, e.g. "0-3"')
    return int(s), int(d)


def _route(ends: tuple[int, int], pair: str, path: list, graph) -> list:
    """A route must start at its source, end at its destination, follow links and visit no vertex twice."""
    s, d = ends
    if len(path) < 2 or path[0] != s or path[-1] != d:
        raise ValueError(f"routes[{pair!r}]: the path must run from {s} to {d}, got {path}")
    if len(set(path)) != len(path):
        raise ValueError(f"routes[{pair!r}]: the path {path} visits a vertex twice (a loop)")
    for u, v in zip(path[:-1], path[1:]):
        if not graph.has_edge(u, v):
            raise ValueError(f"routes[{pair!r}]: {u} - {v} is not a link of the topology")
    return path


def _vertex(v):
    return int(v) if isinstance(v, int) or (isinstance(v, str) and v.isdigit()) else v


def subset(topo: Topology, ranks) -> Topology:
    """A group's view of `topo`: its rank i is topo's rank ranks[i]. Every other rank becomes a
    device named "rank{r}" (node attribute `rank` = r) that still carries traffic, cut-through like a
    switch. Explicit routes and the router are kept, renamed (those to or from idle ranks dropped)."""
    import networkx as nx

    try:
        group = [int(r) for r in ranks]
    except (TypeError, ValueError):
        raise UsageError(f"ranks {ranks!r}: expected rank numbers such as 0,1,4") from None
    bad = [r for r in group if not 0 <= r < topo.ranks]
    if bad or len(set(group)) != len(group) or not group:
        raise UsageError(
            f"ranks {group} on topology {topo.name!r}: expected distinct ranks of 0..{topo.ranks - 1}, at least one"
        )
    local = {r: i for i, r in enumerate(group)}

    def rename(v):
        return local.get(v, f"rank{v}") if isinstance(v, int) else v

    g = nx.relabel_nodes(topo.graph, rename, copy=True)
    for r in range(topo.ranks):
        if r not in local:
            g.nodes[f"rank{r}"]["rank"] = r
    routes = {
        (local[s], local[d]): [rename(v) for v in path]
        for (s, d), path in topo.routes.items()
        if s in local and d in local
    }
    router = None
    if topo.router is not None:

        def router(src: int, dst: int) -> list:
            return [rename(v) for v in topo.router(group[src], group[dst])]

    name = f"{topo.name}[{','.join(map(str, group))}]"
    return Topology(name, len(group), g, routes, router)


# --- presets --------------------------------------------------------------------------------


def full_mesh(p: int, link: Link) -> Topology:
    """Every pair one hop apart; each rank injects and ejects at the link rate (the closed forms'
    full-duplex port model), so on this topology simulation equals the closed form."""
    import networkx as nx

    g = nx.Graph()
    g.add_nodes_from(range(p), port_Bps=link.bandwidth_Bps)
    g.add_edges_from(
        itertools.combinations(range(p), 2), latency_s=link.latency_s, bandwidth_Bps=link.bandwidth_Bps, name="mesh"
    )
    if p == 1:
        g.nodes[0]["port_Bps"] = link.bandwidth_Bps
    return Topology(f"mesh:{p}", p, g)


def single_switch(p: int, link: Link) -> Topology:
    """Each rank's one NIC to a non-blocking switch; the link's latency is split over the two hops."""
    import networkx as nx

    g = nx.Graph()
    for r in range(p):
        g.add_edge(r, "switch", latency_s=link.latency_s / 2, bandwidth_Bps=link.bandwidth_Bps, name="nic")
    return Topology(f"switch:{p}", p, g)


def ring(p: int, link: Link) -> Topology:
    import networkx as nx

    g = nx.Graph()
    g.add_nodes_from(range(p))
    for r in range(p):
        if p > 1:
            g.add_edge(r, (r + 1) % p, latency_s=link.latency_s, bandwidth_Bps=link.bandwidth_Bps, name="ring")
    return Topology(f"ring:{p}", p, g)


def two_level(cluster: Cluster, intra: str = "switch", oversubscription: float = 1.0) -> Topology:
    """Nodes with an intra-node switch (NVSwitch-like) or an NVLink full mesh; NICs shared by
    ranks_per_node / nics_per_node ranks each; a fabric switch; optional oversubscription of each
    node's uplinks (node NIC bandwidth / oversubscription reaches the fabric)."""
    import networkx as nx

    if intra not in ("switch", "mesh"):
        raise UsageError(f"intra-node fabric {intra!r}: expected 'switch' or 'mesh'")
    if not oversubscription >= 1:
        raise UsageError(f"oversubscription {oversubscription} is below 1: give 1 (non-blocking) or more")
    g = nx.Graph()
    gpn, nodes = cluster.ranks_per_node, cluster.nodes
    a, nic = cluster.intra, cluster.inter
    for n in range(nodes):
        ranks = [n * gpn + i for i in range(gpn)]
        g.add_nodes_from(ranks, port_Bps=a.bandwidth_Bps + nic.bandwidth_Bps * cluster.nics_per_node / gpn)
        if intra == "switch":
            for r in ranks:
                g.add_edge(r, f"n{n}.switch", latency_s=a.latency_s / 2, bandwidth_Bps=a.bandwidth_Bps, name="intra")
        else:
            g.add_edges_from(
                itertools.combinations(ranks, 2), latency_s=a.latency_s, bandwidth_Bps=a.bandwidth_Bps, name="intra"
            )
        if nodes == 1:
            continue
        uplink = f"n{n}.leaf" if oversubscription > 1 else "fabric"
        for j in range(cluster.nics_per_node):
            # a rank reaches its NIC for free: the PCIe attach is not the bottleneck modelled here
            for i in range(gpn):
                if _nic_of(i, gpn, cluster.nics_per_node) == j:
                    g.add_edge(n * gpn + i, f"n{n}.nic{j}", latency_s=0.0, bandwidth_Bps=math.inf, name="attach")
            # the NIC's latency is split over the two NIC hops of an inter-node route
            g.add_edge(f"n{n}.nic{j}", uplink, latency_s=nic.latency_s / 2, bandwidth_Bps=nic.bandwidth_Bps, name="nic")
        if oversubscription > 1:
            g.add_edge(
                uplink,
                "fabric",
                latency_s=0.0,
                bandwidth_Bps=nic.bandwidth_Bps * cluster.nics_per_node / oversubscription,
                name="uplink",
            )

    def route(src: int, dst: int) -> list:
        (ns, ls), (nd, ld) = divmod(src, gpn), divmod(dst, gpn)
        if ns == nd:
            return [src, f"n{ns}.switch", dst] if intra == "switch" else [src, dst]
        up = [f"n{ns}.leaf", "fabric", f"n{nd}.leaf"] if oversubscription > 1 else ["fabric"]
        return [
            src,
            f"n{ns}.nic{_nic_of(ls, gpn, cluster.nics_per_node)}",
            *up,
            f"n{nd}.nic{_nic_of(ld, gpn, cluster.nics_per_node)}",
            dst,
        ]

    return Topology(f"cluster:{nodes}x{gpn}", nodes * gpn, g, router=route, shape=(nodes, gpn))


def _nic_of(local: int, gpn: int, nics: int) -> int:
    """The NIC a local rank uses: ranks share NICs evenly (with more NICs than ranks, the first)."""
    return local * nics // gpn


_NV = 25e9  # one NVLink2 link, per direction (NVIDIA V100 datasheet: 6 links, 300 GB/s bidirectional)
_PCIE3 = 12e9  # NCCL topo.h PCI_BW for Gen3 x16 (Blink appendix: PCIe 8-12 GB/s)


def dgx1v(nvlink_latency_s: float = 1e-6, pcie_latency_s: float = 2e-6) -> Topology:
    """DGX-1 (Volta): NVLink2 hybrid cube-mesh (nvidia-smi topo -m: NV1/NV2 between the GPUs below;
    1 and 4 have no NVLink, as the Blink appendix notes) plus its PCIe tree: GPU pairs on four PCIe
    switches, two per CPU, the CPUs joined by QPI."""
    import networkx as nx

    nv = {
        (0, 1): 1,
        (0, 2): 1,
        (0, 3): 2,
        (0, 4): 2,
        (1, 2): 2,
        (1, 3): 1,
        (1, 5): 2,
        (2, 3): 2,
        (2, 6): 1,
        (3, 7): 1,
        (4, 5): 1,
        (4, 6): 1,
        (4, 7): 2,
        (5, 6): 2,
        (5, 7): 1,
        (6, 7): 2,
    }
    g = nx.Graph()
    for (u, v), count in nv.items():
        g.add_edge(u, v, latency_s=nvlink_latency_s, bandwidth_Bps=count * _NV, name=f"NV{count}")
    for gpu in range(8):
        g.add_edge(gpu, f"plx{gpu // 2}", latency_s=pcie_latency_s / 2, bandwidth_Bps=_PCIE3, name="pcie")
    for s in range(4):
        g.add_edge(f"plx{s}", f"cpu{s // 2}", latency_s=0.0, bandwidth_Bps=_PCIE3, name="pcie")
    g.add_edge("cpu0", "cpu1", latency_s=0.0, bandwidth_Bps=10e9, name="qpi")  # NCCL topo.h SKL QPI 10 GB/s
    return Topology("dgx1v", 8, g)


def dgx2(latency_s: float = 1e-6) -> Topology:
    """DGX-2: 16 V100 on NVSwitch, 6 NVLink2 links (150 GB/s per direction) from each GPU."""
    return _renamed(single_switch(16, Link(latency_s, 6 * _NV)), "dgx2")


def _renamed(topo: Topology, name: str) -> Topology:
    topo.name = name
    return topo


def rail_fat_tree(cluster: Cluster, su_nodes: int = 32, oversubscription: float = 1.0, name: str = "") -> Topology:
    """Rail-optimized leaf/spine: NIC j of each node to its scalable unit's leaf of rail j (fabrics.py)."""
    return _fabric(
        name or f"rail:{cluster.nodes}x{cluster.ranks_per_node}",
        cluster,
        fabrics.rail_fat_tree(cluster, su_nodes, oversubscription),
    )


def fat_tree(
    cluster: Cluster,
    rack_nodes: int = 16,
    pod_racks: int = 8,
    oversubscription: float = 1.0,
    core_oversubscription: float = 1.0,
    name: str = "",
) -> Topology:
    """3-tier fat-tree (top-of-rack, aggregation, core), oversubscribed k:1 at the racks and the pods (fabrics.py)."""
    return _fabric(
        name or f"fattree:{cluster.nodes}x{cluster.ranks_per_node}",
        cluster,
        fabrics.fat_tree(cluster, rack_nodes, pod_racks, oversubscription, core_oversubscription),
    )


def dragonfly(cluster: Cluster, routers: int = 8, router_nodes: int = 4, name: str = "") -> Topology:
    """Dragonfly: all-to-all groups of routers, one global link between every two groups (fabrics.py)."""
    return _fabric(
        name or f"dragonfly:{cluster.nodes}x{cluster.ranks_per_node}",
        cluster,
        fabrics.dragonfly(cluster, routers, router_nodes),
    )


def _fabric(name: str, cluster: Cluster, built) -> Topology:
    graph, route = built
    return Topology(name, cluster.ranks, graph, router=route, shape=(cluster.nodes, cluster.ranks_per_node))


def nvl72(racks: int, cluster: Cluster | None = None) -> Topology:
    """`racks` NVL72 domains: 72 GPUs each on the rack's NVLink switches, one NIC per GPU to a
    non-blocking fabric. `cluster`: other links (its intra link for NVLink, its NIC for the network)."""
    base = cluster or fabrics.NVL72
    return _renamed(two_level(Cluster(racks, 72, base.intra, base.inter, 72, "nvl72")), f"nvl72:{racks}")


_SPEC = re.compile(r"^(mesh|switch|ring):(\d+)$|^cluster:(\d+)x(\d+)$")
_FABRIC = re.compile(r"^(rail|fattree|dragonfly):(\d+)x(\d+)((?:,[a-z-]+=[0-9.]+)*)$")
_BUILD = {"rail": rail_fat_tree, "fattree": fat_tree, "dragonfly": dragonfly}
# every form parse takes, named once: its error and the --topology help of the commands that call it say this
KINDS = (
    "dgx1v, dgx2, mesh:P, switch:P, ring:P, cluster:NxG, rail:NxG[,su=32,oversub=1], "
    "fattree:NxG[,rack=16,pod=8,oversub=1,core-oversub=1], dragonfly:NxG[,routers=8,router-nodes=4], "
    "nvl72:RACKS or a .json file"
)


def parse(spec: str, link: Link | None = None, cluster: Cluster | None = None) -> Topology:
    """dgx1v | dgx2 | mesh:P | switch:P | ring:P | cluster:NxG | rail:NxG | fattree:NxG | dragonfly:NxG
    (options after commas) | nvl72:RACKS | a JSON file. Cluster fabrics take their links from `cluster`
    (default: the nvlink300-400gbe preset with one NIC per GPU)."""
    text = str(spec).strip()
    if text == "dgx1v":
        return dgx1v()
    if text == "dgx2":
        return dgx2()
    match = _SPEC.match(text)
    if match and match.group(1):
        if link is None:
            raise UsageError(f"topology {text} needs a link: give --latency and --bandwidth")
        p = int(match.group(2))
        if p < 1:
            raise UsageError(f"topology {text}: needs at least one rank")
        return {"mesh": full_mesh, "switch": single_switch, "ring": ring}[match.group(1)](p, link)
    if match:
        return two_level(_cluster(text, int(match.group(3)), int(match.group(4)), cluster))
    fabric = _FABRIC.match(text)
    if fabric:
        kind = fabric.group(1)
        c = _cluster(text, int(fabric.group(2)), int(fabric.group(3)), cluster)
        return _BUILD[kind](c, **fabrics.options(text, kind, fabric.group(4)), name=text)
    if text.startswith("nvl72:") and text[6:].isdigit() and int(text[6:]) >= 1:
        return nvl72(int(text[6:]), cluster)
    if text.endswith(".json") or Path(text).exists():
        return load(text)
    try:
        resolve_name(text)
    except UsageError:
        raise UsageError(f"unknown topology {spec!r}: expected {KINDS}") from None
    # a catalogue system named where a topology goes: the system's links come with --cluster, the shape with -t
    raise UsageError(
        f"{spec!r} is a system of the catalogue, not a topology: give it as --cluster {text} "
        f"(its links priced) and the shape as --topology, e.g. cluster:2x8 for 2 nodes of 8 GPUs; "
        f"expected a topology: {KINDS}"
    )


def _cluster(text: str, nodes: int, gpn: int, cluster: Cluster | None) -> Cluster:
    """NxG nodes of a cluster fabric, with the given cluster's links (default: one NIC per GPU)."""
    if nodes < 1 or gpn < 1:
        raise UsageError(f"topology {text}: needs at least one node of at least one rank")
    base = cluster or get_preset("nvlink300-400gbe")
    return Cluster(nodes, gpn, base.intra, base.inter, base.nics_per_node if cluster else gpn, base.name)
