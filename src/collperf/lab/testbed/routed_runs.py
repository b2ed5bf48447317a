"""Runs on a topology testbed (lab/testbed/routed.py): packed-tree schedules built on its routes, predictions
from the simulator on the same topology, per-link calibration, and the validation grid.

Between the API and the pure parts, as blink/runs.py is for the simulator. Local rank i runs on host
bed.group[i] (one rank per host), so the group's view of the testbed topology (topology.subset: the
other hosts and the devices forward) is what the simulator runs every schedule on, with the routes the
testbed installed: the model and the measurement see the same network.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from collperf.blink.runs import SEGMENTS  # packed trees: segments pipelined down each tree
from collperf.blink import runs as blink_runs
from collperf.blink.algorithms import BLINK
from collperf.blink.routed_packing import pack_on_routes
from collperf.errors import RunError, UsageError
from collperf.lab.bench import run
from collperf.model.algorithms import get_algorithm
from collperf.model.two_level.build import build
from collperf.model.algorithms.modes import is_flat, is_runtime_only, mode_of
from collperf.ingest.row import Row
from collperf.simulate import simulate
from collperf.spec import SweepSpec
from collperf.topology import subset

# chunks per segment shared by the trees (a tree's share rounded to 1/RESOLUTION), at least one per tree
RESOLUTION = {"broadcast": 128, "allgather": 32}
# packed trees on fixed routes are built for broadcast and allgather (every rank roots its block's trees); the
# reduce direction (reducescatter, allreduce) is not built on routes yet
BLINK_COLLECTIVES = ("broadcast", "allgather")


def _one_rank_per_host(bed, what: str) -> None:
    if bed.ranks_per_host != 1:
        raise UsageError(
            f"{what} on a topology testbed places one rank per host: drop ranks-per-host={bed.ranks_per_host}"
        )


def _blink_roots(bed, collective: str, root: int) -> list:
    """The topology ranks that root the packed trees (one for broadcast, every rank for allgather), checked."""
    if collective not in BLINK_COLLECTIVES:
        raise UsageError(
            f"-A blink on a topology testbed builds {' and '.join(BLINK_COLLECTIVES)} on the testbed's "
            f"routes; not {collective}"
        )
    _one_rank_per_host(bed, "-A blink")
    group = bed.group
    if collective == "broadcast" and not (isinstance(root, int) and 0 <= root < len(group)):
        raise UsageError(
            f"--root {root}: the testbed's group has {len(group)} ranks (0..{len(group) - 1}): "
            f"give --root between 0 and {len(group) - 1}"
        )
    return [group[root]] if collective == "broadcast" else group


def packing(bed, collective: str, root: int = 0):
    """pack_on_routes on the bed's topology for its group: one root for broadcast, every rank for allgather."""
    return pack_on_routes(bed.topology, bed.group, _blink_roots(bed, collective, root))


def blink_schedule(bed, collective: str, root: int = 0, segments: int | None = None):
    """The packed schedule the ranks run (segments None, not given, means SEGMENTS here): blink/runs.py's
    builder with the trees packed on the testbed's routes."""
    roots = _blink_roots(bed, collective, root)
    s, _, _ = blink_runs.blink_schedule(
        bed.topology,
        bed.group,
        collective,
        roots[0] if collective == "broadcast" else None,
        segments or SEGMENTS,
        resolution=RESOLUTION[collective],
        packing=pack_on_routes,
    )
    return s


def _is_blink(algorithm) -> bool:
    """-A blink: its packed trees are packed on this bed's routes here, not built by the registry."""
    return mode_of(algorithm) is BLINK


def schedules(bed, sweep) -> dict:
    """(algorithm, size) -> prebuilt schedule for the algorithms the registry cannot build (blink)."""
    names = [a for a in sweep.algorithms if _is_blink(a)]
    if not names:
        return {}
    s = blink_schedule(bed, sweep.collective, sweep.root, sweep.segments)
    return {(names[0], size): s for size in sweep.sizes()}


def schedule_of(bed, collective: str, algorithm: str, root: int, segments: int, prebuilt=None):
    if prebuilt is not None:
        return prebuilt
    if _is_blink(algorithm):
        return blink_schedule(bed, collective, root, segments)
    return build(collective, algorithm, bed.ranks, root=root, segments=segments)


def simulated_s(bed, schedule, size_bytes: float, mode: str = "events") -> float:
    """The simulator's time for `schedule` (on local ranks) on the bed's topology, group view."""
    return simulate(schedule, subset(bed.topology, bed.group), size_bytes, mode).time_s


