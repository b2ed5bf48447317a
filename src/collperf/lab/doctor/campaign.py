"""The doctor's campaign, pure: which host groups to test, round by round, and what the outcomes say.

Stages (docs/doctor.md "The campaign"), after NVIDIA's adaptive fault isolation (screen, bisect, confirm) with
links as well as nodes:

1. alone: every host's own ranks, all hosts in one round (a rank slowed on the CPU, a dead host show here); a
   host slow alone is tested alone again beside passing hosts and accused only if slow again;
2. screen: every group (a leaf's hosts, else about sqrt(N) hosts) in one round;
3. bisect: a failing group split in halves, both tested, a failing half split again, down to two hosts;
4. confirm: each host of a failing pair with a known-good partner: fails -> that host;
5. cross: pairs across groups in one round (each group's first half with the next group's second half): a
   faulty uplink fails every pair that touches its group and no other.

Tests run in rounds of host-disjoint tests (a host runs one test at a time). `run(round) -> outcomes` is the
launcher (the testbed, torchrun, Slurm) or, for the plan, a simulation of injected faults (simulated()).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable


@dataclass(frozen=True)
class Test:
    stage: str  # alone, recheck, screen, bisect, confirm, cross
    hosts: tuple[int, ...]


@dataclass(frozen=True)
class Outcome:
    test: Test
    passed: bool
    ratio: float | None = None  # measured / expected speed; None: did not finish (dead or hung)
    dead: tuple[int, ...] = ()  # hosts that did not answer in time
    measured_s: float | None = None
    expected_s: float | None = None
    threshold: float | None = None  # the shortfall the test was allowed (its noise, at least the floor)
    repeats: int = 0


@dataclass
class Verdict:
    component: str  # host3, leaf1-uplink
    kind: str = "healthy"  # healthy, degraded, failed
    by: float = 0.0  # degraded by this fraction
    evidence: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"component": self.component, "verdict": self.kind, "degraded_by": self.by, "evidence": self.evidence}


@dataclass
class Campaign:
    hosts: int
    groups: list[list[int]]
    rounds: list[list[Outcome]] = field(default_factory=list)
    verdicts: dict[str, Verdict] = field(default_factory=dict)

    @property
    def tests(self) -> int:
        return sum(len(r) for r in self.rounds)

    def accused(self) -> list[Verdict]:
        return [v for v in self.verdicts.values() if v.kind != "healthy"]

    def to_json(self) -> dict:
        return {
            "hosts": self.hosts,
            "groups": self.groups,
            "tests": self.tests,
            "rounds": len(self.rounds),
            "components": [v.to_json() for v in self.verdicts.values()],
            "log": [
                [
                    {
                        "stage": o.test.stage,
                        "hosts": [host_name(h) for h in o.test.hosts],
                        "passed": o.passed,
                        "ratio": o.ratio,
                        "dead": [host_name(h) for h in o.dead],
                        "measured_s": o.measured_s,
                        "expected_s": o.expected_s,
                        "threshold": o.threshold,
                        "repeats": o.repeats,
                    }
                    for o in r
                ]
                for r in self.rounds
            ],
        }


Runner = Callable[[list[Test]], list[Outcome]]


def host_name(h: int) -> str:
    return f"host{h}"


def uplink_name(g: int) -> str:
    return f"leaf{g}-uplink"


def default_groups(hosts: int, leaves: int | None = None) -> list[list[int]]:
    """Hosts in `leaves` equal runs (the testbed's leaves), else about sqrt(N) groups (NVIDIA's screening)."""
    count = leaves if leaves else max(1, round(math.sqrt(hosts)))
    size = math.ceil(hosts / count)
    return [list(range(i, min(i + size, hosts))) for i in range(0, hosts, size)]


def pack(tests: list[Test]) -> list[list[Test]]:
    """Host-disjoint rounds, first fit in order."""
    rounds: list[tuple[set, list[Test]]] = []
    for t in tests:
        for used, batch in rounds:
            if not used & set(t.hosts):
                used |= set(t.hosts)
                batch.append(t)
                break
        else:
            rounds.append((set(t.hosts), [t]))
    return [batch for _, batch in rounds]


class _Doctor:
    def __init__(self, hosts: int, groups: list[list[int]], run: Runner):
        self.c = Campaign(hosts, groups)
        self.run = run
        self.bad: set[int] = set()
        self.good: set[int] = set()
        self.c.verdicts = {host_name(h): Verdict(host_name(h)) for h in range(hosts)}
        if len(groups) > 1:
            self.c.verdicts.update({uplink_name(g): Verdict(uplink_name(g)) for g in range(len(groups))})

    def stage(self, tests: list[Test]) -> list[Outcome]:
        out = []
        for batch in pack([t for t in tests if t.hosts]):
            got = self.run(batch)
            self.c.rounds.append(got)
            out += got
        return out

    def accuse(self, component: str, o: Outcome, dead: bool = False) -> None:
        v = self.c.verdicts[component]
        if dead:
            v.kind = "failed"
        elif v.kind == "healthy":
            v.kind, v.by = "degraded", max(0.0, 1.0 - (o.ratio or 0.0))
        v.evidence.append(_evidence(o))

    def alone(self) -> None:
        """Every host alone; a host slow alone is tested alone again beside hosts that passed (more of them than
        suspects, so that the round's median is a passing host's) and accused only if slow twice: one slow
        repeat window on a busy box is not a fault (1 healthy run in 5 accused a host without this). A host that
        did not answer is named at once."""
        slow, passed = {}, []
        for o in self.stage([Test("alone", (h,)) for h in range(self.c.hosts)]):
            h = o.test.hosts[0]
            if o.ratio is None:
                self.bad.add(h)
                self.accuse(host_name(h), o, dead=True)
            elif o.passed:
                passed.append(h)
            else:
                slow[h] = o
        if not slow:
            return
        references = passed[: len(slow) + 1]
        for o in self.stage([Test("recheck", (h,)) for h in [*slow, *references]]):
            h = o.test.hosts[0]
            if h in slow and not o.passed:
                self.bad.add(h)
                self.accuse(host_name(h), o, dead=o.ratio is None)
                self.c.verdicts[host_name(h)].evidence.insert(0, _evidence(slow[h]))
            elif h not in slow and o.ratio is None:
                self._dead(o)

    def members(self, hosts) -> tuple[int, ...]:
        return tuple(h for h in hosts if h not in self.bad)

    def screen(self) -> list[tuple[int, ...]]:
        failing = []
        for o in self.stage([Test("screen", self.members(g)) for g in self.c.groups if len(self.members(g)) > 1]):
            (self.good.update if o.passed else lambda _: failing.append(o.test.hosts))(o.test.hosts)
            self._dead(o)
        return failing

    def _dead(self, o: Outcome) -> None:
        for h in o.dead:
            if h not in self.bad:
                self.bad.add(h)
                self.accuse(host_name(h), o, dead=True)

    def bisect(self, failing: list[tuple[int, ...]]) -> list[int]:
        suspects: list[int] = []
        while failing:
            tests = []
            for s in failing:
                s = self.members(s)
                if len(s) <= 2:
                    suspects += s
                    continue
                half = len(s) // 2
                tests += [Test("bisect", s[:half]), Test("bisect", s[half:])]
            failing = []
            by_parent: dict = {}
            for o in self.stage(tests):
                self._dead(o)
                (self.good.update if o.passed else lambda _: failing.append(o.test.hosts))(o.test.hosts)
                by_parent.setdefault(o.test.hosts, o)
            for a, b in zip(tests[::2], tests[1::2]):  # both halves passed: the whole fails only together
                if by_parent[a.hosts].passed and by_parent[b.hosts].passed:
                    suspects += a.hosts + b.hosts
        return [h for h in dict.fromkeys(suspects) if h not in self.bad]

    def confirm(self, suspects: list[int]) -> None:
        partners = sorted(self.good - set(suspects))
        tests = (
            [Test("confirm", (h, partners[i % len(partners)])) for i, h in enumerate(suspects)]
            if partners
            else [Test("confirm", tuple(suspects))]
        )
        for o in self.stage(tests):
            self._dead(o)
            if not o.passed and partners:
                self.accuse(host_name(o.test.hosts[0]), o)
                self.bad.add(o.test.hosts[0])

    def cross(self) -> None:
        """Every group's hosts split in halves: the first half of group i paired with the second half of group
        i+1 (cyclically), all in one round, so that every uplink carries one flow per host of its leaf each way
        (as loaded as it can be) and each test crosses two of them. A faulty uplink of group g fails every test
        that touches g and no other: g is named when every test touching it failed. With two groups every test
        touches both, and both are named (their uplinks are in series on every path between them)."""
        groups = [i for i, g in enumerate(self.c.groups) if self.members(g)]
        if len(groups) < 2:
            return
        halves = {}
        for g in groups:
            m = self.members(self.c.groups[g])
            cut = (len(m) + 1) // 2
            halves[g] = (m[:cut], m[cut:] or m[:cut])
        tests = []
        for i, g in enumerate(groups):
            nxt = groups[(i + 1) % len(groups)]
            tests += [Test("cross", (a, b)) for a, b in zip(halves[g][0], halves[nxt][1])]
        got = self.stage(tests)
        for o in got:
            self._dead(o)
        touching = {g: [o for o in got if set(o.test.hosts) & set(self.c.groups[g])] for g in groups}
        for g in groups:
            if touching[g] and all(not o.passed and o.ratio is not None for o in touching[g]):
                worst = min(touching[g], key=lambda o: o.ratio)
                self.accuse(uplink_name(g), worst)
                v = self.c.verdicts[uplink_name(g)]
                v.evidence += [_evidence(o) for o in touching[g] if o is not worst]
                if len(groups) == 2:
                    v.evidence.append(
                        "two groups only: both uplinks are on every path between them, so both are "
                        "named (a third group tells them apart)"
                    )

    def campaign(self) -> Campaign:
        self.alone()
        suspects = self.bisect(self.screen())
        if suspects:
            self.confirm(suspects)
        self.cross()
        return self.c


def adaptive(hosts: int, groups: list[list[int]], run: Runner) -> Campaign:
    """Screen, bisect, confirm, cross: the doctor's campaign, with `run` running each round."""
    return _Doctor(hosts, groups, run).campaign()


def _evidence(o: Outcome) -> str:
    who = "+".join(host_name(h) for h in o.test.hosts)
    if o.ratio is None:
        dead = ", ".join(host_name(h) for h in o.dead) or "a host"
        return f"{o.test.stage} {who}: did not finish ({dead} did not answer)"
    if o.measured_s is not None and o.expected_s is not None:
        return (
            f"{o.test.stage} {who}: {o.measured_s * 1e3:.3g} ms against {o.expected_s * 1e3:.3g} ms expected "
            f"({o.ratio:.2f}x the expected speed)"
        )
    return f"{o.test.stage} {who}: {o.ratio:.2f}x the expected speed"
