"""What limits our allreduce on local gloo ranks: the p2p exchange itself, against gloo's own collectives.

On 2 ranks, interleaved, p50 ms of: a one-way send, a two-way exchange (irecv + isend both ways, as
every step of our schedules does), that exchange plus the add (recursive doubling by hand, no executor),
our executor's recursive doubling and ring (slice_bytes 0), and gloo's broadcast and all_reduce.

    .venv/bin/python benchmarks/gloo_p2p_floor.py [--sizes 1M,4M] [--iters 15]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collperf.model.two_level.build import build
from collperf.runtime.execute import run_schedule
from collperf.runtime.launch import Job, run_local
from collperf.units import parse_size


def job(nbytes: int, iters: int) -> dict:
    import torch
    import torch.distributed as dist

    r, n = dist.get_rank(), nbytes // 4
    peer = 1 - r
    a, b, out, c = torch.ones(n), torch.zeros(n), torch.zeros(n), torch.ones(n)
    rd, ring = build("allreduce", "recursive-doubling", 2), build("allreduce", "ring", 2)

    def exchange():
        for w in [dist.irecv(b, peer), dist.isend(a, peer)]:
            w.wait()

    def exchange_add():
        exchange()
        out.copy_(a)
        out.add_(b)

    calls = {
        "one-way send": lambda: dist.send(a, 1) if r == 0 else dist.recv(b, 0),
        "exchange": exchange,
        "exchange + add": exchange_add,
        "ours: recursive doubling": lambda: run_schedule(rd, a, out, "sum", n, 0),
        "ours: ring": lambda: run_schedule(ring, a, out, "sum", n, 0),
        "gloo broadcast": lambda: dist.broadcast(c, 0),
        "gloo all_reduce": lambda: dist.all_reduce(c),
    }
    samples = {k: [] for k in calls}
    for _ in range(iters):
        for k, f in calls.items():
            dist.barrier()
            t0 = time.perf_counter()
            f()
            samples[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) * 1e3 for k, v in samples.items()}


def main() -> None:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1M,4M")
    parser.add_argument("--iters", type=int, default=15)
    args = parser.parse_args()
    print(
        f"{os.cpu_count()} cores shared with other jobs (load {os.getloadavg()[0]:.1f}); 2 ranks; p50 ms of "
        f"{args.iters} interleaved iterations"
    )
    results = {
        size: run_local(Job("gloo_p2p_floor:job", (parse_size(size), args.iters)), 2, 600)
        for size in args.sizes.split(",")
    }
    print("| | " + " | ".join(results) + " |")
    print("|---|" + "---|" * len(results))
    for k in next(iter(results.values())):
        print(f"| {k} | " + " | ".join(f"{r[k]:.2f}" for r in results.values()) + " |")


if __name__ == "__main__":
    main()