def predict_rows(results, bed, rows, prebuilt=None, mode: str = "events") -> None:
    """Each row's predicted_us from the simulator on the testbed's topology; builtin rows get none (the
    backend's own algorithm is not a schedule the simulator has)."""
    if bed.ranks_per_host != 1:
        results.model = "no prediction: the simulator places one rank per host of a topology testbed"
        return
    cfg = results.config
    cache: dict = {}
    for i, r in enumerate(rows):  # rows are frozen: each is replaced in the list by its predicted copy
        r = Row.of(r)
        algorithm, segments = r.ran_as()  # what auto ran at this size, with its segments (runtime/measure._Runner)
        segments = segments or cfg["segments"]
        if is_runtime_only(algorithm):
            rows[i] = r.with_prediction(None)
            continue
        key = (algorithm, segments, r.size)
        if key not in cache:
            pre = (prebuilt or {}).get((algorithm, r.size)) if segments == cfg["segments"] else None
            s = schedule_of(bed, results.collective, algorithm, cfg["root"], segments, pre)
            cache[key] = simulated_s(bed, s, r.size, mode)
        rows[i] = r.with_prediction(cache[key] * 1e6)
    results.model = f"simulated ({mode}) on the testbed's topology {bed.topology.name}, its link rates and routes"


# --- per-link calibration -------------------------------------------------------------------------


@dataclass
class LinkMeasure:
    a: object
    b: object
    configured_Bps: float
    measured_Bps: float  # a -> b, bulk TCP through the link's shaping
    latency_s: float  # one-way, half a small round trip


def calibrate_links(bed, size_bytes: int = 4 << 20, timeout_s: float = 120.0, on_link=None) -> list[LinkMeasure]:
    """Measure every link of an up topology testbed, one after another: a TCP stream of size_bytes from one
    end to the other (the receiver times it from its first read, not counting what that read found
    already queued: a reader descheduled on a busy machine would otherwise see a burst) and a small ping-pong, with plain sockets
    in the two namespaces (no torch: each end is a short Python program). timeout_s bounds each link's
    measurement; a link that fails or runs past it raises RunError naming the link. on_link(done, total,
    measure) is called as each link is measured (dgx1v-like has 29 links: tens of seconds in all)."""
    out = []
    for link in bed.plan.links:
        rate, lat = _measure_pair(bed, link.a, link.b, size_bytes, timeout_s)
        out.append(LinkMeasure(link.a, link.b, link.rate_Bps, rate, lat))
        if on_link is not None:
            on_link(len(out), len(bed.plan.links), out[-1])
    return out


# both ends give up on their own after the measurement's timeout (argv[3]): a peer that never comes leaves no
# process behind even if the parent is gone
_SERVER = r"""
import socket, sys, time
timeout = float(sys.argv[3])
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.settimeout(timeout)
s.bind((sys.argv[1], 0)); s.listen(1); print("ready", s.getsockname()[1], flush=True)
c, _ = s.accept(); c.settimeout(timeout); c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
for _ in range(20):
    c.recv(1); c.sendall(b"x")
n, first, skip, total = int(sys.argv[2]), None, 0, 0
while total < n:
    b = c.recv(1 << 20)
    if not b: break
    total += len(b)
    if first is None:      # bytes queued before this reader ran are not timed
        first, skip = time.perf_counter(), total
if first is None or total < n:
    sys.exit(f"received {total} of {n} bytes")
elapsed = time.perf_counter() - first
print((total - skip) / elapsed if elapsed > 0 and total > skip else "nan", flush=True)
c.sendall(b"d")
"""

_CLIENT = r"""
import socket, sys, time, statistics
c = socket.create_connection((sys.argv[1], int(sys.argv[4])), timeout=float(sys.argv[3]))
c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
rt = []
for _ in range(20):
    t = time.perf_counter(); c.sendall(b"p"); c.recv(1); rt.append(time.perf_counter() - t)
print(statistics.median(rt[5:]) / 2, flush=True)
c.sendall(bytes(int(sys.argv[2]))); c.recv(1)
"""


def _last_line(text: str | None) -> str:
    lines = (text or "").strip().splitlines()
    line = lines[-1] if lines else "no output"
    return line + (": give a longer --timeout" if "timed out" in line else "")


