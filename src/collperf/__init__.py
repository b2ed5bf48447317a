"""collperf: the performance of collective communication.

    import collperf
    net = collperf.network(ranks=16, latency="10us", bandwidth="100GB/s")
    for prediction in collperf.predict("allreduce", "1M,1G", net):
        print(prediction.best, prediction.lower_bound_s)

Every command has a function in `collperf.api` taking a spec from `collperf.spec`; those whose
names are not also modules of the package (collperf.lab.bench, .simulate, .plan, ...) are re-exported
here. Attributes are imported on first use, so `import collperf` stays light.
"""

import importlib
import sys
from typing import Any, Callable

__version__ = "0.2.0"

# public name -> the module that defines it
_EXPORTS = {
    "UsageError": "collperf.errors",
    "RunError": "collperf.errors",
    "Cost": "collperf.model.costs",
    "cost": "collperf.model.costs",
    "Cluster": "collperf.model.network",
    "Link": "collperf.model.network",
    "Network": "collperf.model.network",
    "Prediction": "collperf.model.predict",
    "PRESETS": "collperf.model.hardware.presets",
    "get_preset": "collperf.model.hardware.presets",
    **{
        name: "collperf.spec"
        for name in (
            "NetworkSpec",
            "SweepSpec",
            "BenchSpec",
            "SimulateSpec",
            "LogSpec",
            "DiagnoseSpec",
            "HardwareSpec",
            "MeasurementSpec",
            "PlanSpec",
            "PredictSpec",
            "CrossoverSpec",
            "ScheduleSpec",
            "VerifySpec",
        )
    },
    **{
        name: "collperf.api"
        for name in (
            "network",
            "predict",
            "crossover",
            "algorithms",
            "schedule",
            "verified_schedule",
            "verify_all",
            "bound",
            "testbed_up",
            "testbed_start",
            "testbed_status",
            "testbed_down",
            "read_logs",
            "fit_tables",
            "fit_logs",
            "diagnose_logs",
            "diagnose_measurement",
            "predict_nccl",
            "compare_logs",
            "plan_spec",
            "plan_compare",
            "plan_search",
            "plan_step",
        )
    },
}
__all__ = sorted(_EXPORTS)


def lazy_exports(module_name: str, exports: dict[str, str]) -> Callable[[str], Any]:
    """A module's `__getattr__` that imports each of `exports` (public name -> defining module) on first use
    and keeps it in the module, so that importing the package loads none of them."""

    def __getattr__(name: str) -> Any:  # a module attribute of any type
        if name not in exports:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(exports[name]), name)
        setattr(sys.modules[module_name], name, value)
        return value

    return __getattr__


__getattr__ = lazy_exports(__name__, _EXPORTS)
