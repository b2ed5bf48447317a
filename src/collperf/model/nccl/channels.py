"""How many channels NCCL runs, as opposed to how many its graphs found.

The topology search gives each graph a channel count (graphs.py). The communicator then runs more:
- `comm_channels`: NCCL 2.30.7 init.cc:1459 starts from min(tree, ring) graph channels;
  connect.cc:460 (ncclTopoPostset) doubles them, never above MAXCHANNELS; connect.cc:481-483 doubles
  again on sm90+ with several nodes when the ring's bwIntra is above 45 GB/s and there are fewer than
  16 (the "4 compute channels per search channel" rule). This is `comm->nChannels`, which the ring
  plateau reads (tuning.cc:647-648) and which ring, tree, PAT and CollNet-chain calls run at most
  (enqueue.cc:2070, 2091-2097).
- `nvls_channels`: transport/nvls.cc:155-157 and 210-214: 16 on sm90; on sm100 24 on one node and 32 on
  several, then ncclNvlsTreeSm100Tuning (nvls.cc:163-199) by node count and NIC rate. NVLS-tree calls
  run that many; NVLS on several nodes the smaller of it and comm->nChannels (enqueue.cc:2084-2090).
"""

from __future__ import annotations

from collperf.model.nccl.constants import MAX_CHANNELS, NVLS_CHANNELS_SM90, NVLS_CHANNELS_SM100, NVLS_CHANNELS_SM100_NVL
from collperf.model.nccl.graphs import Graph
from collperf.model.hardware.system import System


def comm_channels(system: "System", graphs: dict[str, "Graph"]) -> int:
    """comm->nChannels after ncclTopoPostset (connect.cc:460, 481-483)."""
    n = min(graphs["tree"].n_channels, graphs["ring"].n_channels)  # init.cc:1459
    n = min(MAX_CHANNELS, 2 * n)  # connect.cc:460
    # the rule reads the searched bwIntra, before any fitted efficiency scales it
    ring_bw_intra = graphs["ring"].bw_intra / system.bw_scale
    if system.compute_capability >= 90 and system.nodes > 1 and ring_bw_intra > 45.0 and n < 16:
        n = min(MAX_CHANNELS, 2 * n)  # connect.cc:481-483
    return n


def nvls_channels(system: "System") -> int:
    """comm->nvlsChannels (transport/nvls.cc ncclNvlsTuning with no user override)."""
    cc, nodes = system.compute_capability, system.nodes
    if cc < 100:
        return NVLS_CHANNELS_SM90
    n = NVLS_CHANNELS_SM100 if nodes > 1 else NVLS_CHANNELS_SM100_NVL
    if nodes > 1:  # ncclNvlsTreeSm100Tuning
        nic_bw = system.nccl_nic_bw  # comm->minNetBw, GB/s
        if nodes == 2 and nic_bw >= 48.0:
            n = 32
        elif nic_bw >= 96.0:
            n = 24 if system.gpus_per_node <= 8 else 32
        elif nic_bw >= 48.0:
            n = 24
    return n


def channels_run(algorithm: str, system: "System", graphs: dict[str, "Graph"]) -> int:
    """The channels a call of `algorithm` may use by default (enqueue.cc:2070-2097): what a tuner rule
    must carry to run what NCCL runs."""
    if algorithm == "nvls-tree":
        return nvls_channels(system)
    if algorithm == "nvls":
        nvls = nvls_channels(system)
        return min(nvls, comm_channels(system, graphs)) if system.nodes > 1 else nvls
    return comm_channels(system, graphs)
