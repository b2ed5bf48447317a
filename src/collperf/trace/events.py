"""One rank's trace, boiled down while it streams: collective calls, computation intervals, steps.

What is kept per event kind (everything else is dropped as it is read):
  GPU `kernel` events: NCCL/RCCL kernels become calls (their args carry PyTorch's collective metadata);
      the others are computation intervals, placed in a step by the time of their launch (the
      `cuda_runtime`/`cuda_driver` event with the same correlation id);
  `gloo:*` annotations (the gloo work on its own thread: its duration) paired with the `c10d::*` op that
      enqueued it (its shapes, with record_shapes=True);
  CPU ops on other threads: the computation of a trace that has no GPU kernels (a gloo job on CPUs);
  `ProfilerStep#N` annotations: the steps.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field

import numpy as np

from collperf.trace import checks as C

C10D_PREFIX = "c10d::"
GLOO_PREFIX = "gloo:"
STEP_PREFIX = "ProfilerStep#"
LAUNCH_CATS = ("cuda_runtime", "cuda_driver", "hip_runtime", "hip_driver")
# what a collective kernel's args say that is read (PyTorch's torch/csrc/profiler/util.h names)
KERNEL_ARGS = (
    "Collective name",
    "In msg nelems",
    "Out msg nelems",
    "Group size",
    "dtype",
    "In split size",
    "Process Group Name",
    "Process Group Description",
    "Process Group Ranks",
    "Seq",
    "correlation",
    "External id",
)


@dataclass(slots=True)  # a job's calls are held together (ranks x calls): no __dict__ each
class Call:
    """One collective call on one rank."""

    rank: int
    process_group: str
    pg_ranks: tuple
    collective: str
    size_bytes: int | None  # nccl-tests' size; None where the trace does not say
    dtype: str
    group_size: int
    algorithm: str  # what NCCL ran (from the kernel name), '-' where unknown (gloo, generic kernels)
    protocol: str
    start_s: float
    time_s: float
    launch_s: float  # when the host issued it: places the call in a step
    seq: int | None = None  # PyTorch's sequence number in its group, where the trace has it
    splits: str = ""  # all-to-all split sizes, as the trace gives them
    state: str = ""  # a Flight Recorder entry's state ('scheduled', 'started', 'completed')
    timed: bool = True  # time_s measured by the record (False: estimated, or nan where unknown)
    seq_scope: str = ""  # what `seq` counts within its group: NCCL numbers each collective type apart

    @property
    def end_s(self) -> float:
        return self.start_s + self.time_s


@dataclass
class HostOp:
    """A c10d op (the enqueue, on the caller's thread) or a gloo work annotation (the run, on gloo's thread)."""

    name: str
    ts: float
    dur: float
    dims: list
    types: list


def launch_times(launches: array, correlations: np.ndarray, default: np.ndarray) -> np.ndarray:
    """The launch time of each correlation id (`default` where no launch event has it)."""
    if not len(launches) or not len(correlations):
        return default
    pairs = np.frombuffer(launches, dtype=float).reshape(-1, 2)
    order = np.argsort(pairs[:, 0], kind="stable")
    ids, ts = pairs[order, 0], pairs[order, 1]
    i = np.clip(np.searchsorted(ids, correlations), 0, len(ids) - 1)
    return np.where(ids[i] == correlations, ts[i], default)


@dataclass
class Collected:
    """What one file's scan keeps."""

    kernels: list = field(default_factory=list)  # NCCL/RCCL kernels: their name, times and the args read
    gpu_compute: array = field(default_factory=lambda: array("d"))  # start, end, correlation triples
    launches: array = field(default_factory=lambda: array("d"))  # correlation id, launch ts pairs
    cpu_ops: array = field(default_factory=lambda: array("d"))  # tid, start, end triples
    c10d: list = field(default_factory=list)  # HostOp
    gloo: list = field(default_factory=list)  # HostOp
    gloo_tids: set = field(default_factory=set)
    steps: list = field(default_factory=list)  # (name, start, end)
    comms_meta: dict = field(default_factory=dict)  # External id -> a record_param_comms op's metadata
    kernel_count: int = 0
    events: int = 0  # events seen (the index of the next)
    skipped: int = 0  # events that could not be read
    skip_reasons: list = field(default_factory=list)  # the first few, with their index

    def bad(self, index: int, why: str) -> None:
        """An element of traceEvents that is not a readable event (the stream's report)."""
        self.events += 1
        self.reject(f"event {index}", why)

    def reject(self, where: str, why: str) -> None:
        """Skip what cannot be read and count it; the first few reasons are kept to show."""
        self.skipped += 1
        if len(self.skip_reasons) < 3:
            self.skip_reasons.append(f"{where}: {why}")

    def add(self, e: dict) -> None:
        index = self.events
        self.events += 1
        if e.get("ph") != "X":
            return
        try:
            self._add(e)
        except C.BadValue as why:
            self.reject(f"event {index}", str(why))

    def _add(self, e: dict) -> None:
        """One complete event, its fields checked before they are kept (a bad one raises BadValue)."""
        name = C.text(e.get("name"), "name")
        cat = C.text(e.get("cat", ""), "cat").lower()
        ts, dur = C.timestamp(e.get("ts")), C.duration(e.get("dur"))
        args = e.get("args")
        if args is None:
            args = {}
        elif not isinstance(args, dict):
            raise C.BadValue(f"args {C._show(args)} is not an object")
        if cat == "kernel":
            self.kernel_count += 1
            if name.startswith(("nccl", "rccl")) and "Kernel" in name[:16]:
                if dur <= 0:
                    raise C.BadValue("a collective kernel of zero duration: its time cannot be judged")
                self.kernels.append(
                    {
                        "name": name,
                        "ts": ts,
                        "dur": dur,
                        "args": C.kernel_args(args, KERNEL_ARGS),
                        "index": self.events - 1,
                    }
                )
            else:
                corr = args.get("correlation")
                corr = -1 if corr is None else C.identifier(corr, "args.correlation")
                self.gpu_compute.extend((ts, ts + dur, corr if isinstance(corr, int) else -1))
            return
        if cat in LAUNCH_CATS:
            corr = args.get("correlation")
            if corr is not None:
                self.launches.extend((C.whole(corr, "args.correlation", -C.MAX_ID, C.MAX_ID), ts))
            return
        if name.startswith(STEP_PREFIX) and not cat.startswith("gpu"):
            self.steps.append((name, ts, ts + dur))
            return
        tid = e.get("tid")
        tid = None if tid is None else C.identifier(tid, "tid")
        if name.startswith(GLOO_PREFIX):
            self.gloo.append(
                HostOp(
                    name,
                    ts,
                    dur,
                    C.dims(args.get("Input Dims"), "args.'Input Dims'"),
                    C.types(args.get("Input type"), "args.'Input type'"),
                )
            )
            self.gloo_tids.add(tid)
            return
        if cat != "cpu_op":
            return
        if name.startswith(C10D_PREFIX):
            self.c10d.append(
                HostOp(
                    name,
                    ts,
                    dur,
                    C.dims(args.get("Input Dims"), "args.'Input Dims'"),
                    C.types(args.get("Input type"), "args.'Input type'"),
                )
            )
        elif "Collective name" in args and args.get("External id") is not None:  # a null id joins nothing
            # record_param_comms: the metadata an older PyTorch does not copy to the kernel it launches
            meta = C.kernel_args(args, KERNEL_ARGS)
            self.comms_meta[meta["External id"]] = meta
        self.cpu_ops.extend((float(tid) if isinstance(tid, int) else -1.0, ts, ts + dur))


KINETO = "kineto"


@dataclass
class RankTrace:
    source: str
    rank: int
    world_size: int
    backend: str
    nccl_version: str | None
    gpu: str | None
    host: str | None
    groups: dict  # process group label -> ranks
    calls: list
    compute: np.ndarray  # (k, 3): start_s, end_s, launch_s of each computation interval
    steps: list  # (name, start_s, end_s)
    notes: list = field(default_factory=list)
    windows: dict = field(default_factory=dict)  # group -> GroupWindow: what a Flight Recorder dump covers
    kind: str = KINETO  # the record it was read from: 'kineto' or 'flight recorder'
    # (k, 2): start_s, end_s of the host's CPU ops (any thread), disjoint; a GPU trace's only (a CPU job's CPU
    # ops are its computation): what the host was doing while the GPU sat idle
    host_ops: np.ndarray = field(default_factory=lambda: np.empty((0, 2)))
    links: list = field(default_factory=list)  # LinkWait per peer: NCCL's proxy waits (profiler plugin traces)
