"""The GPU table's rows for GeForce cards (since Pascal), AMD Instinct accelerators (MI50 to MI355X) and AWS
Trainium: the same shape as gpus.py's data-centre NVIDIA rows, each figure with its data sheet.

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

compute_capability of AMD parts is the NCCL table row RCCL reads: RCCL keeps NCCL's tuning tables and indexes
them as NCCL does, so CDNA 3 stands in as Hopper (90), CDNA1/2 as Ampere (80), GCN (MI50, MI60) as Volta
(70); collperf's catalogue prices CDNA 4 (MI350X, MI355X) on NCCL's newest tuning row, Blackwell (100). AWS Neuron has no NCCL table: Trainium rows carry 70 as the catalogue's trn1 system does (a stand-in).
"""

from __future__ import annotations

from collperf.model.hardware.parts import GPU


def _src(sheet: str, *fields: str) -> dict:
    """The same sheet for several fields."""
    return {f: sheet for f in fields}


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

# ---- AMD Instinct ---------------------------------------------------------------------------------------------
# AnandTech's table of the MI200 launch reprints AMD's figures for the MI250, MI210, MI100 and MI50 side by side
_ANANDTECH_MI210 = ("AnandTech, 'AMD Releases Instinct MI210 Accelerator: CDNA 2 On a PCIe Card', AMD's figures "
                    "(anandtech.com/show/17326/amd-releases-instinct-mi210-accelerator-cdna-2-on-a-pcie-card)")
# ROCm's documentation: the microarchitecture pages (peak-performance tables, memory bandwidth, node-level links)
# and the specification table (VRAM in GiB, by model). A table's quote is its row as printed, cells joined by ' | '.
_ROCM_MI100 = ("ROCm documentation, AMD Instinct MI100 microarchitecture "
               "(github.com/ROCm/ROCm, docs/conceptual/gpu-arch/mi100.md)")
_ROCM_MI250 = ("ROCm documentation, AMD Instinct MI250 microarchitecture "
               "(github.com/ROCm/ROCm, docs/conceptual/gpu-arch/mi250.md)")
_ROCM_MI300 = ("ROCm documentation, AMD Instinct MI300 series microarchitecture "
               "(github.com/ROCm/ROCm, docs/conceptual/gpu-arch/mi300.md)")
_ROCM_SPECS = ("ROCm documentation, Accelerator and GPU hardware specifications, Instinct table "
               "(github.com/ROCm/ROCm, docs/reference/gpu-arch-specs.rst)")
_ROCM_SPECS_CDNA4 = ("ROCm documentation, AMD GPU specifications, Instinct table "
                     "(https://rocm.docs.amd.com/en/7.13.0-preview/reference/gpu-specs.html)")
_MI50 = "AMD Radeon Instinct MI50 product page (amd.com/en/products/professional-graphics/instinct-mi50)"
_MI60 = "AMD Radeon Instinct MI60 product page (amd.com/en/products/professional-graphics/instinct-mi60)"
# AMD's launch of the MI50 and MI60: two Infinity Fabric links per GPU, up to 200 GB/s peer to peer (the
# release's text was not reachable in the verification pass: no quote)
_VEGA20_LAUNCH = ("AMD Radeon Instinct MI50 and MI60 launch, 7 Nov 2018 (amd.com/en/press-releases/"
                  "2018-11-06-amd-unveils-world-s-first-7nm-datacenter-gpus-powering-next-era-artificial)")
_MI100 = "AMD Instinct MI100 data sheet (amd.com/en/products/accelerators/instinct/mi100.html)"
_MI210 = "AMD Instinct MI210 data sheet (amd.com/en/products/accelerators/instinct/mi200/mi210.html)"
_MI250 = "AMD Instinct MI250 data sheet (amd.com/en/products/accelerators/instinct/mi200/mi250.html)"
_MI250X = "AMD Instinct MI250X data sheet (amd.com/en/products/accelerators/instinct/mi200/mi250x.html)"
_MI300A = "AMD Instinct MI300A data sheet (amd.com/en/products/accelerators/instinct/mi300/mi300a.html)"
_MI300X = "AMD Instinct MI300X data sheet (amd.com/en/products/accelerators/instinct/mi300/mi300x.html)"
_MI325X = "AMD Instinct MI325X data sheet (amd.com/en/products/accelerators/instinct/mi300/mi325x.html)"
_MI350X = "AMD Instinct MI350X data sheet (amd.com/en/products/accelerators/instinct/mi350/mi350x.html)"
_MI355X = "AMD Instinct MI355X data sheet (amd.com/en/products/accelerators/instinct/mi350/mi355x.html)"

