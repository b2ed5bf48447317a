"""-A auto confirms a close call by measurement: ours runs only where it was measured faster than the built-in.

The model picks among our schedules and the built-in from a quick calibration (model/select.py
auto_choices). A calibration on a busy machine is noisy, and a schedule of ours predicted a little faster
than the built-in can run at half its speed. So where auto's pick is ours, the built-in is a candidate and
the model's margin is not decisive (ours predicted less than DECISIVE_MARGIN times faster; by default every
pick of ours), both are timed
on the actual size, interleaved in rounds (each round runs both), and ours is kept only if it is
MEASURED_MARGIN times faster both by its median and by the median of the rounds' ratios (a round's pair
shares that moment's load, so the ratios cancel a load that drifts between rounds); otherwise the built-in runs. The decision is cached per (group, collective, root, size octave, algorithm,
segments), like the link calibration, so a sweep or a training loop measures each octave once.

Pure: the timing is a callable the caller gives (runtime/confirm.py times real ranks; tests give a fake).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Callable

import numpy as np

from collperf.errors import RunError
from collperf.model.algorithms.modes import is_runtime_only
from collperf.model.builtin_cost import BUILTIN
from collperf.model.select import AutoChoice

# ours predicted this many times faster than the built-in's fit: the model decides alone. Infinite by default:
# on a loaded machine the fit itself was off by more than 4x (4 gloo ranks, allreduce: a fitted alpha of 9.4 ms
# made mesh look 4x faster at 1 MiB, and it ran at 0.61x), so every pick of ours is timed
DECISIVE_MARGIN = math.inf
MEASURED_MARGIN = 1.10   # ours must measure >= 10 % faster to replace the built-in: a loaded machine's
                         # medians of a few rounds move by that much between two runs of one call

# measure(algorithm, segments, size_bytes) -> (our times in s, the built-in's in s), one pair per round
Measure = Callable[[str, "int | None", int], "tuple[list[float], list[float]]"]


def needs_confirmation(choice: AutoChoice, decisive_margin: float = DECISIVE_MARGIN) -> bool:
    """True where the model picked ours over a priced built-in by less than `decisive_margin`."""
    if choice.builtin_s is None or is_runtime_only(choice.algorithm):
        return False
    return choice.builtin_s < decisive_margin * choice.predicted_s


def octave(size_bytes: int) -> int:
    """The size's octave (floor of log2): sizes 1 MiB .. 2 MiB - 1 share one cached decision."""
    return int(math.floor(math.log2(max(int(size_bytes), 1))))


def summary(choice: AutoChoice, ours_s, builtin_s) -> dict:
    """What a confirmation measured: each median (us) and the median of ours / built-in over the rounds."""
    ours, theirs = np.asarray(ours_s, dtype=float), np.asarray(builtin_s, dtype=float)
    if ours.shape != theirs.shape or ours.size == 0 or not (theirs > 0).all():
        raise RunError(f"a confirmation needs paired positive times (got {ours.tolist()}, {theirs.tolist()})")
    return {"size": choice.size_bytes, "algorithm": choice.algorithm, "ours_us": float(np.median(ours)) * 1e6,
            "builtin_us": float(np.median(theirs)) * 1e6, "paired_ratio": float(np.median(ours / theirs))}


def confirm(choices: list[AutoChoice], measure: Measure, cache: dict, key: tuple = (),
            decisive_margin: float = DECISIVE_MARGIN) -> list[AutoChoice]:
    """`choices` with every close call decided by `measure` (once per cache key; `key` names the group,
    collective and root). A rejected pick becomes the built-in, priced by its fit; both say decided_by
    "measured" and carry what was measured (a cached decision: the timing of the size that made it)."""
    out = []
    for c in choices:
        if not needs_confirmation(c, decisive_margin):
            out.append(c)
            continue
        slot = (*key, octave(c.size_bytes), c.algorithm, c.segments)
        if slot not in cache:
            cache[slot] = summary(c, *measure(c.algorithm, c.segments, c.size_bytes))
        seen = cache[slot]
        if seen["ours_us"] * MEASURED_MARGIN <= seen["builtin_us"] and seen["paired_ratio"] * MEASURED_MARGIN <= 1:
            out.append(replace(c, decided_by="measured", measured=dict(seen)))
        else:
            out.append(AutoChoice(c.size_bytes, BUILTIN, c.builtin_s, None, c.builtin_s, "measured", dict(seen)))
    return out
