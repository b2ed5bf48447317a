"""Start ranks and run a job on each: local processes (the default) or under torchrun.

Local: `ranks` processes spawned on this machine, meeting through a FileStore in a temporary
directory (no port to find; runtime/owned.py names its owner, so that the next run removes it if this
launcher is killed), gloo over loopback (GLOO_SOCKET_IFNAME=lo), one thread per rank.
The parent watches them: a rank that dies or raises ends the whole run with a message naming the
rank and the cause; a run that passes its timeout is killed with the ranks that did not finish
named; in every case all children are killed and reaped before returning.

Every rank reports on one channel to the launcher (a pipe per rank locally: no semaphore for a killed
launcher to leak, and a rank stopped mid-write blocks no other; files in a
shared directory on a testbed): "started" (before torch is imported), "ready" (process group up),
a heartbeat every HEARTBEAT_S with the step of the sweep it is at (`progress`, with the step's expected
time per iteration, and `tick` once per iteration), what rank 0 chooses to stream (`report`, e.g. each
finished bench row), then "ok" or "error". A watchdog (runtime/stall.py) ends the run as soon as a rank
makes no progress for max(10 s, k x its step's expected time), naming the rank, its pid and its phase; on
a timeout the launcher names the rank(s) that stopped progressing: stopped by a signal (/proc state T),
silent, or behind the others.

torchrun: RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT come from the environment (env://), the
backend is NCCL when CUDA is available (each rank on cuda:LOCAL_RANK), gloo otherwise.
"""

from __future__ import annotations

import importlib
import multiprocessing as mp
import os
import pickle
import queue as queue_module
import signal
import subprocess
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from datetime import timedelta

from collperf.errors import RunError, UsageError
from collperf.runtime import owned
from collperf.runtime.channels import FileChannel, PipeReporter, Pipes
from collperf.runtime.stall import Ranks


class RunTimeout(RunError):
    """The run passed its start-up or run timeout (the message names the ranks that stopped progressing)."""


class RunStalled(RunTimeout):
    """The watchdog ended the run: a rank made no progress for its bound. `culprit` names it in a few words
    (rank, pid, phase), for the footer of what was measured."""

    def __init__(self, message: str, culprit: str):
        super().__init__(message)
        self.culprit = culprit


@dataclass(frozen=True)
class Job:
    """`target` is 'module:function', called on every rank as function(*args) after the process
    group is up; what rank 0 returns is the run's result."""

    target: str
    args: tuple = ()

    def call(self):
        module, name = self.target.split(":")
        return getattr(importlib.import_module(module), name)(*self.args)


def in_torchrun() -> bool:
    return "RANK" in os.environ and "WORLD_SIZE" in os.environ and "TORCHELASTIC_RUN_ID" in os.environ


def torchrun_int(name: str, default: int | None = None, low: int = 0) -> int:
    """A whole number torchrun puts in the environment (RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, LOCAL_RANK),
    checked: a hand-set variable with a typo is a usage error naming it, not a traceback."""
    text = os.environ.get(name)
    if text is None and default is not None:
        return default
    try:
        value = int(str(text).strip())
    except ValueError:
        value = None
    if value is None or value < low:
        raise UsageError(
            f"environment variable {name}={text!r}: expected a whole number >= {low} (torchrun sets "
            f"it; unset RANK, WORLD_SIZE and TORCHELASTIC_RUN_ID to run local ranks with --ranks)"
        )
    return value


def device():
    """The device this rank computes on: its GPU under NCCL, else the CPU."""
    import torch
    import torch.distributed as dist

    if dist.is_initialized() and dist.get_backend() == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def sync(dev) -> None:
    """Wait for the device's queued work (a GPU's kernels run asynchronously), so that a clock read after it
    times the work; nothing to wait for on the CPU."""
    import torch

    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


# --- what a running job tells the launcher --------------------------------------------------------------

