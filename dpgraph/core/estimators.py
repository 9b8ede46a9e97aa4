"""The companion estimators of mechanism E: one formula, one place.

Every row channel used in dpgraph has the form

    P(Y_i = v | x_i) = d [v == x_i] + r_v,

K-ary randomized response (d = truth - flip, r_v = flip for all v) and the
subsampled binary release (P(1|edge) = alpha, P(1|non-edge) = beta gives
d = alpha - beta, r = (1 - alpha, beta)) included.  Then for any row function
phi,  E[phi(Y_i)] = d phi(x_i) + sum_v r_v phi(v),  so

    sum_i phi_i(x_i)  is estimated without bias by  (sum_i phi_i(Y_i) - sum_i r.phi_i) / d,

which, for randomized response and the paper's normalisation by sum_i c_i, is
the estimator q_u of Lemma 2.  The variance is a sum of per-row variances; for
a binary symmetric channel it does not depend on x, otherwise we report its
maximum over x_i (a bound, flagged by ``exact_std=False``).

:func:`unbiased_estimate` is the only place the debiasing formula lives: the
statistical-query layer, the cut queries of the graph layer and the graph
analytics all call it (the latter through :func:`count_estimate`).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from numbers import Real
from typing import Any

import numpy as np
from scipy.special import ndtri

from .._deprecation import warn_renamed
from ..validation import check_level

__all__ = ["Channel", "Estimate", "StatisticEstimate", "count_estimate", "fieller_interval", "project",
           "unbiased_estimate"]


@dataclass(frozen=True)
class Channel:
    """A row channel P(Y = v | x) = d [v == x] + r[v].

    Parameters
    ----------
    d : float
        The weight on the true value; must be > 0 for the truth to be
        recoverable.
    r : numpy.ndarray
        Length-K vector of the value-independent part.

    Examples
    --------
    >>> ch = Channel.binary(0.7, 0.2)
    >>> round(ch.d, 12), ch.r.tolist()
    (0.5, [0.30000000000000004, 0.2])
    """

    d: float
    r: np.ndarray

    def __post_init__(self) -> None:
        r = np.asarray(self.r, dtype=float)
        object.__setattr__(self, "r", r)
        if not (self.d > 0 and np.isfinite(self.d)):
            raise ValueError("channel carries no information about the truth (d <= 0)")
        if r.ndim != 1 or r.size < 2 or np.any(r < 0):
            raise ValueError("r must be a non-negative vector of length K >= 2")

    @property
    def K(self) -> int:
        """Size of the universe of a row."""
        return int(self.r.size)

    def _binary(self, what: str) -> None:
        if self.K != 2:
            raise ValueError(f"{what} is defined for a binary channel (K = 2); this one has K={self.K}")

    @property
    def alpha(self) -> float:
        """P(released 1 | true 1) of a binary channel: d + beta.

        Examples
        --------
        >>> ch = Channel.binary(0.75, 0.25)
        >>> ch.alpha, ch.beta
        (0.75, 0.25)
        """
        self._binary("alpha")
        return self.d + float(self.r[1])

    @property
    def beta(self) -> float:
        """P(released 1 | true 0) of a binary channel (example at :attr:`alpha`)."""
        self._binary("beta")
        return float(self.r[1])

    def debias(self, count: Any, n_rows: Any = 1) -> Any:
        """Unbiased estimate of how many of ``n_rows`` binary rows are 1.

        ``(count - beta n_rows) / d``: the value of :func:`count_estimate`
        (bit for bit) without its error bar, for inner loops.  Broadcasts.

        Examples
        --------
        >>> ch = Channel.binary(0.75, 0.25)
        >>> float(ch.debias(30, 100)), ch.debias(np.array([0.0, 1.0])).tolist()
        (10.0, [-0.5, 1.5])
        """
        self._binary("debias")
        return (np.asarray(count, dtype=float) - np.asarray(n_rows, dtype=float) * self.r[1]) / self.d

    def entry_variances(self) -> tuple[float, float]:
        """(v0, v1): variance of the debiased value of one row that is truly 0, truly 1.

        Var(Y | x) / d^2 with Var(Y | x) = beta (1 - beta) for x = 0 and
        alpha (1 - alpha) for x = 1; equal for a symmetric channel.

        Examples
        --------
        >>> [round(v, 4) for v in Channel.binary(0.75, 0.25).entry_variances()]
        [0.75, 0.75]
        """
        alpha, beta = self.alpha, self.beta
        d2 = self.d**2
        return beta * (1 - beta) / d2, alpha * (1 - alpha) / d2

    def row_variance(self, x: Any) -> Any:
        """Variance of the debiased value of rows whose true values are ``x`` (0 or 1).

        Broadcasts over an array of truths; see :meth:`entry_variances`.

        Examples
        --------
        >>> Channel.binary(0.9, 0.2).row_variance(np.array([0, 1])).round(4).tolist()
        [0.3265, 0.1837]
        """
        v0, v1 = self.entry_variances()
        x = np.asarray(x)
        out = np.where(x != 0, v1, v0)
        return float(out) if out.ndim == 0 else out

    @classmethod
    def randomized_response(cls, rr: Any) -> Channel:
        """The channel of certified K-ary randomized response ``rr``.

        ``d`` is computed from the exact fractions, so it is accurate even when
        epsilon is tiny and the truth and flip probabilities are nearly equal.
        """
        d = float(rr.truth_fraction - rr.flip_fraction)
        return cls(d, np.full(rr.K, rr.flip_probability))

    @classmethod
    def binary(cls, alpha: Real, beta: Real) -> Channel:
        """A binary channel with P(1 | x=1) = alpha and P(1 | x=0) = beta."""
        d = float(Fraction(alpha) - Fraction(beta))
        return cls(d, np.array([1.0 - float(alpha), float(beta)]))


@dataclass(frozen=True, init=False)
class Estimate:
    """An estimate with its standard error; scalar or a batch of queries.

    Parameters
    ----------
    value, std, exact_std, center, feasible_range, proper
        As the attributes below.
    low, high : float or numpy.ndarray, optional
        Deprecated spelling of ``feasible_range=(low, high)``.

    Attributes
    ----------
    value : float or numpy.ndarray
        The answer.
    std : float or numpy.ndarray
        Its standard deviation under the mechanism (exact when ``exact_std``,
        otherwise an upper bound or a stated approximation).
    feasible_range : (lower, upper)
        The range the true answer is known to lie in (for a cut, 0 to
        |S||T|): *not* a confidence interval, see :meth:`ci`.
    exact_std : bool
        Whether ``std`` is the exact standard deviation.  When False the
        producer's docstring says what it is instead (a worst-case bound for
        K-ary rows and asymmetric channels, an estimated or delta-method
        standard error for ratio statistics).
    center : float or numpy.ndarray, optional
        Where the confidence interval is centred when it differs from
        ``value`` (a proper estimate is centred on the unbiased one).
    proper : bool
        Whether ``value`` was clipped to ``feasible_range`` (and rounded to
        the achievable answers); the confidence interval is then clipped too.

    Examples
    --------
    >>> e = Estimate(10.0, 2.0)
    >>> float(e)
    10.0
    >>> [round(x, 3) for x in e.ci(0.95)]
    [6.08, 13.92]
    >>> e.feasible_range
    (-inf, inf)
    """

    value: Any
    std: Any
    feasible_range: tuple[Any, Any]
    exact_std: bool
    center: Any
    proper: bool

    def __init__(self, value: Any, std: Any, low: Any = None, high: Any = None,
                 exact_std: bool = True, center: Any = None, *,
                 feasible_range: tuple[Any, Any] | None = None, proper: bool = False) -> None:
        if low is not None or high is not None:
            if feasible_range is not None:
                raise TypeError("pass feasible_range only (low and high are its old spelling)")
            warn_renamed("Estimate(low=, high=)", "Estimate(feasible_range=(low, high))")
            feasible_range = (-np.inf if low is None else low, np.inf if high is None else high)
        if feasible_range is None:
            feasible_range = (-np.inf, np.inf)
        lower, upper = feasible_range
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "std", std)
        object.__setattr__(self, "feasible_range", (lower, upper))
        object.__setattr__(self, "exact_std", bool(exact_std))
        object.__setattr__(self, "center", center)
        object.__setattr__(self, "proper", bool(proper))

    @property
    def low(self) -> Any:
        """Deprecated: ``feasible_range[0]`` (the known range, not the interval)."""
        warn_renamed("Estimate.low", "Estimate.feasible_range[0] (or ci() for the interval)")
        return self.feasible_range[0]

    @property
    def high(self) -> Any:
        """Deprecated: ``feasible_range[1]`` (the known range, not the interval)."""
        warn_renamed("Estimate.high", "Estimate.feasible_range[1] (or ci() for the interval)")
        return self.feasible_range[1]

    @property
    def variance(self) -> Any:
        """std squared."""
        return np.square(self.std)

    @property
    def is_batch(self) -> bool:
        return np.ndim(self.value) > 0

    def ci(self, level: float = 0.95) -> tuple[Any, Any]:
        """Two-sided normal confidence interval at ``level``; it always contains ``value``.

        The interval is ``center +- z std`` (``center`` is ``value`` unless
        stated).  For an unbiased estimate it is not clipped: the value may
        lie outside the feasible range (an unbiased estimate of a small count
        can be negative) and the interval around it says how far.  For a
        proper estimate (``proper=True``) value and interval are both clipped
        to the feasible range, and the interval is widened to the rounded
        value if rounding moved it outside.

        The normal approximation is accurate for the sums of many independent
        rows this library deals with (a cut over |S||T| pairs, say).

        Examples
        --------
        >>> Estimate(-3.0, 1.0, feasible_range=(0, 10)).ci(0.95)[0] < -3.0
        True
        >>> project(Estimate(-3.0, 1.0), 0, 10, step=1).ci(0.95)
        (0.0, 0.0)
        """
        level = check_level(level)
        z = float(ndtri(0.5 + level / 2))
        c = np.asarray(self.value if self.center is None else self.center, dtype=float)
        half = z * np.asarray(self.std, dtype=float)
        lo, hi = c - half, c + half
        if self.proper:
            lower, upper = self.feasible_range
            v = np.asarray(self.value, dtype=float)
            lo = np.minimum(np.clip(lo, lower, upper), v)
            hi = np.maximum(np.clip(hi, lower, upper), v)
        if not self.is_batch:
            return float(lo), float(hi)
        return lo, hi

    def __float__(self) -> float:
        if self.is_batch:
            raise TypeError("float() needs a single estimate; index the batch first, e.g. est[0]")
        return float(self.value)

    def __len__(self) -> int:
        if not self.is_batch:
            raise TypeError("a single Estimate has no len()")
        return int(np.shape(self.value)[0])

    def __getitem__(self, i: Any) -> Estimate:
        if not self.is_batch:
            raise TypeError("a single Estimate cannot be indexed")

        def pick(x: Any) -> Any:
            return np.asarray(x)[i] if np.ndim(x) > 0 else x

        def scalar(x: Any) -> Any:
            x = pick(x)
            return float(x) if np.ndim(x) == 0 and x is not None else x

        lower, upper = self.feasible_range
        return Estimate(
            scalar(self.value),
            scalar(self.std),
            exact_std=self.exact_std,
            center=None if self.center is None else scalar(self.center),
            feasible_range=(scalar(lower), scalar(upper)),
            proper=self.proper,
        )

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __repr__(self) -> str:
        if self.is_batch:
            return f"Estimate(batch of {len(self)}, exact_std={self.exact_std})"
        kind = "" if self.exact_std else ", std not exact"
        kind += ", proper" if self.proper else ""
        return f"Estimate(value={float(self.value):.6g}, std={float(self.std):.6g}{kind})"


def unbiased_estimate(
    observed: Any,
    functions: Any,
    group_sizes: Any,
    channel: Channel,
    normalizer: Any = 1.0,
) -> Estimate:
    """Unbiased estimate of sum_i phi_i(x_i) / normalizer from released rows.

    Rows sharing a row function form a group: group g has ``group_sizes[g]``
    rows, all with function ``functions[g]``.

    Parameters
    ----------
    observed : float or array of shape (Q,)
        sum_i phi_i(Y_i) over the released rows (one per query).
    functions : array of shape (h, K) or (Q, h, K)
        The distinct row functions, tabulated on the universe.
    group_sizes : array of shape (h,) or (Q, h)
        Number of rows using each function.
    channel : Channel
        The release channel.
    normalizer : float or array of shape (Q,), default 1
        sum_i c_i for the paper's normalised statistical query; 1 for counts.

    Returns
    -------
    Estimate
        Unbiased value; exact std when the per-row variance does not depend on
        the truth (binary randomized response), its worst case otherwise.

    Examples
    --------
    A count over 100 pairs of which 30 were released as edges, flip
    probability 0.25:

    >>> ch = Channel.binary(0.75, 0.25)
    >>> e = unbiased_estimate(30.0, [[0.0, 1.0]], [100], ch)
    >>> float(e), round(e.std, 4)
    (10.0, 8.6603)
    """
    functions = np.asarray(functions, dtype=float)
    sizes = np.asarray(group_sizes, dtype=float)
    if functions.shape[-1] != channel.K:
        raise ValueError(
            f"functions has {functions.shape[-1]} columns but the channel has K={channel.K}"
        )
    d, r = channel.d, channel.r
    r1 = functions @ r  # sum_v r_v phi_g(v)            (..., h)
    r2 = np.square(functions) @ r  # sum_v r_v phi_g(v)^2    (..., h)
    offset = np.sum(sizes * r1, axis=-1)
    value = (np.asarray(observed, dtype=float) - offset) / d / normalizer
    # Var phi(Y) given x = v:  d phi(v)^2 + r2 - (d phi(v) + r1)^2
    mean = d * functions + r1[..., None]
    var_given_x = d * np.square(functions) + r2[..., None] - np.square(mean)
    var_given_x = np.maximum(var_given_x, 0.0)
    worst = var_given_x.max(axis=-1)
    spread = worst - var_given_x.min(axis=-1)
    exact = bool(np.all(spread <= 1e-12 * np.maximum(worst, 1e-300)))
    variance = np.sum(sizes * worst, axis=-1) / d**2 / np.square(normalizer)
    std = np.sqrt(variance)
    if np.ndim(value) == 0:
        value, std = float(value), float(std)
    return Estimate(value, std, exact_std=exact)


def count_estimate(observed: Any, n_rows: Any, channel: Channel) -> Estimate:
    """Unbiased estimate of how many of ``n_rows`` binary rows are 1.

    The cut query, edge counts, degrees and every other edge count of the
    graph layer are this estimate: phi(v) = v on the rows that the query
    covers (see docs/design.md).

    Parameters
    ----------
    observed : int, float or array
        How many of the rows are 1 in the release.
    n_rows : int, float or array
        How many rows (vertex pairs) the count covers, e.g. |S||T|.
    channel : Channel
        A binary channel.

    Returns
    -------
    Estimate
        value = (observed - beta n) / (alpha - beta), with
        ``feasible_range=(0, n_rows)``.

    Examples
    --------
    >>> e = count_estimate(30, 100, Channel.binary(0.75, 0.25))
    >>> float(e)
    10.0
    """
    if channel.K != 2:
        raise ValueError("count_estimate needs a binary channel (K = 2)")
    n = np.asarray(n_rows, dtype=float)
    est = unbiased_estimate(
        observed, np.array([[0.0, 1.0]]), n[..., None], channel, normalizer=1.0
    )
    low = 0.0 if np.ndim(n) == 0 else np.zeros_like(n)
    high = float(n) if np.ndim(n) == 0 else n
    return Estimate(est.value, est.std, exact_std=est.exact_std, feasible_range=(low, high))


def project(est: Estimate, low: Any, high: Any, step: Any = None, offset: Any = 0.0) -> Estimate:
    """The proper estimate: ``est`` clipped to [low, high], rounded to a grid.

    Clipping onto an interval that contains the truth never moves an estimate
    away from it; rounding onto a grid containing every achievable answer
    (``offset + k * step``) adds at most step / 2.  The confidence interval
    stays centred on the unbiased value and is clipped to [low, high] (and
    widened to the rounded value if needed, so it always contains it).

    Examples
    --------
    >>> p = project(Estimate(-3.2, 2.0), 0, 10, step=1)
    >>> p.value
    0.0
    """
    v = np.clip(np.asarray(est.value, dtype=float), low, high)
    if step is not None:
        step_arr = np.asarray(step, dtype=float)
        v = offset + np.round((v - offset) / step_arr) * step_arr
        v = np.clip(v, low, high)
    if np.ndim(v) == 0:
        v = float(v)
    return Estimate(v, est.std, exact_std=False, center=est.value, feasible_range=(low, high),
                    proper=True)


@dataclass(frozen=True, init=False, repr=False)
class StatisticEstimate(Estimate):
    """An estimate of a bounded statistic: value and interval inside its feasible range.

    Returned by the graph analytics.  With ``proper=True`` (their default)
    ``value`` lies in ``feasible_range`` and in ``ci(level)`` for every
    level; ``raw`` is the estimate before projection
    onto the range (the unbiased one for counts).

    Attributes
    ----------
    raw : float or numpy.ndarray or None
        The unprojected estimate (what ``proper=False`` returns as ``value``).
    resolved : bool
        False when the release cannot resolve the statistic: the 95% interval
        covers the whole feasible range (or, for a ratio, its denominator is
        not significantly positive).  The value is then no better than a guess
        inside the range.
    ratio : tuple or None
        ``(num, den, var_num, var_den, cov)`` for a ratio num / den of two
        jointly normal estimates: ``ci`` is then Fieller's interval, the set
        of theta with (num - theta den)^2 <= z^2 Var(num - theta den),
        intersected with [low, high] (its convex hull when it is two pieces).
    bounds : tuple or None
        ``(L, sd_L, U, sd_U)`` for a statistic known only to lie between two
        estimated bounds: ``ci`` is then [L - z sd_L, U + z sd_U] within
        [low, high] (conservative).

    Examples
    --------
    >>> e = StatisticEstimate(0.5, 0.1, feasible_range=(0.0, 1.0), ratio=(5.0, 10.0, 1.0, 1.0, 0.0))
    >>> lo, hi = e.ci()
    >>> bool(lo < 0.5 < hi), e.resolved
    (True, True)
    """

    raw: Any
    resolved: bool
    ratio: Any
    bounds: Any

    def __init__(self, value: Any, std: Any, exact_std: bool = False, center: Any = None, *,
                 feasible_range: tuple[Any, Any] = (-np.inf, np.inf), proper: bool = True,
                 raw: Any = None, resolved: bool = True, ratio: Any = None,
                 bounds: Any = None) -> None:
        super().__init__(value, std, exact_std=exact_std, center=center,
                         feasible_range=feasible_range, proper=proper)
        object.__setattr__(self, "raw", value if raw is None else raw)
        object.__setattr__(self, "resolved", bool(resolved))
        object.__setattr__(self, "ratio", ratio)
        object.__setattr__(self, "bounds", bounds)

    def ci(self, level: float = 0.95) -> tuple[Any, Any]:
        """Two-sided interval at ``level``; inside the feasible range and containing
        ``value`` when proper (Fieller's or the bound interval when given)."""
        if self.ratio is None and self.bounds is None:
            return super().ci(level)
        level = check_level(level)
        z = float(ndtri(0.5 + level / 2))
        lower, upper = (float(x) for x in self.feasible_range)
        if self.ratio is not None:
            lo, hi = fieller_interval(*self.ratio, z=z, low=lower, high=upper)
        else:
            L, sL, U, sU = self.bounds
            lo = float(np.clip(L - z * sL, lower, upper))
            hi = float(np.clip(U + z * sU, lower, upper))
        v = float(self.value)
        if not np.isfinite(v):
            return lo, hi
        return float(min(lo, v)), float(max(hi, v))

    def __repr__(self) -> str:
        base = super().__repr__()
        return base[:-1] + ", unresolved)" if not self.resolved else base


def fieller_interval(num: float, den: float, var_num: float, var_den: float, cov: float,
                     z: float = 1.959963984540054, low: float = -np.inf,
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
        r = np.sqrt(disc)
        pieces = [((-b - r) / (2 * a), (-b + r) / (2 * a))]
    elif a < 0 and disc > 0:  # two rays outside the roots
        r1, r2 = sorted(((-b - np.sqrt(disc)) / (2 * a), (-b + np.sqrt(disc)) / (2 * a)))
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
