"""Calls timed side by side in rounds: the one loop of runtime/measure.py head_to_head and runtime/auto/confirm.py.

A round runs every call once, each after a barrier, and times only the call (the barrier's own wait and
skew stay outside the clock). The order reverses every other round, so that no call always goes first
after the barrier nor always follows the same call. How many rounds: at least the asked number, more for
short calls up to a time budget, because short calls are the noisiest (on 2 shared cores a 1 MiB
allreduce took 0.7 to 9 ms; at 64 MiB the spread was 10 %), decided from the warm-up's round time so that
every rank runs the same count. The barrier, the clock, the device sync and the agreement over ranks are
given, so that tests can check the loop with fakes.
"""

from __future__ import annotations

import math
from typing import Callable, Hashable, Sequence

# The time budget's cap. 1 MiB on loopback takes ~1 ms a call, so a 1 s budget asks ~1000 rounds, more than
# the bounds need: at 301 rounds the 90 % sign-test bounds (model/auto/paired_ratio.py) are the 136th and 166th
# ratios, the middle 10 % of them; 401 rounds would narrow that only to 8.5 % for a third more time. Odd, so
# that the median is one round's ratio.
MAX_ROUNDS = 301


def order_of(names: Sequence[str], round_index: int) -> list[str]:
    """The order of round `round_index`: as given in even rounds, reversed in odd ones."""
    return list(names) if round_index % 2 == 0 else list(names)[::-1]


def rounds_for(min_rounds: int, min_time_s: float, round_s: float, max_rounds: int = MAX_ROUNDS) -> int:
    """min_rounds, or as many rounds as fill min_time_s at round_s each (a warm-up round's time), capped at
    max_rounds (never below min_rounds)."""
    if min_time_s <= 0 or round_s <= 0:
        return min_rounds
    return max(min_rounds, min(max_rounds, math.ceil(min_time_s / round_s)))


def timed_round(
    names: Sequence[Hashable],
    round_index: int,
    calls: dict[Hashable, Callable[[], None]],
    barrier: Callable[[], None],
    clock: Callable[[], float],
    sync: Callable[[], None],
) -> dict[Hashable, float]:
    """Seconds of each call in one round: barrier, then clock, call, sync, clock, per name in the round's order."""
    times = {}
    for name in order_of(names, round_index):
        barrier()
        t0 = clock()
        calls[name]()
        sync()
        times[name] = clock() - t0
    return times


def run_rounds(
    names: Sequence[Hashable],
    step: Callable[[int], dict],
    warmup: int,
    min_rounds: int,
    min_time_s: float,
    slowest_over_ranks: Callable[[float], float],
    after_timed: Callable[[], None] = lambda: None,
) -> dict[Hashable, list[float]]:
    """Each name's seconds per timed round: `warmup` untimed rounds, then at least `min_rounds` timed ones,
    more where short calls fill `min_time_s` per name (rounds_for). The round time that sets the count is
    the last warm-up round's (the first ones pay for connections and first use), the slowest over the
    ranks (`slowest_over_ranks`, called once on every rank, so that all run the same count). Without a
    warm-up, a time budget is set from round 0, which is then also kept as the first timed round.
    `step(i)`: round i's {name: seconds} (timed_round); `after_timed`: called after each timed round."""
    samples = {name: [] for name in names}
    last_round_s, first = 0.0, warmup
    for i in range(warmup):
        last_round_s = sum(step(i).values())
    if warmup == 0 and min_time_s > 0:  # nothing else to time the rounds by
        for name, t in step(0).items():
            samples[name].append(t)
        last_round_s, first = sum(samples[name][0] for name in names), 1
        after_timed()
    slowest_round_s = slowest_over_ranks(last_round_s)
    count = rounds_for(min_rounds, min_time_s * len(names), slowest_round_s)
    for i in range(first, warmup + count):
        for name, t in step(i).items():
            samples[name].append(t)
        after_timed()
    return samples
