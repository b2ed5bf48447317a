"""NCCL's own XML files: the topology it detected (NCCL_TOPO_DUMP_FILE; the same format NCCL_TOPO_FILE reads) and the
channel graphs its search found (NCCL_GRAPH_DUMP_FILE).

Format (NCCL 2.30.7 src/graph/xml.cc ncclTopoDumpXmlToFile, src/graph/topo.cc ncclTopoGetSystem, src/graph/search.cc
ncclTopoGetXmlFromGraphs): <system version> holds <cpu numaid arch vendor> elements; under each, nested <pci busid
class vendor device link_speed link_width> bridges and devices; a GPU is <pci ...><gpu dev sm rank gdr><nvlink target
count tclass/></gpu></pci>, a NIC <pci ...><nic><net name dev speed port gdr/></nic></pci> (speed in Mb/s). <graphs>
holds <graph id pattern crossnic nchannels speedintra speedinter typeintra typeinter samechannels>, each <channel> a
list of <net dev/> and <gpu dev/>; graph ids 0 ring, 1 tree, 2 CollNet, 3 NVLS... (src/include/graph.h
NCCL_TOPO_PATTERN_*, the graphs' order in src/init.cc).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from collperf.ingest.table import IngestError

# The PCI device ids of common NVIDIA data-centre and workstation GPUs, each as the PCI ID Repository names it
# (pci.ids version 2026.08.22, vendor 10de: github.com/pciutils/pciids), written as a name the parts table resolves
# (model/hardware/names.py). An id not listed names no GPU: the topology still gives the links, and --gpu names the
# part. Left out on purpose: ids whose pci.ids name no part of ours matches exactly (2321 "H100L 94GB", 2336 "H100",
# 2337-2339 and 233d, H100 SXM5 with 64, 96 or 94 GB), so that a topology never names a part it cannot tell.
PCI_GPUS = {
    "0x1db1": "Tesla V100-SXM2-16GB",
    "0x1db5": "Tesla V100-SXM2-32GB",
    "0x1db4": "Tesla V100-PCIE-16GB",
    "0x1eb8": "Tesla T4",
    "0x20b0": "A100-SXM4-40GB",
    "0x20b2": "A100-SXM4-80GB",
    "0x20f1": "A100-PCIE-40GB",
    "0x20b5": "A100 80GB PCIe",
    "0x2330": "H100 80GB HBM3",
    "0x2331": "H100 PCIe",
    "0x2324": "H800",
    "0x2322": "H800 PCIe",
    "0x2335": "H200 SXM 141GB",
    "0x233b": "H200 NVL",
    "0x2901": "B200",
    "0x2909": "B200",
    "0x2941": "GB200",
    "0x26b9": "L40S",
    "0x2230": "RTX A6000",
    "0x2684": "GeForce RTX 4090",
    "0x2204": "GeForce RTX 3090",
    "0x1e07": "GeForce RTX 2080 Ti",
}
# NCCL's path types, nearest first (src/include/graph.h): how far a GPU is from a NIC or another GPU
PATHS = ("LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS", "NET", "DIS")
_MAX_CHARS = 16 << 20


@dataclass(frozen=True)
class TopoDevice:
    """A GPU or a NIC of the topology, with the PCIe path from its CPU: the bridges above it, outermost first."""

    kind: str  # "gpu" or "nic"
    index: int  # NCCL's dev index
    name: str  # the NIC's name (mlx5_0); the GPU's bus id
    numa: int
    bridges: tuple[str, ...]  # bus ids of the PCI bridges from the CPU down to the device's own function
    link: str = ""  # the device's PCIe link as NCCL read it: "32.0 GT/s PCIe x16"
    speed_Gbps: float = 0.0  # a NIC's port rate
    nvlinks: int = 0  # a GPU's NVLink count (all targets together)
    nvlink_gpus: dict = field(default_factory=dict)  # peer GPU bus id -> NVLinks to it (no switch between)
    sm: int = 0
    pci_device: str = ""
    gdr: bool = True
    line: str = ""


@dataclass(frozen=True)
class NodeTopology:
    """One node's GPUs and NICs as NCCL (or nvidia-smi) saw them."""

    source: str
    kind: str  # "NCCL topology XML" or "nvidia-smi topo -m"
    gpus: tuple[TopoDevice, ...]
    nics: tuple[TopoDevice, ...]
    gpu_name: str = ""  # what the PCI device id names, '' unknown
    nvswitch: bool = False  # the GPUs' NVLinks end on NVSwitches (tclass 0x068000 targets)
    paths: dict = field(default_factory=dict)  # (gpu index, "NIC name" or gpu index) -> path type
    cpus: int = 0


