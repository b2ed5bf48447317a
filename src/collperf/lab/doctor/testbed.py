"""The doctor's campaign on the testbed: N emulated hosts under L leaf switches and one spine, a fault injected
by the spec, each round's tests run at once as real ring allreduces over gloo (lab/doctor/probe.py).

The cluster is a routed testbed (lab/testbed/routed.py): one namespace per host, leaf and spine, one shaped
point-to-point link per host (host<h>, at `rate`) and per leaf (leaf<l>-uplink, at `uplink`, default the leaf's
hosts x rate: non-blocking). Faults, one or several, in the spec:

  slow-link=HOST:RATE     that host's link shaped to RATE instead of `rate`
  slow-uplink=LEAF:RATE   that leaf's uplink shaped to RATE
  slow-rank=HOST:DELAY    the host's rank busy on its CPU for DELAY before each repeat of every test
  kill-host=HOST:AFTER    the host's rank killed (SIGKILL) AFTER seconds into the campaign, and at the start of
                          every test after that

The doctor does not read the faults: each test's expectation is the model's, on the healthy topology (the
rates the spec asks, the routes the testbed installs), and the test's own repeats give its noise:

- a test of k >= 2 hosts: collperf's ring allreduce of `size` on them (ranks in the test's order; a test that
  spans leaves interleaves them, so that every hop of the ring crosses the spine and the uplinks carry all
  they can), timed `repeats` times after a warm-up; the expected time is the simulator's (events mode, the
  group's view of the topology) over the box's efficiency (below);
- alone (one host): a local reduction (64 MiB of adds), repeated for about a second, its fastest repeat (every
  namespace shares the box's cores: the fastest is when it had one); the hosts are alike, so the expected is
  the median over the round of the hosts' own, and the threshold max(5 %, K x their spread) (the model prices a
  one-rank group as no traffic at all);
- the box's efficiency: simulated / measured time of a healthy group on this machine (its processes, its
  network stack, the cores every namespace shares) is below 1; it is the best (fastest) ratio of the first
  round with groups, the screen: a degraded part slows the groups that hold it, never all of them, so with two
  groups or more the fastest is healthy. Pairs and leaves then run within a few % of one efficiency where the
  rates leave the box's CPUs idle enough (40 Mbit/s per host on 2 cores: pairs 0.93-0.95, leaves of 4 0.89-0.93);
  a ring of all 8 hosts does not (0.75: the spine forwards every flow), which is why the cross stage runs pairs.
- the tests of a round start timing together (probe.py: a mark per test in the round's directory, waited
  for at most BARRIER_S), so that none is timed while another's ranks still import torch, and each repeats
  until a window common to the round closes (twice the slowest test's expected repeats): tests that share a
  link (the cross pairs on the uplinks) share it for every repeat, not only until the first is done;
- the threshold: max(5 %, K x the noise), the noise the robust spread of the test's repeats (1.4826 x the
  median absolute deviation, over the median); the test passes when its speed is at least 1 - threshold of
  the expected.

A test whose ranks do not finish within its bound (a host killed, a rank hung) fails; the hosts whose ranks
were killed by a signal are named dead. Every test is bounded (startup and run timeouts of runtime/launch.py),
and the testbed is torn down whatever happens (lab/testbed/switch.py give_back: namespaces, processes).
"""

from __future__ import annotations

import math
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from collperf import units
from collperf.errors import RunError
from collperf.lab.doctor.campaign import Campaign, Outcome, Test, adaptive, host_name, uplink_name
from collperf.lab.doctor.plan import Fault, pairs_counts, simulated
from collperf.lab.doctor.testbed_spec import DoctorTestbedSpec
from collperf.lab.testbed.routed import TopologyTestbed
from collperf.model.two_level.build import build
from collperf.runtime import owned
from collperf.runtime.launch import Job, run_testbed
from collperf.simulate import simulate
from collperf.topology import Topology, subset

