"""Timing several variants of one collective side by side on real ranks (used by the executor benchmarks)."""

import statistics
import time


def time_interleaved(calls: dict, out, check, iters: int) -> dict:
    """{name: (seconds, wrong)} for calls {name: fn()} that each write `out`: every call is checked once
    (out zeroed, then check(out) -> #wrong), then timed `iters` times interleaved, each after a barrier, so
    that the load of a busy machine hits every variant alike. seconds: the median over iterations, averaged
    over ranks; wrong: summed over ranks. Every rank must call it."""
    import torch
    import torch.distributed as dist

    samples, wrong = {k: [] for k in calls}, {}
    for k, call in calls.items():
        out.zero_()
        call()
        wrong[k] = check(out)
    for _ in range(iters):
        for k, call in calls.items():
            dist.barrier()
            t0 = time.perf_counter()
            call()
            samples[k].append(time.perf_counter() - t0)
    p, result = dist.get_world_size(), {}
    for k in calls:
        t = torch.tensor([statistics.median(samples[k]), wrong[k]], dtype=torch.float64)
        dist.all_reduce(t)
        result[k] = (t[0].item() / p, int(t[1].item()))
    return result


def common_args(parser, sizes: str, iters: int):
    """The arguments the executor benchmarks share: ranks, collective, algorithm, and their own default
    sizes and iterations."""
    parser.add_argument("--ranks", default="2,4")
    parser.add_argument("--collective", default="allreduce")
    parser.add_argument("--algorithm", default="ring")
    parser.add_argument("--sizes", default=sizes)
    parser.add_argument("--iters", type=int, default=iters)
    return parser
