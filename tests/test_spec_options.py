"""Each option declared once: for every command, every field of each spec it builds has exactly one
command-line parameter, whose default is the field's. An introspection of the typer app against the
dataclass fields, so a field added to a spec without its option (or an option whose default drifts from
the spec's) fails here. Also: the specs are frozen and keyword-only, and parsed values are derived."""

from __future__ import annotations

import dataclasses

import pytest

from collperf.runtime.job import BenchJob
import typer
from typer.testing import CliRunner

from collperf import api, spec as specs
from collperf.cli import app
from collperf.errors import UsageError
from collperf.plan import Layout

# command -> the specs it builds from its parameters
BUILDS = {
    "predict": [specs.PredictSpec, specs.TopologyPredictSpec, specs.NcclPredictSpec],
    "crossover": [specs.CrossoverSpec],
    "schedule": [specs.ScheduleSpec],
    "verify": [specs.VerifySpec],
    "simulate": [specs.SimulateSpec, specs.PatternSpec],
    "trees": [specs.TreesSpec],
    "bench": [specs.SweepSpec, specs.BenchSpec],
    "calibrate": [specs.CalibrateSpec],
    "bound": [specs.BoundSpec],
    "validate": [specs.ValidateSpec],
    "fit": [specs.LogSpec],
    "diagnose": [specs.DiagnoseSpec, specs.LogSpec, specs.MeasurementSpec, specs.HardwareSpec, specs.BaselineSpec],
    "trace": [specs.TraceSpec, specs.HardwareSpec],
    "export nccl-tuner": [specs.TunerSpec, specs.HardwareSpec],
    "export msccl": [specs.MscclExportSpec],
    "export thresholds": [specs.ThresholdSpec],
    "import msccl": [specs.MscclImportSpec],
    "report": [specs.ReportSpec],
    "doctor": [specs.DoctorPlanSpec],
    "testbed up": [specs.TestbedSpec],
    "testbed status": [specs.TestbedDownSpec],
    "testbed down": [specs.TestbedDownSpec],
    "plan": [specs.PlanModelSpec, specs.PlanLayoutSpec, specs.PlanSpec, specs.SearchSpec],
}

# a field whose parameter has another name on the command line
RENAMED = {"timeout_s": ("timeout",), "testbeds": ("testbed",), "paths": ("logs", "traces")}

# a field that is not one parameter of the command, and why (spec, field) -> reason
NOT_AN_OPTION = {
    ("PredictSpec", "expected"): "set from --cluster: NCCL's band is priced wherever a catalogue system is given",
    ("NcclPredictSpec", "hardware"): "the network options read as hardware (HardwareSpec.from_network)",
    ("NcclPredictSpec", "ranks"): "the network's --ranks",
    ("VerifySpec", "segments"): "API only: the pipelined schedules' segment counts checked",
    ("VerifySpec", "hierarchical"): "API only: the two-level schedules are always verified from the CLI",
    ("SweepSpec", "progress"): "API only: the CLI shows progress where a person watches a terminal",
    ("SweepSpec", "size_list"): "API only (validate's --sizes): bench sweeps -b/-e/-f as nccl-tests does",
    ("SweepSpec", "min_time_s"): "API only: head-to-head rounds (benchmarks' --min-time); bench times exactly -n",
    ("BenchSpec", "sweep"): "built from the sweep's options",
    ("BenchSpec", "testbed"): "a Testbed made from --testbed's description (api.testbed)",
    ("ValidateSpec", "testbeds"): "--testbed, repeated",
    ("DiagnoseSpec", "logs"): "built from the log options (LogSpec)",
    ("DiagnoseSpec", "network"): "API only: the CLI gives the hardware (HardwareSpec) directly",
    ("MeasurementSpec", "collective"): "the first argument, where a log would be",
    ("MeasurementSpec", "hardware"): "built from the hardware options",
    ("TraceSpec", "hardware"): "built from the hardware options",
    ("TunerSpec", "nodes"): "the hardware's --nodes",
    ("TunerSpec", "hardware"): "built from the hardware options",
    ("ReportSpec", "command"): "the command line as typed, shown on the page",
    ("ScheduleSpec", "arrays"): "API only: the array form is what simulate builds; schedule prints the transfers",
    ("MscclExportSpec", "intra_algorithm"): "API only: the CLI exports a two-level schedule's default phases",
    ("MscclExportSpec", "inter_algorithm"): "API only: the CLI exports a two-level schedule's default phases",
    ("PlanSpec", "model"): "built from the model options (PlanModelSpec)",
    ("PlanSpec", "layout"): "built from the layout options (PlanLayoutSpec)",
    ("SearchSpec", "plan"): "the plan built from the other options",
    ("TestbedDownSpec", "everything"): "status lists every testbed: only down takes --all",
    ("SearchSpec", "defaults"): "plan without --tp/--pp/--dp searches with defaults; --search without them",
}

