"""The repository is a self-contained product: no file points outside the checkout (a sibling folder, the
build machine's paths), and the text of the code, tests and docs cites papers and sources, not the
project's issue tracker or its internal names for source documents."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SKIP_DIRS = {
    ".git",
    ".venv",
    "venv",
    "build",
    "dist",
    "site",
    "__pycache__",
    ".pytest_cache",
    ".hypothesis",
    "node_modules",
    ".mypy_cache",
    ".ruff_cache",
}
# logs and captures from other machines, kept byte for byte (the corpus: public runs, each file naming its source)
DATA = ("examples/", "tests/fixtures/", "src/collperf/data/corpus/")

# built from pieces so that this file does not match itself
SIBLING = re.compile(re.escape(".." + "/shared"))
BUILD_MACHINE = re.compile(r"(?<![\w.~-])/" + "work/")
HOME = re.compile(r"(?<![\w.~-])/" + r"home/\w")
TMP = re.compile(r"(?<![\w.~-])/" + r"tmp/")
ISSUE = re.compile(r"\bissues?\s*#?\s*\d+\b|(?<![\w&#/\"'=-])#\d{1,4}\b(?![\w-])", re.IGNORECASE)
CITED_TRACKER = re.compile(r"[\w.]+[-/][\w./-]*\s*$")  # "astra-sim #296", "NVIDIA/nccl#123": another project's


class _TrackerReference:
    """Our tracker's numbers ("issue 12", "(#12)"); another project's issue cited by name is a source."""

    @staticmethod
    def search(line: str):
        return next(
            (
                m
                for m in ISSUE.finditer(line)
                if m.group(0).lower().startswith("issue") or not CITED_TRACKER.search(line[: m.start()])
            ),
            None,
        )


TRACKER = _TrackerReference()
SOURCE_DOCUMENT = re.compile(r"\bseeds?\s+\d{3}\b|\bseed\s+(?:documents?|papers?|texts?)\b|\bseeds/", re.IGNORECASE)


def files(under: str = "") -> list[Path]:
    found = []
    for path in sorted((ROOT / under).rglob("*") if under else ROOT.rglob("*")):
        parts = set(path.relative_to(ROOT).parts)
        if path.is_file() and not parts & SKIP_DIRS and not any(p.endswith(".egg-info") for p in parts):
            found.append(path)
    return found


def text(path: Path) -> str | None:
    try:
        return path.read_text()
    except (UnicodeDecodeError, OSError):
        return None  # a binary file (an image)


def hits(paths, pattern: re.Pattern) -> list[str]:
    out = []
    for path in paths:
        body = text(path)
        if body is None or path == Path(__file__).resolve():
            continue
        for number, line in enumerate(body.split("\n"), 1):
            if pattern.search(line):
                out.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:140]}")
    return out


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_the_docs_show_no_temporary_paths():
    docs = [ROOT / "README.md", ROOT / "benchmarks" / "README.md", *files("docs")]
    found = hits([p for p in docs if p.suffix == ".md"], TMP)
    assert not found, "a /tmp path in the docs: use a relative name in the working directory:\n" + "\n".join(found)


AREAS = {
    "tests": pytest.param("tests", id="tests"),
    "docs": pytest.param("docs", id="docs"),
    "rest": pytest.param(None, id="everything-else"),  # front pages, benchmarks, examples, build files
    "src": pytest.param("src", id="src"),
}


def _area_files(area: str | None, data: bool = False) -> list[Path]:
    if area is None:
        chosen = [
            p
            for p in files()
            if rel(p).split("/")[0] not in ("src", "tests", "docs") or rel(p).startswith("tests/fixtures/")
        ]
    else:
        chosen = files(area)
    return chosen if data else [p for p in chosen if not rel(p).startswith(DATA)]


@pytest.mark.parametrize("area", [AREAS[a] for a in ("tests", "docs", "rest")] + [pytest.param("src", id="src")])
def test_no_file_points_beside_the_checkout_or_at_the_build_machine(area):
    everything = _area_files(area, data=True)
    found = hits(everything, SIBLING) + hits(everything, BUILD_MACHINE)
    found += hits(_area_files(area), HOME)
    assert not found, "paths outside the checkout (copy what is needed into tests/fixtures/):\n" + "\n".join(found)


@pytest.mark.parametrize("area", [AREAS[a] for a in ("tests", "docs", "src")] + [pytest.param("", id="front-pages")])
def test_text_cites_sources_not_the_tracker_or_internal_names(area):
    paths = _area_files(area) if area else [ROOT / "README.md", ROOT / "benchmarks" / "README.md"]
    found = [f"issue number: {h}" for h in hits(paths, TRACKER)]
    found += [f"internal source-document name (cite the paper or page): {h}" for h in hits(paths, SOURCE_DOCUMENT)]
    assert not found, "\n".join(found)


def test_the_patterns_are_precise():
    """Random seeds and colours are fine; issue numbers and the internal names of source documents are not."""
    assert not ISSUE.search("color='#444444' and rank 0 of #wrong, seed=3, `-I 1`")
    assert ISSUE.search("see issue 17") and ISSUE.search("fixed in #12.")
    assert TRACKER.search("fixed in #12.") and not TRACKER.search("ASTRA-sim direct (astra-sim #296)")
    assert not SOURCE_DOCUMENT.search("a seeded mutator over 2,000 seeds; torch.manual_seed(0); seeds=20000")
    assert SOURCE_DOCUMENT.search("as seed 003 measures it")
    assert BUILD_MACHINE.search("LOGS = Path('" + "/".join(("", "work", "x")) + "')") and not BUILD_MACHINE.search(
        "framework" + "/".join(("", "work", "x"))
    )
