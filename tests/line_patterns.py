"""Every regular expression the readers apply to input text, collected from the source (not listed by hand):
the modules under ingest/, diagnose/ and trace/ (and units.py, which parses tokens of those lines).

A pattern is found three ways: a compiled pattern bound at module level; the first argument of a call to
`re.search/match/fullmatch/findall/finditer/sub/split/compile` evaluated in the module's namespace (a
literal, a concatenation with module constants); and, where that argument is a loop variable (`for
pattern, key in _HOSTS: re.search(pattern, ...)`), every element of the module-level iterable the loop runs
over. `collect()` returns (where, pattern, flags) with `unresolved` listing any call it could not evaluate,
so a new kind of call site fails the test instead of escaping it."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "collperf"
PACKAGES = ("ingest", "expect", "diagnose", "trace")
EXTRA_MODULES = ("units.py",)
_CALLS = {"search", "match", "fullmatch", "findall", "finditer", "sub", "subn", "split", "compile"}


def _modules() -> list[Path]:
    paths = [p for pkg in PACKAGES for p in sorted((SRC / pkg).glob("*.py"))]
    return paths + [SRC / m for m in EXTRA_MODULES]


def _module_name(path: Path) -> str:
    return "collperf." + ".".join(path.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__")


def _loop_bindings(tree: ast.AST, namespace: dict) -> dict[str, list]:
    """Loop variable name -> the values it takes, for loops over a module-level iterable."""
    bound: dict[str, list] = {}
    for node in ast.walk(tree):
        loops = [node] if isinstance(node, (ast.For, ast.comprehension)) else []
        for loop in loops:
            try:
                items = list(eval(compile(ast.Expression(loop.iter), "<iter>", "eval"), namespace))  # noqa: S307
            except Exception:  # noqa: BLE001 - a loop over a local value: not a pattern source
                continue
            target = loop.target
            if isinstance(target, ast.Name):
                bound.setdefault(target.id, []).extend(items)
            elif isinstance(target, ast.Tuple):
                for i, elt in enumerate(target.elts):
                    if isinstance(elt, ast.Name):
                        bound.setdefault(elt.id, []).extend(
                            item[i] for item in items if isinstance(item, (tuple, list)) and len(item) > i
                        )
    return bound


def _methods(tree: ast.AST, namespace: dict) -> dict[str, set]:
    """Module-level pattern name -> the methods called on it (search, match, ...)."""
    used: dict[str, set] = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and isinstance(namespace.get(node.func.value.id), re.Pattern)
        ):
            used.setdefault(node.func.value.id, set()).add(node.func.attr)
    return used


def _how(method: str) -> str:
    """How a call applies its pattern: anchored at the start, over the whole text, or tried at every position."""
    return method if method in ("match", "fullmatch") else "search"


def collect() -> tuple[list[tuple[str, str, int, str]], list[str]]:
    """(where, pattern, flags, how) for every pattern, `how` being 'search', 'match' or 'fullmatch'; and the
    call sites whose pattern could not be evaluated."""
    found: dict[tuple[str, int, str], str] = {}
    unresolved: list[str] = []
    for path in _modules():
        module = importlib.import_module(_module_name(path))
        namespace = vars(module)
        where = path.relative_to(SRC).as_posix()
        tree = ast.parse(path.read_text())
        methods = _methods(tree, namespace)
        for name, value in namespace.items():
            if isinstance(value, re.Pattern) and isinstance(value.pattern, str):
                for method in methods.get(name, {"search"}):  # compiled and passed on: the strictest use
                    found.setdefault((value.pattern, value.flags & ~re.UNICODE, _how(method)), f"{where}:{name}")
        loops = _loop_bindings(tree, namespace)
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "re"
                and node.func.attr in _CALLS
                and node.args
            ):
                continue
            site = f"{where}:{node.lineno}"
            at = 3 if node.func.attr in ("sub", "subn") else 2
            flags_node = (
                node.args[at]
                if len(node.args) > at
                else next((k.value for k in node.keywords if k.arg == "flags"), None)
            )
            flags = eval(compile(ast.Expression(flags_node), site, "eval"), {"re": re}) if flags_node else 0  # noqa: S307
            arg = node.args[0]
            try:
                patterns = [eval(compile(ast.Expression(arg), site, "eval"), namespace)]  # noqa: S307
            except NameError:
                patterns = loops.get(arg.id, []) if isinstance(arg, ast.Name) else []
                if not patterns:
                    unresolved.append(f"{site}: {ast.unparse(arg)}")
                    continue
            for p in patterns:
                if isinstance(p, re.Pattern):
                    p = p.pattern
                if isinstance(p, str):
                    found.setdefault((p, flags, _how(node.func.attr)), site)
                else:
                    unresolved.append(f"{site}: {ast.unparse(arg)} is {type(p).__name__}")
    return [(where, pattern, flags, how) for (pattern, flags, how), where in found.items()], unresolved


# --- adversarial lines -------------------------------------------------------------------------------------------
# Long runs of what the patterns repeat: fixed units (digits, spaces, prefixes, bracketed ids) and, per pattern,
# a near-match built from the pattern itself (its literals, one or two of each repeated item), repeated, cut
# short, and followed by a character that makes a match fail at the very end.

_UNITS = [
    "9",
    " ",
    "x",
    "_",
    "1:",
    "9.",
    "e9",
    "9 ",
    "\t",
    "[1,0]<stdout>:",
    "[0]a",
    "NCCL INFO ",
    "Rank 0 ",
    "9 x ",
    "a_1,",
    "#",
    '"',
]
_CANDIDATES = "a0 _#:.,-[]/x=Z\t\"'(<"


def _in_set(ch: str, items) -> bool:
    for op, av in items:
        name = str(op)
        if name == "LITERAL" and chr(av) == ch:
            return True
        if name == "RANGE" and av[0] <= ord(ch) <= av[1]:
            return True
        if name == "CATEGORY":
            test = {
                "CATEGORY_DIGIT": str.isdigit,
                "CATEGORY_NOT_DIGIT": lambda c: not c.isdigit(),
                "CATEGORY_SPACE": str.isspace,
                "CATEGORY_NOT_SPACE": lambda c: not c.isspace(),
                "CATEGORY_WORD": lambda c: c.isalnum() or c == "_",
                "CATEGORY_NOT_WORD": lambda c: not (c.isalnum() or c == "_"),
            }.get(str(av))
            if test and test(ch):
                return True
    return False


def _one(items) -> str:
    """A character of a class: its first literal, range start or category's example; any other for a negation."""
    negate = bool(items) and str(items[0][0]) == "NEGATE"
    if negate:
        return next((c for c in _CANDIDATES if not _in_set(c, items[1:])), "~")
    return next((c for c in _CANDIDATES + "7Aw" if _in_set(c, items)), "a")


