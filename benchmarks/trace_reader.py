"""Reading profiler traces at the scale of a job: `collperf trace`'s reader against loading the whole JSON.

Writes synthetic Kineto traces (ProfilerSteps of CPU ops, kernel launches, GEMM kernels and NCCL kernels with
PyTorch's collective metadata, in torch.profiler's layout) under a temporary folder, deleted at the end, and
measures each case in a fresh process, so that its peak resident memory (getrusage ru_maxrss; the largest
worker's for a pool) and its CPU time are its own:

  one file (--mb, default 100 MB):
    json      json.load of the whole file and a walk over its events (what a reader that loads the file does)
    old       the pure-Python streaming scanner alone (read_rank without the C parser: the fallback)
    c-alone   the C parser alone: msgspec over runs of whole events, nothing kept (stream.scan's batches)
    new       collperf.trace.read_rank: the C parser and the reduction to calls, intervals and steps
    analyse   the whole `collperf trace` analysis (api.trace) on the file
  jobs (--ranks 8,64,1024 files of --rank-mb each, default 1 MB): api.trace with 1, 2 and all cores
  --big: the 1,024-rank job of 10 MB per rank (10 GB on disk), all cores; with --dask also through a local
         Dask cluster of worker processes, the JSON compared with the pool's
  --hta: Holistic Trace Analysis (pip install HolisticTraceAnalysis) on the same 8-rank folder

    .venv/bin/python benchmarks/trace_reader.py [--mb 100] [--ranks 8,64,1024] [--rank-mb 1] [--big] [--dask] [--hta]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src")
CASES = {
    "idle": "pass",
    "json": (
        "import gzip, json; f = gzip.open(PATH, 'rt') if PATH.endswith('.gz') else open(PATH);"
        "d = json.load(f); n = sum(1 for e in d['traceEvents'] if e.get('cat') == 'kernel')"
    ),
    "old": "from collperf.trace import read_rank; n = len(read_rank(PATH, c_parser=False).calls)",
    "c-alone": (
        "from collperf.trace import fast, stream; n = stream.scan(PATH, lambda e: None, None, "
        "(fast.decode, lambda run: True))['traceEvents']"
    ),
    "new": "from collperf.trace import read_rank; n = len(read_rank(PATH).calls)",
    "analyse": "from collperf import api; n = len(api.trace(PATH, jobs=1).collectives)",
}
JOB = (
    "from collperf import api; r = api.trace(PATH, jobs=JOBS, engine=ENGINE); OUT and open(OUT, 'w').write("
    "__import__('json').dumps(r.to_json(), sort_keys=True)); n = len(r.collectives)"
)
HTA = "from hta.trace_analysis import TraceAnalysis; a = TraceAnalysis(trace_dir=PATH); n = len(a.t.traces)"


def _head(rank: int, world: int) -> str:
    ranks = list(range(world))
    head = {
        "schemaVersion": 1,
        "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "numSms": 132}],
        "distributedInfo": {
            "backend": "nccl",
            "rank": rank,
            "world_size": world,
            "nccl_version": "2.21.5",
            "pg_count": 1,
            "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "ranks": ranks}],
        },
        "host_name": f"node{rank // 8}",
    }
    return json.dumps(head)[:-1] + ', "traceEvents": [\n'


def _body(megabytes: float, world: int) -> tuple[str, int]:
    """The events of about `megabytes` MB: 50 ms steps of 400 CPU ops, each launching a kernel, every tenth an
    8 MiB-per-rank all-reduce; and their count."""
    target, parts, written, events, step, t = megabytes * 1e6, [], 0, 0, 0, 1.0e9
    group = json.dumps(list(range(world)))
    while written < target:
        chunk = [
            {
                "ph": "X",
                "cat": "user_annotation",
                "name": f"ProfilerStep#{step}",
                "pid": 1,
                "tid": 1,
                "ts": t,
                "dur": 50_000.0,
                "args": {},
            }
        ]
        for i in range(400):
            corr, ts, nccl = step * 1000 + i, t + i * 100.0, i % 10 == 9
            chunk.append(
                {
                    "ph": "X",
                    "cat": "cpu_op",
                    "name": "aten::mm",
                    "pid": 1,
                    "tid": 1,
                    "ts": ts,
                    "dur": 20.0,
                    "args": {
                        "External id": corr,
                        "Input Dims": [[4096, 4096], [4096, 4096]],
                        "Input type": ["c10::BFloat16", "c10::BFloat16"],
                        "Sequence number": corr,
                    },
                }
            )
            chunk.append(
                {
                    "ph": "X",
                    "cat": "cuda_runtime",
                    "name": "cudaLaunchKernel",
                    "pid": 1,
                    "tid": 1,
                    "ts": ts + 5,
                    "dur": 4.0,
                    "args": {"External id": corr, "cbid": 211, "correlation": corr},
                }
            )
            args = {
                "External id": corr,
                "device": 0,
                "stream": 20 if nccl else 7,
                "correlation": corr,
                "registers per thread": 96,
                "shared memory": 0,
                "grid": [16, 1, 1],
                "block": [640, 1, 1],
            }
            if nccl:
                args.update(
                    {
                        "Collective name": "allreduce",
                        "In msg nelems": 4194304,
                        "Out msg nelems": 4194304,
                        "Group size": world,
                        "dtype": "BFloat16",
                        "In split size": "[]",
                        "Out split size": "[]",
                        "Process Group Name": "0",
                        "Process Group Description": "default_pg",
                        "Process Group Ranks": group,
                        "Seq": step * 40 + i // 10,
                    }
                )
            name = (
                "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
                if nccl
                else "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64"
            )
            chunk.append(
                {
                    "ph": "X",
                    "cat": "kernel",
                    "name": name,
                    "pid": 0,
                    "tid": args["stream"],
                    "ts": ts + 30,
                    "dur": 400.0 if nccl else 80.0,
                    "args": args,
                }
            )
        text = ",\n".join(json.dumps(e) for e in chunk)
        parts.append(text)
        written += len(text)
        events += len(chunk)
        t += 50_000.0
        step += 1
    return ",\n".join(parts) + '\n], "traceName": "synthetic"}\n', events


def write_trace(path: Path, megabytes: float, rank: int = 0, world: int = 8) -> int:
    """Rank `rank` of a `world`-rank job, about `megabytes` MB; returns its event count."""
    body, events = _body(megabytes, world)
    path.write_text(_head(rank, world) + body)
    return events


def write_job(folder: Path, ranks: int, megabytes: float) -> list[Path]:
    """One file per rank (rank{r}.json), the same events on every rank (the calls match one for one)."""
    body, _ = _body(megabytes, ranks)
    files = []
    for r in range(ranks):
        files.append(Path(folder) / f"rank{r}.json")
        files[-1].write_text(_head(r, ranks) + body)
    return files


def measure(code: str, path: Path, **names) -> dict:
    """Wall and CPU seconds (this process and its children) and the peak RSS (the larger of this process's and
    its largest child's) of `code`, in a fresh interpreter with collperf's reader imported (Linux)."""
    prelude = "".join(f"{k} = {v!r}\n" for k, v in names.items())
    script = (
        f"import resource, time, sys; PATH = {str(path)!r}\n{prelude}import collperf.trace.read, collperf.api\n"
        "R = resource; c0 = R.getrusage(R.RUSAGE_SELF); w0 = time.perf_counter()\n"
        f"{code}\nw = time.perf_counter() - w0; s, c = R.getrusage(R.RUSAGE_SELF), R.getrusage(R.RUSAGE_CHILDREN)\n"
        "cpu = s.ru_utime + s.ru_stime - c0.ru_utime - c0.ru_stime + c.ru_utime + c.ru_stime\n"
        # VmHWM: this process's own peak (ru_maxrss would include the benchmark's before the exec)
        "hwm = next(int(x.split()[1]) for x in open('/proc/self/status') if x.startswith('VmHWM'))\n"
        "print(w, cpu, max(hwm, c.ru_maxrss))"
    )
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=7200)
    if done.returncode:
        raise SystemExit(f"{code[:60]}...: {done.stderr.strip().splitlines()[-1]}")
    wall, cpu, kib = done.stdout.split()[-3:]
    return {"wall_s": float(wall), "cpu_s": float(cpu), "peak_MB": int(kib) / 1024}


def one_file(tmp: Path, megabytes: float) -> None:
    path = tmp / "rank0.json"
    events = write_trace(path, megabytes)
    size_MB = path.stat().st_size / 1e6
    print(f"one file: {size_MB:.1f} MB, {events} events")
    found = {case: measure(code, path) for case, code in CASES.items()}
    base = found["idle"]["peak_MB"]
    print(f"{'case':<9} {'wall s':>7} {'cpu s':>7} {'MB/s/core':>10} {'peak MB':>8} {'over idle':>10}")
    for case, r in found.items():
        if case != "idle":
            print(
                f"{case:<9} {r['wall_s']:7.2f} {r['cpu_s']:7.2f} {size_MB / r['cpu_s']:10.1f} {r['peak_MB']:8.0f} "
                f"{r['peak_MB'] - base:10.0f}"
            )
    j, n = found["json"], found["new"]
    print(
        f"new vs json.load per core: {j['cpu_s'] / n['cpu_s']:.1f}x; vs the old scanner: "
        f"{found['old']['cpu_s'] / n['cpu_s']:.1f}x (idle interpreter: {base:.0f} MB)"
    )
    path.unlink()


def job(tmp: Path, ranks: int, megabytes: float, jobs_list, engines=("local",), hta: bool = False) -> None:
    folder = tmp / f"job{ranks}"
    folder.mkdir()
    files = write_job(folder, ranks, megabytes)
    total_MB = sum(f.stat().st_size for f in files) / 1e6
    digests = {}
    for engine in engines:
        for jobs in jobs_list:
            out = tmp / f"out-{ranks}-{engine}-{jobs}.json"
            r = measure(JOB, folder, JOBS=jobs, ENGINE=engine, OUT=str(out))
            digests[(engine, jobs)] = hashlib.sha256(out.read_bytes()).hexdigest()[:12]
            print(
                f"{ranks:>5} ranks x {megabytes:g} MB ({total_MB:,.0f} MB) {engine:>10} jobs={jobs}: "
                f"{r['wall_s']:7.1f} s wall, {r['cpu_s']:7.1f} s cpu, {total_MB / r['wall_s']:6.1f} MB/s, peak "
                f"{r['peak_MB']:6.0f} MB, JSON {digests[(engine, jobs)]}"
            )
            out.unlink()
    if len(set(digests.values())) > 1:
        print(f"  the JSON differs between runs: {digests}")
    if hta:
        try:
            r = measure(HTA, folder)
            print(f"{ranks:>5} ranks: HTA {r['wall_s']:.1f} s wall, {r['cpu_s']:.1f} s cpu, peak {r['peak_MB']:.0f} MB")
        except SystemExit as e:
            print(f"HTA not measured: {e}")
    for f in files:
        f.unlink()
    folder.rmdir()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=100.0, help="the one file's size in MB (0: skip)")
    parser.add_argument("--ranks", default="8,64,1024", help="rank counts of the jobs ('' to skip)")
    parser.add_argument("--rank-mb", type=float, default=1.0, help="MB per rank file of those jobs")
    parser.add_argument("--big", action="store_true", help="the 1,024-rank job of 10 MB per rank, all cores")
    parser.add_argument("--dask", action="store_true", help="with --big: also through a local Dask cluster")
    parser.add_argument("--hta", action="store_true", help="HTA on the 8-rank job (--hta-mb per rank)")
    parser.add_argument("--hta-mb", type=float, default=10.0)
    args = parser.parse_args()
    cores = len(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory() as tmp:
        if args.mb:
            one_file(Path(tmp), args.mb)
        for ranks in [int(r) for r in args.ranks.split(",") if r]:
            job(Path(tmp), ranks, args.rank_mb, sorted({1, 2, cores}))
        if args.hta:
            job(Path(tmp), 8, args.hta_mb, [cores], hta=True)
        if args.big:
            job(Path(tmp), 1024, 10.0, [cores], ("local",) + (("local-dask",) if args.dask else ()))


if __name__ == "__main__":
    main()
