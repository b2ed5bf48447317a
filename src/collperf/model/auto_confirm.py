"""-A auto confirms a close call by measurement: ours runs only where it was measured faster than the built-in.

The model picks among our schedules and the built-in from a quick calibration (model/select.py
auto_choices). A calibration on a busy machine is noisy, and a schedule of ours predicted a little faster
than the built-in can run at half its speed. So where auto's pick is ours, the built-in is a candidate and
the model's margin is not decisive (ours predicted less than DECISIVE_MARGIN times faster), both are timed
on the actual size, interleaved, and ours is kept only if its median is MEASURED_MARGIN times faster;
otherwise the built-in runs. The decision is cached per (group, collective, root, size octave, algorithm,
segments), like the link calibration, so a sweep or a training loop measures each octave once.

Pure: the timing is a callable the caller gives (runtime/confirm.py times real ranks; tests give a fake).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Callable

from collperf.model.algorithms.modes import is_runtime_only
from collperf.model.builtin_cost import BUILTIN
from collperf.model.select import AutoChoice

DECISIVE_MARGIN = 4.0    # ours predicted >= 4x faster than the built-in's fit: the model decides alone
MEASURED_MARGIN = 1.05   # ours must measure >= 5 % faster (median of interleaved runs) to replace the built-in

# measure(algorithm, segments, size_bytes) -> (our median time in s, the built-in's median time in s)
Measure = Callable[[str, "int | None", int], "tuple[float, float]"]


def needs_confirmation(choice: AutoChoice) -> bool:
    """True where the model picked ours over a priced built-in by less than DECISIVE_MARGIN."""
    if choice.builtin_s is None or is_runtime_only(choice.algorithm):
        return False
    return choice.builtin_s < DECISIVE_MARGIN * choice.predicted_s


def octave(size_bytes: int) -> int:
    """The size's octave (floor of log2): sizes 1 MiB .. 2 MiB - 1 share one cached decision."""
    return int(math.floor(math.log2(max(int(size_bytes), 1))))


def confirm(choices: list[AutoChoice], measure: Measure, cache: dict, key: tuple = ()) -> list[AutoChoice]:
    """`choices` with every close call decided by `measure` (once per cache key; `key` names the group,
    collective and root). A rejected pick becomes the built-in, priced by its fit; both say decided_by
    "measured" and carry what was measured (a cached decision: the timing of the size that made it)."""
    out = []
    for c in choices:
        if not needs_confirmation(c):
            out.append(c)
            continue
        slot = (*key, octave(c.size_bytes), c.algorithm, c.segments)
        if slot not in cache:
            ours_s, builtin_s = measure(c.algorithm, c.segments, c.size_bytes)
            cache[slot] = {"size": c.size_bytes, "algorithm": c.algorithm, "ours_us": ours_s * 1e6,
                           "builtin_us": builtin_s * 1e6}
        seen = cache[slot]
        if seen["ours_us"] * MEASURED_MARGIN <= seen["builtin_us"]:
            out.append(replace(c, decided_by="measured", measured=dict(seen)))
        else:
            out.append(AutoChoice(c.size_bytes, BUILTIN, c.builtin_s, None, c.builtin_s, "measured", dict(seen)))
    return out