# a parameter whose default differs from the field's on purpose, and why
DEFAULT_DIFFERS = {
    ("predict", "TopologyPredictSpec", "algorithm"): "predict's -A all: every algorithm on a switch's link",
    ("predict", "TopologyPredictSpec", "size"): "predict's sizes",
    ("simulate", "SimulateSpec", "size"): "None on the command line: 1G, or 1M,16M,256M with --pattern",
    ("simulate", "PatternSpec", "size"): "None on the command line: 1G, or 1M,16M,256M with --pattern",
    ("simulate", "PatternSpec", "segments"): "None on the command line: the simulation's default, 32 for a pattern",
    ("simulate", "PatternSpec", "topology"): "simulate's --topology is required",
    ("simulate", "PatternSpec", "gpus"): "the appendix's GPUs",
    ("simulate", "SimulateSpec", "topology"): "required",
    ("calibrate", "CalibrateSpec", "output"): "the CLI writes profile.json unless told otherwise; the API returns it",
    ("export msccl", "MscclExportSpec", "collective"): "required",
    ("export msccl", "MscclExportSpec", "algorithm"): "required",
    ("trace", "TraceSpec", "algorithm"): "None: no what-if of ours",
    ("bench", "SweepSpec", "collective"): "None on the command line: the argument's, else allreduce (sweep_collective)",
}


def _commands():
    group = typer.main.get_command(app)
    for name, cmd in group.commands.items():
        if hasattr(cmd, "commands"):
            for sub, subcmd in cmd.commands.items():
                yield f"{name} {sub}", subcmd
        else:
            yield name, cmd


COMMANDS = dict(_commands())


def _default(f):
    value = f.default if f.default is not dataclasses.MISSING else f.default_factory()
    return ",".join(map(str, value)) if isinstance(value, (list, tuple)) and value else value


def _is_spec(f) -> bool:
    return "Spec" in str(f.type) and f.name in ("network", "hardware", "logs", "sweep")


@pytest.mark.parametrize("command", sorted(BUILDS))
def test_every_spec_field_has_one_option_with_the_specs_default(command):
    params = [p for p in COMMANDS[command].params if p.name != "help"]
    names = [p.name for p in params]
    assert len(names) == len(set(names)), f"{command}: a parameter declared twice: {names}"
    by_name = {p.name: p for p in params}
    for spec_class in BUILDS[command]:
        for f in dataclasses.fields(spec_class):
            if (spec_class.__name__, f.name) in NOT_AN_OPTION or _is_spec(f):
                continue
            name = next((n for n in RENAMED.get(f.name, (f.name,)) if n in by_name), f.name)
            assert name in by_name, (
                f"{command}: {spec_class.__name__}.{f.name} has no option: declare it "
                "(spec.checks.cli_option) or say in NOT_AN_OPTION why it is not one"
            )
            if (
                (command, spec_class.__name__, f.name) in DEFAULT_DIFFERS
                or f.default is dataclasses.MISSING
                and f.default_factory is dataclasses.MISSING
            ):
                continue
            param, wanted = by_name[name], _default(f)
            got = param.default if not (param.multiple and param.default is None) else ()
            assert got == wanted or (got in (None, ()) and wanted in (None, (), [])), (
                f"{command} {param.opts}: default {got!r}, but {spec_class.__name__}.{f.name} defaults to {wanted!r}"
            )


def test_every_command_that_builds_a_spec_is_checked():
    """A command whose parameters fill a spec is listed in BUILDS (new commands are not forgotten)."""
    fills = {
        name
        for name, cmd in COMMANDS.items()
        if {p.name for p in cmd.params} & {"network", "hardware", "ranks", "size", "collective"}
    }
    assert fills - set(BUILDS) <= {"systems", "algorithms"}, fills - set(BUILDS)


def _every_spec():
    return [getattr(specs, n) for n in specs.__all__ if n.endswith("Spec")]


