"""The package's structure drawn from its imports (an AST walk of every module): which modules import which,
from the module's top or from inside a function, the cycles, the imports that run from a lower layer up to a
higher one, and the modules at the package root. tests/test_structure.py asserts on these facts; run this file
with a src folder to print them for any checkout: `python tests/structure_walk.py src`."""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass, field
from pathlib import Path

# The layer order, lowest first (docs/DESIGN.md, section 3): a module may import from its own layer and the
# layers below, never from one above. A name is a folder or a module at the package root.
LAYERS = [
    # the ground floor; the package's __init__ imports nothing of its own when it loads (its exports resolve
    # on first use), so reading collperf.__version__ depends on nothing
    ["__init__", "units", "errors", "collectives", "jsonfile"],
    ["schedule"],  # the IR, its verifier and its arrays: what the algorithms build
    ["model"],  # pure math: the algorithm registry, costs, NCCL's model, hardware
    ["topology", "simulate"],
    ["blink"],
    ["plan"],
    ["spec"],  # requests, validated against the model's names and catalogues
    ["ingest"],  # readers and the rows they share with the bench (ingest/row.py)
    ["expect"],  # the hardware resolved from an input, NCCL's model and the band
    ["runtime"],
    ["lab"],
    ["fit", "diagnose"],
    ["trace"],
    ["export", "report", "plots"],
    ["api"],
    ["cli", "__main__"],
]
LAYER_OF = {name: rank for rank, names in enumerate(LAYERS) for name in names}
# what may be imported where it is used (docs/DESIGN.md): loading these takes a noticeable part of a second
HEAVY = {"torch", "matplotlib", "scipy", "networkx"}


@dataclass(frozen=True)
class Import:
    source: str  # the importing module, dotted
    target: str  # the imported module, dotted
    line: int
    in_function: bool  # inside a def: run when called, not when the module loads


@dataclass
class Structure:
    modules: list[str]
    imports: list[Import]
    cycles: list[list[str]] = field(default_factory=list)
    upward: list[Import] = field(default_factory=list)
    root_modules: list[str] = field(default_factory=list)
    heavy: dict[str, set[str]] = field(default_factory=dict)  # module -> the HEAVY libraries loading it loads

    @property
    def function_level(self) -> list[Import]:
        return [i for i in self.imports if i.in_function]

    def report(self) -> str:
        """The facts as text, one line per finding under a count."""
        lines = [
            f"root modules ({len(self.root_modules)}): {' '.join(self.root_modules)}",
            f"import cycles ({len(self.cycles)}):",
        ]
        lines += [f"  {' -> '.join(c + [c[0]])}" for c in self.cycles]
        lines.append(f"upward imports ({len(self.upward)}):")
        lines += [f"  {i.source}:{i.line} -> {i.target}" for i in self.upward]
        lines.append(f"function-level internal imports ({len(self.function_level)}):")
        lines += [f"  {i.source}:{i.line} -> {i.target}" for i in self.function_level]
        return "\n".join(lines)


def module_name(path: Path, src: Path) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def layer(module: str) -> int | None:
    """The layer of a dotted module: its first name under the package."""
    parts = module.split(".")
    return LAYER_OF.get(parts[1] if len(parts) > 1 else "__init__")


def _imports_of(tree: ast.Module, source: str, modules: set[str]) -> list[Import]:
    found = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.ImportFrom) and child.level == 0 and (child.module or "").startswith("collperf"):
                # `from collperf.x import y`: the module y when it is one, else x
                targets = {
                    f"{child.module}.{a.name}" if f"{child.module}.{a.name}" in modules else child.module
                    for a in child.names
                }
                found.extend(Import(source, t, child.lineno, in_function) for t in sorted(targets))
            elif isinstance(child, ast.Import):
                found.extend(
                    Import(source, a.name, child.lineno, in_function)
                    for a in child.names
                    if a.name.split(".")[0] == "collperf"
                )
            visit(child, inside)

    visit(tree, False)
    return [i for i in found if i.target != source]


def _cycles(modules: list[str], imports: list[Import]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each as one cycle through it."""
    edges: dict[str, set[str]] = {m: set() for m in modules}
    for i in imports:
        if i.target in edges:
            edges[i.source].add(i.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    # the walk recurses once per import edge; the limit is put back after it, as other tests rely on the default
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(10_000, limit))
    try:
        for v in modules:
            if v not in index:
                strong(v)
    finally:
        sys.setrecursionlimit(limit)
    return sorted(components)


def _heavy_imports(tree: ast.Module) -> set[str]:
    """The HEAVY libraries a module imports when it loads (its top level; `if TYPE_CHECKING:` blocks excepted)."""
    found = set()
    for node in tree.body:
        if (
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            or isinstance(node, ast.If)
            and "TYPE_CHECKING" in ast.unparse(node.test)
        ):
            continue
        for x in ast.walk(node):
            if isinstance(x, ast.Import):
                found |= {a.name.split(".")[0] for a in x.names} & HEAVY
            elif isinstance(x, ast.ImportFrom) and x.level == 0 and (x.module or "").split(".")[0] in HEAVY:
                found.add(x.module.split(".")[0])
    return found


def _heavy(modules: list[str], imports: list[Import], direct: dict[str, set[str]]) -> dict[str, set[str]]:
    """Per module, the HEAVY libraries loading it loads: its own, its parent packages' and those of every module
    it imports at its top, transitively."""
    top: dict[str, set[str]] = {}
    for i in imports:
        if not i.in_function:
            top.setdefault(i.source, set()).add(i.target)
    memo: dict[str, set[str]] = {}

    def loads(m: str, seen: frozenset) -> set[str]:
        if m in memo:
            return memo[m]
        out = set(direct.get(m, ()))
        parts = m.split(".")
        for k in range(2, len(parts)):
            out |= loads(".".join(parts[:k]), seen | {m})
        for t in top.get(m, ()):
            if t not in seen:
                out |= loads(t, seen | {m})
        memo[m] = out
        return out

    return {m: loads(m, frozenset()) for m in modules}


def walk(src: Path) -> Structure:
    """The structure of the package under `src` (the folder holding `collperf/`)."""
    paths = sorted((src / "collperf").rglob("*.py"))
    modules = [module_name(p, src) for p in paths]
    known = set(modules)
    trees = [ast.parse(p.read_text()) for p in paths]
    imports = [i for tree, m in zip(trees, modules) for i in _imports_of(tree, m, known)]
    heavy = _heavy(modules, imports, {m: _heavy_imports(tree) for tree, m in zip(trees, modules)})
    upward = [
        i
        for i in imports
        if layer(i.source) is not None and layer(i.target) is not None and layer(i.target) > layer(i.source)
    ]
    root = sorted(p.stem for p in (src / "collperf").glob("*.py") if p.stem not in ("__init__", "__main__"))
    return Structure(modules, imports, _cycles(modules, imports), upward, root, heavy)


if __name__ == "__main__":
    print(walk(Path(sys.argv[1] if len(sys.argv) > 1 else "src")).report())
