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
  --hta: `collperf trace DIR --json` against Holistic Trace Analysis on the same 8-rank folder of --hta-mb per
         rank (default 10,100: one folder per size), interleaved (collperf, HTA, collperf, HTA... --rounds times),
         each a whole command measured from outside: wall, CPU of the process tree (os.wait4: it and the
         children it reaped), its largest process's peak RSS, and the tree's summed RSS and PSS sampled every
         0.1 s. HTA runs in --hta-python, an interpreter where `pip install HolisticTraceAnalysis 'pandas<3'`
         worked (HTA 0.5.0 fails with pandas 3): TraceAnalysis(trace_dir=DIR), then get_temporal_breakdown and
         get_comm_comp_overlap (visualize=False), what an HTA user runs first on a distributed job.

    .venv/bin/python benchmarks/trace_reader.py [--mb 100] [--ranks 8,64,1024] [--rank-mb 1] [--big] [--dask]
        [--hta --hta-python /path/to/hta-venv/bin/python --hta-mb 10,100 --rounds 2]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
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
HTA = (
    "import sys; from hta.trace_analysis import TraceAnalysis; a = TraceAnalysis(trace_dir=sys.argv[1]); "
    "a.get_temporal_breakdown(visualize=False); a.get_comm_comp_overlap(visualize=False)"
)


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


def _env() -> dict:
    """This environment with the repository's collperf first on the path."""
    return {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}


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
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=_env(), check=False, timeout=7200
    )
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


def job(tmp: Path, ranks: int, megabytes: float, jobs_list, engines=("local",)) -> None:
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
    for f in files:
        f.unlink()
    folder.rmdir()


