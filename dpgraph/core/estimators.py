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

from dataclasses import dataclass, replace
from fractions import Fraction
from numbers import Real
from typing import Any

import numpy as np

from .estimate import Estimate, apply_proper

__all__ = ["Channel", "CountingQuery", "count_estimate", "histogram_estimate", "unbiased_estimate"]


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

    def value_variances(self, functions: Any) -> np.ndarray:
        """Var(phi(Y) | x = v) / d^2 for every true value v: the debiased row's variance.

        Parameters
        ----------
        functions : array of shape (..., K)
            Row functions tabulated on the universe.

        Returns
        -------
        numpy.ndarray of shape (..., K)
            Entry v is the variance of the debiased value of one row whose
            truth is v (it depends on v unless the channel is binary and
            symmetric).

        Examples
        --------
        >>> ch = Channel(0.5, np.array([0.1, 0.2, 0.2]))
        >>> ch.value_variances([0.0, 1.0, 0.0]).round(4).tolist()
        [0.64, 0.84, 0.64]
        """
        phi = np.asarray(functions, dtype=float)
        d, r = self.d, self.r
        r1 = phi @ r  # sum_v r_v phi(v)
        r2 = np.square(phi) @ r  # sum_v r_v phi(v)^2
        # Var phi(Y) given x = v:  d phi(v)^2 + r2 - (d phi(v) + r1)^2
        mean = d * phi + r1[..., None]
        var = d * np.square(phi) + r2[..., None] - np.square(mean)
        return np.maximum(var, 0.0) / d**2

    def debias_histogram(self, counts: Any) -> np.ndarray:
        """Unbiased estimate of the true histogram from the released one.

        ``counts[..., v]`` rows were released with value v; since
        E[counts_v] = d n_v + N r_v (N rows in all), n_v is estimated by
        (counts_v - N r_v) / d.  The entries sum to N; some may be negative.

        Examples
        --------
        >>> Channel(0.5, np.array([0.25, 0.25])).debias_histogram([30, 70]).tolist()
        [10.0, 90.0]
        """
        c = np.asarray(counts, dtype=float)
        if c.shape[-1] != self.K:
            raise ValueError(f"counts has {c.shape[-1]} values but the channel has K={self.K}")
        total = c.sum(axis=-1, keepdims=True)
        return (c - total * self.r) / self.d

    def collapse(self, members: Any) -> Channel:
        """The binary channel of the indicator [Y in A] for a set A of values.

        For a channel d [v == x] + r_v, P(Y in A | x) = d [x in A] + sum_{v in A} r_v
        depends on x only through [x in A], so post-processing the released
        values to [Y in A] is the binary channel alpha = d + r_A,
        beta = r_A (asymmetric unless r_A = 1 - d - r_A).

        Parameters
        ----------
        members : array of bool, shape (K,)
            Which values are in A (neither none nor all of them).

        Examples
        --------
        >>> ch = Channel(0.4, np.array([0.2, 0.2, 0.2])).collapse([False, True, True])
        >>> round(ch.alpha, 12), round(ch.beta, 12)
        (0.8, 0.4)
        """
        A = np.asarray(members, dtype=bool)
        if A.shape != (self.K,) or A.all() or not A.any():
            raise ValueError(f"members must mark some but not all of the K={self.K} values")
        rA = float(self.r[A].sum())
        # P(Y not in A | x in A) = sum of r off A (rows sum to 1: d + sum r = 1)
        return Channel(self.d, np.array([float(self.r[~A].sum()), rA]))

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
    offset = np.sum(sizes * r1, axis=-1)
    value = (np.asarray(observed, dtype=float) - offset) / d / normalizer
    var_given_x = channel.value_variances(functions)  # (..., h, K), already / d^2
    worst = var_given_x.max(axis=-1)
    spread = worst - var_given_x.min(axis=-1)
    exact = bool(np.all(spread <= 1e-12 * np.maximum(worst, 1e-300)))
    variance = np.sum(sizes * worst, axis=-1) / np.square(normalizer)
    std = np.sqrt(variance)
    if np.ndim(value) == 0:
        value, std = float(value), float(std)
    return Estimate(value, std, exact_std=exact)


