"""The sizes where NCCL's choice of (algorithm, protocol) changes on a System: its switch points.

NCCL prices every enabled (algorithm, protocol) as lat + nBytes / (1000 bw x correction) and takes the argmin
(NCCL 2.30.7 src/graph/tuning.cc ncclTopoGetAlgoTime, src/enqueue.cc topoGetAlgoInfo; expected.select here).
The correction is a step function of log2(nBytes / 64) (the tree correction: steps at 64 x 2^k bytes) and the
ring's latency steps up once nBytes / (nChannels x nRanks) reaches 64 (the "plateau"). Between those steps every
entry's time is a straight line in the size, so the choice, the lowest of the lines, takes each entry over one
interval at most. A grid holding every step, refined by bisection between grid points that disagree (both halves
again wherever the middle differs from an end), therefore finds every switch, exact to the byte.

AlltoAll and send/recv have no tuning table in NCCL (point-to-point): one choice, p2p/Simple, throughout.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from collperf.collectives import get_collective
from collperf.errors import UsageError
from collperf.model.nccl import constants as C
from collperf.model.nccl.channels import comm_channels
from collperf.model.nccl.expected import select
from collperf.model.nccl.tuning import TuningTable, tuning_table
from collperf.model.hardware.system import System

P2P_CHOICE = "p2p/Simple"
_TREE_CORRECTION_STEPS = 24  # tuning.cc corrects log2(nBytes / 64) < 23 (tree), < 24 (NVLS-tree)


@dataclass(frozen=True)
class ChoiceRange:
    """One choice of NCCL's over [from_bytes, to_bytes): `choice` is 'algorithm/protocol'; to_bytes is the next
    switch, or the range's end (inclusive) for the last."""

    choice: str
    from_bytes: int
    to_bytes: int

    @property
    def algorithm(self) -> str:
        return self.choice.split("/")[0]

    @property
    def protocol(self) -> str:
        return self.choice.split("/")[1]


@dataclass(frozen=True)
class Switch:
    """NCCL's choice changes at size_bytes: `before` up to size_bytes - 1, `after` from size_bytes. The model
    times of both (NCCL's lat + size / bw, no launch overhead) at the switch's last byte before and at it."""

    size_bytes: int
    before: str
    after: str
    before_time_s: float  # `before` at size_bytes - 1
    after_time_s: float  # `after` at size_bytes
    step: str = ""  # where a step of NCCL's model (not two lines crossing) makes the switch: which


@dataclass(frozen=True)
class SwitchPoints:
    collective: str
    ranks: int
    nodes: int
    min_bytes: int
    max_bytes: int
    ranges: list[ChoiceRange]  # ChoiceRange, in size order, covering min_bytes..max_bytes
    switches: list[Switch]  # Switch, in size order
    p2p: bool = False  # alltoall / sendrecv: no tuning table, one choice


def _steps(system: System, table: TuningTable, lo: int, hi: int) -> dict[int, str]:
    """The sizes within (lo, hi] where a line's intercept or slope steps (see the module's note), each with what
    steps there."""
    steps = {64 << k: f"tree correction: log2(size / 64) = {k}" for k in range(_TREE_CORRECTION_STEPS + 1)}
    if table.collective == "allreduce" and system.nodes > 1:  # the ring plateau (tuning.cc:647-648)
        steps[64 * comm_channels(system, table.graphs) * system.ranks] = "ring plateau: size / (channels x ranks) = 64"
    return {size: why for size, why in steps.items() if lo < size <= hi}


def switch_points(
    collective: str, system: System, min_bytes: int = 1, max_bytes: int = 16 << 30, points_per_octave: int = 8
) -> SwitchPoints:
    """Every size in [min_bytes, max_bytes] where NCCL's (algorithm, protocol) changes on `system`, exact to the
    byte for NCCL's model (select); the ranges between them with their choice."""
    name = get_collective(collective).name
    lo, hi = int(min_bytes), int(max_bytes)
    if not 0 <= lo < hi:
        raise UsageError(f"size range {min_bytes}..{max_bytes}: expected 0 <= min < max, e.g. --min 1 --max 16G")
    if name not in C.FUNCTIONS:
        # point-to-point: NCCL runs send/recv, with no algorithm or protocol to choose (expected.p2p_time)
        return SwitchPoints(name, system.ranks, system.nodes, lo, hi, [ChoiceRange(P2P_CHOICE, lo, hi)], [], True)
    table = tuning_table(name, system)

    def choice(n: npt.ArrayLike) -> list[str]:
        return select(name, np.asarray(n, dtype=float), system, table).choice

    octaves = np.log2(max(hi, 2) / max(lo, 1))
    grid = np.round(np.geomspace(max(lo, 1), hi, int(octaves * points_per_octave) + 2)).astype(np.int64)
    steps = _steps(system, table, lo, hi)
    grid = np.unique(np.concatenate([[lo, hi], grid, list(steps), [s - 1 for s in steps]]))
    picks = choice(grid)
    found: list[tuple[int, str, str]] = []

    def refine(a: int, b: int, ca: str, cb: str) -> None:
        # the choice is ca at a and cb at b (a < b): the switches between them, in order
        while b - a > 1:
            mid = (a + b) // 2
            cm = choice([mid])[0]
            if cm == ca:
                a = mid
            elif cm == cb:
                b = mid
            else:  # a third choice in between: each half holds switches
                refine(a, mid, ca, cm)
                a, ca = mid, cm
        found.append((b, ca, cb))

    for i in np.nonzero(np.array(picks[1:]) != np.array(picks[:-1]))[0]:
        refine(int(grid[i]), int(grid[i + 1]), picks[i], picks[i + 1])
    found.sort()
    switches = []
    for size, before, after in found:
        prev, at = select(name, np.array([size - 1, size], dtype=float), system, table).time_s
        switches.append(Switch(size, before, after, float(prev), float(at), steps.get(size, "")))
    edges = [lo] + [s.size_bytes for s in switches] + [hi]
    names = [picks[0]] + [s.after for s in switches]
    ranges = [ChoiceRange(c, edges[j], edges[j + 1]) for j, c in enumerate(names)]
    return SwitchPoints(name, system.ranks, system.nodes, lo, hi, ranges, switches)
