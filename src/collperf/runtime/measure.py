"""What every rank runs: timed sweeps (nccl-tests style) and bit-exact correctness checks.

Called through runtime/launch.py once the process group is up. Buffers follow nccl-tests: `count`
is the per-rank count nccl-tests passes to NCCL, `size` its size column; out-of-place uses separate
send and receive buffers, in-place the layouts nccl-tests uses (the receive buffer holding the send
data at the rank's offset).
"""

from __future__ import annotations

import os
import statistics
import time

import torch
import torch.distributed as dist

from collperf.collectives import get_collective
from collperf.ingest.row import Row, Timing
from collperf.model.two_level.build import build, build_two_level
from collperf.model.algorithms.modes import is_chooser, is_runtime_only, is_two_level
from collperf.model.auto.paired_ratio import paired_ratio
from collperf.model.trees import ceil_log2
from collperf.runtime import data, launch
from collperf.runtime.auto.run import auto_here
from collperf.runtime.builtin import run_builtin

# the quick calibration lives in runtime/auto/calibration.py; its job name stays collperf.runtime.measure:calibrate
from collperf.runtime.auto.calibration import calibrate, pingpong  # noqa: F401
from collperf.runtime.execute import run_schedule
from collperf.runtime.job import BenchJob
from collperf.runtime.launch import device, sync
from collperf.runtime.pace import Pace
from collperf.runtime.rounds import run_rounds, timed_round


def _buffers(coll, rank, p, in_elems, out_elems, dtype, op, root, in_place, dev):
    """(input, output) tensors on this rank, with the input data in place. In place (nccl-tests), the
    smaller buffer is block `rank` of the larger one (allgather: sendbuff = recvbuff + rank x count)."""
    if not in_place or in_elems == out_elems:
        inp = torch.empty(in_elems, dtype=dtype, device=dev)
        out = inp if in_place else torch.empty(out_elems, dtype=dtype, device=dev)
    elif out_elems > in_elems:  # allgather, gather: the input is the rank's block of the output
        out = torch.empty(out_elems, dtype=dtype, device=dev)
        inp = out[rank * in_elems : (rank + 1) * in_elems]
    else:  # reducescatter, scatter: the output is the rank's block of the input buffer
        inp = torch.empty(in_elems, dtype=dtype, device=dev)
        out = inp[rank * out_elems : (rank + 1) * out_elems]
    _reset(coll, rank, op, inp, out)
    return inp, out


def _reset(coll, rank, op, inp, out) -> None:
    """Zero the output, then write the input data (in place the input is a view of the output, or the
    output of the input: this order leaves the input's data whole). A fresh output before a check, so
    that values left by an earlier call cannot pass for a result."""
    out.zero_()
    data.fill_input(inp, coll, rank, op)


class _Runner:
    """One (collective, algorithm) on this process group: a callable op(inp, out). `auto` is auto's choice
    at this size (model/auto/select.py choices_for): the algorithm and segments it runs."""

    def __init__(
        self, coll, algorithm, p, op, root, segments, slice_bytes, in_elems, schedule=None, auto=None, two_level=None
    ):
        self.collective, self.op, self.root = coll, op, root
        if is_chooser(algorithm):
            algorithm, segments = auto["algorithm"], auto.get("segments") or segments
        if is_runtime_only(algorithm):
            self.call = lambda inp, out: run_builtin(coll, inp, out, op, root)
        else:
            if is_two_level(algorithm):  # two_level: [nodes, ranks per node] (lab/bench.py two_level_shape)
                schedule = build_two_level(coll.name, *two_level, segments=segments)
            # a prebuilt schedule (Blink's packed trees, patterns: built on a topology by the launcher)
            schedule = schedule or build(coll.name, algorithm, p, root=root, segments=segments)
            self.call = lambda inp, out: run_schedule(schedule, inp, out, op, in_elems, slice_bytes)


def check(
    collective,
    algorithm,
    count,
    dtype_name="float32",
    op="sum",
    root=0,
    segments=1,
    slice_bytes=1 << 20,
    in_place=False,
    schedule=None,
    two_level=None,
) -> int:
    """#wrong of one run: mismatching elements summed over all ranks. `schedule`: a prebuilt one (Blink's);
    two_level: [nodes, ranks per node] for algorithm "hierarchical"."""
    rank, p, dev = dist.get_rank(), dist.get_world_size(), device()
    coll = get_collective(collective)
    dtype = data.get_dtype(dtype_name)
    op_used = op if coll.reduces else "sum"
    in_elems, out_elems = coll.elements(count, p)
    inp, out = _buffers(coll, rank, p, in_elems, out_elems, dtype, op_used, root, in_place, dev)
    runner = _Runner(coll, algorithm, p, op_used, root, segments, slice_bytes, in_elems, schedule, two_level=two_level)
    return _check_on(runner, inp, out, in_elems, 1, dev, reset=False)


