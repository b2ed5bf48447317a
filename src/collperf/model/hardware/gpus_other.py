"""The GPU table's rows for GeForce cards (since Pascal), then AMD Instinct and AWS Trainium (gpus_accelerators.py):
the same shape as gpus.py's data-centre NVIDIA rows, each figure with its data sheet.

Units as the sheets print them. NVIDIA's GeForce white papers and the TechPowerUp database print memory bandwidth
in GB/s (and AWS in GB/sec): the row keeps TB/s, so those figures carry their source but no quote (`figure_in`
reads the number as printed, 1008 is not 1.008); the sheet's words are in the comment beside the row.

Every quote below is the source's own words as read in a verification pass (a table's quote is its row label and
cells as printed; where the module joins cells it uses ' | '). A figure without a quote carries its source, but the
source's text was not reachable in that pass: the figure stands as first entered from the named sheet and is
unverified (rows say so). Comments that recall a sheet's wording beside such rows are likewise unverified.

GeForce tensor peaks are the dense FP16 (and BF16) rate with FP32 accumulate, the one mixed-precision training
runs at (GeForce cards run it at half the FP16-accumulate rate the marketing figure uses). Where no NVIDIA sheet
prints a card's FP32 peak, the TechPowerUp GPU database gives it (shader count x boost clock x 2).
"""

from __future__ import annotations

from collperf.model.hardware.gpus_accelerators import ACCELERATORS
from collperf.model.hardware.parts import GPU, sourced as _src


def _geforce(model: str, *, not_followed_by: str = "") -> str:
    """A GeForce model number as tools print it ('NVIDIA GeForce RTX 4090') or users type it ('rtx-4090',
    '4090'): anchored on the 4-digit number so it never meets a data-centre 'RTX A6000' or 'RTX 6000 Ada'.
    Laptop parts share the number but not the figures: they are left out."""
    exclude = "|".join(x for x in (" LAPTOP", " MOBILE", " MAX Q", not_followed_by) if x)
    model = model.replace(" TI", " ?TI")    # '1080Ti' is printed too
    return rf"\b(?:(?:GEFORCE )?(?:RTX|GTX) )?{model}\b(?!{exclude})"


# ---- NVIDIA sheets ------------------------------------------------------------------------------------------
_TURING_WP = ("NVIDIA Turing GPU Architecture white paper (images.nvidia.com/aem-dam/en-zz/Solutions/"
              "design-visualization/technologies/turing-architecture/NVIDIA-Turing-Architecture-Whitepaper.pdf)")
_AMPERE_WP = ("NVIDIA Ampere GA102 GPU Architecture white paper (images.nvidia.com/aem-dam/en-zz/Solutions/"
              "geforce/ampere/pdf/NVIDIA-ampere-GA102-GPU-Architecture-Whitepaper-V1.pdf)")
_ADA_WP = ("NVIDIA Ada GPU Architecture white paper "
           "(images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf)")
# NVIDIA's Technical Blog post reprints the white paper's Table 1 (GTX 1080 Ti beside RTX 2080 Ti) and its NVLink
# section: the text the Turing quotes below were checked against
_TURING_BLOG = ("NVIDIA Technical Blog, 'NVIDIA Turing Architecture In-Depth', Table 1 and 'NVLink Improves SLI' "
                "(https://developer.nvidia.com/blog/nvidia-turing-architecture-in-depth/)")
_BLACKWELL_NEWS = ("NVIDIA GeForce RTX 50 Series announcement "
                   "(nvidia.com/en-us/geforce/news/rtx-50-series-graphics-cards-gpu-laptop-announcements)")
_TITAN_V = "NVIDIA TITAN V product page (nvidia.com/en-us/titan/titan-v)"
_TITAN_RTX = "NVIDIA TITAN RTX product page (nvidia.com/en-us/deep-learning-ai/products/titan-rtx)"
_TPU = "TechPowerUp GPU Database, {} (techpowerup.com/gpu-specs)"   # per card: .format(card name)
_PCIE3 = "PCI-SIG: the card's host interface is PCI Express 3.0 x16 (TechPowerUp GPU Database, techpowerup.com/gpu-specs)"

