"""nccl-tests-style sweeps on real processes, each row beside the model's prediction.

`run(config, ranks)` launches the ranks (local processes by default, the current torchrun job when
started under torchrun), runs runtime/measure.bench on each, and returns Results with a predicted
time on every row: from a given network (a link or a cluster), or, when none is given, from a link
fitted to this run's own rows (non-negative least squares on relative error over our algorithms'
rows, whose alpha/beta/gamma coefficients the model knows exactly). `builtin` rows are compared with
the model's best algorithm, the lower envelope of what the model knows.

Rows stream: rank 0 reports each finished row, and `on_row(results, row)` gets it at once (with its
prediction when a network is given; a fitted prediction needs every row and comes at the end). A run
that fails, times out or is interrupted raises BenchInterrupted holding the rows measured so far.
Before anything starts, `check_capacity` refuses rank counts and sweeps the machine cannot hold.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import signal
import threading

import numpy as np

from collperf.collectives import get_collective
from collperf.errors import RunError, UsageError
from collperf.lab.results import Results
from collperf.model.algorithms import algorithms_for, get_algorithm
from collperf.model.two_level.build import default_phase, roots_at_zero
from collperf.model.algorithms.modes import is_chooser, is_flat, is_runtime_only, is_two_level
from collperf.model.costs import coefficients, lowest
from collperf.model.network import Link, Network
from collperf.model.predict import candidates
from collperf.model.auto.select import choices_for
from collperf.runtime import launch
from collperf.runtime.job import BenchJob
from collperf.runtime.launch import RunStalled, RunTimeout
from collperf.ingest.row import Row
from collperf.spec import DTYPE_BYTES, SweepSpec


class BenchInterrupted(RunError):
    """The sweep ended early (a rank failed, a timeout, Ctrl-C): `results` holds the rows measured so far,
    `reason` is 'timed out', 'stalled' (the progress watchdog), 'interrupted', 'terminated (SIGTERM)' or 'failed'."""

    def __init__(self, message: str, results: Results, reason: str):
        super().__init__(message)
        self.results, self.reason = results, reason


def run(
    config: SweepSpec,
    ranks: int | None = None,
    timeout_s: float = 300.0,
    network: Network | None = None,
    testbed=None,
    on_row=None,
    on_note=None,
    force: bool = False,
    schedules: dict | None = None,
) -> Results | None:
    """Run the sweep; under torchrun every rank runs it and rank 0 gets the Results (others None);
    on a testbed (an up lab.testbed.Testbed) every rank runs inside its host. `on_row(results, row)` is called
    as each row completes, `on_note(text)` with warnings before the run starts; `force` runs a sweep that
    check_capacity would refuse. `schedules`: prebuilt schedules keyed (algorithm, size) for the algorithms
    the registry cannot build from p alone (Blink's packed trees and patterns, packed_runs.bench_schedules)."""
    if testbed is not None:
        world, backend, where = testbed.ranks, f"gloo on {testbed.describe()}", "testbed"
    elif launch.in_torchrun():
        world, where = launch.torchrun_int("WORLD_SIZE", low=1), "torchrun"
        launch.torchrun_int("RANK")
        backend = "nccl" if _cuda() else "gloo"
    else:
        if ranks is None:
            raise UsageError("give the number of local ranks: --ranks 4 (or run under torchrun)")
        world, backend, where = ranks, "gloo", "local"
    if network is not None and network.ranks != world:
        raise UsageError(f"the network has {network.ranks} ranks but the run has {world}")
    shape = two_level_shape(world, where, testbed, network)
    bench_job = dataclasses.replace(
        BenchJob.of(config), sizes=tuple(distinct_sizes(config, world)), two_level=shape, schedules=schedules
    )
    _check_ranks(config, world, {a for a, _ in schedules or ()}, shape)
    local = {
        "local": world,
        "testbed": world,
        "torchrun": launch.torchrun_int("LOCAL_WORLD_SIZE", 1, low=1) if where == "torchrun" else 1,
    }[where]
    for note in check_capacity(config, local, force, gpu=(backend == "nccl"), spawned=(where != "torchrun")):
        if on_note is not None:
            on_note(note)
    if any(map(is_chooser, config.algorithms)):
        bench_job = auto_plan(bench_job, world, network, shape[1] if shape else world)
    # the ranks import the function's module themselves, after reporting that they started (torch loads there)
    job = launch.Job("collperf.runtime.measure:bench", (bench_job,))
    results = Results(config.collective, world, backend, bench_job.to_json(), [])
    if network is not None:
        results.model = f"given: {network.describe()}"

    def on_message(rank, kind, payload):
        if kind == "devices":
            results.devices = payload
        elif kind == "auto_choices":
            results.config["auto"], results.config["auto_network"] = payload["choices"], payload["network"]
        elif kind == "row":
            row = predict_rows(results, network, [payload])[0] if network is not None else payload
            results.rows.append(row)
            if on_row is not None:
                on_row(results, row)

    try:
        with sigterm_interrupts():
            out = _launch(job, ranks, testbed, where, timeout_s, on_message)
        if out is None:  # a torchrun rank other than 0
            return None
    except (RunError, KeyboardInterrupt) as e:
        raise _interrupted(results, network, e, _vanished(testbed)) from None
    return _finished(results, out, network, testbed, schedules)


def _launch(job, ranks, testbed, where: str, timeout_s: float, on_message):
    if testbed is not None:
        return launch.run_testbed(job, testbed, timeout_s, on_message=on_message)
    if where == "torchrun":
        out = launch.run_torchrun(job, timeout_s, on_message=on_message)
        return out if launch.torchrun_int("RANK") == 0 else None
    return launch.run_local(job, ranks, timeout_s, on_message=on_message)


def _finished(results: Results, out: dict, network, testbed, schedules) -> Results:
    results.rows, results.devices = out["rows"], out["devices"]
    if out.get("auto") is not None:
        results.config["auto"], results.config["auto_network"] = out["auto"]["choices"], out["auto"]["network"]
    results.peak_rss_bytes = out["peak_rss_bytes"]
    # with no network given, a testbed that models itself (the simulator on its topology) predicts the rows
    if not (network is None and testbed is not None and testbed.predict_rows(results, results.rows, schedules)):
        add_predictions(results, network)
    return results


class Terminated(KeyboardInterrupt):
    """SIGTERM (what timeout, Slurm and Kubernetes send) ends a run as Ctrl-C does: ranks killed, rows kept,
    an honest footer, and the cause named."""


@contextlib.contextmanager
def sigterm_interrupts():
    """While the ranks run, SIGTERM raises Terminated in the launcher (the main thread only: elsewhere a
    handler cannot be set, and the default, an exit without a word, stays)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminated(signum, frame):
        raise Terminated("SIGTERM")

    before = signal.signal(signal.SIGTERM, terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def _vanished(testbed) -> str:
    """Why the ranks died when it was not their fault: the testbed they ran in is gone."""
    if testbed is None or not os.path.isdir("/run/netns"):
        return ""
    # `ip netns` keeps each namespace as a file under /run/netns: the testbed's first host is gone with it
    if os.path.exists(os.path.join("/run/netns", testbed.host(testbed.host_of(0)))):
        return ""
    return (
        f"testbed {testbed.name!r} vanished during the run (its namespaces are gone: something ran "
        "`collperf testbed down` or deleted them), which killed the ranks"
    )


def _interrupted(results: Results, network, e: BaseException, cause: str = "") -> BenchInterrupted:
    reason = (
        "terminated (SIGTERM)"
        if isinstance(e, Terminated)
        else "interrupted"
        if isinstance(e, KeyboardInterrupt)
        else "stalled"
        if isinstance(e, RunStalled)
        else "timed out"
        if isinstance(e, RunTimeout)
        else "failed"
    )
    n = len(results.rows)
    results.stopped = head = f"{reason} after {n} row{'s' if n != 1 else ''}"
    if isinstance(e, RunStalled):  # the footer of every format names the rank, its pid and its phase
        results.stopped += f": {e.culprit}"
    if results.rows and network is None:
        add_predictions(results, None)
    why = (
        "Ctrl-C"
        if reason == "interrupted"
        else "SIGTERM received: the ranks were stopped"
        if isinstance(e, Terminated)
        else cause or str(e)
    )
    return BenchInterrupted(f"{head}: {why}", results, reason)


def _cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def distinct_sizes(config: SweepSpec, world: int) -> list[int]:
    """The sweep's sizes less those that measure a buffer measured already: nccl-tests rounds a size down
    to whole blocks of elements (Collective.counts), so -b 0 by a factor of 2 asks for 0, 1 and 2 bytes,
    which are all 0 bytes of float32; each buffer is measured once, under the first size asking for it."""
    coll, seen, out = get_collective(config.collective), set(), []
    for size in config.sizes():
        measured = coll.counts(size, world, DTYPE_BYTES[config.dtype])[1]
        if measured not in seen:
            seen.add(measured)
            out.append(size)
    return out


def two_level_shape(world: int, where: str, testbed=None, network: Network | None = None) -> tuple[int, int] | None:
    """(nodes, ranks per node) of the run, for `-A hierarchical` and auto: the testbed's hosts, torchrun's
    nodes (LOCAL_WORLD_SIZE ranks each), or local ranks grouped as the given two-level network says
    (--nodes/--ranks-per-node, --cluster, --profile); None for local ranks without one (one host)."""
    if testbed is not None:
        return (testbed.ranks // testbed.ranks_per_host, testbed.ranks_per_host)
    if where == "torchrun":
        g = launch.torchrun_int("LOCAL_WORLD_SIZE", world, low=1)
        return (world // g, g) if g and world % g == 0 else None
    if network is not None and network.cluster is not None:
        return (network.cluster.nodes, network.cluster.ranks_per_node)
    return None


def _check_hierarchical(config: SweepSpec, shape) -> None:
    """SweepSpec has refused collectives without a two-level plan; here: the run's shape and the root."""
    if shape is None or shape[0] < 2 or shape[1] < 2:
        where = "one host" if shape is None else f"{shape[0]} node(s) x {shape[1]} rank(s)"
        raise UsageError(
            f"-A hierarchical runs an intra-node then an inter-node phase, and this run is {where}: "
            "run it on a testbed with several ranks per host (ranks-per-host=2), under torchrun "
            "across nodes, or group local ranks into nodes with --nodes N --ranks-per-node G "
            "(and their links, e.g. --intra-bandwidth/--inter-bandwidth)"
        )
    if not roots_at_zero(config.collective, config.root):
        raise UsageError(
            f"--root {config.root}: -A hierarchical's root is rank 0 (the first rank of the first node); drop --root"
        )


def _check_ranks(config: SweepSpec, ranks: int, prebuilt=(), shape=None) -> None:
    for a in config.algorithms:
        if is_two_level(a):
            _check_hierarchical(config, shape)
        elif is_flat(a) and a not in prebuilt:
            reason = get_algorithm(config.collective, a).unavailable(ranks)
            if reason:
                raise UsageError(f"{config.collective} {a} cannot run on {ranks} ranks: {reason}")
    if get_collective(config.collective).rooted and not 0 <= config.root < ranks:
        raise UsageError(f"root {config.root} is not a rank of 0..{ranks - 1}")


# --- -A auto ----------------------------------------------------------------------------------------------


def auto_plan(job: BenchJob, world: int, network: Network | None, ranks_per_host: int) -> BenchJob:
    """The job with what `-A auto` runs at each size: chosen here from the given network (--profile, --cluster
    or link options), or left to the ranks (`auto` None) to choose after a quick calibration of this run's own
    network (runtime/auto/run.py auto_here)."""
    job = dataclasses.replace(job, auto_ranks_per_host=max(1, min(ranks_per_host, world)))
    if network is None:
        return job
    return dataclasses.replace(job, auto=tuple(choices_for(job, network)), auto_network=f"given: {network.describe()}")


# --- what the machine can hold ------------------------------------------------------------------------

# Resident memory of one rank once torch is imported and gloo is up, before any buffer: 232 MiB (243 MB)
# measured with the CPU wheel of torch 2.13 (ru_maxrss of the ranks of `collperf bench --ranks 2 -b 1K -e 16K`),
# rounded up for other builds and Python versions.
TORCH_RANK_BYTES = 300 * 10**6
CHECK_BYTES = 32 << 20  # runtime/data.py builds expected values in chunks of 2^18 elements (index, values)
FORCE_HINT = "pass --force (API: BenchSpec(force=True)) to run it anyway"


def max_local_ranks() -> int:
    """More local ranks than this is a typo or a machine-wide mistake, not a benchmark."""
    return max(64, 8 * (os.cpu_count() or 1))


def rank_memory_bytes(config: SweepSpec, p: int, gpu: bool = False) -> int:
    """Peak host memory of one rank for the sweep: torch itself, then at the largest size the send and receive
    buffers, one buffer's worth of scratch (receive slices and forwarded chunks of our schedules, the
    backend's own temporaries) and the check's chunks. On GPUs the buffers live in device memory."""
    coll, itemsize = get_collective(config.collective), DTYPE_BYTES[config.dtype]
    worst = 0
    for size in config.sizes():
        _, _, in_elems, out_elems = coll.counts(size, p, itemsize)
        worst = max(worst, (in_elems + out_elems + max(in_elems, out_elems)) * itemsize)
    return TORCH_RANK_BYTES + CHECK_BYTES + (0 if gpu else worst)


def available_memory_bytes() -> int | None:
    """MemAvailable of /proc/meminfo (what can be allocated without swapping), None where unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def check_capacity(
    config: SweepSpec, local_ranks: int, force: bool = False, gpu: bool = False, spawned: bool = True
) -> list[str]:
    """Refuse (UsageError) a sweep this machine cannot hold: more local ranks than max_local_ranks(), or an
    estimated memory above MemAvailable; return warnings for one above 80 % of it. `force` turns refusals
    into warnings. Under torchrun (spawned=False) only warnings: the launcher has already started us."""
    notes = []
    limit = max_local_ranks()
    if spawned and local_ranks > limit:
        why = (
            f"--ranks {local_ranks} is more local processes than this machine can run (limit max(64, 8 x "
            f"{os.cpu_count()} cores) = {limit})"
        )
        if not force:
            raise UsageError(f"{why}: give fewer ranks, use torchrun across hosts, or {FORCE_HINT}")
        notes.append(why + "; running anyway (--force)")
    per_rank = rank_memory_bytes(config, max(local_ranks, 1), gpu)
    need, have = per_rank * local_ranks, available_memory_bytes()
    if have is None:
        return notes
    gib = 2**30
    what = (
        f"{local_ranks} ranks x {per_rank / gib:.2f} GiB (torch {TORCH_RANK_BYTES / gib:.2f} GiB + buffers, "
        f"scratch and check at {max(config.sizes())} B) = {need / gib:.1f} GiB, and {have / gib:.1f} GiB is "
        "available (/proc/meminfo MemAvailable)"
    )
    if need > have:
        if spawned and not force:
            raise UsageError(f"the sweep needs an estimated {what}: lower -e/--maxbytes or --ranks, or {FORCE_HINT}")
        notes.append(f"the sweep may not fit in memory: {what}")
    elif need > 0.8 * have:
        notes.append(f"the sweep needs most of the memory left: {what}")
    return notes


# --- predictions --------------------------------------------------------------------------------------


def fit_link(results: Results) -> Link | None:
    """alpha, bandwidth and reduce bandwidth fitted to the run's rows of our own algorithms."""
    from scipy.optimize import nnls

    rows_a, rows_t = [], []
    p, segments = results.ranks, results.config["segments"]
    for r in results.rows:
        if is_runtime_only(r.algorithm) or not r.correct():
            continue  # never fit to a wrong run
        name, k = r.ran_as()  # auto's rows: the algorithm auto ran, with its segments
        k = k or segments
        if name not in _registered(results.collective):
            continue  # blink, patterns: no closed form in the registry
        alg = get_algorithm(results.collective, name)
        a, b, c = coefficients(results.collective, alg.name, p, k if alg.pipeline else None)
        t = r.out_of_place.p50_us * 1e-6
        if t > 0:
            rows_a.append(np.array([a, b * r.size, c * r.size]) / t)  # relative error
            rows_t.append(1.0)
    if len(rows_a) < 2:
        return None
    (alpha, beta, gamma), _ = nnls(np.array(rows_a), np.array(rows_t))
    if alpha <= 0 and beta <= 0:
        return None
    # sizes too small to show a bandwidth term fit beta = 0: an unresolved (infinite) bandwidth
    return Link(alpha, 1 / beta if beta > 0 else math.inf, 1 / gamma if gamma > 0 else math.inf, name="fitted")


def _registered(collective: str) -> set[str]:
    return {a.name for a in algorithms_for(collective)}


def add_predictions(results: Results, network: Network | None) -> None:
    if network is None:
        link = fit_link(results)
        if link is None:
            results.model = (
                "no prediction (give --latency/--bandwidth or --cluster; too few rows of our algorithms to fit)"
            )
            return
        network = Network.of(link, results.ranks)
        results.model = f"fitted to this run: {link.describe()}"
    else:
        if network.ranks != results.ranks:
            raise UsageError(f"the network has {network.ranks} ranks but the run has {results.ranks}")
        results.model = f"given: {network.describe()}"
    results.rows = predict_rows(results, network, results.rows)


def predict_rows(results: Results, network: Network, rows: list[Row]) -> list[Row]:
    """The rows with their predicted_us: each algorithm's model time, the model's best for `builtin`."""
    if not rows:
        return []
    rows = [Row.of(r) for r in rows]
    sizes = sorted({r.size for r in rows})
    phase = default_phase(results.collective)  # what -A hierarchical runs (model/two_level/build.py build_two_level)
    costs, _ = candidates(
        results.collective,
        network,
        sizes,
        segments=results.config["segments"],
        intra_algorithm=phase,
        inter_algorithm=phase,
    )
    table = {c.name: dict(zip(sizes, c.cost.total_s)) for c in costs}
    best = dict(zip(sizes, lowest([c.cost for c in costs], [c.name for c in costs])[0].total_s))
    return [r.with_prediction(_predicted_us(r, table, best)) for r in rows]


def _predicted_us(r: Row, table: dict, best: dict) -> float | None:
    if is_chooser(r.algorithm):  # the prediction auto chose by (given or calibrated network)
        return r.auto["predicted_us"]
    t = best[r.size] if is_runtime_only(r.algorithm) else table.get(r.algorithm, {}).get(r.size)
    return float(t) * 1e6 if t else None
