"""NCCL's tuning constants, as data.

Source: NCCL 2.30.7 (github.com/NVIDIA/nccl tag v2.30.7-1), src/graph/tuning.cc
(`ncclTunerConstantsDefaults`, `nvlsEfficiency`, `treeCorrectionFactor`), src/graph/search.cc
(speed ladders), src/graph/topo.h (per-link bandwidths), src/include/graph.h (path types),
src/include/device.h (channel limits), src/transport/nvls.cc (NVLS channels); older values checked at
tag 2.21.5. Latencies in microseconds, bandwidths in GB/s (1e9 bytes/s, NCCL's "bytes per ns"), exactly
as NCCL keeps them.
"""

from __future__ import annotations

ALGORITHMS = ("tree", "ring", "collnet-direct", "collnet-chain", "nvls", "nvls-tree", "pat")
PROTOCOLS = ("LL", "LL128", "Simple")
# The five functions of NCCL's model (NCCL_NUM_FUNCTIONS 5); send/recv and alltoall are p2p.
FUNCTIONS = ("broadcast", "reduce", "allgather", "reducescatter", "allreduce")

# tuning.cc baseLatencies[algorithm][LL, LL128, Simple] (HEAD; 2.21 had Tree Simple 0)
BASE_LATENCY_US = {
    "tree": (6.8, 14.0, 8.4),
    "ring": (6.6, 14.0, 8.4),
    "collnet-direct": (0.0, 0.0, 0.0),
    "collnet-chain": (0.0, 0.0, 0.0),
    "nvls": (0.0, 0.0, 0.0),
    "nvls-tree": (0.0, 0.0, 0.0),
    "pat": (8.0, 8.0, 8.0),
}

# tuning.cc hwLatencies[NVLINK | PCI | NET][algorithm][LL, LL128, Simple] (HEAD)
HW_LATENCY_US = {
    "NVLINK": {
        "tree": (0.6, 1.25, 4.0),
        "ring": (0.6, 1.9, 3.4),
        "collnet-direct": (0, 0, 3.7),
        "collnet-chain": (0, 0, 2.8),
        "nvls": (0, 0, 25),
        "nvls-tree": (0, 0, 25),
        "pat": (0, 0, 4.0),
    },
    "PCI": {
        "tree": (1.0, 1.9, 4.0),
        "ring": (1.0, 2.5, 5.7),
        "collnet-direct": (0, 0, 3.7),
        "collnet-chain": (0, 0, 2.8),
        "nvls": (0, 0, 0),
        "nvls-tree": (0, 0, 0),
        "pat": (0, 0, 4.0),
    },
    "NET": {
        "tree": (5.0, 8.5, 14),
        "ring": (2.7, 4.0, 14.0),
        "collnet-direct": (0, 0, 31),
        "collnet-chain": (0, 0, 30),
        "nvls": (0, 0, 18),
        "nvls-tree": (0, 0, 20.9),
        "pat": (0, 0, 14),
    },
}

# Index [generation] x [1 node, 2 nodes, >= 4 nodes]; generation 0 Volta, 1 Ampere, 2 Hopper, 3 Blackwell.
# llMaxBws' first index is the GPU generation on one node and the CPU vendor on several (0 Intel, 1 AMD).
LL_MAX_BW = ((39.0, 39.0, 20.4), (87.7, 22.5, 19.0), (141.0, 45.0, 35.0), (282.0, 90.0, 70.0))
PER_CH_MAX_RING_LL128_BW = ((20.0, 20.0, 20.0), (20.0, 20.0, 20.0), (36.7, 36.7, 36.7), (40.0, 40.0, 40.0))
PER_CH_MAX_TREE_LL128_BW = ((20.0, 20.0, 20.0), (20.0, 20.0, 20.0), (36.7, 36.7, 29.0), (55.6, 31.67, 20.0))
PER_CH_MAX_TREE_BW = ((26.5, 18.5, 10.0), (24.0, 23.6, 17.8), (38.7, 41.4, 36.0), (70.0, 42.8, 24.0))
PER_CH_MAX_NVLS_TREE_BW = ((26.5, 18.5, 10.0), (24.0, 23.6, 17.8), (0.0, 57.7, 45.5), (0.0, 96.0, 80.0))
NVLS_EFFICIENCY = (0.0, 0.0, 0.85, 0.74)

# tuning.cc treeCorrectionFactor[protocol][log2(nBytes >> 6)], powers of two 64 B .. 256 MB.
TREE_CORRECTION = (
    (
        1.0,
        1.0,
        1.0,
        1.0,
        0.9,
        0.8,
        0.7,
        0.7,
        0.7,
        0.7,
        0.6,
        0.5,
        0.4,
        0.4,
        0.5,
        0.6,
        0.7,
        0.8,
        0.9,
        1.0,
        1.0,
        1.0,
        1.0,
        1.0,
    ),
    (
        1.0,
        1.0,
        1.0,
        1.0,
        1.0,
        0.9,
        0.8,
        0.8,
        0.8,
        0.7,
        0.6,
        0.6,
        0.6,
        0.6,
        0.6,
        0.6,
        0.8,
        0.9,
        0.9,
        0.9,
        0.9,
        1.0,
        1.0,
        1.0,
    ),
    (
        0.9,
        0.9,
        0.9,
        0.9,
        0.9,
        0.9,
        0.9,
        0.8,
        0.7,
        0.6,
        0.6,
        0.5,
        0.5,
        0.5,
        0.5,
        0.6,
        0.7,
        0.8,
        0.7,
        0.7,
        0.8,
        0.9,
        0.9,
        0.9,
    ),
)

