"""Peak memory reading a large NCCL Inspector JSON-lines dump, against the file's size.

Writes dumps of about 40 MB and 160 MB (records in the Inspector's own shape: header, metadata, coll_perf,
about 420 bytes a line), then reads each in a fresh process with collperf.ingest.load (which streams it) and, side by
side, with ingest.parse of the whole text read at once, and reports each process's peak resident memory (getrusage ru_maxrss): in total, and above what the same process held just
before the read (the interpreter and collperf's imports). The target is at most 2x the file.

    PYTHONPATH=src python benchmarks/inspector_memory.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

_COLLS = ("AllReduce", "AllGather", "ReduceScatter", "Broadcast")

_READ = """
import resource, sys
from pathlib import Path
from collperf import ingest
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if sys.argv[2] == "load":
    tables = ingest.load(sys.argv[1], max_bytes=1 << 40)
else:
    tables = ingest.parse(Path(sys.argv[1]).read_text(errors="replace"), sys.argv[1])
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(before * 1024, after * 1024, sum(t.header["calls"] for t in tables))
"""
_HOW = {"load": "ingest.load (streamed)", "parse": "ingest.parse of the whole text"}


def write_dump(path: Path, target_bytes: int) -> int:
    """An 8-rank job's dump: each call on every rank, sizes cycling over 24 powers of two."""
    records = 0
    with open(path, "w") as f:
        while f.tell() < target_bytes:
            for rank in range(8):
                size = 1024 << (records // 8 % 24)
                time_us = 12.0 + size / 9e4 + rank * 0.37
                rec = {
                    "header": {"id": "0x7f1c4a002b10", "rank": rank, "n_ranks": 8, "nnodes": 1},
                    "metadata": {
                        "inspector_output_format_version": "v4.0",
                        "git_rev": "a1b2c3d",
                        "rec_mechanism": "profiler_plugin",
                        "dump_timestamp_us": 1730000000000000 + records,
                        "hostname": "node-017",
                        "pid": 41000 + rank,
                    },
                    "coll_perf": {
                        "coll": _COLLS[records // 192 % 4],
                        "coll_sn": records // 8,
                        "coll_msg_size_bytes": size,
                        "coll_exec_time_us": round(time_us, 3),
                        "coll_timing_source": "kernel_gpu",
                        "coll_algobw_gbs": round(size / time_us / 1e3, 4),
                        "coll_busbw_gbs": round(size / time_us / 1e3 * 1.75, 4),
                    },
                }
                f.write(json.dumps(rec) + "\n")
                records += 1
    return records


def main() -> None:
    folder = Path(tempfile.mkdtemp(prefix="inspector-memory-"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    print("| dump | records | read by | peak RSS | peak / file | above the imports | above / file |")
    print("|---|---|---|---|---|---|---|")
    try:
        for target in (40_000_000, 160_000_000):
            path = folder / f"dump-{target // 1_000_000}MB.jsonl"
            records = write_dump(path, target)
            size = path.stat().st_size
            for how in ("load", "parse"):
                out = subprocess.run(
                    [sys.executable, "-c", _READ, str(path), how], capture_output=True, text=True, env=env, check=True
                ).stdout.split()
                before, after, calls = int(out[0]), int(out[1]), int(out[2])
                assert calls == records, (calls, records)
                mib = 1 << 20
                print(
                    f"| {size / 1e6:.0f} MB | {records:,} | {_HOW[how]} | {after / mib:.0f} MiB | {after / size:.2f}x "
                    f"| {(after - before) / mib:.0f} MiB | {(after - before) / size:.2f}x |"
                )
                sys.stdout.flush()
            path.unlink()
    finally:
        for p in folder.iterdir():
            p.unlink()
        folder.rmdir()


if __name__ == "__main__":
    main()
