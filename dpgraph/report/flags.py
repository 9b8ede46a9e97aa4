"""Reading resolvability and detectability off the analytics' results.

Estimates may carry a ``resolved`` flag (False when the release cannot
resolve the statistic at this epsilon) and community results a
detectability flag.  These helpers use such a flag when the object has one
and otherwise decide from the numbers themselves, and say which they did.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "Detectability",
    "Resolution",
    "detectability",
    "distribution_band",
    "feasible_range",
    "resolution",
]

_RESOLVED_ATTRS = ("resolved", "resolvable")
_DETECTED_ATTRS = ("resolvable", "detectable", "detected", "structure_detected", "resolved")


def feasible_range(est: Any) -> tuple[float, float]:
    """The (lower, upper) range an estimate's statistic is known to lie in."""
    rng = getattr(est, "feasible_range", None)
    if rng is None:  # estimates that spell it as two attributes
        rng = (est.low, est.high)
    return float(rng[0]), float(rng[1])


@dataclass(frozen=True)
class Resolution:
    """Whether an estimate resolves its statistic, and why we say so.

    Attributes
    ----------
    resolved : bool or None
        None when the estimate has no error bar at all.
    source : str
        ``"the estimator's flag"`` (the estimate's own) or ``"std vs range"``
        (std compared with the width of the feasible range).
    """

    resolved: bool | None
    source: str


def resolution(est: Any) -> Resolution:
    """Resolvability of an :class:`~dpgraph.Estimate`.

    The estimate's own ``resolved``/``resolvable`` attribute when present;
    otherwise unresolved when its std exceeds the width of its feasible range
    ``high - low`` (the noise alone spans every possible answer).

    Examples
    --------
    >>> from dpgraph.core import Estimate
    >>> resolution(Estimate(0.5, 2.0, feasible_range=(0.0, 1.0))).resolved
    False
    >>> resolution(Estimate(0.5, 0.1, feasible_range=(0.0, 1.0)))
    Resolution(resolved=True, source='std vs range')
    """
    for attr in _RESOLVED_ATTRS:
        flag = getattr(est, attr, None)
        if isinstance(flag, (bool, np.bool_)):
            return Resolution(bool(flag), "the estimator's flag")
    std = float(est.std)
    if not math.isfinite(std):
        return Resolution(None, "no error bar")
    lo, hi = feasible_range(est)
    width = float(hi) - float(lo)
    return Resolution(bool(std <= width), "std vs range")


@dataclass(frozen=True)
class Detectability:
    """Whether a community result shows structure the release can resolve.

    Attributes
    ----------
    detected : bool
        True when the result shows community structure the release resolves.
    structural : int
        Eigenvalues of the debiased adjacency above the noise edge beyond the
        first (which carries the overall density).
    source : str
        ``"the method's detectability test"`` (the result's own flag) or
        ``"spectrum and modularity"``.
    """

    detected: bool
    structural: int
    source: str


def detectability(comm: Any) -> Detectability:
    """Detectability of a community result.

    Its own flag when present; otherwise community structure counts as
    detected when at least one eigenvalue beyond the leading one exceeds
    the noise edge and the debiased modularity's 95% interval excludes 0.
    """
    ev = np.sort(np.asarray(getattr(comm, "eigenvalues", []), float))[::-1]
    edge = float(getattr(comm, "noise_edge", math.inf))
    structural = max(int(np.sum(ev > edge)) - 1, 0) if math.isfinite(edge) else 0
    for attr in _DETECTED_ATTRS:
        flag = getattr(comm, attr, None)
        if isinstance(flag, (bool, np.bool_)):
            return Detectability(bool(flag), structural, "the method's detectability test")
    lo, _ = comm.modularity.ci(0.95)
    return Detectability(bool(structural >= 1 and lo > 0), structural, "spectrum and modularity")


def distribution_band(res: Any) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray] | None]:
    """(histogram, pointwise (lower, upper) band or None) from a degree distribution result.

    Accepts a plain array (no band) or an array or object carrying
    ``lower``/``upper`` (or ``low``/``high``) arrays of the same length.

    Examples
    --------
    >>> h, band = distribution_band(np.array([0.5, 0.5]))
    >>> band is None
    True
    """
    if isinstance(res, np.ndarray):
        h = np.asarray(res, dtype=float)
    else:
        h = next((np.asarray(getattr(res, a), float) for a in ("histogram", "h", "value", "pmf")
                  if getattr(res, a, None) is not None), None)
        if h is None:
            h = np.asarray(res, dtype=float)
    for lo_name, hi_name in (("lower", "upper"), ("low", "high")):
        lo, hi = getattr(res, lo_name, None), getattr(res, hi_name, None)
        if lo is not None and hi is not None and np.shape(lo) == h.shape == np.shape(hi):
            return h, (np.asarray(lo, float), np.asarray(hi, float))
    return h, None
