"""Commands that speak other tools' formats: `export nccl-tuner`, `export msccl`, `import msccl`."""

from __future__ import annotations

from typing import Optional

import typer

from collperf import api, units
from collperf.cli.options import app, Command, hardware_options, Json, network_options, spec_options, sub_app
from collperf.cli.render import escape, out, print_json
from collperf.spec import HardwareSpec, MscclExportSpec, MscclImportSpec, NetworkSpec, TunerSpec

export_app = sub_app(help="Write what other tools read: NCCL tuner-plugin rules, MSCCL algorithm XML.")
import_app = sub_app(help="Read what other tools write: MSCCL algorithm XML.")
app.add_typer(export_app, name="export")
app.add_typer(import_app, name="import")


@export_app.command("nccl-tuner", cls=Command)
@hardware_options()
@spec_options(TunerSpec, "fields", build=False)  # with the logs and the hardware it is built
def export_nccl_tuner(
    logs: Optional[list[str]] = typer.Argument(
        None,
        help="One log per NCCL_ALGO/NCCL_PROTO (and "
        "optionally a default run), or "
        "optimize_config.py's CSV. None: "
        "rules from NCCL's model on --cluster.",
    ),
    hardware: HardwareSpec = None,
    fields: dict = None,
):
    """NCCL example tuner plugin rules (CSV): from fits of measured logs, or from NCCL's own model on a system
    (--cluster dgx-h100 --nodes 2; --nic-rate/--gpu-link-rate: what the links really deliver); a boundary
    wherever the fastest curve changes, bisected to the byte."""
    rules = api.export_nccl_tuner(TunerSpec(logs=logs or [], hardware=hardware, **fields))
    output = fields["output"]
    if output is None:
        out.print(rules.text(), end="", markup=False, highlight=False, soft_wrap=True)
    else:
        out.print(f"{len(rules.rules)} rule(s) written to {escape(output)}")


@export_app.command("msccl", cls=Command)
@network_options(only=("latency", "bandwidth"))
@spec_options(MscclExportSpec, "fields", build=False)  # with the network it is built
def export_msccl(network: NetworkSpec = None, fields: dict = None):
    """A verified schedule as an MSCCL algorithm XML (ours, or Blink's packed trees on a topology's group;
    switch:P, mesh:P, ring:P take their link from --latency and --bandwidth)."""
    text = api.export_msccl(MscclExportSpec(network=network, **fields))
    output = fields["output"]
    if output is None:
        out.print(text, end="", markup=False, highlight=False, soft_wrap=True)
    else:
        out.print(f"MSCCL XML written to {escape(output)}")


@import_app.command("msccl", cls=Command)
@network_options(exclude=("ranks", "nodes", "ranks_per_node"))
def import_msccl(
    path: str = typer.Argument(..., help="An MSCCL algorithm XML file."),
    topology: Optional[str] = typer.Option(
        None, "--topology", "-t", help="Simulate on this topology (dgx1v, switch:8, ring:8, cluster:NxG, file.json)."
    ),
    size: Optional[str] = typer.Option(
        None, "--size", "-s", help="Sizes to simulate at, comma list (default 1M,64M,1G)."
    ),
    mode: str = typer.Option("rounds", "--mode", help="rounds (fast) or events (congestion-aware)."),
    as_json: bool = Json,
    network: NetworkSpec = None,
):
    """Read an MSCCL XML into collperf's schedule IR: summary, symbolic verification, cost; with --topology,
    its simulated time beside each of our algorithms' on the same topology."""
    imported = api.import_msccl(MscclImportSpec(path=path, topology=topology, size=size, mode=mode, network=network))
    if as_json:
        print_json(imported.to_json())
        return
    s = imported.schedule
    a, b, c = imported.coefficients
    out.print(s.render(max_steps=32), markup=False, highlight=False)
    verdict = "verified: computes " + s.collective if imported.verified else f"does NOT verify: {imported.problem}"
    out.print(verdict, markup=False, highlight=False)
    out.print(f"cost: T = {a:g} alpha + {b:.6g} n beta + {c:.6g} n gamma (n = the formula's bytes)", markup=False)
    if imported.simulations:
        _print_runs(imported)


def _print_runs(imported) -> None:
    from rich.table import Table

    s = imported.schedule
    same = imported.simulations[0].same_name
    table = Table(title=f"simulated on {imported.topology}: the imported schedule beside ours", title_justify="left")
    for name in ["size", "imported", "busbw"] + ([f"ours: {same}"] if same else []) + ["our best", "imported / best"]:
        table.add_column(name, justify="left" if name == "our best" else "right")
    for r in imported.simulations:
        best, best_s = r.best
        table.add_row(
            units.format_size(r.size_bytes),
            units.format_time(r.time_s),
            units.format_bandwidth(r.busbw_Bps) if r.busbw_Bps else "-",
            *([units.format_time(r.ours[same])] if same else []),
            f"{best} {units.format_time(best_s)}",
            f"{r.time_s / best_s:.3f}" if best_s > 0 else "-",
        )
    out.print(table)
    out.print(
        f"ours: every {s.collective} algorithm of collperf that builds on {s.ranks} ranks, simulated the same "
        f"way ({', '.join(imported.simulations[0].ours)})",
        markup=False,
        highlight=False,
    )