HEARTBEAT_S = 1.0
STARTUP_S = 120.0  # importing torch and meeting the other ranks, before the run's own timeout starts
_CHANNEL = None  # (rank, channel) in a rank spawned by run_local / run_testbed
_LOCAL_HANDLER = None  # under torchrun: on_message(rank, kind, payload), called in this process
_STEP = [0, "", 0, None]  # this rank's progress: steps done, what it is doing, iterations, expected s each


def report(kind: str, payload=None) -> None:
    """Send a message to the launcher (or, under torchrun, to this process's own handler)."""
    if _CHANNEL is not None:
        rank, channel = _CHANNEL
        channel.put((rank, kind, payload))
    elif _LOCAL_HANDLER is not None:
        _LOCAL_HANDLER(kind, payload)


def progress(step: int, what: str, expected_s: float | None = None) -> None:
    """This rank is at `step` of its work, doing `what`, each iteration of which should take about
    `expected_s` (None: unknown, the watchdog's floor applies): sent at once and with every heartbeat."""
    _STEP[:] = [step, what, 0, expected_s]
    report("progress", tuple(_STEP))


def tick() -> None:
    """One more iteration of the current step done: a counter the next heartbeat carries (no message of its
    own, so that a loop of microsecond iterations costs nothing), so that a long step still shows progress."""
    _STEP[2] += 1


def _heartbeat() -> None:
    """A thread that says 'alive, at step N' every HEARTBEAT_S: a rank stopped by a signal goes silent
    (all its threads stop), while one that waits for a peer inside a collective keeps beating."""

    def beat():
        while True:
            time.sleep(HEARTBEAT_S)
            try:
                report("beat", tuple(_STEP))
            except (OSError, ValueError):  # the channel is closed: the rank is leaving
                return

    threading.Thread(target=beat, name="collperf-heartbeat", daemon=True).start()


def run_torchrun(job: Job, timeout_s: float, on_message=None):
    """Run `job` in this process, one rank of a torchrun launch; `on_message(rank, kind, payload)` gets
    this rank's own reports (rank 0's streamed rows)."""
    global _LOCAL_HANDLER
    import torch
    import torch.distributed as dist

    if on_message is not None:
        rank = torchrun_int("RANK")
        _LOCAL_HANDLER = lambda kind, payload: on_message(rank, kind, payload)  # noqa: E731
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    if backend == "nccl":
        torch.cuda.set_device(torchrun_int("LOCAL_RANK", 0))
    dist.init_process_group(backend, init_method="env://", timeout=timedelta(seconds=timeout_s))
    try:
        return job.call()
    finally:
        dist.destroy_process_group()


