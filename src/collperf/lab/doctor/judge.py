"""A round's measured tests judged against the model, whoever ran them (the testbed's namespaces, a torchrun or
Slurm world): pure, no I/O.

- a test of k >= 2 hosts is expected at the model's time for the round (contention.round_times_s: tests that
  share a link priced together) over the box's efficiency: simulated / measured time of the fastest group of
  the first round with groups (the screen: a fault slows the groups that hold it, never all of them);
- a host alone (its own ranks: a local reduction, or an allreduce over its local GPUs) is expected at the
  median of the round's hosts alone (hosts are alike; the model prices one rank as no traffic), its fastest
  repeat (hosts that share cores: the fastest is when it had one), held to their spread;
- tests of the cross stage across the same groups share the links between them on purpose, and TCP shares a
  link unevenly: they are judged together, the sum of their speeds against the expected sum, held to the
  screen round's noise;
- the threshold: max(FLOOR, NOISE_K x the noise), the noise the robust spread of the test's repeats (1.4826 x
  the median absolute deviation, over the median); a test passes when its speed is at least 1 - threshold of
  the expected. A test that did not finish fails, naming the hosts whose ranks died.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Callable

from collperf.lab.doctor.campaign import Outcome, Test

FLOOR = 0.05  # SuperBench's data-diagnosis rules fail a metric 5 % below its baseline
NOISE_K = 3.0  # threshold = max(FLOOR, NOISE_K x noise)


@dataclass
class Measured:
    hosts: tuple[int, ...]
    times_s: list[float] = field(default_factory=list)
    dead: tuple[int, ...] = ()
    error: str = ""

    @property
    def median_s(self) -> float:
        return statistics.median(self.times_s)

    @property
    def noise(self) -> float:
        return robust_spread(self.times_s)


def robust_spread(values: list[float]) -> float:
    """1.4826 x the median absolute deviation over the median (the standard deviation for normal noise)."""
    if not values:
        return 0.0
    m = statistics.median(values)
    return 1.4826 * statistics.median(abs(v - m) for v in values) / m if m > 0 else 0.0


class Judge:
    """Judges rounds in turn: it keeps the box's efficiency and noise from the first round with groups.
    `round_s(ordered tests) -> model times` prices a round (0.0 for a host alone); `group_of(host)` is the
    host's screening group (its leaf)."""

    def __init__(self, round_s: Callable[[list[tuple[int, ...]]], list[float]], group_of: Callable[[int], int]):
        self.round_s, self.group_of = round_s, group_of
        self.efficiency: float | None = None  # simulated / measured time of a healthy group on this box
        self.box_noise: float | None = None  # the median noise of that round's tests

    def __call__(self, batch: list[Test], ordered: list[tuple[int, ...]], measured: list[Measured]) -> list[Outcome]:
        model = self.round_s(ordered)
        alone = [min(m.times_s) for h, m in zip(ordered, measured) if len(h) == 1 and m.times_s]
        fleet = statistics.median(alone) if alone else None
        spread = robust_spread(alone)
        grouped = [(s, m) for h, s, m in zip(ordered, model, measured) if len(h) > 1 and m.times_s and s > 0]
        if self.efficiency is None and grouped:
            self.efficiency = max(s / m.median_s for s, m in grouped)
            self.box_noise = statistics.median(m.noise for _, m in grouped)
        pooled = self._pooled(batch, ordered, model, measured)
        out = []
        for i, (t, hosts, m) in enumerate(zip(batch, ordered, measured)):
            if not m.times_s:
                out.append(Outcome(t, False, None, m.dead))
                continue
            if len(hosts) == 1:  # against the other hosts alone, held to their spread
                expected = fleet
                ratio, threshold = fleet / min(m.times_s), max(FLOOR, NOISE_K * spread)
            else:
                expected = model[i] / (self.efficiency or 1.0)
                if i in pooled:  # held to the box's noise (the screen's): the pool's own is the unfairness
                    ratio, threshold = pooled[i], max(FLOOR, NOISE_K * (self.box_noise or 0.0))
                else:
                    ratio, threshold = expected / m.median_s, max(FLOOR, NOISE_K * m.noise)
            out.append(Outcome(t, ratio >= 1 - threshold, ratio, (), m.median_s, expected, threshold, len(m.times_s)))
        return out

    def _pooled(self, batch, ordered, model, measured) -> dict[int, float]:
        """The cross stage's tests across the same groups: one ratio, their summed speed over the expected sum."""
        shared: dict = {}
        for i, hosts in enumerate(ordered):
            groups = frozenset(self.group_of(h) for h in hosts)
            if batch[i].stage == "cross" and len(groups) > 1 and measured[i].times_s and model[i] > 0:
                shared.setdefault(groups, []).append(i)
        pooled = {}
        for members in shared.values():
            got = sum(1 / measured[i].median_s for i in members)
            want = sum((self.efficiency or 1.0) / model[i] for i in members) if self.efficiency else got
            pooled.update(dict.fromkeys(members, got / want))
        return pooled
