"""Layout search speed: layouts per second with one shared, vectorized Pricer (plan.search) against
planning each fitting layout on its own (plan.plan, a fresh Pricer each), side by side in one run.

    PYTHONPATH=src python benchmarks/plan_search_speed.py
"""

from __future__ import annotations

import time

from collperf import plan as plans
from collperf.model.hardware.presets import get_preset


def main() -> None:
    model, cluster = plans.get_model("70b"), get_preset("dgx-h100")
    start = time.perf_counter()
    result = plans.search(model, 1024, cluster, global_batch=1024, flops_per_rank=400e12)
    batched = time.perf_counter() - start
    sample = result.plans[:40]
    start = time.perf_counter()
    for p in sample:
        plans.plan(p.model, p.layout, p.cluster, p.compute_s)
    one_by_one = (time.perf_counter() - start) / len(sample) * len(result.plans)
    print(
        f"{result.considered} layouts ({result.too_big} do not fit 80 GiB, {len(result.plans)} priced) "
        f"in {batched:.3f} s: {result.considered / batched:,.0f} layouts/s"
    )
    print(
        f"one plan() per fitting layout would take {one_by_one:.2f} s: batched pricing is "
        f"{one_by_one / batched:.0f}x faster"
    )
    for p in result.plans[:5]:
        print(
            f"  {p.step_s:7.3f} s  {p.layout.describe()} micro-batch {p.model.micro_batch} x {p.layout.micro_batches}"
            f"  memory {p.memory.total_bytes / 2**30:.1f} GiB"
        )


if __name__ == "__main__":
    main()
