"""Option groups shared by several commands: one definition each, added to a command by a decorator."""

from __future__ import annotations

import functools
import inspect
from dataclasses import fields, MISSING
from typing import Optional

import typer
from typer.core import TyperCommand, TyperGroup

from collperf import __version__
from collperf.spec import CalibrateSpec, HardwareSpec, NetworkSpec, PredictSpec, SimulateSpec


class Command(TyperCommand):
    """A command whose --help option shows no value placeholder (typer prints <bool> for flags)."""

    def parse_args(self, ctx, args):
        # the words as typed, kept for a hint that must run as printed (plan's "one layout in detail")
        ctx.meta["collperf.args"] = list(args)
        return super().parse_args(ctx, args)

    def get_help_option(self, ctx):
        option = super().get_help_option(ctx)
        if option is not None:
            option.metavar = ""
        return option


class _Group(TyperGroup, Command):
    pass


app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    cls=_Group,
    help="Performance of collective communication: predict, explain, compare.",
)


def command(*args, **kwargs):
    """`app.command` for our commands (their --help without placeholders)."""
    return app.command(*args, cls=Command, **kwargs)


def sub_app(**kwargs) -> typer.Typer:
    """A command group (e.g. `testbed`) whose commands and help read like the others'."""
    return typer.Typer(cls=_Group, no_args_is_help=True, **kwargs)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"collperf {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: bool = typer.Option(
        False, "--version", metavar="", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Performance of collective communication: predict, explain, compare."""


def flag(default: bool, *names, **options):
    """A boolean option: shown in --help without a value placeholder (it takes none)."""
    return typer.Option(default, *names, metavar="", **options)


_FIELD_DEFAULT = object()


def _field_option(f, panel: str | None, default=_FIELD_DEFAULT):
    """(annotation, typer option) of a spec field from its declaration (spec.checks.cli_option): the flags and
    help declared beside the field, the field's own default (or `default`, where the command line's differs:
    None for a value the command fills in itself)."""
    meta = f.metadata["cli"]
    required = f.default is MISSING and f.default_factory is MISSING
    if default is _FIELD_DEFAULT:
        default = ... if required else f.default if f.default is not MISSING else f.default_factory()
    if isinstance(default, (list, tuple)):  # a list field takes a comma list on the command line
        default = ",".join(map(str, default))
    kind = meta["type"] or (type(default) if default not in (None, ...) else str)
    annotation = kind if default is not None else Optional[kind]
    if not meta["flags"]:  # no flag: the command's argument
        return annotation, typer.Argument(default, help=meta["help"])
    extra = {"metavar": ""} if kind is bool else {}
    return annotation, typer.Option(default, *meta["flags"], help=meta["help"], rich_help_panel=panel, **extra)


def cli_fields(spec_class) -> list[str]:
    """The fields of a spec that declare a command-line option."""
    return [f.name for f in fields(spec_class) if "cli" in f.metadata]


def spec_options(spec_class, param: str, *, only=None, exclude=(), panel: str | None = None, build: bool = True):
    """Add the options a spec's fields declare (spec.checks.cli_option) to a command: `only`/`exclude` pick
    fields. The command receives them in its `param` parameter as one spec, built and validated before it
    runs, or with build=False as the dict of the values given (for a command that adds fields of its own)."""
    chosen = [
        f
        for f in fields(spec_class)
        if "cli" in f.metadata and f.name not in exclude and (only is None or f.name in only)
    ]
    options = {f.name: _field_option(f, panel) for f in chosen}

    def decorate(command):
        signature = inspect.signature(command)
        params = [p for p in signature.parameters.values() if p.name != param]
        params += [
            inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=option, annotation=annotation)
            for n, (annotation, option) in options.items()
        ]

        @functools.wraps(command)
        def wrapper(*args, **kwargs):
            values = {n: kwargs.pop(n) for n in options}
            kwargs[param] = spec_class(**values) if build else values
            return command(*args, **kwargs)

        wrapper.__signature__ = signature.replace(parameters=params)
        wrapper.__annotations__ = {**command.__annotations__, **{n: a for n, (a, _) in options.items()}}
        return wrapper

    return decorate


def network_options(*, only=None, exclude=()):
    """Add the network options (NetworkSpec's fields) to a command; it receives them as one NetworkSpec in
    its `network` parameter."""
    return spec_options(NetworkSpec, "network", only=only, exclude=exclude, panel="Network")


def hardware_options():
    """Add the hardware options (HardwareSpec's fields) to a command; it receives them as one HardwareSpec in
    `hardware`."""
    return spec_options(HardwareSpec, "hardware", panel="Hardware (default: from the log)")


def field_option(spec_class, name: str, panel: str | None = None, default=_FIELD_DEFAULT):
    """The typer option (or argument) a spec field declares, for a command that places it among options of its
    own (a command built from several specs); `default` where the command line's differs from the field's."""
    return _field_option(next(f for f in fields(spec_class) if f.name == name), panel, default)[1]


Collective = field_option(PredictSpec, "collective")
Json = flag(False, "--json", help="Print one JSON document to stdout.")
IntraAlg = field_option(PredictSpec, "intra_algorithm")
InterAlg = field_option(PredictSpec, "inter_algorithm")
TestbedOpt = field_option(CalibrateSpec, "testbed")  # bench's, calibrate's and bound's: declared once, there
Timeout = field_option(CalibrateSpec, "timeout_s")


# Blink's options, in predict (--topology panel) and simulate (Blink panel): declared once, by SimulateSpec
def Hybrid(panel: str):
    return field_option(SimulateSpec, "hybrid", panel)


def TDpa(panel: str):
    return field_option(SimulateSpec, "t_dpa", panel)


def Transit(panel: str):
    return field_option(SimulateSpec, "transit", panel)