@pytest.mark.parametrize("spec_class", _every_spec(), ids=lambda c: c.__name__)
def test_specs_are_frozen_and_keyword_only(spec_class):
    params = spec_class.__dataclass_params__
    assert params.frozen, f"{spec_class.__name__} is not frozen"
    assert all(f.kw_only for f in dataclasses.fields(spec_class)), f"{spec_class.__name__} takes positional fields"


def test_a_spec_keeps_what_was_given_and_derives_what_is_parsed():
    sweep = specs.SweepSpec(min_bytes="64K", max_bytes="1M", factor=4)
    assert sweep.min_bytes == "64K" and sweep.min_size_bytes == 65536 and sweep.max_size_bytes == 1 << 20
    assert sweep.sizes() == [65536, 262144, 1048576]  # 64K x 4 x 4 = 1M, by hand
    job = BenchJob.of(sweep)
    assert job.min_bytes == 65536 and job.max_bytes == 1 << 20 and job.step_bytes == 1 << 20
    assert job.sizes == (65536, 262144, 1048576) and job.step == "4(factor)" and not job.segments_given
    sim = specs.SimulateSpec(
        collective="allreduce", algorithm="ring", topology="dgx1v", size="1K,2K", t_dpa="0", memory_limit="1KiB"
    )
    assert sim.sizes_bytes == [1024, 2048] and sim.memory_limit_bytes == 1024 and sim.t_dpa_s == 0
    hw = specs.HardwareSpec(nic_rate="400Gb/s", intra_bandwidth="450GB/s")
    assert hw.nic_Gbps == pytest.approx(400) and hw.intra_GBps == pytest.approx(450)
    with pytest.raises(dataclasses.FrozenInstanceError):
        sweep.iters = 3


def test_a_bad_value_fails_when_the_spec_is_made():
    with pytest.raises(UsageError, match="-b must not exceed -e"):
        specs.SweepSpec(min_bytes="2M", max_bytes="1M")
    with pytest.raises(UsageError, match="--min-ranks"):
        specs.VerifySpec(min_ranks=5, max_ranks=4)
    with pytest.raises(UsageError):
        specs.PredictSpec(collective="allreduce", size="lots")
    with pytest.raises(TypeError):
        specs.SweepSpec("allreduce")  # keyword-only


def test_plan_layout_options_default_to_the_layouts_and_map_onto_its_fields():
    """plan's layout options as given: each default is plan.Layout's (sizes as text), --hsdp is zero3_shard and
    --sp sequence_parallel; tp/pp/dp left out stay out (searched, or dp filling the nodes)."""
    layout = {f.name: f.default for f in dataclasses.fields(Layout)}
    given = specs.PlanLayoutSpec()
    values = given.layout_values()
    assert not given.degrees_given and not {"tp", "pp", "dp"} & set(values)
    for name, value in values.items():
        if name == "bucket":
            assert value == "25MB" and layout["bucket_bytes"] == 25e6
        elif name == "placement":
            assert tuple(value.split("-")) == layout["placement"]
        elif name == "gpu_memory":
            assert value is None and layout["gpu_memory_bytes"] is None
        elif name == "memory_headroom":
            assert value == "10%" and layout["memory_headroom"] == 0.10
        else:
            assert value == layout[name], name
    values = specs.PlanLayoutSpec(hsdp=8, sp=True, tp=4).layout_values()
    assert (values["zero3_shard"], values["sequence_parallel"], values["tp"]) == (8, True, 4)
    assert "hsdp" not in values and "sp" not in values and "dp" not in values
    assert specs.PlanModelSpec(params=7e9, layers=None).dimensions() == {"params": 7e9}