INSTINCT: tuple[GPU, ...] = (
    # ---- GCN 5 / Vega 20 (gfx906): RCCL's Volta row -------------------------------------------------------------
    # ROCm names the device "Vega 20" or "AMD Instinct MI50/MI60" whatever the memory: a bare MI50, Vega 20 or
    # gfx906 is resolved to the 32GB MI50 (the same chip and bandwidth as the 16GB one); 'MI50 16GB' picks the other.
    # Only the memory size was checked against source text (ROCm's table); the peaks, bandwidth and links are the
    # product pages' and the launch's, not re-read in the verification pass (no quotes)
    GPU("mi50-32gb", "Radeon Instinct MI50 32GB", "amd", "MI50", "GCN 5 (Vega 20)", 70, "PCIe",
        memory_GB=32, memory_TBps=1.024, tflops={"fp64": 6.6, "fp32": 13.3, "fp16": 26.5},
        link="xGMI2", links=2, link_total_GBps=200,
        names=(r"\bMI ?50\b", r"\bMI ?50 MI60\b", r"\bVEGA ?20\b", r"^(?:AMD )?GFX906\b"),
        sources=_src(_MI50, "memory_TBps", "tflops.fp64", "tflops.fp32", "tflops.fp16", "pcie_gen")
        | _src(_VEGA20_LAUNCH, "links", "link_total_GBps") | {"memory_GB": _ROCM_SPECS},
        quotes={"memory_GB": "MI50 (32GB) | GCN5.1 | gfx906 | 32"}),
    GPU("mi50-16gb", "Radeon Instinct MI50 16GB", "amd", "MI50", "GCN 5 (Vega 20)", 70, "PCIe",
        memory_GB=16, memory_TBps=1.02, tflops={"fp64": 6.6, "fp32": 13.3, "fp16": 26.5},
        link="xGMI2", links=2, link_total_GBps=200,
        names=(r"\bMI ?50 16 ?GB\b",),
        sources=_src(_ANANDTECH_MI210, "memory_TBps", "tflops.fp64", "tflops.fp32", "tflops.fp16", "pcie_gen")
        | _src(_VEGA20_LAUNCH, "links", "link_total_GBps") | {"memory_GB": _ROCM_SPECS},
        quotes={"memory_GB": "MI50 (16GB) | GCN5.1 | gfx906 | 16"}),
    GPU("mi60", "Radeon Instinct MI60", "amd", "MI60", "GCN 5 (Vega 20)", 70, "PCIe",
        memory_GB=32, memory_TBps=1.024, tflops={"fp64": 7.4, "fp32": 14.7, "fp16": 29.5},
        link="xGMI2", links=2, link_total_GBps=200,
        names=(r"\bMI ?60\b",),
        sources=_src(_MI60, "memory_TBps", "tflops.fp64", "tflops.fp32", "tflops.fp16", "pcie_gen")
        | _src(_VEGA20_LAUNCH, "links", "link_total_GBps") | {"memory_GB": _ROCM_SPECS},
        quotes={"memory_GB": "MI60 | GCN5.1 | gfx906 | 32"}),
    # ---- CDNA 1 (gfx908): RCCL's Ampere row; three Infinity Fabric links of 92 GB/s ----------------------------
    # ROCm's MI100 page: "three AMD Infinity Fabric ports that provide high-speed links (23 GT/sec ...)" (the count
    # is a word: no quote); the 276 GB/s aggregate is AMD's data sheet, not re-read in the verification pass
    GPU("mi100", "Instinct MI100", "amd", "MI100", "CDNA 1", 80, "PCIe",
        memory_GB=32, memory_TBps=1.228, tflops={"fp64": 11.5, "fp32": 23.1, "fp16": 184.6, "bf16": 92.3},
        link="xGMI2", links=3, link_total_GBps=276,
        names=(r"\bMI ?100\b", r"^(?:AMD )?GFX908\b", r"\bARCTURUS\b"),
        sources=_src(_ROCM_MI100, "memory_GB", "memory_TBps", "tflops.fp64", "tflops.fp32", "tflops.fp16",
                     "tflops.bf16", "links", "pcie_gen") | {"link_total_GBps": _MI100},
        quotes={"memory_GB": "four stacks of HBM generation 2 (HBM2) for a total of 32GB",
                "memory_TBps": "The peak memory bandwidth of the attached HBM2 is 1.228 TB/sec",
                "tflops.fp64": "Vector FP64 | 64 | 11.5", "tflops.fp32": "Vector FP32 | 128 | 23.1",
                "tflops.fp16": "Matrix FP16 | 1024 | 184.6", "tflops.bf16": "Matrix BF16 | 512 | 92.3",
                "pcie_gen": "PCIe Gen 4 x16 link (16 GT/sec, at the bottom)"}),
    # ---- CDNA 2 (gfx90a): Infinity Fabric links of 100 GB/s ------------------------------------------------------
    # ROCm's MI250 page: each GPU-to-GPU link "operates at 25 GT/sec, which corresponds to a theoretical peak
    # transfer rate of 50 GB/sec per link (or 100 GB/sec bidirectional peak transfer bandwidth)"; the link counts
    # and aggregates of the MI210, MI250 and MI250X rows, and the MI210's and MI250X's peaks and bandwidth, are AMD's
    # data sheets (AnandTech's reprint for the MI210), not re-read in the verification pass (no quotes)
    GPU("mi210", "Instinct MI210", "amd", "MI210", "CDNA 2", 80, "PCIe",
        memory_GB=64, memory_TBps=1.6, tflops={"fp64": 22.6, "fp32": 22.6, "fp16": 181, "bf16": 181},
        link="xGMI3", links=3, link_total_GBps=300,
        names=(r"\bMI ?210\b",),
        sources=_src(_ANANDTECH_MI210, "memory_TBps", "tflops.fp64", "tflops.fp32", "tflops.fp16",
                     "links", "pcie_gen") | _src(_MI210, "tflops.bf16", "link_total_GBps")
        | {"memory_GB": _ROCM_SPECS},
        quotes={"memory_GB": "MI210 | CDNA2 | gfx90a | 64"}),
    # Two GCDs in one OAM package, each its own device to ROCm and RCCL: the sheet's figures are the package's
    GPU("mi250", "Instinct MI250", "amd", "MI250", "CDNA 2", 80, "OAM",
        memory_GB=128, memory_TBps=3.2, tflops={"fp64": 45.3, "fp32": 45.3, "fp16": 362.1, "bf16": 362.1},
        link="xGMI3", links=6, link_total_GBps=600, gcds=2,
        names=(r"\bMI ?250\b",),
        sources=_src(_ROCM_MI250, "memory_TBps", "tflops.fp64", "tflops.fp32", "tflops.fp16", "tflops.bf16",
                     "pcie_gen") | _src(_MI250, "links", "link_total_GBps") | {"memory_GB": _ROCM_SPECS},
        quotes={"memory_GB": "MI250 | CDNA2 | gfx90a | 128",
                "memory_TBps": "The theoretical aggregated peak memory bandwidth of the GPU is 3.2 TB/sec "
                               "(1.6 TB/sec per GCD)",
                "tflops.fp64": "Vector FP64 | 128 | 45.3", "tflops.fp32": "Vector FP32 | 128 | 45.3",
                "tflops.fp16": "Matrix FP16 | 1024 | 362.1", "tflops.bf16": "Matrix BF16 | 1024 | 362.1",
                "pcie_gen": "The MI250 OAMs attach to the host system via PCIe Gen 4 x16 links"}),
    # rocm-smi prints "AMD Instinct MI250X / MI250" for both parts and gfx90a is the MI210's too: those names
    # resolve here, the MI200 part in the largest systems (Frontier, LUMI); 'MI210' or 'MI250' alone picks the others
    GPU("mi250x", "Instinct MI250X", "amd", "MI250X", "CDNA 2", 80, "OAM",
        memory_GB=128, memory_TBps=3.2, tflops={"fp64": 47.9, "fp32": 47.9, "fp16": 383, "bf16": 383},
        link="xGMI3", links=8, link_total_GBps=800, gcds=2,
        names=(r"\bMI ?250X\b", r"^(?:AMD )?GFX90A\b", r"\bALDEBARAN\b"),
        sources=_src(_MI250X, "memory_TBps", "tflops.fp64", "tflops.fp32", "tflops.fp16",
                     "tflops.bf16", "links", "link_total_GBps", "pcie_gen") | {"memory_GB": _ROCM_SPECS},
        quotes={"memory_GB": "MI250X | CDNA2 | gfx90a | 128"}),
    # ---- CDNA 3 (gfx942): RCCL's Hopper row; seven Infinity Fabric links of 128 GB/s ------------------------------
    # ROCm's MI300 page checks the MI300X row ("seven high-bandwidth, low-latency AMD Infinity Fabric links": the
    # count is a word, no quote); the 896 GB/s aggregate, and the MI300A's and MI325X's peaks, bandwidth and links,
    # are AMD's data sheets, not re-read in the verification pass (no quotes).
    # MI300A: CPU and GPU in one socket; AMD's sheet gives its Infinity Fabric per socket, not as GPU-to-GPU links
    # of the kind the other rows count: left at none
    GPU("mi300a", "Instinct MI300A", "amd", "MI300A", "CDNA 3", 90, "superchip",
        memory_GB=128, memory_TBps=5.3,
        tflops={"fp64": 61.3, "fp32": 122.6, "tf32": 490.3, "fp16": 980.6, "bf16": 980.6, "fp8": 1961.2},
        pcie_gen=5,
        names=(r"\bMI ?300A\b",),
        sources=_src(_MI300A, "memory_TBps", "tflops.fp64", "tflops.fp32", "tflops.tf32",
                     "tflops.fp16", "tflops.bf16", "tflops.fp8", "pcie_gen") | {"memory_GB": _ROCM_SPECS},
        quotes={"memory_GB": "MI300A | CDNA3 | gfx942 | 128"}),
    GPU("mi300x", "Instinct MI300X", "amd", "MI300X", "CDNA 3", 90, "OAM",
        memory_GB=192, memory_TBps=5.3,
        tflops={"fp64": 81.7, "fp32": 163.4, "tf32": 653.7, "fp16": 1307.4, "bf16": 1307.4, "fp8": 2614.9},
        link="xGMI4", links=7, link_total_GBps=896, pcie_gen=5,
        names=(r"\bMI ?300X\b", r"\bMI ?300\b", r"^(?:AMD )?GFX942\b"),
        sources=_src(_ROCM_MI300, "memory_TBps", "tflops.fp64", "tflops.fp32", "tflops.tf32",
                     "tflops.fp16", "tflops.bf16", "tflops.fp8", "links", "pcie_gen")
        | {"memory_GB": _ROCM_SPECS, "link_total_GBps": _MI300X},
        quotes={"memory_GB": "MI300X | CDNA3 | gfx942 | 192",
                "memory_TBps": "The theoretical aggregated peak memory bandwidth of the GPU is 5.3 TB per second",
                "tflops.fp64": "Vector FP64 | 128 | 81.7", "tflops.fp32": "Vector FP32 | 256 | 163.4",
                "tflops.tf32": "Vector TF32 | 1024 | 653.7", "tflops.fp16": "Matrix FP16 | 2048 | 1307.4",
                "tflops.bf16": "Matrix BF16 | 2048 | 1307.4", "tflops.fp8": "Matrix FP8 | 4096 | 2614.9",
                "pcie_gen": "The MI300X OAMs attach to the host system via PCIe Gen 5 x16 links"}),
    GPU("mi325x", "Instinct MI325X", "amd", "MI325X", "CDNA 3", 90, "OAM",
        memory_GB=256, memory_TBps=6.0,
        tflops={"fp64": 81.7, "fp32": 163.4, "tf32": 653.7, "fp16": 1307.4, "bf16": 1307.4, "fp8": 2614.9},
        link="xGMI4", links=7, link_total_GBps=896, pcie_gen=5,
        names=(r"\bMI ?325X\b",),
        sources=_src(_MI325X, "memory_TBps", "tflops.fp64", "tflops.fp32", "tflops.tf32",
                     "tflops.fp16", "tflops.bf16", "tflops.fp8", "links", "link_total_GBps", "pcie_gen")
        | {"memory_GB": _ROCM_SPECS_CDNA4},
        quotes={"memory_GB": "MI325X | CDNA3 | gfx942 | 256"}),
    # ---- CDNA 4 (gfx950): seven Infinity Fabric links of 153.6 GB/s ---------------------------------------------
    # compute_capability 100: collperf's catalogue prices CDNA 4 on NCCL's newest (Blackwell) tuning row, as RCCL
    # keeps NCCL's tables (CDNA 3 stays on the Hopper row, 90). Only the memory size was checked against source text
    # (ROCm's table); the peaks, bandwidth and links are AMD's data sheets, not re-read in the verification pass
    GPU("mi350x", "Instinct MI350X", "amd", "MI350X", "CDNA 4", 100, "OAM",
        memory_GB=288, memory_TBps=8.0,
        tflops={"fp64": 72.1, "fp32": 144.2, "fp16": 2306.9, "bf16": 2306.9, "fp8": 4613.8, "fp4": 9227.5},
        link="xGMI4", links=7, link_total_GBps=1075.2, pcie_gen=5,
        names=(r"\bMI ?350X\b", r"\bMI ?350\b"),
        sources=_src(_MI350X, "memory_TBps", "tflops.fp64", "tflops.fp32", "tflops.fp16",
                     "tflops.bf16", "tflops.fp8", "tflops.fp4", "links", "link_total_GBps", "pcie_gen")
        | {"memory_GB": _ROCM_SPECS_CDNA4},
        quotes={"memory_GB": "MI350X | CDNA4 | gfx950 | 288"}),
    GPU("mi355x", "Instinct MI355X", "amd", "MI355X", "CDNA 4", 100, "OAM",
        memory_GB=288, memory_TBps=8.0,
        tflops={"fp64": 78.6, "fp32": 157.3, "fp16": 2516.6, "bf16": 2516.6, "fp8": 5033.2, "fp4": 10066.3},
        link="xGMI4", links=7, link_total_GBps=1075.2, pcie_gen=5,
        names=(r"\bMI ?355X\b", r"\bMI ?355\b", r"^(?:AMD )?GFX950\b"),
        sources=_src(_MI355X, "memory_TBps", "tflops.fp64", "tflops.fp32", "tflops.fp16",
                     "tflops.bf16", "tflops.fp8", "tflops.fp4", "links", "link_total_GBps", "pcie_gen")
        | {"memory_GB": _ROCM_SPECS_CDNA4},
        quotes={"memory_GB": "MI355X | CDNA4 | gfx950 | 288"}),
)

