"""The consistency check of protocol "both": do a user's reports agree with the other endpoints'?

Under protocol "both" the pair {i, j} is reported by i and by j, each bit
flipped independently with probability p'.  Whatever the truth, two honest
reports of a pair disagree with probability q = 2 p'(1 - p').  So an honest
user i's disagreements with the other reporters are exactly
Binomial(m_i, q), m_i the reporters other than i; the check gives each
reporter's count, its expectation and the upper-tail p-value.

What it detects: a user whose row departs from randomized response of any
row on many pairs, e.g. a fake user claiming edges to everyone (all ones: a
disagreement rate near 1 - p' instead of q), a client that does not flip, or
one that sends noise with the wrong flip rate.  What it cannot detect: a
user who runs the client honestly on a false neighbour list (lies about a
few neighbours cost about (1 - 2 p') disagreement each, lost in the
binomial's sqrt(m q (1 - q)) unless they are many), two colluding endpoints
that agree on a false pair, or which endpoint of a disagreeing pair lied.
It is a screen of reporters, not a proof; it does not change the estimates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

__all__ = ["ConsistencyCheck", "consistency"]


@dataclass(frozen=True)
class ConsistencyCheck:
    """Per-user disagreements with the other endpoints (positions in ``nodes`` order).

    Attributes
    ----------
    disagreements : numpy.ndarray of int64
        Pairs where the user's bit and the other endpoint's differ (0 for non-reporters).
    compared : numpy.ndarray of int64
        Pairs compared (the other reporters; 0 for non-reporters).
    rate : float
        The honest disagreement probability q = 2 p'(1 - p').
    p_values : numpy.ndarray of float
        P(Binomial(compared, q) >= disagreements): small for too many disagreements.
    """

    disagreements: np.ndarray
    compared: np.ndarray
    rate: float
    p_values: np.ndarray

    def flagged(self, alpha: float = 0.001) -> np.ndarray:
        """Positions whose p-value is below alpha / (number of reporters) (Bonferroni)."""
        m = max(int(np.count_nonzero(self.compared)), 1)
        return np.flatnonzero((self.compared > 0) & (self.p_values < alpha / m))

    def __repr__(self) -> str:
        return (f"ConsistencyCheck(reporters={int(np.count_nonzero(self.compared))}, "
                f"rate={self.rate:.4g}, flagged={self.flagged().size})")


def consistency(R: Any, block: int = 1024) -> ConsistencyCheck:
    """The consistency check of a protocol-"both" collection (see the module docstring).

    Parameters
    ----------
    R : CollectedGraph
        Collected under protocol "both".
    block : int, default 1024
        Rows compared at a time (memory about 2 n block bytes).

    Raises
    ------
    ValueError
        For a protocol-"one" collection: each pair has one report, nothing to compare.
    """
    if getattr(R, "protocol", None) != "both":
        raise ValueError("consistency needs a protocol 'both' collection: under protocol 'one' "
                         "each pair has a single report")
    pairs = R.adjacency
    n = R.number_of_nodes()
    rep = pairs.reported
    X = np.unpackbits(pairs.reports.words.view(np.uint8), axis=1, bitorder="little",
                      count=n).astype(bool)
    dis = np.zeros(n, dtype=np.int64)
    for r0 in range(0, n, block):
        r1 = min(n, r0 + block)
        diff = X[r0:r1] != X[:, r0:r1].T
        diff &= rep[None, :]
        diff[np.arange(r1 - r0), np.arange(r0, r1)] = False
        dis[r0:r1] = diff.sum(axis=1)
    dis[~rep] = 0
    compared = np.where(rep, int(rep.sum()) - 1, 0).astype(np.int64)
    p = float(R.flip_probability)
    q = 2 * p * (1 - p)
    pv = np.where(compared > 0, stats.binom.sf(dis - 1, compared, q), 1.0)
    return ConsistencyCheck(dis, compared, q, pv)
