"""Dense debiased indicator matrices of a typed release (for triangle and reciprocity forms).

For a set A of values, the released indicator [Y_ij in A] debiased through the
collapse of the K-ary channel to A (:meth:`~dpgraph.core.Channel.collapse`)
is Z_ij = z0 + (z1 - z0) [Y_ij in A] with E[Z_ij] = [x_ij in A], independent
across pairs.  Products of Z over distinct pairs are unbiased for the
products of the true indicators.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.estimators import Channel
from .._memory import check_call_fits

__all__ = ["debiased_matrix", "indicator_channel", "released_indicator"]


def indicator_channel(R: Any, members: np.ndarray | None) -> Channel:
    """The binary channel of [Y in A] (A: the value indices marked in ``members``; None: any tie)."""
    if members is None:
        return R.channel
    return R.typed_channel.collapse(members)


def released_indicator(R: Any, members: np.ndarray | None, copies: int = 1) -> np.ndarray:
    """Dense (n, n) float64 0/1 matrix of [Y_ij in A] for the stored pairs (upper triangle if undirected).

    ``members`` None means any tie (the release's binary adjacency, typed or
    not).  ``copies`` only sizes the memory check (how many such matrices the
    caller keeps).
    """
    n = R.number_of_nodes()
    check_call_fits(R, 8 * n * n * (copies + 1),
                    f"{copies + 1} dense float64 matrices of {n:,} nodes")
    Y = np.zeros((n, n), dtype=np.float64)
    adj = R.adjacency
    if members is None:
        for i0, bits in adj.row_blocks():
            Y[i0 : i0 + bits.shape[0]] = bits
        return Y
    for v in np.flatnonzero(members):
        if v == 0:
            raise ValueError("the indicator of a set of values holding 'no tie' is not supported")
        for i0, bits in adj.value_row_blocks(int(v)):
            Y[i0 : i0 + bits.shape[0]] += bits
    return Y


def debiased_matrix(R: Any, members: np.ndarray | None, symmetric: bool,
                    copies: int = 1) -> np.ndarray:
    """Z = debiased [Y in A] per pair, zero diagonal; symmetrized for an undirected release.

    An empty A gives the zero matrix (the indicator is known to be 0).
    """
    if members is not None and not np.any(members):
        n = R.number_of_nodes()
        return np.zeros((n, n))
    ch = indicator_channel(R, members)
    z0, z1 = (float(x) for x in ch.debias(np.array([0.0, 1.0])))
    Y = released_indicator(R, members, copies)
    if symmetric:
        Y += Y.T
    Z = z0 + (z1 - z0) * Y
    np.fill_diagonal(Z, 0.0)
    return Z
