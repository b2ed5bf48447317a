"""A verdict is a typed value, Verdict(kind, text): code asks its kind, never its words. An AST walk of the package
finds no prefix test (`.startswith`, `.endswith`) and no comparison or membership test of a verdict label outside
diagnose/verdict.py, as tests/test_algorithm_names.py does for -A names."""

import ast
from pathlib import Path

import pytest

import collperf
from collperf.diagnose.verdict import Kind, Verdict

ROOT = Path(collperf.__file__).parent
HOME = ROOT / "diagnose" / "verdict.py"
# the first words of every label, and the shorter prefixes the old tests used ("slower" for two labels)
PREFIXES = tuple(sorted({k.value for k in Kind} | {"slower", "faster", "above", "as expected"}))
# a whole label compared: "error" alone is also a finding's severity, so it counts only in a prefix test
LABELS = {k.value for k in Kind} - {Kind.ERROR.value} | {"slower", "faster", "slow end"}


def _strings(node) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [s for item in node.elts for s in _strings(item)]
    return []


def text_tests(source: str) -> list[tuple[int, str]]:
    """(line, string) of each `x.startswith("slower...")` / `.endswith`, `x == "as expected"`, `x != ...`,
    `x in ("not judged", ...)` and `label_of(...)` on verdict words."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("startswith", "endswith")
        ):
            found += [(node.lineno, s) for a in node.args for s in _strings(a) if s.startswith(PREFIXES)]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, (ast.Name, ast.Attribute))
            and getattr(node.func, "id", getattr(node.func, "attr", "")) == "label_of"
        ):
            found.append((node.lineno, "label_of"))
        elif isinstance(node, ast.Compare) and any(
            isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)) for op in node.ops
        ):
            found += [(node.lineno, s) for o in (node.left, *node.comparators) for s in _strings(o) if s in LABELS]
    return found


def test_no_code_outside_verdict_py_reads_a_verdicts_words():
    hits = [
        f"{path.relative_to(ROOT)}:{line}: {s!r}"
        for path in sorted(ROOT.rglob("*.py"))
        if path != HOME
        for line, s in text_tests(path.read_text())
    ]
    print(f"\nprefix tests and comparisons of verdict text outside diagnose/verdict.py: {len(hits)}")
    assert not hits, (
        "ask the verdict's kind (v.kind.slower, v.kind is Kind.NOT_JUDGED, ...), not its text:\n" + "\n".join(hits)
    )


def test_the_walk_finds_each_form():
    source = (
        'if v.verdict.startswith("slower"): pass\nif t.endswith(("not judged", "x")): pass\n'
        'if label == "as expected": pass\nif "faster than typical" in labels: pass\n'
        'if call.label != "slow end": pass\nk = label_of(text)\nif f.severity == "error": pass\n'
        'if name.startswith("rank "): pass\n'
    )
    assert text_tests(source) == [
        (1, "slower"),
        (2, "not judged"),
        (3, "as expected"),
        (4, "faster than typical"),
        (5, "slow end"),
        (6, "label_of"),
    ]


def test_every_verdict_starts_with_its_kinds_label():
    assert Verdict(Kind.SLOWER, "slower than expected by 61% (1 ms vs 0.6 ms)").label == "slower than expected"
    with pytest.raises(ValueError, match="must start with 'as expected'"):
        Verdict(Kind.AS_EXPECTED, "slower than expected by 61%")
    # a trace's call judged against the bound alone says its ratio first
    assert Verdict(Kind.AGAINST_BOUND, "1.5x the bound (3 ms vs 2 ms)").kind.judged


@pytest.mark.parametrize(
    "text, kind",
    [
        ("as expected, at the slow end of healthy runs: 11 of 11 sizes", Kind.SLOW_END),  # the longer label first
        ("as expected, at the fast end of healthy runs: 8% under", Kind.AS_EXPECTED),
        ("slower than the bound allows by 3x", Kind.SLOWER_THAN_BOUND),
        ("faster than any public run: check the unit", Kind.IMPLAUSIBLE),
        ("not judged: no system assumed", Kind.NOT_JUDGED),
        ("investigate: 2x", None),
    ],
)
def test_a_text_read_back_finds_its_kind(text, kind):
    assert Kind.of_text(text) is kind


def test_the_groups_code_asks():
    assert {k for k in Kind if k.slower} == {Kind.SLOWER, Kind.SLOWER_THAN_BOUND}
    assert {k for k in Kind if k.faster} == {Kind.FASTER, Kind.FASTER_THAN_TYPICAL, Kind.IMPLAUSIBLE}
    assert {k for k in Kind if k.expected} == {Kind.AS_EXPECTED, Kind.SLOW_END}
    assert [k for k in Kind if not k.judged] == [Kind.NOT_JUDGED]
    said = Verdict(Kind.NOT_JUDGED, "not judged: a group of one rank does not communicate")
    assert said.reason == "a group of one rank does not communicate" and said.then("; x").text.endswith("; x")
    assert Verdict(Kind.SLOWER, "slower than expected by 2x (2 ms vs 1 ms)").short == "slower than expected by 2x"
