"""Cluster health: the doctor's campaign plan (doctor_plan), the campaign on the testbed (doctor_testbed), and the
model's expected busbw as the thresholds of other checkers (export_thresholds)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from collperf.api.common import as_spec
from collperf.api.model import expected_bands
from collperf.errors import UsageError
from collperf.export.thresholds import AZURE_SIZE, GOOGLE_SIZES, Expected, Thresholds, render
from collperf.lab.doctor import testbed as bed, world
from collperf.lab.doctor.plan import Plan, plan
from collperf.lab.doctor.testbed_spec import parse_spec
from collperf.report import write_page
from collperf.report.doctor_page import doctor_page
from collperf.spec import DoctorPlanSpec, NetworkSpec, ThresholdSpec, sizes, write_output


def doctor_plan(spec: DoctorPlanSpec | None = None, **options) -> Plan:
    """`collperf doctor --plan --nodes N`: tests, rounds and wall time of exhaustive pairs, two-pass and the
    doctor's adaptive campaign (alone, screen, bisect, confirm, cross) for N hosts, healthy and with one faulty
    host, weighed by the fault prior. Give a DoctorPlanSpec or its fields as keywords."""
    spec = spec if spec is not None else DoctorPlanSpec(**options)
    assert spec.nodes is not None  # DoctorPlanSpec refuses a plan without nodes
    return plan(spec.nodes, spec.leaves, spec.fault_rate, spec.test_time_s)


def doctor_testbed(testbed: str, on_round=None):
    """`collperf doctor --testbed hosts=8,leaves=2,rate=40mbit[,slow-link=host3:20mbit]...`: the campaign run on
    emulated hosts under leaves and a spine, with the fault the spec injects (lab/doctor/testbed.py); a
    TestbedReport. on_round(number, outcomes) hears of each round as it ends."""
    return bed.doctor_testbed(parse_spec(testbed), on_round)


@dataclass
class ThresholdExport:
    """`collperf export thresholds`: the expected values (export.thresholds.Thresholds) and the format's files
    ({name: text}); written under `output` when given."""

    thresholds: Thresholds
    format: str
    files: dict[str, str]
    written: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"format": self.format, "files": self.files, "written": self.written, **self.thresholds.to_json()}


DEFAULT_THRESHOLD_SIZES = "1M,2M,4M,8M,16M,32M,64M,128M,256M,512M,1G,2G,4G,8G,16G"


def export_thresholds(spec: ThresholdSpec | None = None, **options) -> ThresholdExport:
    """The model's expected allreduce busbw per size for one node and spec.nodes nodes of a catalogue system
    (spec.cluster), as spec.format (superbench, cvs, azure, google, csv: export/thresholds.py) with a pass mark
    spec.threshold below it; spec.output a directory for superbench (baseline.json, rule.yaml), a file else. Give
    a ThresholdSpec, or its fields as keywords."""
    spec = as_spec(ThresholdSpec, spec, options)
    cluster, nodes, format, size, threshold, output = (
        spec.cluster,
        spec.nodes,
        spec.format,
        spec.size,
        spec.threshold,
        spec.output,
    )
    wanted = sizes(size if size is not None else DEFAULT_THRESHOLD_SIZES)
    need = (
        set(wanted)
        | ({AZURE_SIZE} if format == "azure" else set())
        | (set(GOOGLE_SIZES) if format == "google" else set())
    )
    result = Thresholds("", 0, nodes, threshold)
    for group in sorted({1, nodes}):
        assumed, bands = expected_bands("allreduce", sorted(need), NetworkSpec(cluster=cluster, nodes=group))
        system = assumed.system
        result.system, result.gpus_per_node = system.name, system.gpus_per_node
        result.source = f"{system.name}: {bands[0].band_summary or bands[0].band_from}"
        result.rows += [
            Expected(
                group,
                group * system.gpus_per_node,
                b.size,
                b.busbw_GBps(b.typical_s),
                b.busbw_GBps(b.model_s),
                b.choice,
            )
            for b in bands
        ]
    files = render(result, format)
    written = []
    if output is not None:
        if format == "superbench":
            if not os.path.isfile(output):
                os.makedirs(output, exist_ok=True)
            if not os.path.isdir(output):
                raise UsageError(
                    f"--output {output}: superbench writes two files (baseline.json, rule.yaml): give a directory"
                )
            for name, text in files.items():
                write_output(os.path.join(output, name), text, "--output")
                written.append(os.path.join(output, name))
        else:
            write_output(output, next(iter(files.values())), "--output")
            written.append(output)
    return ThresholdExport(result, format, files, written)


def doctor_report(result, output, command: str = "") -> str:
    """The campaign (a TestbedReport, the launcher's result, or either's JSON document) as a self-contained
    HTML page written to `output` (report/doctor_page.py); returns the path."""
    doc = result if isinstance(result, dict) else result.to_json()
    return str(write_page(doctor_page(doc, command), output))


def doctor_world(probe: str | None = None, leaves: int | None = None, slurm: bool = False, on_round=None):
    """`collperf doctor --torchrun` / `--slurm`: the campaign over this process's torch.distributed world (every
    rank calls it; lab/doctor/world.py). probe: 'size=1M,repeats=5,timeout=120s'; leaves: screening groups
    (else about sqrt(N)). Returns the WorldReport on rank 0, None on the others."""
    return world.doctor_world(world.parse_options(probe, leaves), slurm, on_round)
