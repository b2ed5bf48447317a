"""The GPU table: every part collperf knows, one row each, each figure with its data sheet (parts.py checks a
row when this module loads). A new GPU is one row here; names.py resolves the names tools print to a row."""

from __future__ import annotations

from collperf.model.hardware.gpus_other import OTHER_GPUS
from collperf.model.hardware.parts import GPU


def _cited(sheet: str, quotes: dict, *unquoted: str, **other: str) -> dict:
    """The sources of a row: `sheet` for every quoted field and for `unquoted` ones (a count the sheet implies
    but prints in no single phrase), another sheet per field in `other` ('links' -> the white paper)."""
    sources = {name: sheet for name in (*quotes, *unquoted)}
    sources.update({name.replace("__", "."): title for name, title in other.items()})
    return sources


# ---- the sheets (title, then where it is published) --------------------------------------------------------
_P100 = "NVIDIA Tesla P100 data sheet (images.nvidia.com/content/tesla/pdf/nvidia-tesla-p100-datasheet.pdf)"
_PASCAL_WP = ("NVIDIA Tesla P100 white paper, Pascal GP100 architecture "
              "(images.nvidia.com/content/pdf/tesla/whitepaper/pascal-architecture-whitepaper.pdf)")
_V100 = ("NVIDIA V100 Tensor Core GPU data sheet "
         "(images.nvidia.com/content/technologies/volta/pdf/volta-v100-datasheet-update-us-1165301-r5.pdf)")
_VOLTA_WP = ("NVIDIA Tesla V100 GPU architecture white paper "
             "(images.nvidia.com/content/volta-architecture/pdf/volta-architecture-whitepaper.pdf)")
_DGX2 = ("NVIDIA DGX-2 data sheet "
         "(nvidia.com/content/dam/en-zz/Solutions/Data-Center/dgx-2/dgx-2-print-datasheet-738070-nvidia-a4-web-uk.pdf)")
_T4 = ("NVIDIA T4 Tensor Core GPU data sheet "
       "(nvidia.com/content/dam/en-zz/Solutions/Data-Center/tesla-t4/t4-tensor-core-datasheet-951643.pdf)")
_A100 = ("NVIDIA A100 Tensor Core GPU data sheet "
         "(nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf)")
_A100_40_PCIE = ("NVIDIA A100 40GB PCIe GPU Accelerator product brief PB-10137-001 "
                 "(nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/A100-PCIE-Prduct-Brief.pdf)")
_AMPERE_WP = ("NVIDIA A100 Tensor Core GPU architecture white paper "
              "(images.nvidia.com/aem-dam/en-zz/Solutions/data-center/nvidia-ampere-architecture-whitepaper.pdf)")
_GA102_WP = ("NVIDIA Ampere GA102 GPU architecture white paper "
             "(nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf)")
_A800 = "NVIDIA A800 Tensor Core GPU (nvidia.cn/data-center/products/a800/)"
_A10 = ("NVIDIA A10 Tensor Core GPU data sheet "
        "(nvidia.com/content/dam/en-zz/Solutions/Data-Center/a10/pdf/a10-datasheet.pdf)")
_A10G_AWS = "Amazon EC2 G5 instances (aws.amazon.com/ec2/instance-types/g5/)"
_A10G_TPU = "TechPowerUp GPU database, NVIDIA A10G (techpowerup.com/gpu-specs/a10g.c3798)"
_A30 = ("NVIDIA A30 Tensor Core GPU data sheet "
        "(nvidia.com/content/dam/en-zz/Solutions/data-center/products/a30-gpu/pdf/a30-datasheet.pdf)")
_A40 = ("NVIDIA A40 GPU Accelerator product brief PB-09976-001 "
        "(images.nvidia.com/content/Solutions/data-center/a40/nvidia-a40-datasheet.pdf)")
_A16 = "NVIDIA A16 GPU data sheet (images.nvidia.com/content/Solutions/data-center/vgpu-a16-datasheet.pdf)"
_A2 = ("NVIDIA A2 Tensor Core GPU data sheet "
       "(nvidia.com/content/dam/en-zz/solutions/data-center/a2/pdf/a2-datasheet.pdf)")
_HOPPER_WP = ("NVIDIA H100 Tensor Core GPU architecture white paper "
              "(resources.nvidia.com/en-us-tensor-core/gtc22-whitepaper-hopper)")
_H800 = "NVIDIA H800 Tensor Core GPU (nvidia.cn/data-center/h800/)"
# NVIDIA publishes no data sheet for the H20; these are the figures reported from its partner briefings
_H20 = "Will It Run AI, NVIDIA H20 96GB (willitrunai.com/gpus/h20-96gb)"
_H200 = "NVIDIA H200 Tensor Core GPU data sheet (nvidia.com/en-us/data-center/h200/)"
_GH200 = "NVIDIA GH200 Grace Hopper Superchip data sheet (resources.nvidia.com/en-us-grace-cpu/grace-hopper-superchip)"
_GH200_WP = ("NVIDIA Grace Hopper Superchip architecture white paper "
             "(resources.nvidia.com/en-us-grace-cpu/nvidia-grace-hopper)")
_L4 = "NVIDIA L4 Tensor Core GPU data sheet (resources.nvidia.com/en-us-data-center-overview/l4-gpu-datasheet)"
_L40 = "NVIDIA L40 GPU data sheet (images.nvidia.com/content/Solutions/data-center/vgpu-L40-datasheet.pdf)"
_L40S = "NVIDIA L40S GPU data sheet (resources.nvidia.com/en-us-l40s/l40s-datasheet-28413)"
_RTX_A6000 = ("NVIDIA RTX A6000 data sheet "
              "(nvidia.com/content/dam/en-zz/Solutions/design-visualization/quadro-product-literature/proviz-print-nvidia-rtx-a6000-datasheet-us-nvidia-1454980-r9-web.pdf)")
_RTX_6000_ADA = ("NVIDIA RTX 6000 Ada Generation data sheet "
                 "(nvidia.com/content/dam/en-zz/Solutions/design-visualization/rtx-6000/proviz-print-rtx6000-datasheet-web-2504660.pdf)")
