"""The NCCL expectation model against the real logs in examples/.

Per sample: the system assumed (from the GPU model in the device lines, the node count and the NCCL
INFO lines; no fitting), the median and worst relative error of the expected time over out-of-place
rows >= 1 MiB, the measured peak busbw against the two-level bound; then the cross-collective
predictions (fit on one log, predict another collective of the same machine).

    PYTHONPATH=src python benchmarks/nccl_model_vs_logs.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from collperf.ingest import load
from collperf.model.nccl import expect, fit_system, system_bound
from collperf.model.hardware.catalogue import system_for_gpu
from collperf.expect.resolve import assume

LOGS = Path(__file__).resolve().parents[1] / "examples"
MIB = 1 << 20
# sample -> (GPU model when the log has no device lines, nodes when the reader could not tell)
SAMPLES = {
    "01_superbench-a100x8-allreduce.txt": (None, None),
    "02_superbench-a100x8-allgather.txt": (None, None),
    "09_aws-eks-efa-t4-2node-allreduce.txt": (None, None),
    "10_pcie-2080ti-x2-allreduce.txt": (None, None),
    "12_pcie-2080ti-x2-broadcast.txt": (None, None),
    "14_h100-ib400-2node-16gpu-allreduce.txt": (None, None),
    # dstack's rendering dropped the device lines; the sample's own header says "2 nodes x 8 NVIDIA B200"
    "19_lambda-b200-2node-16gpu-allreduce.txt": ("NVIDIA B200", 2),
}
CROSS = (
    ("01_superbench-a100x8-allreduce.txt", "02_superbench-a100x8-allgather.txt"),
    ("10_pcie-2080ti-x2-allreduce.txt", "12_pcie-2080ti-x2-broadcast.txt"),
)


def read(name: str):
    """(table, system, sizes, times) of a sample; the system from the log alone, assumed the way
    `collperf diagnose` assumes it (device lines, node count, NCCL INFO and comment lines)."""
    path = LOGS / name
    table = load(path)[0]
    rows = table.placement("out-of-place")
    sizes = np.array([r.size for r in rows], dtype=float)
    times = np.array([r.time_s for r in rows], dtype=float)
    system = assume(table).system
    gpu_given, nodes_given = SAMPLES[name]
    if system is None:  # no device lines and no usable comment: the table above names the GPU
        system = system_for_gpu(gpu_given, nodes=nodes_given, gpus_per_node=table.ranks // nodes_given)
    return table, system, sizes, times


def errors(predicted, measured, sizes, min_size=MIB):
    keep = sizes >= min_size
    err = np.abs(predicted[keep] / measured[keep] - 1)
    return float(np.median(err)), float(np.max(err))


def hardware_alone() -> dict:
    out = {}
    for name in SAMPLES:
        table, system, sizes, times = read(name)
        pred = expect(table.collective, sizes, system)
        median, worst = errors(pred.time_s, times, sizes)
        bound = system_bound(table.collective, sizes, system)
        measured_busbw = float(np.max(sizes * 1.0 / times)) * (pred.busbw_Bps[-1] / pred.algbw_Bps[-1])
        out[name] = dict(
            system=system,
            median=median,
            worst=worst,
            bound_busbw=bound.peak_busbw_Bps,
            measured_busbw=measured_busbw,
            choice_at_max=pred.choice[-1],
        )
    return out


def cross_collective() -> dict:
    out = {}
    for fit_on, predict in CROSS:
        table, system, sizes, times = read(fit_on)
        fit = fit_system(table.collective, sizes, times, system, min_size_bytes=MIB, source=fit_on)
        other, _, o_sizes, o_times = read(predict)
        pred = expect(other.collective, o_sizes, fit.system)
        median, worst = errors(pred.time_s, o_times, o_sizes)
        out[(fit_on, predict)] = dict(fit=fit, median=median, worst=worst)
    return out


def main():
    print("Expected time from hardware alone (no fitting), out-of-place rows >= 1 MiB")
    for name, r in hardware_alone().items():
        print(
            f"  {name[:40]:40s} median {r['median']:6.1%} worst {r['worst']:7.1%}  "
            f"busbw measured {r['measured_busbw'] / 1e9:6.1f} <= bound {r['bound_busbw'] / 1e9:7.1f} GB/s  "
            f"[{r['choice_at_max']}]"
        )
        print(f"      assumed: {r['system'].describe()}")
    print("Fit on one log, predict another collective (rows >= 1 MiB)")
    for (a, b), r in cross_collective().items():
        print(f"  {a[:30]} -> {b[:30]}: median {r['median']:6.1%} worst {r['worst']:7.1%}  ({r['fit'].describe()})")


if __name__ == "__main__":
    main()
