"""NCCL's expectation model: what NCCL chooses and how long it takes on given hardware.

    from collperf.model.nccl import expect, select, tuning_table, fit_system
    from collperf.model.systems import system_for_gpu
    sys = system_for_gpu("NVIDIA H100 80GB HBM3", nodes=2, gpus_per_node=8)
    pred = expect("allreduce", sizes, sys)   # pred.time_s, pred.algorithm, pred.regime, pred.bound_s

Modules: constants (tuning.cc tables), graphs (a stand-in for the topology search), channels (the channels
NCCL runs: comm->nChannels, nvlsChannels), tuning (the per-function table), expected (choice per size, p2p,
bound-capped expectation), fitting (hardware from a log). NCCL 2.30.7; docs/nccl-model.md maps each rule.
"""

from __future__ import annotations

from collperf.model.nccl.expected import NcclPrediction, expect, p2p_time, select, system_bound
from collperf.model.nccl.fitting import FitResult, fit_system
from collperf.model.nccl.graphs import Graph, search_graphs
from collperf.model.nccl.tuning import TuningTable, tuning_table

__all__ = ["expect", "select", "tuning_table", "search_graphs", "system_bound", "p2p_time",
           "fit_system", "NcclPrediction", "TuningTable", "Graph", "FitResult"]
