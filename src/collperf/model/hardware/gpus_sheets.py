"""The data sheets the NVIDIA data-centre rows of gpus.py cite (title, then where it is published) and the words
several rows share: kept apart so that the table reads as rows."""

from __future__ import annotations


def cited(sheet: str, quotes: dict[str, str], *unquoted: str, **other: str) -> dict[str, str]:
    """The sources of a row: `sheet` for every quoted field and for `unquoted` ones (a count the sheet implies
    but prints in no single phrase), another sheet per field in `other` ('links' -> the white paper)."""
    sources = {name: sheet for name in (*quotes, *unquoted)}
    sources.update({name.replace("__", "."): title for name, title in other.items()})
    return sources


# ---- the sheets (title, then where it is published) --------------------------------------------------------
P100 = "NVIDIA Tesla P100 data sheet (images.nvidia.com/content/tesla/pdf/nvidia-tesla-p100-datasheet.pdf)"
PASCAL_WP = ("NVIDIA Tesla P100 white paper, Pascal GP100 architecture "
              "(images.nvidia.com/content/pdf/tesla/whitepaper/pascal-architecture-whitepaper.pdf)")
V100 = ("NVIDIA V100 Tensor Core GPU data sheet "
         "(images.nvidia.com/content/technologies/volta/pdf/volta-v100-datasheet-update-us-1165301-r5.pdf)")
VOLTA_WP = ("NVIDIA Tesla V100 GPU architecture white paper "
             "(images.nvidia.com/content/volta-architecture/pdf/volta-architecture-whitepaper.pdf)")
DGX2 = ("NVIDIA DGX-2 data sheet "
         "(nvidia.com/content/dam/en-zz/Solutions/Data-Center/dgx-2/dgx-2-print-datasheet-738070-nvidia-a4-web-uk.pdf)")
T4 = ("NVIDIA T4 Tensor Core GPU data sheet "
       "(nvidia.com/content/dam/en-zz/Solutions/Data-Center/tesla-t4/t4-tensor-core-datasheet-951643.pdf)")
A100 = ("NVIDIA A100 Tensor Core GPU data sheet "
         "(nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf)")
A100_40_PCIE = ("NVIDIA A100 40GB PCIe GPU Accelerator product brief PB-10137-001 "
                 "(nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/A100-PCIE-Prduct-Brief.pdf)")
AMPERE_WP = ("NVIDIA A100 Tensor Core GPU architecture white paper "
              "(images.nvidia.com/aem-dam/en-zz/Solutions/data-center/nvidia-ampere-architecture-whitepaper.pdf)")
GA102_WP = ("NVIDIA Ampere GA102 GPU architecture white paper "
             "(nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf)")
A800 = "NVIDIA A800 Tensor Core GPU (nvidia.cn/data-center/products/a800/)"
A10 = ("NVIDIA A10 Tensor Core GPU data sheet "
        "(nvidia.com/content/dam/en-zz/Solutions/Data-Center/a10/pdf/a10-datasheet.pdf)")
A10G_AWS = "Amazon EC2 G5 instances (aws.amazon.com/ec2/instance-types/g5/)"
A10G_TPU = "TechPowerUp GPU database, NVIDIA A10G (techpowerup.com/gpu-specs/a10g.c3798)"
A30 = ("NVIDIA A30 Tensor Core GPU data sheet "
        "(nvidia.com/content/dam/en-zz/Solutions/data-center/products/a30-gpu/pdf/a30-datasheet.pdf)")
A40 = ("NVIDIA A40 GPU Accelerator product brief PB-09976-001 "
        "(images.nvidia.com/content/Solutions/data-center/a40/nvidia-a40-datasheet.pdf)")
A16 = "NVIDIA A16 GPU data sheet (images.nvidia.com/content/Solutions/data-center/vgpu-a16-datasheet.pdf)"
A2 = ("NVIDIA A2 Tensor Core GPU data sheet "
       "(nvidia.com/content/dam/en-zz/solutions/data-center/a2/pdf/a2-datasheet.pdf)")
HOPPER_WP = ("NVIDIA H100 Tensor Core GPU architecture white paper "
              "(resources.nvidia.com/en-us-tensor-core/gtc22-whitepaper-hopper)")
H800 = "NVIDIA H800 Tensor Core GPU (nvidia.cn/data-center/h800/)"
# NVIDIA publishes no data sheet for the H20; these are the figures reported from its partner briefings
H20 = "Will It Run AI, NVIDIA H20 96GB (willitrunai.com/gpus/h20-96gb)"
H200 = "NVIDIA H200 Tensor Core GPU data sheet (nvidia.com/en-us/data-center/h200/)"
GH200 = "NVIDIA GH200 Grace Hopper Superchip data sheet (resources.nvidia.com/en-us-grace-cpu/grace-hopper-superchip)"
GH200_WP = ("NVIDIA Grace Hopper Superchip architecture white paper "
             "(resources.nvidia.com/en-us-grace-cpu/nvidia-grace-hopper)")
