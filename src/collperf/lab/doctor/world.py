"""The doctor's campaign over one torch.distributed world (`collperf doctor --torchrun` / `--slurm`): rank 0 runs
the campaign (campaign.py's stages), each round's tests go to every rank through the world's store, every rank
creates each test's process group (new_group, all ranks in the same order) and the members run the probe
(probe.py) on it; NCCL where GPUs are, gloo else.

- hosts: each rank's host is its hostname, or COLLPERF_DOCTOR_HOST (a template: {rank}, {local_rank}), so that
  one box can play several hosts (torchrun --nproc-per-node 4 with COLLPERF_DOCTOR_HOST=host{local_rank});
  hosts are numbered by their first rank, a host's ranks are all its ranks;
- fault injection for tests: COLLPERF_DOCTOR_DELAY=HOST:DELAY[,...]: that host's ranks busy on the CPU for
  DELAY before each repeat (a rank slowed on its CPU);
- the model: one NIC per rank (rails) to non-blocking switches, a host's ranks joined at nine times a NIC's
  rate (an H100 node: 450 GB/s of NVLink against 50 GB/s per 400G NIC); the box's efficiency (judge.py)
  scales it to what the cluster delivers, so only the relative times of groups matter;
- every wait is bounded: a test's group times out after `timeout` (its collectives raise), rank 0 waits for
  each round's reports at most the test bound plus the start allowance, the other ranks for the next round at
  most WAIT_ROUND_S; a rank that did not report is named failed (its host) and left out of later tests. A
  rank that exits ends a torchrun world (its agent stops every worker): the doctor names hung hosts, not
  dead ones, there.
"""

from __future__ import annotations

import json
import math
import os
import re
import socket
import time
from dataclasses import dataclass, field
from datetime import timedelta

from collperf import units
from collperf.errors import UsageError
from collperf.lab.doctor.campaign import Campaign, Outcome, Test, adaptive, default_groups
from collperf.lab.doctor.contention import round_times_s
from collperf.lab.doctor.judge import FLOOR, NOISE_K, Judge, Measured
from collperf.lab.doctor.plan import pairs_counts, simulated
from collperf.runtime.launch import Job
from collperf.topology import Topology

ENV_HOST, ENV_DELAY = "COLLPERF_DOCTOR_HOST", "COLLPERF_DOCTOR_DELAY"
PROBE = "collperf.lab.doctor.probe:allreduce"
START_S = 30.0  # allowance for a round's groups to connect, beyond the test's own bound
WAIT_ROUND_S = 3600.0  # the longest a rank waits for the next round (rank 0 judging, other tests running)
NIC_Bps, NVLINK_RATIO = 50e9, 9.0
_FIELDS = "size=1M,repeats=5,timeout=120s"


@dataclass(frozen=True)
class WorldOptions:
    size_bytes: int = 1 << 20
    repeats: int = 5
    timeout_s: float = 120.0
    leaves: int | None = None  # screening groups (hosts in that many equal runs), else about sqrt(N)


def parse_options(text: str | None, leaves: int | None = None) -> WorldOptions:
    """'size=64M,repeats=5,timeout=120s' -> WorldOptions, every field checked."""
    fields = {}
    for part in (text or "").split(","):
        if part.strip():
            key, eq, value = part.partition("=")
            if not eq or key.strip() not in ("size", "repeats", "timeout"):
                raise UsageError(f"--probe {text!r}: {part.strip()!r}: expected FIELD=VALUE among {_FIELDS}")
            fields[key.strip()] = value.strip()
    try:
        size = units.parse_size(fields.get("size", "1M"))
        repeats = int(fields.get("repeats", "5"))
        timeout = units.parse_time(fields.get("timeout", "120s"))
    except (UsageError, ValueError):
        raise UsageError(f"--probe {text!r}: expected {_FIELDS} (a size, a whole number, a time)") from None
    if not (4 <= size <= 1 << 34 and 3 <= repeats <= 50 and 0 < timeout < math.inf):
        raise UsageError(f"--probe {text!r}: size from 4 bytes to 16G, repeats from 3 to 50, a finite timeout")
    return WorldOptions(size, repeats, timeout, leaves)


# --- who is where ---------------------------------------------------------------------------------------


