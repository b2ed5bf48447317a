"""-A auto confirms a close call by measurement: ours runs only where it was measured faster than the built-in.

The model picks among our schedules and the built-in from a quick calibration (model/auto/select.py
auto_choices). A calibration on a busy machine is noisy, and a schedule of ours predicted a little faster
than the built-in can run at half its speed. So where auto's pick is ours, the built-in is a candidate and
the model's margin is not decisive (ours predicted less than DECISIVE_MARGIN times faster; by default every
pick of ours), both are timed
on the actual size, interleaved in rounds (each round runs both), and ours is kept only if it is
MEASURED_MARGIN times faster both by its median and by the median of the rounds' ratios (a round's pair
shares that moment's load, so the ratios cancel a load that drifts between rounds), and the ratios' upper
bound (model/auto/paired_ratio.py) says it is faster at all; a close call gets more rounds before it is decided;
otherwise the built-in runs. The decision is cached per (group, collective, root, size octave, algorithm,
segments), like the link calibration, so a sweep or a training loop measures each octave once.

Pure: the timing is a callable the caller gives (runtime/auto/confirm.py times real ranks; tests give a fake).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from collperf.model.algorithms.modes import is_runtime_only
from collperf.model.auto.builtin_cost import BUILTIN
from collperf.model.auto.paired_ratio import paired_ratio
from collperf.model.auto.select import AutoChoice

# ours predicted this many times faster than the built-in's fit: the model decides alone. Infinite by default:
# on a loaded machine the fit itself was off by more than 4x (4 gloo ranks, allreduce: a fitted alpha of 9.4 ms
# made mesh look 4x faster at 1 MiB, and it ran at 0.61x), so every pick of ours is timed
DECISIVE_MARGIN = math.inf
MEASURED_MARGIN = 1.10  # ours must measure >= 10 % faster to replace the built-in: a loaded machine's
# medians of a few rounds move by that much between two runs of one call
FIRST_ROUNDS = 7  # every close call: a clear win or a clear loss is decided here
MORE_ROUNDS = 14  # an unclear one gets these too (21 in all): allgather on 2 gloo ranks at 4 MiB measured ring
# 1.1x faster in 7 rounds and 0.91x in a sweep's 21

# measure(algorithm, segments, size_bytes, rounds) -> (our times in s, the built-in's in s), one pair per round
Measure = Callable[[str, "int | None", int, int], "tuple[list[float], list[float]]"]


def needs_confirmation(choice: AutoChoice, decisive_margin: float = DECISIVE_MARGIN) -> bool:
    """True where the model picked ours over a priced built-in by less than `decisive_margin`."""
    if choice.builtin_s is None or is_runtime_only(choice.algorithm):
        return False
    return choice.builtin_s < decisive_margin * choice.predicted_s


def octave(size_bytes: int) -> int:
    """The size's octave (floor of log2): sizes 1 MiB .. 2 MiB - 1 share one cached decision."""
    return int(math.floor(math.log2(max(int(size_bytes), 1))))


def summary(choice: AutoChoice, ours_s: Sequence[float], builtin_s: Sequence[float]) -> dict[str, Any]:
    """What a confirmation of `choice` measured: its size and algorithm, and timings(ours_s, builtin_s)."""
    return {"size": choice.size_bytes, "algorithm": choice.algorithm, **timings(ours_s, builtin_s)}


def timings(ours_s: Sequence[float], builtin_s: Sequence[float]) -> dict[str, float]:
    """Two timed series, one pair per round (seconds): each median (ours_us, builtin_us), and ours / built-in
    per round (< 1: ours faster): its median (paired_ratio) and bounds (ratio_low, ratio_high;
    model/auto/paired_ratio.py) over `rounds`, the number of pairs."""
    r = paired_ratio(ours_s, builtin_s)  # checks that the times are paired and positive
    return {
        "ours_us": float(np.median(ours_s)) * 1e6,
        "builtin_us": float(np.median(builtin_s)) * 1e6,
        "paired_ratio": r.median,
        "ratio_low": r.low,
        "ratio_high": r.high,
        "rounds": r.rounds,
    }


