"""Rank files read side by side: a process pool on this machine (default: its cores) or the workers of a Dask
cluster (`dask://HOST:PORT`, or `local-dask` for a LocalCluster of worker processes). Each worker reads one file
into its RankTrace (calls, computation intervals, steps: read.read_rank, the same function the serial path
runs), so the parent never holds an event, only what every rank's analysis needs.

Why Dask rather than Ray: a scheduler that users of HPC clusters already run next to their data (dask-jobqueue
starts workers as Slurm/PBS jobs, dask-mpi inside an allocation), a plain `pip install distributed` with no
daemon of its own, and results returned with pickle as the pool returns them; Ray would add a cluster runtime
for one map over files.

Before the run a memory estimate (the largest file's share per worker, every rank's calls in the parent)
is set against the memory available: a run that cannot fit is refused with what to change, one that nearly
fits is noted. Ctrl-C stops the workers (they ignore SIGINT; the parent terminates them); nothing is written
before the analysis is complete.
"""

from __future__ import annotations

import os
import signal
import struct
from dataclasses import dataclass
from pathlib import Path

from collperf.errors import RunError, UsageError
from collperf.spec.trace import LOCAL, engine_address
from collperf.trace.read import read_rank

# A pool costs each worker an interpreter start and the reader's imports (about 0.5 s): below this many bytes
# in all, one process reads faster than a pool starts.
POOL_FROM_BYTES = 32 << 20
# Memory, measured on the synthetic traces of benchmarks/trace_reader.py (peak RSS): an interpreter with the
# reader imported, plus the window and one run of decoded events; and what a RankTrace keeps per byte of
# trace (0.105 on a trace with a collective every 30 events, rounded up).
WORKER_BASE_MB = 80.0
KEPT_PER_BYTE = 0.15
# Every wait is bounded: a file gets this long, plus a second per MB (the pure-Python reader's worst rate on
# a loaded core is several MB/s), before the run is stopped as stuck (a hung filesystem, a lost worker).
STALL_S = 600.0


@dataclass(frozen=True)
class Progress:
    """What a run has done so far: files and their bytes (on disk)."""

    files_done: int
    files: int
    bytes_done: int
    bytes: int


@dataclass(frozen=True)
class MemoryEstimate:
    workers: int  # processes reading on this machine (0: the workers are a cluster's)
    worker_MB: float  # each
    parent_MB: float  # this process: every rank's calls and intervals
    available_MB: float | None  # what the machine has available now (None: not known)

    @property
    def total_MB(self) -> float:
        return self.workers * self.worker_MB + self.parent_MB

    def check(self) -> list[str]:
        """Refuse (UsageError) an estimate above the available memory; a note when it is above 70% of it."""
        if self.available_MB is None:
            return []
        words = (
            f"reading needs about {self.total_MB:,.0f} MB ({self.workers} workers x {self.worker_MB:,.0f} MB "
            f"and {self.parent_MB:,.0f} MB for every rank's calls here) of {self.available_MB:,.0f} MB "
            "available"
        )
        if self.total_MB > self.available_MB:
            raise UsageError(
                f"{words}: give fewer --jobs, or --engine dask://SCHEDULER:8786 so that the reading "
                "runs on a cluster's workers, or fewer rank files"
            )
        return [f"{words}: close to the limit"] if self.total_MB > 0.7 * self.available_MB else []


def trace_bytes(path: Path) -> int:
    """A file's size as JSON: a gzip file's own record of it (ISIZE, modulo 4 GiB), or its size on disk."""
    size = path.stat().st_size
    if path.suffix != ".gz" or size < 18:
        return size
    with open(path, "rb") as f:
        f.seek(-4, os.SEEK_END)
        isize = struct.unpack("<I", f.read(4))[0]
    return isize if isize >= size else size * 10  # past 4 GiB the record wraps: a usual ratio instead


def available_MB() -> float | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (ValueError, OSError, AttributeError):
        return None