def first_node(nodelist: str) -> str:
    """The first host of a Slurm hostlist: 'gpu-[003-005,007],cpu1' -> 'gpu-003' (as `scontrol show
    hostnames` would list it first; zero padding kept)."""
    m = re.match(r"([^,\[]*)(?:\[([^\]]*)\])?([^,]*)", nodelist.strip())
    if not m or not (m.group(1) or m.group(2)):
        raise UsageError(f"SLURM_JOB_NODELIST {nodelist!r}: expected a Slurm hostlist such as node[01-04]")
    first = (m.group(2) or "").split(",")[0].split("-")[0]
    return f"{m.group(1)}{first}{m.group(3)}"


def slurm_environment(env) -> dict[str, str]:
    """torch.distributed's env:// variables from Slurm's (srun sets one task per rank)."""
    nodelist = env.get("SLURM_JOB_NODELIST") or env.get("SLURM_NODELIST")
    missing = [k for k in ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID") if k not in env]
    if missing or not nodelist:
        raise UsageError(
            f"--slurm: {', '.join(missing or ['SLURM_JOB_NODELIST'])} not set: run it under srun "
            "(srun --nodes 8 --ntasks-per-node 8 python -m collperf doctor --slurm)"
        )
    return {
        "RANK": env["SLURM_PROCID"],
        "WORLD_SIZE": env["SLURM_NTASKS"],
        "LOCAL_RANK": env["SLURM_LOCALID"],
        "MASTER_ADDR": env.get("MASTER_ADDR") or first_node(nodelist),
        "MASTER_PORT": env.get("MASTER_PORT", "29500"),
    }


def host_of_rank(env, rank: int, local_rank: int) -> str:
    template = env.get(ENV_HOST)
    return template.format(rank=rank, local_rank=local_rank) if template else socket.gethostname()


def delays(env) -> dict[str, float]:
    """COLLPERF_DOCTOR_DELAY 'host2:0.1s,host3:50ms' -> {host: seconds}."""
    out = {}
    for part in (env.get(ENV_DELAY) or "").split(","):
        if part.strip():
            host, colon, value = part.rpartition(":")
            try:
                out[host.strip()] = units.parse_time(value) if colon else -1.0
            except UsageError:
                out[host.strip()] = -1.0
            if not host.strip() or out[host.strip()] < 0:
                raise UsageError(f"{ENV_DELAY} {part!r}: expected HOST:DELAY, e.g. host2:0.1s")
    return out


def model_topology(ranks_of: list[list[int]]):
    """One NIC per rank to a switch, a host's ranks joined at NVLINK_RATIO x that (the module's model)."""
    import networkx as nx

    g = nx.Graph()
    for ranks in ranks_of:
        for i, r in enumerate(ranks):
            g.add_edge(r, "switch", bandwidth_Bps=NIC_Bps, latency_s=0.0, name=f"nic{r}")
            for q in ranks[i + 1 :]:  # direct: one hop, shorter than through the switch
                g.add_edge(r, q, bandwidth_Bps=NIC_Bps * NVLINK_RATIO, latency_s=0.0, name=f"nvlink{r}-{q}")
    return Topology(f"world-{len(ranks_of)}-hosts", sum(len(r) for r in ranks_of), g)


# --- the campaign over the world ------------------------------------------------------------------------


@dataclass
class World:
    """This rank's view: the process group is up, hosts are known."""

    rank: int
    local_rank: int
    size: int
    hosts: list[str]  # host index -> name
    ranks_of: list[list[int]]  # host index -> its ranks
    store: object
    device: str
    options: WorldOptions
    delay: dict[str, float] = field(default_factory=dict)

    def host_index(self, rank: int) -> int:
        return next(h for h, ranks in enumerate(self.ranks_of) if rank in ranks)

    def test_ranks(self, hosts) -> list[int]:
        return sorted(r for h in hosts for r in self.ranks_of[h])


def connect(options: WorldOptions, env=None) -> World:
    """init_process_group from the env:// variables (torchrun's, or slurm_environment's), hosts gathered."""
    import torch
    import torch.distributed as dist
    from torch.distributed import distributed_c10d

    env = os.environ if env is None else env
    rank, local_rank = int(env.get("RANK", "0")), int(env.get("LOCAL_RANK", "0"))
    gpus = torch.cuda.is_available()
    if gpus:
        torch.cuda.set_device(local_rank % torch.cuda.device_count())
    # the world's own collectives are few (the hosts' names); its store carries the rounds, waited on bounded
    dist.init_process_group("nccl" if gpus else "gloo", timeout=timedelta(seconds=options.timeout_s + START_S))
    names: list = [None] * dist.get_world_size()
    dist.all_gather_object(names, host_of_rank(env, rank, local_rank))
    hosts = list(dict.fromkeys(names))
    ranks_of = [[r for r, n in enumerate(names) if n == h] for h in hosts]
    return World(
        rank,
        local_rank,
        dist.get_world_size(),
        hosts,
        ranks_of,
        distributed_c10d._get_default_store(),
        f"cuda:{torch.cuda.current_device()}" if gpus else "cpu",
        options,
        delays(env),
    )


def _wait(store, key: str, seconds: float) -> bool:
    try:
        store.wait([key], timedelta(seconds=max(0.001, seconds)))
        return True
    except Exception:  # the store's timeout (its error type differs across torch versions)
        return False


def participate(w: World, k: int, tests: list[list[int]], window_s: float) -> None:
    """Round k on this rank: every test's group created (all ranks, same order), this rank's test run, its
    report put in the store (times on the test's first rank; an error where the test broke)."""
    import torch.distributed as dist

    mine = None
    groups = []
    for i, hosts in enumerate(tests):
        ranks = w.test_ranks(hosts)
        g = dist.new_group(ranks, timeout=timedelta(seconds=w.options.timeout_s))
        groups.append(g)
        if w.rank in ranks:
            mine = (i, g, ranks)
    if mine is None:
        return
    i, g, ranks = mine
    members = len(w.test_ranks([h for t in tests for h in t]))
    # the round's tests start timing together (all groups up): a counter in the store, waited on bounded
    w.store.add(f"doctor/ready/{k}", 1)
    end = time.monotonic() + START_S
    while int(w.store.add(f"doctor/ready/{k}", 0)) < members and time.monotonic() < end:
        time.sleep(0.01)
    delay = w.delay.get(w.hosts[w.host_index(w.rank)], 0.0)
    try:
        # probe.py through its Job (torch is loaded where a test runs, not where the campaign is planned)
        times = Job(
            PROBE,
            (
                w.options.size_bytes,
                w.options.repeats,
                1,
                {ranks.index(w.rank): delay} if delay else {},
                {},
                None,
                window_s,
                g,
                w.device,
            ),
        ).call()
        report = {"test": i, "times": times if ranks[0] == w.rank else []}
    except Exception as e:  # a peer hung or died: the group's timeout ended the wait
        report = {"test": i, "error": str(e).splitlines()[0][:200] if str(e) else type(e).__name__}
    w.store.set(f"doctor/report/{k}/{w.rank}", json.dumps(report))
    for group in groups:
        if group is not None and group != dist.GroupMember.NON_GROUP_MEMBER:
            dist.destroy_process_group(group)


class WorldRunner:
    """The campaign's runner on rank 0: a round published, joined, its reports collected and judged."""

    def __init__(self, w: World, on_round=None):
        self.w, self.on_round = w, on_round
        self.model = model_topology(w.ranks_of)
        groups = default_groups(len(w.hosts), w.options.leaves)
        self.judge = Judge(self.round_s, lambda h: next(i for i, g in enumerate(groups) if h in g))
        self.k, self.wall_s = 0, []

    def round_s(self, tests) -> list[float]:
        """The model's time per test of a round (hosts -> their ranks; a host alone: its local ranks)."""
        ranked = [tuple(self.w.test_ranks(h)) for h in tests]
        times = round_times_s(self.model, ranked, self.w.options.size_bytes)
        return [t if len(h) > 1 else 0.0 for h, t in zip(tests, times)]

    def __call__(self, batch: list[Test]) -> list[Outcome]:
        started = time.monotonic()
        self.k += 1
        tests = [list(t.hosts) for t in batch]
        model = self.round_s([tuple(t) for t in tests])
        expected = max((s / (self.judge.efficiency or 1.0) for s in model), default=0.0)
        window = 2 * (self.w.options.repeats + 1) * (expected or 0.1)
        self.w.store.set(f"doctor/round/{self.k}", json.dumps({"tests": tests, "window_s": window}))
        participate(self.w, self.k, tests, window)
        deadline = time.monotonic() + self.w.options.timeout_s + START_S + window
        measured = []
        for hosts in tests:
            reports, missing = {}, []
            for r in self.w.test_ranks(hosts):
                if _wait(self.w.store, f"doctor/report/{self.k}/{r}", deadline - time.monotonic()):
                    reports[r] = json.loads(self.w.store.get(f"doctor/report/{self.k}/{r}"))
                else:
                    missing.append(r)
            first = reports.get(self.w.test_ranks(hosts)[0], {})
            dead = tuple(dict.fromkeys(self.w.host_index(r) for r in missing))
            ok = not missing and all("error" not in x for x in reports.values()) and first.get("times")
            measured.append(
                Measured(
                    tuple(hosts),
                    [float(t) for t in first["times"]] if ok else [],
                    dead,
                    "; ".join(x["error"] for x in reports.values() if "error" in x),
                )
            )
        self.wall_s.append(time.monotonic() - started)
        out = self.judge(batch, [tuple(t) for t in tests], measured)
        if self.on_round is not None:
            self.on_round(self.k, out)
        return out


def serve(w: World) -> None:
    """Every rank but 0: join each round rank 0 publishes until it says done (or stops publishing)."""
    k = 0
    while True:
        k += 1
        if not _wait(w.store, f"doctor/round/{k}", WAIT_ROUND_S):
            return
        doc = json.loads(w.store.get(f"doctor/round/{k}"))
        if doc.get("done"):
            return
        participate(w, k, doc["tests"], doc["window_s"])


@dataclass
class WorldReport:
    """The campaign over a world: the hosts by name, what was found, what it cost."""

    campaign: Campaign
    hosts: list[str]
    ranks_of: list[list[int]]
    backend: str
    options: WorldOptions
    efficiency: float | None
    wall_s: float
    round_wall_s: list[float]
    predicted_tests: int
    pairs_tests: int
    pairs_rounds: int

    @property
    def round_bound(self) -> int:
        return math.ceil(math.log2(max(len(self.hosts), 2))) + 3

    def name(self, text: str) -> str:
        """host<i> as the campaign says it -> the host's own name."""
        return re.sub(r"\bhost(\d+)\b", lambda m: self.hosts[int(m.group(1))], text)

    def to_json(self) -> dict:
        doc = self.campaign.to_json()
        for c in doc["components"]:
            c["component"], c["evidence"] = self.name(c["component"]), [self.name(x) for x in c["evidence"]]
        for r in doc["log"]:
            for t in r:
                t["hosts"], t["dead"] = [self.name(h) for h in t["hosts"]], [self.name(h) for h in t["dead"]]
        ranks = sum(len(r) for r in self.ranks_of)
        doc.update(
            {
                "where": f"{self.backend}: {len(self.hosts)} hosts, {ranks} ranks",
                "world": {
                    "hosts": self.hosts,
                    "ranks_per_host": [len(r) for r in self.ranks_of],
                    "backend": self.backend,
                    "size_bytes": self.options.size_bytes,
                    "repeats": self.options.repeats,
                    "timeout_s": self.options.timeout_s,
                },
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


def doctor_world(options: WorldOptions, slurm: bool = False, on_round=None) -> WorldReport | None:
    """The campaign over this process's world: the report on rank 0, None on the others."""
    import torch.distributed as dist

    if slurm:
        os.environ.update(slurm_environment(os.environ))
    elif "RANK" not in os.environ or "WORLD_SIZE" not in os.environ:
        raise UsageError(
            "--torchrun: RANK and WORLD_SIZE are not set: start it with torchrun (torchrun "
            "--nproc-per-node 8 -m collperf doctor --torchrun), or under srun with --slurm"
        )
    started = time.monotonic()
    w = connect(options)
    try:
        if w.rank != 0:
            serve(w)
            return None
        runner = WorldRunner(w, on_round)
        n = len(w.hosts)
        groups = default_groups(n, options.leaves)
        campaign = adaptive(n, groups, runner)
        w.store.set(f"doctor/round/{runner.k + 1}", json.dumps({"done": True}))
        tests, rounds = pairs_counts(n)
        return WorldReport(
            campaign,
            w.hosts,
            w.ranks_of,
            dist.get_backend(),
            options,
            runner.judge.efficiency,
            time.monotonic() - started,
            runner.wall_s,
            adaptive(n, groups, simulated([], groups)).tests,
            tests,
            rounds,
        )
    finally:
        dist.destroy_process_group()
