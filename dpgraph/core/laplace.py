"""Exact discrete Laplace noise for integer counts (the two-sided geometric mechanism).

An integer count c whose value moves by at most ``sensitivity`` between
neighbouring inputs is released as c + X with

    P(X = k) = (1 - alpha) / (1 + alpha) * alpha^|k|,     k = ..., -1, 0, 1, ...

Two neighbouring counts give likelihood ratios of at most alpha^-sensitivity,
so the release is eps-DP when alpha >= e^(-eps / sensitivity).  As for
randomized response (:mod:`dpgraph.core.probabilities`), alpha is a dyadic
rational m / 2^64 rounded *up* (more noise, never less privacy) and certified
in exact arithmetic against a rigorous lower bound on e^eps; X is drawn as the
difference of two exact Geometric(1 - alpha) draws
(:func:`dpgraph.core.sampling.geometric`), so no floating-point number decides
a sample.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..validation import check_epsilon, check_positive_int
from .probabilities import BITS, exp_lower_bound
from .randomness import RandomSource
from .sampling import geometric

__all__ = ["DiscreteLaplace", "discrete_laplace"]

# The geometric sampler caps its draws; with 1 - alpha >= 2^-40 the chance of
# reaching the cap, alpha^(2^60), is below 10^-100000: no draw is ever capped.
_MIN_GAP_BITS = 40
_CAP = (1 << 61) - 1
# alpha is never below 2^-20 (rounding it up only adds noise): the geometric
# sampler evaluates log(alpha) in floating point, which needs alpha > 2^-53.
_MIN_NUMERATOR = 1 << (BITS - 20)


def _certified_numerator(epsilon: float, sensitivity: int) -> int:
    """Smallest m with (2^64 / m)^sensitivity <= L, L a certified lower bound on e^eps."""
    lower = exp_lower_bound(epsilon)
    scale = 1 << (BITS * sensitivity)

    def private(m: int) -> bool:  # alpha = m / 2^64 satisfies alpha^-sensitivity <= e^eps
        return scale <= lower * m**sensitivity

    guess = math.ceil(math.exp(-epsilon / sensitivity) * 2.0**BITS)
    lo, hi = max(1, guess - (1 << 16)), min(1 << BITS, guess + (1 << 16))
    while not private(hi):  # the float guess is good to ~2^12; widen if ever it is not
        lo, hi = hi, min(1 << BITS, 2 * hi)
    while private(lo) and lo > 1:
        lo = max(1, lo // 2)
    while hi - lo > 1:  # invariant: private(hi), not private(lo) (or lo == 1)
        mid = (lo + hi) // 2
        if private(mid):
            hi = mid
        else:
            lo = mid
    return lo if private(lo) else hi


@dataclass(frozen=True)
class DiscreteLaplace:
    """Certified discrete Laplace noise for counts of a given sensitivity.

    Build it with :func:`discrete_laplace`.

    Attributes
    ----------
    epsilon : float
        The privacy parameter the noise is certified for.
    sensitivity : int
        How far one neighbouring change can move the count (2 for a degree
        vector under edge privacy: one edge moves two degrees).
    numerator : int
        alpha = numerator / 2^64, exactly.
    """

    epsilon: float
    sensitivity: int
    numerator: int

    @property
    def alpha(self) -> Fraction:
        """The exact decay parameter: P(X = k) is proportional to alpha^|k|."""
        return Fraction(self.numerator, 1 << BITS)

    @property
    def variance(self) -> float:
        """Var X = 2 alpha / (1 - alpha)^2."""
        a = self.alpha
        return float(2 * a / (1 - a) ** 2)

    @property
    def std(self) -> float:
        """The standard deviation of one noise draw."""
        return math.sqrt(self.variance)

    @property
    def realized_epsilon(self) -> float:
        """sensitivity * ln(1 / alpha): the exact worst likelihood ratio's log (<= epsilon)."""
        return self.sensitivity * (BITS * math.log(2) - math.log(self.numerator))

    def certify(self) -> bool:
        """Re-check in exact arithmetic that alpha^-sensitivity <= e^epsilon."""
        return (1 << (BITS * self.sensitivity)) <= exp_lower_bound(self.epsilon) * \
            self.numerator**self.sensitivity

    def pmf(self, k: np.ndarray | int) -> np.ndarray:
        """P(X = k), in floating point (for estimators and plots, never for sampling)."""
        a = float(self.alpha)
        k = np.abs(np.asarray(k, dtype=np.float64))
        return (1 - a) / (1 + a) * np.exp(k * math.log(a))

    def cdf(self, k: np.ndarray | int) -> np.ndarray:
        """P(X <= k) for integer k, in floating point."""
        a = float(self.alpha)
        k = np.floor(np.asarray(k, dtype=np.float64))
        neg = a ** (-k) / (1 + a)  # k < 0: sum_{j <= k} = alpha^-k / (1 + alpha)
        pos = 1 - a ** (k + 1) / (1 + a)
        return np.where(k < 0, np.minimum(neg, 1.0), pos)

    def sample(self, count: int, source: RandomSource) -> np.ndarray:
        """``count`` independent draws, exactly distributed, as int64.

        Parameters
        ----------
        count : int
        source : RandomSource
            The release's random source (a transaction's committed source).

        Returns
        -------
        numpy.ndarray of int64, shape (count,)
        """
        beta = 1 - self.alpha
        g1 = geometric(int(count), beta, _CAP, source)
        g2 = geometric(int(count), beta, _CAP, source)
        return g1 - g2

    def __repr__(self) -> str:
        return (f"DiscreteLaplace(epsilon={self.epsilon!r}, sensitivity={self.sensitivity}, "
                f"alpha={float(self.alpha):.6g}, std={self.std:.6g})")


