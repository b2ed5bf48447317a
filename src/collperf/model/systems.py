"""A catalogue of GPU systems for the NCCL expectation model, each value with its source, and the
map from an nccl-tests device line ("NVIDIA A100-SXM4-80GB", "Tesla T4", ...) to a default system.

Rates are per direction. Two kinds of numbers live side by side: physical rates from data sheets
(`nvlink_GBps`, `pcie_GBps`, `nic_Gbps`) used by the lower bounds, and NCCL's own view of the same
links (topo.h `SM*_NVLINK_BW` per link, PCIe `width * speed / 80`, NIC `speed / 8000`) that its
tuning model uses (reference/nccl-tuning-model.md §2). Every field's origin is kept in
`provenance` (value name -> "from GPU model in device lines" / "default for H100 SXM" / "user override").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING

from collperf.errors import UsageError
from collperf.model.nccl.constants import PATH_TYPES, nvlink_bw_per_link, pcie_bw

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class System:
    """nodes x gpus_per_node GPUs of one kind, how they are linked, and NCCL's view of it."""

    name: str
    gpu: str
    compute_capability: int          # 70 V100, 75 Turing, 80 A100, 90 H100, 100 B200
    gpus_per_node: int
    nodes: int = 1
    nvlink_links: int = 0            # NVLink links per GPU (0: none)
    nvlink_GBps: float = 0.0         # physical NVLink rate per GPU per direction (data sheet)
    nvswitch: bool = False           # all GPUs of a node behind NVSwitch (any pair at full rate)
    pcie_gen: int = 3
    p2p: bool = True                 # GPU peer-to-peer over PCIe (False: via host memory)
    pcie_switch_shared: bool = False  # the node's GPUs sit behind one PCIe switch (topo "PIX"): without
                                      # P2P their host-memory traffic shares its uplink (nccl/transport.py)
    host_duplex_efficiency: float = 1.0  # link rate left to a GPU sending and receiving through host
                                      # memory at once (1: none assumed; a fit to an allreduce measures it)
    nics_per_node: int = 1
    nic_Gbps: float = 100.0          # one NIC's line rate
    net_gdr: bool = True             # GPUDirect RDMA to the NIC (False: the network path is staged
                                     # through host memory; NCCL INFO channel lines lack "/GDRDMA")
    nvls: bool = False               # NVLink SHARP (in-switch reduction), Hopper+ NVSwitch
    collnet: bool = False            # network SHARP (CollNet) enabled
    cpu_vendor: str = "intel"        # NCCL's llMaxBw/netOverhead choice on several nodes
    cpu_arch: str = "x86"            # "x86", "arm" (Grace) or "power": NCCL's cpuArch (tuning.cc)
    nic_path: str = "PIX"            # NCCL's path type from a GPU to its nearest NIC (graph.h: PIX, PXB,
                                     # P2C, PXN, PHB, SYS): the graphs' typeInter, read by the LL128 rule
    net_latency_us: float = 0.0      # graph.latencyInter: the net plugin's reported latency
    protocols: tuple[str, ...] = ("LL", "LL128", "Simple")  # NCCL_PROTO (e.g. aws-ofi-nccl: Simple)
    nccl_version: str = ""           # informational
    launch_overhead_us: float = 0.0  # host-side cost per call not in NCCL's model (launch, sync)
    protocol_overhead_us: tuple[float, float, float] | None = None  # per call of each protocol (LL,
                                      # LL128, Simple) in place of launch_overhead_us: a fit measures it
    bw_scale: float = 1.0            # multiplies NCCL's per-channel bandwidths (a fit sets it)
    phys_scale: float = 1.0          # multiplies the physical rates the bound uses (a fit sets it)
    source: str = field(default="", compare=False)
    provenance: dict = field(default_factory=dict, compare=False)

    def __post_init__(self):
        for label in ("gpus_per_node", "nodes", "nics_per_node"):
            value = getattr(self, label)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise UsageError(f"{label} {value!r} is not a positive whole number (system {self.name!r})")
        if self.nvlink_links and not self.nvlink_GBps > 0:
            raise UsageError(f"system {self.name!r}: nvlink_links={self.nvlink_links} but nvlink_GBps="
                             f"{self.nvlink_GBps!r}: give the NVLink rate per GPU per direction")
        if not self.nic_Gbps > 0:
            raise UsageError(f"system {self.name!r}: nic_Gbps {self.nic_Gbps!r} is not > 0")
        if not (self.bw_scale > 0 and self.phys_scale > 0 and self.launch_overhead_us >= 0):
            raise UsageError(f"system {self.name!r}: bw_scale {self.bw_scale!r} must be > 0 and "
                             f"launch_overhead_us {self.launch_overhead_us!r} >= 0")
        if self.protocol_overhead_us is not None and (
                len(self.protocol_overhead_us) != 3 or not all(o >= 0 for o in self.protocol_overhead_us)):
            raise UsageError(f"system {self.name!r}: protocol_overhead_us {self.protocol_overhead_us!r}: "
                             "expected three times >= 0 (LL, LL128, Simple) in us")
        if not 0 < self.host_duplex_efficiency <= 1:
            raise UsageError(f"system {self.name!r}: host_duplex_efficiency {self.host_duplex_efficiency!r} "
                             "must be in (0, 1]")
        if self.cpu_vendor not in ("intel", "amd"):
            raise UsageError(f"cpu_vendor {self.cpu_vendor!r}: expected 'intel' or 'amd'")
        if self.cpu_arch not in ("x86", "arm", "power"):
            raise UsageError(f"cpu_arch {self.cpu_arch!r}: expected 'x86', 'arm' or 'power'")
        if self.nic_path not in PATH_TYPES[PATH_TYPES.index("PIX"):PATH_TYPES.index("NET")]:
            raise UsageError(f"nic_path {self.nic_path!r}: expected one of PIX, PXB, P2C, PXN, PHB, SYS "
                             "(nvidia-smi topo -m between a GPU and its NIC)")
        bad = [p for p in self.protocols if p not in ("LL", "LL128", "Simple")]
        if bad or not self.protocols:
            raise UsageError(f"protocols {self.protocols!r}: expected some of LL, LL128, Simple")

    # ---- derived quantities -------------------------------------------------------------
    def overhead_s(self, protocols) -> "np.ndarray":
        """Per-call host overhead (s) of calls that run each given protocol ("LL"/"LL128"/"Simple")."""
        import numpy as np
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
        """What one node can push into the network: NICs x line rate."""
        return self.nics_per_node * self.nic_Bps

    @property
    def intra_Bps(self) -> float:
        """Physical per-GPU rate to the other GPUs of its node (NVLink, else PCIe)."""
        return self.nvlink_GBps * 1e9 if self.nvlink_links else self.pcie_GBps * 1e9

    @property
    def pcie_GBps(self) -> float:
        """PCI-SIG x16 rate per direction after 128b/130b encoding (Gen3 15.75 GB/s)."""
        return {3: 15.75, 4: 31.5, 5: 63.0, 6: 126.0}.get(self.pcie_gen, 15.75)

    @property
    def host_bridge(self) -> bool:
        """GPUs exchange data through host memory (PCIe without P2P, no NVLink)."""
        return not self.nvlink_links and not self.p2p

    @property
    def nccl_gpu_bw(self) -> float:
        """NCCL's total bandwidth of one GPU (search.cc getTotalBw): sum of NVLinks, else PCIe."""
        if self.nvlink_links:
            return self.nvlink_links * nvlink_bw_per_link(self.compute_capability)
        return pcie_bw(self.pcie_gen)

    @property
    def nccl_nic_bw(self) -> float:
        """NCCL's NIC bandwidth (topo.cc: speed in Mbps / 8000), GB/s."""
        return self.nic_Gbps / 8.0

    def describe(self) -> str:
        intra = (f"{self.nvlink_links}x NVLink ({self.nvlink_GBps:g} GB/s/dir{', NVSwitch' if self.nvswitch else ''}"
                 f"{', NVLS' if self.nvls else ''})" if self.nvlink_links else
                 f"PCIe Gen{self.pcie_gen}{'' if self.p2p else ' without P2P (via host)'}")
        return (f"{self.name}: {self.nodes} node(s) x {self.gpus_per_node} {self.gpu}; {intra}; "
                f"{self.nics_per_node}x {self.nic_Gbps:g} Gb/s NIC per node")

    def with_(self, why: str = "user override", **changes) -> "System":
        """A copy with some values changed, the change recorded in provenance."""
        known = {f.name for f in fields(self)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise UsageError(f"unknown system value(s) {unknown}: expected some of {sorted(known)}")
        prov = dict(self.provenance)
        prov.update({k: why for k in changes if k not in ("provenance", "source")})
        return replace(self, provenance=prov, **changes)


def _system(default_for: str, **values) -> System:
    values.setdefault("provenance", {k: f"default for {default_for}" for k in values
                                     if k not in ("name", "source")})
    return System(**values)


# Sources: NVIDIA data sheets (DGX-1, DGX-2, DGX A100, DGX H100, DGX B200), NVLink generation pages
# (NVLink2 25 GB/s/dir/link, NVLink3 25, NVLink4 25, NVLink5 50), PCI-SIG rates; aws-ofi-nccl sets
# NCCL_PROTO=simple on EFA (seen in sample 09's NCCL INFO lines).
CATALOGUE: dict[str, System] = {s.name: s for s in (
    _system("A100 SXM", name="dgx-a100", gpu="A100 SXM", compute_capability=80, gpus_per_node=8,
            nvlink_links=12, nvlink_GBps=300.0, nvswitch=True, pcie_gen=4, nics_per_node=8, nic_Gbps=200.0,
            launch_overhead_us=0.0, source="NVIDIA DGX A100 data sheet: 12 NVLink3 x 25 GB/s/dir, 6 NVSwitch, "
            "8x ConnectX-6 HDR 200 Gb/s"),
    _system("H100 SXM", name="dgx-h100", gpu="H100 SXM", compute_capability=90, gpus_per_node=8,
            nvlink_links=18, nvlink_GBps=450.0, nvswitch=True, nvls=True, pcie_gen=5, nics_per_node=8,
            nic_Gbps=400.0, source="NVIDIA DGX H100 data sheet: 18 NVLink4 = 900 GB/s bidirectional, NVSwitch "
            "gen3 with SHARP (NVLS), 8x ConnectX-7 400 Gb/s"),
    _system("B200 SXM", name="dgx-b200", gpu="B200", compute_capability=100, gpus_per_node=8,
            nvlink_links=18, nvlink_GBps=900.0, nvswitch=True, nvls=True, pcie_gen=5, nics_per_node=8,
            nic_Gbps=400.0, source="NVIDIA DGX B200 data sheet: 18 NVLink5 = 1.8 TB/s bidirectional, "
            "NVSwitch with SHARP, 8x ConnectX-7 400 Gb/s (4x OSFP 2x400G)"),
    _system("V100 DGX-1", name="dgx-1v", gpu="V100 SXM2", compute_capability=70, gpus_per_node=8,
            nvlink_links=6, nvlink_GBps=150.0, nvswitch=False, pcie_gen=3, nics_per_node=4, nic_Gbps=100.0,
            source="NVIDIA DGX-1 data sheet: hybrid cube-mesh, 6 NVLink2 x 25 GB/s/dir, 4x EDR 100 Gb/s"),
    _system("V100 DGX-2", name="dgx-2", gpu="V100 SXM3", compute_capability=70, gpus_per_node=16,
            nvlink_links=6, nvlink_GBps=150.0, nvswitch=True, pcie_gen=3, nics_per_node=8, nic_Gbps=100.0,
            source="NVIDIA DGX-2 data sheet: 12 NVSwitch, 6 NVLink2 per GPU, 8x EDR 100 Gb/s"),
    _system("PCIe card with P2P", name="pcie-p2p", gpu="PCIe GPU", compute_capability=75, gpus_per_node=8,
            pcie_gen=3, p2p=True, nics_per_node=1, nic_Gbps=100.0,
            source="PCI-SIG Gen3 x16 15.75 GB/s/dir; GPUs peer-to-peer through a PCIe switch"),
    _system("RTX 2080 Ti (PCIe, no P2P)", name="pcie-2080ti", gpu="GeForce RTX 2080 Ti", compute_capability=75,
            gpus_per_node=2, pcie_gen=3, p2p=False, nics_per_node=1, nic_Gbps=100.0,
            source="PCI-SIG Gen3 x16; GeForce cards: P2P disabled by the driver, NCCL uses SHM via host memory"),
    _system("T4 (PCIe)", name="pcie-t4", gpu="Tesla T4", compute_capability=75, gpus_per_node=1,
            pcie_gen=3, p2p=True, nics_per_node=1, nic_Gbps=50.0,
            source="NVIDIA T4 data sheet (PCIe Gen3 x16); AWS g4dn.8x/12xlarge: 50 Gb/s with EFA"),
)}

# GPU model (as nccl-tests prints it) -> catalogue entry, GPUs per node when unknown, and what we inferred.
_GPU_PATTERNS = (
    (r"B200|B100|GB200", "dgx-b200", "default for B200 SXM"),
    (r"H100.*(HBM3|SXM)|H100 80GB|H200|H800|GH200", "dgx-h100", "default for H100 SXM"),
    (r"A100.*SXM|A800.*SXM", "dgx-a100", "default for A100 SXM"),
    (r"V100.*SXM3|V100.*32GB.*SXM3", "dgx-2", "default for V100 DGX-2"),
    (r"V100.*SXM", "dgx-1v", "default for V100 DGX-1"),
    (r"2080 Ti|RTX [234]0[0-9]0|GeForce", "pcie-2080ti", "default for GeForce (PCIe, no P2P)"),
    (r"T4\b", "pcie-t4", "default for T4 (PCIe)"),
)


def get_system(name: str, nodes: int = 1) -> System:
    key = str(name).strip().lower()
    if key not in CATALOGUE:
        raise UsageError(f"unknown system {name!r}: expected one of {', '.join(CATALOGUE)}")
    return CATALOGUE[key].with_("user override", nodes=nodes) if nodes != 1 else CATALOGUE[key]


def system_for_gpu(gpu_model: str, nodes: int = 1, gpus_per_node: int | None = None,
                   hints: dict | None = None, overrides: dict | None = None) -> System:
    """The default system for a GPU model string from nccl-tests device lines.

    hints (all optional, from the log): `nics` (NICs per node), `nic_Gbps`, `nvls` (bool: NCCL INFO
    mentioned NVLS), `net` ("IB", "EFA"/"OFI", "Socket"), `protocols`, `gpus_per_thread` (nccl-tests -g:
    one thread launching g GPUs costs host time), `nccl_version`. overrides: any System field.
    """
    text = str(gpu_model or "").strip()
    if not text:
        raise UsageError("empty GPU model: expected a device name such as 'NVIDIA A100-SXM4-80GB'")
    for pattern, key, why in _GPU_PATTERNS:
        if re.search(pattern, text, re.IGNORECASE):
            break
    else:
        raise UsageError(f"GPU model {text!r} is not in the catalogue ({', '.join(CATALOGUE)}): "
                         "pick a system by name with get_system or give overrides")
    base = CATALOGUE[key]
    prov = {k: why for k in base.provenance}
    prov.update(gpu="from GPU model in device lines", compute_capability="from GPU model in device lines")
    system = replace(base, gpu=text, provenance=prov)
    from_log = {"nodes": nodes}
    if gpus_per_node is not None:
        from_log["gpus_per_node"] = gpus_per_node
    system = system.with_("from node count and ranks in the log", **from_log)
    system = _apply_hints(system, hints or {})
    if overrides:
        system = system.with_("user override", **overrides)
    return system


def _apply_hints(system: System, hints: dict) -> System:
    changes, why = {}, "from NCCL INFO / header lines"
    if "nics" in hints:
        changes["nics_per_node"] = int(hints["nics"])
    if "nic_Gbps" in hints:
        changes["nic_Gbps"] = float(hints["nic_Gbps"])
    if "nvls" in hints:
        changes["nvls"] = bool(hints["nvls"]) and system.nvswitch and system.compute_capability >= 90
    net = str(hints.get("net", "")).lower()
    if net in ("efa", "ofi", "aws libfabric"):
        # aws-ofi-nccl sets NCCL_PROTO=simple (sample 09: "NET/OFI Setting NCCL_PROTO to \"simple\"")
        changes["protocols"] = ("Simple",)
    if "protocols" in hints:
        changes["protocols"] = tuple(hints["protocols"])
    if "net_gdr" in hints and system.nodes > 1:
        changes["net_gdr"] = bool(hints["net_gdr"])
    if "nccl_version" in hints:
        changes["nccl_version"] = str(hints["nccl_version"])
    if "gpus_per_thread" in hints and int(hints["gpus_per_thread"]) > 1:
        # One host thread launching g kernels per iteration (nccl-tests -g g) adds about 2.5 us per GPU
        # to every call (samples 01 and 10: 35 us and 11.7 us floors vs NCCL's 15 us / 8.6 us model latency).
        changes["launch_overhead_us"] = 2.5 * int(hints["gpus_per_thread"])
    return system.with_(why, **changes) if changes else system


def hints_from_header(header: dict, lines: str = "") -> dict:
    """Hints from a log: NCCL INFO lines mentioning NVLS, the NET transport, NIC counts."""
    hints = {}
    text = lines or " ".join(str(v) for v in header.values())
    if re.search(r"NVLS (multicast support|comm)|NVLS enabled|nvls", text, re.IGNORECASE):
        hints["nvls"] = True
    m = re.search(r"found (\d+) nics", text)
    if m:
        hints["nics"] = int(m.group(1))
    if re.search(r"AWS Libfabric|NET/OFI", text):
        hints["net"] = "efa"
    elif re.search(r"NET/IB", text):
        hints["net"] = "ib"
    # NCCL prints "via NET/<plugin>/<dev>/GDRDMA" on channel lines that use GPUDirect RDMA (transport/net.cc)
    net_lines = re.findall(r"via NET/[^\n]*", text)
    if net_lines:
        hints["net_gdr"] = any("GDRDMA" in ln for ln in net_lines)
    m = re.search(r"NCCL version (\d+\.\d+\.\d+)", text)
    if m:
        hints["nccl_version"] = m.group(1)
    return hints
