"""Shared internals of the analytics modules: release checks, the channel's entry
map, the per-release cache, dense blocks and post-processing argument checks.

Nothing here is public; the statistics live in the sibling modules.
"""

from __future__ import annotations

import functools
import inspect
import weakref
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from ...core.estimate import Z95, Estimate, FiellerInterval, project
from ...core.estimators import Channel
from ...validation import Boolean, Integer, Optional, check_bool
from .._memory import check_fits


def _check_release(R: Any) -> None:
    # duck-typed on the public accessors, so this package never imports private.py
    if not all(hasattr(R, a) for a in ("adjacency", "channel", "released_degrees", "positions")):
        raise TypeError(f"R must be a dpgraph PrivateGraph, got {type(R).__name__}")


def _undirected(R: Any, what: str) -> None:
    _check_release(R)
    if R.directed:
        raise ValueError(
            f"{what} is defined here for undirected releases only; this release is directed. "
            "Release G.to_undirected() instead (its own epsilon-DP release)."
        )


def _entry_map(channel: Channel) -> tuple[float, float]:
    """(z0, z1): the channel's debiased value of one released 0 and one released 1."""
    z = channel.debias(np.array([0.0, 1.0]))
    return float(z[0]), float(z[1])


class ReleaseCache:
    """Per-release cache of derived arrays (released degrees, triangle statistics, ...).

    Keyed weakly by the release, so it lives exactly as long as the release
    and never writes into the release object.  A release is immutable, so
    entries never go stale.
    """

    def __init__(self) -> None:
        self._store: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def of(self, R: Any) -> dict:
        """The cache dictionary of release ``R`` (created on first use)."""
        c = self._store.get(R)
        if c is None:
            c = {}
            self._store[R] = c
        return c


_CACHE = ReleaseCache()


def _cache(R: Any) -> dict:
    return _CACHE.of(R)


def _released_pairs(R: Any) -> tuple[np.ndarray, np.ndarray]:
    """Positions (rows < cols) of every released edge of an undirected release (cached)."""
    c = _cache(R)
    if "pairs" not in c:
        r, k = R.released_edges()
        r, k = np.asarray(r, dtype=np.int64), np.asarray(k, dtype=np.int64)
        c["pairs"] = (np.minimum(r, k), np.maximum(r, k))
    return c["pairs"]


def _has_node(R: Any, v: Any) -> bool:
    """Whether ``v`` is a single node of the release (networkx's ``v in G``)."""
    c = _cache(R)
    if "node_set" not in c:
        c["node_set"] = frozenset(R.nodes)
    try:
        return v in c["node_set"]
    except TypeError:  # unhashable: a collection
        return False


def _observed_degrees(R: Any) -> np.ndarray:
    c = _cache(R)
    if "deg" not in c:
        c["deg"] = np.asarray(R.released_degrees(), dtype=np.int64)
    return c["deg"]


def _dense_release(R: Any) -> np.ndarray:
    """Symmetric released adjacency as float32 (exact 0/1), refusing what cannot fit."""
    n = R.number_of_nodes()
    check_fits(3 * n * n * 4, f"the dense released adjacency of {n} nodes (float32, n^2 entries)")
    Y = np.empty((n, n), dtype=np.float32)
    for i0, bits in R.adjacency.row_blocks():
        Y[i0 : i0 + bits.shape[0]] = bits
    # the store may hold each unordered pair once (upper triangle): symmetrize
    np.maximum(Y, Y.T, out=Y)
    return Y


def _block_rows(n: int) -> int:
    return max(1, min(n, (1 << 21) // max(n, 1)))


# Declared constraints shared by the analytics (see dpgraph.validation.validate_params).
PROPER = Boolean()
PROGRESS = Optional(Boolean())
SEED = Optional(Integer(minimum=0))


def check_proper(proper: Any) -> bool:
    """Validate the ``proper`` flag of an analytic."""
    return check_bool(proper, "proper")


def finish(est: Estimate, proper: Any, low: Any = None, high: Any = None,
           step: Any = None) -> Estimate:
    """An analytic's result from an (unbiased or plug-in) estimate with a normal error bar.

    The feasible range is [low, high] (the estimate's own by default).
    ``proper=True``: :func:`~dpgraph.core.project` (value clipped to the
    range and rounded to ``step``, interval centred on the raw estimate and
    clipped to the range, so it contains the value).  ``proper=False``: the
    raw estimate.
    """
    proper = check_proper(proper)
    low = est.feasible_range[0] if low is None else low
    high = est.feasible_range[1] if high is None else high
    est = replace(est, feasible_range=(low, high))
    return project(est, step=step) if proper else est


def finish_ratio(num: float, den: float, var_num: float, var_den: float, cov: float,
                 proper: Any, low: float, high: float) -> Estimate:
    """An analytic's result for a ratio num / den of jointly normal estimates (Fieller).

    ``raw`` is num / den (NaN when den <= 0).  ``proper=True``: value is the
    raw ratio clipped to [low, high] when den > 0, else the midpoint of the
    interval; the interval is Fieller's at the requested level (see
    :class:`~dpgraph.core.FiellerInterval`).  ``std`` is the half-width of
    the 95% interval over 1.96 (an equivalent standard error, not exact).
    Unresolved, whatever the interval, when den is not significantly positive.
    """
    proper = check_proper(proper)
    var_num, var_den = max(float(var_num), 0.0), max(float(var_den), 0.0)
    rule = FiellerInterval(float(num), float(den), var_num, var_den, float(cov))
    lo, hi = rule(Z95, low, high)
    raw = num / den if den > 0 else float("nan")
    std = (hi - lo) / (2 * Z95)
    weak = None if den > Z95 * np.sqrt(var_den) else (
        "the denominator of the ratio is not significantly positive")
    if proper:
        value = float(np.clip(raw, low, high)) if den > 0 else 0.5 * (lo + hi)
    else:
        value = raw
    return Estimate(value, std, exact_std=False, feasible_range=(low, high), proper=proper,
                    raw=raw, interval=rule, unresolved=weak)


def progress_range(start: int, stop: int, step: int, progress: Any, n: int, what: str):
    """``range(start, stop, step)``, wrapped in a tqdm bar when ``progress`` asks for one.

    ``progress=None`` shows the bar for releases of 5,000 nodes or more when
    the error stream is a terminal; tqdm missing means no bar.
    """
    import sys

    if progress is not None and not isinstance(progress, (bool, np.bool_)):
        raise TypeError(f"progress must be True, False or None, got {type(progress).__name__}")
    show = (n >= 5000 and sys.stderr.isatty()) if progress is None else bool(progress)
    steps = range(start, stop, step)
    if not show:
        return steps
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - optional
        return steps
    return tqdm(steps, desc=what, unit="block", leave=False)


def delegate(func: Callable) -> Callable:
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
    docstring and signature, so nothing else lists it.
    """
    if func.__name__ in ANALYTICS:
        raise ValueError(f"an analytic named {func.__name__!r} is already registered")
    ANALYTICS[func.__name__] = func
    return func


def bind_analytics(cls: type) -> type:
    """Class decorator: a method for every registered analytic (see :func:`analytic`)."""
    for name, func in ANALYTICS.items():
        if name in cls.__dict__:
            raise TypeError(f"{cls.__name__}.{name} is defined twice (a method and an analytic)")
        setattr(cls, name, delegate(func))
    return cls