def test_plan_options_reach_the_plan_as_the_api_builds_it():
    """The CLI's plan from generated options is the plan the API builds from the same values written by hand."""
    import json

    res = CliRunner().invoke(
        app,
        [
            "plan",
            "--model",
            "13b",
            "--bytes",
            "2",
            "--grad-bytes",
            "4",
            "--tp",
            "4",
            "--pp",
            "2",
            "--dp",
            "4",
            "--zero",
            "3",
            "--hsdp",
            "2",
            "--sp",
            "--bucket",
            "50MB",
            "--micro-batches",
            "4",
            "--nodes",
            "4",
            "--ranks-per-node",
            "8",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    spec = api.plan_spec(
        "13b",
        {"dtype_bytes": 2, "grad_bytes": 4},
        {
            "tp": 4,
            "pp": 2,
            "dp": 4,
            "zero": 3,
            "zero3_shard": 2,
            "sequence_parallel": True,
            "bucket": "50MB",
            "micro_batches": 4,
        },
        specs.NetworkSpec(nodes=4, ranks_per_node=8),
        "dgx-h100",
    )
    assert spec.layout.zero3_shard == 2 and spec.layout.sequence_parallel and spec.layout.bucket_bytes == 50e6
    (plan,), _ = api.plan_compare(spec, [])
    assert json.loads(res.output) == json.loads(json.dumps(plan.to_json()))


# commands whose every option is a spec field's declaration, but for these (what the command itself does)
COMMAND_ONLY = {
    "plan": {
        "--compare": "variants set beside the plan",
        "--search": "how the plan is asked for",
        "--require-fit": "the exit status",
        "--json": "the output",
        "--cluster": "plan's own default preset",
    },
    "simulate": {"--timeline": "a picture the command writes", "--json": "the output"},
    "calibrate": {},
    "bound": {"--json": "the output"},
    "validate": {"--json": "the output", "--plot": "a figure the command writes", "--html": "a page it writes"},
    "fit": {"logs": "the logs, the command's argument", "--json": "the output"},
    "diagnose": {
        "logs": "the logs, or a collective with --size and --time",
        "--json": "the output",
        "--plot": "a figure the command writes",
        "--html": "a page it writes",
    },
    "trace": {"traces": "the traces, the command's argument", "--json": "the output", "--html": "a page it writes"},
    "bench": {
        "collective_arg": "the collective as the command's argument (or --collective)",
        "--json": "the output",
        "--html": "a page it writes",
        "--timeout": "declared on CalibrateSpec (field_option), shared by bench, calibrate and bound",
        "--testbed": "declared on CalibrateSpec (field_option), shared by bench, calibrate and bound",
    },
    "export nccl-tuner": {"logs": "the logs, the command's argument"},
    "export msccl": {},
    "testbed up": {},
    "testbed status": {"--json": "the output"},
    "testbed down": {},
    "report": {"inputs": "the logs, traces and JSON documents, the command's argument"},
    "predict": {
        "--nccl": "which model prices: NCCL's tuning model",
        "--json": "the output",
        "--ranks": "the network's rank count, or with --topology the group (spec.predict_network)",
    },
}


def _declared(spec_class, out=None) -> dict:
    """{first flag (or the argument's name): [help texts]} of a spec's cli_option declarations (a flag two
    specs declare, --cluster of the network and of the hardware, has both)."""
    out = {} if out is None else out
    for f in dataclasses.fields(spec_class):
        meta = f.metadata.get("cli")
        if meta is not None:
            out.setdefault(meta["flags"][0].split("/")[0] if meta["flags"] else f.name, []).append(meta["help"])
        elif "Spec" in str(f.type) and f.name in ("network", "hardware"):
            _declared(specs.NetworkSpec if f.name == "network" else specs.HardwareSpec, out)
    return out


@pytest.mark.parametrize("command", sorted(COMMAND_ONLY))
def test_every_option_is_declared_once_on_a_spec_field(command):
    """Each option of these commands is made from its spec field's declaration (same flags, same help), so
    its text and flags live in one place."""
    declared = {}
    for spec_class in BUILDS[command]:
        _declared(spec_class, declared)
    for param in COMMANDS[command].params:
        key = param.opts[0] if param.param_type_name == "option" else param.name
        if key in ("--help",) or key in COMMAND_ONLY[command]:
            continue
        assert key in declared, f"{command} {key}: declare it on a spec field (cli_option) or list it in COMMAND_ONLY"
        assert (param.help or "") in declared[key] or param.param_type_name == "argument", (command, key)


def test_testbed_up_options_make_the_description_testbed_takes():
    """testbed up's options are one TestbedSpec; its description is what --testbed takes, field by field."""
    assert (
        specs.TestbedSpec(hosts=2, rate="1gbit", ranks_per_host=3, name="x").description
        == "hosts=2,rate=1gbit,ranks-per-host=3,name=x"
    )
    assert (
        specs.TestbedSpec(topology="dgx1v-like", group="0+1+4").description
        == "topology=dgx1v-like,ranks-per-host=1,name=tb0,group=0+1+4"
    )
    with pytest.raises(UsageError, match="--group 0\\+1: only with --topology"):
        specs.TestbedSpec(group="0+1")
    res = CliRunner().invoke(app, ["testbed", "up", "--group", "0+1"])
    assert isinstance(res.exception, UsageError) and "--group 0+1" in str(res.exception)  # exit 2 in main
