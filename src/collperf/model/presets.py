"""The catalogue of hardware presets, each value with its source.

Bandwidths are per direction (links are full-duplex). Latencies are per message (alpha): NVLink and
PCIe values follow NCCL's per-hop hardware latencies (src/graph/tuning.cc hwLatencies, NVLINK ring
LL..LL128 0.6-1.9 us, PCI 1.0-2.5 us, NET 2.7-4.0 us; reference/nccl-tuning-model.md §3) rounded
to the cost-model chapter's 1 us / 5 us. A calibrated profile is always better than a preset.
"""

from __future__ import annotations

from dataclasses import replace

from collperf.errors import UsageError
from collperf.model.network import Cluster, Link

_GBPS = 1e9        # bytes/s
_GBIT = 1e9 / 8    # bytes/s in one Gbit/s

PRESETS: dict[str, Cluster] = {c.name: c for c in (
    Cluster(
        # NVIDIA DGX H100 datasheet: 8x H100 SXM, 18 NVLink4 links per GPU = 900 GB/s bidirectional,
        # i.e. 450 GB/s per direction through NVSwitch; 8x single-port ConnectX-7 at 400 Gb/s.
        nodes=1, ranks_per_node=8, nics_per_node=8, name="dgx-h100",
        intra=Link(1e-6, 450 * _GBPS, name="NVLink4/NVSwitch"),
        inter=Link(5e-6, 400 * _GBIT, name="ConnectX-7 400G"),
        source="NVIDIA DGX H100 datasheet"),
    Cluster(
        # NVIDIA DGX A100 datasheet: 8x A100 SXM, NVLink3 600 GB/s bidirectional per GPU (300 per
        # direction) through 6 NVSwitches; 8x single-port ConnectX-6 HDR 200 Gb/s for compute.
        nodes=1, ranks_per_node=8, nics_per_node=8, name="dgx-a100",
        intra=Link(1e-6, 300 * _GBPS, name="NVLink3/NVSwitch"),
        inter=Link(5e-6, 200 * _GBIT, name="ConnectX-6 HDR 200G"),
        source="NVIDIA DGX A100 datasheet"),
    Cluster(
        # NVIDIA DGX-1 (Volta) datasheet: 8x V100 in a hybrid cube-mesh, 6 NVLink2 links of 25 GB/s
        # per direction per GPU (150 GB/s per direction in all; not every pair is directly linked,
        # the topology presets model that); 4x EDR InfiniBand 100 Gb/s.
        nodes=1, ranks_per_node=8, nics_per_node=4, name="dgx-1v",
        intra=Link(1e-6, 150 * _GBPS, name="NVLink2 cube-mesh"),
        inter=Link(5e-6, 100 * _GBIT, name="EDR IB 100G"),
        source="NVIDIA DGX-1 datasheet"),
    Cluster(
        # NVIDIA DGX-2 datasheet: 16x V100 on 12 NVSwitches, 6 NVLink2 links per GPU = 150 GB/s per
        # direction, any pair at full rate; 8x 100 Gb/s InfiniBand/100GigE.
        nodes=1, ranks_per_node=16, nics_per_node=8, name="dgx-2",
        intra=Link(1e-6, 150 * _GBPS, name="NVLink2/NVSwitch"),
        inter=Link(5e-6, 100 * _GBIT, name="EDR IB 100G"),
        source="NVIDIA DGX-2 datasheet"),
    Cluster(
        # AWS Trn1 architecture (awsdocs-neuron trn1-arch): trn1.32xlarge has 16 Trainium chips on a
        # NeuronLink-v2 4D hypercube and 800 Gbps EFA over 8 EFA devices (100 Gb/s each). Neuron's
        # collectives guide (seed 004): "the per-hop or point-to-point latency is ~15us" over EFA.
        # The per-chip NeuronLink-v2 rate is not published there; 48 GB/s per direction is an
        # assumption (768 GB/s per instance / 16 chips): calibrate before trusting intra numbers.
        nodes=1, ranks_per_node=16, nics_per_node=8, name="trn1",
        intra=Link(2e-6, 48 * _GBPS, name="NeuronLink-v2 (assumed rate)"),
        inter=Link(15e-6, 100 * _GBIT, name="EFA 100G"),
        source="AWS Neuron docs: Trn1 architecture; inter-node collectives"),
    Cluster(
        # A PCIe Gen4 x16 server: 16 GT/s x 16 lanes x 128/130 encoding / 8 = 31.5 GB/s per direction
        # (PCI-SIG); GPUs talk through the PCIe switch/root complex. NCCL's PCI hop latency is
        # 1.0-2.5 us (LL..LL128); one 200 Gb/s NIC per node is typical of such servers.
        nodes=1, ranks_per_node=8, nics_per_node=1, name="pcie-gen4",
        intra=Link(2e-6, 31.5 * _GBPS, name="PCIe Gen4 x16"),
        inter=Link(5e-6, 200 * _GBIT, name="200G NIC"),
        source="PCI-SIG Gen4 rate; NCCL tuning.cc PCI hwLat"),
    Cluster(
        # The worked example of "The Collective Cost Model" (a distributed-training guide's chapter on
        # alpha-beta costs): NVLink 1 us / 300 GB/s inside a node, network 5 us / 50 GB/s per GPU
        # (8x 400 Gb/s NICs for 8 GPUs). Its old name `chapter` stays an alias.
        nodes=1, ranks_per_node=8, nics_per_node=8, name="nvlink300-400gbe",
        intra=Link(1e-6, 300 * _GBPS, name="NVLink 300 GB/s"),
        inter=Link(5e-6, 400 * _GBIT, name="400GbE"),
        source='"The Collective Cost Model", hierarchical worked example'),
)}


# Former names that keep working.
ALIASES = {"chapter": "nvlink300-400gbe"}


def get_preset(name: str, nodes: int | None = None, ranks_per_node: int | None = None) -> Cluster:
    """A preset cluster, optionally with another node count or ranks per node."""
    key = str(name).strip().lower()
    key = ALIASES.get(key, key)
    if key not in PRESETS:
        raise UsageError(f"unknown cluster preset {name!r}: expected one of {', '.join(PRESETS)}")
    cluster = PRESETS[key]
    if nodes is not None:
        cluster = replace(cluster, nodes=nodes)
    if ranks_per_node is not None:
        cluster = replace(cluster, ranks_per_node=ranks_per_node)
    return cluster