L4 = "NVIDIA L4 Tensor Core GPU data sheet (resources.nvidia.com/en-us-data-center-overview/l4-gpu-datasheet)"
L40 = "NVIDIA L40 GPU data sheet (images.nvidia.com/content/Solutions/data-center/vgpu-L40-datasheet.pdf)"
L40S = "NVIDIA L40S GPU data sheet (resources.nvidia.com/en-us-l40s/l40s-datasheet-28413)"
RTX_A6000 = ("NVIDIA RTX A6000 data sheet "
              "(nvidia.com/content/dam/en-zz/Solutions/design-visualization/quadro-product-literature/proviz-print-nvidia-rtx-a6000-datasheet-us-nvidia-1454980-r9-web.pdf)")
RTX_6000_ADA = ("NVIDIA RTX 6000 Ada Generation data sheet "
                 "(nvidia.com/content/dam/en-zz/Solutions/design-visualization/rtx-6000/proviz-print-rtx6000-datasheet-web-2504660.pdf)")
RTX_PRO_6000 = ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition data sheet "
                 "(nvidia.com/en-us/products/workstations/professional-desktop-gpus/rtx-pro-6000/)")
RTX_PRO_6000_SERVER = ("NVIDIA RTX PRO 6000 Blackwell Server Edition "
                        "(nvidia.com/en-us/data-center/rtx-pro-6000-blackwell-server-edition/)")
BLACKWELL = "NVIDIA Blackwell architecture technical brief (resources.nvidia.com/en-us-blackwell-architecture)"
GB200 = "NVIDIA GB200 NVL72 (nvidia.com/en-us/data-center/gb200-nvl72/)"
DGX_SPARK = "NVIDIA DGX Spark (nvidia.com/en-us/products/workstations/dgx-spark/)"
H100 = "NVIDIA H100 Tensor Core GPU data sheet (resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet)"
A100_2020 = ("NVIDIA A100 Tensor Core GPU data sheet, 40GB edition "
              "(nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet.pdf)")

A100_PAGE = "NVIDIA A100 Tensor Core GPU (nvidia.com/en-us/data-center/a100/)"
H100_PAGE = "NVIDIA H100 Tensor Core GPU (nvidia.com/en-us/data-center/h100/)"
BLACKWELL_ULTRA_DS = ("NVIDIA Blackwell Ultra data sheet "
                       "(resources.nvidia.com/en-us-blackwell-architecture/blackwell-ultra-datasheet)")
RTX_PRO_6000_SERVER_DS = ("NVIDIA RTX PRO 6000 Blackwell Server Edition data sheet "
                           "(dam-cdn.nvd.orangelogic.com/AssetLink/707m1632ypg4du1fj3ci1jo3h4w1k78j.pdf)")

# ---- words several rows share --------------------------------------------------------------------------------
# A quote is the sheet's own words, trimmed to the phrase; a table row is its label then its cell, and ' … '
# joins two passages of one sheet (a starred cell and the footnote that says what the star means). A figure
# with a source and no quote is one whose sheet states it but whose exact words were not re-read.
A100_FIELDS = ("memory_GB", "memory_TBps", "tflops.fp64", "tflops.fp32", "tflops.tf32", "tflops.bf16", "tflops.fp16",
                "tflops.int8", "link_total_GBps", "pcie_gen")
A100_PAGE_FLOPS = {"tflops.fp64": "FP64 9.7 TFLOPS", "tflops.fp32": "FP32 19.5 TFLOPS",
                    "tflops.bf16": "BFLOAT16 Tensor Core 312 TFLOPS | 624 TFLOPS*",
                    "tflops.fp16": "FP16 Tensor Core 312 TFLOPS | 624 TFLOPS*",
                    "tflops.int8": "INT8 Tensor Core 624 TOPS | 1248 TOPS*",
                    "memory_GB": "GPU Memory 80GB HBM2e"}
HOPPER_Q = ("memory_GB", "memory_TBps", "tflops.fp64", "tflops.fp32", "tflops.tf32", "tflops.bf16", "tflops.fp16",
             "tflops.fp8", "tflops.int8", "pcie_gen")
PASCAL_Q = ("memory_GB", "memory_TBps", "tflops.fp64", "tflops.fp32", "tflops.fp16")
VOLTA_Q = ("memory_GB", "memory_TBps", "tflops.fp64", "tflops.fp32", "tflops.fp16")
BLACKWELL_Q = ("memory_GB", "memory_TBps", "tflops.fp64", "tflops.tf32", "tflops.bf16", "tflops.fp16", "tflops.fp8",
                "tflops.fp4", "tflops.int8")
BLACKWELL_ULTRA_LINK = {"link_total_GBps": "Fifth-Generation NVLink: 1.8 TB/s", "pcie_gen": "PCIe Gen6: 256 GB/s"}


# the GB300 column of a per-GPU table "without sparsity" (a cloud provider's reading of NVIDIA's Blackwell Ultra
# figures): the dense peaks NVIDIA's own GB300 pages print only per rack or with sparsity
VERDA_GB300 = "Verda, GB300 NVL72 architecture, per-GPU specifications (verda.com/blog/gb300-nvl72-architecture)"
