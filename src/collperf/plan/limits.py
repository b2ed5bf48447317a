"""A plan's numbers checked against the GPU they describe: --gpu-memory and --flops need a unit and must be
possible on that GPU, --memory-headroom is a share of its memory, and a preset's parameter count is not
contradicted by --params.

Why refuse rather than warn: a planner that takes `--gpu-memory 80` as 80 bytes, or 4000 TFLOP/s on an H100
(4x its data-sheet bf16 peak), ranks layouts on a number that cannot be, and nothing in the output shows it.
"""

from __future__ import annotations

import re

from collperf import units
from collperf.errors import UsageError

GIB = 2**30
MIN_GPU_MEMORY_BYTES = 1 * GIB  # no GPU that trains a transformer holds less; below is a unit mistake
_NUMBER = re.compile(r"\s*[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?\s*")


def parse_gpu_memory(text) -> float:
    """'80GiB' -> bytes. A bare number is refused (80 what?): sizes elsewhere default to bytes, and 80 bytes of
    GPU memory is never meant."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        value = float(text)  # the Python API's number is bytes, as the field's name says
    elif _NUMBER.fullmatch(str(text)):
        raise UsageError(
            f"--gpu-memory {text}: {str(text).strip()} what? give a unit, e.g. {str(text).strip()}GiB "
            "(GiB binary, GB decimal)"
        )
    else:
        value = float(units.parse_size(text))
    if value < MIN_GPU_MEMORY_BYTES:
        raise UsageError(
            f"--gpu-memory {text}: {units.format_size(value)} is less than any training GPU holds "
            "(at least 1 GiB): give the GPU's memory, e.g. --gpu-memory 80GiB"
        )
    return value


def check_gpu_memory(value_bytes: float | None, gpu_bytes: float | None, gpu_name: str) -> None:
    """--gpu-memory above the cluster's GPU: that GPU cannot hold it (choose the cluster with that GPU)."""
    if value_bytes is None or gpu_bytes is None or value_bytes <= gpu_bytes * 1.001:
        return
    raise UsageError(
        f"--gpu-memory {value_bytes / GIB:.1f} GiB is more than the {gpu_name} of this cluster holds "
        f"({gpu_bytes / GIB:.1f} GiB): choose a --cluster with a larger GPU, or a smaller --gpu-memory "
        "(less than the GPU's memory models what other processes take)"
    )


def check_flops(rate: float | None, gpu) -> None:
    """An achieved rate per GPU (model FLOP/s) above the GPU's fastest data-sheet peak (dense fp8 where the sheet
    gives one, else bf16/fp16) cannot be reached; the message names both peaks and their source."""
    if rate is None or gpu is None:
        return
    ceiling = max(gpu.peak_flops, gpu.fp8_flops or 0.0)
    if rate <= ceiling:
        return
    peaks = f"{gpu.peak_flops / 1e12:.0f} TFLOP/s dense bf16" + (
        f", {gpu.fp8_flops / 1e12:.0f} dense fp8" if gpu.fp8_flops else ""
    )
    raise UsageError(
        f"--flops {rate / 1e12:.0f}TFLOPS is {rate / gpu.peak_flops:.1f}x the {gpu.name}'s data-sheet "
        f"peak ({peaks}; {gpu.source}): an achieved rate cannot exceed it. Give what a step reaches (Llama 3 "
        "405B's pre-training: 38-43 % of the bf16 peak, Dubey et al. 2024, Table 4), e.g. --flops "
        f"{0.4 * gpu.peak_flops / 1e12:.0f}TFLOPS, or leave --flops out (the GPU's compute model)"
    )


def parse_headroom(text) -> float:
    """'10%' -> 0.10: the share of the GPU's memory a plan leaves free. A bare number is refused (10 what?)."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        fraction = float(text)  # the Python API's number is a fraction
    else:
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*%\s*", str(text))
        if _NUMBER.fullmatch(str(text)):
            raise UsageError(
                f"--memory-headroom {text}: {str(text).strip()} what? give a percentage of the GPU's "
                f"memory, e.g. {str(text).strip()}%"
            )
        if not m:
            raise UsageError(
                f"--memory-headroom {text}: expected a percentage of the GPU's memory, e.g. 10% (0% keeps nothing free)"
            )
        fraction = float(m.group(1)) / 100
    if not 0 <= fraction < 1:
        raise UsageError(f"--memory-headroom {text}: expected 0% to below 100% of the GPU's memory, e.g. 10%")
    return fraction


def check_model_flags(preset, params: float | None, layers: int | None, hidden: int | None) -> None:
    """--model PRESET with --params: the preset's count, scaled by any --layers/--hidden given (a layer holds
    about 12 h^2 parameters), must agree within 25 %; else the flags describe two different models."""
    if params is None:
        return
    lay, hid = layers or preset.layers, hidden or preset.hidden
    implied = preset.params * (lay * hid**2) / (preset.layers * preset.hidden**2)
    if abs(params - implied) <= 0.25 * implied:
        return
    shape = f"{lay} layers, hidden {hid}"
    raise UsageError(
        f"--model {preset.name} with --params {params:.3g}: the preset{' so reshaped' if layers or hidden else ''} "
        f"({shape}) has about {implied:.3g} parameters, not {params:.3g}. Drop --model to plan a custom "
        f"model of {params:.3g} parameters (its shape from --layers/--hidden or the rule), or drop --params"
    )
