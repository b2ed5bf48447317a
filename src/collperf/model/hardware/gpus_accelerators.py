"""The GPU table's rows for AMD Instinct accelerators (MI50 to MI355X) and AWS Trainium: the same shape as gpus.py's
data-centre NVIDIA rows, each figure with its data sheet (quotes as gpus_other.py's docstring says).

compute_capability of AMD parts is the NCCL table row RCCL reads: RCCL keeps NCCL's tuning tables and indexes
them as NCCL does, so CDNA 3 stands in as Hopper (90), CDNA1/2 as Ampere (80), GCN (MI50, MI60) as Volta
(70); collperf's catalogue prices CDNA 4 (MI350X, MI355X) on NCCL's newest tuning row, Blackwell (100). AWS Neuron
has no NCCL table: Trainium rows carry 70 as the catalogue's trn1 system does (a stand-in).
"""

from __future__ import annotations

from collperf.model.hardware.parts import GPU, sourced as _src

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

ACCELERATORS: tuple[GPU, ...] = INSTINCT + TRAINIUM
