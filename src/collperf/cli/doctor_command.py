"""`collperf doctor`: is this cluster healthy, and which part is not (docs/doctor.md)."""

from __future__ import annotations

from typing import Optional

import typer
from rich.table import Table

from collperf import api, units
from collperf.cli.interop_commands import export_app
from collperf.cli.options import Command, Json, command, flag, spec_options
from collperf.cli.render import escape, out, print_json
from collperf.cli.report_command import Html, command_line
from collperf.errors import UsageError
from collperf.spec import DoctorPlanSpec, ThresholdSpec


@command()
@spec_options(DoctorPlanSpec, "spec", build=False)
def doctor(
    plan: bool = flag(
        False,
        "--plan",
        help="Predict the campaign: tests, rounds and wall time per strategy for --nodes hosts (runs nothing).",
    ),
    testbed: str = typer.Option(
        None,
        "--testbed",
        help=(
            "Run the campaign on emulated hosts (root): hosts=8,leaves=2,rate=40mbit[,uplink=RATE]"
            "[,slow-link=HOST:RATE][,slow-uplink=LEAF:RATE][,slow-rank=HOST:DELAY][,kill-host=HOST:AFTER]"
            " (docs/doctor.md)."
        ),
    ),
    torchrun: bool = flag(
        False,
        "--torchrun",
        help="Run the campaign over this torchrun world (every rank runs this command; rank 0 reports).",
    ),
    slurm: bool = flag(
        False,
        "--slurm",
        help="Run the campaign over this srun job step (one task per GPU; the world from SLURM_* variables).",
    ),
    probe: Optional[str] = typer.Option(
        None, "--probe", help="With --torchrun/--slurm: size=1M,repeats=5,timeout=120s (the allreduce each test runs)."
    ),
    html: Optional[str] = Html,
    as_json: bool = Json,
    spec: dict = None,
):
    """Is this cluster healthy, and which part is not: the campaign on a real cluster (--torchrun, --slurm), on
    the testbed (--testbed), and its cost (--plan)."""
    modes = [
        name
        for name, on in (("--plan", plan), ("--testbed", testbed), ("--torchrun", torchrun), ("--slurm", slurm))
        if on
    ]
    if len(modes) > 1:
        raise UsageError(f"give one of --plan, --testbed, --torchrun, --slurm, not {' and '.join(modes)}")
    if not modes:
        raise UsageError(
            "collperf doctor needs --plan (collperf doctor --plan --nodes 232), --testbed "
            "(collperf doctor --testbed hosts=8,leaves=2,rate=40mbit), --torchrun or --slurm; "
            "docs/doctor.md"
        )
    if probe is not None and not (torchrun or slurm):
        raise UsageError("--probe sets the test of --torchrun or --slurm; drop it")
    if html and plan:
        raise UsageError("--html reports a campaign that ran: give it with --testbed, --torchrun or --slurm")
    given = [k for k, v in spec.items() if v is not None and k != "test_time" or k == "test_time" and v != "30s"]
    if testbed:
        if given:
            raise UsageError(
                f"--testbed takes its hosts and leaves in its spec; drop "
                f"{', '.join('--' + k.replace('_', '-') for k in given)}"
            )
        _show(api.doctor_testbed(testbed, _on_round(as_json)), as_json, html, "with the testbed's set-up")
        return
    if torchrun or slurm:
        if set(given) - {"leaves"}:
            raise UsageError(
                f"--torchrun/--slurm take the hosts from the world; drop "
                f"{', '.join('--' + k.replace('_', '-') for k in set(given) - {'leaves'})}"
            )
        report = api.doctor_world(probe, leaves=spec.get("leaves"), slurm=slurm, on_round=_on_round(as_json))
        if report is not None:  # rank 0 reports; the other ranks print nothing
            _show(report, as_json, html, "with the world's start")
        return
    result = api.doctor_plan(DoctorPlanSpec(**spec))
    if as_json:
        print_json(result.to_json())
        return
    sizes = sorted({len(g) for g in result.groups})
    out.print(
        f"{result.nodes} hosts in {len(result.groups)} screening groups of "
        f"{'/'.join(map(str, sizes))}; fault prior {result.fault_rate:.3g} per host; "
        f"{units.format_time(result.test_time_s)} per round; round bound ceil(log2 N)+3 = {result.round_bound}"
    )
    table = Table(title="per strategy (one fault: the mean over every faulty host)", title_justify="left")
    for name in (
        "strategy",
        "tests healthy",
        "rounds healthy",
        "tests 1 fault",
        "rounds 1 fault",
        "expected tests",
        "expected wall time",
    ):
        table.add_column(name, justify="left" if name == "strategy" else "right")
    for s in result.strategies:
        table.add_row(
            s.name,
            str(s.tests_healthy),
            str(s.rounds_healthy),
            f"{s.tests_one_fault:.1f}",
            f"{s.rounds_one_fault:.1f}",
            f"{s.expected_tests:.1f}",
            units.format_time(s.wall_s),
        )
    out.print(table)
    for s in result.strategies:
        out.print(f"  {s.name}: {s.note}")


def _on_round(as_json: bool):
    def on_round(number, outcomes):
        if not as_json:
            failed = [o for o in outcomes if not o.passed]
            out.print(f"round {number}: {outcomes[0].test.stage}, {len(outcomes)} test(s), {len(failed)} failed")

    return on_round


def _show(report, as_json: bool, html: str | None, setup: str) -> None:
    """A campaign that ran (testbed or world), from its JSON document: the components by their own names."""
    doc = report.to_json()
    if html:
        path = api.doctor_report(doc, html, command_line())
        if not as_json:
            out.print(f"report written to {escape(path)}")
    if as_json:
        print_json(doc)
        return
    accused = [c for c in doc["components"] if c["verdict"] != "healthy"]
    out.print("; ".join(f"{c['component']} {_verdict(c)}" for c in accused) if accused else "healthy: nothing accused")
    table = Table(title="per component", title_justify="left")
    for name in ("component", "verdict", "evidence"):
        table.add_column(name)
    for c in doc["components"]:
        table.add_row(escape(c["component"]), _verdict(c), escape("; ".join(c["evidence"])))
    out.print(table)
    pairs = doc["exhaustive_pairs"]
    out.print(
        f"{doc['tests']} tests in {doc['rounds']} rounds (bound ceil(log2 N)+3 = {doc['round_bound']}; the "
        f"plan predicts {doc['predicted_tests']} tests), {units.format_time(doc['wall_s'])} {setup}; "
        f"exhaustive pairs: {pairs['tests']} tests in {pairs['rounds']} rounds"
    )


def _verdict(c: dict) -> str:
    return f"degraded by {c['degraded_by'] * 100:.0f} %" if c["verdict"] == "degraded" else c["verdict"]


@export_app.command("thresholds", cls=Command)
@spec_options(ThresholdSpec, "spec")
def export_thresholds(as_json: bool = Json, spec: ThresholdSpec = None):
    """The model's expected allreduce busbw per size, one node and --nodes nodes of a catalogue system, as the
    thresholds of SuperBench, AMD CVS, Azure's health checks, Google's cluster health scanner, or CSV
    (docs/doctor.md)."""
    result = api.export_thresholds(spec)
    if as_json:
        print_json(result.to_json())
    elif result.written:
        out.print(f"{result.format} thresholds written to {escape(', '.join(result.written))}")
    else:
        for name, text in result.files.items():
            if len(result.files) > 1:
                out.print(f"# --- {name}", markup=False, highlight=False)
            out.print(text, end="", markup=False, highlight=False, soft_wrap=True)