# search.cc speed ladders (GB/s per channel), tried from the top down.
SPEEDS_INTRA = {
    0: (40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0),
    90: (60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0),
    100: (90.0, 80.0, 70.0, 60.0, 50.0, 45.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0),
}
SPEEDS_INTER = {
    0: (48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.4, 1.2, 0.24, 0.12),
    90: (48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24, 0.12),
    100: (
        96.0,
        86.0,
        80.0,
        48.0,
        45.1,
        42.0,
        40.0,
        30.0,
        24.0,
        22.0,
        20.0,
        17.5,
        15.0,
        12.0,
        6.0,
        3.0,
        2.4,
        1.2,
        0.24,
        0.12,
    ),
}

# topo.h:19-24 SM*_NVLINK_BW: NVLink bandwidth per link (GB/s); nvlink_bw_per_link picks one as
# ncclTopoNVLinkBw does (topo.h:274-281). PCI_BW (Gen3 x16).
NVLINK_BW_PER_LINK = {60: 18.0, 70: 20.0, 80: 20.0, 86: 12.0, 90: 20.6, 100: 40.1}
PCI_BW = 12.0
MAX_CHANNELS = 64  # device.h:91 MAXCHANNELS: what a communicator may run (connect.cc:460 caps here)
MAX_RING_CHANNELS = MAX_CHANNELS // 2  # init.cc:1177 ringGraph->maxChannels = MAXCHANNELS / 2 (the search's cap)
MAX_NVLS_ARITY = 32  # device.h NCCL_MAX_NVLS_ARITY
# transport/nvls.cc:155-157: NVLS channels by default (sm90; sm100 on several nodes; sm100 on one node)
NVLS_CHANNELS_SM90, NVLS_CHANNELS_SM100, NVLS_CHANNELS_SM100_NVL = 16, 32, 24

# include/graph.h:117-154: path types, closest first. A graph's typeIntra / typeInter is one of these.
PATH_TYPES = ("LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS", "NET")


def path_rank(path: str) -> int:
    """PATH_LOC 0 .. PATH_NET 10 (graph.h), for the `<=` comparisons of tuning.cc."""
    return PATH_TYPES.index(path)


def nvlink_bw_per_link(compute_capability: int) -> float:
    """topo.h:274-281 ncclTopoNVLinkBw: only sm86 is 12.0; sm87 and sm89 take SM80's 20.0."""
    cc = compute_capability
    if cc >= 100:
        return NVLINK_BW_PER_LINK[100]
    if cc >= 90:
        return NVLINK_BW_PER_LINK[90]
    if cc == 86:
        return NVLINK_BW_PER_LINK[86]
    if cc >= 80:
        return NVLINK_BW_PER_LINK[80]
    if cc >= 70:
        return NVLINK_BW_PER_LINK[70]
    if cc >= 60:
        return NVLINK_BW_PER_LINK[60]
    return NVLINK_BW_PER_LINK[80]


NET_OVERHEAD_US = {"intel": 1.0, "amd": 2.0}  # tuning.cc getNetOverhead (NCCL_NET_OVERHEAD default)


def generation_index(compute_capability: int) -> int:
    """tuning.cc compCapIndex: Volta (< 80), Ampere (80s), Hopper (90s), Blackwell (>= 100)."""
    if compute_capability >= 100:
        return 3
    if compute_capability >= 90:
        return 2
    if compute_capability >= 80:
        return 1
    return 0


def nodes_index(nodes: int) -> int:
    """tuning.cc index2: 1 node, 2 nodes, more."""
    return 0 if nodes <= 1 else (1 if nodes == 2 else 2)


def speed_ladder(compute_capability: int, inter: bool) -> tuple[float, ...]:
    table = SPEEDS_INTER if inter else SPEEDS_INTRA
    key = 100 if compute_capability >= 100 else (90 if compute_capability >= 90 else 0)
    return table[key]


def pcie_bw(generation: int, lanes: int = 16) -> float:
    """NCCL's PCIe bandwidth from sysfs (topo.cc): width * per-lane speed / 80, per-lane 15/30/60/120/240
    for Gen1..Gen5 (GB/s, per direction, after NCCL's own derate)."""
    per_lane = {1: 15, 2: 30, 3: 60, 4: 120, 5: 240, 6: 480}[generation]
    return lanes * per_lane / 80.0
