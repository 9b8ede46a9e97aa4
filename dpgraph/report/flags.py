"""Reading detectability and bands off the analytics' results.

Estimates say themselves whether they are resolved (``Estimate.resolved``
and ``reason``); community results carry a detectability flag, which these
helpers use when present and otherwise decide from the numbers, saying which
they did.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Detectability", "detectability", "distribution_band"]

_DETECTED_ATTRS = ("resolvable", "detectable", "detected", "structure_detected", "resolved")


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
