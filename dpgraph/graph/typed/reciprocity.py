"""Reciprocity of a directed release: mutual ties, by value for a typed release.

A mutual tie of class A is an unordered pair {i, j} with x_ij in A and
x_ji in A.  The rows ij and ji are released independently, so

    M = sum_{i<j} Z_ij Z_ji

(Z the debiased indicators, :mod:`.dense`) is unbiased, and since distinct
pairs {i, j} share no row, its variance is the sum over pairs of
E[(Z_ij Z_ji)^2] - (x_ij x_ji)^2, estimated without bias by

    sum_{i<j} (Z_ij Z_ji)^2 - Z_ij Z_ji

(E[(Z_ij Z_ji)^2] = E[Z_ij^2] E[Z_ji^2] and x^2 = x for indicators).  The
reciprocity, the share of ties of class A that are reciprocated, is 2M / E
with E = sum_ij Z_ij the debiased count of ties; Fieller's interval uses the
unbiased estimates of Var M, Var E and Cov(2M, E) = 2 sum_{i<j}
(x_ji Var Z_ij + x_ij Var Z_ji), Var Z linear in the truth.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.estimate import Estimate
from ..answers import analytic, finish, finish_ratio
from ..protocol import Release
from .dense import debiased_matrix, indicator_channel
from .estimators import typed

__all__ = ["mutual_ties", "reciprocity"]


def _class(R: Any, value: Any) -> np.ndarray | None:
    """The value indices of the class (None: any tie, on any directed release)."""
    if value is None:
        return None
    ties = typed(R, "value=")
    members = np.zeros(ties.K, dtype=bool)
    members[ties.index_of(value, "value")] = True
    return members


def _directed(R: Any, what: str) -> None:
    if not R.directed:
        raise ValueError(f"{what} needs a directed release (one row per ordered pair); this "
                         "release is undirected")


def _statistics(R: Any, value: Any) -> dict:
    members = _class(R, value)
    Z = debiased_matrix(R, members, symmetric=False, copies=3)
    v0, v1 = indicator_channel(R, members).entry_variances()
    iu = np.triu_indices(Z.shape[0], 1)
    a, b = Z[iu], Z.T[iu]  # Z_ij, Z_ji over i < j
    prod = a * b
    M = float(prod.sum())
    var_M = float(np.sum(prod * prod - prod))
    pairs = prod.size
    var_M = max(var_M, pairs * min(v0, v1) ** 2)  # the least variance any graph gives
    Vhat_a, Vhat_b = v0 + (v1 - v0) * a, v0 + (v1 - v0) * b
    E = float(a.sum() + b.sum())
    var_E = max(float(Vhat_a.sum() + Vhat_b.sum()), 2 * pairs * min(v0, v1))
    cov = 2.0 * float(np.sum(b * Vhat_a + a * Vhat_b))
    return {"M": M, "var_M": var_M, "E": E, "var_E": var_E, "cov": cov, "pairs": pairs}


@analytic
def mutual_ties(R: Release, value: Any = None, proper: bool = True) -> Estimate:
    """Estimated number of mutual ties: pairs {i, j} tied both ways (both of ``value``, if given).

    Any directed release (``value`` needs a typed one).  Unbiased, with the unbiased estimate of its variance (module docstring).

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.DiGraph([(0, 1, {"s": "+"}), (1, 0, {"s": "+"}), (1, 2, {"s": "-"})])
    >>> R = dpgraph.release(G, 3.0, seed=0, directed=True, edge_attr="s", values=["+", "-"])
    >>> R.mutual_ties().feasible_range
    (0.0, 3.0)
    """
    _directed(R, "mutual_ties")
    st = _statistics(R, value)
    est = Estimate(st["M"], float(np.sqrt(st["var_M"])), exact_std=False,
                   feasible_range=(0.0, float(st["pairs"])))
    return finish(est, proper, step=1.0)


@analytic
def reciprocity(R: Release, value: Any = None, proper: bool = True) -> Estimate:
    """Estimated share of ties that are reciprocated (of ``value`` both ways, if given).

    Any directed release (``value`` needs a typed one).  networkx's
    ``overall_reciprocity`` of the input (for ``value=None``):
    2 (mutual ties) / (ties), with Fieller's interval.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.gnp_random_graph(80, 0.1, seed=2, directed=True)
    >>> nx.set_edge_attributes(G, "+", "s")
    >>> r = dpgraph.release(G, 3.0, seed=0, directed=True, edge_attr="s", values=["+", "-"]).reciprocity()
    >>> 0.0 <= r.value <= 1.0
    True
    """
    _directed(R, "reciprocity")
    st = _statistics(R, value)
    return finish_ratio(2 * st["M"], st["E"], 4 * st["var_M"], st["var_E"], st["cov"], proper,
                        0.0, 1.0)
