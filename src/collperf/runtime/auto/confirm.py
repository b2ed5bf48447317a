"""-A auto's confirmation on real ranks: a close call between ours and the built-in timed on the actual size.

The rule, its rounds and its cache are model/auto/confirm.py's; this times both candidates on the group:
`reps` rounds, each running ours and the built-in once (runtime/rounds.py: their order alternating, each
after a barrier), the time of each call summed over the group's ranks (all_reduce) so that every rank sees
the same times and makes the same decision. A collective call: every rank of the group confirms the same
choices in the same order.
"""

from __future__ import annotations

import time

import torch
import torch.distributed as dist

from collperf.collectives import get_collective
from collperf.model.two_level.build import build, build_two_level
from collperf.model.algorithms.modes import is_two_level
from collperf.model.auto.confirm import confirm
from collperf.model.auto.select import AutoChoice
from collperf.runtime.builtin import run_builtin
from collperf.runtime.auto.builtin_fit import group_key
from collperf.runtime.execute import run_schedule
from collperf.runtime.launch import device, sync
from collperf.runtime.rounds import timed_round

_DECISIONS: dict = {}  # model/auto/confirm.py's cache: (group, collective, root, octave, algorithm, segments)


def confirm_choices(
    choices: list[AutoChoice],
    collective: str,
    root: int = 0,
    group=None,
    slice_bytes: int = 0,
    two_level=None,
    dev=None,
) -> list[AutoChoice]:
    """auto's `choices` with each close call measured on `group` (cached per size octave for the process).
    two_level: [nodes, ranks per node] where a choice may be `hierarchical`."""
    coll = get_collective(collective)

    def measure(algorithm: str, segments, size_bytes: int, reps: int) -> tuple[list[float], list[float]]:
        return time_both(
            coll, algorithm, segments, size_bytes, root, group, slice_bytes, two_level, reps, dev or device()
        )

    return confirm(choices, measure, _DECISIONS, (*group_key(group), coll.name, root))


def time_both(
    coll, algorithm: str, segments, size_bytes: int, root: int, group, slice_bytes: int, two_level, reps: int, dev
) -> tuple[list[float], list[float]]:
    """(our times, the built-in's) in seconds at `size_bytes`, one pair per round, interleaved; each time the
    mean over the group's ranks."""
    p = dist.get_world_size(group)
    _, _, in_elems, out_elems = coll.counts(size_bytes, p, 4)
    inp = torch.ones(in_elems, dtype=torch.float32, device=dev)
    out = torch.zeros(out_elems, dtype=torch.float32, device=dev)
    segments = segments or 1  # not pipelined: the builders take 1
    schedule = (
        build_two_level(coll.name, *two_level, segments=segments)
        if is_two_level(algorithm)
        else build(coll.name, algorithm, p, root=root, segments=segments)
    )
    calls = (
        lambda: run_schedule(schedule, inp, out, "sum", in_elems, slice_bytes, group=group),
        lambda: run_builtin(coll, inp, out, "sum", root, group),
    )
    for call in calls:  # warm-up: connections, buffers, the schedule's first use
        call()
    samples = torch.zeros(2, reps, dtype=torch.float64)
    for i in range(reps):  # each round: both, each after a barrier, who goes first alternating
        times = timed_round(
            (0, 1), i, dict(enumerate(calls)), lambda: dist.barrier(group=group), time.perf_counter, lambda: sync(dev)
        )
        samples[0, i], samples[1, i] = times[0], times[1]
    dist.all_reduce(samples, group=group)
    ours, theirs = ((row / p).tolist() for row in samples)
    return ours, theirs