# ---- AWS Trainium -----------------------------------------------------------------------------------------------
# The Trainium2 architecture page compares both chips (HBM TB/sec, inter-chip GB/sec per chip); each chip has four
# NeuronLinks (the NKI architecture guides: "4 (Trainium) NeuronLink-v2", "4 NeuronLink-v3"). Memory is GiB on
# the pages (32, 96), kept as printed. The Trainium page prints its bandwidth as "820 GiB/sec" (0.88 TB/s); the row
# keeps the Trainium2 page's comparison table, "HBM Bandwidth (TB/sec)" 0.8, whose units it shares. Table quotes are
# the row as printed, cells joined by ' | ' (label, Trainium, Trainium2, improvement factor). The pages give no
# PCIe generation: the default is kept, marked unsourced.
_TRN = ("AWS Neuron documentation, Trainium architecture "
        "(awsdocs-neuron.readthedocs-hosted.com/en/latest/general/arch/neuron-hardware/trainium.html)")
_TRN2 = ("AWS Neuron documentation, Trainium2 architecture "
         "(awsdocs-neuron.readthedocs-hosted.com/en/latest/about-neuron/arch/neuron-hardware/trainium2.html)")
_NKI_TRN = ("AWS Neuron documentation, Trainium/Inferentia2 Architecture Guide for NKI "
            "(awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/arch/trainium_inferentia2_arch.html)")
