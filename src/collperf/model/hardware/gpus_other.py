"""The GPU table's rows for GeForce cards (since Pascal), AMD Instinct accelerators (MI50 to MI355X) and AWS
Trainium: the same shape as gpus.py's data-centre NVIDIA rows, each figure with its data sheet.

Units as the sheets print them. NVIDIA's GeForce white papers and the TechPowerUp database print memory bandwidth
in GB/s (and AWS in GB/sec): the row keeps TB/s, so those figures carry their source but no quote (`figure_in`
reads the number as printed, 1008 is not 1.008); the sheet's words are in the comment beside the row.

GeForce tensor peaks are the dense FP16 (and BF16) rate with FP32 accumulate, the one mixed-precision training
runs at (GeForce cards run it at half the FP16-accumulate rate the marketing figure uses). Where no NVIDIA sheet
prints a card's FP32 peak, the TechPowerUp GPU database gives it (shader count x boost clock x 2).

compute_capability of AMD parts is the NCCL table row RCCL reads: RCCL keeps NCCL's tuning tables and indexes
them as NCCL does, so CDNA3 and later stand in as Hopper (90), CDNA1/2 as Ampere (80), GCN (MI50, MI60) as Volta
(70). AWS Neuron has no NCCL table: Trainium rows carry 70 as the catalogue's trn1 system does (a stand-in).
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
_BLACKWELL_NEWS = ("NVIDIA GeForce RTX 50 Series announcement: 'Blackwell has also been enhanced with PCIe Gen5' "
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
        | {"pcie_gen": _PCIE3},
        quotes={"memory_GB": "Memory Size 6 GB", "tflops.fp32": "FP32 (float) 4.375 TFLOPS"}),
    # Turing white paper, GTX 1070 column: "Memory Bandwidth (GB/sec) 256"
    GPU("geforce-gtx-1070", "GeForce GTX 1070", "nvidia", "GTX 1070", "Pascal", 61, "PCIe",
        memory_GB=8, memory_TBps=0.256, tflops={"fp32": 6.5}, pcie_gen=3,
        names=(_geforce("1070"),),
        sources=_src(_TURING_WP, "memory_GB", "memory_TBps", "tflops.fp32") | {"pcie_gen": _PCIE3},
        quotes={"memory_GB": "Frame Buffer Memory Size and Type 8192 MB GDDR5 (8 GB)",
                "tflops.fp32": "Peak FP32 TFLOPS 6.5"}),
    # TechPowerUp: "Bandwidth 256.3 GB/s"
    GPU("geforce-gtx-1070-ti", "GeForce GTX 1070 Ti", "nvidia", "GTX 1070 Ti", "Pascal", 61, "PCIe",
        memory_GB=8, memory_TBps=0.256, tflops={"fp32": 8.186}, pcie_gen=3,
        names=(_geforce("1070 TI"),),
        sources=_src(_TPU.format("NVIDIA GeForce GTX 1070 Ti"), "memory_GB", "memory_TBps", "tflops.fp32")
        | {"pcie_gen": _PCIE3},
        quotes={"memory_GB": "Memory Size 8 GB", "tflops.fp32": "FP32 (float) 8.186 TFLOPS"}),
    # Turing white paper, GTX 1080 column: "Memory Bandwidth (GB/sec) 320"
    GPU("geforce-gtx-1080", "GeForce GTX 1080", "nvidia", "GTX 1080", "Pascal", 61, "PCIe",
        memory_GB=8, memory_TBps=0.32, tflops={"fp32": 8.9}, pcie_gen=3,
        names=(_geforce("1080"),),
        sources=_src(_TURING_WP, "memory_GB", "memory_TBps", "tflops.fp32") | {"pcie_gen": _PCIE3},
        quotes={"memory_GB": "Frame Buffer Memory Size and Type 8192 MB GDDR5X (8 GB)",
                "tflops.fp32": "Peak FP32 TFLOPS 8.9"}),
    # Turing white paper, GTX 1080 Ti column: "Memory Bandwidth (GB/sec) 484"
    GPU("geforce-gtx-1080-ti", "GeForce GTX 1080 Ti", "nvidia", "GTX 1080 Ti", "Pascal", 61, "PCIe",
        memory_GB=11, memory_TBps=0.484, tflops={"fp32": 11.3}, pcie_gen=3,
        names=(_geforce("1080 TI"),),
        sources=_src(_TURING_WP, "memory_GB", "memory_TBps", "tflops.fp32") | {"pcie_gen": _PCIE3},
        quotes={"memory_GB": "Frame Buffer Memory Size and Type 11264 MB GDDR5X (11 GB)",
                "tflops.fp32": "Peak FP32 TFLOPS 11.3"}),
    # TechPowerUp: "Bandwidth 547.6 GB/s"
    GPU("titan-xp", "TITAN Xp", "nvidia", "TITAN Xp", "Pascal", 61, "PCIe",
        memory_GB=12, memory_TBps=0.5476, tflops={"fp32": 12.15}, pcie_gen=3,
        names=(r"\bTITAN XP\b",),
        sources=_src(_TPU.format("NVIDIA TITAN Xp"), "memory_GB", "memory_TBps", "tflops.fp32")
        | {"pcie_gen": _PCIE3},
        quotes={"memory_GB": "Memory Size 12 GB", "tflops.fp32": "FP32 (float) 12.15 TFLOPS"}),
    # ---- Volta (sm 70) -----------------------------------------------------------------------------------------
    # TITAN V page: "Memory Bandwidth 652.8 GB/s"; the tensor figure is FP16 with FP32 accumulate (full rate on
    # the TITAN V, as on the V100)
    GPU("titan-v", "TITAN V", "nvidia", "TITAN V", "Volta", 70, "PCIe",
        memory_GB=12, memory_TBps=0.6528, tflops={"fp32": 14.9, "fp16": 110}, pcie_gen=3,
        names=(r"\bTITAN V\b",),
        sources=_src(_TITAN_V, "memory_GB", "memory_TBps", "tflops.fp16")
        | {"tflops.fp32": _TPU.format("NVIDIA TITAN V"), "pcie_gen": _PCIE3},
        quotes={"memory_GB": "Frame Buffer 12 GB HBM2", "tflops.fp16": "Tensor Performance (Deep Learning) 110 TFLOPS",
                "tflops.fp32": "FP32 (float) 14.90 TFLOPS"}),
    # ---- Turing (sm 75), PCIe 3.0 x16; Founders Edition figures where the white paper prints both ----------------
    # TechPowerUp: "Bandwidth 336.0 GB/s"
    GPU("geforce-rtx-2060", "GeForce RTX 2060", "nvidia", "RTX 2060", "Turing", 75, "PCIe",
        memory_GB=6, memory_TBps=0.336, tflops={"fp32": 6.451}, pcie_gen=3, p2p=False,
        names=(_geforce("2060", not_followed_by=" SUPER| 12 ?GB"),),
        sources=_src(_TPU.format("NVIDIA GeForce RTX 2060"), "memory_GB", "memory_TBps", "tflops.fp32")
        | {"pcie_gen": _PCIE3, "p2p": _P2P_NOTE},
        quotes={"memory_GB": "Memory Size 6 GB", "tflops.fp32": "FP32 (float) 6.451 TFLOPS"}),
    # Turing white paper, RTX 2070 Founders Edition: "Memory Bandwidth (GB/sec) 448"
    GPU("geforce-rtx-2070", "GeForce RTX 2070", "nvidia", "RTX 2070", "Turing", 75, "PCIe",
        memory_GB=8, memory_TBps=0.448, tflops={"fp32": 7.9, "fp16": 31.5}, pcie_gen=3, p2p=False,
        names=(_geforce("2070", not_followed_by=" SUPER"),),
        sources=_src(_TURING_WP, "memory_GB", "memory_TBps", "tflops.fp32", "tflops.fp16")
        | {"pcie_gen": _PCIE3, "p2p": _P2P_NOTE},
        quotes={"memory_GB": "Frame Buffer Memory Size and Type 8192 MB GDDR6 (8 GB)",
                "tflops.fp32": "Peak FP32 TFLOPS 7.9",
                "tflops.fp16": "Peak FP16 Tensor TFLOPS with FP32 Accumulate 31.5"}),
    # Turing white paper, RTX 2080 Founders Edition: "Memory Bandwidth (GB/sec) 448"; TU104 has one x8 NVLink:
    # "25 GB/sec in each direction ... 50 GB/sec total bidirectional bandwidth"
    GPU("geforce-rtx-2080", "GeForce RTX 2080", "nvidia", "RTX 2080", "Turing", 75, "PCIe",
        memory_GB=8, memory_TBps=0.448, tflops={"fp32": 10.6, "fp16": 42.4},
        link="NVLink2", links=1, link_total_GBps=50, pcie_gen=3, p2p=False,
        names=(_geforce("2080", not_followed_by=" SUPER"),),
        sources=_src(_TURING_WP, "memory_GB", "memory_TBps", "tflops.fp32", "tflops.fp16", "links",
                     "link_total_GBps") | {"pcie_gen": _PCIE3, "p2p": _P2P_NOTE},
        quotes={"memory_GB": "Frame Buffer Memory Size and Type 8192 MB GDDR6 (8 GB)",
                "tflops.fp32": "Peak FP32 TFLOPS 10.6",
                "tflops.fp16": "Peak FP16 Tensor TFLOPS with FP32 Accumulate 42.4",
                "link_total_GBps": "50 GB/sec total bidirectional bandwidth"}),
    # Turing white paper, RTX 2080 Ti Founders Edition: "Memory Bandwidth (GB/sec) 616"; TU102 has two x8 NVLinks:
    # "50 GB/sec in each direction, or 100 GB/sec total bidirectional bandwidth"
    GPU("geforce-rtx-2080-ti", "GeForce RTX 2080 Ti", "nvidia", "RTX 2080 Ti", "Turing", 75, "PCIe",
        memory_GB=11, memory_TBps=0.616, tflops={"fp32": 14.2, "fp16": 56.9},
        link="NVLink2", links=2, link_total_GBps=100, pcie_gen=3, p2p=False,
        names=(_geforce("2080 TI"),),
        sources=_src(_TURING_WP, "memory_GB", "memory_TBps", "tflops.fp32", "tflops.fp16", "links",
                     "link_total_GBps") | {"pcie_gen": _PCIE3, "p2p": _P2P_NOTE},
        quotes={"memory_GB": "Frame Buffer Memory Size and Type 11264 MB GDDR6 (11 GB)",
                "tflops.fp32": "Peak FP32 TFLOPS 14.2",
                "tflops.fp16": "Peak FP16 Tensor TFLOPS with FP32 Accumulate 56.9",
                "link_total_GBps": "100 GB/sec total bidirectional bandwidth"}),
    # TITAN RTX page: "Memory Bandwidth 672 GB/s"; its tensor cores run FP32 accumulate at full rate
    GPU("titan-rtx", "TITAN RTX", "nvidia", "TITAN RTX", "Turing", 75, "PCIe",
        memory_GB=24, memory_TBps=0.672, tflops={"fp32": 16.31, "fp16": 130},
        link="NVLink2", links=2, link_total_GBps=100, pcie_gen=3, p2p=False,
        names=(r"\bTITAN RTX\b",),
        sources=_src(_TITAN_RTX, "memory_GB", "memory_TBps", "tflops.fp16", "link_total_GBps")
        | {"links": _TURING_WP, "tflops.fp32": _TPU.format("NVIDIA TITAN RTX"), "pcie_gen": _PCIE3,
           "p2p": _P2P_NOTE},
        quotes={"memory_GB": "GPU Memory 24 GB GDDR6", "tflops.fp16": "130 Tensor TFLOPS",
                "tflops.fp32": "FP32 (float) 16.31 TFLOPS", "link_total_GBps": "NVLink 100 GB/s"}),
    # ---- Ampere GA10x (sm 86), PCIe 4.0 x16 ------------------------------------------------------------------------
    # TechPowerUp: "Bandwidth 360.0 GB/s"
    GPU("geforce-rtx-3060", "GeForce RTX 3060", "nvidia", "RTX 3060", "Ampere", 86, "PCIe",
        memory_GB=12, memory_TBps=0.36, tflops={"fp32": 12.74}, p2p=False,
        names=(_geforce("3060", not_followed_by=" TI| 8 ?GB"),),
        sources=_src(_TPU.format("NVIDIA GeForce RTX 3060 12 GB"), "memory_GB", "memory_TBps", "tflops.fp32")
        | {"pcie_gen": _AMPERE_WP, "p2p": _P2P_NOTE},
        quotes={"memory_GB": "Memory Size 12 GB", "tflops.fp32": "FP32 (float) 12.74 TFLOPS"}),
    # GA102 white paper, Appendix A, RTX 3070: "Memory Bandwidth 448 GB/sec"
    GPU("geforce-rtx-3070", "GeForce RTX 3070", "nvidia", "RTX 3070", "Ampere", 86, "PCIe",
        memory_GB=8, memory_TBps=0.448, tflops={"fp32": 20.3, "fp16": 40.6, "bf16": 40.6}, p2p=False,
        names=(_geforce("3070", not_followed_by=" TI"),),
        sources=_src(_AMPERE_WP, "memory_GB", "memory_TBps", "tflops.fp32", "tflops.fp16", "tflops.bf16",
                     "pcie_gen") | {"p2p": _P2P_NOTE},
        quotes={"memory_GB": "Frame Buffer Memory Size and Type 8192 MB GDDR6 (8 GB)",
                "tflops.fp32": "Peak FP32 TFLOPS (non-Tensor) 20.3",
                "tflops.fp16": "Peak FP16 Tensor TFLOPS with FP32 Accumulate 40.6/81.3",
                "tflops.bf16": "Peak BF16 Tensor TFLOPS with FP32 Accumulate 40.6/81.3",
                "pcie_gen": "PCIe Gen 4"}),
    # GA102 white paper, RTX 3080: "Memory Bandwidth 760 GB/sec"
    GPU("geforce-rtx-3080", "GeForce RTX 3080 10GB", "nvidia", "RTX 3080", "Ampere", 86, "PCIe",
        memory_GB=10, memory_TBps=0.76, tflops={"fp32": 29.8, "fp16": 59.5, "bf16": 59.5}, p2p=False,
        names=(_geforce("3080"), _geforce("3080 10 ?GB")),
        sources=_src(_AMPERE_WP, "memory_GB", "memory_TBps", "tflops.fp32", "tflops.fp16", "tflops.bf16",
                     "pcie_gen") | {"p2p": _P2P_NOTE},
        quotes={"memory_GB": "Frame Buffer Memory Size and Type 10240 MB GDDR6X (10 GB)",
                "tflops.fp32": "Peak FP32 TFLOPS (non-Tensor) 29.8",
                "tflops.fp16": "Peak FP16 Tensor TFLOPS with FP32 Accumulate 59.5/119",
                "tflops.bf16": "Peak BF16 Tensor TFLOPS with FP32 Accumulate 59.5/119",
                "pcie_gen": "PCIe Gen 4"}),
    # TechPowerUp: "Bandwidth 912.4 GB/s". Tools print "NVIDIA GeForce RTX 3080" for both memory sizes: the bare
    # name means the 10GB card, the first and most sold; this row needs the size in the name.
    GPU("geforce-rtx-3080-12gb", "GeForce RTX 3080 12GB", "nvidia", "RTX 3080", "Ampere", 86, "PCIe",
        memory_GB=12, memory_TBps=0.912, tflops={"fp32": 30.64}, p2p=False,
        names=(_geforce("3080 12 ?GB"),),
        sources=_src(_TPU.format("NVIDIA GeForce RTX 3080 12 GB"), "memory_GB", "memory_TBps", "tflops.fp32")
        | {"pcie_gen": _AMPERE_WP, "p2p": _P2P_NOTE},
        quotes={"memory_GB": "Memory Size 12 GB", "tflops.fp32": "FP32 (float) 30.64 TFLOPS"}),
    # TechPowerUp: "Bandwidth 912.4 GB/s"
    GPU("geforce-rtx-3080-ti", "GeForce RTX 3080 Ti", "nvidia", "RTX 3080 Ti", "Ampere", 86, "PCIe",
        memory_GB=12, memory_TBps=0.912, tflops={"fp32": 34.1}, p2p=False,
        names=(_geforce("3080 TI"),),
        sources=_src(_TPU.format("NVIDIA GeForce RTX 3080 Ti"), "memory_GB", "memory_TBps", "tflops.fp32")
        | {"pcie_gen": _AMPERE_WP, "p2p": _P2P_NOTE},
        quotes={"memory_GB": "Memory Size 12 GB", "tflops.fp32": "FP32 (float) 34.10 TFLOPS"}),
    # GA102 white paper, Appendix A, RTX 3090: "Memory Bandwidth 936 GB/sec"; third-generation NVLink, four x4
    # links: "56.25 GB/sec bandwidth in each direction, and 112.5 GB/sec total bandwidth"
    GPU("geforce-rtx-3090", "GeForce RTX 3090", "nvidia", "RTX 3090", "Ampere", 86, "PCIe",
        memory_GB=24, memory_TBps=0.936, tflops={"fp32": 35.6, "fp16": 71, "bf16": 71},
        link="NVLink3", links=4, link_total_GBps=112.5, p2p=False,
        names=(_geforce("3090"),),
        sources=_src(_AMPERE_WP, "memory_GB", "memory_TBps", "tflops.fp32", "tflops.fp16", "tflops.bf16",
                     "links", "link_total_GBps", "pcie_gen") | {"p2p": _P2P_NOTE},
        quotes={"memory_GB": "Frame Buffer Memory Size and Type 24576 MB GDDR6X (24 GB)",
                "tflops.fp32": "Peak FP32 TFLOPS (non-Tensor) 35.6",
                "tflops.fp16": "Peak FP16 Tensor TFLOPS with FP32 Accumulate 71/142",
                "tflops.bf16": "Peak BF16 Tensor TFLOPS with FP32 Accumulate 71/142",
                "links": "four x4 links", "link_total_GBps": "112.5 GB/sec total bandwidth",
                "pcie_gen": "PCIe Gen 4"}),
    # TechPowerUp: "Bandwidth 1.01 TB/s"; the same GA102 NVLink connector as the 3090
    GPU("geforce-rtx-3090-ti", "GeForce RTX 3090 Ti", "nvidia", "RTX 3090 Ti", "Ampere", 86, "PCIe",
        memory_GB=24, memory_TBps=1.008, tflops={"fp32": 40.0},
        link="NVLink3", links=4, link_total_GBps=112.5, p2p=False,
        names=(_geforce("3090 TI"),),
        sources=_src(_TPU.format("NVIDIA GeForce RTX 3090 Ti"), "memory_GB", "memory_TBps", "tflops.fp32")
        | _src(_AMPERE_WP, "links", "link_total_GBps", "pcie_gen") | {"p2p": _P2P_NOTE},
        quotes={"memory_GB": "Memory Size 24 GB", "tflops.fp32": "FP32 (float) 40.00 TFLOPS",
                "link_total_GBps": "112.5 GB/sec total bandwidth"}),
    # ---- Ada Lovelace (sm 89), PCIe 4.0 ------------------------------------------------------------------------
    # TechPowerUp: "Bandwidth 288.0 GB/s", "Bus Interface PCIe 4.0 x8". Tools print one name for the 8GB and
    # the 16GB card: the row is the 8GB one.
    GPU("geforce-rtx-4060-ti", "GeForce RTX 4060 Ti", "nvidia", "RTX 4060 Ti", "Ada Lovelace", 89, "PCIe",
        memory_GB=8, memory_TBps=0.288, tflops={"fp32": 22.06}, pcie_lanes=8, p2p=False,
        names=(_geforce("4060 TI", not_followed_by=" 16 ?GB"),),
        sources=_src(_TPU.format("NVIDIA GeForce RTX 4060 Ti 8 GB"), "memory_GB", "memory_TBps", "tflops.fp32",
                     "pcie_gen") | {"p2p": _P2P_NOTE},
        quotes={"memory_GB": "Memory Size 8 GB", "tflops.fp32": "FP32 (float) 22.06 TFLOPS",
                "pcie_gen": "Bus Interface PCIe 4.0 x8"}),
    # TechPowerUp: "Bandwidth 504.2 GB/s"
    GPU("geforce-rtx-4070", "GeForce RTX 4070", "nvidia", "RTX 4070", "Ada Lovelace", 89, "PCIe",
        memory_GB=12, memory_TBps=0.504, tflops={"fp32": 29.15}, p2p=False,
        names=(_geforce("4070", not_followed_by=" SUPER| TI"),),
        sources=_src(_TPU.format("NVIDIA GeForce RTX 4070"), "memory_GB", "memory_TBps", "tflops.fp32",
                     "pcie_gen") | {"p2p": _P2P_NOTE},
        quotes={"memory_GB": "Memory Size 12 GB", "tflops.fp32": "FP32 (float) 29.15 TFLOPS",
                "pcie_gen": "Bus Interface PCIe 4.0 x16"}),
    # TechPowerUp: "Bandwidth 504.2 GB/s"
    GPU("geforce-rtx-4070-ti", "GeForce RTX 4070 Ti", "nvidia", "RTX 4070 Ti", "Ada Lovelace", 89, "PCIe",
        memory_GB=12, memory_TBps=0.504, tflops={"fp32": 40.09}, p2p=False,
        names=(_geforce("4070 TI", not_followed_by=" SUPER"),),
        sources=_src(_TPU.format("NVIDIA GeForce RTX 4070 Ti"), "memory_GB", "memory_TBps", "tflops.fp32",
                     "pcie_gen") | {"p2p": _P2P_NOTE},
        quotes={"memory_GB": "Memory Size 12 GB", "tflops.fp32": "FP32 (float) 40.09 TFLOPS",
                "pcie_gen": "Bus Interface PCIe 4.0 x16"}),
    # Ada white paper, RTX 4080 16GB: "Memory Bandwidth 716.8 GB/sec"
    GPU("geforce-rtx-4080", "GeForce RTX 4080", "nvidia", "RTX 4080", "Ada Lovelace", 89, "PCIe",
        memory_GB=16, memory_TBps=0.7168, tflops={"fp32": 48.7, "fp16": 97.5, "bf16": 97.5}, p2p=False,
        names=(_geforce("4080"),),
        sources=_src(_ADA_WP, "memory_GB", "memory_TBps", "tflops.fp32", "tflops.fp16", "tflops.bf16")
        | {"pcie_gen": _TPU.format("NVIDIA GeForce RTX 4080"), "p2p": _P2P_NOTE},
        quotes={"memory_GB": "Frame Buffer Memory Size and Type 16 GB GDDR6X",
                "tflops.fp32": "Peak FP32 TFLOPS (non-Tensor) 48.7",
                "tflops.fp16": "Peak FP16 Tensor TFLOPS with FP32 Accumulate 97.5/194.9",
                "tflops.bf16": "Peak BF16 Tensor TFLOPS with FP32 Accumulate 97.5/194.9",
                "pcie_gen": "Bus Interface PCIe 4.0 x16"}),
    # TechPowerUp: "Bandwidth 736.3 GB/s"
    GPU("geforce-rtx-4080-super", "GeForce RTX 4080 SUPER", "nvidia", "RTX 4080 SUPER", "Ada Lovelace", 89,
        "PCIe", memory_GB=16, memory_TBps=0.736, tflops={"fp32": 52.22}, p2p=False,
        names=(_geforce("4080 SUPER"), _geforce("4080S")),
        sources=_src(_TPU.format("NVIDIA GeForce RTX 4080 SUPER"), "memory_GB", "memory_TBps", "tflops.fp32",
                     "pcie_gen") | {"p2p": _P2P_NOTE},
        quotes={"memory_GB": "Memory Size 16 GB", "tflops.fp32": "FP32 (float) 52.22 TFLOPS",
                "pcie_gen": "Bus Interface PCIe 4.0 x16"}),
    # Ada white paper, RTX 4090: "Memory Bandwidth 1008 GB/sec"
    GPU("geforce-rtx-4090", "GeForce RTX 4090", "nvidia", "RTX 4090", "Ada Lovelace", 89, "PCIe",
        memory_GB=24, memory_TBps=1.008, tflops={"fp32": 82.6, "fp16": 165.2, "bf16": 165.2}, p2p=False,
        names=(_geforce("4090", not_followed_by=" D"),),
        sources=_src(_ADA_WP, "memory_GB", "memory_TBps", "tflops.fp32", "tflops.fp16", "tflops.bf16")
        | {"pcie_gen": _TPU.format("NVIDIA GeForce RTX 4090"), "p2p": _P2P_NOTE},
        quotes={"memory_GB": "Frame Buffer Memory Size and Type 24 GB GDDR6X",
                "tflops.fp32": "Peak FP32 TFLOPS (non-Tensor) 82.6",
                "tflops.fp16": "Peak FP16 Tensor TFLOPS with FP32 Accumulate 165.2/330.4",
                "tflops.bf16": "Peak BF16 Tensor TFLOPS with FP32 Accumulate 165.2/330.4",
                "pcie_gen": "Bus Interface PCIe 4.0 x16"}),
    # ---- Blackwell GB20x (sm 120), PCIe 5.0 x16 ---------------------------------------------------------------------
    # TechPowerUp: "Bandwidth 672.0 GB/s"
    GPU("geforce-rtx-5070", "GeForce RTX 5070", "nvidia", "RTX 5070", "Blackwell", 120, "PCIe",
        memory_GB=12, memory_TBps=0.672, tflops={"fp32": 30.87}, pcie_gen=5, p2p=False,
        names=(_geforce("5070", not_followed_by=" TI"),),
        sources=_src(_TPU.format("NVIDIA GeForce RTX 5070"), "memory_GB", "memory_TBps", "tflops.fp32")
        | {"pcie_gen": _BLACKWELL_NEWS, "p2p": _P2P_NOTE},
        quotes={"memory_GB": "Memory Size 12 GB", "tflops.fp32": "FP32 (float) 30.87 TFLOPS"}),
    # TechPowerUp: "Bandwidth 896.0 GB/s"
    GPU("geforce-rtx-5070-ti", "GeForce RTX 5070 Ti", "nvidia", "RTX 5070 Ti", "Blackwell", 120, "PCIe",
        memory_GB=16, memory_TBps=0.896, tflops={"fp32": 43.94}, pcie_gen=5, p2p=False,
        names=(_geforce("5070 TI"),),
        sources=_src(_TPU.format("NVIDIA GeForce RTX 5070 Ti"), "memory_GB", "memory_TBps", "tflops.fp32")
        | {"pcie_gen": _BLACKWELL_NEWS, "p2p": _P2P_NOTE},
        quotes={"memory_GB": "Memory Size 16 GB", "tflops.fp32": "FP32 (float) 43.94 TFLOPS"}),
    # TechPowerUp: "Bandwidth 960.0 GB/s"
    GPU("geforce-rtx-5080", "GeForce RTX 5080", "nvidia", "RTX 5080", "Blackwell", 120, "PCIe",
        memory_GB=16, memory_TBps=0.96, tflops={"fp32": 56.28}, pcie_gen=5, p2p=False,
        names=(_geforce("5080"),),
        sources=_src(_TPU.format("NVIDIA GeForce RTX 5080"), "memory_GB", "memory_TBps", "tflops.fp32")
        | {"pcie_gen": _BLACKWELL_NEWS, "p2p": _P2P_NOTE},
        quotes={"memory_GB": "Memory Size 16 GB", "tflops.fp32": "FP32 (float) 56.28 TFLOPS"}),
    # TechPowerUp: "Bandwidth 1.79 TB/s" (1792 GB/s: 28 Gbps GDDR7 on 512 bits)
    GPU("geforce-rtx-5090", "GeForce RTX 5090", "nvidia", "RTX 5090", "Blackwell", 120, "PCIe",
        memory_GB=32, memory_TBps=1.792, tflops={"fp32": 104.8}, pcie_gen=5, p2p=False,
        names=(_geforce("5090", not_followed_by=" D"),),
        sources=_src(_TPU.format("NVIDIA GeForce RTX 5090"), "memory_GB", "memory_TBps", "tflops.fp32")
        | {"pcie_gen": _BLACKWELL_NEWS, "p2p": _P2P_NOTE},
        quotes={"memory_GB": "Memory Size 32 GB", "tflops.fp32": "FP32 (float) 104.8 TFLOPS"}),
)

# ---- AMD Instinct ---------------------------------------------------------------------------------------------
# AnandTech's table of the MI200 launch reprints AMD's figures for the MI250, MI210, MI100 and MI50 side by side
_ANANDTECH_MI210 = ("AnandTech, 'AMD Releases Instinct MI210 Accelerator: CDNA 2 On a PCIe Card', AMD's figures "
                    "(anandtech.com/show/17326/amd-releases-instinct-mi210-accelerator-cdna-2-on-a-pcie-card)")
_MI50 = "AMD Radeon Instinct MI50 product page (amd.com/en/products/professional-graphics/instinct-mi50)"
_MI60 = "AMD Radeon Instinct MI60 product page (amd.com/en/products/professional-graphics/instinct-mi60)"
# AMD's launch of the MI50 and MI60: "two Infinity Fabric Links per GPU deliver up to 200 GB/s of peer-to-peer
# bandwidth" (as reported by SegmentNext, 'AMD Radeon Instinct MI50 and MI60 AMD's First Ever 7nm GPUs')
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
    # gfx906 is resolved to the 32GB MI50 (the same chip and bandwidth as the 16GB one); 'MI50 16GB' picks the other
    # the MI50 and MI60 pages print "Memory Bandwidth 1024 GB/s" (GB/s: no quote, see the module's docstring)
    GPU("mi50-32gb", "Radeon Instinct MI50 32GB", "amd", "MI50", "GCN 5 (Vega 20)", 70, "PCIe",
        memory_GB=32, memory_TBps=1.024, tflops={"fp64": 6.6, "fp32": 13.3, "fp16": 26.5},
        link="xGMI2", links=2, link_total_GBps=200,
        names=(r"\bMI ?50\b", r"\bMI ?50 MI60\b", r"\bVEGA ?20\b", r"^(?:AMD )?GFX906\b"),
        sources=_src(_MI50, "memory_GB", "memory_TBps", "tflops.fp64", "tflops.fp32", "tflops.fp16", "pcie_gen")
        | _src(_VEGA20_LAUNCH, "links", "link_total_GBps"),
        quotes={"memory_GB": "Memory Size 32 GB", "tflops.fp64": "Peak Double Precision (FP64) Performance 6.6 TFLOPs",
                "tflops.fp32": "Peak Single Precision (FP32) Performance 13.3 TFLOPs",
                "tflops.fp16": "Peak Half Precision (FP16) Performance 26.5 TFLOPs",
                "link_total_GBps": "up to 200 GB/s of peer-to-peer bandwidth", "pcie_gen": "PCIe 4.0 x16"}),
    GPU("mi50-16gb", "Radeon Instinct MI50 16GB", "amd", "MI50", "GCN 5 (Vega 20)", 70, "PCIe",
        memory_GB=16, memory_TBps=1.02, tflops={"fp64": 6.6, "fp32": 13.3, "fp16": 26.5},
        link="xGMI2", links=2, link_total_GBps=200,
        names=(r"\bMI ?50 16 ?GB\b",),
        sources=_src(_ANANDTECH_MI210, "memory_GB", "memory_TBps", "tflops.fp64", "tflops.fp32", "tflops.fp16",
                     "pcie_gen") | _src(_VEGA20_LAUNCH, "links", "link_total_GBps"),
        quotes={"memory_GB": "VRAM 16GB", "memory_TBps": "Memory Bandwidth 1.02TBps",
                "tflops.fp64": "FP64 Vector 6.6 TFLOPS", "tflops.fp32": "FP32 Vector 13.3 TFLOPS",
                "tflops.fp16": "FP16 Matrix 26.5 TFLOPS", "link_total_GBps": "up to 200 GB/s of peer-to-peer bandwidth", "pcie_gen": "Form Factor PCIe (4.0)"}),
    GPU("mi60", "Radeon Instinct MI60", "amd", "MI60", "GCN 5 (Vega 20)", 70, "PCIe",
        memory_GB=32, memory_TBps=1.024, tflops={"fp64": 7.4, "fp32": 14.7, "fp16": 29.5},
        link="xGMI2", links=2, link_total_GBps=200,
        names=(r"\bMI ?60\b",),
        sources=_src(_MI60, "memory_GB", "memory_TBps", "tflops.fp64", "tflops.fp32", "tflops.fp16", "pcie_gen")
        | _src(_VEGA20_LAUNCH, "links", "link_total_GBps"),
        quotes={"memory_GB": "Memory Size 32 GB", "tflops.fp64": "Peak Double Precision (FP64) Performance 7.4 TFLOPs",
                "tflops.fp32": "Peak Single Precision (FP32) Performance 14.7 TFLOPs",
                "tflops.fp16": "Peak Half Precision (FP16) Performance 29.5 TFLOPs",
                "link_total_GBps": "up to 200 GB/s of peer-to-peer bandwidth", "pcie_gen": "PCIe 4.0 x16"}),
    # ---- CDNA 1 (gfx908): RCCL's Ampere row; three Infinity Fabric links of 92 GB/s ----------------------------
    GPU("mi100", "Instinct MI100", "amd", "MI100", "CDNA 1", 80, "PCIe",
        memory_GB=32, memory_TBps=1.23, tflops={"fp64": 11.5, "fp32": 23.1, "fp16": 184.6, "bf16": 92.3},
        link="xGMI2", links=3, link_total_GBps=276,
        names=(r"\bMI ?100\b", r"^(?:AMD )?GFX908\b", r"\bARCTURUS\b"),
        sources=_src(_ANANDTECH_MI210, "memory_GB", "memory_TBps", "tflops.fp64", "tflops.fp32", "tflops.fp16",
                     "links", "pcie_gen") | _src(_MI100, "tflops.bf16", "link_total_GBps"),
        quotes={"memory_GB": "VRAM 32GB", "memory_TBps": "Memory Bandwidth 1.23TBps",
                "tflops.fp64": "FP64 Vector 11.5 TFLOPS", "tflops.fp32": "FP32 Vector 23.1 TFLOPS",
                "tflops.fp16": "FP16 Matrix 184.6 TFLOPS", "tflops.bf16": "Peak bfloat16 92.3 TFLOPs",
                "links": "Infinity Fabric Links 3",
                "link_total_GBps": "3 Infinity Fabric Links, up to 276 GB/s peak aggregate",
                "pcie_gen": "Form Factor PCIe (4.0)"}),
    # ---- CDNA 2 (gfx90a): Infinity Fabric links of 100 GB/s ------------------------------------------------------
    GPU("mi210", "Instinct MI210", "amd", "MI210", "CDNA 2", 80, "PCIe",
        memory_GB=64, memory_TBps=1.6, tflops={"fp64": 22.6, "fp32": 22.6, "fp16": 181, "bf16": 181},
        link="xGMI3", links=3, link_total_GBps=300,
        names=(r"\bMI ?210\b",),
        sources=_src(_ANANDTECH_MI210, "memory_GB", "memory_TBps", "tflops.fp64", "tflops.fp32", "tflops.fp16",
                     "links", "pcie_gen") | _src(_MI210, "tflops.bf16", "link_total_GBps"),
        quotes={"memory_GB": "VRAM 64GB", "memory_TBps": "Memory Bandwidth 1.6TBps",
                "tflops.fp64": "FP64 Vector 22.6 TFLOPS", "tflops.fp32": "FP32 Vector 22.6 TFLOPS",
                "tflops.fp16": "FP16 Matrix 181 TFLOPS", "tflops.bf16": "Peak bfloat16 181 TFLOPs",
                "links": "Infinity Fabric Links 3", "link_total_GBps": "up to 300 GB/s",
                "pcie_gen": "Form Factor PCIe (4.0)"}),
    # Two GCDs in one OAM package, each its own device to ROCm and RCCL: the sheet's figures are the package's
    GPU("mi250", "Instinct MI250", "amd", "MI250", "CDNA 2", 80, "OAM",
        memory_GB=128, memory_TBps=3.2, tflops={"fp64": 45.3, "fp32": 45.3, "fp16": 362.1, "bf16": 362.1},
        link="xGMI3", links=6, link_total_GBps=600, gcds=2,
        names=(r"\bMI ?250\b",),
        sources=_src(_ANANDTECH_MI210, "memory_GB", "memory_TBps", "tflops.fp64", "tflops.fp32", "links")
        | _src(_MI250, "tflops.fp16", "tflops.bf16", "link_total_GBps", "pcie_gen"),
        quotes={"memory_GB": "VRAM 128GB", "memory_TBps": "Memory Bandwidth 3.2TBps",
                "tflops.fp64": "FP64 Vector 45.3 TFLOPS", "tflops.fp32": "FP32 Vector 45.3 TFLOPS",
                "tflops.fp16": "Peak Half Precision (FP16) 362.1 TFLOPs",
                "tflops.bf16": "Peak bfloat16 362.1 TFLOPs", "links": "Infinity Fabric Links 6",
                "link_total_GBps": "6 links of 100 GB/s: up to 600 GB/s", "pcie_gen": "PCIe 4.0 x16"}),
    # rocm-smi prints "AMD Instinct MI250X / MI250" for both parts and gfx90a is the MI210's too: those names
    # resolve here, the MI200 part in the largest systems (Frontier, LUMI); 'MI210' or 'MI250' alone picks the others
    GPU("mi250x", "Instinct MI250X", "amd", "MI250X", "CDNA 2", 80, "OAM",
        memory_GB=128, memory_TBps=3.2, tflops={"fp64": 47.9, "fp32": 47.9, "fp16": 383, "bf16": 383},
        link="xGMI3", links=8, link_total_GBps=800, gcds=2,
        names=(r"\bMI ?250X\b", r"^(?:AMD )?GFX90A\b", r"\bALDEBARAN\b"),
        sources=_src(_MI250X, "memory_GB", "memory_TBps", "tflops.fp64", "tflops.fp32", "tflops.fp16",
                     "tflops.bf16", "links", "link_total_GBps", "pcie_gen"),
        quotes={"memory_GB": "Memory Size 128 GB HBM2e", "memory_TBps": "Peak Memory Bandwidth 3.2 TB/s",
                "tflops.fp64": "Peak Double Precision (FP64) Vector 47.9 TFLOPs",
                "tflops.fp32": "Peak Single Precision (FP32) Vector 47.9 TFLOPs",
                "tflops.fp16": "Peak Half Precision (FP16) 383 TFLOPs", "tflops.bf16": "Peak bfloat16 383 TFLOPs",
                "links": "Infinity Fabric Links 8", "link_total_GBps": "8 links of 100 GB/s: up to 800 GB/s",
                "pcie_gen": "PCIe 4.0 x16"}),
    # ---- CDNA 3 (gfx942): RCCL's Hopper row; seven Infinity Fabric links of 128 GB/s ------------------------------
    # MI300A: CPU and GPU in one socket; AMD's sheet gives its Infinity Fabric per socket, not as GPU-to-GPU links
    # of the kind the other rows count: left at none
    GPU("mi300a", "Instinct MI300A", "amd", "MI300A", "CDNA 3", 90, "superchip",
        memory_GB=128, memory_TBps=5.3,
        tflops={"fp64": 61.3, "fp32": 122.6, "tf32": 490.3, "fp16": 980.6, "bf16": 980.6, "fp8": 1961.2},
        pcie_gen=5,
        names=(r"\bMI ?300A\b",),
        sources=_src(_MI300A, "memory_GB", "memory_TBps", "tflops.fp64", "tflops.fp32", "tflops.tf32",
                     "tflops.fp16", "tflops.bf16", "tflops.fp8", "pcie_gen"),
        quotes={"memory_GB": "Memory Capacity 128 GB HBM3", "memory_TBps": "Peak Memory Bandwidth 5.3 TB/s",
                "tflops.fp64": "Peak Double Precision (FP64) Vector 61.3 TFLOPs",
                "tflops.fp32": "Peak Single Precision (FP32) Vector 122.6 TFLOPs",
                "tflops.tf32": "Peak TF32 Matrix 490.3 TFLOPs", "tflops.fp16": "Peak FP16 980.6 TFLOPs",
                "tflops.bf16": "Peak bfloat16 980.6 TFLOPs", "tflops.fp8": "Peak FP8 1961.2 TFLOPs",
                "pcie_gen": "PCIe Gen 5"}),
    GPU("mi300x", "Instinct MI300X", "amd", "MI300X", "CDNA 3", 90, "OAM",
        memory_GB=192, memory_TBps=5.3,
        tflops={"fp64": 81.7, "fp32": 163.4, "tf32": 653.7, "fp16": 1307.4, "bf16": 1307.4, "fp8": 2614.9},
        link="xGMI4", links=7, link_total_GBps=896, pcie_gen=5,
        names=(r"\bMI ?300X\b", r"\bMI ?300\b", r"^(?:AMD )?GFX942\b"),
        sources=_src(_MI300X, "memory_GB", "memory_TBps", "tflops.fp64", "tflops.fp32", "tflops.tf32",
                     "tflops.fp16", "tflops.bf16", "tflops.fp8", "links", "link_total_GBps", "pcie_gen"),
        quotes={"memory_GB": "Memory Capacity 192 GB HBM3", "memory_TBps": "Peak Memory Bandwidth 5.3 TB/s",
                "tflops.fp64": "Peak Double Precision (FP64) Vector 81.7 TFLOPs",
                "tflops.fp32": "Peak Single Precision (FP32) Vector 163.4 TFLOPs",
                "tflops.tf32": "Peak TF32 653.7 TFLOPs", "tflops.fp16": "Peak FP16 1307.4 TFLOPs",
                "tflops.bf16": "Peak bfloat16 1307.4 TFLOPs", "tflops.fp8": "Peak FP8 2614.9 TFLOPs",
                "links": "7 Infinity Fabric links", "link_total_GBps": "Peak aggregate P2P 896 GB/s",
                "pcie_gen": "PCIe Gen 5 x16"}),
    GPU("mi325x", "Instinct MI325X", "amd", "MI325X", "CDNA 3", 90, "OAM",
        memory_GB=256, memory_TBps=6.0,
        tflops={"fp64": 81.7, "fp32": 163.4, "tf32": 653.7, "fp16": 1307.4, "bf16": 1307.4, "fp8": 2614.9},
        link="xGMI4", links=7, link_total_GBps=896, pcie_gen=5,
        names=(r"\bMI ?325X\b",),
        sources=_src(_MI325X, "memory_GB", "memory_TBps", "tflops.fp64", "tflops.fp32", "tflops.tf32",
                     "tflops.fp16", "tflops.bf16", "tflops.fp8", "links", "link_total_GBps", "pcie_gen"),
        quotes={"memory_GB": "Memory Capacity 256 GB HBM3E", "memory_TBps": "Peak Memory Bandwidth 6 TB/s",
                "tflops.fp64": "Peak Double Precision (FP64) Vector 81.7 TFLOPs",
                "tflops.fp32": "Peak Single Precision (FP32) Vector 163.4 TFLOPs",
                "tflops.tf32": "Peak TF32 653.7 TFLOPs", "tflops.fp16": "Peak FP16 1307.4 TFLOPs",
                "tflops.bf16": "Peak bfloat16 1307.4 TFLOPs", "tflops.fp8": "Peak FP8 2614.9 TFLOPs",
                "links": "7 Infinity Fabric links", "link_total_GBps": "Peak aggregate P2P 896 GB/s",
                "pcie_gen": "PCIe Gen 5 x16"}),
    # ---- CDNA 4 (gfx950): seven Infinity Fabric links of 153.6 GB/s ---------------------------------------------
    GPU("mi350x", "Instinct MI350X", "amd", "MI350X", "CDNA 4", 90, "OAM",
        memory_GB=288, memory_TBps=8.0,
        tflops={"fp64": 72.1, "fp32": 144.2, "fp16": 2306.9, "bf16": 2306.9, "fp8": 4613.8, "fp4": 9227.5},
        link="xGMI4", links=7, link_total_GBps=1075.2, pcie_gen=5,
        names=(r"\bMI ?350X\b", r"\bMI ?350\b"),
        sources=_src(_MI350X, "memory_GB", "memory_TBps", "tflops.fp64", "tflops.fp32", "tflops.fp16",
                     "tflops.bf16", "tflops.fp8", "tflops.fp4", "links", "link_total_GBps", "pcie_gen"),
        quotes={"memory_GB": "Memory Capacity 288 GB HBM3E", "memory_TBps": "Peak Memory Bandwidth 8 TB/s",
                "links": "7 Infinity Fabric links", "link_total_GBps": "Peak aggregate P2P 1075.2 GB/s",
                "pcie_gen": "PCIe Gen 5 x16"}),
    GPU("mi355x", "Instinct MI355X", "amd", "MI355X", "CDNA 4", 90, "OAM",
        memory_GB=288, memory_TBps=8.0,
        tflops={"fp64": 78.6, "fp32": 157.3, "fp16": 2516.6, "bf16": 2516.6, "fp8": 5033.2, "fp4": 10066.3},
        link="xGMI4", links=7, link_total_GBps=1075.2, pcie_gen=5,
        names=(r"\bMI ?355X\b", r"\bMI ?355\b", r"^(?:AMD )?GFX950\b"),
        sources=_src(_MI355X, "memory_GB", "memory_TBps", "tflops.fp64", "tflops.fp32", "tflops.fp16",
                     "tflops.bf16", "tflops.fp8", "tflops.fp4", "links", "link_total_GBps", "pcie_gen"),
        quotes={"memory_GB": "Memory Capacity 288 GB HBM3E", "memory_TBps": "Peak Memory Bandwidth 8 TB/s",
                "links": "7 Infinity Fabric links", "link_total_GBps": "Peak aggregate P2P 1075.2 GB/s",
                "pcie_gen": "PCIe Gen 5 x16"}),
)

# ---- AWS Trainium -----------------------------------------------------------------------------------------------
# The Trainium2 architecture page compares both chips (HBM TB/sec, inter-chip GB/sec per chip); each chip has four
# NeuronLinks (the NKI architecture guides: "4 (Trainium) NeuronLink-v2", "4 NeuronLink-v3"). Memory is GiB on
# the pages (32, 96), kept as printed. The pages give no PCIe generation: the default is kept, marked unsourced.
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
                "memory_TBps": "HBM Bandwidth (TB/sec): Trainium 0.8",
                "tflops.fp32": "47.5 FP32 TFLOP", "tflops.bf16": "190 FP16/BF16/cFP8/TF32 TFLOPS",
                "tflops.fp16": "190 FP16/BF16/cFP8/TF32 TFLOPS", "tflops.tf32": "190 FP16/BF16/cFP8/TF32 TFLOPS",
                "links": "4 (Trainium) NeuronLink-v2",
                "link_total_GBps": "Inter-chip Interconnect (GB/sec/chip): Trainium 384"}),
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
                "tflops.fp8": "1,299 FP8 TFLOPS", "links": "4 NeuronLink-v3",
                "link_total_GBps": "Inter-chip Interconnect (GB/sec/chip): Trainium2 1280"}),
)

OTHER_GPUS: tuple[GPU, ...] = GEFORCE + INSTINCT + TRAINIUM
