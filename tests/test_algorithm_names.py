"""Every name -A accepts is a registered object, and callers ask its capabilities: an AST walk of the
package finds no comparison or membership test of a registered -A name outside the registry."""

import ast
from pathlib import Path

import pytest

import collperf
import collperf.spec  # noqa: F401  (imports blink's registration of -A blink, blink-hybrid)
from collperf.model.algorithms import ALGORITHMS
from collperf.model.algorithms.modes import (
    MODES,
    Mode,
    RegistrationError,
    is_chooser,
    is_flat,
    is_hybrid,
    is_runtime_only,
    is_two_level,
    mode_of,
    needs_topology,
    register_mode,
)

ROOT = Path(collperf.__file__).parent
# the registry itself, and the one module where the blink package registers its two modes
REGISTRATION = {ROOT / "model" / "algorithms", ROOT / "blink" / "algorithms.py"}
# other vocabularies that share a word with an -A name: NCCL's own algorithms (ring, tree, NVLS: NCCL 2.30
# src/graph/tuning.cc) and topology kinds (ring:P, mesh:P)
OTHER_VOCABULARY = {ROOT / "model" / "nccl", ROOT / "topology"}


def _names() -> set[str]:
    return set(MODES) | {a.name for a in ALGORITHMS}


def _strings(node) -> list[str]:
    """The string constants of an operand: a literal, or the items of a literal tuple, list or set."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [s for item in node.elts for s in _strings(item)]
    return []


def name_comparisons(source: str, names: set[str]) -> list[tuple[int, str]]:
    """(line, name) of each `x == "name"`, `x != "name"`, `x in ("name", ...)`, `"name" in x` and
    `match x: case "name"` whose name is a registered -A name."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)) for op in node.ops):
                found += [(node.lineno, s) for o in operands for s in _strings(o) if s in names]
        elif isinstance(node, ast.MatchValue):
            found += [(node.lineno, s) for s in _strings(node.value) if s in names]
    return found


def _outside_registry():
    for path in sorted(ROOT.rglob("*.py")):
        if not any(path == r or r in path.parents for r in REGISTRATION | OTHER_VOCABULARY):
            yield path


def test_no_string_comparison_of_an_algorithm_name_outside_the_registry():
    names = _names()
    hits = [
        f"{path.relative_to(ROOT)}:{line}: {name!r}"
        for path in _outside_registry()
        for line, name in name_comparisons(path.read_text(), names)
    ]
    print(f"\nstring comparisons of -A names outside the registry: {len(hits)}")
    assert not hits, (
        "ask the registry (model/algorithms/modes.py is_two_level, is_chooser, ...), not the name:\n" + "\n".join(hits)
    )


def test_the_walk_finds_each_form_of_comparison():
    source = (
        'if a == "auto": pass\nif "builtin" != a: pass\nif a in ("ring", "x"): pass\n'
        'if "blink" in algorithms: pass\nmatch a:\n    case "hierarchical": pass\n'
        'if a == "unregistered" or b in ["other"]: pass\nx = ["auto"]\n'
    )
    found = name_comparisons(source, {"auto", "builtin", "ring", "blink", "hierarchical"})
    assert found == [(1, "auto"), (2, "builtin"), (3, "ring"), (4, "blink"), (6, "hierarchical")]


def test_every_name_a_accepts_is_a_registered_object_with_its_capabilities():
    assert {"hierarchical", "auto", "builtin", "blink", "blink-hybrid"} <= set(MODES)
    assert [n for n in MODES if is_two_level(n)] == ["hierarchical"]
    assert [n for n in MODES if is_chooser(n)] == ["auto"]
    assert [n for n in MODES if is_runtime_only(n)] == ["builtin"]
    assert [n for n in MODES if needs_topology(n)] == ["blink", "blink-hybrid"]
    assert [n for n in MODES if is_hybrid(n)] == ["blink-hybrid"]
    # as the user types them; flat algorithms are not modes
    assert is_chooser(" Auto ") and mode_of("AUTO") is MODES["auto"]
    assert all(is_flat(a.name) for a in ALGORITHMS) and not any(a.name in MODES for a in ALGORITHMS)
    assert not is_two_level(None) and not is_chooser("ring")
    assert MODES["blink-hybrid"].serves("broadcast") and not MODES["blink-hybrid"].serves("allreduce")
    assert MODES["auto"].serves("alltoall")


def test_a_mode_is_registered_once_with_a_kebab_case_name():
    with pytest.raises(RegistrationError, match="registered twice"):
        register_mode(Mode("auto", "again", chooser=True))
    with pytest.raises(RegistrationError, match="kebab-case"):
        Mode("Auto", "upper case")
