"""Edge count, density, degrees and degree sums (volumes) from one release.

All go through the core's :func:`~dpgraph.core.count_estimate` /
:func:`~dpgraph.core.unbiased_estimate`: unbiased, exact standard deviations.
With ``proper=True`` (the default of every analytic) the value is projected
onto its feasible range and the interval, centred on the unbiased value, is
clipped to it; ``proper=False`` returns the unbiased value itself.
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from ...core.estimators import Estimate, StatisticEstimate, count_estimate, unbiased_estimate
from ._shared import (
    _check_release,
    _cut_count,
    _cut_positions,
    _has_node,
    _observed_degrees,
    _positions,
    _undirected,
    finish,
)

if TYPE_CHECKING:  # pragma: no cover
    from ..private import PrivateGraph

__all__ = ["NodeEstimates", "degree", "degrees", "density", "density_between", "edge_count",
           "volume"]


class NodeEstimates(Mapping):
    """Per-node estimates keyed by node label, like networkx's ``G.degree``.

    ``est[v]`` is the :class:`~dpgraph.core.StatisticEstimate` of node v;
    ``to_dict()`` gives ``{node: value}``; ``estimate`` is the batch
    estimate (arrays in ``nodes`` order).  (``R.degree(S)`` used to be the
    degree sum of S; that is now ``R.volume(S)``, and asking a NodeEstimates
    for ``value`` says so.)

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> R = dpgraph.release(nx.path_graph(3), epsilon=2.0, seed=0)
    >>> d = R.degree()
    >>> sorted(d) == [0, 1, 2] and set(d.to_dict()) == {0, 1, 2}
    True
    """

    def __init__(self, nodes: tuple, estimate: StatisticEstimate) -> None:
        self.nodes = tuple(nodes)
        self.estimate = estimate
        self._pos = {v: i for i, v in enumerate(self.nodes)}

    def __getattr__(self, name: str) -> Any:
        # R.degree(S) used to be the degree sum of S: say where it went instead of
        # returning per-node arrays where a scalar was expected
        if name in ("value", "std", "ci", "raw", "resolved"):
            raise AttributeError(
                f"NodeEstimates has no {name!r}: R.degree(nbunch) is node-keyed like networkx "
                f"(use .estimate.{name} for the batch, or R.volume(S) for the degree sum of a set)"
            )
        raise AttributeError(name)

    def __getitem__(self, v: Hashable) -> Estimate:
        try:
            i = self._pos[v]
        except (KeyError, TypeError):
            raise KeyError(v) from None
        e = self.estimate[i]
        return StatisticEstimate(e.value, e.std, e.exact_std, e.center,
                                 feasible_range=e.feasible_range, proper=self.estimate.proper,
                                 raw=np.asarray(self.estimate.raw)[i],
                                 resolved=self.estimate.resolved)

    def __iter__(self) -> Iterator:
        return iter(self.nodes)

    def __len__(self) -> int:
        return len(self.nodes)

    def to_dict(self) -> dict:
        """``{node: estimated value}``."""
        return dict(zip(self.nodes, np.asarray(self.estimate.value).tolist()))

    def __repr__(self) -> str:  # a summary, never the values
        return f"NodeEstimates({len(self)} nodes)"


def edge_count(R: PrivateGraph, proper: bool = True) -> StatisticEstimate:
    """Estimate of the number of edges of the input graph.

    ``R.number_of_edges()`` is the raw count of the release (about
    p' N too many at eps = 1); this is the core's debiased count over all
    N vertex pairs, with its exact standard deviation.

    Parameters
    ----------
    proper : bool, default True
        Project the value onto [0, N] (the interval stays centred on the
        unbiased count); False returns the unbiased count.

    Returns
    -------
    StatisticEstimate
        The debiased edge count with its exact standard deviation.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.gnp_random_graph(60, 0.2, seed=1)
    >>> R = dpgraph.release(G, epsilon=2.0, seed=3)
    >>> e = R.edge_count()
    >>> abs(e.value - G.number_of_edges()) < 4 * e.std
    True
    """
    _check_release(R)
    return finish(count_estimate(R.number_of_edges(), R.number_of_pairs, R.channel), proper)


def density(R: PrivateGraph, proper: bool = True) -> StatisticEstimate:
    """Estimate of the density m / N (N = number of vertex pairs), in [0, 1].

    Parameters
    ----------
    proper : bool, default True
        Project the value onto [0, 1]; False returns the unbiased density.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> R = dpgraph.release(nx.complete_graph(30), epsilon=3.0, seed=0)
    >>> d = R.density()
    >>> abs(d.value - 1.0) < 4 * d.std
    True
    """
    _check_release(R)
    N = float(R.number_of_pairs)
    est = unbiased_estimate(R.number_of_edges(), [[0.0, 1.0]], [N], R.channel, normalizer=N)
    return finish(est, proper, 0.0, 1.0)


def _degree_estimate(R: Any, proper: bool) -> StatisticEstimate:
    n = R.number_of_nodes()
    obs = _observed_degrees(R).astype(float)
    return finish(count_estimate(obs, np.full(n, float(n - 1)), R.channel), proper)


def degree(R: PrivateGraph, nbunch: Any = None, proper: bool = True) -> Any:
    """Estimated degree of a node, or node-keyed degrees, like ``networkx`` ``G.degree``.

    Each degree is the core's unbiased count over the node's n - 1 pairs
    (out-degree if directed) with its exact standard deviation, projected
    onto [0, n - 1] when ``proper``.

    Parameters
    ----------
    nbunch : node, iterable of nodes or None, default None
        A single node: its estimate.  An iterable of nodes, or None for all
        nodes: a :class:`NodeEstimates` mapping keyed by node.  (The degree
        *sum* of a set is :func:`volume`.)
    proper : bool, default True
        Project each value onto [0, n - 1]; False returns the unbiased ones.

    Returns
    -------
    StatisticEstimate or NodeEstimates

    Raises
    ------
    ValueError
        A node that is not in the release.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.star_graph(40)
    >>> R = dpgraph.release(G, epsilon=2.0, seed=2)
    >>> d = R.degree(0)
    >>> abs(d.value - 40) < 4 * d.std
    True
    >>> len(R.degree([1, 2, 3])), len(R.degree())
    (3, 41)
    """
    _check_release(R)
    est = _degree_estimate(R, proper)
    nodes = R.nodes
    if nbunch is None:
        return NodeEstimates(nodes, est)
    if _has_node(R, nbunch):
        return NodeEstimates(nodes, est)[nbunch]
    idx = _positions(R, nbunch, "nbunch")
    lower, upper = est.feasible_range
    picked = StatisticEstimate(np.asarray(est.value)[idx], np.asarray(est.std)[idx],
                               est.exact_std,
                               feasible_range=(np.asarray(lower)[idx] if np.ndim(lower) else lower,
                                               np.asarray(upper)[idx] if np.ndim(upper) else upper),
                               proper=est.proper,
                               center=None if est.center is None else np.asarray(est.center)[idx],
                               raw=np.asarray(est.raw)[idx], resolved=est.resolved)
    return NodeEstimates(tuple(nodes[i] for i in idx), picked)


def degrees(R: PrivateGraph) -> Estimate:
    """Deprecated: unbiased degree of every node as a batch Estimate in ``R.nodes`` order.

    Use :func:`degree` (``R.degree()``), node-keyed like networkx.

    Examples
    --------
    >>> import networkx as nx, dpgraph, warnings
    >>> R = dpgraph.release(nx.star_graph(40), epsilon=2.0, seed=2)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     len(R.degrees())
    41
    """
    warnings.warn("degrees() is deprecated; use degree() (node-keyed, like networkx G.degree)",
                  DeprecationWarning, stacklevel=3)
    _check_release(R)
    n = R.number_of_nodes()
    obs = _observed_degrees(R).astype(float)
    return count_estimate(obs, np.full(n, float(n - 1)), R.channel)


def volume(R: PrivateGraph, S: Iterable[Hashable], proper: bool = True) -> StatisticEstimate:
    """Estimate of the volume (degree sum) of a node set S, networkx's ``volume``.

    The degree sum counts each edge inside S twice and each edge leaving S
    once: the row function is 2 on pairs within S and 1 on pairs from S to the
    rest, so the core's estimator applies directly (undirected releases).

    Parameters
    ----------
    S : iterable of node labels
        A non-empty node set of the release.
    proper : bool, default True
        Project the value onto its feasible range [0, 2 C(|S|, 2) + |S|(n - |S|)].

    Returns
    -------
    StatisticEstimate

    Raises
    ------
    ValueError
        S empty or with a node not in the release; a directed release.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.karate_club_graph()
    >>> R = dpgraph.release(G, epsilon=2.0, seed=0)
    >>> e = R.volume([0, 1, 2])
    >>> truth = nx.volume(G, [0, 1, 2])
    >>> abs(e.value - truth) < 4 * e.std
    True
    """
    _undirected(R, "volume(S)")
    s = _positions(R, S, "S")
    n, k = R.number_of_nodes(), s.size
    obs = float(_observed_degrees(R)[s].sum())
    within = k * (k - 1) / 2.0
    across = float(k * (n - k))
    est = unbiased_estimate(
        obs, np.array([[0.0, 2.0], [0.0, 1.0]]), np.array([within, across]), R.channel
    )
    return finish(est, proper, 0.0, 2 * within + across)


def density_between(R: PrivateGraph, S: Iterable[Hashable], T: Iterable[Hashable],
                    proper: bool = True) -> StatisticEstimate:
    """Unbiased estimate of the edge density between disjoint node sets S and T.

    cut(S, T) / (|S||T|), through the core with normalizer |S||T|.

    Parameters
    ----------
    S, T : iterable of node labels
        Disjoint node sets of the release.
    proper : bool, default True
        Project the value onto [0, 1]; False returns the unbiased density.

    Returns
    -------
    StatisticEstimate
        cut(S, T) / (|S| |T|), with its exact standard deviation.

    Raises
    ------
    ValueError
        A node not in the release, or S and T sharing a node.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.complete_bipartite_graph(20, 20)
    >>> R = dpgraph.release(G, epsilon=2.0, seed=0)
    >>> e = R.density_between(range(20), range(20, 40))
    >>> abs(e.value - 1.0) < 4 * e.std
    True
    """
    _check_release(R)
    s, t = _cut_positions(R, S, T)
    rows = float(s.size * t.size)
    obs = _cut_count(R, s, t)
    est = unbiased_estimate(obs, [[0.0, 1.0]], [rows], R.channel, normalizer=rows)
    return finish(est, proper, 0.0, 1.0)
