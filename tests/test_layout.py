"""The architecture stays visible: no import cycles, rooms of readable size, upper layers on public names."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "dpgraph"
UPPER = ("experiments", "baselines", "report", "commands.py", "cli.py", "planning_cli.py", "planner")


def _modules() -> dict[str, Path]:
    mods = {}
    for f in PACKAGE.rglob("*.py"):
        parts = f.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        mods[name] = f
    return mods


def _runtime_imports(mods: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> modules it imports when run (imports under ``if TYPE_CHECKING`` excluded)."""
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for m, f in mods.items():
        tree = ast.parse(f.read_text())
        typing_only = {id(n) for node in ast.walk(tree)
                       if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
                       for n in ast.walk(node)}
        package = m if f.name == "__init__.py" else m.rpartition(".")[0]
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.ImportFrom):
                base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
                mod = ".".join(base + ([node.module] if node.module else []))
                for alias in node.names:
                    target = f"{mod}.{alias.name}"
                    edges[m].add(target if target in mods else mod)
            elif isinstance(node, ast.Import):
                edges[m].update(a.name for a in node.names)
        edges[m] = {t for t in edges[m] if t in mods and t != m}
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in edges:
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles():
    assert _cycles(_runtime_imports(_modules())) == []


def test_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_every_module_is_a_room_read_in_one_sitting():
    sizes = {m: len(f.read_text().splitlines()) for m, f in _modules().items()}
    assert {m: n for m, n in sizes.items() if n > 600} == {}


def _upper_files() -> list[Path]:
    files: list[Path] = []
    for name in UPPER:
        p = PACKAGE / name
        files.extend([p] if p.is_file() else sorted(p.rglob("*.py")))
    return files


def test_upper_layers_use_public_names_only():
    bad = []
    for f in _upper_files():
        own = f.relative_to(PACKAGE).parts[0].removesuffix(".py")
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and \
                    (node.module or "").startswith("dpgraph"):
                parts = node.module.split(".")[1:]
                # a layer's own private helpers (experiments/_harness.py) are its business
                if parts[:1] != [own] and any(p.startswith("_") for p in parts):
                    bad.append(f"{f.name}:{node.lineno} from {node.module}")
                bad += [f"{f.name}:{node.lineno} {a.name}" for a in node.names
                        if a.name.startswith("_") and not a.name.startswith("__")]
            if (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                    and not node.attr.startswith("__")
                    and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))):
                bad.append(f"{f.name}:{node.lineno} .{node.attr}")
    assert bad == []
