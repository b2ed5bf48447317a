"""`collperf diagnose` on every shared sample, with no flags: the system assumed, NCCL's expected time
against the measurement (median over rows >= 1 MiB), the best busbw against the bound's busbw, the
best efficiency (bound / measured, never above 100 %) and the verdict; then --model-from 01 -> 02 and
10 -> 12. The README's "Is my number good?" table is this output.

    PYTHONPATH=src python benchmarks/diagnose_samples.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from collperf.diagnose import diagnose
from collperf.ingest import load

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
MIB = 1 << 20
CROSS = (("01_", "02_"), ("10_", "12_"))


def sample(prefix: str) -> Path:
    return next(p for p in sorted(EXAMPLES.glob("*.txt")) if p.name.startswith(prefix))


def main():
    print(
        "| sample | system assumed | expected / measured (median |error|) | best busbw / bound busbw (GB/s) "
        "| best eff | verdict |"
    )
    for path in sorted(EXAMPLES.glob("*.txt")):
        d = diagnose(load(path)[0])
        big = [s for s in d.sizes if s.size_bytes >= MIB and s.expected_s]
        ratio = np.median([s.expected_s / s.time_s for s in big])
        error = np.median([abs(s.expected_s / s.time_s - 1) for s in big])
        best = max(s.busbw_GBps or 0 for s in d.sizes)
        eff = max(s.efficiency or 0 for s in d.sizes)
        system = d.assumed.system
        print(
            f"| {path.name[:2]} | {system.name}, {system.nodes}x{system.gpus_per_node} | {ratio:.2f} ({error:.1%}) "
            f"| {best:.1f} / {d.peak_GBps:.1f} | {eff:.0%} | {d.verdict.split(':')[0]} |"
        )
    for a, b in CROSS:
        d = diagnose(load(sample(b))[0], model=str(sample(a)))
        err = [abs(s.expected_s / s.time_s - 1) for s in d.sizes if s.size_bytes >= MIB]
        print(
            f"--model-from {sample(a).name} -> {sample(b).name}: median {np.median(err):.1%}, worst {max(err):.1%} "
            f"(rows >= 1 MiB); verdict {d.verdict.split(':')[0]}"
        )


if __name__ == "__main__":
    main()
