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

from collperf.errors import RunError

CONFIDENCE = 0.90   # two-sided: each bound is wrong at most 5 % of the time


@dataclass(frozen=True)
class PairedRatio:
    """median of a / b over the rounds, `low` and `high` its bounds at `confidence`, from `rounds` rounds."""

    median: float
    low: float
    high: float
    rounds: int
    confidence: float = CONFIDENCE

    def to_json(self) -> dict:
        return {"median": self.median, "low": self.low, "high": self.high, "rounds": self.rounds,
                "confidence": self.confidence}


def bound_rank(rounds: int, confidence: float = CONFIDENCE) -> int:
    """The 1-based order statistic k such that [x_(k), x_(n+1-k)] covers the median with probability at least
    `confidence`: the largest k with P(Binomial(n, 1/2) <= k - 1) <= (1 - confidence) / 2. 1 (the extremes)
    when n is too small for the confidence: the extremes are then all there is."""
    if rounds < 1:
        raise RunError(f"a paired ratio needs at least one round (got {rounds})")
    tail, k, below = (1 - confidence) / 2, 1, 0.0
    while k < (rounds + 1) // 2:
        below += math.comb(rounds, k - 1) / 2 ** rounds   # P(B <= k - 1)
        if below + math.comb(rounds, k) / 2 ** rounds > tail:
            break
        k += 1
    return k


def paired_ratio(a_s, b_s, confidence: float = CONFIDENCE) -> PairedRatio:
    """The median of a[i] / b[i] over the rounds i with its order-statistic bounds (both lists in seconds)."""
    a, b = np.asarray(a_s, dtype=float), np.asarray(b_s, dtype=float)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0 or not ((a > 0) & (b > 0)).all():
        raise RunError(f"a paired ratio needs paired positive times (got {a.tolist()}, {b.tolist()})")
    ratios = np.sort(a / b)
    k = bound_rank(ratios.size, confidence)
    return PairedRatio(float(np.median(ratios)), float(ratios[k - 1]), float(ratios[ratios.size - k]), int(ratios.size),
                       confidence)
