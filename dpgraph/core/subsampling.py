"""The subsampled channels: randomized response, then keeping each released pair.

A sparse release keeps each pair randomized response released (binary: an
edge; typed: a tie of any value) with the public probability s = k / 2^64.
Keeping is post-processing, so the privacy guarantee is that of the
randomized response; what changes is the channel the estimators debias
through.  This module is the one derivation of that channel from the
certified numerators (the flip numerator M of :class:`RRProbabilities` and
the keep numerator k), used by the release, by loading a file and by the
release object:

- :class:`KeptResponse`, the part both share (k, s and M);
- :class:`SubsampledProbabilities`, binary: P(1 | edge) = alpha = s (1 - p'),
  P(1 | non-edge) = beta = s p', the binary channel (alpha, beta);
- :class:`TypedSubsampling`, K-ary: a stored value v has
  P(y = v | x) = s (1 - K m') [v = x] + s m' (v = 1..K-1), the channel
  d [v = x] + r_v with d = s (1 - K m');
- :func:`keep_numerator`, k of ``keep=`` or ``target_edges=`` from public
  quantities only (n, direction, epsilon, K), never from the input graph;
  :func:`subsampled_probabilities` and :func:`typed_subsampling` apply it;
- :func:`kept_response`, the channel of a release's stored numerators.

Every probability is an exact dyadic rational (k and M are numerators over
2^64), so the samplers decide with integer comparisons of random words.
"""

from __future__ import annotations

from fractions import Fraction
from numbers import Integral, Real

import numpy as np

from ..validation import Integer, Optional, Probability, validate_params
from .estimators import Channel
from .pairs import pair_count
from .probabilities import RRProbabilities

__all__ = ["KeptResponse", "SubsampledProbabilities", "TypedSubsampling", "keep_numerator",
           "kept_response", "subsampled_probabilities", "typed_subsampling"]

_TWO64 = 1 << 64
_TWO128 = 1 << 128


class KeptResponse:
    """Randomized response then keeping each released pair with probability s = k / 2^64.

    The part every subsampled release shares (binary:
    :class:`SubsampledProbabilities`; typed:
    :class:`TypedSubsampling`).

    Parameters
    ----------
    rr : RRProbabilities
        The certified move probability M / 2^64 of the randomized response.
    keep_numerator : int
        k in 1..2^64.
    """

    def __init__(self, rr: RRProbabilities, keep_numerator: int) -> None:
        if isinstance(keep_numerator, (bool, np.bool_)) or not isinstance(keep_numerator, Integral) \
                or not 1 <= int(keep_numerator) <= _TWO64:
            raise ValueError("keep_numerator must be an integer in 1..2^64")
        self.rr = rr
        self.keep_numerator = int(keep_numerator)
        self.flip_numerator = int(rr.flip_numerator)

    @property
    def keep_fraction(self) -> Fraction:
        return Fraction(self.keep_numerator, _TWO64)

    @property
    def keep(self) -> float:
        return float(self.keep_fraction)


class SubsampledProbabilities(KeptResponse):
    """Exact probabilities of randomized response followed by keeping with probability s.

    Parameters
    ----------
    rr : RRProbabilities
        The certified flip probability p' = M / 2^64 (K = 2).
    keep_numerator : int
        k in 1..2^64: the keep probability is s = k / 2^64.

    Attributes
    ----------
    alpha, beta : Fraction
        P(1 | edge) = s (1 - p') and P(1 | non-edge) = s p', exactly.
    keep_fraction : Fraction
        s = k / 2^64.
    """

    def __init__(self, rr: RRProbabilities, keep_numerator: int) -> None:
        if rr.K != 2:
            raise ValueError("subsampled releases need binary randomized response (K = 2)")
        super().__init__(rr, keep_numerator)

    @property
    def alpha(self) -> Fraction:
        return Fraction(self.keep_numerator * (_TWO64 - self.flip_numerator), _TWO128)

    @property
    def beta(self) -> Fraction:
        return Fraction(self.keep_numerator * self.flip_numerator, _TWO128)

    @property
    def channel(self) -> Channel:
        """The binary channel (alpha, beta) the estimators use."""
        return Channel.binary(self.alpha, self.beta)

    def __repr__(self) -> str:
        return (
            f"SubsampledProbabilities(epsilon={self.rr.epsilon!r}, keep={self.keep:.6g}, "
            f"alpha={float(self.alpha):.6g}, beta={float(self.beta):.6g})"
        )


@validate_params(keep=Optional(Probability(example="0.01")),
                 target_edges=Optional(Integer(minimum=1)))
def subsampled_probabilities(
    rr: RRProbabilities,
    n: int,
    directed: bool,
    keep: Real | None = None,
    target_edges: Integral | None = None,
) -> SubsampledProbabilities:
    """Turn ``keep=`` or ``target_edges=`` into exact subsampling probabilities.

    ``target_edges`` picks s = target_edges / (p' N) from public quantities only
    (n, epsilon), never from the input graph, so the choice itself leaks
    nothing; the expected output is then target_edges + s m (1 - 2p') for a
    graph with m edges, i.e. target_edges for a sparse graph.

    Parameters
    ----------
    rr : RRProbabilities
    n : int
    directed : bool
    keep : float, optional
        s in (0, 1], rounded to the nearest multiple of 2^-64.
    target_edges : int, optional
        Wanted expected number of released non-edge pairs, at most p' N.

    Returns
    -------
    SubsampledProbabilities

    Examples
    --------
    >>> from dpgraph.core import rr_probabilities
    >>> sp = subsampled_probabilities(rr_probabilities(1.0), 100, False, keep=0.5)
    >>> sp.keep, float(sp.alpha + sp.beta)
    (0.5, 0.5)
    """
    return SubsampledProbabilities(rr, keep_numerator(Fraction(rr.flip_numerator, _TWO64), n,
                                                      directed, keep, target_edges, rr.epsilon))


