"""NCCL's algorithm x protocol cost table and its choice, vectorized over sizes.

Follows NCCL 2.30.7 src/graph/tuning.cc: `ncclTopoTuneModel` builds, per
function, a latency (us) and an algorithm bandwidth (GB/s) for each (algorithm, protocol) from the
graphs of the topology search; `ncclTopoGetAlgoTime` prices a call as lat + nBytes / (1000 bw) with
the tree correction and the ring plateau; src/enqueue.cc `topoGetAlgoInfo` takes the argmin over the
enabled entries (NCCL 2.30 src/enqueue.cc and src/graph/tuning.cc).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from collperf.errors import UsageError
from collperf.model.nccl import constants as C, env
from collperf.model.nccl.channels import comm_channels
from collperf.model.nccl.graphs import Graph, search_graphs
from collperf.model.hardware.system import System


@dataclass(frozen=True)
class TuningTable:
    """One function's table: latency_us / bandwidth_GBps per (algorithm, protocol); bw 0 = disabled."""

    collective: str
    ranks: int
    nodes: int
    latency_us: dict[tuple[str, str], float]
    bandwidth_GBps: dict[tuple[str, str], float]
    graphs: dict[str, Graph]

    def enabled(self) -> list[tuple[str, str]]:
        return [k for k in self.entries() if self.bandwidth_GBps[k] > 0]

    @staticmethod
    def entries() -> list[tuple[str, str]]:
        return [(a, p) for a in C.ALGORITHMS for p in C.PROTOCOLS]


def _log2i(n: int) -> int:
    return int(math.floor(math.log2(n))) if n >= 1 else -1


def _nsteps(collective: str, n: int) -> int:
    if collective == "allreduce":
        return 2 * (n - 1)
    if collective in ("allgather", "reducescatter"):
        return n - 1
    return n


def _algorithm_allowed(collective: str, a: str) -> bool:
    """tuning.cc: Broadcast/Reduce ring only; AllGather/ReduceScatter ring, PAT, NVLS, CollNetDirect;
    AllReduce everything but PAT."""
    if collective in ("broadcast", "reduce"):
        return a == "ring"
    if collective in ("allgather", "reducescatter"):
        return a in ("ring", "pat", "nvls", "collnet-direct")
    return a != "pat"


def _version_at_least(version: str, major: int, minor: int) -> bool:
    try:
        parts = [int(x) for x in version.split(".")[:2]]
    except ValueError:
        return True
    return not parts or tuple(parts) >= (major, minor)


def _algorithm_enabled(system: "System", collective: str, a: str, graphs: dict[str, Graph]) -> bool:
    """NCCL_ALGO, the disable rules of ncclTopoTuneModel, and what the graphs make possible."""
    nodes = system.nodes
    if not env.algorithm_enabled(system.nccl_algo, collective, a):  # tuning.cc:538
        return False
    if a in ("nvls", "nvls-tree"):
        if "nvls" not in graphs or graphs["nvls"].n_channels < 2:
            return False
        if a == "nvls-tree" and nodes == 1:  # "Disable NVLS Tree on a single node"
            return False
        if a == "nvls" and nodes > 1 and not system.collnet:  # multi-node NVLS needs CollNet
            return False
    if a in ("collnet-direct", "collnet-chain"):
        if not system.collnet or nodes == 1:
            return False
        if a == "collnet-direct" and not system.nvswitch:  # needs an NVSwitch system
            return False
    if a == "pat":
        # ncclPatEnable: sm60+, one GPU per node, host network; PAT exists from NCCL 2.23
        if system.compute_capability < 60 or system.gpus_per_node != 1 or nodes == 1:
            return False
        if system.nccl_version and not _version_at_least(system.nccl_version, 2, 23):
            return False
    return True


def _protocol_enabled(system: "System", collective: str, a: str, p: str, g: Graph) -> bool:
    if p not in system.protocols:  # what the platform runs
        return False
    if a in ("nvls", "nvls-tree", "pat", "collnet-direct", "collnet-chain") and p != "Simple":
        return False
    state = env.protocol_state(system.nccl_proto, collective, p)
    if state == env.OFF:  # tuning.cc:537: pEnable == 0
        return False
    if p == "LL128" and state == env.DEFAULT:  # tuning.cc:518: only the default (2) runs the rule
        return _ll128_enabled(system, g)
    return True


def _ll128_enabled(system: "System", g: Graph) -> bool:
    """LL128's default, per graph (NCCL 2.30.7 tuning.cc:518-535, NCCL_LL128_C2C=1): the GPU-to-NIC path
    at most PXN on sm90+, at most PXB before; GPU-to-GPU hops at most NVB (one GPU per node is LOC);
    one compute capability (always here); sm70+."""
    cc = system.compute_capability
    max_inter = "PXN" if cc >= 90 else "PXB"
    return (
        C.path_rank(g.path_inter) <= C.path_rank(max_inter)
        and C.path_rank(g.path_intra) <= C.path_rank("NVB")
        and cc >= 70
    )


