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
  they can), timed `repeats` times after a warm-up; the expected time is the simulator's for the whole round
  (contention.py: events mode on the healthy topology, the round's tests together, so tests that share an
  uplink are expected at their share of it) over the box's efficiency (judge.py);
- alone (one host): a local reduction (64 MiB of adds), repeated for about a second, its fastest repeat (every
  namespace shares the box's cores: the fastest is when it had one), against the median of the hosts alone;
- the box's efficiency (judge.py): simulated / measured time of a healthy group on this machine is below 1.
  Pairs and leaves run within a few % of one efficiency where the rates leave the box's CPUs idle enough
  (40 Mbit/s per host on 2 cores: pairs 0.93-0.95, leaves of 4 0.89-0.93); a ring of all 8 hosts does not
  (0.75: the spine forwards every flow), which is why the cross stage runs pairs;
- the tests of a round start timing together (probe.py: a mark per test in the round's directory, waited
  for at most BARRIER_S), so that none is timed while another's ranks still import torch, and each repeats
  until a window common to the round closes (twice the slowest test's expected repeats): tests that share a
  link (the cross pairs on the uplinks) share it for every repeat, not only until the first is done;
- the threshold (judge.py): max(5 %, 3 x the noise of the test's repeats).

A test whose ranks do not finish within its bound (a host killed, a rank hung) fails; the hosts whose ranks
were killed by a signal are named dead. Every test is bounded (startup and run timeouts of runtime/launch.py),
and the testbed is torn down whatever happens (lab/testbed/switch.py give_back: namespaces, processes).
"""

from __future__ import annotations

import math
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from collperf import units
from collperf.errors import RunError
from collperf.lab.doctor.campaign import Campaign, Outcome, Test, adaptive, host_name, uplink_name
from collperf.lab.doctor.contention import round_times_s
from collperf.lab.doctor.judge import FLOOR, NOISE_K, Judge, Measured
from collperf.lab.doctor.plan import Fault, pairs_counts, simulated
from collperf.lab.doctor.testbed_spec import DoctorTestbedSpec
from collperf.lab.testbed.routed import TopologyTestbed
from collperf.runtime import owned
from collperf.runtime.launch import Job, run_testbed
from collperf.topology import Topology

SPINE = "spine"
ALONE_WINDOW_S = 0.1  # a host alone repeats for 2 x (repeats + 1) x this: many repeats, the fastest is its own
BARRIER_S = 60.0  # the longest a round's tests wait for each other before timing


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


class TestbedRunner:
    """The campaign's runner (campaign.Runner) on an up testbed: each round's tests at once, each judged."""

    def __init__(self, spec: DoctorTestbedSpec, bed, on_round=None):
        self.spec, self.bed, self.on_round = spec, bed, on_round
        self.model = topology(spec, faulty=False)
        self.start = time.time()
        self.judge = Judge(self.round_s, spec.leaf_of)
        self._priced: dict = {}
        self.wall_s: list[float] = []

    @property
    def efficiency(self) -> float | None:
        return self.judge.efficiency

    def round_s(self, ordered: list[tuple[int, ...]]) -> list[float]:
        """The model's time of each test of a round run together (contention priced; 0.0 alone)."""
        key = tuple(ordered)
        if key not in self._priced:
            self._priced[key] = round_times_s(self.model, list(ordered), self.spec.size)
        return self._priced[key]

    def simulated_s(self, hosts: tuple[int, ...]) -> float:
        """A group's model time alone on the cluster."""
        return self.round_s([hosts])[0]

    def _faults_for(self, hosts) -> tuple[dict, dict]:
        delay, kill = {}, {}
        for rank, h in enumerate(hosts):
            if self.spec.slow_rank and self.spec.slow_rank[0] == h:
                delay[rank] = self.spec.slow_rank[1]
            if self.spec.kill_host and self.spec.kill_host[0] == h:
                kill[rank] = self.start + self.spec.kill_host[1]
        return delay, kill

    def measure(
        self, hosts: tuple[int, ...], barrier: tuple | None = None, window_s: float = 0.0, model_s: float = 0.0
    ) -> Measured:
        delay, kill = self._faults_for(hosts)
        job = Job(
            "collperf.lab.doctor.probe:allreduce",
            (self.spec.size, self.spec.repeats, 1, delay, kill, barrier, window_s),
        )
        timeout = self.spec.test_timeout_s
        if len(hosts) > 1:
            timeout = max(timeout, 20 * (self.spec.repeats + 1) * model_s)
        try:
            times = run_testbed(job, _View(self.bed, hosts), timeout_s=timeout)
        except RunError as e:
            killed = getattr(e, "killed_ranks", [])
            return Measured(hosts, dead=tuple(hosts[r] for r in killed), error=str(e))
        return Measured(hosts, [float(t) for t in times])

    def __call__(self, batch: list[Test]) -> list[Outcome]:
        started = time.monotonic()
        ordered = [order(self.spec, t.hosts) for t in batch]
        model = self.round_s(ordered)
        with owned.tempdir("run") as marks, ThreadPoolExecutor(max_workers=len(batch)) as pool:
            # the window: the slowest test's repeats at twice its expected time, so that all overlap throughout
            window = (
                max(s if len(h) > 1 else ALONE_WINDOW_S for h, s in zip(ordered, model)) * 2 * (self.spec.repeats + 1)
            )
            measured = list(
                pool.map(
                    lambda i: self.measure(ordered[i], (marks, i, len(batch), BARRIER_S), window, model[i]),
                    range(len(batch)),
                )
            )
        self.wall_s.append(time.monotonic() - started)
        out = self.judge(batch, ordered, measured)
        if self.on_round is not None:
            self.on_round(len(self.wall_s), out)
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
    predicted_tests: int  # the plan's count for this case (campaign.adaptive on simulated faults)
    pairs_tests: int
    pairs_rounds: int

    @property
    def round_bound(self) -> int:
        return math.ceil(math.log2(max(self.spec.hosts, 2))) + 3

    def to_json(self) -> dict:
        doc = self.campaign.to_json()
        doc.update(
            {
                "testbed": {
                    "hosts": self.spec.hosts,
                    "leaves": len(self.spec.groups()),
                    "rate": self.spec.rate,
                    "uplink_Bps": self.spec.uplink_Bps,
                    "size_bytes": self.spec.size,
                    "repeats": self.spec.repeats,
                },
                "injected": self.spec.faults(),
                "efficiency": self.efficiency,
                "wall_s": self.wall_s,
                "round_wall_s": self.round_wall_s,
                "round_bound": self.round_bound,
                "predicted_tests": self.predicted_tests,
                "exhaustive_pairs": {"tests": self.pairs_tests, "rounds": self.pairs_rounds},
                "threshold": {"floor": FLOOR, "noise_k": NOISE_K},
            }
        )
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
