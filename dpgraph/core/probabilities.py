"""Certified dyadic probabilities for K-ary randomized response (mechanism E).

Mechanism E releases a row's true value with probability 1/g and flips it to
each other value with probability e^-eps/g, g = 1 + (K-1) e^-eps.  Sampling
with a probability computed in floating point can make the truth/flip ratio a
hair larger than e^eps, so the release would not be exactly eps-DP.  Instead
we flip to each other value with probability

    r' = m / 2^B,     B = 64,

where m is the smallest integer we can *certify*, in exact rational arithmetic,
to satisfy  (2^B - (K-1) m) / m <= e^eps,  i.e. truth/flip <= e^eps.  The flip
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
from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, Context, Decimal
from fractions import Fraction
from functools import lru_cache

from ..validation import check_epsilon, check_positive_int

__all__ = ["BITS", "CertifiedRelease", "RRProbabilities", "exp_lower_bound", "rr_probabilities"]

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


@dataclass(frozen=True, init=False)
class RRProbabilities:
    """Exact probabilities of K-ary randomized response at privacy level epsilon.

    Parameters
    ----------
    K : int
        Number of values in the universe.
    epsilon : float
        The privacy parameter asked for.
    flip_numerator : int
        m: the probability of flipping to each *other* value is m / 2^64.
    bits : int, default 64
        B.

    Attributes
    ----------
    K, epsilon, flip_numerator, bits
        As given.
    """

    K: int
    epsilon: float
    flip_numerator: int
    bits: int = field(default=BITS)

    def __init__(self, K: int, epsilon: float, flip_numerator: int, bits: int = BITS) -> None:
        object.__setattr__(self, "K", K)
        object.__setattr__(self, "epsilon", epsilon)
        object.__setattr__(self, "flip_numerator", flip_numerator)
        object.__setattr__(self, "bits", bits)

    @property
    def denominator(self) -> int:
        """2^B."""
        return 1 << self.bits

    @property
    def flip_fraction(self) -> Fraction:
        """Exact probability of flipping to one given other value."""
        return Fraction(self.flip_numerator, self.denominator)

    @property
    def truth_fraction(self) -> Fraction:
        """Exact probability of releasing the true value."""
        return 1 - (self.K - 1) * self.flip_fraction

    @property
    def flip_probability(self) -> float:
        """m / 2^64 as a float (for K = 2, the flip probability p')."""
        return float(self.flip_fraction)

    @property
    def truth_probability(self) -> float:
        """1 - (K-1) m / 2^64 as a float."""
        return float(self.truth_fraction)

    @property
    def ratio(self) -> Fraction:
        """The exact worst-case likelihood ratio truth / flip."""
        return self.truth_fraction / self.flip_fraction

    @property
    def realized_epsilon(self) -> float:
        """ln of the exact worst ratio, rounded down to a float; <= epsilon."""
        r = self.ratio
        ln = _CTX.ln(Decimal(r.numerator)) - _CTX.ln(Decimal(r.denominator))
        return _float_floor(Fraction(ln) - 2 * _SLACK * max(1, abs(Fraction(ln))))

    def certify(self) -> bool:
        """Check in exact arithmetic that the release is epsilon-DP.

        Returns True when truth/flip <= e^epsilon (with a rigorous lower bound
        on e^epsilon) and flip < truth; never relies on floating point.
        """
        ratio_ok = self.ratio <= exp_lower_bound(self.epsilon)
        return bool(ratio_ok and self.K * self.flip_numerator < self.denominator)

    def __repr__(self) -> str:
        return (
            f"RRProbabilities(K={self.K}, epsilon={self.epsilon!r}, "
            f"flip_probability={self.flip_probability!r}, "
            f"realized_epsilon={self.realized_epsilon!r})"
        )


def _from_probabilities(name: str, doc: str) -> property:
    """A read-only property that returns ``self.probabilities.<name>``."""
    return property(lambda self: getattr(self.probabilities, name), doc=doc)


class CertifiedRelease:
    """The public privacy metadata of anything released with ``self.probabilities``.

    Mixed into :class:`~dpgraph.core.MechanismE` and
    :class:`~dpgraph.PrivateGraph`, which set ``probabilities`` (an
    :class:`RRProbabilities`) in their constructor.
    """

    probabilities: RRProbabilities

    epsilon = _from_probabilities(
        "epsilon", "The privacy parameter asked for (per row; per vertex pair for a graph).")
    realized_epsilon = _from_probabilities(
        "realized_epsilon", "ln of the exact worst-case likelihood ratio of the sampler, <= epsilon.")
    flip_probability = _from_probabilities(
        "flip_probability",
        "The certified flip probability actually sampled (to each other value), as a float.")
    truth_probability = _from_probabilities(
        "truth_probability", "The exact probability (as a float) that a row is released unchanged.")


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
    >>> 0 <= rr.flip_probability - p < 1e-15
    True
    >>> rr.certify()
    True
    """
    return _certified(check_epsilon(epsilon), check_positive_int(K, "K", minimum=2))


@lru_cache(maxsize=4096)
def _certified(epsilon: float, K: int) -> RRProbabilities:
    """rr_probabilities after validation; cached because certification is exact arithmetic."""
    m = _numerator(epsilon, K, BITS)
    rr = RRProbabilities(K=K, epsilon=epsilon, flip_numerator=m)
    if K * m >= rr.denominator:
        raise ValueError(
            f"epsilon={epsilon!r} is below the precision floor of 64-bit dyadic sampling "
            f"for K={K}: the released value would be independent of the truth. "
            "Use a larger epsilon (e.g. >= 1e-12)."
        )
    if not rr.certify():  # pragma: no cover - a bug, never a user error
        raise AssertionError("internal error: dyadic probabilities failed certification")
    return rr
