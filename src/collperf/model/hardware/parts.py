"""Hardware parts: one GPU (or accelerator) as its data sheet describes it, each figure with the sheet it came
from and the sheet's own words.

A part is one declaration, checked when the module loads (as the algorithm registry checks an algorithm): a
figure without a source, a quote that does not hold the figure, or a link count without a rate is refused at
import, so a malformed row never reaches a verdict. Figures are kept as the sheet prints them (GB of memory,
TB/s of memory bandwidth, TFLOPS dense, the GPU-to-GPU bandwidth in both directions as vendors quote it); what
the models read (bytes, bytes/s, a per-direction rate) is derived in properties, never typed twice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from collperf.errors import UsageError

VENDORS = ("nvidia", "amd", "aws", "intel")
# How the part sits in a server: a socketed module (SXM, AMD's OAM), a PCIe card, a PCIe card sold with NVLink
# bridges (H100 NVL, H200 NVL), a CPU+GPU superchip module (GH200, GB200, GB300), a system on a chip (GB10)
FORMS = ("SXM", "OAM", "PCIe", "NVL", "superchip", "SoC")
# The dtypes a peak is quoted for (dense: without 2:4 structured sparsity)
DTYPES = ("fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "fp4", "int8")
# The GPU-to-GPU link families: NVLink generations, AMD Infinity Fabric (xGMI) generations, AWS NeuronLink
LINKS = (
    "",
    "NVLink1",
    "NVLink2",
    "NVLink3",
    "NVLink4",
    "NVLink5",
    "NVLink-C2C",
    "xGMI2",
    "xGMI3",
    "xGMI4",
    "NeuronLink-v2",
    "NeuronLink-v3",
)
# PCIe x16 per direction after encoding, GB/s (PCI-SIG: Gen3 8 GT/s 128b/130b ... Gen6 64 GT/s FLIT)
PCIE_X16_GBps = {3: 15.75, 4: 31.5, 5: 63.0, 6: 126.0}
# the fields each row must source (the rest are derived or structural)
SOURCED = ("memory_GB", "memory_TBps", "tflops", "links", "link_total_GBps", "pcie_gen")


def sourced(sheet: str, *fields: str) -> dict[str, str]:
    """The same sheet for several fields of a row."""
    return {f: sheet for f in fields}


def figure_in(value: float, quote: str) -> bool:
    """Whether a sheet's words hold a figure: the number itself, or twice it where the sheet quotes the peak
    with 2:4 sparsity (the parts keep dense peaks). Thousands separators and 'TB/s'-style units are read."""
    numbers = []
    for text, unit in re.findall(r"(\d[\d,]*(?:\.\d+)?)\s*([A-Za-z/]*)", quote):
        n = float(text.replace(",", ""))
        numbers.append(n)
        # a sheet that prints the figure one prefix away from the field's unit: GB/s for a TB/s field (V100's
        # '900 GB/sec'), TB/s for a GB/s field (Blackwell's NVLink '1.8TB/s'), petaFLOPS for TFLOPS (B200)
        if re.match(r"(?i)[GT]B/s", unit):
            numbers += [n / 1000, n * 1000]
        elif re.match(r"(?i)(PFLOP|petaFLOP|POPS|PF\b|petaOPS)", unit):
            numbers.append(n * 1000)
    sparse = "sparsity" in quote.lower() or "sparse" in quote.lower()
    return any(
        abs(n - value) <= 1e-6 * max(1.0, n) or (sparse and abs(n - 2 * value) <= 1e-6 * max(1.0, n)) for n in numbers
    )


@dataclass(frozen=True)
class GPU:
    """One GPU as its data sheet gives it. `quotes[field]` holds the sheet's words for the figure (for `tflops`,
    one quote per dtype under 'tflops.bf16', ...): the test reads each figure back out of its quote."""

    key: str  # kebab-case, unique: 'h100-sxm5-80gb'
    name: str  # as people write it: 'H100 SXM5 80GB'
    vendor: str  # VENDORS
    family: str  # the model number that makes peers: 'H100', 'MI300X', 'RTX 4090'
    arch: str  # 'Hopper', 'CDNA 3', 'Ada Lovelace', ...
    compute_capability: int  # NVIDIA's sm (90 for Hopper); AMD and AWS: the NCCL table row RCCL/Neuron use
    form: str  # FORMS
    memory_GB: float  # as the sheet prints it (80 for '80GB HBM3')
    memory_TBps: float  # memory bandwidth as printed (3.35 for '3.35TB/s')
    tflops: dict[str, float]  # dtype -> dense peak TFLOPS as printed (no sparsity); only dtypes the sheet gives
    link: str = ""  # LINKS: the GPU-to-GPU link family ('' none)
    links: int = 0  # GPU-to-GPU links per GPU
    link_total_GBps: float = 0.0  # all links together, both directions, as the sheet prints it (900 for NVLink4)
    pcie_gen: int = 4  # host interface generation
    pcie_lanes: int = 16
    p2p: bool = True  # peer-to-peer over PCIe allowed by the driver (GeForce since Turing: no)
    gcds: int = 1  # graphics compute dies seen as separate GPUs (MI250X: 2)
    names: tuple[str, ...] = ()  # regular expressions over the normalized name (names.py) that mean this part
    sources: dict[str, str] = field(
        default_factory=dict, compare=False
    )  # field (or 'tflops.bf16') -> sheet title (URL)
    quotes: dict[str, str] = field(default_factory=dict, compare=False)  # field (or 'tflops.bf16') -> the sheet's words

    def __post_init__(self) -> None:
        where = f"GPU part {self.key!r}"
        if not re.fullmatch(r"[a-z0-9]+(-[a-z0-9.]+)*", self.key):
            raise UsageError(f"{where}: key must be kebab-case")
        for name, allowed in (("vendor", VENDORS), ("form", FORMS), ("link", LINKS)):
            if getattr(self, name) not in allowed:
                raise UsageError(f"{where}: {name} {getattr(self, name)!r}: expected one of {allowed}")
        if not self.memory_GB > 0 or not self.memory_TBps > 0:
            raise UsageError(f"{where}: memory_GB and memory_TBps must be > 0")
        bad = sorted(set(self.tflops) - set(DTYPES))
        if bad or not self.tflops or not all(v > 0 for v in self.tflops.values()):
            raise UsageError(f"{where}: tflops {self.tflops!r}: expected dtypes of {DTYPES} with peaks > 0")
        if bool(self.links) != bool(self.link_total_GBps > 0) or bool(self.links) != bool(self.link):
            raise UsageError(
                f"{where}: links {self.links}, link {self.link!r} and link_total_GBps "
                f"{self.link_total_GBps} must be given together"
            )
        if self.pcie_gen not in PCIE_X16_GBps or self.pcie_lanes not in (4, 8, 16):
            raise UsageError(f"{where}: PCIe Gen{self.pcie_gen} x{self.pcie_lanes} is not a host interface")
        for name in SOURCED:
            if name == "tflops":
                missing = [f"tflops.{d}" for d in self.tflops if f"tflops.{d}" not in self.sources]
            elif name in ("links", "link_total_GBps") and not self.links:
                missing = []
            else:
                missing = [name] if name not in self.sources else []
            if missing:
                raise UsageError(f"{where}: no source for {', '.join(missing)}")
        for name, quote in self.quotes.items():
            value = self.tflops.get(name[len("tflops.") :]) if name.startswith("tflops.") else getattr(self, name, None)
            if value is None or not figure_in(value, quote):
                raise UsageError(f"{where}: the quote for {name} ({quote!r}) does not hold its figure {value!r}")
        for pattern in self.names:
            re.compile(pattern)

    # ---- what the models read ----------------------------------------------------------------
    # A part with several compute dies seen as separate GPUs (MI250X: two GCDs, each its own device to ROCm and
    # RCCL) is quoted per package on its sheet; what one device (one rank) has is the package's share.
    @property
    def memory_bytes(self) -> float:
        """One device's memory in bytes. GPU memory is sold in binary units whatever the sheet writes (an "80GB"
        H100 holds 80 GiB: nvidia-smi shows 81,559 MiB; HBM stacks are 2^k bytes), so GB here is GiB."""
        return self.memory_GB * 2**30 / self.gcds

    @property
    def memory_Bps(self) -> float:
        """One device's memory bandwidth, bytes/s."""
        return self.memory_TBps * 1e12 / self.gcds

    def flops(self, dtype: str = "bf16") -> float | None:
        """One device's dense peak FLOP/s of a dtype; bf16 falls back to fp16 (Volta and Turing print no bf16)."""
        value = self.tflops.get(dtype)
        if value is None and dtype == "bf16":
            value = self.tflops.get("fp16")
        return value * 1e12 / self.gcds if value else None

    @property
    def link_GBps(self) -> float:
        """All GPU-to-GPU links of one GPU, per direction (the sheets print both directions)."""
        return self.link_total_GBps / 2

    @property
    def per_link_GBps(self) -> float:
        return self.link_GBps / self.links if self.links else 0.0

    @property
    def pcie_GBps(self) -> float:
        """The host interface per direction: the x16 rate of its generation, scaled to its lanes."""
        return PCIE_X16_GBps[self.pcie_gen] * self.pcie_lanes / 16

    @property
    def amd(self) -> bool:
        return self.vendor == "amd"

    def source_of(self, name: str) -> str:
        return self.sources.get(name, "")
