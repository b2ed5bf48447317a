"""The documentation is tested: the site builds with no broken link, every relative link of the front pages
resolves, and every code block marked runnable runs and prints what the page shows.

A block is runnable when the line before its opening fence is `<!-- run -->` (`<!-- run: multiprocess -->`
where it starts ranks). In a `console` block each `$ collperf ...` line is a command (a trailing backslash
continues it) and the lines after it, up to the next `$`, are output that must appear in what it prints
(whitespace-insensitive; `...` elides part of a line, a line of only `...` is skipped; a two-space `# note`
after a line is the page's comment, not output). A `python` block runs as a script; the block after it, when
marked `<!-- output -->`, is what it must print. Everything runs in a temporary directory holding links to
examples/ and tests/fixtures/, so nothing is written into the checkout."""

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^(```+|~~~+)\s*([\w-]*)")
MARK = re.compile(r"^<!--\s*(run|output)(?::\s*([\w, -]+))?\s*-->\s*$")
TIMEOUT_S = 300  # per block: a hang check, not a speed assertion


@dataclass
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    lang: str
    text: str
    mark: str | None  # "run", "output" or None
    options: tuple
    output: str | None = None  # a python block's expected output (the marked block after it)

    @property
    def ident(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of a page with the marker on the line before each (if any)."""
    lines, found, i = page.read_text().split("\n"), [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, start = m.group(1), i
        mark = MARK.match(lines[i - 1].strip()) if i else None
        i += 1
        while i < len(lines) and not lines[i].startswith(fence):
            i += 1
        options = tuple(o.strip() for o in (mark.group(2) or "").split(",") if o.strip()) if mark else ()
        found.append(
            Block(
                page, start + 1, m.group(2), "\n".join(lines[start + 1 : i]), mark.group(1) if mark else None, options
            )
        )
        i += 1
    for b, after in zip(found, found[1:]):
        if b.mark == "run" and b.lang == "python" and after.mark == "output":
            b.output = after.text
    return found


RUNNABLE = [b for page in PAGES for b in blocks(page) if b.mark == "run"]


# the front page's examples run in the quick core; every other page's (each command a CLI process of about a
# second) are slow: `make test` runs them all
CORE_PAGES = ("README.md", "docs/index.md")


def _param(b: Block):
    marks = [pytest.mark.multiprocess] if "multiprocess" in b.options else []
    if str(b.page.relative_to(ROOT)) not in CORE_PAGES:
        marks.append(pytest.mark.slow)
    return pytest.param(b, id=b.ident, marks=marks)


BOX = str.maketrans(
    {
        c: " "
        for c in "\u2502\u2503\u2500\u2501\u250f\u2513\u2517\u251b\u2521\u2529\u2547"
        "\u2533\u253b\u2514\u2518\u2534\u252c\u254b\u250c\u2510\u253c"
    }
)


def normalise(text: str) -> str:
    """Whitespace collapsed and a table's box drawing dropped: a page may show rich's table with or
    without its bars."""
    return " ".join(text.translate(BOX).split())


def expected_lines(output: str) -> list[str]:
    keep = []
    for line in output.split("\n"):
        if not line.lstrip().startswith("#"):
            line = re.sub(r"\s{2,}#\s.*$", "", line)  # the page's comment on an output line
        line = normalise(line)
        if line and line not in ("...", "\u2026"):
            keep.append(line)
    return keep


def check_output(printed: str, output: str, what: str) -> None:
    flat = normalise(printed)
    for line in expected_lines(output):
        at = 0
        for piece in filter(None, (p.strip() for p in re.split(r"\.\.\.|\u2026", line))):
            found = flat.find(piece, at)
            assert found >= 0, f"{what}: the page shows {line!r}, but {piece!r} is not in what it printed:\n{printed}"
            at = found + len(piece)


def console_commands(text: str) -> list[tuple[str, str]]:
    """(command, the output shown under it) for each `$ ` line of a console block."""
    commands, lines, i = [], text.split("\n"), 0
    while i < len(lines):
        if not lines[i].startswith("$ "):
            i += 1
            continue
        command = lines[i][2:]
        while command.rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
            command = command.rstrip()[:-1] + " " + lines[i].strip()
        i += 1
        shown = []
        while i < len(lines) and not lines[i].startswith("$ "):
            shown.append(lines[i])
            i += 1
        commands.append((command, "\n".join(shown)))
    return commands


@pytest.fixture
def workdir(tmp_path):
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "fixtures").symlink_to(ROOT / "tests" / "fixtures")
    return tmp_path


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    return env


def _run(argv, cwd) -> subprocess.CompletedProcess:
    return subprocess.run(
        argv, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=TIMEOUT_S, stdin=subprocess.DEVNULL
    )


@pytest.mark.parametrize("block", [_param(b) for b in RUNNABLE])
def test_runnable_block(block, workdir):
    if block.lang == "python":
        script = workdir / "example.py"
        script.write_text(block.text + "\n")
        done = _run([sys.executable, str(script)], workdir)
        assert done.returncode == 0, f"{block.ident} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
        if block.output is not None:
            check_output(done.stdout, block.output, block.ident)
        return
    assert block.lang == "console", f"{block.ident}: a runnable block is console or python, not {block.lang!r}"
    commands = console_commands(block.text)
    assert commands, f"{block.ident}: a runnable console block with no `$ ` command"
    for command, shown in commands:
        argv = shlex.split(command, comments=True)
        assert argv[0] == "collperf", f"{block.ident}: runnable commands are collperf's, not {argv[0]!r}"
        done = _run([sys.executable, "-m", "collperf", *argv[1:]], workdir)
        assert done.returncode == 0, f"{block.ident}: `{command}` exited {done.returncode}:\n{done.stderr}"
        check_output(done.stdout + done.stderr, shown, f"{block.ident}: `{command}`")


def test_every_page_has_runnable_examples_where_it_shows_commands():
    """The pages that teach commands run at least one of them, so a renamed flag cannot hide there."""
    teaching = [p for p in PAGES if any(b.lang == "console" and "$ collperf " in b.text for b in blocks(p))]
    assert teaching
    for page in teaching:
        assert any(b.page == page for b in RUNNABLE), f"{page.relative_to(ROOT)} shows commands but runs none"


def test_the_checker_sees_a_missing_line():
    """The checker itself: a line the command did not print fails, an elided one matches."""
    check_output("allreduce  size 100 MB\nlower bound 1.885 ms; best: ring", "lower bound ... best: ring", "t")
    check_output("\u2503 # \u2503 layout \u2503\n\u2502 1 \u2502 tp4 \u2502", "  # layout\n  1 tp4", "t")
    with pytest.raises(AssertionError):
        check_output("lower bound 1.885 ms; best: ring", "lower bound 2 ms", "t")
    assert expected_lines("step   0: 0+>1:0-3   # fold-in\n...\n# kept: a bench comment") == [
        "step 0: 0+>1:0-3",
        "# kept: a bench comment",
    ]


LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


@pytest.mark.parametrize("page", [ROOT / "README.md", ROOT / "benchmarks" / "README.md"], ids=lambda p: p.parent.name)
def test_front_page_links_resolve(page):
    """mkdocs checks the links inside docs/; the front pages outside it are checked here."""
    for target in LINK.findall(page.read_text()):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        path = (page.parent / target.split("#")[0]).resolve()
        assert path.exists(), f"{page.relative_to(ROOT)} links {target}, which does not exist"


def test_readme_is_a_front_page():
    assert len((ROOT / "README.md").read_text().split("\n")) <= 250


def test_site_builds_strict(tmp_path):
    """`mkdocs build --strict`: a broken link, a missing page in the nav or a bad anchor fails the build."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--quiet",
            "-f",
            str(ROOT / "mkdocs.yml"),
            "-d",
            str(tmp_path / "site"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "index.html").exists()


DOTTED = re.compile(r"`(collperf(?:\.\w+)+)")


def resolve(dotted: str):
    """Import the longest module prefix of a dotted name, then walk the attributes."""
    import importlib

    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name)
        return obj
    raise ImportError(dotted)


