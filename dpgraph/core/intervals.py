"""ConfidenceInterval rules and how an interval is shown: Fieller's, the bound interval, the width kept.

The rules an :class:`~dpgraph.core.Estimate` may carry in place of the normal
interval (:class:`FiellerInterval` for a ratio, :class:`BoundInterval` for a
statistic known to lie between two estimated bounds), the widening that
keeps a clipped interval from collapsing to a point, and :class:`ConfidenceInterval`,
the pair ``ci()`` returns, which prints with the digits that tell its ends
apart.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Z95", "BoundInterval", "ConfidenceInterval", "FiellerInterval", "fieller_interval",
           "keep_width", "number_text", "span_text"]

#: Two-sided 95% normal quantile.
Z95 = 1.959963984540054


def fieller_interval(num: float, den: float, var_num: float, var_den: float, cov: float,
                     z: float = Z95, low: float = -np.inf,
                     high: float = np.inf) -> tuple[float, float]:
    """Fieller's interval for num / den, intersected with [low, high].

    {theta : (num - theta den)^2 <= z^2 (var_num - 2 theta cov + theta^2 var_den)},
    a quadratic inequality a theta^2 + b theta + c <= 0.  Its solution is an
    interval, the complement of one, the whole line or (only when it misses
    [low, high]) empty; the convex hull of its part in [low, high] is
    returned, or the end of [low, high] nearest to num / den when that part is
    empty.

    Examples
    --------
    >>> [round(x, 4) for x in fieller_interval(5.0, 10.0, 1.0, 1.0, 0.0, low=0, high=1)]
    [0.2956, 0.7443]
    """
    a = den * den - z * z * var_den
    b = -2.0 * (num * den - z * z * cov)
    c = num * num - z * z * var_num
    disc = b * b - 4 * a * c
    if a > 0 and disc >= 0:  # a bounded interval
        r = math.sqrt(disc)
        pieces = [((-b - r) / (2 * a), (-b + r) / (2 * a))]
    elif a < 0 and disc > 0:  # two rays outside the roots
        r1, r2 = sorted(((-b - math.sqrt(disc)) / (2 * a), (-b + math.sqrt(disc)) / (2 * a)))
        pieces = [(-np.inf, r1), (r2, np.inf)]
    elif a <= 0:  # the whole line
        pieces = [(-np.inf, np.inf)]
    else:  # empty
        pieces = []
    inside = [(max(lo, low), min(hi, high)) for lo, hi in pieces if max(lo, low) <= min(hi, high)]
    if not inside:
        t = num / den if den != 0 else (high if num * den >= 0 else low)
        t = float(np.clip(t, low, high))
        return t, t
    return float(min(p[0] for p in inside)), float(max(p[1] for p in inside))


@dataclass(frozen=True)
class FiellerInterval:
    """The interval rule of a ratio num / den of jointly normal estimates (Fieller's).

    Examples
    --------
    >>> [round(x, 4) for x in FiellerInterval(5.0, 10.0, 1.0, 1.0, 0.0)(Z95, 0.0, 1.0)]
    [0.2956, 0.7443]
    """

    num: float
    den: float
    var_num: float
    var_den: float
    cov: float

    def __call__(self, z: float, low: float, high: float) -> tuple[float, float]:
        return fieller_interval(self.num, self.den, self.var_num, self.var_den, self.cov,
                                z=z, low=low, high=high)


@dataclass(frozen=True)
class BoundInterval:
    """The interval rule of a statistic known only to lie between two estimated bounds.

    [lower - z sd_lower, upper + z sd_upper] within the feasible range
    (conservative: it covers whenever both bounds' intervals do).

    Examples
    --------
    >>> BoundInterval(0.2, 0.05, 0.6, 0.05)(2.0, 0.0, 1.0)
    (0.1, 0.7)
    """

    lower: float
    sd_lower: float
    upper: float
    sd_upper: float

    def __call__(self, z: float, low: float, high: float) -> tuple[float, float]:
        lo = float(np.clip(self.lower - z * self.sd_lower, low, high))
        hi = float(np.clip(self.upper + z * self.sd_upper, low, high))
        return round(lo, 12), round(hi, 12)


def number_text(x: float) -> str:
    """A number for people: thousands separated, three significant digits below 100."""
    x = float(x)
    if not math.isfinite(x):
        return str(x)
    if x == 0:
        return "0"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    return f"{x:.3g}"


def keep_width(lo: Any, hi: Any, half: Any, lower: Any, upper: Any) -> tuple[Any, Any]:
    """[lo, hi] (already inside [lower, upper]) widened to at least ``half`` where it is narrower.

    Clipping a confidence interval to the feasible range keeps its coverage,
    but an interval clipped to a point ([0, 0] for a raw interval below 0)
    reads as certainty.  The interval kept is at least min(half, upper -
    lower) wide: it grows away from the end of the range it touches (from
    the middle, within the range, where it touches neither); it only grows,
    so it covers whenever the clipped one does.
    """
    with np.errstate(invalid="ignore"):
        need = np.fmin(np.where(np.isnan(half), np.inf, half),
                       np.asarray(upper, dtype=float) - np.asarray(lower, dtype=float))
        short = (hi - lo) < need
        at_low, at_high = lo <= lower, hi >= upper
        mid = (lo + hi) / 2
        new_lo = np.where(at_low, lower, np.where(at_high, upper - need, mid - need / 2))
        new_hi = np.where(at_low, lower + need, np.where(at_high, upper, mid + need / 2))
        new_lo, new_hi = np.clip(new_lo, lower, upper), np.clip(new_hi, lower, upper)
    return np.where(short, np.fmin(lo, new_lo), lo), np.where(short, np.fmax(hi, new_hi), hi)


def span_text(lo: float, hi: float) -> tuple[str, str]:
    """Both ends of an interval for people (:func:`number_text`), with more digits where they'd read equal.

    An interval of width > 0 never prints as a point: ``[1,000,000, 1,000,000]``
    becomes ``[999,999.9, 1,000,000]``.

    Examples
    --------
    >>> span_text(0.0, 168.0), span_text(999_999.9, 1_000_000.1)
    (('0', '168'), ('999,999.9', '1,000,000'))
    """
    a, b = number_text(lo), number_text(hi)
    if a != b or not lo < hi:
        return a, b
    for digits in range(4, 18):
        a, b = f"{lo:,.{digits}g}", f"{hi:,.{digits}g}"
        if a != b:
            break
    return a, b


class ConfidenceInterval(tuple):
    """A confidence interval ``(low, high)``: a plain tuple of two floats that prints for people.

    ``print(est.ci())`` shows the digits that tell the ends apart
    (``(0.296, 0.744)``); ``repr`` and the numbers themselves are exact.

    Examples
    --------
    >>> iv = ConfidenceInterval(0.29563611024738, 0.74436388975262)
    >>> print(iv), iv == (0.29563611024738, 0.74436388975262), iv.low
    (0.296, 0.744)
    (None, True, 0.29563611024738)
    """

    __slots__ = ()

    def __new__(cls, low: float, high: float) -> ConfidenceInterval:
        return super().__new__(cls, (float(low), float(high)))

    def __getnewargs__(self) -> tuple[float, float]:
        return (self[0], self[1])

    @property
    def low(self) -> float:
        """The lower end."""
        return self[0]

    @property
    def high(self) -> float:
        """The upper end."""
        return self[1]

    def __str__(self) -> str:
        a, b = span_text(self[0], self[1])
        return f"({a}, {b})"
