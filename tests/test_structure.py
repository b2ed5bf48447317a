"""The request layer: the CLI is a thin shell over the API, importing collperf stays light, specs
validate once with clear errors, and every command has an API function."""

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import collperf
from collperf import api
from collperf.cli import app
from collperf.errors import UsageError
from collperf.spec import DiagnoseSpec, LogSpec, NetworkSpec, PlanSpec

CLI_DIR = Path(collperf.__file__).parent / "cli"
# what a CLI module may import besides the CLI's own modules
ALLOWED = {"collperf", "collperf.api", "collperf.spec", "collperf.units", "collperf.errors", "collperf.cli"}


def _collperf_imports(path: Path, package: str = "collperf.cli") -> set[str]:
    """Every collperf module a file of `package` reaches, at any depth of the file (functions included): imported
    by name or relative to its package, by `importlib.import_module`/`__import__` of a literal, or as an attribute
    of the package (`collperf.lab.bench` after `import collperf`)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            # `from ..lab import bench`: the module the dots name, counted from the file's package
            base = ".".join(package.split(".")[: len(package.split(".")) + 1 - node.level]) if node.level else ""
            module = ".".join(p for p in (base, node.module or "") if p)
            if module.startswith("collperf"):
                # `from collperf import lab` imports the module collperf.lab, not a name of the package
                found |= {f"{module}.{a.name}" if _is_module(f"{module}.{a.name}") else module for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("collperf")}
        elif (
            isinstance(node, ast.Call)
            and _called(node.func) in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and str(node.args[0].value).startswith("collperf")
        ):
            found.add(str(node.args[0].value))
        elif isinstance(node, ast.Attribute) and (dotted := _dotted(node)) and dotted.startswith("collperf."):
            parts = dotted.split(".")
            module = next(
                (".".join(parts[:n]) for n in range(len(parts), 1, -1) if _is_module(".".join(parts[:n]))), None
            )
            if module is not None:
                found.add(module)
    return found


def _called(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _dotted(node: ast.expr) -> str | None:
    """`collperf.lab.bench` for that chain of attributes on a name, None for any other expression."""
    names = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(names)]) if isinstance(node, ast.Name) else None


def _is_module(dotted: str) -> bool:
    path = Path(collperf.__file__).parent.parent.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def test_the_walk_of_the_cli_sees_a_module_imported_from_its_package(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from collperf import lab, units\nfrom collperf.api import predict\n")
    assert _collperf_imports(bad) == {"collperf.lab", "collperf.units", "collperf.api"}


@pytest.mark.parametrize(
    "source, reached",
    [
        ("from ..lab import bench\n", "collperf.lab.bench"),  # relative to collperf.cli
        ("from .. import fit\n", "collperf.fit"),
        ("from . import render\n", "collperf.cli.render"),
        ("import importlib\nimportlib.import_module('collperf.lab.bench')\n", "collperf.lab.bench"),
        ("__import__('collperf.fit')\n", "collperf.fit"),
        ("import collperf.api\ncollperf.lab.bench.run_bench()\n", "collperf.lab.bench"),  # an attribute of the package
    ],
)
def test_the_walk_of_the_cli_sees_every_way_to_reach_a_module(tmp_path, source, reached):
    bad = tmp_path / "bad.py"
    bad.write_text(source)
    assert reached in _collperf_imports(bad)


def test_the_cli_imports_only_the_api_the_specs_rendering_and_units():
    for path in CLI_DIR.glob("*.py"):
        imported = {m for m in _collperf_imports(path) if not m.startswith("collperf.cli.")}  # its own modules
        if path.name in ("render.py", "bench_stream.py"):  # rendering may reach the writers of plots and result files
            imported -= {"collperf.plots", "collperf.lab.results"}
        assert imported <= ALLOWED, f"{path.name} imports {sorted(imported - ALLOWED)}"


def test_importing_collperf_loads_no_heavy_module():
    """Counted from `python -X importtime`, not timed: the modules a bare import loads."""
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import collperf"], capture_output=True, text=True, check=True
    ).stderr
    loaded = {line.split("|")[-1].strip().split(".")[0] for line in out.splitlines() if "|" in line}
    assert not loaded & {"matplotlib", "scipy", "networkx", "torch", "numpy", "rich", "typer"}


def test_predict_loads_neither_plotting_nor_graphs_nor_torch():
    # pydantic too: typer 0.29 builds every parameter through it (+150 ms per command); pyproject keeps typer < 0.29
    code = (
        "import sys, io, contextlib; from collperf.cli import main; sys.argv = ['collperf', 'predict', "
        "'allreduce', '-p', '8', '--latency', '5us', '--bandwidth', '50GB/s', '-s', '1M']\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try: main()\n"
        "    except SystemExit: pass\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('matplotlib', 'scipy', 'networkx', 'torch', "
        "'pydantic')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_network_spec_is_the_one_way_to_a_network_and_refuses_conflicts():
    net = NetworkSpec(ranks=16, latency="10us", bandwidth="100GB/s").resolve()
    assert (net.ranks, net.link.bandwidth_Bps) == (16, 100e9) and net.link.latency_s == pytest.approx(10e-6)
    assert collperf.network(cluster="dgx-h100", nodes=2).ranks == 16
    with pytest.raises(UsageError, match="--latency and --bandwidth describe a uniform link"):
        NetworkSpec(cluster="dgx-h100", latency="5us", bandwidth="1GB/s")
    with pytest.raises(UsageError, match="--cluster dgx-h100 and --profile p.json"):
        NetworkSpec(cluster="dgx-h100", profile="p.json")
    with pytest.raises(UsageError, match=r"--ranks 12 neither fills whole nodes of --cluster dgx-h100 \(8 GPUs each\)"):
        NetworkSpec(ranks=12, cluster="dgx-h100").resolve()
    with pytest.raises(UsageError, match="nodes 0"):
        NetworkSpec(nodes=0)


def test_specs_refuse_what_would_be_silently_ignored():
    # --peak with a cluster: the cluster gives the expected time, the peak the bound
    both = DiagnoseSpec(logs=LogSpec(paths=["x.txt"]), peak="50GB/s", network=NetworkSpec(cluster="dgx-a100"))
    assert both.peak_Bps == 50e9 and both.hardware.cluster == "dgx-a100"
    with pytest.raises(UsageError, match="--cluster dgx-a100 and --profile p.json"):
        DiagnoseSpec(logs=LogSpec(paths=["x.txt"]), network=NetworkSpec(cluster="dgx-a100", profile="p.json"))
    with pytest.raises(UsageError, match="--compute 2s and --flops 400TFLOPS"):
        PlanSpec(compute="2s", flops="400TFLOPS")
    with pytest.raises(UsageError, match="no log given"):
        LogSpec(paths=[])


def test_cli_reports_conflicting_network_options():
    res = CliRunner().invoke(app, ["predict", "allreduce", "--cluster", "dgx-h100", "--latency", "5us"])
    assert res.exit_code != 0 and "uniform link" in str(res.exception)


def test_every_command_has_an_api_function():
    commands = {c.name or c.callback.__name__ for c in app.registered_commands}
    to_api = {
        "predict": "predict",
        "crossover": "crossover",
        "algorithms": "algorithms",
        "schedule": "verified_schedule",
        "verify": "verify_all",
        "simulate": "simulate",
        "bench": "bench",
        "fit": "fit_tables",
        "diagnose": "diagnose_logs",
        "plan": "plan_compare",
        "calibrate": "calibrate",
        "bound": "bound",
        "validate": "validate",
        "trees": "trees",
        "report": "report",
        "trace": "trace",
        "systems": "systems",
        "doctor": "doctor_plan",
    }
    assert commands == set(to_api)
    assert all(callable(getattr(api, f)) for f in to_api.values())
    assert all(
        callable(getattr(api, f)) for f in ("testbed_up", "testbed_start", "testbed_status", "testbed_down", "pattern")
    )


def test_plan_custom_model_search_and_memory_from_the_cli():
    runner = CliRunner()
    res = runner.invoke(app, ["plan", "--params", "7e9", "--dp", "8", "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["model"]["name"].startswith("custom") and doc["model"]["params"] == 7e9
    assert doc["memory"]["total_bytes"] > 0
    res = runner.invoke(
        app,
        [
            "plan",
            "--model",
            "70b",
            "--search",
            "--gpus",
            "64",
            "--global-batch",
            "64",
            "--flops",
            "400TFLOPS",
            "--top",
            "3",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    steps = [p["step_s"] for p in doc["plans"]]
    assert len(steps) == 3 and steps == sorted(steps) and doc["considered"] >= doc["too_big"]
    assert all(p["memory"]["fits"] for p in doc["plans"])
    res = runner.invoke(app, ["plan", "--search", "--gpus", "64"])
    assert res.exit_code != 0 and "--global-batch" in str(res.exception)


# --- the house's structure, drawn from the imports (tests/structure_walk.py) ----------------------------------

# Internal imports that may stay inside a function: modules whose loading loads a heavy library (the test
# checks that they do), imported where used so that `import collperf` and `collperf predict` stay light.
# Every other internal import sits at the top of its module, so that the import lines tell which module
# depends on which.
LAZY_TARGETS = {
    "collperf.runtime.ops": "torch (the user collectives)",
}


def _lazy_allowed(target: str) -> bool:
    return any(target == t or target.startswith(t + ".") for t in LAZY_TARGETS)


def _structure():
    from structure_walk import walk

    return walk(Path(collperf.__file__).parent.parent)


def test_the_structure_facts_are_printed_and_hold():
    """Run with -s to read them: root modules, cycles, upward imports and function-level imports."""
    s = _structure()
    print("\n" + s.report())
    assert len(s.root_modules) <= 8, f"{len(s.root_modules)} modules at the package root: {s.root_modules}"
    assert not s.cycles, f"import cycles: {s.cycles}"
    assert not s.upward, "imports from a lower layer up to a higher one:\n" + "\n".join(
        f"{i.source}:{i.line} -> {i.target}" for i in s.upward
    )
    unlisted = [i for i in s.function_level if not _lazy_allowed(i.target)]
    assert not unlisted, "internal imports inside functions (move them to the module's top):\n" + "\n".join(
        f"{i.source}:{i.line} -> {i.target}" for i in unlisted
    )
    assert len(s.function_level) <= 20, f"{len(s.function_level)} internal imports inside functions"
    light = [t for t in LAZY_TARGETS if not s.heavy.get(t)]
    assert not light, f"on the lazy list but loading no heavy library (import them at the top): {light}"


def test_every_package_folder_has_a_layer():
    from structure_walk import LAYER_OF

    s = _structure()
    folders = {m.split(".")[1] for m in s.modules if "." in m}
    assert not folders - set(LAYER_OF), f"modules outside the layer order: {sorted(folders - set(LAYER_OF))}"


def test_the_walk_finds_a_cycle_an_upward_import_and_a_function_level_import(tmp_path):
    """The walk itself, on a made-up package: lab imports model at the top, model imports lab in a function."""
    from structure_walk import walk

    pkg = tmp_path / "collperf"
    (pkg / "model").mkdir(parents=True)
    (pkg / "lab").mkdir()
    for path in (pkg / "__init__.py", pkg / "model" / "__init__.py", pkg / "lab" / "__init__.py"):
        path.write_text("")
    (pkg / "lab" / "bench.py").write_text("from collperf.model import costs\n")
    (pkg / "model" / "costs.py").write_text("def f():\n    from collperf.lab import bench\n")
    s = walk(tmp_path)
    assert s.cycles == [["collperf.lab.bench", "collperf.model.costs"]]
    assert [(i.source, i.target, i.in_function) for i in s.upward] == [
        ("collperf.model.costs", "collperf.lab.bench", True)
    ]
    assert [(i.source, i.line) for i in s.function_level] == [("collperf.model.costs", 2)]
    assert s.root_modules == []


def test_the_readers_need_no_executor():
    """ingest reads collperf's own bench rows (ingest/row.py, the row the ranks write) without the runtime: the
    row lies below it, and no reader imports the runtime or the lab."""
    from structure_walk import LAYER_OF
    from collperf.ingest.row import Row

    s = _structure()
    up = [
        f"{i.source} -> {i.target}"
        for i in s.imports
        if i.source.startswith("collperf.ingest") and i.target.startswith(("collperf.runtime", "collperf.lab"))
    ]
    assert not up, up
    assert Row.__module__ == "collperf.ingest.row" and LAYER_OF["ingest"] < LAYER_OF["runtime"]


# model/ by subject: the cost model at its root, and one folder a subject
MODEL_ROOT = {"__init__", "bounds", "costs", "network", "predict", "profile", "schedule_cost", "shared_links", "trees"}
MODEL_FOLDERS = {"algorithms", "auto", "hardware", "nccl", "two_level"}


def test_model_holds_the_cost_model_at_its_root_and_one_subject_a_folder():
    """The band and its fit live in expect/, the system and catalogue in model/hardware/, -A auto's choice in
    model/auto/, the two-level plans and schedules in model/two_level/; the algorithm registry imports every module
    of its folder; hardware reads only NCCL's leaf tables of nccl/ (constants, env: they import nothing of model)."""
    import collperf.model.algorithms as registry

    model = Path(collperf.__file__).parent / "model"
    assert {p.stem for p in model.glob("*.py")} == MODEL_ROOT
    assert {p.name for p in model.iterdir() if p.is_dir() and (p / "__init__.py").exists()} == MODEL_FOLDERS
    loaded = {m.split(".")[-1] for m in sys.modules if m.startswith("collperf.model.algorithms.")}
    assert {p.stem for p in (model / "algorithms").glob("*.py")} - {"__init__"} <= loaded, registry.__name__
    s = _structure()
    leaves = {"collperf.model.nccl.constants", "collperf.model.nccl.env"}
    into_nccl = {
        i.target
        for i in s.imports
        if i.source.startswith("collperf.model.hardware.") and i.target.startswith("collperf.model.nccl")
    }
    assert into_nccl <= leaves, into_nccl
    assert not [
        i
        for i in s.imports
        if i.source in leaves
        and i.target.startswith("collperf.model")
        and i.target not in leaves | {"collperf.model.nccl"}
    ]


