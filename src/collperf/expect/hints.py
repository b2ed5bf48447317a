"""What an input says about its hardware besides its rows, whatever the input: `Hints` (a log's table carries the
same fields; a trace builds one), the text a reader kept with its NCCL INFO lines and comment lines, and what a
person's comment lines say (a GPU and the layout, an NVLink bridge, peer-to-peer turned on, a PCIe switch)."""

from __future__ import annotations

import functools
import re
from collections.abc import Container
from dataclasses import dataclass, field
from typing import Any

from collperf.errors import UsageError
from collperf.model.hardware.compose import bridged
from collperf.model.hardware.gpus import BY_KEY
from collperf.model.hardware.names import find_gpu
from collperf.model.hardware.system import System


@dataclass(frozen=True)
class Hints:
    """What an input says about its hardware, whatever the input: a log's table carries the same fields (its
    header's GPUs and NCCL version, hosts as nodes, ranks, its text with the NCCL INFO lines and comments); a
    trace builds one from deviceProperties, distributedInfo and its hosts (trace/system.py)."""

    header: dict[str, Any] = field(default_factory=dict)  # 'gpus': [device name, ...], 'nccl_version', 'ngpus'
    nodes: int | None = None
    ranks: int | None = None
    text: str = ""
    source: str = ""


def log_text_hints(table: object) -> tuple[str, list[str]]:
    """(the log's text, its comment lines) as the reader kept them on the table ('' and [] where it kept none: a
    trace, an Inspector dump streamed line by line). The same text from a file or from memory says the same."""
    text = getattr(table, "text", "") or ""
    if not text:
        return "", []
    return text, list(_comments(text))


@functools.lru_cache(maxsize=2)
def _comments(text: str) -> tuple[str, ...]:
    head = text[: 1 << 20].splitlines()[:60]  # comments are read from the first 60 lines only
    return tuple(ln.lstrip("# ").strip() for ln in head if ln.startswith("#"))


@functools.lru_cache(maxsize=2)  # once per log, not once per table of it
def gpu_from_comments(comments: tuple[str, ...]) -> tuple[str | None, int | None, int | None, str]:
    """A GPU, node count and GPUs per node from comment lines such as '# hardware: 2 nodes x 8 NVIDIA B200 = 16
    GPUs' or '# 2x NVIDIA H100 PCIe cards with an NVLink bridge', with the line it came from: the GPU is the part
    the parts table finds in the line (model/hardware/names.py, the longest name wins), given as that part's name."""
    for line in comments:
        if "device" in line.lower():
            continue
        try:
            part = find_gpu(line)
        except UsageError:  # two parts named alike in one line: the line says no one GPU
            continue
        if part is None:
            continue
        nodes = re.search(r"(?<![\w.])(\d{1,6})\s*nodes?\b", line)  # not the digits of "A100 nodes"
        per = re.search(r"\b(\d{1,3})\s*x\s*(?:NVIDIA |AMD )?\S", line)
        return (part.name, int(nodes.group(1)) if nodes else None, int(per.group(1)) if per else None, line[:100])
    return None, None, None, ""


def bridge_values(system: System) -> dict[str, Any] | None:
    """The values of the system's PCIe cards on their NVLink bridge (compose.bridged), None where the cards already
    talk over NVLink or have none."""
    part = BY_KEY.get(system.gpu_part)
    return None if system.nvlink_links or part is None else bridged(part)


def from_comments(system: System, comments: list[str], facts: Container[str]) -> System:
    """What a person's comment lines say about the node, over the values so far, each quoting its line: PCIe cards
    joined by an NVLink bridge (nvidia-smi topo -m: NV12 between them), peer-to-peer turned on (a patched driver;
    a log's own 'via P2P/SHM' lines rule), GPUs behind one PCIe switch (topo "PIX": they share the switch's uplink
    to the CPU, which carries all their host-memory traffic when P2P is off: model/nccl/transport.py)."""
    bridge_line = next(
        (ln for ln in comments if re.search(r"NVLink bridge|NVLINK connected|\bNV\d{1,2}\b", ln, re.IGNORECASE)), None
    )
    if bridge_line and (bridge := bridge_values(system)) and system.gpus_per_node == 2:
        system = system.with_(f"from a comment line in the log ('{bridge_line[:100]}')", **bridge)
    p2p_line = next(
        (ln for ln in comments if re.search(r"(peer-to-peer|\bP2P\b)[\w ]{0,12}\b(enabled|on)\b", ln, re.IGNORECASE)),
        None,
    )
    if p2p_line and not system.nvlink_links and not system.p2p and "p2p" not in facts:
        system = system.with_(f"from a comment line in the log ('{p2p_line[:100]}')", p2p=True)
    switch_line = next((ln for ln in comments if re.search(r"\bPIX\b|PCIe switch", ln, re.IGNORECASE)), None)
    if switch_line and system.gpus_per_node > 1 and not system.nvlink_links:
        system = system.with_(f"from a comment line in the log ('{switch_line[:100]}')", pcie_switch_shared=True)
    return system
