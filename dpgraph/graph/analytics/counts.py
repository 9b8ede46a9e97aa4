"""Edge count, density, degrees and degree sums (volumes) from one release.

All go through the core's :func:`~dpgraph.core.count_estimate` /
:func:`~dpgraph.core.unbiased_estimate`: unbiased, exact standard deviations.
With ``proper=True`` (the default of every analytic) the value is projected
onto its feasible range and the interval, centred on the unbiased value, is
clipped to it; ``proper=False`` returns the unbiased value itself.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any

import numpy as np

from ...core.estimate import Estimate
from ...core.estimators import count_estimate, unbiased_estimate
from ...validation import validate_params
from ..answers import PROPER, NodeEstimates, analytic, check_release, finish, require_undirected
from ..degree_channel import (
    channel_of,
    fused_degrees,
    fused_number_of_edges,
    fused_volume,
    node_view,
)
from ..kinds import offers
from ..protocol import Release
from ._shared import _has_node, _observed_degrees
from .cut_queries import cut

__all__ = ["degree", "density", "density_between", "number_of_edges", "volume"]


@analytic
@validate_params(proper=PROPER)
def number_of_edges(R: Release, proper: bool = True) -> Estimate:
    """Estimate of the number of edges of the input graph, networkx's ``number_of_edges``.

    The core's debiased count over all N vertex pairs, with its exact
    standard deviation.  The raw count of the released graph (about p' N
    too many at eps = 1) is ``R.number_of_released_edges()``.

    Parameters
    ----------
    proper : bool, default True
        Project the value onto [0, N] (the interval stays centred on the
        unbiased count); False returns the unbiased count.

    Returns
    -------
    Estimate
        The debiased edge count with its exact standard deviation.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.gnp_random_graph(60, 0.2, seed=1)
    >>> R = dpgraph.release(G, epsilon=2.0, seed=3)
    >>> e = R.number_of_edges()
    >>> abs(e.value - G.number_of_edges()) < 4 * e.std
    True
    """
    check_release(R)
    if channel_of(R) is not None:  # fused with the noisy degrees
        return fused_number_of_edges(R, proper)
    observed = R.number_of_released_edges()
    return finish(count_estimate(observed, R.number_of_pairs(), R.channel), proper, step=1.0)


@analytic
@validate_params(proper=PROPER)
def density(R: Release, proper: bool = True) -> Estimate:
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
    check_release(R)
    N = float(R.number_of_pairs())
    if channel_of(R) is not None:  # the fused edge count over N
        e = fused_number_of_edges(R, False)
        return finish(Estimate(e.raw / N, e.std / N, feasible_range=(0.0, 1.0)), proper, 0.0, 1.0)
    est = unbiased_estimate(R.number_of_released_edges(), [[0.0, 1.0]], [N], R.channel, normalizer=N)
    return finish(est, proper, 0.0, 1.0)


def _degree_estimate(R: Any, proper: bool) -> Estimate:
    """Every node's degree as a batch (fused with the noisy degrees on a composed release:
    what ``synthesize`` takes as its degree prior and its nodes' own estimates)."""
    if channel_of(R) is not None:
        return fused_degrees(R, proper)[0]
    n = R.number_of_nodes()
    obs = _observed_degrees(R).astype(float)
    return finish(count_estimate(obs, np.full(n, float(n - 1)), R.channel), proper, step=1.0)


@analytic
@validate_params(proper=PROPER)
def degree(R: Release, nbunch: Any = None, proper: bool = True) -> Any:
    """Estimated degree of a node, or node-keyed degrees, like ``networkx`` ``G.degree``.

    Each degree is the core's unbiased count over the node's n - 1 pairs
    (out-degree if directed) with its exact standard deviation, projected
    onto [0, n - 1] when ``proper``.

    Parameters
    ----------
    nbunch : node, iterable of nodes or None, default None
        A single node: its estimate.  An iterable of nodes, or None for all
        nodes: a :class:`NodeEstimates` view (iterating gives (node, estimate)
        pairs, as networkx's degree view does).  (The degree
        *sum* of a set is :func:`volume`.)
    proper : bool, default True
        Project each value onto [0, n - 1]; False returns the unbiased ones.

    Returns
    -------
    Estimate or NodeEstimates

    Raises
    ------
    ValueError
        A node that is not in the release (the message names it).

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
    >>> [v for v, d in R.degree([1, 2])]
    [1, 2]
    """
    check_release(R)
    fused = node_view(R, proper)  # a composed release: pairs and noisy degrees, fused
    if fused is None and nbunch is not None and _has_node(R, nbunch) \
            and getattr(R, "tie_values", None) is None and "store" not in offers(R):
        # one node in memory: its own row, not every node's (the same estimate as
        # R.degree()[v]); a store answers from its one cached degree pass instead
        return cut(R, [nbunch], None, proper=proper)
    est, view = fused or (_degree_estimate(R, proper), NodeEstimates)
    nodes = R.node_index.nodes  # by position
    if nbunch is None:
        return view(nodes, est)
    if _has_node(R, nbunch):  # a typed or composed release: from every node's estimates
        return view(nodes, est)[nbunch]
    if isinstance(nbunch, (str, bytes)) or not isinstance(nbunch, Iterable):
        raise ValueError(f"nbunch: node {nbunch!r} is not in the release; pass a node of "
                         "R.nodes or a collection of them")
    idx = R.positions(nbunch, "nbunch")
    picked = est[idx]
    return view(tuple(nodes[i] for i in idx), picked)


@analytic
@validate_params(proper=PROPER)
def volume(R: Release, S: Iterable[Hashable], proper: bool = True) -> Estimate:
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
    Estimate

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
    require_undirected(R, "volume(S)")
    s = R.positions(S, "S")
    if channel_of(R) is not None:
        return fused_volume(R, s, proper)
    n, k = R.number_of_nodes(), s.size
    obs = float(_observed_degrees(R)[s].sum())
    within = k * (k - 1) / 2.0
    across = float(k * (n - k))
    est = unbiased_estimate(
        obs, np.array([[0.0, 2.0], [0.0, 1.0]]), np.array([within, across]), R.channel
    )
    return finish(est, proper, 0.0, 2 * within + across, step=1.0)


@analytic
@validate_params(proper=PROPER)
def density_between(R: Release, S: Iterable[Hashable], T: Iterable[Hashable],
                    proper: bool = True) -> Estimate:
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
    Estimate
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
    check_release(R)
    s, t = R.cut_positions(S, T)
    rows = float(s.size * t.size)
    obs = R.adjacency.cut_count(s, t)
    est = unbiased_estimate(obs, [[0.0, 1.0]], [rows], R.channel, normalizer=rows)
    return finish(est, proper, 0.0, 1.0)
