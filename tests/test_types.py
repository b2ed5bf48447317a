"""The type checker over the packages pyproject.toml declares strict (each `[[tool.mypy.overrides]]` block with
`strict = true`): mypy finds nothing there. The list is read from pyproject.toml, not restated here, so a package
made strict is checked from then on. Skipped where mypy is not installed (`pip install -e '.[test]'` installs it)
or Python is older than 3.11 (tomllib)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def strict_modules() -> list[str]:
    """The module patterns of the strict overrides, without their `.*`."""
    tomllib = pytest.importorskip("tomllib")
    overrides = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"].get("overrides", [])
    found = set()
    for block in overrides:
        if block.get("strict"):
            names = [block["module"]] if isinstance(block["module"], str) else block["module"]
            found |= {name.removesuffix(".*") for name in names}
    return sorted(found)


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
    result = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path), *paths], cwd=ROOT,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"mypy on {paths}:\n{result.stdout}{result.stderr}"
