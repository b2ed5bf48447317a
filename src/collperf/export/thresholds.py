"""The model's expected allreduce busbw per size and group (one node, N nodes) of a catalogue system, written as
the thresholds of the checkers operators run. Pure: values in, text out.

The expected value is the calibrated typical of `predict --cluster` (expect/expectation.py: healthy public
runs of the system's fabric class around NCCL's model time); NCCL's model busbw is kept beside it. Each
format, as its project documents it (file and version cited per writer):

superbench  SuperBench data diagnosis (microsoft/superbenchmark docs/user-tutorial/data-diagnosis.md, v0.10
            rule file; superbench/analyzer/data_diagnosis.py): a baseline JSON of {metric: value} and a rule
            YAML; metrics `nccl-bw/allreduce_<bytes>_busbw` (GB/s; a raw metric's `:<rank>` suffix is dropped
            when the baseline is looked up); the rule `function: variance`, `criteria: "lambda x:x<-T"`
            (variance = (raw - baseline) / baseline), plus the documented `failure_check` on return codes.
cvs         AMD CVS rccl_config.json (ROCm/cvs docs/reference/configuration-files/network/rccl.rst):
            rccl.results.all_reduce_perf.bus_bw maps the size in bytes (a string) to the expected busbw in
            GB/s (a string, two decimals); CVS itself fails a run below 95 % of it when cvs_params.verify_bus_bw
            is "True"; mpi_params.no_of_nodes / no_of_local_ranks say the group.
azure       azurehpc-health-checks NHC line (Azure/azurehpc-health-checks conf/nd96isr_h100_v5.conf,
            customTests/azure_nccl_allreduce.nhc): `* || check_nccl_allreduce EXP_BW REPEATS TOPOFILE SIZE`:
            one node's all_reduce_perf at one size (-b SIZE -e SIZE), failed when its "Avg bus bandwidth" is
            below EXP_BW (GB/s).
google      cluster-health-scanner NCCL check (GoogleCloudPlatform/cluster-health-scanner
            src/nccl_healthcheck/nccl_startup.py, config.py): environment BANDWIDTH_THRESHOLD (whole GB/s,
            compared with the mean over ITERATIONS runs of "# Avg bus bandwidth", the mean busbw over the
            sizes START_MESSAGE_SIZE..END_MESSAGE_SIZE, default 2G..8G doubling), NHOSTS hosts per test.
csv         one row per group and size: every number above.

Azure and Google compare with a value directly, so theirs is (1 - threshold) x the expected; SuperBench and
CVS carry the expected value and apply their own rule (SuperBench: the threshold given here; CVS: 0.95).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

from collperf import units

GOOGLE_SIZES = (2 << 30, 4 << 30, 8 << 30)  # START_MESSAGE_SIZE 2G .. END_MESSAGE_SIZE 8G, doubling
AZURE_SIZE = 16 << 30  # the conf files' message size: 16G


@dataclass(frozen=True)
class Expected:
    """One group's expectation at one size."""

    nodes: int
    ranks: int
    size_bytes: int
    busbw_GBps: float  # the calibrated typical: what a healthy run of this system reaches
    model_busbw_GBps: float  # NCCL's model
    nccl_choice: str

    def to_json(self) -> dict:
        return dict(vars(self))


@dataclass
class Thresholds:
    system: str
    gpus_per_node: int
    nodes: int  # the N-node group (the one-node group is always there too)
    threshold: float  # the shortfall allowed below the expected, e.g. 0.05
    rows: list[Expected] = field(default_factory=list)
    source: str = ""  # where the expected values come from (the band's calibration)

    def group(self, nodes: int) -> list[Expected]:
        return [r for r in self.rows if r.nodes == nodes]

    def at(self, nodes: int, size_bytes: int) -> Expected | None:
        return next((r for r in self.group(nodes) if r.size_bytes == size_bytes), None)

    def to_json(self) -> dict:
        return {
            "system": self.system,
            "gpus_per_node": self.gpus_per_node,
            "nodes": self.nodes,
            "threshold": self.threshold,
            "source": self.source,
            "rows": [r.to_json() for r in self.rows],
        }


def floor_value(t: Thresholds, expected_GBps: float) -> float:
    """The pass mark of a checker that compares with a value: (1 - threshold) x expected."""
    return expected_GBps * (1.0 - t.threshold)


