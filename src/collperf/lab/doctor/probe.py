"""One doctor test on the ranks of a group (runs in each rank, torch imported): a ring allreduce of collperf's own
schedule (the schedule the model prices) repeated, each repeat timed as the slowest rank's; alone (one rank),
a local reduction of the same buffer.

Fault injection of the testbed (lab/doctor/testbed.py), given per rank: `delay_s` a CPU delay (a busy wait) before
each repeat, what a rank slowed on its host's CPU costs; `kill_at` a wall-clock time (time.time(), shared by the
namespaces) at which the rank kills itself with SIGKILL, at once if it has passed: a host that dies.
"""

from __future__ import annotations

import os
import signal
import threading
import time

from collperf.model.two_level.build import build
from collperf.runtime.execute import run_schedule

ALONE_BYTES = 64 << 20
MAX_REPEATS = 200


def _die_at(when: float) -> None:
    def die():
        time.sleep(max(0.0, when - time.time()))
        os.kill(os.getpid(), signal.SIGKILL)

    if when <= time.time():
        os.kill(os.getpid(), signal.SIGKILL)
    threading.Thread(target=die, name="collperf-doctor-kill", daemon=True).start()


def _spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def _round_barrier(directory: str, test: int, tests: int, wait_s: float) -> None:
    """Every test of a round starts timing together, after all have started (imports, rendezvous): a test timed
    while another's ranks import torch would be slowed by them. Rank 0 of each test writes its mark in the
    round's directory and waits, at most wait_s, for every test's: a test that never comes (a dead host)
    holds the others no longer than that."""
    open(os.path.join(directory, f"ready-{test}"), "w").close()
    end = time.monotonic() + wait_s
    while time.monotonic() < end:
        if sum(1 for name in os.listdir(directory) if name.startswith("ready-")) >= tests:
            return
        time.sleep(0.02)


def allreduce(
    size_bytes: int,
    repeats: int,
    warmup: int,
    delay_s: dict,
    kill_at: dict,
    barrier: tuple | None = None,
    window_s: float = 0.0,
    group=None,
    device: str = "cpu",
) -> list[float]:
    """Every repeat's time in seconds (the slowest rank's), on rank 0; delay_s and kill_at map a rank to its
    injected fault; barrier (directory, this test, tests of the round, wait in s) starts the round's tests
    together, and each repeats until window_s has passed since. `group`: the test's process group (None: the
    world); `device`: where the buffers live (cuda:N with NCCL)."""
    import torch
    import torch.distributed as dist

    rank, p = dist.get_rank(group), dist.get_world_size(group)
    root = dist.get_global_rank(group, 0) if group is not None else 0
    if barrier is not None and rank == 0:
        _round_barrier(*barrier)
    if p > 1:
        dist.barrier(group=group)
    if rank in kill_at:
        _die_at(kill_at[rank])
    delay = delay_s.get(rank, 0.0)
    elements = max(1, size_bytes // 4)
    inp, out = torch.ones(elements, device=device), torch.empty(elements, device=device)
    sync = torch.cuda.synchronize if str(device).startswith("cuda") else (lambda: None)
    schedule = build("allreduce", "ring", p) if p > 1 else None
    # repeats go on until the round's window closes (at least `repeats`, at most MAX_REPEATS): tests that share a
    # link then share it for every repeat, not only until the first of them is done; rank 0 decides for all
    end = time.time() + window_s
    times, flag = [], torch.ones(1, device=device)
    i = 0
    while True:
        if p > 1:
            flag.fill_(1.0 if i < warmup + repeats or time.time() < end and i < MAX_REPEATS else 0.0)
            dist.broadcast(flag, root, group=group)
            go = bool(flag.item())
        else:
            go = i < warmup + repeats or time.time() < end and i < MAX_REPEATS
        if not go:
            break
        sync()
        start = time.perf_counter()
        if delay:
            _spin(delay)
        if schedule is None:  # alone: ALONE_BYTES of local reduction, long enough to outlast a time slice
            out.copy_(inp)
            for _ in range(max(1, ALONE_BYTES // (elements * 4))):
                out.add_(inp)
        else:
            run_schedule(schedule, inp, out, "sum", elements, group=group)
        sync()
        if i >= warmup:
            times.append(time.perf_counter() - start)
        i += 1
    # every rank's repeats, the slowest rank's time of each (ranks agree on the count: rank 0 decided)
    if p > 1:
        t = torch.tensor(times, dtype=torch.float64, device=device)
        dist.all_reduce(t, op=dist.ReduceOp.MAX, group=group)
        times = t.tolist()
    return times