def discrete_laplace(epsilon: float, sensitivity: int = 1) -> DiscreteLaplace:
    """Certified discrete Laplace noise: eps-DP for counts that move by ``sensitivity``.

    Parameters
    ----------
    epsilon : float
        Privacy parameter, finite and > 0.
    sensitivity : int, default 1
        The largest change of the count between neighbouring inputs (2 for a
        degree vector under edge privacy).

    Returns
    -------
    DiscreteLaplace
        With ``certify()`` True and alpha rounded up from e^(-epsilon / sensitivity)
        (and never below 2^-20, where the noise is already below one count with
        probability 1 - 2^-19; ``realized_epsilon`` then says what is spent).

    Raises
    ------
    ValueError
        If epsilon / sensitivity is so small (below about 10^-12) that the
        noise cannot be sampled exactly with 64-bit words.

    Examples
    --------
    >>> from dpgraph.core.randomness import SeededRandom
    >>> lap = discrete_laplace(0.5, sensitivity=2)
    >>> lap.certify(), lap.realized_epsilon <= 0.5
    (True, True)
    >>> x = lap.sample(40_000, SeededRandom(0))
    >>> bool(abs(x.mean()) < 4 * lap.std / 200)          # mean 0, within 4 standard errors
    True
    """
    epsilon = check_epsilon(epsilon)
    sensitivity = check_positive_int(sensitivity, "sensitivity")
    m = max(_certified_numerator(epsilon, sensitivity), _MIN_NUMERATOR)
    if (1 << BITS) - m < (1 << (BITS - _MIN_GAP_BITS)):
        raise ValueError(
            f"epsilon={epsilon!r} with sensitivity={sensitivity} is below the precision floor of "
            "exact discrete Laplace sampling with 64-bit words; use epsilon / sensitivity >= 1e-12"
        )
    lap = DiscreteLaplace(epsilon, sensitivity, m)
    if not lap.certify():  # pragma: no cover - a bug, never a user error
        raise AssertionError("internal error: discrete Laplace parameter failed certification")
    return lap
