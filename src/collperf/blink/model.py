"""Blink against rings on heterogeneous machines: ring rates as NCCL builds them, packed-tree
broadcast and allreduce times with the best root, the hybrid PCIe + NVLink split (Blink appendix
A.2, equation 8) and single-hop trees on a switch (appendix A.3).

Source: Wang et al., "Blink: Fast and Generic Collectives for Distributed ML", MLSys 2020, appendix A.
Pure: networkx is imported inside the functions.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from collperf.blink.packing import link_kind, pack, Packing
from collperf.errors import UsageError
from collperf.model.costs import cost

# --- rings as NCCL builds them ---------------------------------------------------------------------


@dataclass(frozen=True)
class Rings:
    kind: str  # "nvlink" (direct NVLinks only) or "pcie"
    rings: tuple[tuple[int, ...], ...]  # topology ranks in ring order
    rate_Bps: float  # all rings together: what a ring broadcast moves per second

    def describe(self) -> str:
        return f"{len(self.rings)} {self.kind} ring(s), {self.rate_Bps / 1e9:.4g} GB/s: " + "; ".join(
            "->".join(map(str, r)) for r in self.rings
        )


def nccl_rings(topo, ranks) -> Rings:
    """NCCL's rings on a group: rings over direct NVLinks between the group's GPUs when a Hamiltonian
    NVLink cycle exists (NCCL does not route NVLink traffic through other GPUs on V100; it packs as
    many rings as the links' lanes allow, both directions, e.g. the appendix's 0->1->3->0 and
    0->3->1->0); otherwise one ring in GPU order through PCIe (NCCL falls back on PCIe/QPI when
    the NVLink ring is missing, appendix A.2 on GPUs 0,1,4). A ring moves data at its slowest hop,
    counting the hops that share a link; rings on disjoint lanes add up. We pack rings greedily,
    widest first, each at its bottleneck residual capacity."""
    group = [int(r) for r in ranks]
    if len(group) < 2:
        return Rings("nvlink", (tuple(group),), math.inf)
    residual = {}
    for u, v, attrs in topo.graph.edges(data=True):
        if u in group and v in group and link_kind(attrs) == "nvlink":
            residual[(u, v)] = residual[(v, u)] = attrs["bandwidth_Bps"]
    rings, total = [], 0.0
    while True:
        best, best_rate = None, 0.0
        for rest in itertools.permutations(group[1:]):
            cycle = (group[0], *rest)
            rate = min(residual.get((a, b), 0.0) for a, b in zip(cycle, cycle[1:] + cycle[:1]))
            if rate > best_rate * (1 + 1e-12):
                best, best_rate = cycle, rate
        if best is None:
            break
        for a, b in zip(best, best[1:] + best[:1]):
            residual[(a, b)] -= best_rate
        rings.append(best)
        total += best_rate
    if rings:
        return Rings("nvlink", tuple(rings), total)
    return Rings("pcie", (tuple(sorted(group)),), _pcie_ring_rate(topo, sorted(group)))


def _pcie_ring_rate(topo, ring) -> float:
    import networkx as nx

    pcie = nx.Graph([(u, v, d) for u, v, d in topo.graph.edges(data=True) if link_kind(d) != "nvlink"])
    load: dict = {}
    for a, b in zip(ring, ring[1:] + ring[:1]):
        try:
            path = nx.shortest_path(pcie, a, b)
        except (nx.NetworkXNoPath, nx.NodeNotFound):
            raise UsageError(
                f"topology {topo.name!r}: ranks {a} and {b} are joined by neither NVLink nor PCIe"
            ) from None
        for hop in zip(path[:-1], path[1:]):
            load[hop] = load.get(hop, 0) + 1
    return min(topo.link(u, v)["bandwidth_Bps"] / n for (u, v), n in load.items())


# --- packed-tree times ------------------------------------------------------------------------------


def allreduce_time_s(packing: Packing, size_bytes, overlap: bool = True):
    """Reduce up the packed trees then broadcast down the same trees (Blink's AllReduce).
    overlap=False: the two phases one after the other, size/rate_up + size/rate_down.
    overlap=True: a segment is broadcast as soon as it is reduced, so both phases share the links:
    size x max over links (up + down load) / capacity, between size/rate and 2 size/rate.
    Bandwidth terms only (the pipeline's fill and latencies: simulate the schedule)."""
    n = np.asarray(size_bytes, dtype=float)
    rate = packing.rate_Bps
    down = {e: load / rate for e, load in packing.loads.items()}  # seconds per byte of data, per link
    caps = _capacities(packing)
    up = {(v, u): x for (u, v), x in down.items()}
    per_byte_up = max((x / caps[e] for e, x in up.items()), default=0.0)
    per_byte_down = max((x / caps[e] for e, x in down.items()), default=0.0)
    if not overlap:
        return n * (per_byte_up + per_byte_down)
    both = {e: down.get(e, 0.0) + up.get(e, 0.0) for e in set(down) | set(up)}
    return n * max((x / caps[e] for e, x in both.items()), default=0.0)


def _capacities(packing: Packing) -> dict:
    g = packing.topology.graph
    return {(u, v): g.edges[u, v]["bandwidth_Bps"] for u, v in g.edges} | {
        (v, u): g.edges[u, v]["bandwidth_Bps"] for u, v in g.edges
    }


def best_root(topo, ranks, collective: str = "broadcast", size_bytes: float = 1 << 30, **options):
    """(root, packing, time_s) of the fastest root for a broadcast or an allreduce of size_bytes."""
    if collective not in ("broadcast", "allreduce"):
        raise UsageError(f"collective {collective!r}: the best root is defined for broadcast and allreduce")
    best = None
    for root in ranks:
        packing = pack(topo, ranks, [root], **options)
        t = size_bytes / packing.rate_Bps if collective == "broadcast" else float(allreduce_time_s(packing, size_bytes))
        if best is None or t < best[2] * (1 - 1e-12):
            best = (root, packing, t)
    return best


# --- hybrid PCIe + NVLink (appendix A.2, equation 8) -----------------------------------------------


def hybrid_split(size_bytes, pcie_Bps: float, nvlink_Bps: float, t_dpa_s: float = 0.0):
    """(D_PCIe, D_NVL, time_s) that equalise T_PCIe = T_dpa + D_PCIe / BW_PCIe and T_NVL = D_NVL / BW_NVL.

    Solving T_PCIe = T_NVL gives D_PCIe = (D BW_PCIe - T_dpa BW_PCIe BW_NVL) / (BW_PCIe + BW_NVL), the
    appendix's equation 8 (as printed, its second numerator reads "T_dpa x BW_PCIe + BW_NVL", which
    is not a number of bytes; the product is what the equality gives). When T_dpa outweighs the gain,
    D_PCIe < 0: PCIe is not used (D_PCIe = 0, no T_dpa paid)."""
    if min(pcie_Bps, nvlink_Bps) <= 0 or t_dpa_s < 0:
        raise UsageError(
            f"hybrid split needs positive bandwidths and T_dpa >= 0, got {pcie_Bps}, {nvlink_Bps}, {t_dpa_s}"
        )
    d = np.asarray(size_bytes, dtype=float)
    d_pcie = np.clip((d * pcie_Bps - t_dpa_s * pcie_Bps * nvlink_Bps) / (pcie_Bps + nvlink_Bps), 0.0, d)
    d_nvl = d - d_pcie
    time_s = np.maximum(np.where(d_pcie > 0, t_dpa_s + d_pcie / pcie_Bps, 0.0), d_nvl / nvlink_Bps)
    return d_pcie, d_nvl, time_s


@dataclass(frozen=True)
class Hybrid:
    ranks: tuple[int, ...]
    nvlink: Packing
    pcie: Packing
    size_bytes: float
    t_dpa_s: float
    pcie_bytes: float
    time_s: float

    @property
    def nvlink_only_Bps(self) -> float:
        return self.nvlink.rate_Bps

    @property
    def throughput_Bps(self) -> float:
        return self.size_bytes / self.time_s

    @property
    def gain_Bps(self) -> float:
        return self.throughput_Bps - self.nvlink_only_Bps


def hybrid_broadcast(topo, ranks, root: int | None = None, size_bytes: float = 1e9, t_dpa_s: float = 0.0) -> Hybrid:
    """Broadcast over two tree sets at once, NVLink trees and PCIe trees, on the group's own GPUs
    (transit through switches and CPUs only, as Blink does on its allocation)."""
    group = list(ranks)
    root = group[0] if root is None else root
    nv = pack(topo, group, [root], links="nvlink", transit="devices")
    pc = pack(topo, group, [root], links="pcie", transit="devices")
    d_pcie, _, time_s = hybrid_split(size_bytes, pc.rate_Bps, nv.rate_Bps, t_dpa_s)
    return Hybrid(tuple(group), nv, pc, float(size_bytes), t_dpa_s, float(d_pcie), float(time_s))


# --- single-hop trees on a switch (appendix A.3) ----------------------------------------------------

SINGLE_HOP = "mesh"
"""Blink's single-hop trees on NVSwitch: rank r roots the tree of its 1/p of the data, a one-hop
reduce into r then a one-hop broadcast from r. That is the two-shot mesh allreduce (reduce-scatter
then allgather, each one step to all peers), whose closed form and schedule the project already has
(model/algorithms/mesh.py: the closed form and the schedule): reuse them, do not write them twice."""


def single_hop_vs_nccl(ranks: int, size_bytes, link) -> dict:
    """Allreduce times (s) of single-hop trees, ring and double-binary-tree (closed forms)."""
    return {
        name: cost("allreduce", alg, ranks, size_bytes, link).total_s
        for name, alg in (("single-hop", SINGLE_HOP), ("ring", "ring"), ("double-binary-tree", "double-binary-tree"))
    }