def superbench(t: Thresholds) -> dict[str, str]:
    """{'baseline.json': ..., 'rule.yaml': ...} for `sb result diagnosis --rule-file rule.yaml --baseline-file
    baseline.json`: the N-node group's busbw per size."""
    rows = t.group(t.nodes)
    baseline = {f"nccl-bw/allreduce_{r.size_bytes}_busbw": round(r.busbw_GBps, 2) for r in rows}
    metrics = "\n".join(f"        - nccl-bw/allreduce_{r.size_bytes}_busbw" for r in rows)
    rule = (
        f"# SuperBench rules: {t.system}, {t.nodes} node(s) x {t.gpus_per_node} GPUs, allreduce busbw "
        f"more than {t.threshold:.0%} below the baseline (collperf export thresholds)\n"
        "version: v0.10\n"
        "superbench:\n"
        "  rules:\n"
        "    failure-rule:\n"
        "      function: failure_check\n"
        "      criteria: lambda x:x>0\n"
        "      categories: Failed\n"
        "      metrics:\n"
        "        - nccl-bw/return_code\n"
        "    nccl-allreduce-busbw:\n"
        "      function: variance\n"
        f'      criteria: "lambda x:x<-{t.threshold:g}"\n'
        "      categories: NCCL\n"
        "      metrics:\n" + metrics + "\n"
    )
    return {"baseline.json": json.dumps(baseline, indent=2) + "\n", "rule.yaml": rule}


def cvs(t: Thresholds) -> str:
    """The `rccl` section of CVS's rccl_config.json with the N-node group's expected busbw per size."""
    doc = {
        "rccl": {
            "mpi_params": {"no_of_nodes": str(t.nodes), "no_of_local_ranks": str(t.gpus_per_node)},
            "cvs_params": {"verify_bus_bw": "True"},
            "results": {
                "all_reduce_perf": {"bus_bw": {str(r.size_bytes): f"{r.busbw_GBps:.2f}" for r in t.group(t.nodes)}}
            },
        }
    }
    return json.dumps(doc, indent=2) + "\n"


def azure(t: Thresholds) -> str:
    """One NHC line: one node's allreduce at 16G, held to (1 - threshold) x its expected busbw."""
    r = t.at(1, AZURE_SIZE)
    if r is None:
        raise ValueError("the azure line needs the one-node expectation at 16G")
    return (
        f"# {t.system}: one node x {t.gpus_per_node} GPUs expected at {r.busbw_GBps:.1f} GB/s busbw at 16G "
        f"(collperf export thresholds); pass mark {1 - t.threshold:.0%} of it\n"
        f" * || check_nccl_allreduce {floor_value(t, r.busbw_GBps):.1f} 1 "
        f"$AZ_NHC_ROOT/topofiles/ndv5-topo.xml 16G\n"
    )


def google(t: Thresholds) -> str:
    """The scanner's environment: BANDWIDTH_THRESHOLD for NHOSTS = the N-node group over 2G..8G."""
    rows = [t.at(t.nodes, s) for s in GOOGLE_SIZES]
    if any(r is None for r in rows):
        raise ValueError("the google threshold needs the expectation at 2G, 4G and 8G")
    mean = sum(r.busbw_GBps for r in rows) / len(rows)
    return (
        f"# {t.system}: {t.nodes} host(s) x {t.gpus_per_node} GPUs, mean expected busbw {mean:.1f} GB/s over "
        f"2G..8G (collperf export thresholds); pass mark {1 - t.threshold:.0%} of it, whole GB/s\n"
        f"NHOSTS={t.nodes}\nSTART_MESSAGE_SIZE=2G\nEND_MESSAGE_SIZE=8G\n"
        f"BANDWIDTH_THRESHOLD={math.floor(floor_value(t, mean))}\n"
    )


def csv(t: Thresholds) -> str:
    lines = [
        "# " + (t.source or f"{t.system}: the model's expected allreduce busbw"),
        "system,nodes,ranks,size_bytes,size,expected_busbw_GBps,nccl_model_busbw_GBps,threshold,"
        "pass_mark_busbw_GBps,nccl_choice",
    ]
    for r in t.rows:
        lines.append(
            f"{t.system},{r.nodes},{r.ranks},{r.size_bytes},{units.format_size(r.size_bytes)},"
            f"{r.busbw_GBps:.2f},{r.model_busbw_GBps:.2f},{t.threshold:g},"
            f"{floor_value(t, r.busbw_GBps):.2f},{r.nccl_choice}"
        )
    return "\n".join(lines) + "\n"


def render(t: Thresholds, fmt: str) -> dict[str, str]:
    """The files of format `fmt`: {file name: text} (superbench two files, the others one)."""
    if fmt == "superbench":
        return superbench(t)
    name = {
        "cvs": "rccl_config.json",
        "azure": "nccl_allreduce.conf",
        "google": "nccl_healthcheck.env",
        "csv": "thresholds.csv",
    }[fmt]
    return {name: {"cvs": cvs, "azure": azure, "google": google, "csv": csv}[fmt](t)}