@validate_params(keep=Optional(Probability(example="0.01")),
                 target_edges=Optional(Integer(minimum=1)))
def keep_numerator(moved: Fraction, n: int, directed: bool, keep: Real | None,
                   target_edges: Integral | None, epsilon: float) -> int:
    """k in 1..2^64 of the keep probability k / 2^64 of ``keep=`` or ``target_edges=``.

    ``moved`` is the probability that a pair without an edge is released as
    one (p' for a binary release, (K - 1) m' for a typed one), so
    ``target_edges`` gives s = target_edges / (moved N): public quantities
    only, never the input graph.

    Examples
    --------
    >>> keep_numerator(Fraction(1, 4), 101, False, None, 505, 1.0) / 2**64  # 505 of 5050 / 4
    0.4
    >>> keep_numerator(Fraction(1, 4), 101, False, 0.5, None, 1.0) == 2**63
    True
    """
    if (keep is None) == (target_edges is None):
        raise ValueError("pass either keep= or target_edges= (one of them)")
    if target_edges is not None:
        target = target_edges
        dense = moved * pair_count(n, directed)
        if target > dense:
            raise ValueError(
                f"target_edges={target} is larger than the dense release would give "
                f"(about {float(dense):.6g} edges for {n} nodes at epsilon={epsilon:g}); "
                "pass at most that, or omit target_edges for the full release"
            )
        s = Fraction(target) / dense
    else:
        s = Fraction(keep)
    k = round(s * _TWO64)
    if k < 1:
        raise ValueError(
            "keep is below 2^-64, the resolution of the sampler; the release would be empty"
        )
    return min(k, _TWO64)


class TypedSubsampling(KeptResponse):
    """Exact probabilities of K-ary randomized response followed by keeping ties with probability s.

    Parameters
    ----------
    rr : RRProbabilities
        Certified K-ary probabilities: each other value m' = M / 2^64.
    keep_numerator : int
        k in 1..2^64: s = k / 2^64.

    Attributes
    ----------
    alpha, beta : Fraction
        P(stored | a tie) = s (1 - m') and P(stored | no tie) = s (K - 1) m'.

    Examples
    --------
    >>> from dpgraph.core import rr_probabilities
    >>> sub = TypedSubsampling(rr_probabilities(1.0, 4), 1 << 63)
    >>> sub.keep, round(float(sub.beta), 6), round(sub.channel.d, 6)
    (0.5, 0.262317, 0.150245)
    """

    def __init__(self, rr: RRProbabilities, keep_numerator: int) -> None:
        super().__init__(rr, keep_numerator)
        self.K = int(rr.K)

    @property
    def _moved(self) -> Fraction:
        return Fraction(self.flip_numerator, _TWO64)

    @property
    def alpha(self) -> Fraction:
        return self.keep_fraction * (1 - self._moved)

    @property
    def beta(self) -> Fraction:
        return self.keep_fraction * (self.K - 1) * self._moved

    @property
    def channel(self) -> Channel:
        """The K-ary channel of a stored value, d [v = x] + r_v, from exact fractions."""
        s, m = self.keep_fraction, self._moved
        r = np.full(self.K, float(s * m))
        r[0] = float(1 - s * (1 - m))
        return Channel(float(s * (1 - self.K * m)), r)

    def __repr__(self) -> str:
        return (f"TypedSubsampling(epsilon={self.rr.epsilon!r}, K={self.K}, keep={self.keep:.6g}, "
                f"alpha={float(self.alpha):.6g}, beta={float(self.beta):.6g})")


def typed_subsampling(rr: RRProbabilities, n: int, directed: bool, keep: Real | None = None,
                      target_edges: Integral | None = None) -> TypedSubsampling:
    """``keep=`` or ``target_edges=`` of a typed release as exact probabilities.

    ``target_edges`` picks s = target_edges / ((K - 1) m' N), from public
    quantities only: about that many stored ties come from pairs without one.

    Examples
    --------
    >>> from dpgraph.core import rr_probabilities
    >>> sub = typed_subsampling(rr_probabilities(1.0, 4), 1000, False, target_edges=5000)
    >>> round(float(sub.beta) * 1000 * 999 / 2)
    5000
    """
    moved = Fraction((rr.K - 1) * int(rr.flip_numerator), _TWO64)
    return TypedSubsampling(rr, keep_numerator(moved, n, directed, keep, target_edges,
                                               rr.epsilon))


def kept_response(rr: RRProbabilities, keep_numerator: int,
                  typed: bool) -> SubsampledProbabilities | TypedSubsampling:
    """The subsampled channel of a release from its certified numerators.

    ``typed`` chooses the K-ary channel (a typed release, whose any-tie
    collapse the binary estimators use) over the binary one; a binary
    release needs ``rr.K == 2``.

    Examples
    --------
    >>> from dpgraph.core import rr_probabilities
    >>> kept_response(rr_probabilities(1.0), 1 << 63, typed=False).keep
    0.5
    >>> kept_response(rr_probabilities(1.0, 3), 1 << 62, typed=True).K
    3
    """
    if typed:
        return TypedSubsampling(rr, keep_numerator)
    return SubsampledProbabilities(rr, keep_numerator)
