"""The one hardware catalogue: whole systems and cloud instances, each value with the data sheet it came
from, used by predict (as an alpha-beta Cluster), diagnose (NCCL's expectation and the bound), plan,
report and export. Also the map from an nccl-tests device line ("NVIDIA A100-SXM4-80GB") to a default
system.

A node's NIC capacity is NICs x rate, one number however it is split (System.nccl_nics): 16x 200G and
8x 400G give one bound and one expectation unless the fabric class differs. NVLink rates are per GPU
per direction (the data sheets print both directions: 900 GB/s -> 450).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from collperf.errors import UsageError
from collperf.model.hardware.boards import BOARDS, default_board
from collperf.model.hardware.compose import compose
from collperf.model.hardware.gpus import BY_KEY
from collperf.model.hardware.names import find_gpu, gpu_part
from collperf.model.hardware.parts import GPU
from collperf.model.network import Cluster, Link
from collperf.model.hardware.system import FABRICS, NETWORK_FABRICS, NODE_FABRICS, System

__all__ = ["System", "CATALOGUE", "ALIASES", "FABRICS", "NETWORK_FABRICS", "NODE_FABRICS", "get_system",
           "system_for_gpu", "to_cluster", "resolve_name", "system_for_instance", "gpu_family", "FABRIC_NCCL_SETTINGS",
           "fabric_nccl_settings"]

# Data sheets, quoted by every entry that takes a value from them.
_DGX_A100 = ("NVIDIA DGX A100 data sheet "
             "(nvidia.com/content/dam/en-zz/Solutions/Data-Center/nvidia-dgx-a100-datasheet.pdf)")
_DGX_H100 = "NVIDIA DGX H100 data sheet (resources.nvidia.com/en-us-dgx-systems/ai-enterprise-dgx)"
_DGX_H200 = "NVIDIA DGX H200 product page (nvidia.com/en-us/data-center/dgx-h200)"
_DGX_B200 = "NVIDIA DGX B200 data sheet (nvidia.com/en-us/data-center/dgx-b200)"
_GB200 = "NVIDIA GB200 NVL72 specifications (nvidia.com/en-us/data-center/gb200-nvl72)"
_GB300 = "NVIDIA GB300 NVL72 specifications (nvidia.com/en-us/data-center/gb300-nvl72)"
_MI300X = "AMD Instinct MI300X platform data sheet (amd.com/en/products/accelerators/instinct/mi300/platform.html)"
_MI325X = ("AMD Instinct MI325X data sheet "
           "(amd.com/en/products/accelerators/instinct/mi300/mi325x.html)")
_THOR2 = ("Broadcom BCM57608 (Thor 2) 400G Ethernet adapter product brief "
          "(broadcom.com/products/ethernet-connectivity/network-adapters/bcm57608-400g-ethernet-adapter)")
_MI355X = "AMD Instinct MI355X data sheet (amd.com/en/products/accelerators/instinct/mi350/mi355x.html)"
_ND_MI300X = ("Azure ND MI300X v5 series "
              "(learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/ndmi300xv5-series)")
_GCP_GPUS = "Google Cloud GPU machine types (cloud.google.com/compute/docs/gpus)"
_GCP_NET = ("Google Cloud accelerator-optimized machines, network "
            "(cloud.google.com/compute/docs/accelerator-optimized-machines)")
_AWS_P4 = "Amazon EC2 P4 instances (aws.amazon.com/ec2/instance-types/p4)"
_AWS_P5 = "Amazon EC2 P5 instances (aws.amazon.com/ec2/instance-types/p5)"
_AWS_G4 = "Amazon EC2 G4 instances (aws.amazon.com/ec2/instance-types/g4)"
_AWS_EFA = "Amazon EFA user guide, supported instance types (docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa.html)"
_AZ_A100 = "Azure NDasrA100_v4 series (learn.microsoft.com/azure/virtual-machines/nda100-v4-series)"
_AZ_H100 = "Azure ND H100 v5 series (learn.microsoft.com/azure/virtual-machines/nd-h100-v5-series)"
_OCI = "OCI compute shapes, bare metal GPU (docs.oracle.com/iaas/Content/Compute/References/computeshapes.htm)"
_DGX1 = "NVIDIA DGX-1 data sheet (hybrid cube-mesh, NVLink2)"
_DGX2 = "NVIDIA DGX-2 data sheet (12 NVSwitch)"
_T4 = "NVIDIA T4 data sheet (PCIe Gen3 x16)"
_PCISIG = "PCI-SIG: x16 rate per direction after 128b/130b encoding (Gen3 15.75, Gen4 31.5, Gen5 63 GB/s)"
_TRN1 = "AWS Neuron docs: Trn1 architecture (NeuronLink-v2, 800 Gbps EFA over 8 devices)"
_H20 = "NVIDIA H20: 96 GB HBM3, NVLink 900 GB/s, on the HGX 8-GPU board (nvidia.cn/data-center/products/h20)"
_H800 = "NVIDIA H800: NVLink 400 GB/s, on the HGX 8-GPU board (nvidia.cn/data-center/h800)"
_EX254N = ("HPE Cray Supercomputing EX254n blade: 4 GH200 per node, 4x HPE Slingshot 11 200 Gb/s; CSCS Alps user "
           "documentation, GH200 nodes (docs.cscs.ch/alps/hardware)")
_EX235A = ("HPE Cray EX235a node: 4 MI250X, 4x HPE Slingshot 11 200 Gb/s; OLCF Frontier User Guide "
           "(docs.olcf.ornl.gov/systems/frontier_user_guide.html)")
_SPARK = ("NVIDIA DGX Spark product page: GB10 Grace Blackwell, ConnectX-7 SmartNIC 200 Gb/s "
          "(nvidia.com/en-us/products/workstations/dgx-spark)")
_CHAPTER = '"The Collective Cost Model" (a distributed-training guide), hierarchical worked example'

# Google Kubernetes Engine, 'Maximize GPU network bandwidth with GPUDirect-TCPX', environment variables for NCCL;
# the same in its cluster-provisioning scripts
_GKE_TCPX = "Google's GPUDirect-TCPX guides: NCCL_ALGO=Ring, NCCL_PROTO=Simple"

# What a network's transport makes NCCL run on several nodes, where a log does not say (fabric class -> the
# System's NCCL_ALGO/NCCL_PROTO fields, and where that is required): GPUDirect-TCPX (A3 High) is run on a
# ring with the Simple protocol, so NCCL's model is priced on that ring, not on NVLS-tree.
FABRIC_NCCL_SETTINGS: dict[str, tuple[dict[str, str], str]] = {
    "tcpx": ({"nccl_algo": "Ring", "nccl_proto": "Simple"}, _GKE_TCPX),
}

# which System fields a "sheet" vouches for, by the kind of value
_VALUES = ("gpu", "gpus_per_node", "nvlink_GBps", "nics_per_node", "nic_Gbps", "fabric", "net_gdr")
# what the GPU part and the board give: an entry may not say otherwise (one home for each figure) except where it
# names the field in `own` with the reason in a comment
_FROM_PARTS = ("compute_capability", "nvlink_links", "nvlink_GBps", "nvswitch", "nvls", "pcie_gen", "p2p",
               "links_per_peer", "nvlink_domain")


def _entry(sheet: str, other: dict[str, str] | None = None, *, part: str, board: str, own: tuple[str, ...] = (),
           **values: Any) -> System:
    """A catalogue System composed of a GPU part (named as a tool prints it) on a board, with the network and
    instance its sheet gives (`sheet` for the values it lists, `other`: value -> another sheet)."""
    gpu = gpu_part(part)
    composed = compose(gpu, BOARDS[board], name=values["name"])
    clash = [k for k in _FROM_PARTS if k in values and k not in own and values[k] != getattr(composed, k)]
    if clash:
        raise UsageError(f"catalogue entry {values['name']!r}: {', '.join(clash)} differ from its parts "
                         f"({gpu.name} on {board}): fix the part or name the field in own=")
    sources = dict(composed.sources)
    sources.update({k: sheet for k in _VALUES if k in values})
    sources.update(other or {})
    prov = dict(composed.provenance)
    prov.update({k: f"default for {values['name']} ({sources.get(k, 'catalogue')})" for k in values
                 if k not in ("name", "source")})
    return replace(composed, source=sheet, sources=sources, provenance=prov, **values)


CATALOGUE: dict[str, System] = {s.name: s for s in (
    # ---- whole systems --------------------------------------------------------------------------------
    _entry(_DGX_A100, part="A100 SXM4 80GB", board="nvswitch-gen2", name="dgx-a100", gpu="A100 SXM4 80GB",
           nics_per_node=8, nic_Gbps=200.0, fabric="ib", instance="DGX A100"),
    _entry(_DGX_H100, part="H100 SXM5 80GB", board="nvswitch-gen3", name="dgx-h100", gpu="H100 SXM5 80GB",
           nics_per_node=8, nic_Gbps=400.0, fabric="ib", instance="DGX H100"),
    _entry(_DGX_H200, part="H200 SXM 141GB", board="nvswitch-gen3", name="dgx-h200", gpu="H200 SXM 141GB",
           nics_per_node=8, nic_Gbps=400.0, fabric="ib", instance="DGX H200"),
    _entry(_DGX_B200, part="B200", board="nvswitch-gen4", name="dgx-b200", gpu="B200", nics_per_node=8,
           nic_Gbps=400.0, fabric="ib", instance="DGX B200"),
    # NVL72: 18 compute trays x 4 GPUs on one NVLink domain; one NIC per GPU to the next rack
    _entry(_GB200, part="GB200", board="nvl72", name="gb200-nvl72", gpu="GB200", nics_per_node=72, nic_Gbps=400.0,
           fabric="ib", instance="GB200 NVL72"),
    # GB300's ConnectX-8 SuperNICs sit on PCIe Gen6 x16: NCCL reads a Gen6 NIC (96 GB/s), not Gen5's 48 GB/s
    _entry(_GB300, part="GB300", board="nvl72", own=("pcie_gen",), name="gb300-nvl72", gpu="GB300", pcie_gen=6,
           nics_per_node=72, nic_Gbps=800.0, fabric="ib", instance="GB300 NVL72"),
    # Infinity Fabric: 7 links of 64 GB/s per direction to each peer (896 GB/s both directions), no switch.
    # NCCL's tables have no AMD row: RCCL keeps NCCL's tuning model, so the Hopper row stands in.
    _entry(_MI300X, {"nics_per_node": _ND_MI300X, "nic_Gbps": _ND_MI300X, "fabric": _ND_MI300X},
           part="AMD Instinct MI300X", board="xgmi-mesh-8", name="mi300x", gpu="AMD Instinct MI300X",
           nics_per_node=8, nic_Gbps=400.0, fabric="ib", instance="MI300X platform"),
    # MI325X: the MI300X platform's 8-GPU Infinity Fabric mesh; the data sheet names no NIC: public MI325X clusters
    # use Broadcom Thor 2 RoCE NICs (bnxt_re), one 400 Gb/s per GPU
    _entry(_MI325X, {"nics_per_node": _THOR2, "nic_Gbps": _THOR2, "fabric": _THOR2},
           part="AMD Instinct MI325X", board="xgmi-mesh-8", name="mi325x", gpu="AMD Instinct MI325X",
           nics_per_node=8, nic_Gbps=400.0, fabric="roce", instance="MI325X platform"),
    # MI355X: 7 Infinity Fabric links, CDNA 4
    _entry(_MI355X, {"nics_per_node": _ND_MI300X, "nic_Gbps": _ND_MI300X, "fabric": _ND_MI300X},
           part="AMD Instinct MI355X", board="xgmi-mesh-8", name="mi355x", gpu="AMD Instinct MI355X",
           nics_per_node=8, nic_Gbps=400.0, fabric="roce", instance="MI355X platform"),
    # H20 and H800: Hopper SXM parts for markets under export rules, on the HGX H100 board (NVSwitch gen 3): the H20
    # keeps the full 900 GB/s NVLink with a fraction of the compute, the H800 has 8 links (400 GB/s)
    _entry(_H20, part="H20", board="nvswitch-gen3", name="hgx-h20", gpu="H20", nics_per_node=8, nic_Gbps=400.0,
           fabric="ib", instance="HGX H20"),
    _entry(_H800, part="H800 SXM5", board="nvswitch-gen3", name="hgx-h800", gpu="H800", nics_per_node=8,
           nic_Gbps=400.0, fabric="ib", instance="HGX H800"),
    # ---- supercomputer nodes -----------------------------------------------------------------------------
    _entry(_EX254N, part="GH200", board="gh200-quad", name="hpe-ex254n", gpu="GH200", nics_per_node=4,
           nic_Gbps=200.0, fabric="slingshot", instance="HPE Cray EX254n"),
    _entry(_EX235A, part="AMD Instinct MI250X", board="mi250x-node", name="hpe-ex235a", gpu="AMD Instinct MI250X",
           nics_per_node=4, nic_Gbps=200.0, fabric="slingshot", instance="HPE Cray EX235a"),
    # ---- desktop ---------------------------------------------------------------------------------------------
    _entry(_SPARK, part="GB10", board="gb10-spark", name="dgx-spark", gpu="GB10", nics_per_node=1, nic_Gbps=200.0,
           fabric="roce", instance="DGX Spark"),
    # ---- cloud instances ------------------------------------------------------------------------------
    _entry(_GCP_NET, {"gpu": _GCP_GPUS}, part="H100 SXM5 80GB", board="nvswitch-gen3", name="gcp-a3-high",
           gpu="H100 80GB", nics_per_node=4, nic_Gbps=200.0, fabric="tcpx", net_gdr=False, instance="a3-highgpu-8g"),
    _entry(_GCP_NET, {"gpu": _GCP_GPUS}, part="H100 SXM5 80GB", board="nvswitch-gen3", name="gcp-a3-mega",
           gpu="H100 80GB", nics_per_node=8, nic_Gbps=200.0, fabric="tcpxo", net_gdr=False, instance="a3-megagpu-8g"),
    _entry(_GCP_NET, {"gpu": _GCP_GPUS}, part="H200 SXM 141GB", board="nvswitch-gen3", name="gcp-a3-ultra",
           gpu="H200 141GB", nics_per_node=8, nic_Gbps=400.0, fabric="roce", instance="a3-ultragpu-8g"),
    _entry(_GCP_NET, {"gpu": _GCP_GPUS}, part="B200", board="nvswitch-gen4", name="gcp-a4", gpu="B200",
           nics_per_node=8, nic_Gbps=400.0, fabric="roce", instance="a4-highgpu-8g"),
    _entry(_AWS_P4, part="A100 SXM4 40GB", board="nvswitch-gen2", name="aws-p4d", gpu="A100 SXM4 40GB",
           nics_per_node=4, nic_Gbps=100.0, fabric="efa", instance="p4d.24xlarge"),
    _entry(_AWS_P5, part="H100 SXM5 80GB", board="nvswitch-gen3", name="aws-p5", gpu="H100 80GB", nics_per_node=32,
           nic_Gbps=100.0, fabric="efa", instance="p5.48xlarge"),
    _entry(_AWS_P5, part="H200 SXM 141GB", board="nvswitch-gen3", name="aws-p5en", gpu="H200 141GB",
           nics_per_node=16, nic_Gbps=200.0, fabric="efa", instance="p5en.48xlarge"),
    _entry(_AWS_G4, {"fabric": _AWS_EFA, "pcie_gen": _T4}, part="Tesla T4", board="pcie", name="aws-g4dn-12xlarge",
           gpu="Tesla T4", gpus_per_node=4, nics_per_node=1, nic_Gbps=50.0, fabric="efa", net_gdr=False,
           instance="g4dn.12xlarge"),
    _entry(_AWS_G4, {"fabric": _AWS_EFA, "pcie_gen": _T4}, part="Tesla T4", board="pcie", name="aws-g4dn-metal",
           gpu="Tesla T4", gpus_per_node=8, nics_per_node=1, nic_Gbps=100.0, fabric="efa", net_gdr=False,
           instance="g4dn.metal"),
    _entry(_AZ_A100, part="A100 SXM4 40GB", board="nvswitch-gen2", name="azure-nd-a100-v4", gpu="A100 SXM4 40GB",
           nics_per_node=8, nic_Gbps=200.0, fabric="ib", instance="Standard_ND96asr_v4"),
    _entry(_AZ_H100, part="H100 SXM5 80GB", board="nvswitch-gen3", name="azure-nd-h100-v5", gpu="H100 80GB",
           nics_per_node=8, nic_Gbps=400.0, fabric="ib", instance="Standard_ND96isr_H100_v5"),
    _entry(_OCI, part="H100 SXM5 80GB", board="nvswitch-gen3", name="oci-bm-gpu-h100", gpu="H100 80GB",
           nics_per_node=16, nic_Gbps=200.0, fabric="roce", instance="BM.GPU.H100.8"),
    _entry(_OCI, part="B200", board="nvswitch-gen4", name="oci-bm-gpu-b200", gpu="B200", nics_per_node=8,
           nic_Gbps=400.0, fabric="roce", instance="BM.GPU.B200.8"),
    # ---- older systems and PCIe boxes --------------------------------------------------------------------------
    _entry(_DGX1, part="Tesla V100-SXM2-32GB", board="dgx1-cube-mesh", name="dgx-1v", gpu="V100 SXM2",
           nics_per_node=4, nic_Gbps=100.0, fabric="ib"),
    _entry(_DGX2, part="Tesla V100-SXM3-32GB", board="nvswitch-gen1", name="dgx-2", gpu="V100 SXM3",
           gpus_per_node=16, nics_per_node=8, nic_Gbps=100.0, fabric="ib"),
    # a box of eight PCIe Gen3 cards with peer-to-peer (the T4's host link and NCCL generation row)
    _entry(_PCISIG, part="Tesla T4", board="pcie", name="pcie-p2p", gpu="Tesla T4", gpus_per_node=8,
           nics_per_node=1, nic_Gbps=100.0, fabric="ib"),
    # GeForce cards: P2P disabled by the driver, NCCL moves data through host memory (SHM)
    _entry(_PCISIG, part="GeForce RTX 2080 Ti", board="pcie", name="pcie-2080ti", gpu="GeForce RTX 2080 Ti",
           gpus_per_node=2, nics_per_node=1, nic_Gbps=100.0, fabric="socket"),
    _entry(_T4, {"nic_Gbps": _AWS_G4}, part="Tesla T4", board="pcie", name="pcie-t4", gpu="Tesla T4",
           gpus_per_node=1, nics_per_node=1, nic_Gbps=50.0, fabric="efa", net_gdr=False),
    # a box of eight PCIe Gen4 data-centre cards with peer-to-peer (the A100 PCIe's host link and NCCL row)
    _entry(_PCISIG, part="A100 PCIe 40GB", board="pcie", name="pcie-gen4", gpu="A100 PCIe 40GB", gpus_per_node=8,
           nics_per_node=1, nic_Gbps=200.0, fabric="ib"),
    # 48 GB/s per chip is an assumption (the board's one NeuronLink-v2 link per chip); ~15 us per hop over EFA
    _entry(_TRN1, part="Trainium", board="trn1-node", name="trn1", gpu="Trainium", own=("pcie_gen",), pcie_gen=4,
           nics_per_node=8, nic_Gbps=100.0, fabric="efa", intra_latency_us=2.0, inter_latency_us=15.0,
           instance="trn1.32xlarge"),
    _entry(_CHAPTER, part="A100 SXM4 80GB", board="nvswitch-gen2", name="nvlink300-400gbe", gpu="NVLink GPU",
           nics_per_node=8, nic_Gbps=400.0, fabric="roce"),
)}

# Former and familiar names that keep working.
ALIASES = {"chapter": "nvlink300-400gbe", "alps": "hpe-ex254n", "gh200-quad": "hpe-ex254n", "frontier": "hpe-ex235a",
           "lumi-g": "hpe-ex235a", "mi250x-node": "hpe-ex235a", "spark": "dgx-spark", "h20": "hgx-h20", "dgx-v100": "dgx-1v", "p4d": "aws-p4d", "p5": "aws-p5",
           "p5en": "aws-p5en", "a3-high": "gcp-a3-high", "a3-mega": "gcp-a3-mega", "a3-ultra": "gcp-a3-ultra",
           "a4": "gcp-a4", "nd-h100-v5": "azure-nd-h100-v5", "nd-a100-v4": "azure-nd-a100-v4",
           "hgx-h100": "dgx-h100", "hgx-a100": "dgx-a100", "hgx-b200": "dgx-b200", "hgx-h200": "dgx-h200"}

# GPU model (as nccl-tests / rccl-tests print it) -> catalogue entry and what we inferred.
_GPU_PATTERNS = (
    (r"GB300", "gb300-nvl72", "default for GB300"),
    (r"GB200", "gb200-nvl72", "default for GB200"),
    (r"B200|B100", "dgx-b200", "default for B200 SXM"),
    (r"H200", "dgx-h200", "default for H200 SXM"),
    (r"H100.*(HBM3|SXM)|H100 80GB|H800|GH200", "dgx-h100", "default for H100 SXM"),
    (r"A100.*SXM|A800.*SXM", "dgx-a100", "default for A100 SXM"),
    (r"MI325X", "mi325x", "default for MI325X"),
    (r"MI300X|gfx942", "mi300x", "default for MI300X"),
    (r"MI35\dX|gfx950", "mi355x", "default for MI355X"),
    (r"V100.*SXM3|V100.*32GB.*SXM3", "dgx-2", "default for V100 DGX-2"),
    (r"V100.*SXM", "dgx-1v", "default for V100 DGX-1"),
    (r"2080 Ti|RTX [2345]0[0-9]0|GeForce", "pcie-2080ti", "default for GeForce (PCIe, no P2P)"),
    (r"T4\b", "pcie-t4", "default for T4 (PCIe)"),
    (r"A100.*PCI|A800.*PCI|L40S?\b|\bL4\b|A10G?\b|A30\b|A40\b|RTX A\d000|RTX \d000 Ada", "pcie-gen4",
     "default for a PCIe Gen4 data-center card (P2P)"),
)


def _spelled(name: str) -> str:
    """A name as typed, without case or the spacing between words ('DGX  A100' -> 'dgx a100')."""
    return " ".join(str(name).lower().split())


# Every entry's instance or product name as `collperf systems` prints it (p5.48xlarge, Standard_ND96isr_H100_v5,
# DGX H100), so that the name a user copies from the cloud's console or the catalogue's table is taken as meant
INSTANCE_NAMES = {_spelled(s.instance): key for key, s in CATALOGUE.items() if s.instance}


# Systems composed for a GPU named in place of a system ('--cluster "RTX 4090"'): its part on its usual board,
# kept under the key resolve_name gave it so that every consumer (predict, plan, simulate, diagnose) reads one system
COMPOSED: dict[str, System] = {}


def resolve_name(name: str) -> str:
    """The catalogue key of a name, alias or instance name (case and spaces ignored); for a GPU name ('RTX 4090',
    'GH200') the key of its part composed on its usual board; else a UsageError listing them."""
    key = _spelled(name)
    key = ALIASES.get(key) or INSTANCE_NAMES.get(key) or INSTANCE_NAMES.get(key.replace("-", " ")) or key
    if key in CATALOGUE or key in COMPOSED:
        return key
    try:
        part = find_gpu(name)
    except UsageError:
        part = None
    if part is None:
        raise UsageError(f"unknown system {name!r}: expected one of {', '.join(CATALOGUE)} "
                         f"(or an alias: {', '.join(ALIASES)}; or an instance name as `collperf systems` prints it, "
                         f"e.g. {', '.join([i for i in map(str, INSTANCE_NAMES) if '.' in i][:3])}; or a GPU name: "
                         "`collperf systems --gpus` lists them)")
    system = system_for_gpu(part.name)
    if system.name in CATALOGUE:
        return system.name
    COMPOSED.setdefault(system.name, system)
    return system.name


def lookup(key: str) -> System:
    """The system of a key resolve_name returned (a catalogue entry, or a GPU's composed system)."""
    return CATALOGUE.get(key) or COMPOSED[key]


def gpu_family(system: System) -> str:
    """The catalogue entry of the system's GPU model (dgx-h100 for any H100 system), to match peers."""
    for pattern, key, _ in _GPU_PATTERNS:
        if re.search(pattern, system.gpu, re.IGNORECASE):
            return key
    return system.name


def fabric_nccl_settings(fabric_class: str) -> tuple[dict[str, str], str]:
    """The NCCL settings a fabric class's transport requires ({} where none) and where that is documented."""
    return FABRIC_NCCL_SETTINGS.get(fabric_class, ({}, ""))


def get_system(name: str, nodes: int = 1) -> System:
    system = lookup(resolve_name(name))
    return system.with_("the node count asked for", nodes=nodes) if nodes != 1 else system


def system_for_instance(text: str) -> System | None:
    """The catalogue system whose instance type appears in `text` (a hostname, a header), or None."""
    low = str(text).lower()
    for system in CATALOGUE.values():
        inst = system.instance.lower()
        if inst and ("." in inst or "-" in inst) and re.search(re.escape(inst) + r"(?![\w.])", low):
            return system
    return None


# Whole systems that are the reference design of their GPU on its board: a GPU named alone whose composition is
# one of these (the same links, rates and layout) is judged as that entry, under its name
REFERENCE_SYSTEMS = ("dgx-a100", "dgx-h100", "dgx-h200", "dgx-b200", "gb200-nvl72", "gb300-nvl72", "mi300x", "mi325x",
                     "mi355x", "hgx-h20", "hgx-h800", "hpe-ex254n", "hpe-ex235a", "dgx-spark", "dgx-1v", "dgx-2",
                     "pcie-t4", "pcie-2080ti", "trn1")
_SAME_HARDWARE = ("compute_capability", "nvlink_links", "nvlink_GBps", "nvswitch", "nvls", "pcie_gen", "p2p",
                  "nvlink_domain")


def _reference(system: System, part: GPU) -> System | None:
    """The reference catalogue entry with the same GPU family and hardware as a composed system, or None (an H20 on
    the HGX board has an H100's links, and is still not a DGX H100)."""
    for key in REFERENCE_SYSTEMS:
        ref = CATALOGUE[key]
        if BY_KEY[ref.gpu_part].family == part.family and ref.board == system.board and \
                all(getattr(ref, f) == getattr(system, f) for f in _SAME_HARDWARE) and \
                (ref.gpus_per_node == system.gpus_per_node or not system.nvlink_links):
            return ref
    return None


def system_for_gpu(gpu_model: str, nodes: int = 1, gpus_per_node: int | None = None,
                   overrides: dict[str, Any] | None = None, *, per_node_seen: int | None = None) -> System:
    """The system of a GPU named as tools print it (nccl-tests device lines, nvidia-smi, --gpu): its part from the
    parts table on the board it usually sits on (model/hardware: names, boards, compose), under the name of the
    reference system where the composition is one (an H100 SXM on NVSwitch gen 3 is dgx-h100). `gpus_per_node`
    (the log's) sizes the node and, like `per_node_seen` (GPUs per node a log shows, the node left at the board's
    size), picks between boards of one part (one GH200 per node, or four); overrides: any System field."""
    text = str(gpu_model or "").strip()
    if not text:
        raise UsageError("empty GPU model: expected a device name such as 'NVIDIA A100-SXM4-80GB'")
    part = gpu_part(text)
    board = default_board(part, gpus_per_node or per_node_seen)
    composed = compose(part, board, shown_gpu=text)
    ref = _reference(composed, part)
    why = f"from the GPU part {part.name} on {board.name}"
    if ref is not None:
        prov = {k: f"default for {ref.name} ({why})" for k in ref.provenance}
        base = replace(ref, gpu=text, gpu_part=part.key, board=board.key, provenance=prov)
    else:
        base = composed
    base = base.with_("from GPU model in device lines", gpu=text, compute_capability=part.compute_capability)
    from_log = {"nodes": nodes}
    if gpus_per_node is not None:
        from_log["gpus_per_node"] = gpus_per_node
    system = base.with_("from node count and ranks in the log", **from_log)
    if overrides:
        system = system.with_("user override", **overrides)
    return system


def to_cluster(system: System, nodes: int | None = None, ranks_per_node: int | None = None) -> Cluster:
    """The alpha-beta view of a system (predict, plan, simulate): one GPU link inside a node, one NIC link
    between nodes, NICs per node as the catalogue gives them. Where the GPUs exchange data through host memory
    (PCIe without P2P), every byte crosses the one host bridge they share, so each GPU's link is its share of
    it: the bridge's rate over the GPUs of the node (with all of them moving data at once, as every step of a
    collective does). Then no schedule is priced below the system's host-bridge bound (model/bounds.py)."""
    per_node = ranks_per_node or system.gpus_per_node
    if system.nvlink_links:
        intra_name, intra_Bps = (f"NVLink {system.nvlink_GBps:g} GB/s{'/NVSwitch' if system.nvswitch else ''}",
                                 system.intra_Bps)
    elif system.host_bridge and per_node > 1:
        intra_name, intra_Bps = (f"PCIe Gen{system.pcie_gen} x16 through host memory, shared by {per_node} GPUs",
                                 system.pcie_GBps * 1e9 / per_node)
    else:
        intra_name, intra_Bps = f"PCIe Gen{system.pcie_gen} x16", system.intra_Bps
    return Cluster(nodes=nodes or system.nodes, ranks_per_node=per_node,
                   intra=Link(system.intra_latency_us / 1e6, intra_Bps, name=intra_name),
                   inter=Link(system.inter_latency_us / 1e6, system.nic_Bps,
                              name=f"{system.nic_Gbps:g} Gb/s {system.fabric.upper()}"),
                   nics_per_node=system.nics_per_node, name=system.name, source=system.source)