_RTX_PRO_6000 = ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition data sheet "
                 "(nvidia.com/en-us/products/workstations/professional-desktop-gpus/rtx-pro-6000/)")
_RTX_PRO_6000_SERVER = ("NVIDIA RTX PRO 6000 Blackwell Server Edition "
                        "(nvidia.com/en-us/data-center/rtx-pro-6000-blackwell-server-edition/)")
_BLACKWELL = "NVIDIA Blackwell architecture technical brief (resources.nvidia.com/en-us-blackwell-architecture)"
_GB200 = "NVIDIA GB200 NVL72 (nvidia.com/en-us/data-center/gb200-nvl72/)"
_DGX_SPARK = "NVIDIA DGX Spark (nvidia.com/en-us/products/workstations/dgx-spark/)"
_H100 = "NVIDIA H100 Tensor Core GPU data sheet (resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet)"
_A100_2020 = ("NVIDIA A100 Tensor Core GPU data sheet, 40GB edition "
              "(nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet.pdf)")

_A100_PAGE = "NVIDIA A100 Tensor Core GPU (nvidia.com/en-us/data-center/a100/)"
_H100_PAGE = "NVIDIA H100 Tensor Core GPU (nvidia.com/en-us/data-center/h100/)"
_BLACKWELL_ULTRA_DS = ("NVIDIA Blackwell Ultra data sheet "
                       "(resources.nvidia.com/en-us-blackwell-architecture/blackwell-ultra-datasheet)")
_RTX_PRO_6000_SERVER_DS = ("NVIDIA RTX PRO 6000 Blackwell Server Edition data sheet "
                           "(dam-cdn.nvd.orangelogic.com/AssetLink/707m1632ypg4du1fj3ci1jo3h4w1k78j.pdf)")

# ---- words several rows share --------------------------------------------------------------------------------
# A quote is the sheet's own words, trimmed to the phrase; a table row is its label then its cell, and ' … '
# joins two passages of one sheet (a starred cell and the footnote that says what the star means). A figure
# with a source and no quote is one whose sheet states it but whose exact words were not re-read.
_A100_FIELDS = ("memory_GB", "memory_TBps", "tflops.fp64", "tflops.fp32", "tflops.tf32", "tflops.bf16", "tflops.fp16",
                "tflops.int8", "link_total_GBps", "pcie_gen")
_A100_PAGE_FLOPS = {"tflops.fp64": "FP64 9.7 TFLOPS", "tflops.fp32": "FP32 19.5 TFLOPS",
                    "tflops.bf16": "BFLOAT16 Tensor Core 312 TFLOPS | 624 TFLOPS*",
                    "tflops.fp16": "FP16 Tensor Core 312 TFLOPS | 624 TFLOPS*",
                    "tflops.int8": "INT8 Tensor Core 624 TOPS | 1248 TOPS*",
                    "memory_GB": "GPU Memory 80GB HBM2e"}
_HOPPER_Q = ("memory_GB", "memory_TBps", "tflops.fp64", "tflops.fp32", "tflops.tf32", "tflops.bf16", "tflops.fp16",
             "tflops.fp8", "tflops.int8", "pcie_gen")
_PASCAL_Q = ("memory_GB", "memory_TBps", "tflops.fp64", "tflops.fp32", "tflops.fp16")
_VOLTA_Q = ("memory_GB", "memory_TBps", "tflops.fp64", "tflops.fp32", "tflops.fp16")
_BLACKWELL_Q = ("memory_GB", "memory_TBps", "tflops.fp64", "tflops.tf32", "tflops.bf16", "tflops.fp16", "tflops.fp8",
                "tflops.fp4", "tflops.int8")
_BLACKWELL_ULTRA_LINK = {"link_total_GBps": "Fifth-Generation NVLink: 1.8 TB/s", "pcie_gen": "PCIe Gen6: 256 GB/s"}


# the GB300 column of a per-GPU table "without sparsity" (a cloud provider's reading of NVIDIA's Blackwell Ultra
# figures): the dense peaks NVIDIA's own GB300 pages print only per rack or with sparsity
_VERDA_GB300 = "Verda, GB300 NVL72 architecture, per-GPU specifications (verda.com/blog/gb300-nvl72-architecture)"

