"""Edge count, density, degrees and degree sums from one release.

All go through the core's :func:`~dpgraph.core.count_estimate` /
:func:`~dpgraph.core.unbiased_estimate`: exact standard deviations.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import TYPE_CHECKING

import numpy as np

from ...core.estimators import Estimate, count_estimate, unbiased_estimate
from ._shared import _check_release, _observed_degrees, _undirected

if TYPE_CHECKING:  # pragma: no cover
    from ..private import PrivateGraph



def edge_count(R: PrivateGraph) -> Estimate:
    """Unbiased estimate of the number of edges of the input graph.

    ``R.number_of_edges()`` is the raw count of the release (about
    p' N too many at eps = 1); this is the core's debiased count over all
    N vertex pairs, with its exact standard deviation.

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
    return count_estimate(R.number_of_edges(), R.number_of_pairs, R.channel)


def density(R: PrivateGraph) -> Estimate:
    """Unbiased estimate of the density m / N (N = number of vertex pairs).

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
    return Estimate(est.value, est.std, 0.0, 1.0, est.exact_std)


def degrees(R: PrivateGraph) -> Estimate:
    """Unbiased estimate of every node's degree (out-degree if directed).

    Returns a batch :class:`Estimate` in the order of ``R.nodes``.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.star_graph(40)
    >>> R = dpgraph.release(G, epsilon=2.0, seed=2)
    >>> d = R.degrees()
    >>> len(d) == 41 and abs(d[0].value - 40) < 4 * d[0].std
    True
    """
    _check_release(R)
    n = R.number_of_nodes()
    obs = _observed_degrees(R).astype(float)
    return count_estimate(obs, np.full(n, float(n - 1)), R.channel)


def degree(R: PrivateGraph, S: Iterable[Hashable]) -> Estimate:
    """Unbiased estimate of the degree sum of a node set S (sum of its degrees).

    The degree sum counts each edge inside S twice and each edge leaving S
    once: the row function is 2 on pairs within S and 1 on pairs from S to the
    rest, so the core's estimator applies directly (undirected releases).

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.karate_club_graph()
    >>> R = dpgraph.release(G, epsilon=2.0, seed=0)
    >>> e = R.degree([0, 1, 2])
    >>> truth = sum(d for _, d in G.degree([0, 1, 2]))
    >>> abs(e.value - truth) < 4 * e.std
    True
    """
    _undirected(R, "degree(S)")
    s = R._index.indices(S, "S")
    n, k = R.number_of_nodes(), s.size
    obs = float(_observed_degrees(R)[s].sum())
    within = k * (k - 1) / 2.0
    across = float(k * (n - k))
    est = unbiased_estimate(
        obs, np.array([[0.0, 2.0], [0.0, 1.0]]), np.array([within, across]), R.channel
    )
    return Estimate(est.value, est.std, 0.0, 2 * within + across, est.exact_std)


def density_between(R: PrivateGraph, S: Iterable[Hashable], T: Iterable[Hashable]) -> Estimate:
    """Unbiased estimate of the edge density between disjoint node sets S and T.

    cut(S, T) / (|S||T|), through the core with normalizer |S||T|.

    Parameters
    ----------
    S, T : iterable of node labels
        Disjoint node sets of the release.

    Returns
    -------
    Estimate
        cut(S, T) / (|S| |T|), unbiased, with its standard deviation.

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
    s, t = R._sides(S, T)
    rows = float(s.size * t.size)
    obs = R._adj.cut_count(s, t)
    est = unbiased_estimate(obs, [[0.0, 1.0]], [rows], R.channel, normalizer=rows)
    return Estimate(est.value, est.std, 0.0, 1.0, est.exact_std)
