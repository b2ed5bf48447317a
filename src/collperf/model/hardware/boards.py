"""How a node links its GPUs (a board), and the network that usually comes with it: one row per design, each
with its source. A system is a GPU part on a board, with NICs on a fabric (compose.py); which board a GPU sits
on when the input names only the GPU is `default_board` (its form factor and link generation decide).

The network a board names is what its reference design ships (DGX H100: 8 ConnectX-7 400G InfiniBand); a log's
NCCL INFO lines or the user's flags replace it, and where neither does the resolver says it was assumed.
"""

from __future__ import annotations

from dataclasses import dataclass

from collperf.errors import UsageError
from collperf.model.hardware.parts import GPU

KINDS = ("switch", "all-to-all", "cube-mesh", "bridge", "pcie", "single", "domain")

_DGX1 = ("NVIDIA DGX-1 with Tesla V100 system architecture white paper: hybrid cube-mesh NVLink, 4x 100 Gb/s EDR IB "
         "(images.nvidia.com/content/pdf/dgx1-v100-system-architecture-whitepaper.pdf)")
_DGX2 = ("NVIDIA DGX-2 data sheet: 16 V100 SXM3 on 12 NVSwitches, 8x 100 Gb/s EDR IB "
         "(nvidia.com/content/dam/en-zz/Solutions/Data-Center/dgx-2/dgx-2-print-datasheet-738070-nvidia-a4-web.pdf)")
_DGXA100 = ("NVIDIA DGX A100 data sheet: 6 NVSwitches gen 2, 8x ConnectX-6 200 Gb/s HDR IB "
            "(nvidia.com/content/dam/en-zz/Solutions/Data-Center/nvidia-dgx-a100-datasheet.pdf)")
_DGXH100 = ("NVIDIA DGX H100 data sheet: 4 NVSwitches gen 3 with SHARP, 8x ConnectX-7 400 Gb/s NDR IB "
            "(resources.nvidia.com/en-us-dgx-systems/ai-enterprise-dgx)")
_DGXB200 = "NVIDIA DGX B200 data sheet: NVSwitch gen 4, 8x ConnectX-7 400 Gb/s (nvidia.com/en-us/data-center/dgx-b200)"
_NVL72 = ("NVIDIA GB200 NVL72 specifications: 72 GPUs on one NVLink domain of 9 NVLink switch trays "
          "(nvidia.com/en-us/data-center/gb200-nvl72)")
_EX254N = ("HPE Cray Supercomputing EX254n blade (4 GH200 per node, all-to-all NVLink, 6 links per pair; 4x HPE "
           "Slingshot 11 200 Gb/s); CSCS Alps user documentation, GH200 nodes (docs.cscs.ch/alps/hardware)")
_FRONTIER = ("OLCF Frontier User Guide, node architecture (4 MI250X = 8 GCDs; GCD pairs on 4 Infinity Fabric links of "
             "50 GB/s per direction, packages on 1-2 links; 4x HPE Slingshot 11 200 Gb/s) "
             "(docs.olcf.ornl.gov/systems/frontier_user_guide.html)")
_MI300X = ("AMD Instinct MI300X platform data sheet: 8 OAM in a fully connected Infinity Fabric mesh "
           "(amd.com/en/products/accelerators/instinct/mi300/platform.html)")
_SPARK = ("NVIDIA DGX Spark product page: one GB10; ConnectX-7 SmartNIC, 200 Gb/s to a second Spark "
          "(nvidia.com/en-us/products/workstations/dgx-spark)")
_ELCAP = ("LLNL El Capitan / HPE Cray EX255a node: 4 MI300A in a full Infinity Fabric mesh, two xGMI 3 links per "
          "pair (64 GB/s per direction each); 4x HPE Slingshot 11 200 Gb/s (hpc.llnl.gov/hardware/compute-platforms/el-capitan)")
_TRN1 = ("AWS Neuron docs: Trn1 architecture, 16 Trainium on NeuronLink-v2, 800 Gbps EFA "
         "(awsdocs-neuron.readthedocs-hosted.com/en/latest/general/arch/neuron-hardware/trn1-arch.html)")
_PCISIG = "PCI-SIG specifications: GPUs on the host's PCIe root complexes or switches (pcisig.com/specifications)"
_BRIDGE = "NVIDIA NVLink bridge: two PCIe cards joined by an NVLink bridge (nvidia.com/en-us/data-center/nvlink)"


@dataclass(frozen=True)
class Board:
    """How one node links its GPUs, and the network its reference design ships with."""

    key: str
    name: str
    kind: str                  # KINDS
    gpus: int                  # GPUs per node in the reference design
    links_per_peer: int = 0    # mesh: links from each GPU to each other GPU
    nvls: bool = False         # in-switch reduction (NVLink SHARP; Hopper and later switches)
    domain: int = 0            # GPUs of one NVLink domain across trays (NVL72)
    nics: int = 1              # the reference design's NICs per node
    nic_Gbps: float = 100.0
    fabric: str = "ib"
    cpu_arch: str = "x86"
    cpu_vendor: str = "intel"
    ring_links: int = 0        # links a ring of the whole node can use per GPU where the mesh is uneven (MI250X); 0:
                               # all of the GPU's links
    source: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS or self.gpus < 1 or not self.source:
            raise UsageError(f"board {self.key!r}: kind {self.kind!r} in {KINDS}, gpus >= 1 and a source are needed")


