"""A topology laid out as a testbed, the pure part: namespaces, point-to-point links, addresses, routes.

Every vertex of the topology (a rank: an emulated host; a device: a switch, a PCIe switch, a CPU) becomes
one network namespace. Every link becomes one veth pair between the two namespaces, shaped in each
direction to the link's own rate (switch.py shape_commands). Every vertex owns one /32 address on an interface of
its own (`id0`, which nothing else uses), so that a rank's address does not depend on the link a packet
arrives by. Host routes send each rank's traffic to each other rank along the topology's own route
(Topology.path: explicit routes, else fewest hops with the lowest-numbered path): the first hop is a
route on the source, every vertex in between forwards (net.ipv4.ip_forward=1) by its own host route to
the destination. Kernel routes are per destination, so a vertex must send everything for one
destination the same way: `plan` refuses a topology whose routes ask one vertex for two next hops to
one destination (give explicit routes that agree, or drop them). Every vertex also has a direct route
to each neighbour (what `calibrate` uses to measure each link), unless a rank route says otherwise.

Presets: `dgx1v-like`, the DGX-1 (Volta) hybrid cube-mesh of topology.dgx1v scaled to what one box can
shape and forward: one NVLink 100 Mbit/s, two 200 Mbit/s, PCIe 48 Mbit/s, QPI 40 Mbit/s (the ratios
25 : 12 : 10 GB/s of the real machine). GPUs without an NVLink between them talk through the PCIe tree
and the CPUs, the way CUDA peer-to-peer goes without NVLink: a slower path that those pairs share.

Pure: no I/O; lab/testbed/routed.py runs the plan.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, field

from collperf import topology as topologies, units
from collperf.errors import UsageError
from collperf.topology import dgx1v, Topology

PRESETS = ("dgx1v-like",)
NV1_RATE = "100mbit"  # dgx1v-like: one NVLink on the box
_MAX_VERTICES = 250  # addresses 10.B.0.1 .. 10.B.0.250


@dataclass(frozen=True)
class LinkPlan:
    """One point-to-point link: a veth pair, `dev_a` in a's namespace, `dev_b` in b's."""

    a: object
    b: object
    dev_a: str
    dev_b: str
    rate_Bps: float
    latency_s: float
    name: str = ""


@dataclass
class Plan:
    name: str  # the testbed's name (namespaces cptb-NAME-...)
    topology: Topology  # with an explicit route for every pair of ranks
    namespace: dict  # vertex -> namespace
    address: dict  # vertex -> its /32 address
    links: list[LinkPlan]
    next_hop: dict  # vertex -> {destination vertex: (next vertex, device)}
    notes: list[str] = field(default_factory=list)

    @property
    def vertices(self) -> list:
        return list(self.namespace)

    def route(self, src, dst) -> list:
        """The vertices a packet from src to dst crosses, read off the planned next hops."""
        path, v = [src], src
        while v != dst:
            v = self.next_hop[v][dst][0]
            path.append(v)
            if len(path) > len(self.namespace) + 1:
                raise AssertionError(f"routing loop from {src} to {dst}: {path}")
        return path

    def link_between(self, u, v) -> LinkPlan:
        for link in self.links:
            if {link.a, link.b} == {u, v}:
                return link
        raise KeyError((u, v))


def _sort_key(v):
    return (0, v, "") if isinstance(v, int) else (1, 0, str(v))


def namespace_names(topo: Topology, name: str, prefix: str = "cptb") -> dict:
    """Ranks are hosts NAME-h<r> (as on the switch testbed); devices NAME-d<i> in sorted order."""
    devices = sorted((v for v in topo.graph if not isinstance(v, int)), key=str)
    out = {r: f"{prefix}-{name}-h{r}" for r in range(topo.ranks)}
    out.update({d: f"{prefix}-{name}-d{i}" for i, d in enumerate(devices)})
    return out


def addresses(vertices: list, name: str) -> dict:
    """10.B.0.(i+1)/32 for the i-th vertex (ranks first): private to the namespaces, B from the name."""
    base = 77 + zlib.crc32(name.encode()) % 100
    return {v: f"10.{base}.0.{i + 1}" for i, v in enumerate(vertices)}


def with_routes(topo: Topology) -> Topology:
    """The topology with its route for every ordered pair of ranks written out (what the testbed installs,
    and what the simulator and the packing then follow)."""
    routes = {(s, d): list(topo.path(s, d)) for s in range(topo.ranks) for d in range(topo.ranks) if s != d}
    return Topology(topo.name, topo.ranks, topo.graph, routes, None, topo.shape)


def plan(topo: Topology, name: str) -> Plan:
    """Namespaces, links, addresses and next hops for `topo` on a testbed called `name`."""
    if not re.fullmatch(r"[a-z0-9]{1,6}", name):
        raise UsageError(f"testbed name {name!r}: expected 1 to 6 lowercase letters or digits")
    ns = namespace_names(topo, name)
    vertices = sorted(ns, key=_sort_key)
    if len(vertices) > _MAX_VERTICES:
        raise UsageError(
            f"topology {topo.name!r} has {len(vertices)} vertices; a testbed holds at most {_MAX_VERTICES}"
        )
    ns = {v: ns[v] for v in vertices}
    index = {v: i for i, v in enumerate(vertices)}
    routed = with_routes(topo)
    links, dev = [], {}
    for u, v, attrs in sorted(topo.graph.edges(data=True), key=lambda e: (_sort_key(e[0]), _sort_key(e[1]))):
        rate = attrs["bandwidth_Bps"]
        if not rate > 0:
            raise UsageError(f"link {u} - {v} of {topo.name!r}: bandwidth {rate} must be positive")
        # the device on each side is named after the vertex at the other end: l<its index>
        dev[(u, v)], dev[(v, u)] = f"l{index[v]}", f"l{index[u]}"
        links.append(LinkPlan(u, v, dev[(u, v)], dev[(v, u)], rate, attrs.get("latency_s", 0.0), attrs.get("name", "")))
    next_hop: dict = {v: {} for v in vertices}
    owner: dict = {}  # (vertex, destination) -> the route that set it
    for (s, d), path in sorted(routed.routes.items()):
        for here, after in zip(path[:-1], path[1:]):
            have = next_hop[here].get(d)
            if have is not None and have[0] != after:
                raise UsageError(
                    f"topology {topo.name!r}: the routes {owner[(here, d)][0]}->{d} ({_fmt(owner[(here, d)][1])}) and "
                    f"{s}->{d} ({_fmt(path)}) leave {here} for {d} by different links ({have[0]} and {after}); a "
                    "testbed routes by destination only: give routes that agree where they meet, or drop them"
                )
            next_hop[here][d] = (after, dev[(here, after)])
            owner.setdefault((here, d), (s, path))
    for u, v in list(dev):
        next_hop[u].setdefault(v, (v, dev[(u, v)]))  # every neighbour directly, unless routed
    notes = []
    unshaped = [f"{link.a}-{link.b}" for link in links if link.rate_Bps == float("inf")]
    if unshaped:
        notes.append(f"links of infinite bandwidth are not shaped: {', '.join(unshaped)}")
    if any(link.latency_s > 0 for link in links):
        notes.append("link latencies are not emulated (no netem here): the network stack's own latency applies")
    return Plan(name, routed, ns, addresses(vertices, name), links, next_hop, notes)


def _fmt(path) -> str:
    return "-".join(map(str, path))


# --- presets --------------------------------------------------------------------------------------


def dgx1v_like(nv1_rate: str = NV1_RATE) -> Topology:
    """topology.dgx1v scaled so that one NVLink is `nv1_rate`, latencies left to the network stack, and
    GPU pairs without an NVLink routed through the PCIe switches and CPUs (QPI between the CPUs)."""
    import networkx as nx  # networkx where it is used: the testbed's other plans do not need it

    base = dgx1v()
    scale = units.parse_bandwidth(nv1_rate) / 25e9  # topology._NV: one NVLink2, per direction
    g = nx.Graph()
    for u, v, attrs in base.graph.edges(data=True):
        g.add_edge(u, v, latency_s=0.0, bandwidth_Bps=attrs["bandwidth_Bps"] * scale, name=attrs["name"])
    pcie = nx.Graph((u, v) for u, v, a in g.edges(data=True) if not str(a["name"]).startswith("NV"))
    routes = {}
    for s in range(8):
        for d in range(8):
            if s != d:
                routes[(s, d)] = [s, d] if g.has_edge(s, d) else nx.shortest_path(pcie, s, d)
    return Topology("dgx1v-like", 8, g, routes)


def parse(spec: str) -> Topology:
    """dgx1v-like, or a topology file / preset topology.parse knows (its rates are the box's own)."""
    text = str(spec).strip()
    if text == "dgx1v-like":
        return dgx1v_like()
    try:
        return topologies.parse(text)
    except UsageError as e:
        raise UsageError(
            f"testbed topology {spec!r}: {e}; expected dgx1v-like or a topology .json file "
            '(rates the box can shape, e.g. "100mbit")'
        ) from None