FLOOR = 0.05          # SuperBench's 5 % below baseline
NOISE_K = 3.0         # threshold = max(FLOOR, NOISE_K x noise)
SPINE = "spine"
ALONE_WINDOW_S = 0.1  # a host alone repeats for 2 x (repeats + 1) x this: many repeats, the fastest is its own
BARRIER_S = 60.0      # the longest a round's tests wait for each other before timing


# --- the topology ---------------------------------------------------------------------------------------

def topology(spec: DoctorTestbedSpec, faulty: bool = True):
    """Hosts 0..N-1 under leaf0..leafL-1 under one spine; with `faulty`, the spec's slowed links (the testbed
    the doctor runs on), without, the healthy one (what the doctor's model knows)."""
    import networkx as nx
    g = nx.Graph()
    for h in range(spec.hosts):
        rate = spec.rate_Bps
        if faulty and spec.slow_link and spec.slow_link[0] == h:
            rate = units.parse_bandwidth(spec.slow_link[1])
        g.add_edge(h, f"leaf{spec.leaf_of(h)}", bandwidth_Bps=rate, latency_s=0.0, name=host_name(h))
    leaves = spec.leaf_of(spec.hosts - 1) + 1
    if leaves > 1:
        for leaf in range(leaves):
            rate = spec.uplink_Bps
            if faulty and spec.slow_uplink and spec.slow_uplink[0] == leaf:
                rate = units.parse_bandwidth(spec.slow_uplink[1])
            g.add_edge(f"leaf{leaf}", SPINE, bandwidth_Bps=rate, latency_s=0.0, name=uplink_name(leaf))
    return Topology(f"leaf-spine-{spec.hosts}x{leaves}", spec.hosts, g)


def order(spec: DoctorTestbedSpec, hosts) -> tuple[int, ...]:
    """The ring's order of a test's hosts: leaves interleaved (0, 4, 1, 5, ...), so that a ring across leaves
    crosses the spine at every hop; within one leaf, as given."""
    by_leaf: dict[int, list[int]] = {}
    for h in hosts:
        by_leaf.setdefault(spec.leaf_of(h), []).append(h)
    runs = list(by_leaf.values())
    out = []
    for i in range(max(len(r) for r in runs)):
        out += [r[i] for r in runs if i < len(r)]
    return tuple(out)


# --- the runner -----------------------------------------------------------------------------------------

class _View:
    """The hosts of one test as run_testbed sees a testbed: rank i on host hosts[i]."""

    def __init__(self, bed, hosts):
        self.bed, self.members = bed, list(hosts)
        self.ifname = bed.ifname
        self.ranks_per_host = 1

    @property
    def ranks(self) -> int:
        return len(self.members)

    def host_of(self, rank: int) -> int:
        return self.members[rank]

    def host(self, h) -> str:
        return self.bed.host(h)


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
        m = self.median_s
        return 1.4826 * statistics.median(abs(t - m) for t in self.times_s) / m if m > 0 else 0.0


