"""The Python API: one function per command, taking a validated spec (collperf.spec) and returning a
typed result. The CLI builds the specs and renders what these return; it holds no logic of its own.

Sizes, times and bandwidths may be strings as the CLI takes them ('64M', '5us', '50GB/s') or numbers
in bytes, seconds and bytes/s. Heavy modules (scipy, networkx, matplotlib, torch) are imported by the
functions that need them, so `import collperf` stays light.

The functions live in one module per area; this package re-exports them, so `from collperf import api;
api.predict(...)` and `from collperf.api import predict` work as they always did:
  model.py       predict, predict_topology, crossover, crossover_nccl, algorithms, expected_bands (predict --cluster),
                 paired_ratio, confirmation (-A auto's measured rule)
  schedules.py   schedule, verified_schedule, verify_all, simulate, trees, pattern
  runs.py        testbed up/start/status/down, bench, calibrate, bound, validate
  logs.py        read_logs, fit_*, diagnose_*, predict_nccl, compare_logs, report
  plans.py       plan_spec, plan_search, plan, plan_compare, plan_step
  trace.py       trace (profiler traces of a training step)
  interop.py     export_nccl_tuner, export_msccl, import_msccl
  results.py     the typed results of the model and schedule functions, each with its to_json()
  common.py      the helpers they share (the network from a spec, algorithm aliases, topologies, as_spec)
"""

from __future__ import annotations

# ruff: noqa: F401  (this package re-exports its modules' names)
from collperf.spec import (BaselineSpec, BenchSpec, DoctorPlanSpec, BoundSpec, CalibrateSpec, CrossoverSpec, DiagnoseSpec, NcclCrossoverSpec, HardwareSpec, LogSpec,
                           MeasurementSpec, NcclPredictSpec, NetworkSpec, PatternSpec, PlanSpec, PredictSpec,
                           ScheduleSpec, SimulateSpec, SweepSpec, TopologyPredictSpec, TraceSpec, TreesSpec,
                           ValidateSpec, VerifySpec, MscclExportSpec, MscclImportSpec, ReportSpec, SearchSpec, TunerSpec,
                           crossover_request, network, output_path, predict_request, simulate_request, sizes)
from collperf.api.results import (Algorithms, Calibration, Crossover, MeasuredBound, NcclChoice, NcclCrossover,
                                  Predictions,
                                  VerifiedSchedule, Verification, VerifyRow)
from collperf.api.common import ALIASES
from collperf.api.model import (TopologyPrediction, algorithms, confirmation, crossover, crossover_nccl,
                               expected_bands,
                               gpu_parts, predict, predict_topology, systems)
from collperf.api.schedules import (TUPLE_RANKS_LIMIT, Simulation, Simulations, pattern, schedule, simulate,
                                    trees, verified_schedule, verify_all)
from collperf.api.runs import (Validation, bench, bound, calibrate, testbed, testbed_down, testbed_held, testbed_start,
                               testbed_status, testbed_up, validate)
from collperf.diagnose.inputs import LinkKind
from collperf.diagnose.verdict import Kind as VerdictKind, Verdict
from collperf.model.auto.paired_ratio import PairedRatio, paired_ratio
from collperf.api.logs import (compare_logs, diagnose_baseline, diagnose_input,
                               diagnose_logs, diagnose_measurement, fit_logs, fit_tables, predict_nccl,
                               read_logs, report)
from collperf.api.plans import plan, plan_compare, plan_search, plan_spec, plan_step
from collperf.api.trace import trace
from collperf.api.doctor import doctor_plan, doctor_report, doctor_testbed, doctor_world, export_thresholds
from collperf.api.interop import (ImportedRun, ImportedSchedule, export_msccl, export_nccl_tuner,
                                  import_msccl)

# every name above, sorted (tests/test_structure.py keeps it complete)
__all__ = ["ALIASES", "Algorithms", "BaselineSpec", "BenchSpec", "BoundSpec", "CalibrateSpec", "Calibration",
           "Crossover", "CrossoverSpec", "DiagnoseSpec", "DoctorPlanSpec", "HardwareSpec", "ImportedRun",
           "ImportedSchedule", "LinkKind", "LogSpec", "MeasuredBound", "MeasurementSpec", "MscclExportSpec",
           "MscclImportSpec", "NcclChoice", "NcclCrossover", "NcclCrossoverSpec", "NcclPredictSpec", "NetworkSpec",
           "PairedRatio", "PatternSpec", "PlanSpec", "PredictSpec", "Predictions", "ReportSpec", "ScheduleSpec",
           "SearchSpec", "SimulateSpec", "Simulation", "Simulations", "SweepSpec", "TUPLE_RANKS_LIMIT",
           "TopologyPredictSpec", "TopologyPrediction", "TraceSpec", "TreesSpec", "TunerSpec", "ValidateSpec",
           "Validation", "Verdict", "VerdictKind", "Verification", "VerifiedSchedule", "VerifyRow", "VerifySpec",
           "algorithms", "bench", "bound", "calibrate", "compare_logs", "confirmation", "crossover",
           "crossover_nccl", "crossover_request", "diagnose_baseline", "diagnose_input", "diagnose_logs",
           "diagnose_measurement", "doctor_plan", "doctor_report", "doctor_testbed", "doctor_world",
           "expected_bands", "export_msccl", "export_nccl_tuner", "export_thresholds", "fit_logs", "fit_tables",
           "gpu_parts", "import_msccl", "network", "output_path", "paired_ratio", "pattern", "plan", "plan_compare",
           "plan_search", "plan_spec", "plan_step", "predict", "predict_nccl", "predict_request", "predict_topology",
           "read_logs", "report", "schedule", "simulate", "simulate_request", "sizes", "systems", "testbed",
           "testbed_down", "testbed_held", "testbed_start", "testbed_status", "testbed_up", "trace", "trees",
           "validate", "verified_schedule", "verify_all"]
