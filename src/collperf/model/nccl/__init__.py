"""NCCL's expectation model: what NCCL chooses and how long it takes on given hardware.

    from collperf.model.nccl import expect, select, tuning_table, fit_system
    from collperf.model.hardware.catalogue import system_for_gpu
    sys = system_for_gpu("NVIDIA H100 80GB HBM3", nodes=2, gpus_per_node=8)
    pred = expect("allreduce", sizes, sys)   # pred.time_s, pred.algorithm, pred.regime, pred.bound_s

Modules: constants (tuning.cc tables), graphs (a stand-in for the topology search), channels (the channels
NCCL runs: comm->nChannels, nvlsChannels), tuning (the per-function table), expected (choice per size, p2p,
bound-capped expectation), fitting (hardware from a log). NCCL 2.30.7; docs/nccl-model.md maps each rule.
"""

from __future__ import annotations

from collperf import lazy_exports

# Loaded on first use: model/hardware/system.py reads this package's constants and env, and the modules below price a
# System, so importing them here would make the package and model/hardware/system.py import each other.
_EXPORTS = {
    "expect": "collperf.model.nccl.expected",
    "select": "collperf.model.nccl.expected",
    "p2p_time": "collperf.model.nccl.expected",
    "system_bound": "collperf.model.nccl.expected",
    "system_bound_latency_s": "collperf.model.nccl.expected",
    "tuning_model_prices": "collperf.model.nccl.expected",
    "NcclPrediction": "collperf.model.nccl.expected",
    "fit_system": "collperf.model.nccl.fitting",
    "FitResult": "collperf.model.nccl.fitting",
    "search_graphs": "collperf.model.nccl.graphs",
    "Graph": "collperf.model.nccl.graphs",
    "tuning_table": "collperf.model.nccl.tuning",
    "TuningTable": "collperf.model.nccl.tuning",
}
__all__ = [
    "expect",
    "select",
    "tuning_table",
    "search_graphs",
    "system_bound",
    "system_bound_latency_s",
    "tuning_model_prices",
    "p2p_time",
    "fit_system",
    "NcclPrediction",
    "TuningTable",
    "Graph",
    "FitResult",
]

__getattr__ = lazy_exports(__name__, _EXPORTS)