def test_the_api_exports_every_name_it_holds_sorted():
    import types

    held = {
        n
        for n, v in vars(api).items()
        if not n.startswith("_") and not isinstance(v, types.ModuleType) and n != "annotations"
    }
    assert api.__all__ == sorted(api.__all__), "keep api.__all__ sorted"
    assert set(api.__all__) == held, (
        f"missing: {sorted(held - set(api.__all__))}; not held: {sorted(set(api.__all__) - held)}"
    )
    assert {"plan_search", "plan_spec", "predict_topology", "verified_schedule", "Predictions", "Verdict"} <= held


def test_comments_cite_sources_not_files_outside_the_repository():
    """A comment cites a paper, a data sheet or a source file with its version; the notes a build machine keeps
    (reference/*.md) are not in the repository, and py.typed marks the package typed (PEP 561)."""
    import re

    root = Path(collperf.__file__).parent
    hits = [
        f"{p.relative_to(root)}:{i}"
        for p in sorted(root.rglob("*.py"))
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if re.search(r"\breference/[\w-]+\.md", line)
    ]
    assert not hits, hits
    assert (root / "py.typed").is_file()


def test_design_names_every_test_file_by_its_subject():
    """DESIGN.md's index of the tests (by the package they mainly prove) names every test file, and only files
    that exist: a newcomer finds a package's tests there."""
    design = (Path(__file__).parent.parent / "docs" / "DESIGN.md").read_text()
    lines = design[design.index("The subjects, by the package") :].splitlines()[1:]
    entries = []
    for line in lines[1 if not lines[0].strip() else 0 :]:
        if not line.strip():
            break
        entries.append(line.split(":", 1)[1] if line.startswith("- ") else line)
    named = [n.strip() for n in ",".join(entries).split(",") if n.strip()]
    files = {p.stem.removeprefix("test_") for p in Path(__file__).parent.glob("test_*.py")}
    assert len(named) == len(set(named)), "a file is named twice"
    assert not set(named) - files, f"DESIGN.md names test files that do not exist: {sorted(set(named) - files)}"
    assert not files - set(named), (
        f"add these to DESIGN.md's test index (section 8) under the package they prove: {sorted(files - set(named))}"
    )
