"""The calibration table and the peers, read from the committed data file (collperf/data/calibration.json,
written by benchmarks/calibrate_corpus.py from the corpus of public runs), and the peers of a run:
public healthy runs of the same GPU, fabric class, layout and collective, with their busbw at a size.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import numpy as np

from collperf import units
from collperf.model.hardware.system import System
from collperf.model.hardware.catalogue import gpu_family

DATA_FILE = "calibration.json"


@functools.lru_cache(maxsize=1)
def calibration() -> dict[str, Any]:
    """{'bands': {fabric: {regime: stats}}, 'peers': [run, ...], ...}; empty tables when the file is absent."""
    try:
        text = resources.files("collperf").joinpath("data", DATA_FILE).read_text()
    except (FileNotFoundError, ModuleNotFoundError, OSError):
        return {"bands": {}, "peers": []}
    doc: dict[str, Any] = json.loads(text)
    return doc


@dataclass
class Peers:
    """Public runs like this one at one size: their busbw range and sources."""

    size: int
    busbw_GBps: list[float] = field(default_factory=list)
    runs: list[dict[str, Any]] = field(
        default_factory=list
    )  # id, source_url, system, nic, size_bytes, busbw_GBps there,
    # from_sizes_bytes (the measured rows it is read from)
    like: str = ""  # what "like this one" meant
    yours_busbw_GBps: float | None = None

    def describe(self) -> str:
        if not self.runs:
            return f"no public runs on {self.like} in the corpus to compare with"
        yours = f"; yours: {_busbw(self.yours_busbw_GBps)} GB/s" if self.yours_busbw_GBps is not None else ""
        nics = sorted({_nics(r.get("nic", "")) for r in self.runs} - {""})
        theirs = f"; their NICs per node: {', '.join(nics)}" if nics else ""
        return (
            f"public runs on {self.like} reach {self._reach()} "
            f"({len(self.runs)} run{'s' if len(self.runs) != 1 else ''}{theirs}){yours}"
        )

    def _reach(self) -> str:
        """'441-449 GB/s busbw at 1 GiB', and apart the runs whose sweep stops short of this size, at the
        size they measured ('31.7 GB/s at 2 MiB, the nearest size 1 of them measured')."""
        parts: list[str] = []
        for at in sorted({r["size_bytes"] for r in self.runs}, key=lambda x: (x != self.size, x)):
            bus = [r["busbw_GBps"] for r in self.runs if r["size_bytes"] == at]
            lo, hi = _busbw(min(bus)), _busbw(max(bus))
            reach = f"{lo} GB/s" if lo == hi else f"{lo}-{hi} GB/s"
            where = (
                f"at {units.format_size(at)}"
                if at == self.size
                else f"at {units.format_size(at)}, the nearest size {len(bus)} of them measured"
            )
            parts.append(f"{reach} busbw {where}" if not parts else f"{reach} {where}")
        return ", ".join(parts)

    @property
    def low_high(self) -> list[float]:
        """[lowest, highest] busbw of the peers ([] without any)."""
        return [min(self.busbw_GBps), max(self.busbw_GBps)] if self.busbw_GBps else []

    def to_json(self) -> dict[str, Any]:
        return {
            "size_bytes": self.size,
            "like": self.like,
            "busbw_GBps": self.low_high,
            "yours_busbw_GBps": self.yours_busbw_GBps,
            "summary": self.describe(),
            "sources": self.runs,
        }


def at_size(rows: Sequence[Sequence[float]], size: int) -> tuple[float, list[int]] | None:
    """A run's busbw at `size` and the sizes it comes from: log-log between the two rows around `size` (busbw
    follows a power law between neighbouring sizes of a sweep), the row itself at a measured size, the nearest row
    where `size` is outside the sweep by at most a factor 2 (no extrapolation: its size is named), else None."""
    sizes = np.array([s for s, _ in rows], dtype=float)
    bus = np.array([b for _, b in rows], dtype=float)
    if not sizes.size:
        return None
    order = np.argsort(sizes)
    sizes, bus = sizes[order], bus[order]
    if sizes[0] <= size <= sizes[-1]:
        hi = int(np.searchsorted(sizes, size))
        if sizes[hi] == size:
            return float(bus[hi]), [int(sizes[hi])]
        lo = hi - 1
        if bus[lo] <= 0 or bus[hi] <= 0:
            return None
        t = (np.log(size) - np.log(sizes[lo])) / (np.log(sizes[hi]) - np.log(sizes[lo]))
        return float(np.exp(np.log(bus[lo]) + t * (np.log(bus[hi]) - np.log(bus[lo])))), [
            int(sizes[lo]),
            int(sizes[hi]),
        ]
    i = 0 if size < sizes[0] else -1
    if abs(np.log2(sizes[i]) - np.log2(size)) > 1:
        return None
    return float(bus[i]), [int(sizes[i])]


def _busbw(GBps: float) -> str:
    """Whole GB/s from 100 up (446, 1210), three significant digits below (3.75 on a PCIe pair, not 4)."""
    return f"{GBps:.0f}" if GBps >= 100 else f"{GBps:.3g}"


def gpu_model(text: str) -> str:
    """The model number of a GPU name ('NVIDIA GeForce RTX 4090' -> '4090', 'H100 80GB HBM3' -> 'H100'), so that
    peers of one catalogue family (every GeForce card) are still the same card."""
    m = re.search(r"\b[A-Z]*\d{3,4}[A-Z]*\b", str(text).upper().replace("-", " "))
    return m.group(0) if m else ""


def _like(system: System, collective: str) -> str:
    nets = {
        "ib": "InfiniBand",
        "roce": "RoCE",
        "efa": "EFA",
        "tcpx": "GPUDirect-TCPX",
        "tcpxo": "GPUDirect-TCPXO",
        "socket": "sockets",
        "nvl72": "one NVL72 NVLink domain",
    }
    where = f"{system.nodes}x{system.gpus_per_node} {system.gpu}"
    fabric = system.fabric_class
    # what peers match on (GPU, layout, fabric class), not this system's NICs: a peer's own NICs are its record's
    net = f" over {nets.get(fabric, fabric)}" if system.nodes > 1 else f" ({fabric})"
    return f"{where}{net}, {collective}"


def _nics(nic: str) -> str:
    """An index's NIC field as the text says it: '8x400G-ib' -> '8x 400 Gb/s', '8x?G-ib' -> '8x (rate not stated)'."""
    m = re.match(r"(\d+)x(\d+(?:\.\d+)?|\?)G", nic or "")
    if not m:
        return ""
    return f"{m.group(1)}x " + ("(rate not stated)" if m.group(2) == "?" else f"{float(m.group(2)):g} Gb/s")


