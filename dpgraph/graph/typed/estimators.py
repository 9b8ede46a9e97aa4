"""Typed and weighted counts from a typed release: cuts, edge counts, degrees, volumes.

Each is a linear statistical query over the pairs it covers with one row
function phi on the K values of a pair: phi(x) = [x = v] for the ties of
value v, phi(x) = w(x) for a weighted count (w declared per value, 0 for "no
tie"), phi(x) = [x != no tie] for ties of any value.  The core answers it
from the histogram of released values over those pairs
(:func:`~dpgraph.core.histogram_estimate`): the unbiased value of mechanism
E's companion estimator, and, because for K > 2 the per-pair variance
depends on the truth, the plug-in estimate of the exact variance (the
debiased histogram in place of the true one, kept within the range the true
variance can take).  ``exact_std`` is then False; the coverage of the
resulting intervals is tested (tests/test_typed_estimators.py).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping
from typing import Any

import numpy as np

from ...core.estimate import Estimate
from ...core.estimators import Channel, histogram_estimate
from ..adjacency import ValuedAdjacency
from ..answers import NodeEstimates, analytic, finish, finish_ratio
from ..protocol import Release
from .encoding import TieValues

__all__ = ["row_function", "typed_count", "value_counts", "value_degree", "value_fraction",
           "value_volume"]


def typed(R: Any, what: str) -> TieValues:
    """The tie values of a typed release; TypeError naming ``what`` for an untyped one."""
    ties = getattr(R, "tie_values", None)
    if ties is None or not isinstance(R.adjacency, ValuedAdjacency):
        raise TypeError(
            f"{what} needs a typed release, dpgraph.release(G, eps, edge_attr=..., values=[...]); "
            "this release is untyped")
    return ties


def row_function(R: Any, value: Any = None, weights: Mapping | None = None) -> np.ndarray:
    """phi on the K values of a pair of the typed release ``R``: :meth:`TieValues.row_function`."""
    ties = typed(R, "value= or weights=" if value is not None or weights is not None else "a typed query")
    return ties.row_function(value, weights)


def typed_count(R: Any, counts: Any, phi: np.ndarray, proper: bool,
                scale: Any = 1.0) -> Estimate:
    """The estimate of sum phi(x) over pairs whose released histogram is ``counts`` (..., K).

    ``scale`` multiplies the answer (a pair counted twice in a volume).  The
    feasible range is rows * [min phi, max phi] (times scale); counts of
    integer-valued phi are rounded to integers when ``proper``.
    """
    c = np.asarray(counts, dtype=float)
    est = histogram_estimate(c, phi, R.typed_channel)
    rows = c.sum(axis=-1)
    low = rows * min(0.0, float(phi.min())) * scale
    high = rows * max(0.0, float(phi.max())) * scale
    if np.ndim(est.value) == 0:
        low, high = float(low), float(high)
    est = Estimate(np.asarray(est.value) * scale if np.ndim(est.value) else est.value * scale,
                   np.asarray(est.std) * abs(scale) if np.ndim(est.std) else est.std * abs(scale),
                   exact_std=est.exact_std, feasible_range=(low, high))
    integer = bool(np.all(phi == np.round(phi))) and float(scale) == round(float(scale))
    return finish(est, proper, step=1.0 if integer else None)


@analytic
def value_counts(R: Release, proper: bool = True) -> dict:
    """Estimated number of ties of each declared value, ``{value: Estimate}``.

    Each is the core's unbiased count over all pairs with phi = [x = v]
    (plug-in standard deviation, see the module docstring); the ties of any
    value are ``R.number_of_edges()``.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.Graph([(0, 1, {"s": "+"}), (1, 2, {"s": "-"}), (2, 3, {"s": "+"})])
    >>> c = dpgraph.release(G, 4.0, seed=0, edge_attr="s", values=["+", "-"]).value_counts()
    >>> sorted(c)
    ['+', '-']
    """
    ties = typed(R, "value_counts")
    counts = R.adjacency.value_counts()
    return {v: typed_count(R, counts, row_function(R, value=v), proper)
            for v in ties.values}


@analytic
def value_fraction(R: Release, value: Any, proper: bool = True) -> Estimate:
    """Estimated fraction of the ties that have value ``value`` (e.g. the negative ties).

    The ratio of two debiased counts over all pairs, with Fieller's
    interval from their plug-in variances and covariance.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.gnp_random_graph(200, 0.1, seed=1)
    >>> for u, v in G.edges: G.edges[u, v]["s"] = "-" if (u + v) % 5 == 0 else "+"
    >>> f = dpgraph.release(G, 3.0, seed=0, edge_attr="s", values=["+", "-"]).value_fraction("-")
    >>> 0.0 <= f.value <= 1.0
    True
    """
    typed(R, "value_fraction")
    counts = np.asarray(R.adjacency.value_counts(), dtype=float)
    phi_v, phi_any = row_function(R, value=value), row_function(R)
    ch = R.typed_channel
    num = histogram_estimate(counts, phi_v, ch)
    den = histogram_estimate(counts, phi_any, ch)
    cov = plugin_covariance(counts, phi_v, phi_any, ch)
    return finish_ratio(num.value, den.value, num.std**2, den.std**2, cov, proper, 0.0, 1.0)


def plugin_covariance(counts: np.ndarray, f: np.ndarray, g: np.ndarray, channel: Channel) -> float:
    """Plug-in covariance of the debiased sums of f and of g over the same pairs.

    Per pair, Cov = (Var(f + g) - Var f - Var g) / 2 given the truth (the
    core's per-value variances); the debiased histogram stands in for the
    true one.
    """
    var = channel.value_variances
    per_value = (var(f + g) - var(f) - var(g)) / 2.0
    return float(channel.debias_histogram(counts) @ per_value)


def _per_node(R: Any, value: Any, weights: Any, direction: str) -> tuple[np.ndarray, np.ndarray]:
    phi = row_function(R, value, weights)
    if not isinstance(direction, str) or direction not in ("out", "in"):
        raise ValueError(f"direction must be 'out' or 'in', got {direction!r}")
    return phi, np.asarray(R.adjacency.value_degrees(direction), dtype=float)


@analytic
def value_degree(R: Release, nbunch: Any = None, value: Any = None,
                 weights: Mapping | None = None, direction: str = "out",
                 proper: bool = True) -> Any:
    """Estimated degree by tie value (or weighted degree) of a node or of every node.

    Each node's n - 1 pairs (its out-pairs, or in-pairs with
    ``direction="in"``, for a directed release) form one typed count.

    Parameters
    ----------
    nbunch : node, iterable of nodes or None
        As for :func:`~dpgraph.graph.analytics.degree`.
    value : a declared tie value, optional
        Count ties of this value; default: ties of any value.
    weights : mapping {tie value: weight}, optional
        A weighted degree (e.g. net trust).
    direction : {"out", "in"}, default "out"
        For a directed release; ignored for an undirected one.
    proper : bool, default True

    Returns
    -------
    Estimate or NodeEstimates

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.star_graph(30)
    >>> nx.set_edge_attributes(G, "+", "s")
    >>> R = dpgraph.release(G, 3.0, seed=0, edge_attr="s", values=["+", "-"])
    >>> d = R.value_degree(0, value="+")
    >>> abs(d.value - 30) < 4 * d.std
    True
    """
    typed(R, "value_degree")
    phi, deg = _per_node(R, value, weights, direction)
    est = typed_count(R, deg, phi, proper)
    nodes = R.node_index.nodes  # by position
    view = NodeEstimates(nodes, est)
    if nbunch is None:
        return view
    if nbunch in view:
        return view[nbunch]
    idx = R.positions(nbunch, "nbunch")
    return NodeEstimates(tuple(nodes[i] for i in idx.tolist()), est[idx])


@analytic
def value_volume(R: Release, S: Iterable[Hashable], value: Any = None,
                 weights: Mapping | None = None, direction: str = "out",
                 proper: bool = True) -> Estimate:
    """Estimated sum over S of the degrees by tie value (or weighted degrees).

    Undirected: 2 (ties within S) + (ties between S and the rest), the two
    parts independent.  Directed: ties leaving S (``direction="out"``) or
    entering it (``"in"``).

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.complete_graph(20)
    >>> nx.set_edge_attributes(G, "+", "s")
    >>> R = dpgraph.release(G, 3.0, seed=0, edge_attr="s", values=["+", "-"])
    >>> v = R.value_volume(range(10), value="+")
    >>> abs(v.value - 190) < 4 * v.std
    True
    """
    typed(R, "value_volume")
    phi = row_function(R, value, weights)
    if direction not in ("out", "in"):
        raise ValueError(f"direction must be 'out' or 'in', got {direction!r}")
    s = R.positions(S, "S")
    member = np.ones(R.number_of_nodes(), dtype=bool)
    member[s] = False
    rest = np.flatnonzero(member)
    adj = R.adjacency
    within = adj.value_within_counts(s)
    if rest.size == 0:
        across = None
    elif R.directed and direction == "in":
        across = adj.value_cut_counts(rest, s)
    else:
        across = adj.value_cut_counts(s, rest)
    w_est = typed_count(R, within, phi, False, scale=1.0 if R.directed else 2.0)
    value, var = w_est.value, w_est.std**2
    low, high = w_est.feasible_range
    if across is not None:
        a_est = typed_count(R, across, phi, False)
        value, var = value + a_est.value, var + a_est.std**2
        low, high = low + a_est.feasible_range[0], high + a_est.feasible_range[1]
    est = Estimate(value, math.sqrt(var), exact_std=False, feasible_range=(low, high))
    integer = bool(np.all(phi == np.round(phi)))
    return finish(est, proper, step=1.0 if integer else None)
