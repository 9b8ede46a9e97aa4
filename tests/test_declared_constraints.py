"""Every declared parameter of every public function refuses bad values, naming the argument.

Public functions declare their arguments' constraints with
:func:`dpgraph.validation.validate_params`; each constraint knows values it must
refuse.  This test finds every declared function (module functions, methods,
constructors) and calls it with each refused value in turn, every other declared
argument valid and undeclared ones a placeholder: the declared check runs before
the body, so the call must raise a TypeError or ValueError whose message names
the argument.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import dpgraph

_SKIP_PACKAGES = ("dpgraph.experiments", "dpgraph.cli", "dpgraph.commands", "dpgraph.__main__")


def _declared() -> list[tuple[str, object]]:
    found: dict[int, tuple[str, object]] = {}
    for info in pkgutil.walk_packages(dpgraph.__path__, "dpgraph."):
        if info.name.startswith(_SKIP_PACKAGES):
            continue
        try:
            mod = importlib.import_module(info.name)
        except ImportError:  # an optional dependency
            continue
        for name, obj in vars(mod).items():
            if name.startswith("_"):
                continue
            targets = [(f"{info.name}.{name}", obj)]
            if inspect.isclass(obj) and obj.__module__ == info.name:
                targets += [(f"{info.name}.{name}.{m}", getattr(obj, m, None))
                            for m in list(vars(obj)) if not m.startswith("_") or m == "__init__"]
            for qual, f in targets:
                f = getattr(f, "__func__", f)
                if callable(f) and hasattr(f, "__dpgraph_constraints__"):
                    found.setdefault(id(f), (qual, f))
    return sorted(found.values(), key=lambda t: t[0])


DECLARED = _declared()


def test_public_functions_declare_their_constraints():
    names = {q.rsplit(".", 1)[-1] for q, _ in DECLARED}
    # the release's own arguments and the cut queries at least
    assert {"release", "cut", "cuts", "cut_batch", "edges_within"} <= names


@pytest.mark.parametrize("qualname,func", DECLARED, ids=[q for q, _ in DECLARED])
def test_every_declared_parameter_refuses_bad_values_by_name(qualname, func):
    constraints = func.__dpgraph_constraints__
    sig = inspect.signature(func)
    placeholder = object()
    base = {}
    for pname, param in sig.parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if pname in constraints:
            base[pname] = constraints[pname].valid_example()
        elif param.default is inspect.Parameter.empty:
            base[pname] = placeholder
    for pname, constraint in constraints.items():
        for bad in constraint.invalid_examples():
            args = dict(base, **{pname: bad})
            with pytest.raises((TypeError, ValueError)) as info:
                func(**args)
            assert pname in str(info.value), (qualname, pname, bad, str(info.value))
