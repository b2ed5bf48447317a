"""Reading many ranks' Flight Recorder dumps: `collperf trace` on 1,000 ranks (synthetic JSON dumps).

Writes one JSON dump per rank in torch 2.13's layout (dump version "2.10", as the recorded fixtures in
tests/fixtures/traces/flight/ hold: `entries` with `collective_seq_id`, `process_group`, `profiling_name`,
`input_sizes`/`output_sizes`, `input_dtypes`, `time_created_ns`, `state`; `pg_config`; `pg_status`), `--entries`
all-reduces per rank, rank 7 late by 5 ms at every call and rank 3 missing the last call (a hang), then measures,
in this process with tracemalloc (the peak of Python allocations during the call) and a wall clock:
  read     collperf.trace.read_traces on the directory: every dump read, one file at a time
  analyse  the whole `collperf trace` analysis (api.trace): matching, skew, verdicts
for each rank count given, so the growth with the ranks can be read off.

    .venv/bin/python benchmarks/flight_ranks.py [--ranks 250,500,1000] [--entries 100]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import tracemalloc
from pathlib import Path

STEP_NS = 50_000_000  # one all-reduce every 50 ms
LATE_RANK, LATE_NS = 7, 5_000_000
HANG_RANK = 3
ELEMS = 262_144  # 1 MiB of float32


def write_dumps(out: Path, ranks: int, entries: int) -> int:
    """One dump per rank; returns the bytes written."""
    config = {"0": {"name": "0", "desc": "default_pg", "ranks": json.dumps(list(range(ranks)))}}
    total = 0
    for rank in range(ranks):
        last = entries - 1 if rank == HANG_RANK else entries
        items = [
            {
                "record_id": k,
                "pg_id": 0,
                "process_group": ["0", "default_pg"],
                "collective_seq_id": k + 1,
                "p2p_seq_id": 0,
                "op_id": k + 1,
                "profiling_name": "gloo:all_reduce",
                "time_created_ns": 1_700_000_000_000_000_000
                + k * STEP_NS
                + (LATE_NS if rank == LATE_RANK else 0)
                + rank * 1000,
                "input_sizes": [[ELEMS]],
                "input_dtypes": ["Float"],
                "output_sizes": [[ELEMS]],
                "output_dtypes": ["Float"],
                "state": "completed",
                "time_discovered_started_ns": 0,
                "time_discovered_completed_ns": 0,
                "retired": True,
                "timeout_ms": 600000,
                "is_p2p": False,
                "thread_id": "1",
                "thread_name": "python",
            }
            for k in range(last)
        ]
        doc = {
            "version": "2.10",
            "comm_lib_version": "",
            "pg_config": config,
            "entries": items,
            "pg_status": {
                "0": {
                    "last_enqueued_collective": str(last),
                    "last_started_collective": str(last),
                    "last_completed_collective": str(last),
                }
            },
            "nccl_comm_state": {},
        }
        text = json.dumps(doc, sort_keys=True)  # torch's JSON dump's order (the recorded fixtures')
        (out / f"rank{rank}.json").write_text(text)
        total += len(text)
    return total


def measure(call) -> tuple[float, float]:
    tracemalloc.start()
    t = time.perf_counter()
    call()
    wall = time.perf_counter() - t
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return wall, peak


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", default="250,500,1000")
    ap.add_argument("--entries", type=int, default=100)
    args = ap.parse_args()
    from collperf import api
    from collperf.trace.read import read_traces

    print("| ranks | dumps (MB) | read: s | read: peak MB | analyse: s | analyse: peak MB | peak per kept call (B) |")
    print("|---|---|---|---|---|---|---|")
    for ranks in (int(r) for r in args.ranks.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            size = write_dumps(Path(tmp), ranks, args.entries)
            read_s, read_peak = measure(lambda: read_traces(tmp))
            box = {}
            analyse_s, analyse_peak = measure(lambda: box.update(report=api.trace(tmp)))
            kinds = sorted({v.kind for v in box["report"].verdicts})
            calls = ranks * args.entries
            print(
                f"| {ranks} | {size / 1e6:.1f} | {read_s:.1f} | {read_peak / 1e6:.1f} | {analyse_s:.1f} | "
                f"{analyse_peak / 1e6:.1f} | {analyse_peak / calls:.0f} |  verdicts: {', '.join(kinds)}"
            )


if __name__ == "__main__":
    main()