# PCIe peer-to-peer between GeForce cards. Ada: NVIDIA's driver offers no PCIe P2P on the 4090 (the mailbox
# hardware it uses is absent; "that's why P2P doesn't work") -- tinygrad's open-gpu-kernel-modules P2P fork,
# README (github.com/tinygrad/open-gpu-kernel-modules). Blackwell: `nvidia-smi topo -p2p rw` on two RTX 5090 prints
# GNS ("GPU not supported") -- the club-3090 benchmark thread "2x5090 PCIe 5 x8" (github.com/noonghunna/club-3090).
# Ampere: NVIDIA/nccl's thread "Cannot enable P2P communication in RTX3090 server" reports P2P failing, and
# working on some boxes after a driver downgrade: disputed, kept off (NCCL then goes through host memory, the
# conservative model). Turing: no public statement was found in this pass; kept off as for Ampere and Ada, and
# over an NVLink bridge the link carries the traffic (`link` below). Pascal and the TITAN V: no statement found
# either way; the driver default (on) is kept.
_P2P_NOTE = "see the P2P comment above the GeForce rows"

GEFORCE: tuple[GPU, ...] = (
    # ---- Pascal (sm 61), PCIe 3.0 x16 ------------------------------------------------------------------------
    # TechPowerUp: "Bandwidth 192.2 GB/s", "FP32 (float) 4.375 TFLOPS"
    GPU("geforce-gtx-1060-6gb", "GeForce GTX 1060 6GB", "nvidia", "GTX 1060", "Pascal", 61, "PCIe",
        memory_GB=6, memory_TBps=0.192, tflops={"fp32": 4.375}, pcie_gen=3,
        names=(_geforce("1060", not_followed_by=" 3 ?GB| 5 ?GB"),),
        sources=_src(_TPU.format("NVIDIA GeForce GTX 1060 6 GB"), "memory_GB", "memory_TBps", "tflops.fp32")
        | {"pcie_gen": _PCIE3}),
    # Turing white paper, GTX 1070 column: "Memory Bandwidth (GB/sec) 256"
    GPU("geforce-gtx-1070", "GeForce GTX 1070", "nvidia", "GTX 1070", "Pascal", 61, "PCIe",
        memory_GB=8, memory_TBps=0.256, tflops={"fp32": 6.5}, pcie_gen=3,
        names=(_geforce("1070"),),
        sources=_src(_TURING_WP, "memory_GB", "memory_TBps", "tflops.fp32") | {"pcie_gen": _PCIE3}),
    # TechPowerUp: "Bandwidth 256.3 GB/s"
    GPU("geforce-gtx-1070-ti", "GeForce GTX 1070 Ti", "nvidia", "GTX 1070 Ti", "Pascal", 61, "PCIe",
        memory_GB=8, memory_TBps=0.256, tflops={"fp32": 8.186}, pcie_gen=3,
        names=(_geforce("1070 TI"),),
        sources=_src(_TPU.format("NVIDIA GeForce GTX 1070 Ti"), "memory_GB", "memory_TBps", "tflops.fp32")
        | {"pcie_gen": _PCIE3}),
    # Turing white paper, GTX 1080 column: "Memory Bandwidth (GB/sec) 320"
    GPU("geforce-gtx-1080", "GeForce GTX 1080", "nvidia", "GTX 1080", "Pascal", 61, "PCIe",
        memory_GB=8, memory_TBps=0.32, tflops={"fp32": 8.9}, pcie_gen=3,
        names=(_geforce("1080"),),
        sources=_src(_TURING_WP, "memory_GB", "memory_TBps", "tflops.fp32") | {"pcie_gen": _PCIE3}),
    # Turing Table 1, GTX 1080Ti column: "Memory Bandwidth (GB/sec) 484", "Frame Buffer Memory Size and Type
    # 11264 MB GDDR5X" (11264 MB = 11 GiB: no quote, the number is printed in MB)
    GPU("geforce-gtx-1080-ti", "GeForce GTX 1080 Ti", "nvidia", "GTX 1080 Ti", "Pascal", 61, "PCIe",
        memory_GB=11, memory_TBps=0.484, tflops={"fp32": 11.3}, pcie_gen=3,
        names=(_geforce("1080 TI"),),
        sources=_src(_TURING_BLOG, "memory_GB", "memory_TBps", "tflops.fp32") | {"pcie_gen": _PCIE3},
        quotes={"tflops.fp32": "Peak FP32 TFLOPS✱ (Reference/Founders Edition) 11.3 / 11.3"}),
    # TechPowerUp: "Bandwidth 547.6 GB/s"
    GPU("titan-xp", "TITAN Xp", "nvidia", "TITAN Xp", "Pascal", 61, "PCIe",
        memory_GB=12, memory_TBps=0.5476, tflops={"fp32": 12.15}, pcie_gen=3,
        names=(r"\bTITAN XP\b",),
        sources=_src(_TPU.format("NVIDIA TITAN Xp"), "memory_GB", "memory_TBps", "tflops.fp32")
        | {"pcie_gen": _PCIE3}),
    # ---- Volta (sm 70) -----------------------------------------------------------------------------------------
    # TITAN V page: "Memory Bandwidth 652.8 GB/s"; the tensor figure is FP16 with FP32 accumulate (full rate on
    # the TITAN V, as on the V100)
    GPU("titan-v", "TITAN V", "nvidia", "TITAN V", "Volta", 70, "PCIe",
        memory_GB=12, memory_TBps=0.6528, tflops={"fp32": 14.9, "fp16": 110}, pcie_gen=3,
        names=(r"\bTITAN V\b",),
        sources=_src(_TITAN_V, "memory_GB", "memory_TBps", "tflops.fp16")
        | {"tflops.fp32": _TPU.format("NVIDIA TITAN V"), "pcie_gen": _PCIE3}),
    # ---- Turing (sm 75), PCIe 3.0 x16; Founders Edition figures where the white paper prints both ----------------
    # TechPowerUp: "Bandwidth 336.0 GB/s"
    GPU("geforce-rtx-2060", "GeForce RTX 2060", "nvidia", "RTX 2060", "Turing", 75, "PCIe",
        memory_GB=6, memory_TBps=0.336, tflops={"fp32": 6.451}, pcie_gen=3, p2p=False,
        names=(_geforce("2060", not_followed_by=" SUPER| 12 ?GB"),),
        sources=_src(_TPU.format("NVIDIA GeForce RTX 2060"), "memory_GB", "memory_TBps", "tflops.fp32")
        | {"pcie_gen": _PCIE3, "p2p": _P2P_NOTE}),
    # Turing white paper, RTX 2070 Founders Edition: "Memory Bandwidth (GB/sec) 448"
    GPU("geforce-rtx-2070", "GeForce RTX 2070", "nvidia", "RTX 2070", "Turing", 75, "PCIe",
        memory_GB=8, memory_TBps=0.448, tflops={"fp32": 7.9, "fp16": 31.5}, pcie_gen=3, p2p=False,
        names=(_geforce("2070", not_followed_by=" SUPER"),),
        sources=_src(_TURING_WP, "memory_GB", "memory_TBps", "tflops.fp32", "tflops.fp16")
        | {"pcie_gen": _PCIE3, "p2p": _P2P_NOTE}),
    # Turing white paper appendix, RTX 2080 Founders Edition (not re-read in the verification pass); TU104 has one
    # x8 NVLink: "Turing TU104 includes one x8 second-generation NVLink link"
    GPU("geforce-rtx-2080", "GeForce RTX 2080", "nvidia", "RTX 2080", "Turing", 75, "PCIe",
        memory_GB=8, memory_TBps=0.448, tflops={"fp32": 10.6, "fp16": 42.4},
        link="NVLink2", links=1, link_total_GBps=50, pcie_gen=3, p2p=False,
        names=(_geforce("2080", not_followed_by=" SUPER"),),
        sources=_src(_TURING_WP, "memory_GB", "memory_TBps", "tflops.fp32", "tflops.fp16")
        | _src(_TURING_BLOG, "links", "link_total_GBps") | {"pcie_gen": _PCIE3, "p2p": _P2P_NOTE},
        quotes={"link_total_GBps": "Each link provides 25 GB/sec peak bandwidth per direction between two GPUs "
                                   "(50 GB/sec bidirectional bandwidth)"}),
    # Turing Table 1, RTX 2080 Ti column (Reference / Founders Edition): "Memory Bandwidth (GB/sec) 616", "Frame
    # Buffer Memory Size and Type 11264 MB GDDR6" (11 GiB, printed in MB); "The Turing TU102 GPU includes two x8
    # second-generation NVLink links"
    GPU("geforce-rtx-2080-ti", "GeForce RTX 2080 Ti", "nvidia", "RTX 2080 Ti", "Turing", 75, "PCIe",
        memory_GB=11, memory_TBps=0.616, tflops={"fp32": 14.2, "fp16": 56.9},
        link="NVLink2", links=2, link_total_GBps=100, pcie_gen=3, p2p=False,
        names=(_geforce("2080 TI"),),
        sources=_src(_TURING_BLOG, "memory_GB", "memory_TBps", "tflops.fp32", "tflops.fp16", "links",
                     "link_total_GBps") | {"pcie_gen": _PCIE3, "p2p": _P2P_NOTE},
        quotes={"tflops.fp32": "Peak FP32 TFLOPS✱ (Reference/Founders Edition) 13.4 / 14.2",
                "tflops.fp16": "Peak FP16 Tensor TFLOPS with FP32 Accumulate✱ (Reference/Founders Edition) "
                               "53.8 / 56.9",
                "link_total_GBps": "Two links in TU102 provides 50 GB/sec in each direction, or 100 GB/sec "
                                   "bidirectionally"}),
    # TITAN RTX page: "Memory Bandwidth 672 GB/s"; its tensor cores run FP32 accumulate at full rate
    GPU("titan-rtx", "TITAN RTX", "nvidia", "TITAN RTX", "Turing", 75, "PCIe",
        memory_GB=24, memory_TBps=0.672, tflops={"fp32": 16.31, "fp16": 130},
        link="NVLink2", links=2, link_total_GBps=100, pcie_gen=3, p2p=False,
        names=(r"\bTITAN RTX\b",),
        sources=_src(_TITAN_RTX, "memory_GB", "memory_TBps", "tflops.fp16", "link_total_GBps")
        | {"links": _TURING_BLOG, "tflops.fp32": _TPU.format("NVIDIA TITAN RTX"), "pcie_gen": _PCIE3,
           "p2p": _P2P_NOTE}),
    # ---- Ampere GA10x (sm 86), PCIe 4.0 x16 ------------------------------------------------------------------------
    # TechPowerUp: "Bandwidth 360.0 GB/s"
    GPU("geforce-rtx-3060", "GeForce RTX 3060", "nvidia", "RTX 3060", "Ampere", 86, "PCIe",
        memory_GB=12, memory_TBps=0.36, tflops={"fp32": 12.74}, p2p=False,
        names=(_geforce("3060", not_followed_by=" TI| 8 ?GB"),),
        sources=_src(_TPU.format("NVIDIA GeForce RTX 3060 12 GB"), "memory_GB", "memory_TBps", "tflops.fp32")
        | {"pcie_gen": _AMPERE_WP, "p2p": _P2P_NOTE}),
    # GA102 white paper, Appendix A, RTX 3070: "Memory Bandwidth 448 GB/sec"
    GPU("geforce-rtx-3070", "GeForce RTX 3070", "nvidia", "RTX 3070", "Ampere", 86, "PCIe",
        memory_GB=8, memory_TBps=0.448, tflops={"fp32": 20.3, "fp16": 40.6, "bf16": 40.6}, p2p=False,
        names=(_geforce("3070", not_followed_by=" TI"),),
        sources=_src(_AMPERE_WP, "memory_GB", "memory_TBps", "tflops.fp32", "tflops.fp16", "tflops.bf16",
                     "pcie_gen") | {"p2p": _P2P_NOTE},
        quotes={"pcie_gen": "PCIe Gen 4"}),
    # GA102 white paper, RTX 3080: "Memory Bandwidth 760 GB/sec"
    GPU("geforce-rtx-3080", "GeForce RTX 3080 10GB", "nvidia", "RTX 3080", "Ampere", 86, "PCIe",
        memory_GB=10, memory_TBps=0.76, tflops={"fp32": 29.8, "fp16": 59.5, "bf16": 59.5}, p2p=False,
        names=(_geforce("3080"), _geforce("3080 10 ?GB")),
        sources=_src(_AMPERE_WP, "memory_GB", "memory_TBps", "tflops.fp32", "tflops.fp16", "tflops.bf16",
                     "pcie_gen") | {"p2p": _P2P_NOTE},
        quotes={"pcie_gen": "PCIe Gen 4"}),
    # TechPowerUp: "Bandwidth 912.4 GB/s". Tools print "NVIDIA GeForce RTX 3080" for both memory sizes: the bare
    # name means the 10GB card, the first and most sold; this row needs the size in the name.
    GPU("geforce-rtx-3080-12gb", "GeForce RTX 3080 12GB", "nvidia", "RTX 3080", "Ampere", 86, "PCIe",
        memory_GB=12, memory_TBps=0.912, tflops={"fp32": 30.64}, p2p=False,
        names=(_geforce("3080 12 ?GB"),),
        sources=_src(_TPU.format("NVIDIA GeForce RTX 3080 12 GB"), "memory_GB", "memory_TBps", "tflops.fp32")
        | {"pcie_gen": _AMPERE_WP, "p2p": _P2P_NOTE}),
    # TechPowerUp: "Bandwidth 912.4 GB/s"
    GPU("geforce-rtx-3080-ti", "GeForce RTX 3080 Ti", "nvidia", "RTX 3080 Ti", "Ampere", 86, "PCIe",
        memory_GB=12, memory_TBps=0.912, tflops={"fp32": 34.1}, p2p=False,
        names=(_geforce("3080 TI"),),
        sources=_src(_TPU.format("NVIDIA GeForce RTX 3080 Ti"), "memory_GB", "memory_TBps", "tflops.fp32")
        | {"pcie_gen": _AMPERE_WP, "p2p": _P2P_NOTE}),
    # GA102 white paper, Appendix A, RTX 3090: "Memory Bandwidth 936 GB/sec"; third-generation NVLink, four x4
    # links: "56.25 GB/sec bandwidth in each direction, and 112.5 GB/sec total bandwidth"
    GPU("geforce-rtx-3090", "GeForce RTX 3090", "nvidia", "RTX 3090", "Ampere", 86, "PCIe",
        memory_GB=24, memory_TBps=0.936, tflops={"fp32": 35.6, "fp16": 71, "bf16": 71},
        link="NVLink3", links=4, link_total_GBps=112.5, p2p=False,
        names=(_geforce("3090"),),
        sources=_src(_AMPERE_WP, "memory_GB", "memory_TBps", "tflops.fp32", "tflops.fp16", "tflops.bf16",
                     "links", "link_total_GBps", "pcie_gen") | {"p2p": _P2P_NOTE},
        quotes={"pcie_gen": "PCIe Gen 4"}),
    # TechPowerUp: "Bandwidth 1.01 TB/s"; the same GA102 NVLink connector as the 3090
    GPU("geforce-rtx-3090-ti", "GeForce RTX 3090 Ti", "nvidia", "RTX 3090 Ti", "Ampere", 86, "PCIe",
        memory_GB=24, memory_TBps=1.008, tflops={"fp32": 40.0},
        link="NVLink3", links=4, link_total_GBps=112.5, p2p=False,
        names=(_geforce("3090 TI"),),
        sources=_src(_TPU.format("NVIDIA GeForce RTX 3090 Ti"), "memory_GB", "memory_TBps", "tflops.fp32")
        | _src(_AMPERE_WP, "links", "link_total_GBps", "pcie_gen") | {"p2p": _P2P_NOTE},
        quotes={"pcie_gen": "PCIe Gen 4"}),
    # ---- Ada Lovelace (sm 89), PCIe 4.0 ------------------------------------------------------------------------
    # TechPowerUp: "Bandwidth 288.0 GB/s", "Bus Interface PCIe 4.0 x8". Tools print one name for the 8GB and
    # the 16GB card: the row is the 8GB one.
    GPU("geforce-rtx-4060-ti", "GeForce RTX 4060 Ti", "nvidia", "RTX 4060 Ti", "Ada Lovelace", 89, "PCIe",
        memory_GB=8, memory_TBps=0.288, tflops={"fp32": 22.06}, pcie_lanes=8, p2p=False,
        names=(_geforce("4060 TI", not_followed_by=" 16 ?GB"),),
        sources=_src(_TPU.format("NVIDIA GeForce RTX 4060 Ti 8 GB"), "memory_GB", "memory_TBps", "tflops.fp32",
                     "pcie_gen") | {"p2p": _P2P_NOTE}),
    # TechPowerUp: "Bandwidth 504.2 GB/s"
    GPU("geforce-rtx-4070", "GeForce RTX 4070", "nvidia", "RTX 4070", "Ada Lovelace", 89, "PCIe",
        memory_GB=12, memory_TBps=0.504, tflops={"fp32": 29.15}, p2p=False,
        names=(_geforce("4070", not_followed_by=" SUPER| TI"),),
        sources=_src(_TPU.format("NVIDIA GeForce RTX 4070"), "memory_GB", "memory_TBps", "tflops.fp32",
                     "pcie_gen") | {"p2p": _P2P_NOTE}),
    # TechPowerUp: "Bandwidth 504.2 GB/s"
    GPU("geforce-rtx-4070-ti", "GeForce RTX 4070 Ti", "nvidia", "RTX 4070 Ti", "Ada Lovelace", 89, "PCIe",
        memory_GB=12, memory_TBps=0.504, tflops={"fp32": 40.09}, p2p=False,
        names=(_geforce("4070 TI", not_followed_by=" SUPER"),),
        sources=_src(_TPU.format("NVIDIA GeForce RTX 4070 Ti"), "memory_GB", "memory_TBps", "tflops.fp32",
                     "pcie_gen") | {"p2p": _P2P_NOTE}),
    # Ada white paper, RTX 4080 16GB: "Memory Bandwidth 716.8 GB/sec"
    GPU("geforce-rtx-4080", "GeForce RTX 4080", "nvidia", "RTX 4080", "Ada Lovelace", 89, "PCIe",
        memory_GB=16, memory_TBps=0.7168, tflops={"fp32": 48.7, "fp16": 97.5, "bf16": 97.5}, p2p=False,
        names=(_geforce("4080"),),
        sources=_src(_ADA_WP, "memory_GB", "memory_TBps", "tflops.fp32", "tflops.fp16", "tflops.bf16")
        | {"pcie_gen": _TPU.format("NVIDIA GeForce RTX 4080"), "p2p": _P2P_NOTE}),
    # TechPowerUp: "Bandwidth 736.3 GB/s"
    GPU("geforce-rtx-4080-super", "GeForce RTX 4080 SUPER", "nvidia", "RTX 4080 SUPER", "Ada Lovelace", 89,
        "PCIe", memory_GB=16, memory_TBps=0.736, tflops={"fp32": 52.22}, p2p=False,
        names=(_geforce("4080 SUPER"), _geforce("4080S")),
        sources=_src(_TPU.format("NVIDIA GeForce RTX 4080 SUPER"), "memory_GB", "memory_TBps", "tflops.fp32",
                     "pcie_gen") | {"p2p": _P2P_NOTE}),
    # Ada white paper, RTX 4090: "Memory Bandwidth 1008 GB/sec"
    GPU("geforce-rtx-4090", "GeForce RTX 4090", "nvidia", "RTX 4090", "Ada Lovelace", 89, "PCIe",
        memory_GB=24, memory_TBps=1.008, tflops={"fp32": 82.6, "fp16": 165.2, "bf16": 165.2}, p2p=False,
        names=(_geforce("4090", not_followed_by=" D"),),
        sources=_src(_ADA_WP, "memory_GB", "memory_TBps", "tflops.fp32", "tflops.fp16", "tflops.bf16")
        | {"pcie_gen": _TPU.format("NVIDIA GeForce RTX 4090"), "p2p": _P2P_NOTE}),
    # ---- Blackwell GB20x (sm 120), PCIe 5.0 x16 ---------------------------------------------------------------------
    # TechPowerUp: "Bandwidth 672.0 GB/s"
    GPU("geforce-rtx-5070", "GeForce RTX 5070", "nvidia", "RTX 5070", "Blackwell", 120, "PCIe",
        memory_GB=12, memory_TBps=0.672, tflops={"fp32": 30.87}, pcie_gen=5, p2p=False,
        names=(_geforce("5070", not_followed_by=" TI"),),
        sources=_src(_TPU.format("NVIDIA GeForce RTX 5070"), "memory_GB", "memory_TBps", "tflops.fp32")
        | {"pcie_gen": _BLACKWELL_NEWS, "p2p": _P2P_NOTE}),
    # TechPowerUp: "Bandwidth 896.0 GB/s"
    GPU("geforce-rtx-5070-ti", "GeForce RTX 5070 Ti", "nvidia", "RTX 5070 Ti", "Blackwell", 120, "PCIe",
        memory_GB=16, memory_TBps=0.896, tflops={"fp32": 43.94}, pcie_gen=5, p2p=False,
        names=(_geforce("5070 TI"),),
        sources=_src(_TPU.format("NVIDIA GeForce RTX 5070 Ti"), "memory_GB", "memory_TBps", "tflops.fp32")
        | {"pcie_gen": _BLACKWELL_NEWS, "p2p": _P2P_NOTE}),
    # TechPowerUp: "Bandwidth 960.0 GB/s"
    GPU("geforce-rtx-5080", "GeForce RTX 5080", "nvidia", "RTX 5080", "Blackwell", 120, "PCIe",
        memory_GB=16, memory_TBps=0.96, tflops={"fp32": 56.28}, pcie_gen=5, p2p=False,
        names=(_geforce("5080"),),
        sources=_src(_TPU.format("NVIDIA GeForce RTX 5080"), "memory_GB", "memory_TBps", "tflops.fp32")
        | {"pcie_gen": _BLACKWELL_NEWS, "p2p": _P2P_NOTE}),
    # TechPowerUp: "Bandwidth 1.79 TB/s" (1792 GB/s: 28 Gbps GDDR7 on 512 bits)
    GPU("geforce-rtx-5090", "GeForce RTX 5090", "nvidia", "RTX 5090", "Blackwell", 120, "PCIe",
        memory_GB=32, memory_TBps=1.792, tflops={"fp32": 104.8}, pcie_gen=5, p2p=False,
        names=(_geforce("5090", not_followed_by=" D"),),
        sources=_src(_TPU.format("NVIDIA GeForce RTX 5090"), "memory_GB", "memory_TBps", "tflops.fp32")
        | {"pcie_gen": _BLACKWELL_NEWS, "p2p": _P2P_NOTE}),
)

OTHER_GPUS: tuple[GPU, ...] = GEFORCE + ACCELERATORS
