"""Writing an analytic: what it returns and how it becomes a method of every release.

The authoring API of :mod:`dpgraph.graph.analytics` and of the typed analytics,
below both of them (and below :class:`~dpgraph.graph.PrivateGraph`, which binds
what they register):

* :func:`analytic` registers ``func(R, ...)``; :func:`bind_analytics` gives a
  class one method per registered function (``R.triangles()`` is
  ``triangles(R)``), sharing the function's docstring and signature;
* :func:`finish` and :func:`finish_ratio` make the returned
  :class:`~dpgraph.core.Estimate`, proper or not through the core's one
  implementation (:func:`~dpgraph.core.apply_proper`);
* :class:`NodeEstimates` is the per-node answer (``R.degree()``);
* ``PROPER``, ``PROGRESS`` and ``SEED`` are the declared constraints of the
  arguments every analytic shares (see :func:`dpgraph.validation.validate_params`);
  :func:`check_release` and :func:`require_undirected` check the release.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Hashable, Iterator
from dataclasses import replace
from typing import Any

import numpy as np

from ..core import estimate_columns, estimates_frame
from ..core.estimate import Z95, Estimate, FiellerInterval, apply_proper
from ..validation import Boolean, Integer, Optional, validate_params

__all__ = [
    "ANALYTICS",
    "PROGRESS",
    "PROPER",
    "SEED",
    "NodeEstimates",
    "analytic",
    "bind_analytics",
    "check_release",
    "finish",
    "finish_ratio",
    "require_undirected",
]

#: ``proper``: project the answer onto its feasible range (the default of every analytic).
PROPER = Boolean()
#: ``progress``: a progress bar (True, False, or None: for large releases on a terminal).
PROGRESS = Optional(Boolean())
#: ``seed`` of a post-processing step: None (fresh) or a non-negative int.
SEED = Optional(Integer(minimum=0))


def check_release(R: Any) -> None:
    """Refuse anything that is not a release (duck-typed on the public accessors)."""
    if not all(hasattr(R, a) for a in ("adjacency", "channel", "released_degrees", "positions")):
        raise TypeError(f"R must be a dpgraph PrivateGraph, got {type(R).__name__}")


def require_undirected(R: Any, what: str) -> None:
    """Refuse a directed release for ``what``, an analytic defined on undirected ones."""
    check_release(R)
    if R.directed:
        raise ValueError(
            f"{what} is defined here for undirected releases only; this release is directed. "
            "Release G.to_undirected() instead (its own epsilon-DP release)."
        )


def finish(est: Estimate, proper: Any, low: Any = None, high: Any = None,
           step: Any = None) -> Estimate:
    """An analytic's result from an (unbiased or plug-in) estimate with a normal error bar.

    The feasible range is [low, high] (the estimate's own by default).
    ``proper=True``: :func:`~dpgraph.core.apply_proper` (value clipped to
    the range and rounded to ``step``, interval centred on the raw estimate
    and clipped to the range, so it contains the value).  ``proper=False``:
    the raw estimate.  ``proper`` is declared (``PROPER``) by the analytic.
    """
    low = est.feasible_range[0] if low is None else low
    high = est.feasible_range[1] if high is None else high
    return apply_proper(replace(est, feasible_range=(low, high)), proper, step=step)


def finish_ratio(num: float, den: float, var_num: float, var_den: float, cov: float,
                 proper: Any, low: float, high: float) -> Estimate:
    """An analytic's result for a ratio num / den of jointly normal estimates (Fieller).

    ``raw`` is num / den (NaN when den <= 0).  ``proper=True``: through
    :func:`~dpgraph.core.apply_proper`, the value is the raw ratio clipped to
    [low, high] when den > 0, else the middle of [low, high]; the interval is Fieller's at the requested level (see
    :class:`~dpgraph.core.FiellerInterval`).  ``std`` is the half-width of
    the unclipped 95% interval over 1.96 (an equivalent standard error, not
    exact).  Unresolved, whatever the interval, when den is not significantly
    positive; ``std`` is then NaN (the interval is unbounded: no error bar).
    """
    var_num, var_den = max(float(var_num), 0.0), max(float(var_den), 0.0)
    rule = FiellerInterval(float(num), float(den), var_num, var_den, float(cov))
    raw = num / den if den > 0 else float("nan")
    weak = None if den > Z95 * np.sqrt(var_den) else (
        "its denominator is not resolved at this epsilon: a larger epsilon would resolve it")
    lo, hi = rule(Z95, -np.inf, np.inf)  # bounded exactly when the denominator is resolved
    std = (hi - lo) / (2 * Z95) if weak is None and np.isfinite(hi - lo) else float("nan")
    est = Estimate(raw, std, exact_std=False, feasible_range=(low, high), raw=raw,
                   interval=rule, unresolved=weak)
    return apply_proper(est, proper)


class NodeEstimates:
    """Per-node estimates, like networkx's degree view ``G.degree``.

    Iterating gives ``(node, estimate)`` pairs, so ``dict(R.degree())`` and
    ``for v, d in R.degree(nbunch)`` work as in networkx; ``est[v]`` is the
    :class:`~dpgraph.core.Estimate` of node v; ``v in est`` and ``len(est)``
    as for a mapping; ``estimate`` is the batch (arrays in ``nodes`` order)
    and ``numpy.asarray(est)`` its values.  As a table: ``to_frame()`` (pandas,
    indexed by node) and ``to_dict()`` (``{column: {node: entry}}``, what
    pandas' ``DataFrame.to_dict()`` gives) with the columns ``value, std,
    ci_low, ci_high, resolved, reason``.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> R = dpgraph.release(nx.path_graph(3), epsilon=2.0, seed=0)
    >>> d = R.degree()
    >>> [v for v, _ in d], 1 in d, len(d)
    ([0, 1, 2], True, 3)
    >>> list(d.to_dict()["value"]) == [0, 1, 2]
    True
    """

    def __init__(self, nodes: tuple, estimate: Estimate) -> None:
        self.nodes = tuple(nodes)
        self.estimate = estimate
        self._pos = {v: i for i, v in enumerate(self.nodes)}

    def __getitem__(self, v: Hashable) -> Estimate:
        try:
            i = self._pos[v]
        except (KeyError, TypeError):
            raise KeyError(v) from None
        return self.estimate[i]

    def __contains__(self, v: Any) -> bool:
        try:
            return v in self._pos
        except TypeError:  # unhashable
            return False

    def __iter__(self) -> Iterator[tuple[Hashable, Estimate]]:
        for i, v in enumerate(self.nodes):
            yield v, self.estimate[i]

    def __len__(self) -> int:
        return len(self.nodes)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.asarray(self.estimate.value, dtype=float if dtype is None else dtype)

    def to_dict(self) -> dict[str, dict]:
        """``{column: {node: entry}}`` for the columns ``value, std, ci_low, ci_high, resolved, reason``.

        ``pandas.DataFrame(est.to_dict())`` is :meth:`to_frame`; the values
        alone are ``dict(zip(est.nodes, numpy.asarray(est)))``.
        """
        return {c: dict(zip(self.nodes, col)) for c, col in estimate_columns(self.estimate).items()}

    def to_frame(self) -> Any:
        """A :class:`pandas.DataFrame` indexed by node (``node``), columns of :meth:`to_dict`."""
        return estimates_frame(estimate_columns(self.estimate), index=self.nodes,
                               index_name="node")

    def __repr__(self) -> str:  # a summary, never the values
        return f"NodeEstimates({len(self)} nodes)"


def _method(func: Callable) -> Callable:
    """A method ``R.name(...)`` calling ``func(R, ...)``, with func's docstring and signature.

    The docstring is written once, on the module function; the method shares
    it and shows the function's signature with ``self`` in place of ``R``.
    """

    @functools.wraps(func)
    def method(self, *args, **kwargs):
        return func(self, *args, **kwargs)

    sig = inspect.signature(func)
    params = list(sig.parameters.values())
    params[0] = params[0].replace(name="self", annotation=inspect.Parameter.empty)
    method.__signature__ = sig.replace(parameters=params)
    return method


#: name -> function of every analytic, in registration order (see :func:`analytic`).
ANALYTICS: dict[str, Callable] = {}


def analytic(func: Callable) -> Callable:
    """Register ``func(R, ...)`` as the method ``R.name(...)`` of every release.

    A new analytic is one decorated function: :func:`bind_analytics` gives
    ``PrivateGraph`` a method of the same name sharing the function's
    docstring and signature, so nothing else lists it.  A ``proper``
    parameter the function does not declare itself is declared here
    (``PROPER``).
    """
    if func.__name__ in ANALYTICS:
        raise ValueError(f"an analytic named {func.__name__!r} is already registered")
    declared = getattr(func, "__dpgraph_constraints__", {})
    if "proper" in inspect.signature(func).parameters and "proper" not in declared:
        func = validate_params(proper=PROPER)(func)  # every analytic's proper is declared
        func.__dpgraph_constraints__ = {"proper": PROPER, **declared}
    ANALYTICS[func.__name__] = func
    return func


def bind_analytics(cls: type) -> type:
    """Class decorator: a method for every registered analytic (see :func:`analytic`)."""
    for name, func in ANALYTICS.items():
        if name in cls.__dict__:
            raise TypeError(f"{cls.__name__}.{name} is defined twice (a method and an analytic)")
        setattr(cls, name, _method(func))
    return cls
