"""``Estimate``: every answer dpgraph gives, with its error bar and whether it is resolved.

One type for every answer: a cut, a count, a ratio, a modularity, a
statistical query.  It carries

* ``value``: the answer.  Proper by default (inside ``feasible_range``,
  rounded to the achievable answers of a count); ``raw`` is the estimate
  before that projection (for counts, the unbiased estimate);
* ``std``: the standard deviation of ``raw`` under the mechanism (exact when
  ``exact_std``);
* ``ci(level)``: a confidence interval that always contains ``value``;
* ``resolved`` and ``reason``: whether the release answers the question in a
  sense an analyst would use (:data:`RESOLVED_FRACTION`).

It behaves like a number (``float``, ``int``, ``round``, formatting,
arithmetic and ordering on ``value``) and a batch converts to a float array
(``numpy.asarray``).
"""

from __future__ import annotations

import math
from dataclasses import KW_ONLY, dataclass, field, replace
from typing import Any

import numpy as np
from scipy.special import ndtri

from ..validation import check_level
from .intervals import (
    Z95,
    BoundInterval,
    ConfidenceInterval,
    FiellerInterval,
    fieller_interval,
    keep_width,
    number_text,
    span_text,
)

__all__ = [
    "RESOLVED_FRACTION",
    "Z95",
    "BoundInterval",
    "ConfidenceInterval",
    "Estimate",
    "FiellerInterval",
    "apply_proper",
    "fieller_interval",
    "project",
]

#: An estimate is *resolved* when its 95% interval excludes the trivial value
#: (0 unless stated) and its half-width is at most this fraction of the
#: estimate's magnitude: the answer is then known to within +-50% and known
#: not to be trivial.
RESOLVED_FRACTION = 0.5