def _die_with_parent(parent_pid: int) -> None:
    """Linux: have the kernel kill this rank if the launcher dies, even by SIGKILL (PR_SET_PDEATHSIG),
    so that no rank outlives its run. The signal only covers a parent that dies after it is set: a
    launcher killed while this rank was still starting (importing, unpickling) has already handed us
    to init, so check that the parent is still the launcher and leave at once if not."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent_pid:
        os._exit(1)


def worker_main(rank: int, world: int, store_path: str, job: Job, results, timeout_s: float, parent_pid: int) -> None:
    global _CHANNEL
    _die_with_parent(parent_pid)
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")  # a testbed host sets eth0
    os.environ["OMP_NUM_THREADS"] = "1"
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and kills us
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # blocked by the launcher while it spawned us
    if not hasattr(results, "put"):  # the write end of this rank's pipe to a local launcher
        results = PipeReporter(results)
    _CHANNEL = (rank, results)
    report("started", os.getpid())
    _heartbeat()
    try:
        import torch
        import torch.distributed as dist

        torch.set_num_threads(1)
        report("imported")
        store = dist.FileStore(store_path, world)
        dist.init_process_group("gloo", store=store, rank=rank, world_size=world, timeout=timedelta(seconds=timeout_s))
        results.put((rank, "ready", None))
        result = job.call()
        results.put((rank, "ok", result if rank == 0 else None))
        dist.destroy_process_group()
    except BaseException:  # report every failure to the parent, then exit non-zero
        results.put((rank, "error", traceback.format_exc(limit=6)))
        results.close()
        results.join_thread()  # flush the report before leaving
        os._exit(1)


def run_local(job: Job, ranks: int, timeout_s: float = 300.0, startup_s: float = STARTUP_S, on_message=None):
    """Run `job` on `ranks` local processes; return rank 0's result or raise RunError. `startup_s` bounds the
    start (imports, rendezvous), `timeout_s` the run after it; `on_message(rank, kind, payload)` gets what
    the job reports (runtime.launch.report), as it arrives."""
    if isinstance(ranks, bool) or not isinstance(ranks, int) or ranks < 1:
        raise UsageError(f"ranks {ranks!r} is not a positive whole number: give e.g. --ranks 4")
    if not timeout_s > 0:
        raise UsageError(f"timeout {timeout_s!r} s is not positive: give e.g. --timeout 300")
    ctx = mp.get_context("spawn")
    procs: list = []
    readers: list = []
    with owned.tempdir("run") as tmp:
        try:
            with _children_ignore_sigint():
                for rank in range(ranks):
                    reader, writer = ctx.Pipe(duplex=False)  # one per rank: a stopped rank blocks no other
                    readers.append(reader)
                    proc = ctx.Process(
                        target=worker_main,
                        name=f"collperf-rank{rank}",
                        daemon=True,
                        args=(rank, ranks, os.path.join(tmp, "store"), job, writer, timeout_s, os.getpid()),
                    )
                    proc.start()
                    writer.close()  # the rank holds the only write end: its death is an end of file here
                    procs.append(proc)
            return _supervise(procs, Pipes(readers), timeout_s, startup_s, on_message)
        finally:
            _kill_all(procs)
            for reader in readers:
                reader.close()


class _children_ignore_sigint:
    """Ctrl-C goes to the whole foreground process group: ranks must not print a KeyboardInterrupt traceback
    while they start; the launcher handles Ctrl-C and kills them. So SIGINT is blocked in this (the spawning)
    thread while the ranks are spawned: they inherit the mask across exec and keep SIGINT blocked until
    worker_main has set it to be ignored. In the launcher, a Ctrl-C of that window is recorded, not ignored,
    and ends the run as soon as the ranks exist: a process-directed SIGINT that finds the main thread blocking
    it is taken by any other thread (torch's, a reader's), where an ignored disposition would drop it and the
    run would go on. Only the main thread may change signal handlers; elsewhere this does nothing."""

    def __enter__(self):
        self.old, self.installed, self.interrupted = None, False, False
        if threading.current_thread() is threading.main_thread():
            self.old = signal.signal(signal.SIGINT, self._record)
            self.installed = True
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})

    def _record(self, signum, frame):
        self.interrupted = True

    def __exit__(self, *exc):
        # `installed`, not the old handler: signal.signal returns None where the handler was set outside Python
        # (a C library's), and SIGINT must be unblocked whatever it was, or every process started later (a
        # subprocess inherits the mask) would never see a Ctrl-C
        if self.installed:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # a pending Ctrl-C is recorded here
            signal.signal(signal.SIGINT, self.old if self.old is not None else signal.default_int_handler)
            if self.interrupted and exc[0] is None:
                raise KeyboardInterrupt


def _supervise(procs, results, timeout_s: float, startup_s: float = STARTUP_S, on_message=None):
    state = Ranks(procs)
    deadline = time.monotonic() + startup_s
    done: dict[int, object] = {}
    errors: dict[int, str] = {}
    first_failure = None
    while len(done) < len(procs):
        try:
            for _ in range(10 * len(procs) + 100):  # drain what has arrived before looking at the clock
                rank, status, payload = results.get(timeout=0.05)
                state.heard(rank, status, payload)
                if status == "ready" and len(state.ready()) == len(procs):
                    deadline = time.monotonic() + timeout_s
                elif status == "ok":
                    done[rank] = payload
                elif status == "error":
                    errors[rank] = payload
                elif on_message is not None and status not in ("started", "imported", "ready", "beat", "progress"):
                    on_message(rank, status, payload)
        except queue_module.Empty:
            pass
        now = time.monotonic()
        dead = {r: p.exitcode for r, p in enumerate(procs) if p.exitcode not in (None, 0) and r not in done}
        stalled = state.watchdog(done, errors, dead)
        if stalled is not None and first_failure is None:
            raise RunStalled(*stalled)
        if (errors or dead) and first_failure is None:
            first_failure = now
        if first_failure is not None and now - first_failure > 1.0:  # let the others report too
            stalled = state.stall_message(errors, dead, timeout_s, startup_s)
            if stalled:  # the others timed out waiting for a stopped or silent rank
                raise RunTimeout(stalled)
            failure = RunError(_failure_message(errors, dead, len(procs)))
            # the ranks killed by a signal (not those that left because a peer went away): a caller names their hosts
            failure.killed_ranks = sorted(r for r, code in dead.items() if code is not None and code < 0)
            raise failure
        if now > deadline:
            raise RunTimeout(state.timeout_message(done, timeout_s, startup_s))
    return done.get(0)


def _failure_message(errors: dict, dead: dict, world: int) -> str:
    def signal_name(code):
        try:
            return signal.Signals(-code).name
        except (ValueError, TypeError):
            return f"exit status {code}"

    killed = {r: code for r, code in dead.items() if code is not None and code < 0}
    if killed:
        rank, code = min(killed.items())
        return f"rank {rank} of {world} died ({signal_name(code)}); the run was stopped and all ranks killed"
    # a rank that raised for a reason of its own, rather than because a peer went away
    own = {r: e for r, e in errors.items() if "Connection reset" not in e and "Connection closed" not in e}
    rank, text = min((own or errors).items()) if (own or errors) else (min(dead), f"exit status {dead[min(dead)]}")
    last = text.strip().splitlines()[-1] if text else ""
    return f"rank {rank} of {world} failed: {last}; the run was stopped and all ranks killed"


class _Subprocess:
    """A Popen with the few methods of multiprocessing.Process the supervisor uses."""

    def __init__(self, popen: subprocess.Popen):
        self.popen = popen
        self.pid = popen.pid  # `ip netns exec` execs the rank: the same process

    @property
    def exitcode(self):
        return self.popen.poll()

    def is_alive(self) -> bool:
        return self.popen.poll() is None

    def kill(self) -> None:
        self.popen.kill()

    def join(self, timeout=None) -> None:
        try:
            self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            pass


def run_testbed(job: Job, testbed, timeout_s: float = 300.0, on_message=None):
    """Run `job` with testbed.ranks ranks, rank r inside host r // ranks_per_host (gloo on its eth0)."""
    procs: list = []
    with owned.tempdir("tb") as tmp:
        with open(os.path.join(tmp, "job.pkl"), "wb") as f:
            pickle.dump((job, testbed.ranks, timeout_s, os.getpid()), f)
        # a switch testbed's host has its eth0; a topology testbed's its own address on id0
        env = {
            **os.environ,
            "GLOO_SOCKET_IFNAME": getattr(testbed, "ifname", "eth0"),
            "OMP_NUM_THREADS": "1",
            "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
        }
        try:
            for rank in range(testbed.ranks):
                cmd = [
                    "ip",
                    "netns",
                    "exec",
                    testbed.host(testbed.host_of(rank)),
                    sys.executable,
                    "-m",
                    "collperf.runtime.worker",
                    tmp,
                    str(rank),
                ]
                procs.append(
                    _Subprocess(
                        subprocess.Popen(
                            cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
                        )
                    )
                )
            return _supervise(procs, FileChannel(tmp), timeout_s, on_message=on_message)
        finally:
            _kill_all(procs)


def _kill_all(procs) -> None:
    for p in procs:
        if p.is_alive():
            p.kill()
    for p in procs:
        p.join(timeout=5)