GPUS: tuple[GPU, ...] = (
    # ---- Pascal (sm 60): NVLink1, four links of 20 GB/s a direction ------------------------------------------
    GPU("p100-pcie-12gb", "P100 PCIe 12GB", "nvidia", "P100", "Pascal", 60, "PCIe",
        memory_GB=12, memory_TBps=0.549, tflops={"fp64": 4.7, "fp32": 9.3, "fp16": 18.7}, pcie_gen=3,
        names=(r"\bP100 PCIE 12GB\b", r"\bP100\b.*\b12GB\b"),
        sources=_cited(_P100, {}, *_PASCAL_Q, pcie_gen=_PASCAL_WP)),
    GPU("p100-pcie-16gb", "P100 PCIe 16GB", "nvidia", "P100", "Pascal", 60, "PCIe",
        memory_GB=16, memory_TBps=0.732, tflops={"fp64": 4.7, "fp32": 9.3, "fp16": 18.7}, pcie_gen=3,
        names=(r"\bP100 PCIE( 16GB)?\b",),
        sources=_cited(_P100, {}, *_PASCAL_Q, pcie_gen=_PASCAL_WP)),
    GPU("p100-sxm2-16gb", "P100 SXM2 16GB", "nvidia", "P100", "Pascal", 60, "SXM",
        memory_GB=16, memory_TBps=0.732, tflops={"fp64": 5.3, "fp32": 10.6, "fp16": 21.2},
        link="NVLink1", links=4, link_total_GBps=160, pcie_gen=3,
        names=(r"\bP100\b", r"\bP100 SXM2?( 16GB)?\b"),
        sources=_cited(_P100, {}, *_PASCAL_Q, "link_total_GBps", links=_PASCAL_WP, pcie_gen=_PASCAL_WP),
        quotes={"memory_GB": "CoWoS HBM2 Stacked Memory Capacity 16 GB",
                "memory_TBps": "CoWoS HBM2 Stacked Memory Bandwidth 732 GB/s",
                "tflops.fp64": "Double-Precision Performance 5.3 teraFLOPS",
                "tflops.fp32": "Single-Precision Performance 10.6 teraFLOPS",
                "tflops.fp16": "Half-Precision Performance 21.2 teraFLOPS",
                "link_total_GBps": "NVIDIA NVLink Interconnect Bandwidth 160 GB/s"}),

    # ---- Volta (sm 70): NVLink2, six links of 25 GB/s a direction; 'Tensor Performance' is the fp16 peak -------
    GPU("v100-pcie-16gb", "V100 PCIe 16GB", "nvidia", "V100", "Volta", 70, "PCIe",
        memory_GB=16, memory_TBps=0.9, tflops={"fp64": 7, "fp32": 14, "fp16": 112}, pcie_gen=3,
        names=(r"\bV100 PCIE 16GB\b", r"\bV100 16GB PCIE\b"),
        sources=_cited(_V100, {}, *_VOLTA_Q, pcie_gen=_VOLTA_WP)),
    # 'V100 PCIe' without memory: the 32GB card, as a bare 'V100' means the 32GB SXM2 part
    GPU("v100-pcie-32gb", "V100 PCIe 32GB", "nvidia", "V100", "Volta", 70, "PCIe",
        memory_GB=32, memory_TBps=0.9, tflops={"fp64": 7, "fp32": 14, "fp16": 112}, pcie_gen=3,
        names=(r"\bV100 PCIE( 32GB)?\b", r"\bV100 32GB PCIE\b"),
        sources=_cited(_V100, {}, *_VOLTA_Q, pcie_gen=_VOLTA_WP)),
    GPU("v100s-pcie-32gb", "V100S PCIe 32GB", "nvidia", "V100S", "Volta", 70, "PCIe",
        memory_GB=32, memory_TBps=1.134, tflops={"fp64": 8.2, "fp32": 16.4, "fp16": 130}, pcie_gen=3,
        names=(r"\bV100S( PCIE( 32GB)?)?\b",),
        sources=_cited(_V100, {}, *_VOLTA_Q, pcie_gen=_VOLTA_WP)),
    GPU("v100-sxm2-16gb", "V100 SXM2 16GB", "nvidia", "V100", "Volta", 70, "SXM",
        memory_GB=16, memory_TBps=0.9, tflops={"fp64": 7.8, "fp32": 15.7, "fp16": 125},
        link="NVLink2", links=6, link_total_GBps=300, pcie_gen=3,
        names=(r"\bV100 SXM2 16GB\b",),
        sources=_cited(_V100, {}, *_VOLTA_Q, "link_total_GBps", links=_VOLTA_WP, pcie_gen=_VOLTA_WP)),
    GPU("v100-sxm2-32gb", "V100 SXM2 32GB", "nvidia", "V100", "Volta", 70, "SXM",
        memory_GB=32, memory_TBps=0.9, tflops={"fp64": 7.8, "fp32": 15.7, "fp16": 125},
        link="NVLink2", links=6, link_total_GBps=300, pcie_gen=3,
        names=(r"\bV100\b", r"\bV100 SXM2?( 32GB)?\b"),
        sources=_cited(_V100, {}, *_VOLTA_Q, "link_total_GBps", links=_VOLTA_WP, pcie_gen=_VOLTA_WP)),
    # The DGX-2 board's module: the V100 sheet's NVLink figures; the DGX-2 sheet's '2 petaFLOPS' over its
    # 16 GPUs is the same 125 TFLOPS each. Its six links go to NVSwitches instead of to peers.
    GPU("v100-sxm3-32gb", "V100 SXM3 32GB", "nvidia", "V100", "Volta", 70, "SXM",
        memory_GB=32, memory_TBps=0.9, tflops={"fp64": 7.8, "fp32": 15.7, "fp16": 125},
        link="NVLink2", links=6, link_total_GBps=300, pcie_gen=3,
        names=(r"\bV100 SXM3( 32GB)?\b", r"\bDGX 2\b"),
        sources=_cited(_V100, {}, "memory_TBps", "tflops.fp64", "tflops.fp32", "tflops.fp16", "link_total_GBps",
                       memory_GB=_DGX2, links=_VOLTA_WP, pcie_gen=_VOLTA_WP)),

    # ---- Turing (sm 75) ---------------------------------------------------------------------------------------
    GPU("t4", "T4", "nvidia", "T4", "Turing", 75, "PCIe",
        memory_GB=16, memory_TBps=0.3, tflops={"fp32": 8.1, "fp16": 65, "int8": 130}, pcie_gen=3,
        names=(r"\bT4\b",),
        sources=_cited(_T4, {}, "memory_GB", "memory_TBps", "tflops.fp32", "tflops.fp16", "tflops.int8", "pcie_gen"),
        quotes={"memory_GB": "16 GB GDDR6", "memory_TBps": "300 GB/sec",
                "tflops.fp16": "Mixed-Precision (FP16/FP32) 65 TFLOPS"}),

    # ---- Ampere (sm 80, 86): NVLink3 links carry 50 GB/s both directions together ----------------------------
    # A100 and A800 PCIe cards: the NVLink figure is a bridge to one peer card (optional), as their sheets print it
    GPU("a100-pcie-40gb", "A100 PCIe 40GB", "nvidia", "A100", "Ampere", 80, "PCIe",
        memory_GB=40, memory_TBps=1.555,
        tflops={"fp64": 9.7, "fp32": 19.5, "tf32": 156, "bf16": 312, "fp16": 312, "int8": 624},
        link="NVLink3", links=12, link_total_GBps=600, pcie_gen=4,
        names=(r"\bA100 PCIE 40GB\b", r"\bA100 40GB PCIE\b", r"\bA100 PCIE\b"),
        sources=_cited(_A100_40_PCIE, {}, *_A100_FIELDS, links=_AMPERE_WP)),
    GPU("a100-pcie-80gb", "A100 PCIe 80GB", "nvidia", "A100", "Ampere", 80, "PCIe",
        memory_GB=80, memory_TBps=1.935,
        tflops={"fp64": 9.7, "fp32": 19.5, "tf32": 156, "bf16": 312, "fp16": 312, "int8": 624},
        link="NVLink3", links=12, link_total_GBps=600, pcie_gen=4,
        names=(r"\bA100 80GB PCIE\b", r"\bA100 PCIE 80GB\b", r"\bA100 PCIE\b"),
        sources=_cited(_A100_PAGE, {}, *_A100_FIELDS, links=_AMPERE_WP),
        quotes={**_A100_PAGE_FLOPS, "tflops.tf32": "Tensor Float 32 (TF32) 156 TFLOPS | 312 TFLOPS",
                "memory_TBps": "GPU Memory Bandwidth 1,935 GB/s",
                "link_total_GBps": "NVIDIA® NVLink® Bridge for 2 GPUs: 600 GB/s", "pcie_gen": "PCIe Gen4: 64 GB/s"}),
    # 'A100-PG509-200' is NVIDIA's board name for the 40GB SXM4 module: the driver's product list gives it PCI
    # device 20B0, the device of 'NVIDIA A100-SXM4-40GB' (its sibling 'PG509-210' is 20B2, the 80GB module)
    GPU("a100-sxm4-40gb", "A100 SXM4 40GB", "nvidia", "A100", "Ampere", 80, "SXM",
        memory_GB=40, memory_TBps=1.555,
        tflops={"fp64": 9.7, "fp32": 19.5, "tf32": 156, "bf16": 312, "fp16": 312, "int8": 624},
        link="NVLink3", links=12, link_total_GBps=600, pcie_gen=4,
        names=(r"\bA100 SXM4? 40GB\b", r"\bA100 40GB\b", r"\bA100 PG509 200\b"),
        sources=_cited(_A100_2020, {}, *_A100_FIELDS, links=_AMPERE_WP)),
    # a bare 'A100' is the 80GB SXM4 module; the 64GB SXM board NVIDIA also lists is no row here (no sheet)
    GPU("a100-sxm4-80gb", "A100 SXM4 80GB", "nvidia", "A100", "Ampere", 80, "SXM",
        memory_GB=80, memory_TBps=2.039,
        tflops={"fp64": 9.7, "fp32": 19.5, "tf32": 156, "bf16": 312, "fp16": 312, "int8": 624},
        link="NVLink3", links=12, link_total_GBps=600, pcie_gen=4,
        names=(r"\bA100\b(?!.*\b64GB\b)", r"\bA100 SXM4?( 80GB)?\b(?! 64GB)", r"\bA100 80GB\b", r"\bPG509 210\b"),
        sources=_cited(_A100_PAGE, {}, *_A100_FIELDS, links=_AMPERE_WP),
        quotes={**_A100_PAGE_FLOPS, "tflops.tf32": "Tensor Float 32 (TF32) 156 TFLOPS | 312 TFLOPS*",
                "memory_TBps": "GPU Memory Bandwidth 2,039 GB/s",
                "link_total_GBps": "NVLink: 600 GB/s", "pcie_gen": "PCIe Gen4: 64 GB/s"}),
    # A800: the A100 with NVLink cut to 400 GB/s; no NVIDIA text gives its link count, so it is 400 / 50, the
    # NVLink3 rate per link (the A100 white paper's 600 GB/s over its 12 links)
    GPU("a800-sxm4-80gb", "A800 SXM4 80GB", "nvidia", "A800", "Ampere", 80, "SXM",
        memory_GB=80, memory_TBps=2.039,
        tflops={"fp64": 9.7, "fp32": 19.5, "tf32": 156, "bf16": 312, "fp16": 312, "int8": 624},
        link="NVLink3", links=8, link_total_GBps=400, pcie_gen=4,
        names=(r"\bA800\b(?!.*\b(PCIE|40GB|ACTIVE)\b)", r"\bA800 SXM4?( 80GB)?\b(?! 40GB)"),
        sources=_cited(_A800, {}, *_A100_FIELDS, links=_AMPERE_WP)),
    GPU("a800-pcie-80gb", "A800 PCIe 80GB", "nvidia", "A800", "Ampere", 80, "PCIe",
        memory_GB=80, memory_TBps=1.935,
        tflops={"fp64": 9.7, "fp32": 19.5, "tf32": 156, "bf16": 312, "fp16": 312, "int8": 624},
        link="NVLink3", links=8, link_total_GBps=400, pcie_gen=4,
        names=(r"\bA800 80GB PCIE\b", r"\bA800 PCIE( 80GB)?\b"),
        sources=_cited(_A800, {}, *_A100_FIELDS, links=_AMPERE_WP)),
    GPU("a30", "A30", "nvidia", "A30", "Ampere", 80, "PCIe",
        memory_GB=24, memory_TBps=0.933,
        tflops={"fp64": 5.2, "fp32": 10.3, "tf32": 82, "bf16": 165, "fp16": 165, "int8": 330},
        link="NVLink3", links=4, link_total_GBps=200, pcie_gen=4,
        names=(r"\bA30\b",),
        sources=_cited(_A30, {}, *_A100_FIELDS, links=_AMPERE_WP)),
    GPU("a10", "A10", "nvidia", "A10", "Ampere", 86, "PCIe",
        memory_GB=24, memory_TBps=0.6,
        tflops={"fp32": 31.2, "tf32": 62.5, "bf16": 125, "fp16": 125, "int8": 250}, pcie_gen=4,
        names=(r"\bA10\b",),
        sources=_cited(_A10, {}, "memory_GB", "memory_TBps", "tflops.fp32", "tflops.tf32", "tflops.bf16",
                       "tflops.fp16", "tflops.int8", "pcie_gen")),
    # AWS's A10 variant (EC2 G5): NVIDIA publishes no sheet for it, AWS gives the memory only; the bandwidth, the
    # FP32 peak and the bus are TechPowerUp's database entry
    GPU("a10g", "A10G", "nvidia", "A10G", "Ampere", 86, "PCIe",
        memory_GB=24, memory_TBps=0.6002, tflops={"fp32": 31.52}, pcie_gen=4,
        names=(r"\bA10G\b",),
        sources=_cited(_A10G_TPU, {}, "memory_TBps", "tflops.fp32", "pcie_gen", memory_GB=_A10G_AWS)),
    GPU("a40", "A40", "nvidia", "A40", "Ampere", 86, "PCIe",
        memory_GB=48, memory_TBps=0.696,
        tflops={"fp32": 37.4, "tf32": 74.8, "bf16": 149.7, "fp16": 149.7, "int8": 299.3},
        link="NVLink3", links=4, link_total_GBps=112.5, pcie_gen=4,
        names=(r"\bA40\b",),
        sources=_cited(_A40, {}, "memory_GB", "memory_TBps", "tflops.fp32", "tflops.tf32", "tflops.bf16",
                       "tflops.fp16", "tflops.int8", "link_total_GBps", "pcie_gen", links=_GA102_WP)),
    # A16: one board of four GPUs, each its own device; the row is one of them (the sheet prints '4x' per GPU)
    GPU("a16", "A16 (one of its four GPUs)", "nvidia", "A16", "Ampere", 86, "PCIe",
        memory_GB=16, memory_TBps=0.2, tflops={"fp32": 4.5}, pcie_gen=4,
        names=(r"\bA16\b",),
        sources=_cited(_A16, {}, "memory_GB", "memory_TBps", "tflops.fp32", "pcie_gen")),
    GPU("a2", "A2", "nvidia", "A2", "Ampere", 86, "PCIe",
        memory_GB=16, memory_TBps=0.2,
        tflops={"fp32": 4.5, "tf32": 9, "bf16": 18, "fp16": 18, "int8": 36}, pcie_gen=4, pcie_lanes=8,
        names=(r"\bA2\b",),
        sources=_cited(_A2, {}, "memory_GB", "memory_TBps", "tflops.fp32", "tflops.tf32", "tflops.bf16",
                       "tflops.fp16", "tflops.int8", "pcie_gen")),
    GPU("rtx-a6000", "RTX A6000", "nvidia", "RTX A6000", "Ampere", 86, "PCIe",
        memory_GB=48, memory_TBps=0.768, tflops={"fp32": 38.7},
        link="NVLink3", links=4, link_total_GBps=112.5, pcie_gen=4,
        names=(r"\bRTX A6000\b", r"\bA6000\b"),
        sources=_cited(_RTX_A6000, {}, "memory_GB", "memory_TBps", "tflops.fp32", "link_total_GBps", "pcie_gen",
                       links=_GA102_WP)),

    # ---- Ada Lovelace (sm 89): PCIe only ----------------------------------------------------------------------
    GPU("l4", "L4", "nvidia", "L4", "Ada Lovelace", 89, "PCIe",
        memory_GB=24, memory_TBps=0.3,
        tflops={"fp32": 30.3, "tf32": 60, "bf16": 121, "fp16": 121, "fp8": 242.5, "int8": 242.5}, pcie_gen=4,
        names=(r"\bL4\b",),
        sources=_cited(_L4, {}, "memory_GB", "memory_TBps", "tflops.fp32", "tflops.tf32", "tflops.bf16",
                       "tflops.fp16", "tflops.fp8", "tflops.int8", "pcie_gen")),
    GPU("l40", "L40", "nvidia", "L40", "Ada Lovelace", 89, "PCIe",
        memory_GB=48, memory_TBps=0.864,
        tflops={"fp32": 90.5, "tf32": 90.5, "bf16": 181.05, "fp16": 181.05, "fp8": 362, "int8": 362}, pcie_gen=4,
        names=(r"\bL40\b",),
        sources=_cited(_L40, {}, "memory_GB", "memory_TBps", "tflops.fp32", "tflops.tf32", "tflops.bf16",
                       "tflops.fp16", "tflops.fp8", "tflops.int8", "pcie_gen")),
    GPU("l40s", "L40S", "nvidia", "L40S", "Ada Lovelace", 89, "PCIe",
        memory_GB=48, memory_TBps=0.864,
        tflops={"fp32": 91.6, "tf32": 183, "bf16": 362.05, "fp16": 362.05, "fp8": 733, "int8": 733}, pcie_gen=4,
        names=(r"\bL40S\b",),
        sources=_cited(_L40S, {}, "memory_GB", "memory_TBps", "tflops.fp32", "tflops.tf32", "tflops.bf16",
                       "tflops.fp16", "tflops.fp8", "tflops.int8", "pcie_gen")),
    GPU("rtx-6000-ada", "RTX 6000 Ada Generation", "nvidia", "RTX 6000 Ada", "Ada Lovelace", 89, "PCIe",
        memory_GB=48, memory_TBps=0.96, tflops={"fp32": 91.1}, pcie_gen=4,
        names=(r"\bRTX 6000 ADA\b", r"\b6000 ADA\b"),
        sources=_cited(_RTX_6000_ADA, {}, "memory_GB", "memory_TBps", "tflops.fp32", "pcie_gen")),

    # ---- Hopper (sm 90): NVLink4, 18 links of 50 GB/s both directions together (the white paper's 900 GB/s) ---
    # PCIe and NVL cards: 600 GB/s of bridges is 12 of those links, 400 GB/s (H800) 8: the sheets print no count.
    # The H100 page stars its Tensor Core rows; its footnote reads '* With sparsity' (the rows keep half).
    GPU("h100-pcie", "H100 PCIe 80GB", "nvidia", "H100", "Hopper", 90, "PCIe",
        memory_GB=80, memory_TBps=2,
        tflops={"fp64": 26, "fp32": 51, "tf32": 378, "bf16": 756.5, "fp16": 756.5, "fp8": 1513, "int8": 1513},
        link="NVLink4", links=12, link_total_GBps=600, pcie_gen=5,
        names=(r"\bH100 PCIE\b", r"\bH100\b.*\bPCIE\b"),
        sources=_cited(_H100, {}, *_HOPPER_Q, "link_total_GBps", links=_HOPPER_WP)),
    GPU("h100-sxm5-80gb", "H100 SXM5 80GB", "nvidia", "H100", "Hopper", 90, "SXM",
        memory_GB=80, memory_TBps=3.35,
        tflops={"fp64": 34, "fp32": 67, "tf32": 494.5, "bf16": 989.5, "fp16": 989.5, "fp8": 1979},
        link="NVLink4", links=18, link_total_GBps=900, pcie_gen=5,
        names=(r"\bH100\b", r"\bH100\b.*\b(SXM\d?|HBM3)\b"),
        sources=_cited(_H100_PAGE, {}, "memory_GB", "memory_TBps", "tflops.fp64", "tflops.fp32", "tflops.tf32",
                       "tflops.bf16", "tflops.fp16", "tflops.fp8", "link_total_GBps", "pcie_gen", links=_HOPPER_WP),
        quotes={"memory_GB": "GPU Memory 80GB", "memory_TBps": "GPU Memory Bandwidth 3.35TB/s",
                "tflops.fp64": "FP64 34 teraFLOPS", "tflops.fp32": "FP32 67 teraFLOPS",
                "tflops.tf32": "TF32 Tensor Core* 989 teraFLOPS … * With sparsity",
                "tflops.bf16": "BFLOAT16 Tensor Core* 1,979 teraFLOPS … * With sparsity",
                "tflops.fp16": "FP16 Tensor Core* 1,979 teraFLOPS … * With sparsity",
                "tflops.fp8": "FP8 Tensor Core* 3,958 teraFLOPS … * With sparsity",
                "link_total_GBps": "NVIDIA NVLink™: 900GB/s", "pcie_gen": "PCIe Gen5: 128GB/s"}),
    GPU("h100-nvl", "H100 NVL 94GB", "nvidia", "H100", "Hopper", 90, "NVL",
        memory_GB=94, memory_TBps=3.9,
        tflops={"fp64": 30, "fp32": 60, "tf32": 417.5, "bf16": 835.5, "fp16": 835.5, "fp8": 1670.5, "int8": 1670.5},
        link="NVLink4", links=12, link_total_GBps=600, pcie_gen=5,
        names=(r"\bH100 NVL\b",),
        sources=_cited(_H100_PAGE, {}, *_HOPPER_Q, "link_total_GBps", links=_HOPPER_WP),
        quotes={"memory_GB": "GPU Memory 94GB", "memory_TBps": "GPU Memory Bandwidth 3.9TB/s",
                "tflops.fp64": "FP64 30 teraFLOPs", "tflops.fp32": "FP32 60 teraFLOPs",
                "tflops.tf32": "TF32 Tensor Core* 835 teraFLOPs … * With sparsity",
                "tflops.bf16": "BFLOAT16 Tensor Core* 1,671 teraFLOPS … * With sparsity",
                "tflops.fp16": "FP16 Tensor Core* 1,671 teraFLOPS … * With sparsity",
                "tflops.fp8": "FP8 Tensor Core* 3,341 teraFLOPS … * With sparsity",
                "link_total_GBps": "NVIDIA NVLink: 600GB/s", "pcie_gen": "PCIe Gen5: 128GB/s"}),
    # H800: the H100 with NVLink cut to 400 GB/s and FP64 to 1 TFLOPS; 'H800 NVL' (in NVIDIA's driver list) has
    # no published sheet and is left unresolved rather than read as this part
    GPU("h800-sxm5", "H800 SXM5 80GB", "nvidia", "H800", "Hopper", 90, "SXM",
        memory_GB=80, memory_TBps=3.35,
        tflops={"fp64": 1, "fp32": 67, "tf32": 494.5, "bf16": 989.5, "fp16": 989.5, "fp8": 1979, "int8": 1979},
        link="NVLink4", links=8, link_total_GBps=400, pcie_gen=5,
        names=(r"\bH800\b(?! (PCIE|NVL)\b)", r"\bH800 SXM5?\b"),
        sources=_cited(_H800, {}, *_HOPPER_Q, "link_total_GBps", links=_HOPPER_WP)),
    GPU("h800-pcie", "H800 PCIe 80GB", "nvidia", "H800", "Hopper", 90, "PCIe",
        memory_GB=80, memory_TBps=2,
        tflops={"fp64": 0.8, "fp32": 51, "tf32": 378, "bf16": 756.5, "fp16": 756.5, "fp8": 1513, "int8": 1513},
        link="NVLink4", links=8, link_total_GBps=400, pcie_gen=5,
        names=(r"\bH800 PCIE\b",),
        sources=_cited(_H800, {}, *_HOPPER_Q, "link_total_GBps", links=_HOPPER_WP)),
    # H20: full NVLink, memory above the H100's, compute cut to about 15 % of it. Its PCIe generation is the
    # Hopper die's. The 141GB 'H20-3e' (in NVIDIA's driver list) has no public figures: no row, and the pattern
    # below keeps its name (and 'H20 NVL16', likewise without figures) from reading as this part.
    GPU("h20", "H20 96GB", "nvidia", "H20", "Hopper", 90, "SXM",
        memory_GB=96, memory_TBps=4, tflops={"fp16": 148, "int8": 296},
        link="NVLink4", links=18, link_total_GBps=900, pcie_gen=5,
        names=(r"\bH20\b(?!.*\b(3E|NVL16|141GB)\b)",),
        sources=_cited(_H20, {}, "memory_GB", "memory_TBps", "tflops.fp16", "tflops.int8", "link_total_GBps",
                       links=_HOPPER_WP, pcie_gen=_HOPPER_WP),
        quotes={"memory_GB": "96 GB HBM3 — 4,000 GB/s bandwidth", "memory_TBps": "96 GB HBM3 — 4,000 GB/s bandwidth",
                "tflops.fp16": "148 TFLOPS FP16 (throttled for export compliance)", "tflops.int8": "296 INT8 TOPS",
                "link_total_GBps": "NVLink 4.0 (900 GB/s)"}),
    GPU("h200-sxm", "H200 SXM 141GB", "nvidia", "H200", "Hopper", 90, "SXM",
        memory_GB=141, memory_TBps=4.8,
        tflops={"fp64": 34, "fp32": 67, "tf32": 494.5, "bf16": 989.5, "fp16": 989.5, "fp8": 1979, "int8": 1979},
        link="NVLink4", links=18, link_total_GBps=900, pcie_gen=5,
        names=(r"\bH200\b", r"\bH200 SXM5?( 141GB)?\b"),
        sources=_cited(_H200, {}, *_HOPPER_Q, "link_total_GBps", links=_HOPPER_WP),
        quotes={"memory_GB": "GPU Memory 141GB", "memory_TBps": "GPU Memory Bandwidth 4.8TB/s",
                "tflops.fp64": "FP64 34 teraFLOPS", "tflops.fp32": "FP32 67 teraFLOPS",
                "link_total_GBps": "NVIDIA NVLink™: 900GB/s", "pcie_gen": "PCIe Gen5: 128GB/s"}),
    GPU("h200-nvl", "H200 NVL 141GB", "nvidia", "H200", "Hopper", 90, "NVL",
        memory_GB=141, memory_TBps=4.8,
        tflops={"fp64": 30, "fp32": 60, "tf32": 417.5, "bf16": 835.5, "fp16": 835.5, "fp8": 1670.5, "int8": 1670.5},
        link="NVLink4", links=18, link_total_GBps=900, pcie_gen=5,
        names=(r"\bH200 NVL\b",),
        sources=_cited(_H200, {}, *_HOPPER_Q, "link_total_GBps", links=_HOPPER_WP),
        quotes={"memory_GB": "GPU Memory 141GB", "memory_TBps": "GPU Memory Bandwidth 4.8TB/s",
                "tflops.fp64": "FP64 30 teraFLOPs", "tflops.fp32": "FP32 60 teraFLOPs",
                "link_total_GBps": "2- or 4-way NVIDIA NVLink bridge: 900GB/s per GPU",
                "pcie_gen": "PCIe Gen5: 128GB/s"}),
    # GH200: one Hopper GPU and a Grace CPU on one module (NVLink-C2C between them). nvidia-smi names the 96GB
    # HBM3 module by its GPU + CPU memory ('GH200 480GB', or '120GB' with less LPDDR5X); its PCIe lanes are Grace's
    GPU("gh200-96gb", "GH200 96GB HBM3", "nvidia", "GH200", "Hopper", 90, "superchip",
        memory_GB=96, memory_TBps=4,
        tflops={"fp64": 34, "fp32": 67, "tf32": 494.5, "bf16": 989.5, "fp16": 989.5, "fp8": 1979, "int8": 1979},
        link="NVLink4", links=18, link_total_GBps=900, pcie_gen=5,
        names=(r"\bGH200\b", r"\bGH200 (96GB|120GB|480GB)\b"),
        sources=_cited(_GH200, {}, *_HOPPER_Q, link_total_GBps=_GH200_WP, links=_GH200_WP)),
    GPU("gh200-144gb", "GH200 144GB HBM3e", "nvidia", "GH200", "Hopper", 90, "superchip",
        memory_GB=144, memory_TBps=4.9,
        tflops={"fp64": 34, "fp32": 67, "tf32": 494.5, "bf16": 989.5, "fp16": 989.5, "fp8": 1979, "int8": 1979},
        link="NVLink4", links=18, link_total_GBps=900, pcie_gen=5,
        names=(r"\bGH200 (144G|144GB|624GB)\b", r"\bGH200\b.*\bHBM3E\b"),
        sources=_cited(_GH200, {}, *_HOPPER_Q, link_total_GBps=_GH200_WP, links=_GH200_WP)),

    # ---- Blackwell (sm 100, 103, 120, 121): NVLink5, 18 links, 1.8 TB/s a GPU ---------------------------------
    # The GB200 NVL72 page prints 'Individual Blackwell GPU Specifications' for a GB200 GPU and an HGX B200 GPU;
    # its Tensor Core peaks are with sparsity (its system rows print FP4 'sparse | dense': HGX B200 144 | 72
    # PFLOPS over 8 GPUs), so the rows keep half. Its FP32 and FP64 are dense.
    # PCIe: no sheet quoted here prints the generation of B100/B200/GB200 (Gen5) in one phrase.
    GPU("b100", "B100", "nvidia", "B100", "Blackwell", 100, "SXM",
        memory_GB=192, memory_TBps=8,
        tflops={"fp64": 30, "tf32": 900, "bf16": 1750, "fp16": 1750, "fp8": 3500, "fp4": 7000, "int8": 3500},
        link="NVLink5", links=18, link_total_GBps=1800, pcie_gen=5,
        names=(r"\bB100\b",),
        sources=_cited(_BLACKWELL, {}, *_BLACKWELL_Q, "links", "link_total_GBps", "pcie_gen")),
    # B200: NVIDIA's per-GPU figures, the HGX B200 column of the GB200 NVL72 page: 180 GB, 7.7 TB/s (the DGX B200
    # user guide's '1,440 GB total GPU memory' over its 8 GPUs agrees), not the 192 GB of HBM fitted
    GPU("b200", "B200", "nvidia", "B200", "Blackwell", 100, "SXM",
        memory_GB=180, memory_TBps=7.7,
        tflops={"fp64": 37, "fp32": 75, "tf32": 1100, "bf16": 2250, "fp16": 2250, "fp8": 4500, "fp4": 9000,
                "int8": 4500},
        link="NVLink5", links=18, link_total_GBps=1800, pcie_gen=5,
        names=(r"\bB200\b",),
        sources=_cited(_GB200, {}, *_BLACKWELL_Q, "tflops.fp32",
                       links=_BLACKWELL, link_total_GBps=_BLACKWELL, pcie_gen=_BLACKWELL),
        quotes={"memory_GB": "180GB HBM3E | 7.7TB/s", "memory_TBps": "180GB HBM3E | 7.7TB/s",
                "tflops.fp64": "FP64/FP64 Tensor Core 37 TFLOPS", "tflops.fp32": "FP32 75 TFLOPS"}),
    # GB200: a superchip is a Grace CPU and two Blackwell GPUs, each its own device; the row is one GPU, as the
    # page prints it (its GB200 NVL72 column)
    GPU("gb200", "GB200 (per GPU: half a superchip)", "nvidia", "GB200", "Blackwell", 100, "superchip",
        memory_GB=186, memory_TBps=8,
        tflops={"fp64": 40, "fp32": 80, "tf32": 1250, "bf16": 2500, "fp16": 2500, "fp8": 5000, "fp4": 10000,
                "int8": 5000},
        link="NVLink5", links=18, link_total_GBps=1800, pcie_gen=5,
        names=(r"\bGB200\b",),
        sources=_cited(_GB200, {}, *_BLACKWELL_Q, "tflops.fp32",
                       links=_BLACKWELL, link_total_GBps=_BLACKWELL, pcie_gen=_BLACKWELL),
        quotes={"memory_GB": "186GB HBM3E | 8TB/s", "memory_TBps": "186GB HBM3E | 8TB/s",
                "tflops.fp64": "FP64/FP64 Tensor Core 40 TFLOPS", "tflops.fp32": "FP32 80 TFLOPS"}),
    # Blackwell Ultra: the data sheet prints FP4 per GPU as 'sparse | dense' for an HGX B300 GPU and a GB300 NVL72
    # GPU, and the memory each offers (270 GB and 279 GB, not the 288 GB of HBM fitted); its other Tensor Core
    # rows print the sparse peak only and are not in these rows yet
    GPU("b300", "B300", "nvidia", "B300", "Blackwell Ultra", 103, "SXM",
        memory_GB=270, memory_TBps=7.7, tflops={"fp4": 14000},
        link="NVLink5", links=18, link_total_GBps=1800, pcie_gen=6,
        names=(r"\bB300\b",),
        sources=_cited(_BLACKWELL_ULTRA_DS, {}, "memory_GB", "memory_TBps", "tflops.fp4", "link_total_GBps",
                       "pcie_gen", links=_BLACKWELL),
        quotes={"memory_GB": "270 GB HBM3E | 7.7 TB/s", "memory_TBps": "270 GB HBM3E | 7.7 TB/s",
                "tflops.fp4": "FP4 Tensor Core 18 PFLOPS | 14 PFLOPS", **_BLACKWELL_ULTRA_LINK}),
    GPU("gb300", "GB300 (per GPU)", "nvidia", "GB300", "Blackwell Ultra", 103, "superchip",
        memory_GB=279, memory_TBps=8, tflops={"fp4": 15000, "fp8": 5000, "bf16": 2500, "fp16": 2500, "tf32": 1250,
                                              "fp32": 80},
        link="NVLink5", links=18, link_total_GBps=1800, pcie_gen=6,
        names=(r"\bGB300\b",),
        sources=_cited(_BLACKWELL_ULTRA_DS, {}, "memory_GB", "memory_TBps", "tflops.fp4", "link_total_GBps",
                       "pcie_gen", links=_BLACKWELL, **{f"tflops.{d}": _VERDA_GB300 for d in
                                                        ("fp8", "bf16", "fp16", "tf32", "fp32")}),
        quotes={"memory_GB": "279 GB HBM3E | 8 TB/s", "memory_TBps": "279 GB HBM3E | 8 TB/s",
                "tflops.fp4": "FP4 Tensor Core 20 PFLOPS | 15 PFLOPS", **_BLACKWELL_ULTRA_LINK,
                "tflops.fp8": "| FP8 | 5 PFLOPS |", "tflops.bf16": "| FP16/BF16 | 2.5 PFLOPS |",
                "tflops.fp16": "| FP16/BF16 | 2.5 PFLOPS |", "tflops.tf32": "| TF32 | 1.25 PFLOPS |",
                "tflops.fp32": "| FP32 | 0.080 PFLOPS |"}),
    # RTX PRO 6000 Blackwell: one GB202 card in three editions; the Max-Q Workstation Edition runs at a lower
    # power and has no row (its name resolves to none). FP32 is the family's 'up to' figure. The Server Edition's
    # own data sheet prints its memory bandwidth lower than the Workstation Edition's 1,792 GB/s.
    GPU("rtx-pro-6000-ws", "RTX PRO 6000 Blackwell Workstation Edition", "nvidia", "RTX PRO 6000", "Blackwell", 120,
        "PCIe", memory_GB=96, memory_TBps=1.792, tflops={"fp32": 125}, pcie_gen=5,
        names=(r"\bRTX PRO 6000 (BLACKWELL )?WORKSTATION\b",),
        sources=_cited(_RTX_PRO_6000, {}, "memory_GB", "memory_TBps", "tflops.fp32", "pcie_gen")),
    GPU("rtx-pro-6000-server", "RTX PRO 6000 Blackwell Server Edition", "nvidia", "RTX PRO 6000", "Blackwell", 120,
        "PCIe", memory_GB=96, memory_TBps=1.597, tflops={"fp32": 125}, pcie_gen=5,
        names=(r"\bRTX PRO 6000 (BLACKWELL )?SERVER\b",),
        sources=_cited(_RTX_PRO_6000_SERVER, {}, "memory_GB", "tflops.fp32", "pcie_gen",
                       memory_TBps=_RTX_PRO_6000_SERVER_DS),
        quotes={"memory_TBps": "Memory bandwidth 1597 GB/s"}),
    # GB10 (DGX Spark): one SoC, its GPU and CPU sharing 128 GB of LPDDR5X; no NVLink to another GPU (its
    # ConnectX-7 is a network card). Its GPU reaches the CPU over NVLink-C2C, not PCIe: pcie_gen is the
    # generation NVIDIA compares that link to, kept only because the field is required. FP4: the page's 1 PFLOP
    # is with sparsity (the row keeps half).
    GPU("gb10", "GB10 (DGX Spark)", "nvidia", "GB10", "Blackwell", 121, "SoC",
        memory_GB=128, memory_TBps=0.273, tflops={"fp4": 500}, pcie_gen=5,
        names=(r"\bGB10\b", r"\bDGX SPARK\b"),
        sources=_cited(_DGX_SPARK, {}, "memory_GB", "memory_TBps", "tflops.fp4", "pcie_gen"),
        quotes={"memory_GB": "128 GB LPDDR5x, coherent unified system memory", "memory_TBps": "273 GB/s"}),
) + OTHER_GPUS

BY_KEY: dict[str, GPU] = {g.key: g for g in GPUS}