def _measure_pair(bed, a, b, size_bytes: int, timeout_s: float) -> tuple[float, float]:
    """(a -> b bulk rate in B/s, one-way latency in s); RunError naming the link on any failure, and no wait
    longer than timeout_s in all (the receiver's start, the sender, the receiver's result)."""
    import subprocess
    import sys
    import time

    link = f"calibrate: link ({a}, {b})"
    deadline = time.monotonic() + timeout_s

    def left() -> float:
        return max(0.1, deadline - time.monotonic())

    def bounded(who: str, wait):
        """wait() (its own timeout: left()); past it, a RunError naming who and what to give."""
        try:
            return wait()
        except subprocess.TimeoutExpired:
            raise RunError(f"{link}: {who} ran past the timeout of {timeout_s:g} s: give a longer --timeout") from None

    addr = bed.address(b)
    args = [addr, str(size_bytes), repr(float(timeout_s))]
    server = subprocess.Popen(
        ["ip", "netns", "exec", bed.host(b), sys.executable, "-c", _SERVER, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # the receiver binds a free port (two calibrations, or a test on loopback, never collide) and names it
        ready = _ready(server, left()).split()
        if len(ready) != 2 or ready[0] != "ready":
            server.kill()
            raise RunError(
                f"{link}: the receiver on {b} did not start within {timeout_s:g} s: "
                f"{_last_line(server.communicate(timeout=5)[1])}"
            )
        client = bounded(
            f"the sender on {a}",
            lambda: subprocess.run(
                ["ip", "netns", "exec", bed.host(a), sys.executable, "-c", _CLIENT, *args, ready[1]],
                capture_output=True,
                text=True,
                timeout=left(),
            ),
        )
        if client.returncode != 0:
            raise RunError(f"{link}: the sender on {a} failed: {_last_line(client.stderr)}")
        stdout, stderr = bounded(f"the receiver on {b}", lambda: server.communicate(timeout=left()))
        if server.returncode != 0:
            raise RunError(f"{link}: the receiver on {b} failed: {_last_line(stderr)}")
        try:
            rate, latency = float(_last_line(stdout)), float(client.stdout.strip())
        except ValueError:
            raise RunError(
                f"{link}: unreadable measurement (receiver {_last_line(stdout)!r}, sender "
                f"{_last_line(client.stdout)!r})"
            ) from None
        if not math.isfinite(rate):
            raise RunError(
                f"{link}: all {size_bytes} bytes were queued before the receiver's first read, so "
                "nothing was timed: calibrate with a larger size"
            )
        return rate, latency
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


def _ready(process, timeout_s: float) -> str:
    """The process's first line of output, or '' if none comes within timeout_s (readline alone would wait
    forever on a receiver stuck before it prints)."""
    import selectors

    with selectors.DefaultSelector() as sel:
        sel.register(process.stdout, selectors.EVENT_READ)
        if not sel.select(timeout_s):
            return ""
    return process.stdout.readline().strip()


# --- validation: measured vs simulated on the same topology ----------------------------------------

GRID = {"broadcast": ["chain", "binomial", "blink"], "allgather": ["ring"], "allreduce": ["ring"]}


@dataclass
class TopologyValidationRow:
    collective: str
    algorithm: str
    ranks: int
    size: int
    measured_s: float
    rounds_s: float
    events_s: float

    @property
    def error(self) -> float:  # the events mode (congestion-aware) against the measurement
        return (self.events_s - self.measured_s) / self.measured_s

    @property
    def rounds_error(self) -> float:
        return (self.rounds_s - self.measured_s) / self.measured_s

    def errors(self) -> list[tuple[str, float]]:
        """(regime, signed relative error) per simulator mode: what lab/validate.py summary groups by."""
        return [("events mode", self.error), ("rounds mode", self.rounds_error)]


def validate(
    bed,
    sizes=("1M", "2M", "4M"),
    grid=None,
    iters: int = 3,
    segments: int = SEGMENTS,
    timeout_s: float = 600.0,
    on_step=None,
) -> list[TopologyValidationRow]:
    """On an up topology testbed: run the grid, simulate each measured row in both modes on the bed's
    topology, and return measured beside predicted."""
    _one_rank_per_host(bed, "validate")
    rows = []
    for collective, algorithms in (grid or GRID).items():
        usable = [
            a
            for a in algorithms
            if _is_blink(a)
            and collective in BLINK_COLLECTIVES
            or is_flat(a)
            and not get_algorithm(collective, a).unavailable(bed.ranks)
        ]
        if not usable:
            continue
        # the slowest rank's time (nccl-tests -a 3): the simulator's time is when the last rank is done, and
        # ranks of a tree finish at different times (a mean over ranks would be below the makespan)
        if on_step is not None:
            on_step(f"measuring {collective}")
        config = SweepSpec(
            collective=collective,
            algorithms=usable,
            iters=iters,
            warmup=1,
            in_place=False,
            segments=segments,
            average=3,
            progress=False,
            size_list=list(sizes),
        )
        pre = schedules(bed, config)
        res = run(config, None, timeout_s, None, testbed=bed, schedules=pre or None)
        for r in res.rows:
            if not r.correct():
                continue
            s = schedule_of(bed, collective, r.algorithm, 0, segments, pre.get((r.algorithm, r.size)))
            rows.append(
                TopologyValidationRow(
                    collective,
                    r.algorithm,
                    bed.ranks,
                    r.size,
                    r.out_of_place.p50_us * 1e-6,
                    simulated_s(bed, s, r.size, "rounds"),
                    simulated_s(bed, s, r.size, "events"),
                )
            )
    return rows


def ratio(a: float, b: float) -> float:
    return a / b if b else math.inf
