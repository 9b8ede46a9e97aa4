"""The architecture stays visible: no import cycles, rooms of readable size, upper layers on faces.

Imports are read from the source (``ast``), all of them: at module level, inside
functions (lazy) and under ``if TYPE_CHECKING``.  Importing ``a.b.c`` also runs
the ``__init__`` of ``a.b`` and ``a``; those implicit imports count too (except
the importer's own parent packages, which are already running when it runs).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "dpgraph"
#: the upper layers: apps on top of core and graph; they import faces only
UPPER = ("experiments", "baselines", "report", "planner", "local", "audit.py", "commands.py", "cli.py",
         "cli_types.py", "planning_cli.py")


def _modules() -> dict[str, Path]:
    mods = {}
    for f in PACKAGE.rglob("*.py"):
        parts = f.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        mods[name] = f
    return mods


def _parents(name: str) -> list[str]:
    """``a.b.c`` -> ``["a", "a.b"]``: the packages whose ``__init__`` runs first."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _imports(m: str, f: Path, mods: dict[str, Path]) -> list[tuple[int, str, list[str]]]:
    """(line, module, names) of every import in ``m``, relative ones resolved."""
    package = m if f.name == "__init__.py" else m.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(f.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            found.append((node.lineno, mod, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name, []) for a in node.names]
    return found


def _targets(mod: str, names: list[str], mods: dict[str, Path]) -> set[str]:
    """The modules one import statement runs: the module, imported submodules, parents."""
    direct = {f"{mod}.{n}" for n in names if f"{mod}.{n}" in mods} | {mod}
    return direct | {p for t in direct for p in _parents(t)}


def _edges(mods: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> modules whose code runs when it is imported or called (every import counts)."""
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for m, f in mods.items():
        running = {m, *_parents(m)}  # already running when m runs
        for _, mod, names in _imports(m, f, mods):
            edges[m] |= _targets(mod, names, mods) - running
        edges[m] = {t for t in edges[m] if t in mods}
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


#: The layers, lowest first (``docs/design.md``, section 3): a module imports only from its
#: own layer and the layers below.  A name is a top-level module or package of dpgraph.
LAYERS = (
    ("_version", "_reals", "_safejson", "_files", "_frames", "_numba", "exceptions", "validation",
     "_ledger_file", "ledger"),
    ("core",),
    ("graph", "bounds"),
    ("datasets",),
    ("audit", "planner", "baselines", "cli_types", "local"),
    ("report",),
    ("experiments",),
    ("commands", "planning_cli", "cli", "__main__", ""),  # "": the front door, __init__
)


def _level(m: str) -> int:
    top = m.split(".")[1] if "." in m else ""
    return next(k for k, names in enumerate(LAYERS) if top in names)


def test_every_module_is_in_a_layer():
    assert [m for m in _modules() if not any(
        (m.split(".")[1] if "." in m else "") in names for names in LAYERS)] == []


def test_layers_import_downwards():
    edges = _edges(_modules())
    up = sorted(f"{m} -> {t}" for m, ts in edges.items() for t in ts if _level(t) > _level(m))
    assert up == []


def test_no_import_cycles():
    assert _cycles(_edges(_modules())) == []


def test_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_a_parent_package_is_an_import():
    """``from ..sub.mod import x`` runs ``sub/__init__``: a loop through it is a cycle."""
    mods = {"p": Path("p/__init__.py"), "p.a": Path("p/a.py"), "p.s": Path("p/s/__init__.py"),
            "p.s.m": Path("p/s/m.py")}
    assert _targets("p.s.m", ["x"], mods) == {"p.s.m", "p.s", "p"}
    assert _targets("p", ["a"], mods) == {"p", "p.a"}


def test_every_module_is_a_room_read_in_one_sitting():
    sizes = {m: len(f.read_text().splitlines()) for m, f in _modules().items()}
    assert {m: n for m, n in sizes.items() if n > 600} == {}


def test_no_module_imports_the_front_door():
    """``dpgraph/__init__.py`` is for users: nothing inside the package imports it."""
    mods = _modules()
    bad = []
    for m, f in mods.items():
        for line, mod, names in _imports(m, f, mods):
            front = mod == "dpgraph" and (not names or any(f"dpgraph.{n}" not in mods
                                                           for n in names))
            if front and m != "dpgraph":
                bad.append(f"{m}:{line}")
    assert bad == []


def _faces(mods: dict[str, Path]) -> set[str]:
    """What the upper layers may import: a package's ``__init__`` (but the front door)
    and a top-level module of ``dpgraph`` whose name has no underscore (and the
    version string)."""
    packages = {m for m, f in mods.items() if f.name == "__init__.py" and m != "dpgraph"}
    top = {m for m in mods if m.count(".") == 1 and not m.split(".")[1].startswith("_")}
    return packages | top | {"dpgraph._version"}


def _layer(m: str) -> str:
    return ".".join(m.split(".")[:2])


def test_upper_layers_import_faces_and_public_names_only():
    mods = _modules()
    faces = _faces(mods)
    upper = {m for m in mods if m.split(".")[1:2] and
             m.split(".")[1] in {u.removesuffix(".py") for u in UPPER}}
    bad = []
    for m in sorted(upper):
        f = mods[m]
        for line, mod, names in _imports(m, f, mods):
            if not mod.startswith("dpgraph"):
                continue
            # a layer's own modules (experiments/_harness.py) are its business
            if _layer(mod) == _layer(m) and mod != "dpgraph":
                continue
            # ``from face import name`` takes what the face binds (a submodule or not)
            direct = {f"{mod}.{n}" for n in names} if mod == "dpgraph" else {mod}
            bad += [f"{m}:{line} {t}" for t in sorted(direct - faces)]
            bad += [f"{m}:{line} {n}" for n in names
                    if n.startswith("_") and not n.startswith("__")]
        for node in ast.walk(ast.parse(f.read_text())):
            if (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                    and not node.attr.startswith("__")
                    and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))):
                bad.append(f"{m}:{node.lineno} .{node.attr}")
    assert bad == []


def test_no_module_is_shadowed_by_a_name_its_package_binds():
    """A module named like a function its package exports (``baselines.tmf``) would be
    reachable only through ``importlib``; module names say what they hold instead."""
    import importlib
    import pkgutil
    import types

    import dpgraph

    shadowed = []
    for info in pkgutil.walk_packages(dpgraph.__path__, "dpgraph."):
        if not info.ispkg:
            continue
        try:
            pkg = importlib.import_module(info.name)
        except ImportError:  # an optional dependency
            continue
        for sub in pkgutil.iter_modules(pkg.__path__):
            bound = getattr(pkg, sub.name, None)
            if bound is not None and not isinstance(bound, types.ModuleType):
                shadowed.append(f"{info.name}.{sub.name}")
    assert set(shadowed) <= {"dpgraph.planner.plan"}  # plan(): the planner's module, for now


def _design_map() -> set[str]:
    """The module paths named by the map of docs/design.md (section 3), one name a line,
    two spaces of indentation a level."""
    text = (PACKAGE.parent / "docs" / "design.md").read_text()
    block = text[text.index("\n    dpgraph/\n"):].split("\n\n")[0].splitlines()[1:]
    paths, stack = set(), []
    for line in block:
        name = line.split()[0] if line.strip() else ""
        if not name.endswith((".py", "/")):
            continue  # a description's continuation
        depth = (len(line) - len(line.lstrip()) - 6) // 2  # "dpgraph/" is at 4, its files at 6
        del stack[depth:]
        if name.endswith("/"):
            stack.append(name.rstrip("/"))
        else:
            paths.add("/".join([*stack, name]))
    return paths


def test_the_design_map_names_every_module():
    modules = {f.relative_to(PACKAGE).as_posix() for f in PACKAGE.rglob("*.py")}
    named = _design_map()
    assert (sorted(modules - named), sorted(named - modules)) == ([], [])


def test_every_upper_layer_is_known():
    names = {p.name for p in PACKAGE.iterdir() if not p.name.startswith((".", "_"))}
    assert set(UPPER) <= names