def _bus_bandwidth(system: "System", collective: str, a: str, p: str, g: Graph) -> float:
    gen, ni = C.generation_index(system.compute_capability), C.nodes_index(system.nodes)
    nodes, ranks = system.nodes, system.ranks
    ppn = ranks / nodes
    ll_index = gen if nodes == 1 else (1 if system.cpu_vendor == "amd" else 0)
    ll_max = C.LL_MAX_BW[ll_index][ni]
    collnet = a.startswith("collnet")
    bw = g.bw_intra if (nodes <= 2 or collnet) else g.bw_inter
    if a in ("nvls", "nvls-tree"):
        intra = g.bw_intra * C.NVLS_EFFICIENCY[gen] * (g.n_channels - 1) / g.n_channels
        intra *= 2.0 if collective == "allreduce" else (ppn - 1) / ppn  # allreduce pipelines two ops
        inter = g.bw_inter * (2 if (nodes <= 2 and a == "nvls-tree") else 1)
        cap = C.PER_CH_MAX_NVLS_TREE_BW[gen][ni] if a == "nvls-tree" else math.inf
        bw = min(intra, inter, cap)
    bus = g.n_channels * bw
    if a == "ring" and p == "LL":
        bus = min(ll_max, bus * 0.5)
    if a == "ring" and p == "LL128":
        bus = min(bus * 0.92, g.n_channels * C.PER_CH_MAX_RING_LL128_BW[gen][ni])
    if a == "tree" and collective == "allreduce":
        bus = min(bus * 0.92, g.n_channels * C.PER_CH_MAX_TREE_BW[gen][ni])
    if a == "tree" and p == "LL":
        bus = min(bus / 3.8, ll_max)
    if a == "tree" and p == "LL128":
        bus = min(
            bus * (7.0 / 9.0 if nodes == 1 else 120.0 / 128.0), g.n_channels * C.PER_CH_MAX_TREE_LL128_BW[gen][ni]
        )
    if a == "tree" and g.pattern == "tree":
        bus *= 0.85  # tuning.cc:336: comm->maxTreePattern == NCCL_TOPO_PATTERN_TREE
    if a == "pat":
        bus *= 0.75
    if a == "collnet-direct":
        if collective in ("allgather", "reducescatter"):
            bus = ppn * min(g.bw_intra, g.bw_inter * 0.9)
        else:
            factor = ppn / g.n_channels
            factor -= (factor - 1) / 2
            bus /= factor
            if system.compute_capability >= 90:
                bus *= 0.85
    if a in ("nvls", "collnet-direct") and collective in ("allgather", "reducescatter") and nodes > 1:
        bus = 0.0  # needs CollNet allgather/reducescatter and one NIC head per local GPU: not modelled
    # bus -> algorithm bandwidth (not for non-ring allgather/reducescatter)
    if not (a != "ring" and collective in ("allgather", "reducescatter")):
        ratio = ranks / _nsteps(collective, ranks) if a in ("ring", "nvls", "nvls-tree") else 0.5
        bus *= ratio
    return bus


def _latency(system: "System", collective: str, a: str, p: str, g: Graph) -> float:
    nodes, ranks = system.nodes, system.ranks
    ppn = ranks // nodes
    pi = C.PROTOCOLS.index(p)
    nsteps = _nsteps(collective, ranks)
    lat = C.BASE_LATENCY_US[a][pi]
    intra_lat = C.HW_LATENCY_US[g.type_intra][a][pi]
    # "With ppn=1 latencies are fully exposed, use the Tree network latency"
    inter_lat = C.HW_LATENCY_US["NET"]["tree" if ppn == 1 else a][pi] + g.latency_inter_us
    if p == "Simple":
        inter_lat += g.latency_inter_us  # the flush
    log_nodes = _log2i(nodes)
    if a == "ring":
        hw = g.type_intra if nodes == 1 else "NET"
        hop = C.HW_LATENCY_US[hw]["ring"][pi]
        if collective in ("broadcast", "reduce"):
            if g.same_channels:
                return lat + hop
            if p == "Simple":
                hop = C.HW_LATENCY_US[hw]["tree"][pi]
            return lat + nsteps * hop
        overhead = 0.0
        if nodes > 1:
            overhead = C.NET_OVERHEAD_US[system.cpu_vendor] * (3 if p == "Simple" else 1)
        intra_lat = max(intra_lat, overhead)
        n_inter = 0 if nodes == 1 else (2 * (nodes - 1) if collective == "allreduce" else nodes - 1)
        return lat + (nsteps - n_inter) * intra_lat + n_inter * inter_lat
    if a == "tree":
        return lat + (2 * ((ppn - 1) * intra_lat + log_nodes * inter_lat) if collective == "allreduce" else 0.0)
    if a == "collnet-direct":
        return lat + 2 * (min(1, ppn - 1) * intra_lat + (ppn - 1) * 0.4) + inter_lat
    if a == "collnet-chain":
        return lat + 2 * (ppn - 1) * intra_lat + inter_lat
    if a == "nvls":
        return intra_lat + (inter_lat if nodes > 1 else 0.0)
    if a == "nvls-tree":
        return lat + intra_lat + 2 * log_nodes * inter_lat
    if a == "pat":
        return lat + log_nodes * (inter_lat / 3.5) + ranks * 2.8
    raise AssertionError(a)