BOARDS: dict[str, Board] = {b.key: b for b in (
    Board("dgx1-cube-mesh", "hybrid cube-mesh NVLink (DGX-1)", "cube-mesh", 8, nics=4, nic_Gbps=100.0, source=_DGX1),
    Board("nvswitch-gen1", "NVSwitch gen 1 (DGX-2, 16 GPUs)", "switch", 16, nics=8, nic_Gbps=100.0, source=_DGX2),
    Board("nvswitch-gen2", "NVSwitch gen 2 (HGX A100 8-GPU)", "switch", 8, nics=8, nic_Gbps=200.0, source=_DGXA100),
    Board("nvswitch-gen3", "NVSwitch gen 3 with NVLink SHARP (HGX H100/H200/H20 8-GPU)", "switch", 8, nvls=True,
          nics=8, nic_Gbps=400.0, source=_DGXH100),
    Board("nvswitch-gen4", "NVSwitch gen 4 with NVLink SHARP (HGX B200/B300 8-GPU)", "switch", 8, nvls=True, nics=8,
          nic_Gbps=400.0, source=_DGXB200),
    Board("nvl72", "NVL72 rack: 72 GPUs on one NVLink domain", "domain", 72, nvls=True, domain=72, nics=72,
          nic_Gbps=400.0, cpu_arch="arm", source=_NVL72),
    Board("gh200-quad", "4 GH200 superchips, NVLink all-to-all (6 links per pair)", "all-to-all", 4,
          links_per_peer=6,
          nics=4, nic_Gbps=200.0, fabric="slingshot", cpu_arch="arm", source=_EX254N),
    Board("gh200-single", "one GH200 superchip per node", "single", 1, nics=1, nic_Gbps=400.0, cpu_arch="arm",
          source="NVIDIA GH200 Grace Hopper Superchip: one superchip per node, one NIC per superchip "
                 "(nvidia.com/en-us/data-center/grace-hopper-superchip)"),
    Board("mi250x-node", "4 MI250X = 8 GCDs on Infinity Fabric (Frontier/LUMI-G node)", "all-to-all", 8,
          links_per_peer=1,
          nics=4, nic_Gbps=200.0, fabric="slingshot", cpu_vendor="amd", ring_links=2, source=_FRONTIER),
    Board("mi300a-quad", "4 MI300A APUs in a full Infinity Fabric mesh (El Capitan node)", "all-to-all", 4,
          links_per_peer=2, nics=4, nic_Gbps=200.0, fabric="slingshot", cpu_vendor="amd", source=_ELCAP),
    # the Neuron guide gives no per-chip ring rate: one NeuronLink-v2 link per chip is what a ring of the 16 is
    # taken to use (48 GB/s per direction, the catalogue's long-standing assumption; ~15 us per hop over EFA)
    Board("trn1-node", "16 Trainium on NeuronLink-v2 (trn1.32xlarge)", "cube-mesh", 16, nics=8, nic_Gbps=100.0,
          fabric="efa", ring_links=1, source=_TRN1),
    Board("xgmi-mesh-8", "8 OAM GPUs in a full Infinity Fabric mesh", "all-to-all", 8, links_per_peer=1, nics=8,
          nic_Gbps=400.0, cpu_vendor="amd", source=_MI300X),
    Board("nvlink-bridge", "two PCIe cards joined by an NVLink bridge", "bridge", 2, links_per_peer=0,
          source=_BRIDGE),
    Board("pcie", "PCIe cards on the host's PCIe (peer-to-peer where the GPU allows it)", "pcie", 8, source=_PCISIG),
    Board("gb10-spark", "DGX Spark: one GB10, ConnectX-7 200 Gb/s", "single", 1, nics=1, nic_Gbps=200.0,
          fabric="roce", cpu_arch="arm", source=_SPARK),
)}


def default_board(gpu: GPU, gpus_per_node: int | None = None) -> Board:
    """The board a GPU sits on when the input names only the GPU: its form factor and link generation decide
    (SXM parts on their generation's NVSwitch board, V100/P100 SXM2 on DGX-1's cube-mesh, GB200/GB300 in an
    NVL72 rack, GH200 four to a node, AMD OAM parts on an 8-GPU mesh, PCIe cards on PCIe). `gpus_per_node`
    (from the log) picks between designs of one part (one GH200 per node, or four)."""
    if gpu.vendor == "aws":
        return BOARDS["trn1-node"]
    if gpu.form == "SoC":
        return BOARDS["gb10-spark"]
    if gpu.form == "superchip" and gpu.amd:
        return BOARDS["mi300a-quad"]
    if gpu.form == "superchip":
        if gpu.link == "NVLink5":
            return BOARDS["nvl72"]
        return BOARDS["gh200-single"] if gpus_per_node == 1 else BOARDS["gh200-quad"]
    if gpu.gcds > 1 and gpu.links:
        return BOARDS["mi250x-node"]
    if gpu.form == "OAM" and gpu.links:
        return BOARDS["xgmi-mesh-8"]
    if gpu.form == "SXM":
        if gpu.link in ("NVLink1", "NVLink2"):
            # V100 SXM3 is DGX-2's NVSwitch part; SXM2 parts sit on DGX-1's cube-mesh
            return BOARDS["nvswitch-gen1"] if "SXM3" in gpu.name.upper() else BOARDS["dgx1-cube-mesh"]
        return BOARDS[{"NVLink3": "nvswitch-gen2", "NVLink4": "nvswitch-gen3", "NVLink5": "nvswitch-gen4"}.get(
            gpu.link, "nvswitch-gen3")]
    if gpu.links and gpus_per_node == 2 and gpu.form == "NVL":
        return BOARDS["nvlink-bridge"]
    return BOARDS["pcie"]