def _sample(parsed, repeat: int) -> str:
    out = []
    for op, av in parsed:
        name = str(op)
        if name == "LITERAL":
            out.append(chr(av))
        elif name == "NOT_LITERAL":
            out.append("a" if av != ord("a") else "b")
        elif name == "IN":
            out.append(_one(av))
        elif name == "ANY":
            out.append("a")
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            lo, hi, sub = av
            out.append(_sample(sub, 1) * max(lo, min(hi, repeat)))
        elif name == "SUBPATTERN":
            out.append(_sample(av[-1], repeat))
        elif name == "ATOMIC_GROUP":
            out.append(_sample(av, repeat))
        elif name == "BRANCH":
            out.append(_sample(av[1][0], repeat))
        elif name == "CATEGORY":
            out.append(_one([(op, av)]))
    return "".join(out)


def near_matches(pattern: str) -> list[str]:
    """One short string per top-level alternative that the pattern (nearly) matches."""
    from re import _parser

    parsed = _parser.parse(pattern)
    alternatives = [parsed]
    if len(parsed) == 1 and str(parsed[0][0]) == "BRANCH":
        alternatives = [alt for alt in parsed[0][1][1]]
    return [s for alt in alternatives for s in {_sample(alt, 1), _sample(alt, 2)} if s]


def adversarial_lines(pattern: str, length: int) -> list[str]:
    units = _UNITS + near_matches(pattern)
    lines = []
    for unit in units:
        body = unit * max(1, length // len(unit))
        lines += [body, body + "\x00"]
        for cut in {len(unit) - 1, 2 * len(unit) // 3, len(unit) // 3} - {0, len(unit)}:
            lines.append(unit[:cut] * (length // cut))
    return lines


# patterns of modules left out of the run (none: every module's line patterns are linear)
PENDING: set[str] = set()


def main(length: int) -> None:
    """Run every pattern over the adversarial lines, printing each before it runs (the last line printed names a
    pattern that does not finish)."""
    patterns, unresolved = collect()
    assert not unresolved, unresolved
    for where, pattern, flags, how in patterns:
        if where.split(":")[0] in PENDING:
            continue
        print(f"{where} {how} {pattern!r}", flush=True)
        apply = getattr(re.compile(pattern, flags), how)
        for line in adversarial_lines(pattern, length):
            apply(line)
    print("done", len(patterns), flush=True)


if __name__ == "__main__":
    import sys

    main(int(sys.argv[1]))
