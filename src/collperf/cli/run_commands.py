"""Commands that run real processes: bench, testbed, calibrate, bound, validate."""

from __future__ import annotations

from typing import Optional

import typer

from collperf import api, units
from collperf.cli import render
from collperf.cli.bench_stream import BenchStream
from collperf.cli.options import (
    app,
    Command,
    command,
    field_option,
    flag,
    Json,
    network_options,
    spec_options,
    sub_app,
    TestbedOpt,
    Timeout,
)
from collperf.cli.render import err, out, print_json
from collperf.cli.report_command import Html, command_line
from collperf.cli.progress import progress, shown
from collperf.errors import RunError
from collperf.spec import (
    BenchSpec,
    BoundSpec,
    CalibrateSpec,
    NetworkSpec,
    output_path,
    sweep_collective,
    SweepSpec,
    TestbedDownSpec,
    TestbedSpec,
    ValidateSpec,
)


@command()
@network_options(exclude=("ranks",))
@spec_options(SweepSpec, "sweep_fields", exclude=("collective",), build=False)  # the collective: argument or option
@spec_options(BenchSpec, "bench_fields", build=False)  # with the sweep, the testbed and the network it is built
def bench(
    collective_arg: Optional[str] = typer.Argument(
        None, metavar="[COLLECTIVE]", help="The collective to measure (default allreduce); or --collective."
    ),
    collective: Optional[str] = field_option(SweepSpec, "collective", default=None),
    timeout: float = Timeout,
    as_json: bool = flag(
        False,
        "--json",
        help="Print the nccl-tests -J JSON document (plus our fields) to stdout at the end, instead of the text table.",
    ),
    testbed: Optional[str] = TestbedOpt,
    html: Optional[str] = Html,
    bench_fields: dict = None,
    sweep_fields: dict = None,
    network: NetworkSpec = None,
):
    """Measure collectives on real processes (gloo locally, NCCL under torchrun with GPUs), nccl-tests style,
    each row beside the model's prediction. Rows print as they complete; a timeout or Ctrl-C keeps them."""
    sweep = SweepSpec(collective=sweep_collective(collective_arg, collective), **sweep_fields)
    spec = BenchSpec(sweep=sweep, timeout_s=timeout, network=network, testbed=api.testbed(testbed), **bench_fields)
    stream = BenchStream(as_json, progress=sweep.progress)
    try:
        results = api.bench(spec, on_row=stream.row, on_note=stream.note, on_info=stream.info)
    except RunError as e:
        partial = getattr(e, "results", None)
        if partial is None:
            raise
        stream.interrupted(partial, str(e))
        reason = getattr(e, "reason", "")  # the shell's codes for SIGINT and SIGTERM, 1 for a failure
        raise typer.Exit(130 if reason == "interrupted" else 143 if reason.startswith("terminated") else 1)
    if results is None:  # a torchrun rank other than 0
        return
    stream.finish(results)
    if html:
        api.report([results], html, command_line(), network=network)
    if results.wrong_rows():
        err.print(f"[red]{results.wrong_rows()} test(s) had wrong results: their times are not to be trusted[/red]")
        raise typer.Exit(1)


testbed_app = sub_app(help="An emulated cluster on this machine: network namespaces with shaped links.")
app.add_typer(testbed_app, name="testbed")


@testbed_app.command("up", cls=Command)
@spec_options(TestbedSpec, "spec")
def testbed_up(spec: TestbedSpec = None):
    """Bring a testbed up (Linux, root, iproute2)."""
    out.print(api.testbed_start(spec).describe())


@testbed_app.command("status", cls=Command)
def testbed_status(name: Optional[str] = field_option(TestbedDownSpec, "name"), as_json: bool = Json):
    """List the testbed namespaces, their addresses, shaping and processes."""
    rows = api.testbed_status(name)
    print_json(rows) if as_json else render.print_testbed_status(rows)


@testbed_app.command("down", cls=Command)
@spec_options(TestbedDownSpec, "spec")
def testbed_down(spec: TestbedDownSpec = None):
    """Tear testbeds down: by name, or every one that crashed or ended runs left (--all: every one)."""
    removed = api.testbed_down(spec)
    out.print(f"removed {len(removed)} namespace(s)" + (": " + ", ".join(removed) if removed else ""))
    if spec.name is None and not spec.everything:
        kept = api.testbed_held()
        if kept:
            out.print(
                f"kept {', '.join(kept)}: held by a running collperf or `testbed up`; name one with --name "
                "(or pass --all)"
            )


@command("calibrate")
def calibrate_command(
    ranks: Optional[int] = field_option(CalibrateSpec, "ranks"),
    testbed: Optional[str] = TestbedOpt,
    output: str = field_option(CalibrateSpec, "output", default="profile.json"),
    timeout: float = Timeout,
):
    """Measure alpha, bandwidth (intra- and inter-host) and gamma; write a profile."""
    output_path(output, "--output")
    with progress("calibrating: ping-pong of 8 B and 16 MiB, the reduction rate") as steps:

        def on_link(done, total, measured):  # each link as it is measured, where a person watches
            if shown():
                render.link_progress(done, total, measured)
            steps.done(done, total, f"calibrating link {done}/{total}")

        result = api.calibrate(
            CalibrateSpec(ranks=ranks, testbed=testbed, timeout_s=timeout, output=output), on_link=on_link
        )
    render.print_profile(result.profile, output)


@command("bound")
@spec_options(BoundSpec, "spec")
def bound_command(as_json: bool = Json, spec: BoundSpec = None):
    """The allreduce lower bound measured on the machine (Patarasuk and Yuan's bandwidth-optimal bound, run
    as a forwarding chain), beside each algorithm and the model."""
    result = api.bound(spec)
    print_json(result.to_json()) if as_json else render.print_bound(result)


@command("validate")
@spec_options(ValidateSpec, "fields", exclude=("testbeds",), build=False)
def validate_command(
    testbeds: Optional[list[str]] = field_option(ValidateSpec, "testbeds", default=None),
    as_json: bool = Json,
    plot: Optional[str] = typer.Option(None, "--plot", help=("Write the predicted-vs-measured figure (PNG/SVG).")),
    html: Optional[str] = Html,
    fields: dict = None,
):
    """Predict a grid of collectives from a calibrated profile alone and measure them: errors per algorithm."""
    output_path(plot, "--plot")
    _note_old_range(fields["sizes"], fields["min_bytes"], fields["max_bytes"], fields["factor"])
    with progress("validating", as_json) as steps:
        result = api.validate(ValidateSpec(testbeds=testbeds or [], **fields), on_step=steps.step)
    if plot:
        render.plot_validation(result, plot)
    if html:
        api.report([result], html, command_line())
    print_json(result.to_json()) if as_json else render.print_validation(result)


def _note_old_range(sizes: str | None, min_bytes: str, max_bytes: str, factor: int) -> None:
    """validate once read --sizes A,B as the range from A to B; it is a list now, as everywhere else. Two
    sizes that the default grid's step would fill in are said to be measured alone, with the range's flags."""
    if sizes is None:
        return
    given = sorted(set(units.parse_sizes(sizes)))
    if len(given) == 2 and given[1] > given[0] * factor:
        low, high = (units.format_size(s).replace(" ", "").replace("iB", "") for s in given)
        err.print(
            f"note: --sizes {sizes} measures these 2 sizes only (a list, as in every command); for the range "
            f"between them give -b {low} -e {high}"
        )