@dataclass(frozen=True, eq=False)
class Estimate:
    """An answer from a release: its value, error bar, interval and whether it is resolved.

    Scalar, or a batch of answers (``value`` an array; index it, iterate it,
    or convert it with ``numpy.asarray``).

    Parameters
    ----------
    value : float or numpy.ndarray
        The answer (see ``proper``).
    std : float or numpy.ndarray
        Standard deviation of ``raw`` under the mechanism.
    feasible_range : (lower, upper), default (-inf, inf)
        The range the true answer is known to lie in (for a cut, 0 to
        |S||T|): *not* a confidence interval, see :meth:`ci`.
    exact_std : bool, default True
        Whether ``std`` is exact.  When False it is a worst-case bound
        (K-ary rows, asymmetric channels) or an estimated standard error; the
        producer's docstring says which.
    proper : bool, default False
        Whether ``value`` was projected onto ``feasible_range`` (and rounded
        to the achievable answers of a count); :func:`project` makes one.
    raw : float or numpy.ndarray, optional
        The estimate before projection (for counts, the unbiased one);
        default ``value``.  The normal interval is centred on it.
    interval : FiellerInterval or BoundInterval, optional
        A rule for :meth:`ci` other than the normal interval ``raw +- z std``.
    trivial : float or None, default 0.0
        The value that would mean "nothing there" (no edges, no structure);
        ``resolved`` needs the 95% interval to exclude it.  None: no such value.
    unresolved : str, optional
        Why the producer knows the release cannot resolve this statistic
        (e.g. a ratio's denominator is not significantly positive); forces
        ``resolved`` False with this ``reason``: one line for people,
        saying what would resolve it (a larger epsilon, larger groups).
    detail : str, optional
        How the producer decided (a planner's costs and predictions), for
        whoever wants it; never part of ``reason`` or ``str``.

    Attributes
    ----------
    resolved : bool or numpy.ndarray of bool
        True when the 95% interval excludes the trivial value and its
        half-width is at most ``RESOLVED_FRACTION`` (one half) of ``|value|``.
        An unresolved value is still returned (it is post-processing, and
        inside the feasible range), but it prints as unresolved, never as a
        bare number.
    reason : str or None (tuple for a batch)
        Why the estimate is not resolved; None when it is.

    Notes
    -----
    Arithmetic (``+ - * / // % divmod **``, either side) and ordering act on
    ``value`` and return plain floats (arrays for a batch): the result is a
    number, no longer an estimate with an error bar.  An Estimate is not
    hashable: it compares equal to the number it holds (``est == 917.0``), so
    a hash would have to be that number's, and two estimates with one value
    but different error bars would then collide as dictionary keys.  Use
    ``float(est)`` as a key.

    Examples
    --------
    >>> e = Estimate(917.0, 120.0, feasible_range=(0, 10_000))
    >>> print(e)
    917 ± 120 (95% CI [682, 1,152])
    >>> f"{e:.1f}", round(e), int(e), e + 1, e > 900
    ('917.0', 917, 917, 918.0, True)
    >>> print(project(Estimate(40.0, 60.0, feasible_range=(0, 168)), step=1))
    -- (unresolved: 95% interval [0, 158] contains 0)
    """

    value: Any
    std: Any
    _: KW_ONLY
    feasible_range: tuple[Any, Any] = (-np.inf, np.inf)
    exact_std: bool = True
    proper: bool = False
    raw: Any = None
    interval: Any = field(default=None, repr=False)
    trivial: float | None = 0.0
    unresolved: str | None = None
    detail: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        lower, upper = self.feasible_range
        object.__setattr__(self, "feasible_range", (lower, upper))
        object.__setattr__(self, "exact_std", bool(self.exact_std))
        object.__setattr__(self, "proper", bool(self.proper))
        if self.raw is None:
            object.__setattr__(self, "raw", self.value)
        if self.interval is not None and np.ndim(self.value) > 0:
            raise ValueError("an interval rule is for a single estimate, not a batch")

    # ---- the error bar --------------------------------------------------------
    @property
    def variance(self) -> Any:
        """std squared."""
        return np.square(self.std)

    @property
    def is_batch(self) -> bool:
        """Whether this holds several answers (``value`` is an array)."""
        return np.ndim(self.value) > 0

    def ci(self, level: float = 0.95) -> tuple[Any, Any]:
        """Two-sided confidence interval at ``level``; it always contains ``value``.

        The normal interval ``raw +- z std`` (accurate for the sums of many
        independent pairs this library deals with), or the rule in
        ``interval`` (Fieller's for a ratio, the bound interval).  For an
        unbiased estimate (``proper=False``) the normal interval is not
        clipped: an unbiased estimate of a small count can be negative and
        the interval says how far (the same holds for a finite interval from
        a rule, such as the exact normal-Laplace one of a fused degree).  For a proper estimate it is clipped to
        the feasible range, each end on its own, but never narrower than the
        data allow: where clipping leaves less than the half-width of the
        unclipped interval, it reaches that far from the end of the range it
        was clipped to (``[0, max(upper, half-width)]`` for an estimate
        below 0), so an interval collapses to a point only when the std is 0.
        It is widened to the rounded value if needed; where ``raw`` is not
        finite it is the whole feasible range.

        Examples
        --------
        >>> Estimate(-3.0, 1.0, feasible_range=(0, 10)).ci(0.95)[0] < -3.0
        True
        >>> [round(x, 2) for x in project(Estimate(-3.0, 1.0), 0, 10, step=1).ci(0.95)]
        [0.0, 1.96]
        """
        z = float(ndtri(0.5 + check_level(level) / 2))
        lower, upper = self.feasible_range
        v = np.asarray(self.value, dtype=float)
        exact = False  # an unbiased estimate's own interval, from its rule, left unclipped
        if self.interval is not None:
            rlo, rhi = self.interval(z, -np.inf, np.inf)
            half = np.asarray((rhi - rlo) / 2, dtype=float)
            exact = not self.proper and bool(np.all(np.isfinite(rlo) & np.isfinite(rhi)))
            if exact:
                lo, hi = np.asarray(rlo, dtype=float), np.asarray(rhi, dtype=float)
            else:
                lo, hi = (np.asarray(x, dtype=float)
                          for x in self.interval(z, float(lower), float(upper)))
        else:
            c = np.asarray(self.raw, dtype=float)
            half = z * np.asarray(self.std, dtype=float)
            with np.errstate(invalid="ignore"):
                lo, hi = c - half, c + half
            if self.proper:
                bad = ~(np.isfinite(lo) & np.isfinite(hi))
                lo = np.where(bad, lower, np.clip(lo, lower, upper))
                hi = np.where(bad, upper, np.clip(hi, lower, upper))
        if self.proper or (self.interval is not None and not exact):
            lo, hi = keep_width(lo, hi, half, lower, upper)
            finite = np.isfinite(v)
            lo = np.where(finite, np.fmin(lo, v), lo)
            hi = np.where(finite, np.fmax(hi, v), hi)
        if not self.is_batch:
            return ConfidenceInterval(lo, hi)
        return lo, hi

    # ---- resolution -----------------------------------------------------------
    def _resolution(self) -> tuple[np.ndarray, list[str | None]]:
        lo, hi = (np.atleast_1d(np.asarray(x, dtype=float)) for x in self.ci(0.95))
        v = np.atleast_1d(np.asarray(self.value, dtype=float))
        reasons: list[str | None] = []
        for k in range(v.size):
            reasons.append(self._reason(float(v[k]), float(lo[k]), float(hi[k])))
        return np.array([r is None for r in reasons]), reasons

    def _reason(self, v: float, lo: float, hi: float) -> str | None:
        if self.unresolved is not None:
            return self.unresolved
        band = "95% interval [{}, {}]".format(*span_text(lo, hi))
        if not (math.isfinite(v) and math.isfinite(lo) and math.isfinite(hi)):
            return f"no finite error bar ({band})"
        if self.trivial is not None and lo <= self.trivial <= hi:
            return f"{band} contains {number_text(self.trivial)}"
        if (hi - lo) / 2 > RESOLVED_FRACTION * abs(v):
            return f"{band} is wider than the estimate (half-width over half the value)"
        return None

    @property
    def resolved(self) -> Any:
        """Whether the release resolves this answer (see the class docstring)."""
        flags, _ = self._resolution()
        return bool(flags[0]) if not self.is_batch else flags

    @property
    def reason(self) -> Any:
        """Why the answer is not resolved (None when it is); a tuple for a batch."""
        _, reasons = self._resolution()
        return reasons[0] if not self.is_batch else tuple(reasons)

    # ---- a table ---------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The answer as columns: ``value, std, ci_low, ci_high, resolved, reason``.

        Scalars for a single estimate, lists for a batch (one entry per
        answer), so ``pandas.DataFrame(batch.to_dict())`` is its table;
        ``ci_low``/``ci_high`` are the 95% interval and ``std`` is NaN where
        there is no error bar.

        Examples
        --------
        >>> Estimate(917.0, 120.0, feasible_range=(0, 10_000)).to_dict()["resolved"]
        True
        """
        from .tables import estimate_columns

        return estimate_columns(self)

    def to_frame(self) -> Any:
        """The answer as a :class:`pandas.DataFrame`, one row per answer (columns of :meth:`to_dict`).

        Needs pandas (``pip install pandas``).
        """
        from .tables import estimates_frame

        return estimates_frame(self.to_dict(), one_row=not self.is_batch)

    # ---- display --------------------------------------------------------------
    def __str__(self) -> str:
        if self.is_batch:
            return repr(self)
        lo, hi = self.ci(0.95)
        reason = self.reason
        if reason is not None:
            return f"-- (unresolved: {reason})"
        return "{} ± {} (95% CI [{}, {}])".format(number_text(self.value), number_text(self.std), *span_text(lo, hi))

    def __repr__(self) -> str:
        if self.is_batch:
            flags = self.resolved
            return f"Estimate(batch of {len(self)}, {int(np.sum(flags))} resolved)"
        extra = "" if self.exact_std else ", std not exact"
        return f"Estimate({self}{extra})"

    def __format__(self, spec: str) -> str:
        """``format(est, spec)`` formats ``value`` (``f"{est:.1f}"``); an empty spec is ``str``."""
        if not spec:
            return str(self)
        return format(self._scalar("format()"), spec)

    # ---- a number -------------------------------------------------------------
    def _scalar(self, what: str) -> float:
        if self.is_batch:
            raise TypeError(f"{what} needs a single estimate; index the batch first, e.g. est[0]")
        return float(self.value)

    def __float__(self) -> float:
        return self._scalar("float()")

    def __int__(self) -> int:
        return int(self._scalar("int()"))

    def __round__(self, ndigits: int | None = None) -> Any:
        return round(self._scalar("round()"), ndigits)

    def __index__(self) -> int:
        v = self._scalar("an index")
        if not v.is_integer():
            raise TypeError("only an estimate with an integer value (a proper count) is an "
                            "index; use int(est) or round(est)")
        return int(v)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.asarray(self.value, dtype=float if dtype is None else dtype)

    def __bool__(self) -> bool:
        return self._scalar("bool()") != 0

    def _operand(self) -> Any:
        return np.asarray(self.value, dtype=float) if self.is_batch else float(self.value)

    def __neg__(self) -> Any:
        return -self._operand()

    def __pos__(self) -> Any:
        return +self._operand()

    def __abs__(self) -> Any:
        return abs(self._operand())

    def __add__(self, other: Any) -> Any:
        return self._operand() + _plain(other)

    def __radd__(self, other: Any) -> Any:
        return _plain(other) + self._operand()

    def __sub__(self, other: Any) -> Any:
        return self._operand() - _plain(other)

    def __rsub__(self, other: Any) -> Any:
        return _plain(other) - self._operand()

    def __mul__(self, other: Any) -> Any:
        return self._operand() * _plain(other)

    def __rmul__(self, other: Any) -> Any:
        return _plain(other) * self._operand()

    def __truediv__(self, other: Any) -> Any:
        return self._operand() / _plain(other)

    def __rtruediv__(self, other: Any) -> Any:
        return _plain(other) / self._operand()

    def __floordiv__(self, other: Any) -> Any:
        return self._operand() // _plain(other)

    def __rfloordiv__(self, other: Any) -> Any:
        return _plain(other) // self._operand()

    def __mod__(self, other: Any) -> Any:
        return self._operand() % _plain(other)

    def __rmod__(self, other: Any) -> Any:
        return _plain(other) % self._operand()

    def __divmod__(self, other: Any) -> Any:
        return divmod(self._operand(), _plain(other))

    def __rdivmod__(self, other: Any) -> Any:
        return divmod(_plain(other), self._operand())

    def __pow__(self, other: Any) -> Any:
        return self._operand() ** _plain(other)

    def __rpow__(self, other: Any) -> Any:
        return _plain(other) ** self._operand()

    def __lt__(self, other: Any) -> Any:
        return self._operand() < _plain(other)

    def __le__(self, other: Any) -> Any:
        return self._operand() <= _plain(other)

    def __gt__(self, other: Any) -> Any:
        return self._operand() > _plain(other)

    def __ge__(self, other: Any) -> Any:
        return self._operand() >= _plain(other)

    def __eq__(self, other: Any) -> Any:
        if isinstance(other, (Estimate, int, float, np.number, np.ndarray)):
            return self._operand() == _plain(other)
        return NotImplemented

    def __ne__(self, other: Any) -> Any:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else np.logical_not(eq) if self.is_batch else not eq

    __hash__ = None  # type: ignore[assignment]  # equal to numbers, so not hashable

    # ---- a batch --------------------------------------------------------------
    def __len__(self) -> int:
        if not self.is_batch:
            raise TypeError("a single Estimate has no len()")
        return int(np.shape(self.value)[0])

    def __getitem__(self, i: Any) -> Estimate:
        if not self.is_batch:
            raise TypeError("a single Estimate cannot be indexed")

        def pick(x: Any) -> Any:
            x = np.asarray(x)[i] if np.ndim(x) > 0 else x
            return float(x) if np.ndim(x) == 0 and x is not None else x

        lower, upper = self.feasible_range
        return replace(self, value=pick(self.value), std=pick(self.std), raw=pick(self.raw),
                       feasible_range=(pick(lower), pick(upper)))

    def __iter__(self):
        if not self.is_batch:
            raise TypeError("a single Estimate is not iterable")
        for i in range(len(self)):
            yield self[i]


def _plain(x: Any) -> Any:
    if isinstance(x, Estimate):
        return x._operand()
    return x


def project(est: Estimate, low: Any = None, high: Any = None, step: Any = None,
            offset: Any = 0.0) -> Estimate:
    """The proper estimate: ``est`` clipped to [low, high] and rounded to a grid.

    Clipping onto an interval that contains the truth never moves an estimate
    away from it; rounding onto a grid containing every achievable answer
    (``offset + k * step``) adds at most step / 2.  ``raw`` keeps the
    estimate before projection and the interval stays centred on it, clipped
    to [low, high].  A non-finite raw value becomes the middle of the range
    (whose interval is then the whole range, unresolved).  [low, high]
    default to ``est.feasible_range``.

    Examples
    --------
    >>> p = project(Estimate(-3.2, 2.0), 0, 10, step=1)
    >>> p.value, p.raw
    (0.0, -3.2)
    """
    lower, upper = est.feasible_range
    low = lower if low is None else low
    high = upper if high is None else high
    raw = np.asarray(est.raw, dtype=float)
    mid = 0.5 * (np.asarray(low, dtype=float) + np.asarray(high, dtype=float))
    v = np.where(np.isfinite(raw), raw, mid)
    v = np.clip(v, low, high)
    if step is not None:
        step_arr = np.asarray(step, dtype=float)
        v = np.clip(offset + np.round((v - offset) / step_arr) * step_arr, low, high)
    v = float(v) if np.ndim(v) == 0 else v
    return replace(est, value=v, feasible_range=(low, high), proper=True)


def apply_proper(est: Estimate, proper: bool, *, step: Any = None) -> Estimate:
    """The one place ``proper`` is applied: :func:`project` ``est`` when ``proper``.

    ``proper=True`` is the library's default for every answer: a value inside
    its feasible range, rounded to achievable answers (``step``), with
    ``raw`` keeping the unprojected estimate (the unbiased one for counts,
    what averages over many queries should use).  ``proper=False`` returns
    ``est`` itself, whose value is ``raw``.

    Examples
    --------
    >>> e = Estimate(-2.4, 3.0, feasible_range=(0, 50))
    >>> apply_proper(e, True, step=1).value, apply_proper(e, False).value
    (0.0, -2.4)
    """
    return project(est, step=step) if proper else est
