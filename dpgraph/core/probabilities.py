"""Certified dyadic probabilities for K-ary randomized response (mechanism E).

Mechanism E keeps a row with probability 1/g and moves it to each other value
with probability e^-eps/g, g = 1 + (K-1) e^-eps.  Sampling with a probability
computed in floating point can make the keep/move ratio a hair larger than
e^eps, so the release would not be exactly eps-DP.  Instead we move to each
other value with probability

    r' = m / 2^B,     B = 64,

where m is the smallest integer we can *certify*, in exact rational arithmetic,
to satisfy  (2^B - (K-1) m) / m <= e^eps,  i.e. keep/move <= e^eps.  The move
probability is rounded *up* (more noise), never down.  Samplers compare
uniform 64-bit integers against m, so the probabilities actually used are
exactly these rationals, and the estimators use the same public r'.

The certificate needs a rigorous lower bound on e^eps: Python's ``decimal``
computes ``exp`` correctly rounded, so at 60 significant digits the true value
lies within a relative 10^-59 of the result; we shrink the result by that
margin and work with the resulting Fraction.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Context, Decimal, ROUND_HALF_EVEN
from fractions import Fraction
from functools import lru_cache

from ..validation import check_epsilon, check_positive_int

__all__ = ["RRProbabilities", "rr_probabilities", "exp_lower_bound", "BITS"]

#: Precision of every dyadic probability: uniform 64-bit words are compared
#: with integer numerators.
BITS = 64

_PREC = 60
_CTX = Context(prec=_PREC, rounding=ROUND_HALF_EVEN)
_SLACK = Fraction(1, 10 ** (_PREC - 1))
# e^eps for eps above this is larger than 2^64 * K for any sane K; capping the
# argument keeps the bound valid (exp is increasing) and avoids overflow.
_EPS_CAP = 200.0


def exp_lower_bound(epsilon: float) -> Fraction:
    """Return a rational number certified to be <= exp(epsilon).

    Parameters
    ----------
    epsilon : float
        A finite, non-negative float.

    Returns
    -------
    Fraction

    Examples
    --------
    >>> import math
    >>> lb = exp_lower_bound(1.0)
    >>> float(lb) <= math.e and math.e - float(lb) < 1e-15
    True
    """
    x = Decimal(min(float(epsilon), _EPS_CAP))  # exact conversion of the float
    e = _CTX.exp(x)  # correctly rounded to 60 significant digits
    return Fraction(e) * (1 - _SLACK)


def _float_floor(x: Fraction) -> float:
    """The largest float <= x."""
    f = float(x)
    if Fraction(f) > x:
        f = math.nextafter(f, -math.inf)
    return f


@dataclass(frozen=True)
class RRProbabilities:
    """Exact probabilities of K-ary randomized response at privacy level epsilon.

    Attributes
    ----------
    K : int
        Number of values in the universe.
    epsilon : float
        The privacy parameter asked for.
    move_numerator : int
        m: the probability of moving to each *other* value is m / 2^64.
    bits : int
        B = 64.
    """

    K: int
    epsilon: float
    move_numerator: int
    bits: int = BITS

    @property
    def denominator(self) -> int:
        """2^B."""
        return 1 << self.bits

    @property
    def move_fraction(self) -> Fraction:
        """Exact probability of moving to one given other value."""
        return Fraction(self.move_numerator, self.denominator)

    @property
    def keep_fraction(self) -> Fraction:
        """Exact probability of keeping the true value."""
        return 1 - (self.K - 1) * self.move_fraction

    @property
    def move_probability(self) -> float:
        """m / 2^64 as a float (for K = 2, the flip probability p')."""
        return float(self.move_fraction)

    @property
    def keep_probability(self) -> float:
        """1 - (K-1) m / 2^64 as a float."""
        return float(self.keep_fraction)

    @property
    def ratio(self) -> Fraction:
        """The exact worst-case likelihood ratio keep / move."""
        return self.keep_fraction / self.move_fraction

    @property
    def realized_epsilon(self) -> float:
        """ln of the exact worst ratio, rounded down to a float; <= epsilon."""
        r = self.ratio
        ln = _CTX.ln(Decimal(r.numerator)) - _CTX.ln(Decimal(r.denominator))
        return _float_floor(Fraction(ln) - 2 * _SLACK * max(1, abs(Fraction(ln))))

    def certify(self) -> bool:
        """Check in exact arithmetic that the release is epsilon-DP.

        Returns True when keep/move <= e^epsilon (with a rigorous lower bound
        on e^epsilon) and move < keep; never relies on floating point.
        """
        ratio_ok = self.ratio <= exp_lower_bound(self.epsilon)
        return bool(ratio_ok and self.K * self.move_numerator < self.denominator)

    @property
    def channel(self):
        """The row channel P(v | x) = d [v == x] + r used by the estimators."""
        from .estimators import Channel

        return Channel.randomized_response(self)

    def __repr__(self) -> str:
        return (
            f"RRProbabilities(K={self.K}, epsilon={self.epsilon!r}, "
            f"move_probability={self.move_probability!r}, "
            f"realized_epsilon={self.realized_epsilon!r})"
        )


@lru_cache(maxsize=4096)
def _numerator(epsilon: float, K: int, bits: int) -> int:
    denominator = 1 << bits
    lower = exp_lower_bound(epsilon)
    # smallest m with m * (e^eps + K - 1) >= 2^B, using the certified lower bound
    bound = Fraction(denominator) / (lower + (K - 1))
    m = math.ceil(bound)
    return max(m, 1)


def rr_probabilities(epsilon: float, K: int = 2) -> RRProbabilities:
    """Certified dyadic probabilities of K-ary randomized response.

    Parameters
    ----------
    epsilon : float
        Privacy parameter, finite and > 0.
    K : int, default 2
        Number of values of a row (2 for a vertex pair).

    Returns
    -------
    RRProbabilities
        With ``certify()`` True.

    Raises
    ------
    ValueError
        If epsilon is so small that 64-bit dyadic probabilities cannot keep
        the true value strictly more likely than every other value (the
        release would carry no information and the estimators would divide
        by zero).

    Examples
    --------
    >>> rr = rr_probabilities(1.0)
    >>> import math
    >>> p = math.exp(-1) / (1 + math.exp(-1))
    >>> 0 <= rr.move_probability - p < 1e-15
    True
    >>> rr.certify()
    True
    """
    return _certified(check_epsilon(epsilon), check_positive_int(K, "K", minimum=2))


@lru_cache(maxsize=4096)
def _certified(epsilon: float, K: int) -> RRProbabilities:
    """rr_probabilities after validation; cached because certification is exact arithmetic."""
    m = _numerator(epsilon, K, BITS)
    rr = RRProbabilities(K=K, epsilon=epsilon, move_numerator=m)
    if K * m >= rr.denominator:
        raise ValueError(
            f"epsilon={epsilon!r} is below the precision floor of 64-bit dyadic sampling "
            f"for K={K}: the released value would be independent of the truth. "
            "Use a larger epsilon (e.g. >= 1e-12)."
        )
    if not rr.certify():  # pragma: no cover - a bug, never a user error
        raise AssertionError("internal error: dyadic probabilities failed certification")
    return rr
