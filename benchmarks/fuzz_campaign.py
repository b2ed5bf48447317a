"""A long seeded fuzz of every verb that reads, over every format: tests/fuzz_support.py's mutators and calls (the
suite runs two seeds per pair, this tens of thousands), in --workers processes. Prints, per format and verb, the
inputs tried, results, UsageErrors, any other exception (a traceback: the bug), and calls over 10 s on inputs of at
most 1 MB, and the slowest call with its seed; then each traceback's signature (type, file:line) with a seed that
reproduces it (`fuzz_support.attempt(format, verb, seed, folder)`, tests/ on the path).

A call still running after --hang seconds is stopped (SIGALRM) and counted as over 10 s.

    PYTHONPATH=src python benchmarks/fuzz_campaign.py [--scale 1.0] [--workers 2] [--first-seed 100000]
"""

from __future__ import annotations

import argparse
import multiprocessing
import signal
import sys
import tempfile
import time
import traceback
import warnings
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import fuzz_support  # noqa: E402 - tests/ on the path first

from collperf.errors import run_main  # noqa: E402

# seeds per (format, verb) at --scale 1: the cheap verbs get more (a report renders figures: ~0.3 s a call)
PER_VERB = {"read": 1500, "fit": 500, "diagnose": 500, "report": 60, "trace": 1500}
SLOW_S = 10.0
SMALL = 1 << 20


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


def _one(job: tuple) -> tuple:
    fmt, verb, seed, hang_s = job
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        try:
            path = fuzz_support.write_input(fmt, seed, folder)
        except Exception as e:  # noqa: BLE001 - the mutator's own failure: counted apart, not the reader's
            return fmt, verb, seed, "mutator-failed", f"mutator: {type(e).__name__}: {str(e)[:80]}", 0.0, 0
        size = path.stat().st_size
        signal.setitimer(signal.ITIMER_REAL, hang_s)
        started = time.perf_counter()
        try:
            fuzz_support.call(verb, fmt, path, folder)
            outcome, signature = "ok", ""
        except fuzz_support.UsageError:
            outcome, signature = "usage-error", ""
        except Hang:
            outcome, signature = "hang", ""
        except Exception as e:  # noqa: BLE001 - what the campaign counts
            frames = traceback.extract_tb(e.__traceback__)
            inner = next((f for f in reversed(frames) if "/collperf/" in f.filename), frames[-1])
            where = inner.filename.split("/collperf/")[-1]
            outcome, signature = "traceback", f"{type(e).__name__} at {where}:{inner.lineno}: {str(e)[:80]}"
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        seconds = time.perf_counter() - started
    return fmt, verb, seed, outcome, signature, seconds, size


def _init():
    warnings.simplefilter("ignore")
    signal.signal(signal.SIGALRM, _alarm)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--first-seed", type=int, default=100_000, help="seeds from here (the suite's seeds are below it)"
    )
    parser.add_argument("--hang", type=float, default=60.0)
    args = parser.parse_args()
    jobs = [
        (fmt, verb, args.first_seed + i, args.hang)
        for fmt, verb in fuzz_support.PAIRS
        for i in range(max(1, int(PER_VERB[verb] * args.scale)))
    ]
    jobs.sort(key=lambda j: j[2])  # the pairs interleaved: a slow verb does not hold the tail alone
    counts: dict = defaultdict(Counter)
    signatures: dict = {}
    slowest: dict = {}
    started = time.perf_counter()
    with multiprocessing.Pool(args.workers, initializer=_init) as pool:
        for fmt, verb, seed, outcome, signature, seconds, size in pool.imap_unordered(_one, jobs, chunksize=8):
            c = counts[(fmt, verb)]
            c["inputs"] += 1
            c[outcome] += 1
            if size <= SMALL and (seconds > SLOW_S or outcome == "hang"):
                c["over 10 s"] += 1
            if signature:
                signatures.setdefault(signature, (fmt, verb, seed))
            if seconds >= slowest.get((fmt, verb), (0,))[0]:
                slowest[(fmt, verb)] = (seconds, seed, size)
            done = sum(c["inputs"] for c in counts.values())
            if done % 2000 == 0:
                print(f"  {done} of {len(jobs)} ({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)
    wall = time.perf_counter() - started
    print(
        f"{'format':<22} {'verb':<9} {'inputs':>7} {'results':>8} {'usage':>7} {'traceback':>10} {'>10 s':>6} "
        f"{'slowest s':>10} {'its seed':>9}"
    )
    total = Counter()
    for (fmt, verb), c in counts.items():
        total.update(c)
        print(
            f"{fmt:<22} {verb:<9} {c['inputs']:>7} {c['ok']:>8} {c['usage-error']:>7} {c['traceback']:>10} "
            f"{c['over 10 s']:>6} {slowest[(fmt, verb)][0]:>10.2f} {slowest[(fmt, verb)][1]:>9}"
        )
    print(
        f"{'all':<32} {total['inputs']:>7} {total['ok']:>8} {total['usage-error']:>7} {total['traceback']:>10} "
        f"{total['over 10 s']:>6}   ({wall:.0f} s wall, {args.workers} workers)"
    )
    if total["mutator-failed"]:
        print(f"mutator failures (the campaign's own, not counted above as the reader's): {total['mutator-failed']}")
    for signature, (fmt, verb, seed) in signatures.items():
        print(f"traceback: {signature}  (fuzz_support.attempt({fmt!r}, {verb!r}, {seed}, folder))")


if __name__ == "__main__":
    run_main(main)