def verdict(seen: Mapping[str, Any]) -> str:
    """The rule on timings() (or summary()). "ours": faster by the margin (both medians and the rounds' median
    ratio) and surely faster at all (the ratio's upper bound below 1: at 7 rounds, every round won);
    "builtin": short of the margin even at the ratio's lower bound; "unsure" otherwise (more rounds decide)."""
    margin = seen["ours_us"] * MEASURED_MARGIN <= seen["builtin_us"] and seen["paired_ratio"] * MEASURED_MARGIN <= 1
    if margin and seen["ratio_high"] < 1:
        return "ours"
    if seen["ratio_low"] * MEASURED_MARGIN > 1:
        return "builtin"
    return "unsure"


def timed(choice: AutoChoice, measure: Measure) -> dict[str, Any]:
    """The confirmation of one pick: FIRST_ROUNDS rounds, and MORE_ROUNDS more where they leave it unsure."""
    ours, theirs = measure(choice.algorithm, choice.segments, choice.size_bytes, FIRST_ROUNDS)
    seen = summary(choice, ours, theirs)
    if verdict(seen) == "unsure":
        more_ours, more_theirs = measure(choice.algorithm, choice.segments, choice.size_bytes, MORE_ROUNDS)
        seen = summary(choice, list(ours) + list(more_ours), list(theirs) + list(more_theirs))
    return seen


def confirm(
    choices: list[AutoChoice],
    measure: Measure,
    cache: dict[tuple[object, ...], dict[str, Any]],
    key: tuple[object, ...] = (),
    decisive_margin: float = DECISIVE_MARGIN,
) -> list[AutoChoice]:
    """`choices` with every close call decided by `measure` (once per cache key; `key` names the group,
    collective and root). Ours runs only on the verdict "ours" (an unsure call after all rounds goes to the
    built-in); where the model could not tell the pick from its runner-up, both are timed against the built-in
    and the one of the lower ratio among those that pass runs. A rejected pick becomes the built-in, priced by
    its fit; both say decided_by "measured" and carry what was measured (a cached decision: the timing of the
    size that made it; `runner_up`: the other one's algorithm and ratio)."""
    out = []
    for c in choices:
        if not needs_confirmation(c, decisive_margin):
            out.append(c)
            continue
        tried = [(c.algorithm, c.segments, c.predicted_s)] + ([c.runner_up] if c.runner_up else [])
        seen = [
            _timed_once(cache, (*key, octave(c.size_bytes), a, k), replace(c, algorithm=a, segments=k), measure)
            for a, k, _ in tried
        ]
        passed = [i for i, s in enumerate(seen) if verdict(s) == "ours"]
        i = min(passed, key=lambda j: seen[j]["paired_ratio"]) if passed else 0
        measured = dict(seen[i])
        if len(seen) > 1:
            other = seen[1 - i]
            measured["runner_up"] = {"algorithm": other["algorithm"], "paired_ratio": other["paired_ratio"]}
        if passed:
            a, k, predicted_s = tried[i]
            others = [t for j, t in enumerate(tried) if j != i]
            out.append(
                replace(
                    c,
                    algorithm=a,
                    segments=k,
                    predicted_s=predicted_s,
                    decided_by="measured",
                    measured=measured,
                    runner_up=others[0] if others else None,
                )
            )
        else:
            assert c.builtin_s is not None  # needs_confirmation: only a priced built-in is timed against
            out.append(AutoChoice(c.size_bytes, BUILTIN, c.builtin_s, None, c.builtin_s, "measured", measured))
    return out


def _timed_once(
    cache: dict[tuple[object, ...], dict[str, Any]], slot: tuple[object, ...], choice: AutoChoice, measure: Measure
) -> dict[str, Any]:
    if slot not in cache:
        cache[slot] = timed(choice, measure)
    return cache[slot]
