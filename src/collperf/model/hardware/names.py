"""The names tools print for a GPU, resolved to one part of the table: nvidia-smi ('NVIDIA H100 80GB HBM3'),
nccl-tests device lines, Kineto's deviceProperties ('NVIDIA A100-PG509-200'), rocm-smi ('AMD Instinct MI250X'),
a user's --gpu ('H100 PCIe', 'v100-pcie', '4090').

A name is normalized (upper case; '-', '_' and '/' as spaces; runs of spaces as one), then every row's
patterns (parts.py GPU.names) are searched in it; the row whose pattern matches the longest stretch of the name
wins, so 'H100 PCIE' picks the PCIe card over the bare 'H100' that means the SXM part. Two rows that match
equally long are an ambiguity, reported with both (never one picked silently)."""

from __future__ import annotations

import functools
import re

from collperf.errors import UsageError, did_you_mean
from collperf.model.hardware.gpus import GPUS
from collperf.model.hardware.parts import GPU

_MAX_NAME = 200  # a device name is a few dozen characters; longer text is not a name


def normalize(text: str) -> str:
    """'NVIDIA A100-SXM4-80GB' -> 'NVIDIA A100 SXM4 80GB'."""
    return " ".join(re.sub(r"[-_/,()]+", " ", str(text)[:_MAX_NAME].upper()).split())


@functools.lru_cache(maxsize=1024)
def _matches(name: str) -> tuple[tuple[int, GPU], ...]:
    found = []
    for gpu in GPUS:
        best = 0
        for pattern in gpu.names:
            m = re.search(pattern, name)
            if m:
                best = max(best, len(m.group(0)))
        if best:
            found.append((best, gpu))
    return tuple(sorted(found, key=lambda f: -f[0]))  # cached: every table of a log names its GPU again


class AmbiguousGPU(UsageError):
    """A name two rows match equally: the user's words are not enough, and saying which would settle it."""


def find_gpu(text: str) -> GPU | None:
    """The part a name means, or None where no row matches. An equal match of two rows is a UsageError."""
    name = normalize(text)
    if not name:
        return None
    found = _matches(name)
    if not found:
        return None
    if len(found) > 1 and found[0][0] == found[1][0]:
        tied = [g.name for n, g in found if n == found[0][0]]
        raise AmbiguousGPU(
            f"GPU name {str(text)!r} could mean {' or '.join(tied)}: give the form factor or memory "
            "(e.g. 'H100 SXM', 'A100 PCIe 80GB')"
        )
    return found[0][1]


def gpu_part(text: str) -> GPU:
    """The part a name means, or a UsageError naming the text and the nearest names the table knows."""
    gpu = find_gpu(text)
    if gpu is None:
        hint = did_you_mean(text, [g.name for g in GPUS])
        raise UsageError(
            f"GPU {str(text)!r} is not in the parts table: {hint}`collperf systems --gpus` lists the "
            "GPUs collperf knows; give the link and network by flags (--gpu-link-rate, --nic-rate) "
            "for a GPU it does not"
        )
    return gpu
