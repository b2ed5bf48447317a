"""What NCCL's topology search (src/graph/search.cc, ncclTopoCompute) finds on a System: per algorithm
graph, the channel count and the per-channel bandwidths bwIntra / bwInter (GB/s) the tuning model reads.

This is a closed-form stand-in for the search, not the search itself. Rules (search.cc):
- speeds come from the generation's ladder (intra ladder on one node, inter ladder with a network);
  the search starts at the highest speed <= maxBw (the best GPU->GPU path, or GPU->NIC with a network);
- a ring channel crosses every GPU once, using `speed` of each GPU's links (getTotalBw: sum of NVLinks,
  else PCIe) and, with a network, `speed` of one NIC in each direction; it keeps the count x speed
  that is largest (graphs compare by nChannels * bw);
- crossNic (NCCL_CROSS_NIC default 2, search.cc:16, tried at search.cc:1236-1241 when a node has
  several NICs): a ring may leave the node through another NIC than the one it came in by, so the
  GPU that sends to the network does it over its own PCIe, not over NVLink: with n channels each GPU
  is that last GPU n/g times and its NVLink carries speed x (n - n/g), not speed x n;
- ncclTopoDupChannels doubles channels and halves bw when bwIntra >= 25 (not on sm90+ when bw < 50
  and there are more than 4 channels), never above the ring graph's maxChannels (MAXCHANNELS / 2);
- trees (and NVLS) "do not need to close the ring", so their NVLink budget is x g/(g-1); pass 2 raises
  a tree's bwIntra up to twice bwInter (search.cc:1279-1283), within that budget, and with one GPU per
  node (no GPU-to-GPU hop) without one;
- the tree's pattern (read by tuning.cc:336): one GPU per node makes it NCCL_TOPO_PATTERN_TREE
  (search.cc:1133); on sm90+ with a network the search tries that simpler tree first when the balanced
  tree finds no path (search.cc:1215-1219), which is the case when every GPU has its own NIC (the
  balanced tree's second GPU would reach the first GPU's NIC only through a farther path type);
- NVLS (Hopper+ with NVSwitch): one channel per GPU head; each channel uses bwIntra of every GPU's
  NVLink and twice on its head (ncclTopoSearchTryNvls), so bwIntra <= totalBw / (g + 1) (not capped by
  the NIC path: see search_graphs); with a network pass 2 raises bwInter up to twice bwIntra, within
  the GPU->NIC path.
- path types (graph.h): typeIntra is LOC with one GPU per node, NVL over NVLink, PIX/PXB over PCIe
  switches, PHB through the host; typeInter is the system's GPU->NIC path (PIX on one node).
- PCIe without P2P: the shared path to the host is left to the bounds (see below).
Known gaps: the cube-mesh of DGX-1 (treated as its NVLink sum), PXN, CollNet heads (CollNetDirect's graph).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Callable, Sequence

from collperf.model.nccl.constants import MAX_NVLS_ARITY, MAX_RING_CHANNELS, pcie_bw, speed_ladder
from collperf.model.hardware.system import System


@dataclass(frozen=True)
class Graph:
    n_channels: int
    bw_intra: float  # GB/s per channel
    bw_inter: float  # GB/s per channel
    type_intra: str = "NVLINK"  # "NVLINK" or "PCI": which hwLatencies row
    latency_inter_us: float = 0.0
    same_channels: bool = True
    pattern: str = "ring"  # "ring", "balanced-tree", "tree" (NCCL_TOPO_PATTERN_TREE) or "nvls"
    path_intra: str = "NVL"  # graph.h path type of the GPU-to-GPU hops (typeIntra)
    path_inter: str = "PIX"  # graph.h path type of the GPU-to-NIC hops (typeInter)
    cross_nic: bool = False  # a ring leaves through another NIC than it came in by


def _best_speed(ladder: Sequence[float], max_bw: float, channels_at: Callable[[float], int]) -> tuple[float, int]:
    """Walk the ladder down from the first speed <= max_bw; once a solution exists, go on only while the
    next speed is > 0.49 of it (search.cc "Decrease bw until we find a solution"), keeping the largest
    channels x speed (ties: the faster speed)."""
    best = (0.0, 0)
    for speed in ladder:
        if speed > max_bw + 1e-9:
            continue
        if best[1] and speed <= 0.49 * best[0]:
            break
        n = channels_at(speed)
        if n >= 1 and n * speed > best[0] * best[1] + 1e-9:
            best = (speed, n)
    if best[1] == 0:  # nothing fits: search.cc falls back to the slowest speed, one channel
        best = (ladder[-1], 1)
    return best


def _dup(speed: float, n: int, cc: int) -> tuple[float, int]:
    """search.cc ncclTopoDupChannels."""
    if speed < 25.0 or (cc > 80 and speed < 50.0 and n > 4):
        return speed, n
    dup = min(2 * n, MAX_RING_CHANNELS)
    return speed / math.ceil(dup / n), dup


def search_graphs(system: "System") -> dict[str, Graph]:
    """Graphs for 'ring', 'tree', 'nvls' (absent when the system has no NVLS), 'collnet' (CollNetDirect's, taken
    as the ring's: its own search, up to MAXCHANNELS channels, is not modelled) and 'collnet-chain'."""
    cc, g, nodes = system.compute_capability, system.gpus_per_node, system.nodes
    inter = nodes > 1
    ladder = speed_ladder(cc, inter)
    type_intra = "NVLINK" if system.nvlink_links else "PCI"
    gpu_bw = system.nccl_gpu_bw
    # PCIe without P2P: we keep the GPU's own PCIe rate here (search.cc would also charge the shared
    # switch-to-CPU link); the shared host bridge is a physical limit that `expect` applies through
    # the lower bound (bounds.host_bridge_time), which reads sample 12 (broadcast) correctly.
    cross_nic = inter and g > 1 and system.nccl_nics > 1
    if inter:
        net_path = min(system.nccl_nic_bw, pcie_bw(system.pcie_gen))  # GPU -> NIC over PCIe, then the NIC
        max_bw = net_path if g == 1 else min(net_path, gpu_bw)

        def ring_channels(speed: float, cross: bool = cross_nic) -> int:
            per_nic = math.floor(system.nccl_nic_bw / speed + 1e-9)
            by_gpu = _ring_channels_by_gpu(gpu_bw, speed, g, cross) if g > 1 else MAX_RING_CHANNELS
            return min(MAX_RING_CHANNELS, system.nccl_nics * per_nic, by_gpu)
    else:
        max_bw = gpu_bw if g > 1 else 5000.0  # LOC_BW for a single GPU

        def ring_channels(speed: float, cross: bool = False) -> int:
            return min(MAX_RING_CHANNELS, math.floor(gpu_bw / speed + 1e-9))

    speed, n = _best_speed(ladder, max_bw, ring_channels)
    # crossNic is what found the ring when the plain ring at that speed has fewer channels
    used_cross = cross_nic and ring_channels(speed, False) < n
    speed, n = _dup(speed, n, cc)
    lat = system.net_latency_us
    path_intra = _path_intra(system)
    path_inter = system.nic_path if inter else "PIX"
    ring = Graph(n, speed, speed, type_intra, lat, True, "ring", path_intra, path_inter, used_cross)
    graphs = {"ring": ring, "collnet": Graph(n, speed, speed, type_intra, lat, True, "tree", path_intra, path_inter)}
    graphs["tree"] = Graph(
        n,
        _tree_bw_intra(system, ladder, speed, n),
        speed,
        type_intra,
        lat,
        True,
        _tree_pattern(system),
        path_intra,
        path_inter,
    )
    # collNetChainGraph (NCCL 2.30.7 src/init.cc): NCCL_TOPO_PATTERN_TREE with the ring's channel count, so
    # the search's pass 2 raises its bwIntra as it does the tree's (a chain, like a tree, need not close a ring)
    graphs["collnet-chain"] = Graph(
        n, graphs["tree"].bw_intra, speed, type_intra, lat, True, "tree", path_intra, path_inter
    )
    # no NVLS where the node's topology holds two GPUs or fewer (NCCL 2.30.7 src/transport/nvls.cc ncclNvlsInit:
    # gpuCount <= 2): a pair of B200s runs rings and trees although its NVSwitch could reduce
    if system.nvls and system.nvswitch and cc >= 90 and g > 2:
        heads = min(MAX_NVLS_ARITY, g)
        # bwIntra: the fastest ladder speed the NVLink budget takes (each GPU carries bwIntra for every
        # head and twice for its own: (g + 1) x bwIntra <= its NVLink total). NCCL's search, with a
        # network, starts both speeds at the GPU->NIC path (pass 1) and its pass 2 cannot raise bwIntra
        # once the bwInter step has failed (search.cc: the "increase bwIntra" branch runs with the failed
        # bwInter still set), so on B200 (NVLink 18 x 40.1 = 721.8, NIC path 48) it keeps 48 where the
        # NVLink carries 80. That is a quirk of the search, not of the hardware: the switch-side traffic
        # of NVLS never crosses the NIC path, so we take the NVLink's speed (sample 19 measures 93 % of
        # the network bound at 2 GiB, which NCCL's 48 would put 40 % above; H100's 40 is NVLink-bound
        # either way).
        ok = [s for s in ladder if s * (g + 1) <= system.nccl_gpu_bw + 1e-9]
        if ok:
            intra = max(ok)
            # pass 2 raises bwInter one rung at a time while it is below twice bwIntra; with a network
            # it must still fit the GPU->NIC path, on one node nothing else limits it.
            limit = min(system.nccl_nic_bw, pcie_bw(system.pcie_gen)) if inter else math.inf
            inter_bw = max([s for s in ladder if s <= min(intra, limit) + 1e-9] or [ladder[-1]])
            for s in sorted(ladder):
                if inter_bw < s <= limit and inter_bw < 2 * intra:
                    inter_bw = s
            graphs["nvls"] = Graph(heads, intra, inter_bw, "NVLINK", lat, False, "nvls", "NVL", path_inter)
    if system.bw_scale != 1.0:  # a fitted efficiency, applied after the (discrete) search
        k = system.bw_scale
        graphs = {name: replace(gr, bw_intra=gr.bw_intra * k, bw_inter=gr.bw_inter * k) for name, gr in graphs.items()}
    return graphs


def _ring_channels_by_gpu(gpu_bw: float, speed: float, g: int, cross_nic: bool) -> int:
    """Ring channels one GPU's links carry at `speed`: n x speed without crossNic; with it, the GPU is
    the ring's last GPU (the one that sends to the network over PCIe) in n/g of the channels, so its
    NVLink carries (n - n // g) x speed."""
    plain = math.floor(gpu_bw / speed + 1e-9)
    if not cross_nic:
        return plain
    n = plain
    while n < MAX_RING_CHANNELS and (n + 1 - (n + 1) // g) * speed <= gpu_bw + 1e-9:
        n += 1
    return n


def _path_intra(system: "System") -> str:
    """graph.h typeIntra: LOC for one GPU per node (search.cc minTypeIntra), NVL over NVLink, PIX behind
    one PCIe switch, PXB across switches with P2P, PHB through the host without P2P."""
    if system.gpus_per_node == 1:
        return "LOC"
    if system.nvlink_links:
        return "NVL"
    if system.host_bridge:
        return "PHB"
    return "PIX" if system.pcie_switch_shared else "PXB"


def _tree_bw_intra(system: "System", ladder: Sequence[float], speed: float, n: int) -> float:
    """Pass 2 (search.cc:1279-1283): a tree's bwIntra rises one rung at a time while it is below twice
    bwInter, as long as the search still finds the channels: within the NVLink budget x g/(g-1) when the
    chain has GPU-to-GPU hops, without a limit with one GPU per node. On one node nothing is raised."""
    g = system.gpus_per_node
    if system.nodes == 1:
        return speed
    budget = system.nccl_gpu_bw * g / (g - 1) if g > 1 else math.inf
    tree_intra = speed
    for s in sorted(ladder):
        if speed < s and tree_intra < 2 * speed and s * n <= budget + 1e-9:
            tree_intra = s
    return tree_intra


def _tree_pattern(system: "System") -> str:
    """The tree graph's pattern NCCL ends with (comm->maxTreePattern, init.cc:1447)."""
    if system.nodes == 1:
        return "balanced-tree"
    if system.gpus_per_node == 1:
        return "tree"  # search.cc:1133
    if system.compute_capability >= 90 and system.nics_per_node >= system.gpus_per_node:
        return "tree"  # search.cc:1215-1219, the balanced tree found no path
    return "balanced-tree"