def _tree(root: int) -> list[int]:
    """`root` and its descendants now, from /proc (Linux)."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(entry.path, "stat").read_text()
            except OSError:  # gone since the listing
                continue
            ppid = int(stat[stat.rindex(")") + 2 :].split()[1])  # the name in () may hold spaces
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def _memory_kib(pids: list[int]) -> tuple[int, int]:
    """Summed RSS and PSS of `pids` (PSS shares the pages forked workers have in common, RSS counts them in each)."""
    rss = pss = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Rss:"):
                    rss += int(line.split()[1])
                elif line.startswith("Pss:"):
                    pss += int(line.split()[1])
        except OSError:  # exited between the listing and the read
            pass
    return rss, pss


# A small interpreter that forks the command and reports its wait4 usage: a process's ru_maxrss starts from the
# peak of the process it was forked from (exec keeps the old image's high-water mark), and this benchmark's own
# peak (writing 100 MB files) would otherwise show as the command's.
LAUNCH = (
    "import os, sys, time; w0 = time.perf_counter(); pid = os.fork()\n"
    "if pid == 0: os.execvp(sys.argv[2], sys.argv[2:])\n"
    "_, status, u = os.wait4(pid, 0)\n"
    "open(sys.argv[1], 'w').write(f'{time.perf_counter() - w0} {u.ru_utime + u.ru_stime} {u.ru_maxrss} '"
    "f'{os.waitstatus_to_exitcode(status)}')"
)


def measure_command(argv: list[str], out: Path, env: dict, timeout_s: float = 3600.0) -> dict:
    """Wall and CPU seconds of a whole command (interpreter start and imports included; CPU of it and the
    children it reaped), the peak RSS of its largest process (wait4's ru_maxrss) and the peak of its process
    tree's summed RSS and PSS, sampled every 0.1 s (a shorter peak can be missed); stdout to `out`, stderr to
    `out`.err. Killed past timeout_s."""
    usage = Path(f"{out}.usage")
    with open(out, "wb") as stdout, open(f"{out}.err", "wb") as stderr:
        launcher = subprocess.Popen(
            [sys.executable, "-c", LAUNCH, str(usage), *argv],
            stdout=stdout,
            stderr=stderr,
            env=env,
            start_new_session=True,
        )
        w0, tree_rss, tree_pss = time.perf_counter(), 0, 0
        while launcher.poll() is None:
            if time.perf_counter() - w0 > timeout_s:
                os.killpg(launcher.pid, 9)
                launcher.wait(timeout=60)
                raise SystemExit(f"{argv[:3]}... ran past {timeout_s:.0f} s: stopped")
            rss, pss = _memory_kib(_tree(launcher.pid)[1:])  # the command's tree, not the launcher
            tree_rss, tree_pss = max(tree_rss, rss), max(tree_pss, pss)
            time.sleep(0.1)
    wall, cpu, kib, code = usage.read_text().split() if launcher.returncode == 0 else (0, 0, 0, "launcher failed")
    usage.unlink(missing_ok=True)
    if code != "0":
        tail = Path(f"{out}.err").read_text(errors="replace").strip().splitlines()[-1:]
        raise SystemExit(f"{argv[:3]}... exited {code}: {tail}")
    return {
        "wall_s": float(wall),
        "cpu_s": float(cpu),
        "peak_MB": int(kib) / 1024,
        "tree_rss_MB": tree_rss / 1024,
        "tree_pss_MB": tree_pss / 1024,
    }


def versus_hta(tmp: Path, megabytes: float, hta_python: str, rounds: int) -> None:
    """`collperf trace DIR --json` (default jobs) and HTA on the same 8-rank folder, interleaved round by round."""
    folder = tmp / f"hta{megabytes:g}"
    folder.mkdir()
    files = write_job(folder, 8, megabytes)
    total_MB = sum(f.stat().st_size for f in files) / 1e6
    sides = {
        "collperf": [sys.executable, "-m", "collperf", "trace", str(folder), "--json"],
        "HTA": [hta_python, "-c", HTA, str(folder)],
    }
    print(f"8 ranks x {megabytes:g} MB ({total_MB:,.0f} MB), {rounds} rounds, collperf then HTA in each")
    found: dict[str, list[dict]] = {side: [] for side in sides}
    for round_ in range(rounds):
        for side, argv in sides.items():
            load0 = os.getloadavg()[0]
            r = measure_command(argv, tmp / "out.txt", _env())
            found[side].append(r)
            print(
                f"  round {round_ + 1} {side:<8}: {r['wall_s']:6.1f} s wall, {r['cpu_s']:6.1f} s cpu, largest process "
                f"{r['peak_MB']:5.0f} MB, tree RSS {r['tree_rss_MB']:5.0f} MB, PSS {r['tree_pss_MB']:5.0f} MB "
                f"(load {load0:.1f} -> {os.getloadavg()[0]:.1f})"
            )
            if side == "collperf":  # the report, so a run that printed nothing is not counted as fast
                report = json.loads((tmp / "out.txt").read_text())
                calls = sum(c["calls"] for c in report["collectives"])
                same = (tmp / "out.txt").read_text().replace(str(folder), "DIR")  # the same from run to run
                print(
                    f"    {len(report['collectives'])} collective kinds, {calls} calls matched across ranks, JSON "
                    f"(folder as DIR) sha256 {hashlib.sha256(same.encode()).hexdigest()[:12]}"
                )
    median = {side: {k: statistics.median(r[k] for r in runs) for k in runs[0]} for side, runs in found.items()}
    c, h = median["collperf"], median["HTA"]
    print(
        f"  median: collperf {c['wall_s']:.1f} s wall ({c['cpu_s']:.1f} cpu), HTA {h['wall_s']:.1f} s wall "
        f"({h['cpu_s']:.1f} cpu): {h['wall_s'] / c['wall_s']:.1f}x wall, {h['cpu_s'] / c['cpu_s']:.1f}x cpu; tree PSS "
        f"{c['tree_pss_MB']:.0f} MB against {h['tree_pss_MB']:.0f} MB"
    )
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
    parser.add_argument("--hta", action="store_true", help="collperf trace against HTA on 8-rank folders")
    parser.add_argument("--hta-mb", default="10,100", help="MB per rank of those folders")
    parser.add_argument("--hta-python", default=sys.executable, help="an interpreter with HTA (and pandas<3)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of collperf then HTA per folder")
    args = parser.parse_args()
    cores = len(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory() as tmp:
        if args.mb:
            one_file(Path(tmp), args.mb)
        for ranks in [int(r) for r in args.ranks.split(",") if r]:
            job(Path(tmp), ranks, args.rank_mb, sorted({1, 2, cores}))
        if args.hta:
            for megabytes in [float(m) for m in args.hta_mb.split(",") if m]:
                versus_hta(Path(tmp), megabytes, args.hta_python, args.rounds)
        if args.big:
            job(Path(tmp), 1024, 10.0, [cores], ("local",) + (("local-dask",) if args.dask else ()))


if __name__ == "__main__":
    main()
