"""Two calls timed side by side: the median of their per-round time ratios and its distribution-free bounds.

A round times both calls back to back, so the two share that moment's load; the ratio of a round cancels a
load that drifts between rounds, where the ratio of two separately taken medians does not (on 2 shared
cores one call of 1 MiB took 0.7 to 9 ms: two medians of 21 such calls differed by 2x for one and the
same call). The bounds are order statistics of the ratios (the sign test's confidence interval for a
median): they hold whatever the distribution of the noise, heavy tails included, for rounds that are
independent. Pure: numbers in, numbers out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from collperf.errors import UsageError

# Two-sided: each bound is wrong at most 5 % of the time. 90 % rather than 95 %: the confirmation decides on
# 21 rounds at most (model/auto/confirm.py), where 95 % would widen the bounds from x_(7) .. x_(15) to
# x_(6) .. x_(16) and leave more close calls unsure; at its first 7 rounds both are the extremes.
CONFIDENCE = 0.90


@dataclass(frozen=True)
class PairedRatio:
    """median of a / b over the rounds, `low` and `high` its bounds at `confidence`, from `rounds` rounds."""

    median: float
    low: float
    high: float
    rounds: int
    confidence: float = CONFIDENCE

    def to_json(self) -> dict[str, float]:
        return {
            "median": self.median,
            "low": self.low,
            "high": self.high,
            "rounds": self.rounds,
            "confidence": self.confidence,
        }


def bound_rank(rounds: int, confidence: float = CONFIDENCE) -> int:
    """The 1-based order statistic k such that [x_(k), x_(n+1-k)] covers the median with probability at least
    `confidence`: the largest k with P(Binomial(n, 1/2) <= k - 1) <= (1 - confidence) / 2. 1 (the extremes)
    when n is too small for the confidence: the extremes are then all there is."""
    if rounds < 1:
        raise UsageError(f"a paired ratio needs at least one round (got {rounds}): time each call at least once")
    tail, k, below = (1 - confidence) / 2, 1, 0.0
    while k < (rounds + 1) // 2:
        below += math.comb(rounds, k - 1) / 2**rounds  # P(B <= k - 1)
        if below + math.comb(rounds, k) / 2**rounds > tail:
            break
        k += 1
    return k


def paired_ratio(a_s: npt.ArrayLike, b_s: npt.ArrayLike, confidence: float = CONFIDENCE) -> PairedRatio:
    """The median of a[i] / b[i] over the rounds i with its order-statistic bounds (both lists in seconds)."""
    a, b = _times(a_s, "a_s"), _times(b_s, "b_s")
    if a.size != b.size or a.size == 0:
        raise UsageError(
            f"a paired ratio needs paired times: got {a.size} and {b.size} of them; give two "
            "equally long, non-empty lists of positive seconds, one pair per round"
        )
    ratios = np.sort(a / b)
    k = bound_rank(ratios.size, confidence)
    return PairedRatio(
        float(np.median(ratios)), float(ratios[k - 1]), float(ratios[ratios.size - k]), int(ratios.size), confidence
    )


def _times(times_s: object, name: str) -> np.ndarray:
    """One list of seconds as an array; the first value that is not a positive finite number refused."""
    try:
        out = np.asarray(times_s, dtype=float)
    except (TypeError, ValueError):
        raise UsageError(
            f"{name} {times_s!r:.60}: a paired ratio needs two equally long lists of positive seconds"
        ) from None
    if out.ndim != 1:
        raise UsageError(
            f"{name} has shape {out.shape}: a paired ratio needs two equally long (flat) lists of "
            "positive seconds, one per round"
        )
    bad = np.flatnonzero(~(np.isfinite(out) & (out > 0)))
    if bad.size:
        raise UsageError(
            f"{name}[{bad[0]}] = {float(out[bad[0]])!r} is not a positive number of seconds: a paired "
            "ratio needs two equally long lists of positive seconds"
        )
    return out
