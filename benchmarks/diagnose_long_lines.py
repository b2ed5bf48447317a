"""`diagnose` on the lines that used to make it quadratic, and on a large INFO-heavy log.

1. One line of N digits through the line patterns of expect/loglines.py: the patterns as they were (the
   channel count `(\\d+) coll channels, ...` searched from every digit, the others of the same shape) against
   `read_facts` as it is, side by side at growing N (the old form is quadratic: 100,000 digits took about
   3 minutes, so it is timed up to --max-old digits and the growth per doubling printed); then the whole
   `diagnose` of a log holding a 100,000-digit line against the same log without it.
2. Logs of --mb MB that are mostly NCCL INFO lines, built in memory, through `api.diagnose_logs`: CPU seconds and
   MB/s of CPU. Two logs: "synthetic", a table under INFO lines as NCCL 2.2x prints them (channels, NET/IB,
   transports, rank lines); "real", a public log of the corpus (16 A100s over EFA, every line tagged by mpirun
   --tag-output) with its own INFO lines (530 of them) repeated where they stand. Each is diagnosed in a fresh
   process (after a warm-up diagnose, so the imports are not counted), once with the package as it is and, with
   --before REF, once with the package at git commit REF (`git archive`), alternately, --repeat times; the best
   CPU time of each, their ratio, and whether both diagnoses are the same (a digest of their JSON).

    PYTHONPATH=src python benchmarks/diagnose_long_lines.py [--mb 50] [--max-old 40000] [--before fe853f5]
                                                            [--repeat 3] [--skip-lines]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import collperf
from collperf import api
from collperf.expect.loglines import read_facts
from collperf.errors import run_main

ROOT = Path(__file__).resolve().parents[1]
# a public log of 16 A100s over EFA whose INFO lines (530) are most of it; read from the package's corpus
REAL = Path(collperf.__file__).parent / "data" / "corpus" / "a100-efa-2x8-allreduce-gh-aws-efa-eks.txt"

# the patterns as they were, each searched on every line (the rest of read_facts is the same)
OLD = [
    r"(\d+) coll channels, (?:(\d+) collnet channels, )?(?:(\d+) nvls channels, )?(\d+) p2p channels",
    r"Rank\s+\d+\s.*\bon\s+\S+|NCCL INFO|^\s*\S+:\d+:\d+",
    r"Using network (.+?)\s*$",
    r"NET/OFI Selected Provider is efa|NET/OFI .*efa",
    r"found (\d+) nics",
]

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
TABLE = (
    """#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
"""
    + "".join(
        f"{1 << k:>12} {(1 << k) // 4:>12}     float     sum      -1  {10 + (1 << k) / 4e5:8.2f}    0.00    0.00      0"
        f"  {10 + (1 << k) / 4e5:8.2f}    0.00    0.00      0\n"
        for k in range(3, 31)
    )
    + "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 1.0\n#\n"
)


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
    print(
        f"   diagnose: the log {t_plain:.3f} s, with a 100,000-digit line {t_digits:.3f} s ({t_digits / t_plain:.2f}x)"
    )


def synthetic_log(mb: float) -> str:
    block = "\n".join(INFO) + "\n"
    return HEADER + block * (int(mb * 1e6 / len(block)) + 1) + TABLE


def real_log(mb: float) -> str:
    """The corpus log with its INFO lines (all of them, in order) repeated where the first one stands."""
    lines = REAL.read_text().splitlines(keepends=True)
    first = next(i for i, ln in enumerate(lines) if "NCCL INFO" in ln)
    info = "".join(ln for ln in lines if "NCCL INFO" in ln)
    rest = [ln for ln in lines if "NCCL INFO" not in ln]
    return "".join(rest[:first]) + info * (int(mb * 1e6 / len(info)) + 1) + "".join(rest[first:])


def measure(path: str) -> None:
    """In a child process: one diagnose of `path`, after a warm-up on a small log; prints CPU s and a digest."""
    small = Path(path).with_suffix(".small.log")
    small.write_text(synthetic_log(0.01))
    api.diagnose_logs(small)
    c0 = time.process_time()
    judged = api.diagnose_logs(path)
    cpu = time.process_time() - c0
    digest = hashlib.sha256(json.dumps([d.to_json() for d in judged], sort_keys=True, default=str).encode())
    print(json.dumps({"cpu": cpu, "digest": digest.hexdigest()[:12]}))


def _child(src: Path, path: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(src)}
    out = subprocess.run(
        [sys.executable, __file__, "--measure", str(path)], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def info_heavy(mb: float, work: Path, before: str | None, repeat: int) -> None:
    variants = {"now": Path(collperf.__file__).parents[1]}
    if before:
        old = work / "before"
        old.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", before, "src"], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(old)], input=archive.stdout, check=True)
        variants = {f"at {before}": old / "src", **variants}
    print(f"2. INFO-heavy logs through diagnose_logs, each in a fresh process, best of {repeat} (CPU s; MB/s of CPU)")
    print(
        f"{'log':>10} {'MB':>6} {'INFO lines':>11} "
        + " ".join(f"{name:>20}" for name in variants)
        + (f" {'ratio':>7} {'same result':>12}" if before else "")
    )
    for name, build in (("synthetic", synthetic_log), ("real", real_log)):
        text = build(mb)
        path = work / f"{name}.log"
        path.write_text(text)
        size_mb = path.stat().st_size / 1e6
        best = {k: float("inf") for k in variants}
        digests = {}
        for _ in range(repeat):  # alternately, so that the machine's load hits both alike
            for k, src in variants.items():
                got = _child(src, path)
                best[k] = min(best[k], got["cpu"])
                digests[k] = got["digest"]
        cells = " ".join(f"{best[k]:>8.2f} s {size_mb / best[k]:>5.1f} MB/s" for k in variants)
        ratio = (
            f" {best[next(iter(variants))] / best['now']:>6.2f}x {'yes' if len(set(digests.values())) == 1 else 'NO':>12}"
            if before
            else ""
        )
        print(f"{name:>10} {size_mb:>6.1f} {text.count('NCCL INFO'):>11,} {cells}{ratio}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=50)
    parser.add_argument("--max-old", type=int, default=40_000)
    parser.add_argument(
        "--before",
        help="a git commit to time the INFO-heavy logs at too (fe853f5: before the "
        "literal pre-checks of the line readers)",
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-lines", action="store_true", help="only part 2")
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # the child process's side
    args = parser.parse_args()
    if args.measure:
        measure(args.measure)
        return
    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_lines:
            long_lines(args.max_old, Path(tmp))
        info_heavy(args.mb, Path(tmp), args.before, args.repeat)


if __name__ == "__main__":
    run_main(main)