@dataclass(frozen=True)
class Graph:
    id: int
    pattern: int
    channels: int
    speed_intra_GBps: float
    speed_inter_GBps: float
    type_intra: str
    type_inter: str
    nets: tuple[int, ...]  # the NIC dev indices the channels enter and leave by
    line: str = ""


@dataclass(frozen=True)
class NcclGraphs:
    source: str
    graphs: tuple[Graph, ...]


_GRAPH_NAMES = {0: "ring", 1: "tree", 2: "CollNet", 3: "NVLS", 4: "CollNet direct"}


def graph_name(graph: Graph) -> str:
    return _GRAPH_NAMES.get(graph.id, f"graph {graph.id}")


def _first_tag(stripped: str) -> str:
    """The document's first element, past an XML declaration and comments (a provenance line)."""
    rest = stripped
    while rest.startswith(("<?", "<!--")):
        end = rest.find("?>" if rest.startswith("<?") else "-->")
        if end < 0:
            return ""
        rest = rest[end + (2 if rest.startswith("<?") else 3) :].lstrip()
    return rest[:8]


def looks_like_topology(stripped: str) -> bool:
    return _first_tag(stripped).startswith("<system")


def looks_like_graphs(stripped: str) -> bool:
    return _first_tag(stripped).startswith("<graphs")


def _root(text: str, source: str, tag: str):
    import xml.etree.ElementTree as ET

    if len(text) > _MAX_CHARS:
        raise IngestError(
            f"{source}: {len(text)} characters is larger than any NCCL {tag} dump (expected under "
            f"{_MAX_CHARS >> 20} MiB): check that this is the file NCCL wrote"
        )
    if "<!ENTITY" in text or "<!DOCTYPE" in text:
        raise IngestError(
            f"{source}: an XML document type declaration: NCCL's dumps have none; give the file NCCL wrote"
        )
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        raise IngestError(
            f"{source}: broken XML ({e}): expected the file NCCL wrote for NCCL_TOPO_DUMP_FILE or NCCL_GRAPH_DUMP_FILE"
        ) from None
    if root.tag != tag:
        raise IngestError(f"{source}: the XML's root is <{root.tag}>, expected <{tag}>")
    return root


def _int(value, source: str, what: str, base: int = 10) -> int:
    try:
        return int(str(value), base)
    except ValueError:
        raise IngestError(f"{source}: {what} {str(value)[:40]!r} is not a whole number") from None


def _float(value, source: str, what: str) -> float:
    try:
        number = float(str(value))
    except ValueError:
        number = float("nan")
    if not number == number or number < 0 or number == float("inf"):
        raise IngestError(f"{source}: {what} {str(value)[:40]!r} is not a number >= 0")
    return number


def _attrs(element) -> str:
    return f"<{element.tag} " + " ".join(f'{k}="{v}"' for k, v in list(element.attrib.items())[:6]) + ">"