def count_estimate(observed: Any, n_rows: Any, channel: Channel) -> Estimate:
    """Unbiased estimate of how many of ``n_rows`` binary rows are 1.

    The cut query, edge counts, degrees and every other edge count of the
    graph layer are this estimate: the core's :class:`CountingQuery` with
    phi(v) = v on the rows that the query covers (see docs/design.md).

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
    return CountingQuery([[0.0, 1.0]], n[..., None]).answer(observed, channel, proper=False)


class CountingQuery:
    """A sum of row functions over rows known only by how many use each function.

    sum_i phi_{g(i)}(x_i) where group g has ``group_sizes[g]`` rows: the form
    of every count on a graph, whose rows (vertex pairs) are far too many to
    list.  A cut query is ``CountingQuery([[0, 1]], [|S||T|])``: phi(v) = v
    on the |S||T| pairs of S x T.  Whoever holds the released rows evaluates
    the released sum (for a graph, the adjacency counts released pairs:
    ``cut_count``, ``within_count``); :meth:`answer` turns it into the
    companion estimate, through the one debiasing formula
    (:func:`~dpgraph.core.unbiased_estimate`).  Unlike
    :class:`StatisticalQuery` the answer is the sum itself, not divided by
    sum_i c_i.

    Parameters
    ----------
    functions : array_like of shape (h, K)
        The distinct row functions, tabulated on the K values of a row.
    group_sizes : array_like of shape (h,), or (Q, h) for a batch of Q queries
        How many rows use each function.

    Examples
    --------
    >>> q = CountingQuery([[0.0, 1.0]], [100])      # a count over 100 pairs
    >>> q.range
    (0.0, 100.0)
    >>> e = q.answer(30.0, Channel.binary(0.75, 0.25), proper=False)
    >>> float(e), round(e.std, 4)
    (10.0, 8.6603)
    """

    def __init__(self, functions: Any, group_sizes: Any) -> None:
        functions = np.asarray(functions, dtype=float)
        sizes = np.asarray(group_sizes, dtype=float)
        if functions.ndim != 2 or functions.shape[1] < 2:
            raise ValueError(f"functions must have shape (h, K) with K >= 2, got {functions.shape}")
        if not np.all(np.isfinite(functions)):
            raise ValueError("row functions must take finite values (no NaN or inf)")
        if sizes.shape[-1:] != functions.shape[:1] or sizes.ndim not in (1, 2):
            raise ValueError(f"group_sizes must have shape ({functions.shape[0]},) or "
                             f"(Q, {functions.shape[0]}), got {sizes.shape}")
        if np.any(sizes < 0) or not np.all(np.isfinite(sizes)):
            raise ValueError("group_sizes must be finite counts >= 0")
        self.functions = functions
        self.group_sizes = sizes

    @property
    def K(self) -> int:
        """Values a row can take."""
        return int(self.functions.shape[1])

    @property
    def range(self) -> tuple[Any, Any]:
        """(min, max) of the sum over all databases."""
        low = self.group_sizes @ self.functions.min(axis=1)
        high = self.group_sizes @ self.functions.max(axis=1)
        if np.ndim(low) == 0:
            return float(low), float(high)
        return low, high

    @property
    def integer_valued(self) -> bool:
        """Whether every row function takes integer values (the sum is then an integer)."""
        return bool(np.all(self.functions == np.round(self.functions)))

    def answer(self, observed: Any, channel: Channel, proper: bool = True) -> Estimate:
        """The estimate of the sum from the released sum ``observed`` (array for a batch).

        Unbiased with its std (exact for a symmetric binary channel, the
        worst case over the truth otherwise); proper by default: clipped to
        :attr:`range` and, for integer row functions, rounded to an integer
        (``raw`` keeps the unbiased value).
        """
        est = unbiased_estimate(observed, self.functions, self.group_sizes, channel)
        est = replace(est, feasible_range=self.range)
        return apply_proper(est, proper, step=1.0 if self.integer_valued else None)

    def __repr__(self) -> str:
        q = f"batch of {self.group_sizes.shape[0]}, " if self.group_sizes.ndim == 2 else ""
        return f"CountingQuery({q}h={self.functions.shape[0]}, K={self.K})"


def histogram_estimate(counts: Any, function: Any, channel: Channel,
                       variance: str = "plugin") -> Estimate:
    """Unbiased estimate of sum_i phi(x_i) over N rows sharing one row function, from
    the histogram of their released values.

    The value is :func:`unbiased_estimate`'s.  For K > 2 the exact variance,
    sum_v n_v Var(phi(Y) | v) / d^2, depends on the true histogram n; with
    ``variance="plugin"`` it is estimated without bias by putting the
    debiased histogram (:meth:`Channel.debias_histogram`) in place of n, then
    kept within [N min_v, N max_v] of the per-value variances (where the true
    variance lies); ``"worst"`` gives the worst case over the truth instead
    (an upper bound, :func:`unbiased_estimate`'s).  When the per-row
    variance does not depend on the truth both are exact.

    Parameters
    ----------
    counts : array of shape (K,) or (Q, K)
        How many of the query's rows were released with each value.
    function : array of shape (K,) or (Q, K)
        phi tabulated on the universe.
    channel : Channel
    variance : {"plugin", "worst"}, default "plugin"

    Returns
    -------
    Estimate
        ``exact_std`` is True only when the per-row variance does not depend
        on the truth.

    Examples
    --------
    >>> ch = Channel(0.5, np.array([0.25, 0.125, 0.125]))
    >>> e = histogram_estimate([40, 35, 25], [0.0, 1.0, 0.0], ch)
    >>> float(e), round(e.std, 3)
    (45.0, 8.139)
    """
    if variance not in ("plugin", "worst"):
        raise ValueError(f"variance must be 'plugin' or 'worst', got {variance!r}")
    c = np.asarray(counts, dtype=float)
    phi = np.broadcast_to(np.asarray(function, dtype=float), c.shape)
    rows = c.sum(axis=-1)
    observed = np.einsum("...k,...k->...", c, phi)
    est = unbiased_estimate(observed, phi[..., None, :], rows[..., None], channel)
    if variance == "worst" or est.exact_std:
        return est
    per_value = channel.value_variances(phi)  # (..., K)
    n_hat = channel.debias_histogram(c)
    plug = np.einsum("...k,...k->...", n_hat, per_value)
    plug = np.clip(plug, rows * per_value.min(axis=-1), rows * per_value.max(axis=-1))
    std = np.sqrt(plug)
    if np.ndim(std) == 0:
        std = float(std)
    return Estimate(est.value, std, exact_std=False)
