"""What one GPU computes: data-sheet peaks and the one fixed set of efficiency parameters per GPU.

The hardware catalogue (model/hardware/presets.py, model/hardware/catalogue.py) describes links and NICs but no compute
rates; the planner keeps them here, each with its source, keyed by the cluster preset that carries the
GPU. Nothing here is fitted to a training run: the same parameters serve every model and layout.

Peaks (dense, no sparsity):
  A100 SXM  312 TFLOP/s bf16/fp16, 2039 GB/s HBM2e    NVIDIA A100 Tensor Core GPU datasheet (80GB SXM)
  H100 SXM  989 TFLOP/s bf16, 1979 fp8, 3350 GB/s     NVIDIA H100 Tensor Core GPU datasheet (SXM5)
  H800 SXM  as H100 SXM for compute and HBM           NVIDIA H800 product brief (only NVLink/NICs differ)
  B200      2250 TFLOP/s bf16, 4500 fp8, 8000 GB/s    NVIDIA DGX B200 datasheet (per GPU)
  V100 SXM  125 TFLOP/s fp16, 900 GB/s HBM2           NVIDIA V100 datasheet (SXM2/SXM3)

Efficiencies (fractions of those peaks):
  gemm          a large bf16 GEMM through cuBLAS: about 80 % of peak on A100 (NVIDIA "Matrix
                Multiplication Background User's Guide", cuBLAS A100 figures) and about 70 % on
                H100 SXM, which throttles its clock under sustained tensor-core load (the same
                guide's H100 figures, and MLPerf Training H100 submissions)
  gemm_half     the GEMM edge (in elements) at which a GEMM runs at half of `gemm`: tiles of
                128 x 256 leave wave-quantisation and launch overhead that vanish as the edge grows
  batched       the unfused attention core: a batched GEMM with K = head dimension (64-128), which
                the same guide shows at roughly half of a square GEMM's rate
  flash         a fused (FlashAttention-2) attention core: Dao 2023, "FlashAttention-2", §4.1:
                50-73 % of A100 peak forward, lower backward; 35-50 % of H100 peak (before FA3)
  memory        achieved fraction of HBM bandwidth in element-wise kernels (STREAM-like, ~80-90 %)
"""

from __future__ import annotations

from dataclasses import dataclass

from collperf.errors import UsageError
from collperf.model.hardware.gpus import BY_KEY
from collperf.model.hardware.catalogue import get_system, gpu_family


@dataclass(frozen=True)
class GPU:
    name: str
    peak_flops: float  # dense bf16/fp16 FLOP/s
    hbm_Bps: float  # HBM bandwidth, bytes/s
    memory_bytes: float
    gemm: float = 0.80
    gemm_half: float = 96.0
    batched: float = 0.40
    flash: float = 0.55
    memory: float = 0.85
    fp8_flops: float | None = None
    source: str = ""

    def gemm_efficiency(self, m, n, k):
        """Fraction of peak one GEMM of (m x k) @ (k x n) reaches: `gemm` x e / (e + gemm_half) with e the
        smallest edge, so a GEMM with a short edge (small models, deep TP) runs below a large one."""
        edge = min(m, n, k)
        return self.gemm * edge / (edge + self.gemm_half)


GIB = 2**30
_A100 = GPU("A100 SXM", 312e12, 2039e9, 80 * GIB, gemm=0.80, flash=0.60, source="NVIDIA A100 datasheet (SXM 80GB)")
_H100 = GPU(
    "H100 SXM",
    989e12,
    3350e9,
    80 * GIB,
    gemm=0.70,
    flash=0.45,
    fp8_flops=1979e12,
    source="NVIDIA H100 datasheet (SXM5)",
)
_B200 = GPU(
    "B200", 2250e12, 8000e9, 180e9, gemm=0.70, flash=0.45, fp8_flops=4500e12, source="NVIDIA DGX B200 datasheet"
)
_V100 = GPU("V100 SXM", 125e12, 900e9, 32 * GIB, gemm=0.75, flash=0.45, source="NVIDIA V100 datasheet")

# cluster preset -> its GPU (the presets' own names; "nvlink300-400gbe" is the DGX H100 the cost-model
# chapter describes)
GPUS = {
    "dgx-a100": _A100,
    "dgx-h100": _H100,
    "dgx-b200": _B200,
    "dgx-1v": _V100,
    "dgx-2": _V100,
    "nvlink300-400gbe": _H100,
}


# The efficiencies of an architecture the parameters above were not set for: the newest set measured (Hopper's),
# on the GPU's own data-sheet peaks. Same parameters for every model and layout; none fitted to a training run.
_DEFAULT_EFFICIENCY = dict(gemm=0.70, flash=0.45)


def gpu_of_part(part) -> GPU | None:
    """A planner GPU from a part of the parts table (model/hardware/gpus.py): its data-sheet peaks (dense bf16, or
    fp16 where the sheet gives no bf16), memory and memory bandwidth, each from its sheet; None where the sheet
    prints neither peak (GB10's gives FP4 only: plan asks for --flops)."""
    if not part.flops("bf16"):
        return None
    return GPU(
        part.name,
        part.flops("bf16"),
        part.memory_Bps,
        part.memory_bytes,
        fp8_flops=part.flops("fp8"),
        source=part.sources.get("tflops.bf16") or part.sources.get("tflops.fp16", ""),
        **_DEFAULT_EFFICIENCY,
    )


def gpu_of(cluster) -> GPU | None:
    """The GPU of a cluster preset or of any catalogue system: the planner's measured parameters where it has them
    (the A100, H100, B200 and V100 systems and every system with the same GPU family), else the GPU part's
    data-sheet peaks (every catalogue entry is composed of parts), or None (a custom network: give --flops or
    --compute)."""
    name = getattr(cluster, "name", "") or ""
    if name in GPUS:
        return GPUS[name]
    try:
        system = get_system(name)
    except UsageError:
        return None
    if system.gpu_part and (part := BY_KEY.get(system.gpu_part)) is not None and part.family not in _MEASURED:
        return gpu_of_part(part)  # None where its sheet prints no bf16/fp16 peak
    known = GPUS.get(gpu_family(system))
    if known is not None:
        return known
    part = BY_KEY.get(system.gpu_part)
    return gpu_of_part(part) if part is not None and part.flops("bf16") else None


def part_of(cluster):
    """The GPU part of a cluster preset's catalogue system (None: a custom network)."""
    try:
        return BY_KEY.get(get_system(getattr(cluster, "name", "") or "").gpu_part)
    except UsageError:
        return None


# the GPU families whose planner parameters were measured (above); other parts plan on their sheets' peaks
_MEASURED = ("A100", "H100", "B200", "V100")


def require_gpu(cluster) -> GPU:
    gpu = gpu_of(cluster)
    if gpu is None:
        raise UsageError(
            f"no GPU compute rates known for cluster {getattr(cluster, 'name', '') or '(custom)'!r}: "
            f"give --flops (e.g. 400TFLOPS) or --compute (e.g. 2000ms), or a --cluster of "
            f"{', '.join(GPUS)}"
        )
    return gpu