def parse_topology(text: str, source: str = "<topology>") -> NodeTopology:
    root = _root(text, source, "system")
    gpus: list[TopoDevice] = []
    nics: list[TopoDevice] = []
    switch_targets = set()
    names = set()
    cpus = root.findall("cpu")

    def walk(element, numa: int, bridges: tuple[str, ...], link: str = ""):
        for child in element:
            if child.tag == "pci":
                busid = child.get("busid", "")
                below = bridges + (busid,)
                if child.get("device") and child.get("vendor") == "0x10de" and child.find("gpu") is not None:
                    names.add(child.get("device"))
                link = f"{child.get('link_speed', '?')} x{child.get('link_width', '?')}"
                for gpu in child.findall("gpu"):
                    links = {}
                    for nv in gpu.findall("nvlink"):
                        count = _int(nv.get("count", "0"), source, "nvlink count")
                        if nv.get("tclass") == "0x068000":
                            switch_targets.add(nv.get("target"))
                        else:
                            links[nv.get("target", "")] = links.get(nv.get("target", ""), 0) + count
                    total = sum(_int(nv.get("count", "0"), source, "nvlink count") for nv in gpu.findall("nvlink"))
                    gpus.append(
                        TopoDevice(
                            "gpu",
                            _int(gpu.get("dev", len(gpus)), source, "gpu dev"),
                            busid,
                            numa,
                            below,
                            link,
                            0.0,
                            total,
                            links,
                            _int(gpu.get("sm", "0"), source, "gpu sm"),
                            child.get("device", ""),
                            gpu.get("gdr", "1") != "0",
                            _attrs(gpu),
                        )
                    )
                walk(child, numa, below, link)
            elif child.tag == "nic":  # under its PCI function, or straight under a CPU (a virtual NIC)
                for net in child.findall("net"):
                    nics.append(
                        TopoDevice(
                            "nic",
                            _int(net.get("dev", len(nics)), source, "net dev"),
                            net.get("name", "?"),
                            numa,
                            bridges,
                            link if element.tag == "pci" else "",
                            _float(net.get("speed", "0"), source, "net speed") / 1000,
                            gdr=net.get("gdr", "1") != "0",
                            line=_attrs(net),
                        )
                    )

    for cpu in cpus:
        walk(cpu, _int(cpu.get("numaid", "0"), source, "cpu numaid"), ())
    if not gpus and not nics:
        raise IngestError(
            f"{source}: an NCCL topology with no <gpu> and no <net> element: dump it from a run that "
            "uses the GPUs (NCCL_TOPO_DUMP_FILE is written at communicator init)"
        )
    paths = {}
    for g in gpus:
        for n in nics:
            paths[(g.index, n.name)] = pci_path(g, n)
        for h in gpus:
            if h is not g:
                paths[(g.index, h.index)] = (
                    "NVL" if g.nvlinks and (switch_targets or h.name in g.nvlink_gpus) else pci_path(g, h)
                )
    gpu_name = PCI_GPUS.get(next(iter(names)), "") if len(names) == 1 else ""
    return NodeTopology(
        source, "NCCL topology XML", tuple(gpus), tuple(nics), gpu_name, bool(switch_targets), paths, len(cpus)
    )


def pci_path(a: TopoDevice, b: TopoDevice) -> str:
    """NCCL's path type between two PCI devices from their bridges (src/graph/paths.cc): PIX through one PCIe
    switch, PXB through several, PHB through the CPU's host bridge, SYS across CPU sockets."""
    if a.numa != b.numa:
        return "SYS"
    above_a, above_b = a.bridges[:-1], b.bridges[:-1]  # the bridges above each device's own function
    common = 0
    while common < min(len(above_a), len(above_b)) and above_a[common] == above_b[common]:
        common += 1
    if common == 0:
        return "PHB"
    return "PIX" if len(above_a) == common and len(above_b) == common else "PXB"


def parse_graphs(text: str, source: str = "<graphs>") -> NcclGraphs:
    root = _root(text, source, "graphs")
    graphs = []
    for g in root.findall("graph"):
        nets = tuple(
            dict.fromkeys(
                _int(n.get("dev", "0"), source, "net dev") for ch in g.findall("channel") for n in ch.findall("net")
            )
        )
        graphs.append(
            Graph(
                _int(g.get("id", "0"), source, "graph id"),
                _int(g.get("pattern", "0"), source, "pattern"),
                _int(g.get("nchannels", "0"), source, "nchannels"),
                _float(g.get("speedintra", "0"), source, "speedintra"),
                _float(g.get("speedinter", "0"), source, "speedinter"),
                g.get("typeintra", "?"),
                g.get("typeinter", "?"),
                nets,
                _attrs(g),
            )
        )
    if not graphs:
        raise IngestError(f"{source}: <graphs> with no <graph> element: expected the file NCCL_GRAPH_DUMP_FILE wrote")
    return NcclGraphs(source, tuple(graphs))


def link_rate(link: str) -> float | None:
    """'32.0 GT/s PCIe x16' -> its GT/s (None where NCCL wrote none)."""
    m = re.match(r"\s*(\d{1,3}(?:\.\d{1,3})?) GT/s", link)
    return float(m.group(1)) if m else None
