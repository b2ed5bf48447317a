"""How `collperf fit` and `diagnose` scale with the input: nccl-tests sweeps of 1,000 and 10,000 rows (an
additive `-i` step gives such sweeps), as text and as nccl-tests -J JSON (pretty-printed, one field a
line, as nccl-tests writes it), and what a 500 MB input costs (refused at once by --max-bytes). Each time
is measured here, side by side in one run; the ratio 10,000 / 1,000 rows is the figure that matters
(linear work gives about 10x, quadratic 100x).

    PYTHONPATH=src python benchmarks/fit_diagnose_scaling.py
"""

from __future__ import annotations

import json
import math
import resource
import sys
import tempfile
import time
from pathlib import Path

from collperf import api
from collperf.errors import UsageError
from collperf.spec import LogSpec


def time_us(size: int) -> float:
    """An 8-rank allreduce: LL below 64 KiB, LL128 to 16 MiB, Simple beyond (us), a 0.3 % ripple."""
    if size < 1 << 16:
        t = 20 + size / 2e3
    elif size < 1 << 24:
        t = 40 + size / 20e3
    else:
        t = 20 + size / 90e3
    return t * (1 + 0.003 * math.sin(size))


def sizes(rows: int) -> list[int]:
    """`rows` distinct sizes from 8 B to 8 GiB, evenly in log size."""
    out, k = [], 0
    while len(out) < rows:
        out = sorted({round(8 * (2**30) ** (i / (rows + k - 1))) for i in range(rows + k)})
        k += 1
    return out[:rows]


def text_log(rows: int) -> str:
    lines = [
        "# nccl-tests version 2.13.9 nccl-headers=22105 nccl-library=22105",
        "# Collective test starting: all_reduce_perf",
        "# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 "
        "step: 1024(bytes) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0",
        "#",
    ]
    lines += [
        f"#  Rank  {r} Group  0 Pid {1000 + r} on node{r // 4} device  {r % 4} [0000:00:00] NVIDIA H100"
        for r in range(8)
    ]
    lines += [
        "#",
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   "
        "algbw   busbw #wrong",
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)",
    ]
    for s in sizes(rows):
        t = time_us(s)
        alg = s / t / 1e3
        cell = f"{t:8.2f}  {alg:6.2f}  {alg * 1.75:6.2f}       0"
        lines.append(f"{s:12d}  {max(1, s // 4):12d}     float     sum      -1  {cell}  {cell}")
    lines += [
        "# Out of bounds values : 0 OK",
        "# Avg bus bandwidth    : 1.0",
        "#",
        "# Collective test concluded: all_reduce_perf",
        "",
    ]
    return "\n".join(lines)


def json_log(rows: int) -> str:
    def measure(s):
        t = time_us(s)
        return {"time": t, "alg_bw": s / t / 1e3, "bus_bw": s / t / 1e3 * 1.75, "nwrong": 0}

    doc = {
        "version": "2.17.6",
        "nccl_version": "2.27.3",
        "args": ["./build/all_reduce_perf", "-J", "x.json"],
        "config": {
            "devices": [
                {"rank": r, "hostname": f"node{r // 4}", "device": r % 4, "device_info": "NVIDIA H100"}
                for r in range(8)
            ]
        },
        "results": [
            {
                "size": s,
                "count": max(1, s // 4),
                "type": "float",
                "redop": "sum",
                "root": -1,
                "out_of_place": measure(s),
                "in_place": measure(s),
            }
            for s in sizes(rows)
        ],
    }
    return json.dumps(doc, indent=2)


def timed(call) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def main():
    folder = Path(tempfile.mkdtemp(prefix="collperf-bench-scaling-"))
    print("| input | rows | read s | fit s | diagnose s |")
    print("|---|---:|---:|---:|---:|")
    measured = {}
    for kind, writer in (("text", text_log), ("-J", json_log)):
        for rows in (1000, 10000):
            path = folder / f"sweep{rows}.{'txt' if kind == 'text' else 'json'}"
            path.write_text(writer(rows))
            read = timed(lambda: api.read_logs([str(path)]))
            fit = timed(lambda: api.fit_logs([str(path)]))
            judged = timed(lambda: api.diagnose_logs([str(path)], peak="50GB/s"))
            measured[(kind, rows)] = (fit, judged)
            print(f"| {kind} | {rows:,} | {read:.2f} | {fit:.2f} | {judged:.2f} |")
            sys.stdout.flush()
    for kind in ("text", "-J"):
        (f1, d1), (f10, d10) = measured[(kind, 1000)], measured[(kind, 10000)]
        print(f"{kind}: 10,000 / 1,000 rows: fit {f10 / f1:.1f}x, diagnose {d10 / d1:.1f}x")
    big = folder / "big.txt"
    with open(big, "w") as f:  # 500 MB: the 1,000-row log's rows repeated under one header
        block = text_log(1000)
        while f.tell() < 500_000_000:
            f.write(block)
    refused = time.perf_counter()
    try:
        api.read_logs(LogSpec(paths=[str(big)]))
        outcome = "read (not refused)"
    except UsageError as e:
        outcome = f"refused: {e}"
    refused = time.perf_counter() - refused
    print(f"500 MB input ({big.stat().st_size:,} bytes), default --max-bytes: {refused * 1000:.1f} ms, {outcome[:140]}")
    print(f"peak RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    for p in folder.iterdir():
        p.unlink()
    folder.rmdir()


if __name__ == "__main__":
    main()