class TestbedRunner:
    """The campaign's runner (campaign.Runner) on an up testbed: each round's tests at once, each judged."""

    def __init__(self, spec: DoctorTestbedSpec, bed, on_round=None):
        self.spec, self.bed, self.on_round = spec, bed, on_round
        self.model = topology(spec, faulty=False)
        self.start = time.time()
        self.efficiency: float | None = None       # simulated / measured time of a healthy group on this box
        self.box_noise: float | None = None        # the median noise of that round's tests
        self._simulated: dict = {}
        self.wall_s: list[float] = []

    def simulated_s(self, hosts: tuple[int, ...]) -> float:
        if hosts not in self._simulated:
            s = build("allreduce", "ring", len(hosts))
            self._simulated[hosts] = simulate(s, subset(self.model, hosts), self.spec.size, "events").time_s
        return self._simulated[hosts]

    def _faults_for(self, hosts) -> tuple[dict, dict]:
        delay, kill = {}, {}
        for rank, h in enumerate(hosts):
            if self.spec.slow_rank and self.spec.slow_rank[0] == h:
                delay[rank] = self.spec.slow_rank[1]
            if self.spec.kill_host and self.spec.kill_host[0] == h:
                kill[rank] = self.start + self.spec.kill_host[1]
        return delay, kill

    def measure(self, hosts: tuple[int, ...], barrier: tuple | None = None, window_s: float = 0.0) -> Measured:
        delay, kill = self._faults_for(hosts)
        job = Job("collperf.lab.doctor.probe:allreduce",
                  (self.spec.size, self.spec.repeats, 1, delay, kill, barrier, window_s))
        timeout = self.spec.test_timeout_s
        if len(hosts) > 1:
            timeout = max(timeout, 20 * (self.spec.repeats + 1) * self.simulated_s(hosts))
        try:
            times = run_testbed(job, _View(self.bed, hosts), timeout_s=timeout)
        except RunError as e:
            killed = getattr(e, "killed_ranks", [])
            return Measured(hosts, dead=tuple(hosts[r] for r in killed), error=str(e))
        return Measured(hosts, [float(t) for t in times])

    def __call__(self, batch: list[Test]) -> list[Outcome]:
        started = time.monotonic()
        ordered = [order(self.spec, t.hosts) for t in batch]
        with owned.tempdir("run") as marks, ThreadPoolExecutor(max_workers=len(batch)) as pool:
            # the window: the slowest test's repeats at twice its expected time, so that all overlap throughout
            window = max((self.simulated_s(h) if len(h) > 1 else ALONE_WINDOW_S) for h in ordered) * 2 * \
                (self.spec.repeats + 1)
            measured = list(pool.map(lambda it: self.measure(it[1], (marks, it[0], len(batch), BARRIER_S), window),
                                     enumerate(ordered)))
        self.wall_s.append(time.monotonic() - started)
        out = self.judge(batch, ordered, measured)
        if self.on_round is not None:
            self.on_round(len(self.wall_s), out)
        return out

    def judge(self, batch, ordered, measured: list[Measured]) -> list[Outcome]:
        # a host alone: its fastest repeat (the CPU is shared by every namespace: the fastest is when it had a core)
        alone = [min(m.times_s) for t, m in zip(batch, measured) if len(t.hosts) == 1 and m.times_s]
        fleet = statistics.median(alone) if alone else None
        # hosts alone are alike: their spread is noise too (robust: 1.4826 x MAD over the median)
        spread = 1.4826 * statistics.median(abs(a - fleet) for a in alone) / fleet if alone and fleet else 0.0
        # the box's efficiency: the fastest group of the first round with groups (the screen, leaves alike)
        if self.efficiency is None:
            ratios = [self.simulated_s(h) / m.median_s for h, m in zip(ordered, measured) if len(h) > 1 and m.times_s]
            if ratios:
                self.efficiency = max(ratios)
                self.box_noise = statistics.median(m.noise for h, m in zip(ordered, measured)
                                                   if len(h) > 1 and m.times_s)
        # the cross stage's tests across the same leaves share their uplinks (the stage loads them on purpose;
        # elsewhere a pair across leaves is the only one there, a confirmation's partner), and TCP shares a link unfairly (one pair got 0.22 to
        # 0.76 s per repeat beside another): they are judged together, their speeds summed against the expected sum
        shared: dict = {}
        for i, hosts in enumerate(ordered):
            leaves = frozenset(self.spec.leaf_of(h) for h in hosts)
            if batch[i].stage == "cross" and len(leaves) > 1 and measured[i].times_s:
                shared.setdefault(leaves, []).append(i)
        pooled = {}
        for members in shared.values():
            got = sum(1 / measured[i].median_s for i in members)
            want = sum(self.efficiency / self.simulated_s(ordered[i]) for i in members) if self.efficiency else got
            for i in members:
                pooled[i] = got / want
        out = []
        for i, (t, hosts, m) in enumerate(zip(batch, ordered, measured)):
            if not m.times_s:
                out.append(Outcome(t, False, None, m.dead))
                continue
            if len(hosts) == 1:
                expected = fleet
            else:
                expected = self.simulated_s(hosts) / (self.efficiency or 1.0)
            if i in pooled:         # held to the box's noise (the screen's), the pool's own being the unfairness
                ratio, threshold = pooled[i], max(FLOOR, NOISE_K * (self.box_noise or 0.0))
            elif len(hosts) == 1:   # against the other hosts alone, held to their spread
                ratio, threshold = fleet / min(m.times_s), max(FLOOR, NOISE_K * spread)
            else:
                ratio = expected / m.median_s
                threshold = max(FLOOR, NOISE_K * m.noise)
            out.append(Outcome(t, ratio >= 1 - threshold, ratio, (), m.median_s, expected, threshold, len(m.times_s)))
        return out