def estimate(sizes: list[int], workers: int) -> MemoryEstimate:
    largest = max(sizes, default=0)
    return MemoryEstimate(
        workers,
        WORKER_BASE_MB + KEPT_PER_BYTE * largest / 2**20 if workers else 0.0,
        WORKER_BASE_MB + KEPT_PER_BYTE * sum(sizes) / 2**20,
        available_MB(),
    )


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def read_files(
    files: list, jobs: int | None = None, engine: str | None = None, on_progress=None
) -> tuple[list, list[str]]:
    """Every file's RankTrace, in the order given, and notes on how they were read. `jobs`: processes (None:
    the cores, where the files are big enough to repay a pool; 1: this process); `on_progress(Progress)` after
    each file."""
    kind, address = engine_address(engine)
    paths = [Path(f) for f in files]
    if not paths:
        return [], []
    sizes = [trace_bytes(p) for p in paths]
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise UsageError(f"--jobs {jobs}: expected a whole number of processes, 1 or more")
    if jobs is None:
        jobs = cores() if sum(sizes) >= POOL_FROM_BYTES or kind != LOCAL else 1
    workers = min(jobs, len(paths)) if kind != "dask" else 0
    notes = estimate(sizes, workers if workers > 1 or kind != LOCAL else 0).check()
    done = _Done(on_progress, [p.stat().st_size for p in paths])
    if kind == LOCAL and workers <= 1:
        return [done(read_rank(p)) for p in paths], notes
    run = _pool if kind == LOCAL else _dask
    # how the files were read is not among the notes: the report is the same whichever way they were
    return run(paths, workers, address, done, STALL_S + max(sizes) / 2**20), notes


class _Done:
    """Counts finished files and calls the progress callback."""

    def __init__(self, on_progress, disk_sizes: list[int]):
        self.on_progress, self.sizes = on_progress, disk_sizes
        self.files = self.bytes = 0

    def __call__(self, trace, index: int | None = None):
        self.files += 1
        self.bytes += self.sizes[self.files - 1 if index is None else index]
        if self.on_progress is not None:
            self.on_progress(Progress(self.files, len(self.sizes), self.bytes, sum(self.sizes)))
        return trace


def _quiet_worker() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's: it stops the pool


def _read_one(item):
    index, path = item
    return index, read_rank(path)


def _pool(paths, workers, _address, done, stall_s) -> list:
    import multiprocessing
    import threading

    # fork where this process runs one thread (no start-up, and a script without a __main__ guard works);
    # with threads (a progress bar's) fork is unsafe: workers forked from a server that imported the reader
    # once, or spawned where there is no forkserver
    methods = multiprocessing.get_all_start_methods()
    method = (
        "fork"
        if "fork" in methods and threading.active_count() == 1
        else "forkserver"
        if "forkserver" in methods
        else "spawn"
    )
    ctx = multiprocessing.get_context(method)
    if method == "forkserver":
        ctx.set_forkserver_preload(["collperf.trace.read"])
    out: list = [None] * len(paths)
    pool = ctx.Pool(workers, initializer=_quiet_worker)
    try:
        results = pool.imap_unordered(_read_one, list(enumerate(map(str, paths))), chunksize=1)
        for _ in paths:
            try:
                index, trace = results.next(timeout=stall_s)
            except multiprocessing.TimeoutError:
                left = [str(p) for p, t in zip(paths, out) if t is None]
                raise RunError(
                    f"no rank file was read in {stall_s:.0f} s ({len(left)} left, e.g. {left[0]}): a "
                    "filesystem that does not answer, or a worker lost; check the files can be read "
                    "(head -c 100 FILE) and run again"
                ) from None
            out[index] = done(trace, index)
        pool.close()
    finally:
        pool.terminate()  # on Ctrl-C or an error in one file: the others stop now
        pool.join()
    return out


def _dask(paths, workers, address, done, stall_s) -> list:
    try:
        import distributed
    except ImportError:
        raise UsageError(
            "--engine dask needs Dask's distributed scheduler: pip install 'collperf[dask]' (or "
            "pip install dask distributed)"
        ) from None
    cluster = None
    try:
        if address is None:
            cluster = distributed.LocalCluster(
                n_workers=max(1, workers), threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
            )
            client = distributed.Client(cluster, timeout=60)
        else:
            try:
                client = distributed.Client(address, timeout=60)
            except OSError as e:
                raise UsageError(
                    f"--engine dask://{address[6:]}: no Dask scheduler answers there ({e}); start one "
                    "(dask scheduler; dask worker ADDRESS on each node) or check the address"
                ) from None
        # the workers open the files by these paths: a filesystem they share with this machine
        futures = client.map(read_rank, [str(p.resolve()) for p in paths], pure=False)
        index = {f.key: i for i, f in enumerate(futures)}
        out: list = [None] * len(paths)
        try:
            for future in distributed.as_completed(futures, timeout=stall_s * max(1, len(paths) // max(1, workers))):
                i = index[future.key]
                out[i] = done(future.result(), i)
        except distributed.TimeoutError:
            raise RunError(
                f"the Dask cluster did not read every rank file in time ({sum(t is None for t in out)} "
                "left): check its workers (client.dashboard_link) and that they see the files"
            ) from None
        finally:
            client.cancel(futures)
            client.close()
        return out
    finally:
        if cluster is not None:
            cluster.close()
