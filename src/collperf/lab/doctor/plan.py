"""The campaign plan: tests, rounds and wall time of exhaustive pairs, two-pass and adaptive testing for N hosts.

Counts come from running each strategy on simulated faults (every placement of one fault, and none), so the
adaptive count is the doctor's own campaign (campaign.adaptive) and not a formula beside it. The expected counts
weigh the healthy and the one-fault cases by a fault prior: each host faulty with probability `fault_rate`
(independent); two or more faults are rare at a rate near 1/N and are counted as one fault's campaign plus
their confirmation (noted, not hidden).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from collperf.lab.doctor.campaign import Outcome, Test, adaptive, default_groups


@dataclass(frozen=True)
class Fault:
    """A simulated fault: a host's network (shows in tests with other hosts), a host's own ranks (shows alone
    too), a dead host, or a group's uplink (shows in tests across groups)."""

    kind: str  # nic, rank, dead, uplink
    where: int

    def fails(self, test: Test, groups: list[list[int]]) -> bool:
        if self.kind == "uplink":
            spans = {i for i, g in enumerate(groups) if set(g) & set(test.hosts)}
            return self.where in spans and len(spans) > 1
        if self.where not in test.hosts:
            return False
        return self.kind != "nic" or len(test.hosts) > 1


def simulated(faults: list[Fault], groups: list[list[int]], slow: float = 0.5):
    """A runner that answers each test as the faults would: failed tests at `slow` x the expected speed."""

    def run(batch: list[Test]) -> list[Outcome]:
        out = []
        for t in batch:
            hit = [f for f in faults if f.fails(t, groups)]
            dead = tuple(f.where for f in hit if f.kind == "dead")
            out.append(Outcome(t, not hit, None if dead else (slow if hit else 1.0), dead))
        return out

    return run


@dataclass
class Strategy:
    name: str
    tests_healthy: int
    rounds_healthy: int
    tests_one_fault: float  # mean over every placement of one host fault
    rounds_one_fault: float
    expected_tests: float
    expected_rounds: float
    wall_s: float  # expected rounds x the time of one round
    note: str = ""

    def to_json(self) -> dict:
        return dict(vars(self))


@dataclass
class Plan:
    nodes: int
    groups: list[list[int]]
    fault_rate: float
    test_time_s: float
    strategies: list[Strategy] = field(default_factory=list)
    round_bound: int = 0  # ceil(log2 N) + 3

    def to_json(self) -> dict:
        return {
            "nodes": self.nodes,
            "groups": len(self.groups),
            "group_sizes": [len(g) for g in self.groups],
            "fault_rate": self.fault_rate,
            "test_time_s": self.test_time_s,
            "round_bound": self.round_bound,
            "strategies": [s.to_json() for s in self.strategies],
        }


def _weights(n: int, p: float) -> tuple[float, float]:
    """P(no fault), P(one or more): the prior's two cases."""
    none = (1 - p) ** n
    return none, 1 - none


def pairs_counts(n: int) -> tuple[int, int]:
    """Every pair once: C(N,2) tests in N-1 rounds of N/2 (a round-robin tournament; N rounds when N is odd)."""
    return n * (n - 1) // 2, n - 1 if n % 2 == 0 else n


def _two_pass(n: int, fault: int | None) -> tuple[int, int]:
    """Pass 1: disjoint pairs (hosts 2i, 2i+1), one round; pass 2: each host of the failing pair with a host of
    a passing pair, one round. With an odd N the last host pairs with host 0 in a second round of pass 1."""
    tests, rounds = n // 2 + n % 2, 1 + n % 2
    if fault is not None:
        tests, rounds = tests + 2, rounds + 1
    return tests, rounds


def plan(nodes: int, leaves: int | None = None, fault_rate: float | None = None, test_time_s: float = 30.0) -> Plan:
    groups = default_groups(nodes, leaves)
    p = 1.0 / nodes if fault_rate is None else fault_rate
    none, some = _weights(nodes, p)
    result = Plan(nodes, groups, p, test_time_s, round_bound=math.ceil(math.log2(max(nodes, 2))) + 3)

    healthy = adaptive(nodes, groups, simulated([], groups))
    faulty = [adaptive(nodes, groups, simulated([Fault("nic", h)], groups)) for h in range(nodes)]
    t1 = sum(c.tests for c in faulty) / nodes
    r1 = sum(len(c.rounds) for c in faulty) / nodes
    result.strategies.append(
        _strategy(
            "adaptive",
            healthy.tests,
            len(healthy.rounds),
            t1,
            r1,
            none,
            some,
            test_time_s,
            "each host alone, screen groups, bisect, confirm with a known-good partner, cross-group probe",
        )
    )
    tests, rounds = pairs_counts(nodes)
    result.strategies.append(
        _strategy(
            "exhaustive-pairs",
            tests,
            rounds,
            tests,
            rounds,
            none,
            some,
            test_time_s,
            "every pair of hosts once, N/2 pairs per round",
        )
    )
    th, rh = _two_pass(nodes, None)
    tf, rf = _two_pass(nodes, 0)
    result.strategies.append(
        _strategy(
            "two-pass",
            th,
            rh,
            tf,
            rf,
            none,
            some,
            test_time_s,
            "disjoint pairs, then each host of a failing pair with a known-good host",
        )
    )
    return result


def _strategy(name, th, rh, t1, r1, none, some, test_time_s, note) -> Strategy:
    et, er = none * th + some * t1, none * rh + some * r1
    return Strategy(name, th, rh, t1, r1, et, er, er * test_time_s, note)