def _check_on(runner, inp, out, in_elems: int, times: int, dev, reset: bool = True) -> int:
    """#wrong over all ranks of `times` calls on these buffers, each on fresh data. The expected values are
    made chunk by chunk (runtime/data.py): O(chunk) extra memory, whatever the buffer size and p."""
    rank, p = dist.get_rank(), dist.get_world_size()
    coll, op = runner.collective, runner.op
    wrong = 0
    for _ in range(times):
        if reset:
            _reset(coll, rank, op, inp, out)
        runner.call(inp, out)
        sync(dev)
        wrong += data.check_output(out, coll, rank, p, in_elems, op, runner.root)
        reset = True
        launch.tick()
    total = torch.tensor([wrong], dtype=torch.int64, device=dev)
    dist.all_reduce(total)
    return int(total.item())


def selftest(cases) -> list[tuple[tuple, int]]:
    """Run check() for every case (a tuple of check's arguments); rank 0 returns (case, #wrong)."""
    return [(case, check(*case)) for case in cases]


def _combine(samples: list[float], average: int, dev) -> float:
    """nccl-tests -a: 0 rank 0's value, 1 the mean over ranks, 2 the min, 3 the max."""
    value = torch.tensor([samples], dtype=torch.float64, device=dev)
    gathered = [torch.zeros_like(value) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, value)
    table = torch.cat(gathered)
    return {0: table[0], 1: table.mean(0), 2: table.min(0).values, 3: table.max(0).values}[average].tolist()


def _time(runner, inp, out, iters: int, warmup: int, dev, phase=None) -> list[float]:
    """`phase(name)` tells the launcher's watchdog where this rank is; each iteration ticks."""
    phase = phase or (lambda name: None)
    phase("warm-up")
    for _ in range(warmup):
        runner.call(inp, out)
        launch.tick()
    sync(dev)
    dist.barrier()
    phase("timed loop")
    samples = []
    start = time.perf_counter()
    for _ in range(iters):
        t0 = time.perf_counter()
        runner.call(inp, out)
        sync(dev)
        samples.append(time.perf_counter() - t0)
        launch.tick()
    mean = (time.perf_counter() - start) / iters
    return [mean, min(samples), statistics.median(samples)]


def _devices(dev) -> list[dict]:
    """Every rank's host, pid and device (nccl-tests prints one '#  Rank N Group 0 Pid P on HOST device D
    [bus] NAME' line each), gathered on every rank."""
    import socket

    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"
    mine = {
        "rank": dist.get_rank(),
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "device": dev.index or 0,
        "name": name,
    }
    everyone = [None] * dist.get_world_size()
    dist.all_gather_object(everyone, mine)
    return everyone


def _peak_rss_bytes(dev) -> list[int]:
    """Every rank's peak resident memory so far (getrusage ru_maxrss: KiB on Linux), gathered."""
    import resource

    mine = torch.tensor([resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024], dtype=torch.int64, device=dev)
    everyone = [torch.zeros_like(mine) for _ in range(dist.get_world_size())]
    dist.all_gather(everyone, mine)
    return [int(t.item()) for t in everyone]