@pytest.mark.parametrize("page", PAGES + [ROOT / "benchmarks" / "README.md"], ids=lambda p: p.name)
def test_every_python_name_the_docs_mention_exists(page):
    """A module or function named in backticks (`collperf.api.trees`) still exists: a move or a rename
    updates the docs, or this fails."""
    for dotted in sorted(set(DOTTED.findall(page.read_text()))):
        try:
            resolve(dotted)
        except (ImportError, AttributeError) as e:
            pytest.fail(f"{page.relative_to(ROOT)} names {dotted}, which does not resolve: {e}")


def _modules() -> set[str]:
    """Every module of the package as the map names it: `lab/bench.py`, a package as `lab/`."""
    package = ROOT / "src" / "collperf"
    found = set()
    for path in package.rglob("*.py"):
        if "__pycache__" in path.parts:
            continue
        name = path.relative_to(package).as_posix()
        found.add(name[: -len("__init__.py")] if name.endswith("/__init__.py") else name)
    return found


def design_map() -> set[str]:
    """The modules docs/DESIGN.md's layout names: its code block under `src/collperf/`, two spaces of
    indent per folder level, a line's names before its description (a line may name several)."""
    text = (ROOT / "docs" / "DESIGN.md").read_text()
    block = text.split("\nsrc/collperf/\n", 1)[1].split("```", 1)[0]
    listed, folders = set(), []
    for line in block.split("\n"):
        if not line.startswith("  ") or not line.strip():
            continue
        depth = (len(line) - len(line.lstrip(" "))) // 2 - 1
        if depth < 0:
            break  # tests/, benchmarks/: outside the package
        folders = folders[:depth]
        names = [n for n in re.split(r"\s{2,}", line.strip())[0].split() if n.endswith((".py", "/"))]
        for name in names:
            path = "".join(folders) + name
            listed.add(path[: -len("__init__.py")] if path.endswith("/__init__.py") else path)
        if len(names) == 1 and names[0].endswith("/"):
            folders.append(names[0])
    return listed


def test_the_design_maps_every_module():
    """docs/DESIGN.md's layout names every module of src/collperf, and nothing that is gone."""
    listed, modules = design_map(), _modules()
    package = ROOT / "src" / "collperf"
    # a folder of package data (no __init__.py) is on the map as a place, not a module
    listed = {
        n
        for n in listed
        if not (n.endswith("/") and (package / n).is_dir() and not (package / n / "__init__.py").exists())
    }
    missing, stale = sorted(modules - listed), sorted(listed - modules)
    assert not missing and not stale, f"docs/DESIGN.md's layout (section 3): add a line for {missing}, remove {stale}"
