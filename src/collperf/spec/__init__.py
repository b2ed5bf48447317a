"""Validated requests: what a user asks for, built from CLI options or from Python.

Each spec checks itself once, in `__post_init__`, and raises a UsageError that names the value,
what was expected and how to fix it. The API takes specs; the CLI only builds them. A `NetworkSpec`
is the one way to get a `Network` (`NetworkSpec.resolve()`).

Every spec is a frozen, keyword-only dataclass: what the user gave stays in its fields (a comma list such as
'0,1,4' is read into its list once), and parsed values (sizes in bytes, times in seconds, rates in bytes/s)
are derived properties, checked when the spec is made.

Submodules by area: network (NetworkSpec, HardwareSpec), model (PredictSpec, NcclPredictSpec, CrossoverSpec, NcclCrossoverSpec,
ScheduleSpec, VerifySpec), runs (SweepSpec, BenchSpec), lab (CalibrateSpec, BoundSpec, ValidateSpec, TestbedSpec,
TestbedDownSpec),
interop (TunerSpec, MscclExportSpec, MscclImportSpec, ThresholdSpec),
topology (SimulateSpec, TreesSpec, TopologyPredictSpec), patterns (PatternSpec), logs (LogSpec,
DiagnoseSpec, MeasurementSpec), requests (predict_request, crossover_request, simulate_request: the spec of the mode asked for, the
conflict rules between modes), trace (TraceSpec), plan (PlanSpec, SearchSpec), plan_options (PlanModelSpec,
PlanLayoutSpec: plan's model and layout as given), checks (the validators they share). Every name is
re-exported here: `from collperf.spec import X` is the way in.
"""

from collperf.spec.checks import check_mode, output_path, rank_list, sizes, write_output
from collperf.spec.interop import THRESHOLD_FORMATS, MscclExportSpec, MscclImportSpec, ThresholdSpec, TunerSpec
from collperf.spec.lab import BoundSpec, CalibrateSpec, TestbedDownSpec, TestbedSpec, ValidateSpec
from collperf.spec.doctor import DoctorPlanSpec
from collperf.spec.logs import BaselineSpec, DiagnoseSpec, LogSpec, MeasurementSpec, ReportSpec
from collperf.spec.model import CrossoverSpec, NcclCrossoverSpec, NcclPredictSpec, PredictSpec, ScheduleSpec, VerifySpec
from collperf.spec.network import HardwareSpec, NCCL_VIEW, NetworkSpec, network
from collperf.spec.patterns import PATTERN_COLLECTIVES, PATTERNS, PatternSpec
from collperf.spec.plan import PlanSpec, SearchSpec, flops
from collperf.spec.plan_options import PlanLayoutSpec, PlanModelSpec
from collperf.spec.requests import crossover_request, predict_request, simulate_request
from collperf.spec.runs import DTYPE_BYTES, OPS, TOPOLOGY_ALGORITHMS, BenchSpec, SweepSpec, sweep_collective
from collperf.spec.trace import TraceSpec
from collperf.spec.topology import (
    TREE_COLLECTIVES,
    SimulateSpec,
    TopologyPredictSpec,
    TreesSpec,
    check_transit,
    predict_network,
    topology_link,
)

__all__ = [
    "NCCL_VIEW",
    "BaselineSpec",
    "BenchSpec",
    "DoctorPlanSpec",
    "BoundSpec",
    "CalibrateSpec",
    "CrossoverSpec",
    "NcclCrossoverSpec",
    "NcclPredictSpec",
    "PredictSpec",
    "ScheduleSpec",
    "TestbedDownSpec",
    "TestbedSpec",
    "ValidateSpec",
    "VerifySpec",
    "ReportSpec",
    "SearchSpec",
    "MscclExportSpec",
    "MscclImportSpec",
    "THRESHOLD_FORMATS",
    "ThresholdSpec",
    "TunerSpec",
    "DiagnoseSpec",
    "DTYPE_BYTES",
    "HardwareSpec",
    "LogSpec",
    "MeasurementSpec",
    "NetworkSpec",
    "OPS",
    "PATTERN_COLLECTIVES",
    "PATTERNS",
    "PatternSpec",
    "PlanLayoutSpec",
    "PlanModelSpec",
    "PlanSpec",
    "SimulateSpec",
    "SweepSpec",
    "TOPOLOGY_ALGORITHMS",
    "TREE_COLLECTIVES",
    "TopologyPredictSpec",
    "TraceSpec",
    "TreesSpec",
    "check_mode",
    "check_transit",
    "flops",
    "network",
    "output_path",
    "predict_network",
    "crossover_request",
    "predict_request",
    "simulate_request",
    "rank_list",
    "sizes",
    "sweep_collective",
    "topology_link",
    "write_output",
]
