"""The GPU table: every part collperf knows, one row each, each figure with its data sheet (parts.py checks a
row when this module loads). A new GPU is one row here; names.py resolves the names tools print to a row."""

from __future__ import annotations

from collperf.model.hardware.gpus_other import OTHER_GPUS
from collperf.model.hardware.parts import GPU

_H100 = "NVIDIA H100 Tensor Core GPU data sheet (resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet)"

GPUS: tuple[GPU, ...] = (
    GPU("h100-sxm5-80gb", "H100 SXM5 80GB", "nvidia", "H100", "Hopper", 90, "SXM",
        memory_GB=80, memory_TBps=3.35,
        tflops={"fp64": 34, "fp32": 67, "tf32": 494.5, "bf16": 989.5, "fp16": 989.5, "fp8": 1979},
        link="NVLink4", links=18, link_total_GBps=900, pcie_gen=5,
        names=(r"\bH100\b", r"\bH100\b.*\b(SXM\d?|HBM3)\b"),
        sources={k: _H100 for k in ("memory_GB", "memory_TBps", "tflops.fp64", "tflops.fp32", "tflops.tf32",
                                     "tflops.bf16", "tflops.fp16", "tflops.fp8", "links", "link_total_GBps",
                                     "pcie_gen")},
        quotes={"memory_GB": "GPU memory 80GB", "memory_TBps": "GPU memory bandwidth 3.35TB/s",
                "tflops.fp64": "FP64 34 teraFLOPS", "tflops.fp32": "FP32 67 teraFLOPS",
                "tflops.tf32": "TF32 Tensor Core 989 teraFLOPS (with sparsity)",
                "tflops.bf16": "BFLOAT16 Tensor Core 1,979 teraFLOPS (with sparsity)",
                "tflops.fp16": "FP16 Tensor Core 1,979 teraFLOPS (with sparsity)",
                "tflops.fp8": "FP8 Tensor Core 3,958 teraFLOPS (with sparsity)",
                "link_total_GBps": "NVIDIA NVLink: 900GB/s", "pcie_gen": "PCIe Gen5: 128GB/s"}),
) + OTHER_GPUS

BY_KEY: dict[str, GPU] = {g.key: g for g in GPUS}