_NKI_TRN2 = ("AWS Neuron documentation, Trainium2 Architecture Guide for NKI "
             "(awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/arch/trainium2_arch.html)")
_NO_PCIE = "no public figure: the Neuron architecture pages give no host interface generation (default kept)"

TRAINIUM: tuple[GPU, ...] = (
    GPU("trainium", "Trainium", "aws", "Trainium", "NeuronCore-v2", 70, "SoC",
        memory_GB=32, memory_TBps=0.8, tflops={"fp32": 47.5, "bf16": 190, "fp16": 190, "tf32": 190},
        link="NeuronLink-v2", links=4, link_total_GBps=384,
        names=(r"\bTRAINIUM1?\b", r"\bTRN1N?\b"),
        sources=_src(_TRN, "memory_GB", "tflops.fp32", "tflops.bf16", "tflops.fp16", "tflops.tf32")
        | _src(_TRN2, "memory_TBps", "link_total_GBps") | {"links": _NKI_TRN, "pcie_gen": _NO_PCIE},
        quotes={"memory_GB": "32 GiB of device memory",
                "memory_TBps": "HBM Bandwidth (TB/sec) | 0.8 | 2.9 | 3.6x",
                "tflops.fp32": "47.5 FP32 TFLOP", "tflops.bf16": "190 FP16/BF16/cFP8/TF32 TFLOPS",
                "tflops.fp16": "190 FP16/BF16/cFP8/TF32 TFLOPS", "tflops.tf32": "190 FP16/BF16/cFP8/TF32 TFLOPS",
                "links": "2 (Inferentia2) or 4 (Trainium) NeuronLink-v2 for device-to-device collective communication",
                "link_total_GBps": "Inter-chip Interconnect (GB/sec/chip) | 384 | 1280 | 3.3x"}),
    GPU("trainium2", "Trainium2", "aws", "Trainium2", "NeuronCore-v3", 70, "SoC",
        memory_GB=96, memory_TBps=2.9,
        tflops={"fp32": 181, "bf16": 667, "fp16": 667, "tf32": 667, "fp8": 1299},
        link="NeuronLink-v3", links=4, link_total_GBps=1280,
        names=(r"\bTRAINIUM ?2\b", r"\bTRN2U?\b"),
        sources=_src(_TRN2, "memory_GB", "memory_TBps", "tflops.fp32", "tflops.bf16", "tflops.fp16",
                     "tflops.tf32", "tflops.fp8", "link_total_GBps") | {"links": _NKI_TRN2, "pcie_gen": _NO_PCIE},
        quotes={"memory_GB": "96 GiB of device memory with 2.9 TB/sec of bandwidth",
                "memory_TBps": "96 GiB of device memory with 2.9 TB/sec of bandwidth",
                "tflops.fp32": "181 FP32 TFLOPS", "tflops.bf16": "667 BF16/FP16/TF32 TFLOPS",
                "tflops.fp16": "667 BF16/FP16/TF32 TFLOPS", "tflops.tf32": "667 BF16/FP16/TF32 TFLOPS",
                "tflops.fp8": "1,299 FP8 TFLOPS",
                "links": "4 NeuronLink-v3 for device-to-device collective communication",
                "link_total_GBps": "Inter-chip Interconnect (GB/sec/chip) | 384 | 1280 | 3.3x"}),
)

OTHER_GPUS: tuple[GPU, ...] = GEFORCE + INSTINCT + TRAINIUM
