"""Calls timed side by side in rounds: the one loop of runtime/measure.py head_to_head and runtime/confirm.py.

A round runs every call once, each after a barrier, and times only the call (the barrier's own wait and
skew stay outside the clock). The order reverses every other round, so that no call always goes first
after the barrier nor always follows the same call. How many rounds: at least the asked number, more for
short calls up to a time budget, because short calls are the noisiest (on 2 shared cores a 1 MiB
allreduce took 0.7 to 9 ms; at 64 MiB the spread was 10 %), decided from the warm-up's round time so that
every rank runs the same count. The barrier, the clock and the device sync are given, so that tests can
check the loop with fakes.
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

MAX_ROUNDS = 301   # the time budget's cap: 1 MiB on loopback takes ~1 ms a call


def order_of(names: Sequence[str], round_index: int) -> list[str]:
    """The order of round `round_index`: as given in even rounds, reversed in odd ones."""
    return list(names) if round_index % 2 == 0 else list(names)[::-1]


def rounds_for(min_rounds: int, min_time_s: float, round_s: float, max_rounds: int = MAX_ROUNDS) -> int:
    """min_rounds, or as many rounds as fill min_time_s at round_s each (a warm-up round's time), capped at
    max_rounds (never below min_rounds)."""
    if min_time_s <= 0 or round_s <= 0:
        return min_rounds
    return max(min_rounds, min(max_rounds, math.ceil(min_time_s / round_s)))


def timed_round(names: Sequence[str], round_index: int, calls: dict[str, Callable[[], None]],
                barrier: Callable[[], None], clock: Callable[[], float], sync: Callable[[], None]) -> dict[str, float]:
    """Seconds of each call in one round: barrier, then clock, call, sync, clock, per name in the round's order."""
    times = {}
    for name in order_of(names, round_index):
        barrier()
        t0 = clock()
        calls[name]()
        sync()
        times[name] = clock() - t0
    return times