def run(spec: DoctorTestbedSpec, on_round=None) -> tuple[Campaign, TestbedRunner, float]:
    """Bring the testbed up, run the campaign, tear it down: (campaign, its runner, wall time in s)."""
    started = time.monotonic()
    bed = TopologyTestbed(topology(spec, faulty=True), name=spec.name)
    with bed:
        runner = TestbedRunner(spec, bed, on_round)
        campaign = adaptive(spec.hosts, spec.groups(), runner)
    return campaign, runner, time.monotonic() - started


@dataclass
class TestbedReport:
    """A campaign on the testbed: what was injected, what the doctor found, what it cost."""
    spec: DoctorTestbedSpec
    campaign: Campaign
    efficiency: float | None
    wall_s: float
    round_wall_s: list[float]
    predicted_tests: int            # the plan's count for this case (campaign.adaptive on simulated faults)
    pairs_tests: int
    pairs_rounds: int

    @property
    def round_bound(self) -> int:
        return math.ceil(math.log2(max(self.spec.hosts, 2))) + 3

    def to_json(self) -> dict:
        doc = self.campaign.to_json()
        doc.update({"testbed": {"hosts": self.spec.hosts, "leaves": len(self.spec.groups()), "rate": self.spec.rate,
                                "uplink_Bps": self.spec.uplink_Bps, "size_bytes": self.spec.size,
                                "repeats": self.spec.repeats},
                    "injected": self.spec.faults(), "efficiency": self.efficiency, "wall_s": self.wall_s,
                    "round_wall_s": self.round_wall_s, "round_bound": self.round_bound,
                    "predicted_tests": self.predicted_tests,
                    "exhaustive_pairs": {"tests": self.pairs_tests, "rounds": self.pairs_rounds},
                    "threshold": {"floor": FLOOR, "noise_k": NOISE_K}})
        return doc


def predicted_tests(spec: DoctorTestbedSpec) -> int:
    """What the plan counts for this case: the campaign on the spec's faults simulated (plan.simulated)."""
    faults = []
    if spec.slow_link:
        faults.append(Fault("nic", spec.slow_link[0]))
    if spec.slow_uplink:
        faults.append(Fault("uplink", spec.slow_uplink[0]))
    if spec.slow_rank:
        faults.append(Fault("rank", spec.slow_rank[0]))
    if spec.kill_host:
        faults.append(Fault("dead", spec.kill_host[0]))
    groups = spec.groups()
    return adaptive(spec.hosts, groups, simulated(faults, groups)).tests


def doctor_testbed(spec: DoctorTestbedSpec, on_round=None) -> TestbedReport:
    campaign, runner, wall = run(spec, on_round)
    tests, rounds = pairs_counts(spec.hosts)
    return TestbedReport(spec, campaign, runner.efficiency, wall, runner.wall_s, predicted_tests(spec), tests, rounds)