def _graph_of(algorithm: str, graphs: dict[str, Graph]) -> str:
    """The graph NCCL prices an algorithm with (init.cc:980-981: PAT on the tree graph; CollNetChain on
    collNetChainGraph, CollNetDirect on collNetDirectGraph, the one 'collnet' graph where no chain is given)."""
    if algorithm.startswith("nvls"):
        return "nvls"
    if algorithm == "collnet-chain" and "collnet-chain" in graphs:
        return "collnet-chain"
    if algorithm.startswith("collnet"):
        return "collnet"
    return "tree" if algorithm in ("tree", "pat") else "ring"


def tuning_table(collective: str, system: "System", graphs: dict[str, Graph] | None = None) -> TuningTable:
    """The latency/bandwidth table NCCL builds at init for one function (ncclTopoTuneModel)."""
    if collective not in C.FUNCTIONS:
        raise UsageError(
            f"collective {collective!r} is not in NCCL's tuning model: expected one of "
            f"{', '.join(C.FUNCTIONS)} (alltoall and sendrecv are point-to-point: use expect)"
        )
    graphs = graphs if graphs is not None else search_graphs(system)
    lat: dict[tuple[str, str], float] = {}
    bw: dict[tuple[str, str], float] = {}
    for a, p in TuningTable.entries():
        lat[(a, p)], bw[(a, p)] = 0.0, 0.0
        if system.ranks <= 1 or not _algorithm_allowed(collective, a):
            continue
        if not _algorithm_enabled(system, collective, a, graphs):
            continue
        g = graphs[_graph_of(a, graphs)]
        if not _protocol_enabled(system, collective, a, p, g):
            continue
        bw[(a, p)] = _bus_bandwidth(system, collective, a, p, g)
        lat[(a, p)] = _latency(system, collective, a, p, g)
    return TuningTable(collective, system.ranks, system.nodes, lat, bw, graphs)


def entry_times_us(table: TuningTable, system: "System", size_bytes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(latency term, bandwidth term) in us, shape (entries, sizes); NaN where disabled
    (ncclTopoGetAlgoTime with numPipeOps = 1)."""
    n = np.asarray(size_bytes, dtype=float)
    entries = TuningTable.entries()
    lat_t = np.full((len(entries), n.size), np.nan)
    bw_t = np.full((len(entries), n.size), np.nan)
    blocks = np.floor(n / 64.0)
    log_size = np.where(blocks >= 1, np.floor(np.log2(np.maximum(blocks, 1))), -1).astype(int)
    n_channels = comm_channels(system, table.graphs)  # comm->nChannels (tuning.cc:647-648)
    for i, (a, p) in enumerate(entries):
        bw = table.bandwidth_GBps[(a, p)]
        if bw <= 0:
            continue
        pi = C.PROTOCOLS.index(p)
        factor = np.ones_like(n)
        # tuning.cc:643-644: NVLS-tree is corrected only on sm100+ with an x86 CPU
        corrected = (a == "tree" and table.collective == "allreduce") or (
            a == "nvls-tree"
            and table.collective == "allreduce"
            and system.compute_capability >= 100
            and system.cpu_arch == "x86"
        )
        if corrected:
            limit = 23 if a == "tree" else 24
            ok = (log_size >= 0) & (log_size < limit)
            factor[ok] = np.asarray(C.TREE_CORRECTION[pi])[log_size[ok]]
        lat = np.full_like(n, table.latency_us[(a, p)])
        if a == "ring" and p == "Simple" and system.nodes > 1 and table.collective == "allreduce":
            plateau = np.floor(n / (n_channels * system.ranks)) >= 64  # "Plateau effect of ring"
            lat = np.where(plateau, lat * (1.9 if system.compute_capability < 80 else 1.4), lat)
        lat_t[i] = lat
        bw_t[i] = n / (1000.0 * bw * factor)
    return lat_t, bw_t