def peers(
    collective: str,
    system: System | None,
    size: int,
    yours_busbw_GBps: float | None = None,
    runs: list[dict[str, Any]] | None = None,
    exclude: str = "",
) -> Peers | None:
    """Healthy public runs of the same collective on the same GPU family, fabric class and layout (nodes x
    GPUs per node), with each one's busbw at `size` (at_size: interpolated within its sweep, else its nearest
    size within a factor 2, named)."""
    if system is None or not size:
        return None
    runs = calibration()["peers"] if runs is None else runs
    family, model = gpu_family(system), gpu_model(system.gpu)
    found = Peers(int(size), like=_like(system, collective), yours_busbw_GBps=yours_busbw_GBps)
    for run in runs:
        if (
            (run["collective"], run["family"], run["fabric"], run["nodes"], run["gpus_per_node"])
            != (collective, family, system.fabric_class, system.nodes, system.gpus_per_node)
            or run["id"] == exclude
            or (model and run.get("gpu") and gpu_model(run["gpu"]) != model)
        ):
            continue
        here = at_size(run["busbw"], int(size))
        if here is None:
            continue
        bus, measured = here
        if yours_busbw_GBps and measured == [int(size)] and abs(bus - yours_busbw_GBps) <= 1e-3 * yours_busbw_GBps:
            continue  # the same busbw at the same size: this log itself (the corpus ships it)
        bus = round(bus, 2)
        found.busbw_GBps.append(bus)
        # size_bytes: where busbw_GBps is (yours, unless the run's sweep stops short of it); from_sizes_bytes:
        # the measured rows it is read from (two when interpolated)
        found.runs.append(
            {
                "id": run["id"],
                "source_url": run["source_url"],
                "system": run["system"],
                "nic": run.get("nic", ""),
                "size_bytes": int(size) if len(measured) == 2 else measured[0],
                "busbw_GBps": bus,
                "from_sizes_bytes": measured,
            }
        )
    return found
