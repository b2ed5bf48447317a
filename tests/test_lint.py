"""The linter and the formatter over the repository's Python (pyproject.toml [tool.ruff]): `ruff check` finds
nothing and `ruff format --check` would change nothing, so `make test` (and CI) keeps both. Skipped where ruff is
not installed (`pip install -e '.[test]'` installs it)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TREES = ["src", "tests", "benchmarks"]


def _ruff(*args: str) -> subprocess.CompletedProcess:
    exe = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if exe is None:
        pytest.skip("ruff is not installed (pip install -e '.[test]')")
    return subprocess.run([exe, *args, *TREES], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_the_linter_finds_nothing():
    done = _ruff("check", "--no-cache", "--output-format", "concise")
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_code_is_formatted():
    done = _ruff("format", "--check", "--no-cache")
    assert done.returncode == 0, "run `ruff format src tests benchmarks`:\n" + done.stdout + done.stderr
