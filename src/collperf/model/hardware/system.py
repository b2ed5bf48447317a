"""One GPU system as the NCCL expectation model, the bounds and the alpha-beta presets see it: GPUs, how they
are linked, the NICs and the fabric behind them, each value with where it came from.

Rates are per direction. Two kinds of numbers live side by side: physical rates from data sheets
(`nvlink_GBps`, `pcie_GBps`, `nic_Gbps`) used by the lower bounds, and NCCL's own view of the same
links (topo.h `SM*_NVLINK_BW` per link, PCIe `width * speed / 80`, NIC `speed / 8000`) that its
tuning model uses (NCCL 2.30.7 src/graph/topo.h, topo.cc). `sources` names the data sheet each
catalogue value came from; `provenance` says how a value of this instance was set
("default for H100 SXM", "from GPU model in device lines", "user override (--nic-rate)").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields, replace
from typing import Any, Collection
import numpy as np

from collperf.errors import UsageError
from collperf.model.hardware.parts import PCIE_X16_GBps
from collperf.model.nccl.constants import PATH_TYPES, nvlink_bw_per_link, pcie_bw
from collperf.model.nccl.env import NCCL_ALGO_NAMES, NCCL_PROTO_NAMES, check as check_env

# The fabric classes a system's network (several nodes) can be: InfiniBand, RoCE, AWS EFA, GCP's
# GPUDirect-TCPX / TCPXO, plain sockets, HPE Slingshot 11 (libfabric's cxi provider), and a rack-scale NVLink
# domain (GB200/GB300 NVL72).
NETWORK_FABRICS = ("ib", "roce", "efa", "tcpx", "tcpxo", "socket", "slingshot", "nvl72")
# ... and inside one node: NVSwitch with or without in-switch reduction, NVLink links straight between GPUs
# (GH200 nodes, NVLink-bridged pairs), PCIe peer-to-peer, PCIe through host memory; AMD's Infinity Fabric (xGMI)
# mesh. Calibration and peers are kept per class (expect/band.py).
NODE_FABRICS = ("nvswitch", "nvswitch-nvls", "nvlink-mesh", "xgmi", "pcie-p2p", "pcie-host")
FABRICS = NODE_FABRICS + NETWORK_FABRICS


@dataclass(frozen=True)
class System:
    """nodes x gpus_per_node GPUs of one kind, how they are linked, and NCCL's view of it."""

    name: str
    gpu: str
    compute_capability: int  # 70 V100, 75 Turing, 80 A100, 90 H100, 100 B200
    gpus_per_node: int
    nodes: int = 1
    nvlink_links: int = 0  # NVLink links per GPU (0: none)
    nvlink_GBps: float = 0.0  # physical NVLink rate per GPU per direction (data sheet)
    links_per_peer: int = 0  # a direct mesh (no switch): links from each GPU to each other GPU of the node
    # (xGMI platforms 1, a quad-GH200 node 6); 0 behind a switch or not known
    nvswitch: bool = False  # all GPUs of a node behind NVSwitch (any pair at full rate)
    pcie_gen: int = 3
    p2p: bool = True  # GPU peer-to-peer over PCIe (False: via host memory)
    pcie_switch_shared: bool = False  # the node's GPUs sit behind one PCIe switch (topo "PIX"): without
    # P2P their host-memory traffic shares its uplink (nccl/transport.py)
    host_duplex_efficiency: float = 1.0  # link rate left to a GPU sending and receiving through host
    # memory at once (1: none assumed; a fit to an allreduce measures it)
    nics_per_node: int = 1
    nic_Gbps: float = 100.0  # one NIC's line rate
    net_gdr: bool = True  # GPUDirect RDMA to the NIC (False: the network path is staged
    # through host memory; NCCL INFO channel lines lack "/GDRDMA")
    nvls: bool = False  # NVLink SHARP (in-switch reduction), Hopper+ NVSwitch
    collnet: bool = False  # network SHARP (CollNet) enabled
    cpu_vendor: str = "intel"  # NCCL's llMaxBw/netOverhead choice on several nodes
    cpu_arch: str = "x86"  # "x86", "arm" (Grace) or "power": NCCL's cpuArch (tuning.cc)
    nic_path: str = "PIX"  # NCCL's path type from a GPU to its nearest NIC (graph.h: PIX, PXB,
    # P2C, PXN, PHB, SYS): the graphs' typeInter, read by the LL128 rule
    net_latency_us: float = 0.0  # graph.latencyInter: the net plugin's reported latency
    protocols: tuple[str, ...] = ("LL", "LL128", "Simple")  # what the platform runs (e.g. aws-ofi-nccl: Simple)
    nccl_proto: str = ""  # NCCL_PROTO as set in the environment (model/nccl/env.py), "" unset
    nccl_algo: str = ""  # NCCL_ALGO as set in the environment, "" unset
    nccl_version: str = ""  # informational
    launch_overhead_us: float = 0.0  # host-side cost per call not in NCCL's model (launch, sync)
    protocol_overhead_us: tuple[float, float, float] | None = None  # per call of each protocol (LL,
    # LL128, Simple) in place of launch_overhead_us: a fit measures it
    fabric: str = "ib"  # the network's class between nodes (NETWORK_FABRICS)
    nvlink_domain: int = 0  # GPUs in one NVLink domain across trays (NVL72: 72; 0: the node)
    instance: str = ""  # the cloud instance type or product name, e.g. "p5.48xlarge"
    intra_latency_us: float = 1.0  # alpha of the intra-node link for the alpha-beta presets (NCCL 2.30.7
    inter_latency_us: float = 5.0  # tuning.cc hwLat NVLINK/PCI ~1-2.5 us, NET ~2.7-4 us, rounded up)
    bw_scale: float = 1.0  # multiplies NCCL's per-channel bandwidths (a fit sets it)
    phys_scale: float = 1.0  # multiplies the physical rates the bound uses (a fit sets it)
    gpu_part: str = ""  # the GPU's row in the parts table (model/hardware/gpus.py), "" not known
    board: str = ""  # how the node links its GPUs (model/hardware/boards.py), "" not known
    source: str = field(default="", compare=False)
    sources: dict[str, str] = field(default_factory=dict, compare=False)  # value name -> data sheet (title, URL)
    provenance: dict[str, str] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        for label in ("gpus_per_node", "nodes", "nics_per_node"):
            value = getattr(self, label)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise UsageError(f"{label} {value!r} is not a positive whole number (system {self.name!r})")
        if self.links_per_peer < 0 or (self.links_per_peer and self.links_per_peer > self.nvlink_links):
            raise UsageError(
                f"system {self.name!r}: links_per_peer {self.links_per_peer} must be between 0 and "
                f"its {self.nvlink_links} links per GPU"
            )
        if self.nvlink_links and not self.nvlink_GBps > 0:
            raise UsageError(
                f"system {self.name!r}: nvlink_links={self.nvlink_links} but nvlink_GBps="
                f"{self.nvlink_GBps!r}: give the NVLink rate per GPU per direction"
            )
        if not self.nic_Gbps > 0:
            raise UsageError(f"system {self.name!r}: nic_Gbps {self.nic_Gbps!r} is not > 0")
        if not (self.bw_scale > 0 and self.phys_scale > 0 and self.launch_overhead_us >= 0):
            raise UsageError(
                f"system {self.name!r}: bw_scale {self.bw_scale!r} must be > 0 and "
                f"launch_overhead_us {self.launch_overhead_us!r} >= 0"
            )
        if self.protocol_overhead_us is not None and (
            len(self.protocol_overhead_us) != 3 or not all(o >= 0 for o in self.protocol_overhead_us)
        ):
            raise UsageError(
                f"system {self.name!r}: protocol_overhead_us {self.protocol_overhead_us!r}: "
                "expected three times >= 0 (LL, LL128, Simple) in us"
            )
        if not 0 < self.host_duplex_efficiency <= 1:
            raise UsageError(
                f"system {self.name!r}: host_duplex_efficiency {self.host_duplex_efficiency!r} must be in (0, 1]"
            )
        if self.fabric not in NETWORK_FABRICS:
            raise UsageError(
                f"system {self.name!r}: fabric {self.fabric!r}: expected one of {', '.join(NETWORK_FABRICS)}"
            )
        if self.cpu_vendor not in ("intel", "amd"):
            raise UsageError(f"cpu_vendor {self.cpu_vendor!r}: expected 'intel' or 'amd'")
        if self.cpu_arch not in ("x86", "arm", "power"):
            raise UsageError(f"cpu_arch {self.cpu_arch!r}: expected 'x86', 'arm' or 'power'")
        if self.nic_path not in PATH_TYPES[PATH_TYPES.index("PIX") : PATH_TYPES.index("NET")]:
            raise UsageError(
                f"nic_path {self.nic_path!r}: expected one of PIX, PXB, P2C, PXN, PHB, SYS "
                "(nvidia-smi topo -m between a GPU and its NIC)"
            )
        check_env(self.nccl_proto, "NCCL_PROTO", NCCL_PROTO_NAMES)
        check_env(self.nccl_algo, "NCCL_ALGO", NCCL_ALGO_NAMES)
        bad = [p for p in self.protocols if p not in ("LL", "LL128", "Simple")]
        if bad or not self.protocols:
            raise UsageError(f"protocols {self.protocols!r}: expected some of LL, LL128, Simple")

    # ---- derived quantities -------------------------------------------------------------
    def overhead_s(self, protocols: Collection[str]) -> np.ndarray:
        """Per-call host overhead (s) of calls that run each given protocol ("LL"/"LL128"/"Simple")."""
        if self.protocol_overhead_us is None:
            return np.full(len(protocols), self.launch_overhead_us * 1e-6)
        per = dict(zip(("LL", "LL128", "Simple"), self.protocol_overhead_us))
        return np.array([per.get(p, self.launch_overhead_us) for p in protocols], dtype=float) * 1e-6

    @property
    def ranks(self) -> int:
        return self.nodes * self.gpus_per_node

    @property
    def nic_Bps(self) -> float:
        return self.nic_Gbps * 1e9 / 8

    @property
    def node_network_Bps(self) -> float:
        """What one node can push into the network: NICs x line rate, at most what its GPUs' PCIe links carry
        to the NICs (a run on one GPU of a node with eight NICs reaches them only through its own x16 link)."""
        return min(self.nics_per_node * self.nic_Bps, self.gpus_per_node * self.pcie_GBps * 1e9)

    @property
    def intra_Bps(self) -> float:
        """Physical per-GPU rate to the other GPUs of its node (NVLink, else PCIe)."""
        return self.nvlink_GBps * self.mesh_share * 1e9 if self.nvlink_links else self.pcie_GBps * 1e9

    @property
    def mesh_share(self) -> float:
        """The share of a GPU's links a run can use: all of them behind a switch; on a direct mesh (AMD's xGMI,
        one link to each peer; a quad-GH200 node, six) only the links to the run's other GPUs of the node."""
        per_peer = self.links_per_peer or (1 if self.amd else 0)
        if self.nvswitch or not per_peer or not self.nvlink_links or self.gpus_per_node < 2:
            return 1.0
        return min(1.0, (self.gpus_per_node - 1) * per_peer / self.nvlink_links)

    @property
    def pcie_GBps(self) -> float:
        """PCI-SIG x16 rate per direction after 128b/130b encoding (Gen3 15.75 GB/s)."""
        return PCIE_X16_GBps.get(self.pcie_gen, PCIE_X16_GBps[3])

    @property
    def host_bridge(self) -> bool:
        """GPUs exchange data through host memory (PCIe without P2P, no NVLink)."""
        return not self.nvlink_links and not self.p2p

    @property
    def nccl_gpu_bw(self) -> float:
        """NCCL's total bandwidth of one GPU (search.cc getTotalBw): sum of NVLinks, else PCIe."""
        if self.nvlink_links and self.amd:
            # RCCL keeps NCCL's search; its xGMI links are given the same derate as NVLink4 (20.6 of 25 GB/s)
            return self.nvlink_GBps * self.mesh_share * nvlink_bw_per_link(90) / 25.0
        if self.nvlink_links and self.links_per_peer and not self.nvswitch:
            # a direct NVLink mesh: NCCL's search sums the links to the peers the run has (paths.cc, search.cc)
            return round(self.nvlink_links * self.mesh_share) * nvlink_bw_per_link(self.compute_capability)
        if self.nvlink_links:
            return self.nvlink_links * nvlink_bw_per_link(self.compute_capability)
        return pcie_bw(self.pcie_gen)

    @property
    def one_nic_per_gpu(self) -> bool:
        """At least one NIC per GPU: the node's capacity is what counts, however it is split."""
        return self.nics_per_node >= self.gpus_per_node

    @property
    def nccl_nics(self) -> int:
        """NICs NCCL's model sees. With at least one NIC per GPU the node's capacity is spread over one NIC per
        GPU (16x 200G and 8x 400G, or EFA's 32x 100G, are one capacity: NCCL's rings use one rail per GPU
        and PXN / multi-NIC channels fill the rest), so the expectation does not depend on the split."""
        return self.gpus_per_node if self.one_nic_per_gpu else self.nics_per_node

    @property
    def nccl_nic_bw(self) -> float:
        """NCCL's NIC bandwidth (topo.cc: speed in Mbps / 8000), GB/s, of one of `nccl_nics`."""
        total_Gbps = self.nics_per_node * self.nic_Gbps
        if not self.one_nic_per_gpu:
            return total_Gbps / self.nccl_nics / 8.0
        return min(total_Gbps / self.nccl_nics / 8.0, pcie_bw(self.pcie_gen))  # one GPU's share, through its PCIe

    @property
    def amd(self) -> bool:
        """An AMD Instinct GPU (RCCL; its links are Infinity Fabric, not NVLink)."""
        return bool(re.search(r"\bAMD\b|\bMI\d{3}|gfx9", self.gpu))

    @property
    def fabric_class(self) -> str:
        """The fabric a run crosses: the network's class on several nodes, else the node's: nvl72 (a rack-scale
        NVLink domain, its trays taken as one node), nvswitch(-nvls), xgmi, pcie-p2p or pcie-host."""
        if self.nodes > 1:
            return self.fabric
        if self.nvlink_domain:
            return "nvl72"
        if self.nvlink_links:
            if self.amd and not self.nvswitch:
                return "xgmi"
            if self.links_per_peer and not self.nvswitch:
                return "nvlink-mesh"
            return "nvswitch-nvls" if self.nvls else "nvswitch"
        return "pcie-p2p" if self.p2p else "pcie-host"

    @property
    def link_name(self) -> str:
        """What the GPU-to-GPU links are called: AMD's Infinity Fabric links (xGMI) are not NVLink, though the model
        treats both alike (nvlink_links x nvlink_GBps)."""
        return "xGMI" if self.amd and not self.nvswitch else "NVLink"

    def describe(self) -> str:
        intra = (
            f"{self.nvlink_links}x {self.link_name} ({self.nvlink_GBps:g} GB/s/dir"
            f"{', NVSwitch' if self.nvswitch else ''}"
            f"{', NVLS' if self.nvls else ''})"
            if self.nvlink_links
            else f"PCIe Gen{self.pcie_gen}{'' if self.p2p else ' without P2P (via host)'}"
        )
        # one node uses no network: its NICs would only suggest a bound or a fabric that plays no part
        network = (
            (
                f"; {self.nics_per_node}x {self.nic_Gbps:g} Gb/s NIC per node ({self.fabric}"
                f"{', SHARP' if self.collnet else ''})"
            )
            if self.nodes > 1
            else ""
        )
        return f"{self.name}: {self.nodes} node(s) x {self.gpus_per_node} {self.gpu}; {intra}{network}"

    def with_(self, why: str = "user override", **changes: Any) -> "System":
        """A copy with some values changed, the change recorded in provenance."""
        known = {f.name for f in fields(self)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise UsageError(f"unknown system value(s) {unknown}: expected some of {sorted(known)}")
        prov = dict(self.provenance)
        prov.update({k: why for k in changes if k not in ("provenance", "source", "sources")})
        return replace(self, provenance=prov, **changes)
