"""The type checker over the packages pyproject.toml declares strict (each `[[tool.mypy.overrides]]` block that sets
--strict's per-module flags): mypy finds nothing there. The packages are read from pyproject.toml, not restated here,
so a package made strict is checked from then on. Skipped where mypy is not installed (`pip install -e '.[test]'`
installs it) or Python is older than 3.11 (tomllib)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


# --strict's flags that mypy takes per module (mypy 1.x --help: the strict list less the global
# warn_unused_configs and warn_redundant_casts), as a strict block must set them
STRICT_FLAGS = {
    "disallow_any_generics": True,
    "disallow_subclassing_any": True,
    "disallow_untyped_calls": True,
    "disallow_untyped_defs": True,
    "disallow_incomplete_defs": True,
    "check_untyped_defs": True,
    "disallow_untyped_decorators": True,
    "warn_unused_ignores": True,
    "warn_return_any": True,
    "implicit_reexport": False,
    "strict_equality": True,
    "extra_checks": True,
}


def overrides() -> list[dict]:
    tomllib = pytest.importorskip("tomllib")
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"].get("overrides", [])


def strict_modules() -> list[str]:
    """The module patterns of the strict overrides (those that disallow untyped definitions), without `.*`."""
    found = set()
    for block in overrides():
        if block.get("disallow_untyped_defs"):
            names = [block["module"]] if isinstance(block["module"], str) else block["module"]
            found |= {name.removesuffix(".*") for name in names}
    return sorted(found)


def test_a_strict_block_sets_every_strict_flag_and_none_sets_strict():
    # `strict = true` in an override is read as the global flag: every module of the package would be strict
    assert not [b["module"] for b in overrides() if "strict" in b], (
        "an override sets strict = true, which mypy applies to every module: list STRICT_FLAGS in it instead"
    )
    for block in overrides():
        if block.get("disallow_untyped_defs"):
            missing = {k: v for k, v in STRICT_FLAGS.items() if block.get(k) != v}
            assert not missing, f"the strict block of {block['module']} lacks {missing}"


def source_of(module: str) -> Path:
    """A dotted module's package folder or file under src/."""
    base = ROOT / "src" / Path(*module.split("."))
    return base if base.is_dir() else base.with_suffix(".py")


def test_the_strict_packages_exist():
    # a pattern that names no package would check nothing and pass
    modules = strict_modules()
    assert {"collperf.model", "collperf.schedule"} <= set(modules)
    missing = [m for m in modules if not source_of(m).exists()]
    assert not missing, f"strict overrides in pyproject.toml name no module under src/: {missing}"


def test_mypy_finds_nothing_in_the_strict_packages(tmp_path):
    pytest.importorskip("mypy")
    paths = sorted({str(source_of(m)) for m in strict_modules()})
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path), *paths],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, f"mypy on {paths}:\n{result.stdout}{result.stderr}"
