"""Start ranks and run a job on each: local processes (the default) or under torchrun.

Local: `ranks` processes spawned on this machine, meeting through a FileStore in a temporary
directory (no port to find), gloo over loopback (GLOO_SOCKET_IFNAME=lo), one thread per rank.
The parent watches them: a rank that dies or raises ends the whole run with a message naming the
rank and the cause; a run that passes its timeout is killed with the ranks that did not finish
named; in every case all children are killed and reaped before returning.

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
import tempfile
import time
import traceback
from dataclasses import dataclass
from datetime import timedelta

from collperf.errors import RunError, UsageError


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


def device():
    """The device this rank computes on: its GPU under NCCL, else the CPU."""
    import torch
    import torch.distributed as dist
    if dist.is_initialized() and dist.get_backend() == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def run_torchrun(job: Job, timeout_s: float):
    """Run `job` in this process, one rank of a torchrun launch."""
    import torch
    import torch.distributed as dist
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    if backend == "nccl":
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
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
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)   # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent_pid:
        os._exit(1)


def _worker(rank: int, world: int, store_path: str, job: Job, results, timeout_s: float, parent_pid: int) -> None:
    _die_with_parent(parent_pid)
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")   # a testbed host sets eth0
    os.environ["OMP_NUM_THREADS"] = "1"
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # the parent handles Ctrl-C and kills us
    try:
        import torch
        import torch.distributed as dist
        torch.set_num_threads(1)
        store = dist.FileStore(store_path, world)
        dist.init_process_group("gloo", store=store, rank=rank, world_size=world,
                                timeout=timedelta(seconds=timeout_s))
        results.put((rank, "ready", None))
        result = job.call()
        results.put((rank, "ok", result if rank == 0 else None))
        dist.destroy_process_group()
    except BaseException:   # report every failure to the parent, then exit non-zero
        results.put((rank, "error", traceback.format_exc(limit=6)))
        results.close()
        results.join_thread()   # flush the report before leaving
        os._exit(1)


def run_local(job: Job, ranks: int, timeout_s: float = 300.0):
    """Run `job` on `ranks` local processes; return rank 0's result or raise RunError."""
    if isinstance(ranks, bool) or not isinstance(ranks, int) or ranks < 1:
        raise UsageError(f"ranks {ranks!r} is not a positive whole number: give e.g. --ranks 4")
    if not timeout_s > 0:
        raise UsageError(f"timeout {timeout_s!r} s is not positive: give e.g. --timeout 300")
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    procs: list = []
    with tempfile.TemporaryDirectory(prefix="collperf-") as tmp:
        try:
            for rank in range(ranks):
                proc = ctx.Process(target=_worker, name=f"collperf-rank{rank}", daemon=True,
                                   args=(rank, ranks, os.path.join(tmp, "store"), job, results, timeout_s, os.getpid()))
                proc.start()
                procs.append(proc)
            return _supervise(procs, results, timeout_s)
        finally:
            _kill_all(procs)
            results.close()
            results.join_thread()


STARTUP_S = 120.0   # importing torch and meeting the other ranks, before the run's own timeout starts


def _supervise(procs, results, timeout_s: float):
    deadline = time.monotonic() + STARTUP_S
    ready: set[int] = set()
    done: dict[int, object] = {}
    errors: dict[int, str] = {}
    first_failure = None
    while len(done) < len(procs):
        try:
            rank, status, payload = results.get(timeout=0.1)
            if status == "ready":
                ready.add(rank)
                if len(ready) == len(procs):
                    deadline = time.monotonic() + timeout_s
            else:
                (done if status == "ok" else errors)[rank] = payload
        except queue_module.Empty:
            pass
        now = time.monotonic()
        dead = {r: p.exitcode for r, p in enumerate(procs) if p.exitcode not in (None, 0) and r not in done}
        if (errors or dead) and first_failure is None:
            first_failure = now
        if first_failure is not None and now - first_failure > 1.0:   # let the others report too
            raise RunError(_failure_message(errors, dead, len(procs)))
        if now > deadline:
            missing = [r for r in range(len(procs)) if r not in done]
            if len(ready) < len(procs):
                raise RunError(f"rank(s) {', '.join(str(r) for r in range(len(procs)) if r not in ready)} did not "
                               f"start within {STARTUP_S:g} s; all ranks were killed")
            raise RunError(f"the run did not finish within its timeout of {timeout_s:g} s: rank(s) "
                           f"{', '.join(map(str, missing))} still running (a hang, or --timeout too short); "
                           "all ranks were killed")
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
        return (f"rank {rank} of {world} died ({signal_name(code)}); the run was stopped and all ranks killed")
    # a rank that raised for a reason of its own, rather than because a peer went away
    own = {r: e for r, e in errors.items() if "Connection reset" not in e and "Connection closed" not in e}
    rank, text = min((own or errors).items()) if (own or errors) else (min(dead), f"exit status {dead[min(dead)]}")
    last = text.strip().splitlines()[-1] if text else ""
    return f"rank {rank} of {world} failed: {last}; the run was stopped and all ranks killed"


class _FileChannel:
    """The parent's side of runtime/worker.py's FileReporter: reports as they appear in a directory."""

    def __init__(self, directory: str):
        self.directory, self.seen = directory, set()

    def get(self, timeout: float):
        names = sorted(n for n in os.listdir(self.directory) if n.startswith("msg-") and n.endswith(".pkl")
                       and n not in self.seen)
        if not names:
            time.sleep(timeout)
            raise queue_module.Empty
        self.seen.add(names[0])
        with open(os.path.join(self.directory, names[0]), "rb") as f:
            return pickle.load(f)


class _Subprocess:
    """A Popen with the few methods of multiprocessing.Process the supervisor uses."""

    def __init__(self, popen: subprocess.Popen):
        self.popen = popen

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


def run_testbed(job: Job, testbed, timeout_s: float = 300.0):
    """Run `job` with testbed.ranks ranks, rank r inside host r // ranks_per_host (gloo on its eth0)."""
    procs: list = []
    with tempfile.TemporaryDirectory(prefix="collperf-tb-") as tmp:
        with open(os.path.join(tmp, "job.pkl"), "wb") as f:
            pickle.dump((job, testbed.ranks, timeout_s, os.getpid()), f)
        env = {**os.environ, "GLOO_SOCKET_IFNAME": "eth0", "OMP_NUM_THREADS": "1",
               "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        try:
            for rank in range(testbed.ranks):
                cmd = ["ip", "netns", "exec", testbed.host(testbed.host_of(rank)), sys.executable, "-m",
                       "collperf.runtime.worker", tmp, str(rank)]
                procs.append(_Subprocess(subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL,
                                                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)))
            return _supervise(procs, _FileChannel(tmp), timeout_s)
        finally:
            _kill_all(procs)


def _kill_all(procs) -> None:
    for p in procs:
        if p.is_alive():
            p.kill()
    for p in procs:
        p.join(timeout=5)