def bench(job: BenchJob) -> dict:
    """The sweep: for each algorithm, every size (so that each algorithm's nccl-tests block streams in
    order), timed out-of-place and in-place, then checked on the same buffers. Rank 0 reports each row
    as it completes (launch.report "row"); every rank reports its step (launch.progress)."""
    rank, p, dev = dist.get_rank(), dist.get_world_size(), device()
    dtype = data.get_dtype(job.dtype)
    coll, op, root = get_collective(job.collective), job.op, job.root
    op_used = op if coll.reduces else "sum"
    devices = _devices(dev)
    if rank == 0:
        launch.report("devices", devices)
    auto = auto_here(job, dev) if any(map(is_chooser, job.algorithms)) else None
    choices = {c["size"]: c for c in auto["choices"]} if auto else {}
    rows, step, pace = [], 0, Pace()
    for algorithm in job.algorithms:
        for size_bytes in job.sizes:
            count, size, in_elems, out_elems = coll.counts(size_bytes, p, dtype.itemsize)
            runner = _Runner(
                coll,
                algorithm,
                p,
                op_used,
                root,
                job.segments,
                job.slice_bytes,
                in_elems,
                (job.schedules or {}).get((algorithm, size_bytes)),
                choices.get(size_bytes),
                job.two_level,
            )
            timings = {}
            for placement in ("out_of_place", "in_place"):
                if placement == "in_place" and not (coll.in_place and job.in_place):
                    continue
                step += 1
                what = f"{algorithm} {size} B {placement.replace('_', '-')}"

                def phase(name, step=step, what=what, size_bytes=size_bytes):
                    launch.progress(step, f"{what}: {name}", pace.expected_s(size_bytes, name))

                timings[placement] = _measure(
                    runner,
                    coll,
                    rank,
                    p,
                    in_elems,
                    out_elems,
                    dtype,
                    op_used,
                    root,
                    placement == "in_place",
                    size,
                    job,
                    dev,
                    phase,
                )
                pace.measured(size_bytes, timings[placement].time_us * 1e-6)
            row = Row(
                algorithm=algorithm,
                size=size,
                count=count,
                type=data.NCCL_TESTS_TYPE[dtype],
                redop=op if coll.reduces else "none",
                root=root if coll.rooted else -1,
                auto=choices[size_bytes] if is_chooser(algorithm) else None,
                **timings,
            )
            rows.append(row)
            if rank == 0:
                launch.report("row", row)
    return {"rows": rows, "devices": devices, "peak_rss_bytes": _peak_rss_bytes(dev), "auto": auto}


def _measure(runner, coll, rank, p, in_elems, out_elems, dtype, op, root, in_place, size, job, dev, phase) -> Timing:
    """One placement of one row: time it, then check it on the same buffers (no second pair allocated);
    `phase(name)` reports each phase (buffers, warm-up, timed loop, check) to the launcher's watchdog."""
    phase("buffers")
    inp, out = _buffers(coll, rank, p, in_elems, out_elems, dtype, op, root, in_place, dev)
    mean, fastest, median = _combine(_time(runner, inp, out, job.iters, job.warmup, dev, phase), job.average, dev)
    if job.check:
        phase("check")
    wrong = _check_on(runner, inp, out, in_elems, job.check, dev) if job.check else None
    algbw, busbw = coll.bandwidths_GBps(size, p, mean) if mean > 0 else (0.0, 0.0)
    return Timing(
        time_us=mean * 1e6, min_us=fastest * 1e6, p50_us=median * 1e6, algbw_GBps=algbw, busbw_GBps=busbw, wrong=wrong
    )


# --- the measured lower bound -------------------------------------------------------


def chain(elements: int, chain_ranks: list[int], iters: int = 3) -> float:
    """Time for `elements` floats to be forwarded along chain_ranks (receive, then send on), from the
    first rank's send to the last rank's receive (measured on the first rank's clock: the last rank
    acknowledges with one float, whose one-way time is measured and taken off)."""
    rank, dev = dist.get_rank(), device()
    buf = torch.zeros(max(elements, 1), dtype=torch.float32, device=dev)
    ack = torch.zeros(1, device=dev)
    first, last = chain_ranks[0], chain_ranks[-1]
    one_way = pingpong(first, last, 1, 5, dev) if len(chain_ranks) > 1 else 0.0
    samples = []
    for _ in range(iters):
        dist.barrier()
        if rank == first:
            t0 = time.perf_counter()
            dist.send(buf, chain_ranks[1])
            dist.recv(ack, last)
            samples.append(time.perf_counter() - t0 - (one_way or 0.0))
        elif rank in chain_ranks:
            i = chain_ranks.index(rank)
            dist.recv(buf, chain_ranks[i - 1])
            if rank == last:
                dist.send(ack, first)
            else:
                dist.send(buf, chain_ranks[i + 1])
    return statistics.median(samples) if samples else 0.0


def reduce_time(elements: int, iters: int = 5) -> float:
    """Seconds to reduce `elements` floats into another buffer on this rank."""
    dev = device()
    a, b = torch.ones(max(elements, 1), device=dev), torch.ones(max(elements, 1), device=dev)
    a.add_(b)
    t0 = time.perf_counter()
    for _ in range(iters):
        a.add_(b)
    return (time.perf_counter() - t0) / iters


