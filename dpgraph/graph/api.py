"""``dpgraph.release``: the entry point a curator calls."""

from __future__ import annotations

from typing import Any

from ..core.probabilities import rr_probabilities
from ..core.randomness import SeedLike, resolve_random
from .encoding import encode_graph
from .private import PrivateGraph
from .release import release_packed

__all__ = ["release"]


def release(G: Any, epsilon: float, seed: SeedLike = None, *, directed: bool = False) -> PrivateGraph:
    """Release ``G`` as an epsilon-edge-DP synthetic graph (mechanism E).

    Every vertex pair is flipped independently with the certified dyadic
    probability p' >= e^-eps / (1 + e^-eps), so graphs differing in one pair
    give output distributions within a factor e^eps.  The vertex set is
    public; edge and node attributes are dropped.

    Parameters
    ----------
    G : networkx.Graph or networkx.DiGraph
        Simple graph: no self-loops, no parallel edges, at least 2 nodes.
    epsilon : float
        Privacy parameter per vertex pair, finite and > 0.
    seed : None, int or numpy.random.Generator
        ``None`` (default) draws from a cryptographically secure stream keyed
        from OS entropy: use it for every real release.  An int or Generator
        makes the release reproducible, which is for tests and experiments
        only (a statistical generator can be predicted from its output).
    directed : bool, default False
        Opt in to releasing a DiGraph, one row per ordered pair.

    Returns
    -------
    PrivateGraph

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> R = dpgraph.release(nx.karate_club_graph(), epsilon=1.0, seed=0)
    >>> R.number_of_nodes(), R.directed
    (34, False)
    """
    rr = rr_probabilities(epsilon, 2)
    enc = encode_graph(G, directed=directed)
    source = resolve_random(seed)
    adjacency = release_packed(enc, rr, source)
    return PrivateGraph(adjacency, enc.index, rr)
