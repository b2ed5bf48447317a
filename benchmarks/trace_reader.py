"""Reading a 100 MB profiler trace: `collperf trace`'s streaming reader against loading the whole JSON.

Writes a synthetic Kineto trace of one rank (default 100 MB: ProfilerSteps of CPU ops, kernel launches,
GEMM kernels and NCCL kernels with PyTorch's collective metadata, in torch.profiler's layout) and, each
in a fresh process so that its peak resident memory (getrusage ru_maxrss) is its own, measures:
  stream   collperf.trace.read_rank: events decoded one at a time, only calls/intervals/steps kept
  analyse  the whole `collperf trace` analysis (api.trace) on the file
  json     json.load of the whole file and a walk over its events (what a reader that loads the file does)
and prints wall time, peak memory over an idle interpreter with the same imports, and the ratios.

    .venv/bin/python benchmarks/trace_reader.py [--mb 100] [--gz]
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CASES = {
    "idle": "pass",
    "stream": "from collperf.trace import read_rank; t = read_rank(PATH); n = len(t.calls)",
    "analyse": "from collperf import api; r = api.trace(PATH); n = len(r.collectives)",
    "json": ("import gzip, json; f = gzip.open(PATH, 'rt') if PATH.endswith('.gz') else open(PATH);"
             "d = json.load(f); n = sum(1 for e in d['traceEvents'] if e.get('cat') == 'kernel')"),
}


def write_trace(path: Path, megabytes: float) -> int:
    """A rank-0-of-8 trace of about `megabytes` MB; returns its event count."""
    opener = gzip.open if path.suffix == ".gz" else open
    target, written, events, step = megabytes * 1e6, 0, 0, 0
    ranks = list(range(8))
    head = {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "numSms": 132}],
            "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 8, "nccl_version": "2.21.5",
                                "pg_count": 1, "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "ranks": ranks}]},
            "host_name": "node0"}
    with opener(path, "wt") as f:
        f.write(json.dumps(head)[:-1] + ', "traceEvents": [\n')
        t = 1.0e9
        while written < target:
            chunk = [{"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}", "pid": 1, "tid": 1,
                      "ts": t, "dur": 50_000.0, "args": {}}]
            for i in range(400):
                corr = step * 1000 + i
                ts = t + i * 100.0
                chunk.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": ts, "dur": 20.0,
                              "args": {"External id": corr, "Input Dims": [[4096, 4096], [4096, 4096]],
                                       "Input type": ["c10::BFloat16", "c10::BFloat16"], "Sequence number": corr}})
                chunk.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                              "ts": ts + 5, "dur": 4.0, "args": {"External id": corr, "cbid": 211, "correlation": corr}})
                nccl = i % 10 == 9
                args = {"External id": corr, "device": 0, "stream": 20 if nccl else 7, "correlation": corr,
                        "registers per thread": 96, "shared memory": 0, "grid": [16, 1, 1], "block": [640, 1, 1]}
                if nccl:
                    args.update({"Collective name": "allreduce", "In msg nelems": 13107200, "Out msg nelems": 13107200,
                                 "Group size": 8, "dtype": "BFloat16", "In split size": "[]", "Out split size": "[]",
                                 "Process Group Name": "0", "Process Group Description": "default_pg",
                                 "Process Group Ranks": json.dumps(ranks)})
                name = ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)" if nccl
                        else "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64")
                chunk.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": args["stream"],
                              "ts": ts + 30, "dur": 400.0 if nccl else 80.0, "args": args})
            text = ",\n".join(json.dumps(e) for e in chunk)
            f.write(("" if step == 0 else ",\n") + text)
            written += len(text)
            events += len(chunk)
            t += 50_000.0
            step += 1
        f.write('\n], "traceName": "synthetic"}\n')
    return events


def measure(case: str, path: Path) -> dict:
    code = (f"import resource, time, sys; PATH = {str(path)!r}; import collperf.trace, collperf.api\n"
            f"start = time.perf_counter()\n{CASES[case]}\n"
            "print(time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    seconds, kib = done.stdout.split()
    return {"seconds": float(seconds), "peak_MB": int(kib) / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=100.0, help="trace size in MB (uncompressed JSON)")
    parser.add_argument("--gz", action="store_true", help="write and read a .json.gz")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / ("rank0.json.gz" if args.gz else "rank0.json")
        events = write_trace(path, args.mb)
        size = path.stat().st_size / 1e6
        print(f"synthetic trace: {size:.1f} MB on disk, {events} events ({path.name})")
        found = {case: measure(case, path) for case in CASES}
        base = found["idle"]["peak_MB"]
        print(f"{'case':<9} {'seconds':>8} {'peak MB over idle':>18}")
        for case in ("stream", "analyse", "json"):
            r = found[case]
            print(f"{case:<9} {r['seconds']:8.2f} {r['peak_MB'] - base:18.1f}")
        s, j = found["stream"], found["json"]
        print(f"json / stream: time {j['seconds'] / s['seconds']:.2f}x, memory over idle "
              f"{(j['peak_MB'] - base) / max(s['peak_MB'] - base, 1e-9):.1f}x "
              f"(idle interpreter with collperf imported: {base:.0f} MB)")


if __name__ == "__main__":
    main()