def measured_bound(size_bytes: int, p: int, chain_ranks: list[int]) -> dict:
    """The allreduce lower bound measured with a chain of processes: 2n(p-1)/p / ceil(lg p) items forwarded along
    ceil(lg p) + 1 processes, plus the time to reduce n(p-1)/p items."""
    n = size_bytes // 4
    hops = max(1, ceil_log2(p))
    per_hop = int(2 * n * (p - 1) / p / hops)
    forward = chain(per_hop, chain_ranks[: hops + 1])
    compute = reduce_time(int(n * (p - 1) / p))
    return {
        "forward_s": forward,
        "compute_s": compute,
        "bound_s": forward + compute,
        "items_per_hop": per_hop,
        "hops": hops,
    }


def head_to_head(job: BenchJob) -> dict:
    """Several algorithms of one collective timed side by side in rounds (runtime/rounds.py: each round runs
    every algorithm once, each after a barrier, the order reversed every other round), so that the load of
    a busy machine hits them alike; then each checked once. `job`: a bench job (collective,
    algorithms, sizes, iters, warmup, op, dtype, root, segments, slice_bytes, auto...; `min_time_s`
    (SweepSpec.min_time_s): more rounds than iters for short calls, up to this long per algorithm). An
    algorithm named twice is timed twice (builtin,builtin: the harness against itself), the second one
    labelled `builtin#2`. Rank 0 returns
    {label: [{size, p50_us, busbw, wrong, rounds, vs_last, auto?}]}; times are out-of-place, the p50 over
    rounds of the mean over ranks; vs_last is the median over rounds of the last algorithm's time over this
    one's (its speedup over the last, > 1: faster) with its bounds (model/auto/paired_ratio.py)."""
    rank, p, dev = dist.get_rank(), dist.get_world_size(), device()
    dtype = data.get_dtype(job.dtype)
    coll, op, root = get_collective(job.collective), job.op, job.root
    op_used = op if coll.reduces else "sum"
    auto = auto_here(job, dev) if any(map(is_chooser, job.algorithms)) else None
    choices = {c["size"]: c for c in auto["choices"]} if auto else {}
    labels = _labels(job.algorithms)
    table = {label: [] for label in labels}
    for size_bytes in job.sizes:
        count, size, in_elems, out_elems = coll.counts(size_bytes, p, dtype.itemsize)
        runners = {
            label: _Runner(
                coll, a, p, op_used, root, job.segments, job.slice_bytes, in_elems, auto=choices.get(size_bytes)
            )
            for label, a in labels.items()
        }
        buffers = {
            label: _buffers(coll, rank, p, in_elems, out_elems, dtype, op_used, root, False, dev) for label in runners
        }
        samples = _rounds(runners, buffers, job, dev)
        times = {label: _combine(s, 1, dev) for label, s in samples.items()}  # per round, the mean over ranks
        last = times[list(labels)[-1]]
        for label, runner in runners.items():
            t = statistics.median(times[label])
            wrong = _check_on(runner, *buffers[label], in_elems, 1, dev)
            algbw, busbw = coll.bandwidths_GBps(size, p, t) if t > 0 else (0.0, 0.0)
            row = {
                "size": size,
                "p50_us": t * 1e6,
                "busbw": busbw,
                "wrong": wrong,
                "rounds": len(times[label]),
                "vs_last": paired_ratio(last, times[label]).to_json(),
            }
            if is_chooser(labels[label]):
                row["auto"] = choices[size_bytes]
            table[label].append(row)
        del buffers
    return {"table": table, "auto_network": auto["network"] if auto else None}


def _labels(algorithms) -> dict[str, str]:
    """{label: algorithm}: each algorithm's own name, a repeat numbered (builtin, builtin#2)."""
    out = {}
    for a in algorithms:
        n = sum(1 for b in out.values() if b == a)
        out[a if n == 0 else f"{a}#{n + 1}"] = a
    return out


def _rounds(runners: dict, buffers: dict, job: BenchJob, dev) -> dict[str, list[float]]:
    """This rank's time of each call per timed round (runtime/rounds.py run_rounds): the last warm-up round,
    the slowest over the ranks, sets how many rounds fill job.min_time_s, the same count on every rank."""
    names = list(runners)
    calls = {a: (lambda a=a: runners[a].call(*buffers[a])) for a in names}
    step = lambda i: timed_round(names, i, calls, dist.barrier, time.perf_counter, lambda: sync(dev))
    return run_rounds(
        names,
        step,
        job.warmup,
        job.iters,
        job.min_time_s,
        lambda round_s: _slowest_over_ranks(round_s, dev),
        launch.tick,
    )


def _slowest_over_ranks(round_s: float, dev) -> float:
    slowest_round_s = torch.tensor([round_s], dtype=torch.float64, device=dev)
    dist.all_reduce(slowest_round_s, op=dist.ReduceOp.MAX)
    return float(slowest_round_s.item())
