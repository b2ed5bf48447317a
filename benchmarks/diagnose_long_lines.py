"""`diagnose` on the lines that used to make it quadratic, and on a large INFO-heavy log.

1. One line of N digits through the line patterns of diagnose/loglines.py: the patterns as they were (the
   channel count `(\\d+) coll channels, ...` searched from every digit, the others of the same shape) against
   `read_facts` as it is, side by side at growing N (the old form is quadratic: 100,000 digits took about
   3 minutes, so it is timed up to --max-old digits and the growth per doubling printed); then the whole
   `diagnose` of a log holding a 100,000-digit line against the same log without it.
2. A generated nccl-tests log of --mb MB, mostly NCCL INFO lines (channels, NET/IB, transports, rank lines, as
   NCCL 2.2x prints them), through `api.diagnose_logs`: CPU seconds and MB/s of CPU.

    PYTHONPATH=src python benchmarks/diagnose_long_lines.py [--mb 50] [--max-old 40000]
"""

from __future__ import annotations

import argparse
import re
import tempfile
import time
from pathlib import Path

from collperf import api
from collperf.diagnose.loglines import read_facts
from collperf.errors import run_main

# the patterns as they were, each searched on every line (the rest of read_facts is the same)
OLD = [r"(\d+) coll channels, (?:(\d+) collnet channels, )?(?:(\d+) nvls channels, )?(\d+) p2p channels",
       r"Rank\s+\d+\s.*\bon\s+\S+|NCCL INFO|^\s*\S+:\d+:\d+", r"Using network (.+?)\s*$",
       r"NET/OFI Selected Provider is efa|NET/OFI .*efa", r"found (\d+) nics"]

HEADER = """# nThread 1 nGpus 1 minBytes 8 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid  1001 on node-01 device  0 [0x18] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid  1002 on node-01 device  1 [0x2a] NVIDIA H100 80GB HBM3
"""
INFO = [
    "node-01:1001:1101 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB ; OOB eth0:10.0.0.1<0>",
    "node-01:1001:1101 [0] NCCL INFO Channel 07/32 : 0[0] -> 1[1] via P2P/IPC/read",
    "node-01:1001:1101 [0] NCCL INFO Channel 07/0 : 1[1] -> 0[0] [receive] via NET/IB/0/GDRDMA",
    "node-01:1001:1101 [0] NCCL INFO Connected all rings",
    "node-01:1001:1101 [0] NCCL INFO 32 coll channels, 0 collnet channels, 0 nvls channels, 32 p2p channels, 32 p2p channels per peer",
    "node-01:1001:1101 [0] NCCL INFO comm 0x55d3c8a0 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0",
    "node-01:1001:1101 [0] NCCL INFO Trees [0] 1/-1/-1->0->-1 [1] 1/-1/-1->0->-1",
]
TABLE = """#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
""" + "".join(f"{1 << k:>12} {(1 << k) // 4:>12}     float     sum      -1  {10 + (1 << k) / 4e5:8.2f}    0.00    0.00      0"
              f"  {10 + (1 << k) / 4e5:8.2f}    0.00    0.00      0\n" for k in range(3, 31)) + \
    "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 1.0\n#\n"


def _best(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def long_lines(max_old: int, work: Path) -> None:
    print("1. one line of N digits: the line patterns as they were vs read_facts as it is (CPU s)")
    print(f"{'digits':>8} {'old patterns':>13} {'read_facts now':>15} {'old / now':>10}")
    old = [re.compile(p) for p in OLD]
    n, previous = 2500, None
    while n <= max_old:
        line = "9" * n
        t_old = _best(lambda: [p.search(line) for p in old], 1)
        t_new = _best(lambda: read_facts(line))
        growth = f"  (old x{t_old / previous:.1f} per doubling)" if previous else ""
        print(f"{n:>8} {t_old:>13.4f} {t_new:>15.5f} {t_old / t_new:>10.0f}{growth}")
        previous, n = t_old, n * 2
    line = "9" * 100_000
    print(f"{100_000:>8} {'(not run)':>13} {_best(lambda: read_facts(line)):>15.5f}")
    plain = work / "plain.log"
    plain.write_text(HEADER + "\n".join(INFO) + "\n" + TABLE)
    digits = work / "digits.log"
    digits.write_text(HEADER + "\n".join(INFO) + "\n" + "9" * 100_000 + "\n" + TABLE)
    t_plain = _best(lambda: api.diagnose_logs(plain))
    t_digits = _best(lambda: api.diagnose_logs(digits))
    print(f"   diagnose: the log {t_plain:.3f} s, with a 100,000-digit line {t_digits:.3f} s "
          f"({t_digits / t_plain:.2f}x)")


def info_heavy(mb: float, work: Path) -> None:
    path = work / "info.log"
    block = "\n".join(INFO) + "\n"
    copies = int(mb * 1e6 / len(block)) + 1
    path.write_text(HEADER + block * copies + TABLE)
    size_mb = path.stat().st_size / 1e6
    t0, c0 = time.perf_counter(), time.process_time()
    (d,) = api.diagnose_logs(path)
    cpu, wall = time.process_time() - c0, time.perf_counter() - t0
    print(f"2. an INFO-heavy log of {size_mb:.1f} MB ({copies * len(INFO):,} INFO lines): diagnose {cpu:.2f} CPU s "
          f"({wall:.2f} s wall), {size_mb / cpu:.1f} MB/s of CPU; fabric read: {d.assumed.system.fabric if d.assumed.system else '-'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=50)
    parser.add_argument("--max-old", type=int, default=40_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        long_lines(args.max_old, Path(tmp))
        info_heavy(args.mb, Path(tmp))


if __name__ == "__main__":
    run_main(main)
