"""PrivateGraph: the released synthetic graph and its companion estimators."""

from __future__ import annotations

from typing import Any, Hashable, Iterable, Sequence

import networkx as nx
import numpy as np

from ..core.estimators import Channel, Estimate, count_estimate, project
from ..core.probabilities import RRProbabilities
from .analytics.mixin import AnalyticsMixin
from .encoding import NodeIndex
from .io import IOMixin

__all__ = ["PrivateGraph"]


class PrivateGraph(AnalyticsMixin, IOMixin):
    """An eps-edge-DP synthetic graph with debiased, error-barred estimators.

    Built by :func:`dpgraph.release`; holds only the released pairs and public
    metadata (vertex set, epsilon, the exact flip probability), never the
    input graph.  Every answer is post-processing of the release, so any
    number of queries costs no further privacy.

    Attributes
    ----------
    nodes : tuple
        The public vertex set in canonical order.
    directed : bool
        Whether rows are ordered pairs.
    epsilon : float
        The privacy parameter asked for.
    flip_probability : float
        p', the certified dyadic flip probability actually sampled
        (>= e^-eps / (1 + e^-eps)).
    realized_epsilon : float
        ln of the exact worst-case likelihood ratio of the sampler, <= epsilon.
    channel : Channel
        P(released | true) of a pair, used by every estimator.
    """

    def __init__(
        self,
        adjacency: Any,
        index: NodeIndex,
        probabilities: RRProbabilities,
        channel: Channel | None = None,
        keep: float = 1.0,
    ) -> None:
        self._adj = adjacency
        self._index = index
        self.probabilities = probabilities
        self.channel = channel if channel is not None else Channel.randomized_response(probabilities)
        self.keep = float(keep)

    # ---- public metadata ------------------------------------------------------
    @property
    def nodes(self) -> tuple:
        """The public vertex set, in canonical order (rows of ``to_scipy_sparse``)."""
        return self._index.nodes

    @property
    def directed(self) -> bool:
        """True when rows are ordered pairs (a released DiGraph)."""
        return self._adj.directed

    @property
    def epsilon(self) -> float:
        """The privacy parameter of the release, per vertex pair."""
        return self.probabilities.epsilon

    @property
    def flip_probability(self) -> float:
        """p' = m / 2^64, the certified flip probability actually sampled."""
        return self.probabilities.move_probability

    @property
    def realized_epsilon(self) -> float:
        """ln of the exact worst-case likelihood ratio of the sampler, <= epsilon."""
        return self.probabilities.realized_epsilon

    def number_of_nodes(self) -> int:
        """Size of the public vertex set."""
        return len(self._index)

    @property
    def number_of_pairs(self) -> int:
        """Rows of the database: n(n-1)/2 unordered (n(n-1) ordered) pairs."""
        n = self.number_of_nodes()
        return n * (n - 1) if self.directed else n * (n - 1) // 2

    def number_of_edges(self) -> int:
        """Edges of the *released* graph (raw, not debiased; see ``edge_count``)."""
        return self._adj.number_of_edges()

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        keep = "" if self.keep == 1.0 else f", keep={self.keep:.6g}"
        return (
            f"PrivateGraph({kind}, nodes={self.number_of_nodes()}, epsilon={self.epsilon:g}, "
            f"flip_probability={self.flip_probability:.6g}{keep}, "
            f"released_edges={self.number_of_edges()})"
        )

    # ---- cut queries --------------------------------------------------------------
    def _sides(self, S: Iterable[Hashable], T: Iterable[Hashable]) -> tuple[np.ndarray, np.ndarray]:
        s = self._index.indices(S, "S")
        t = self._index.indices(T, "T")
        overlap = np.intersect1d(s, t, assume_unique=True).size
        if overlap:
            raise ValueError(
                f"S and T share {overlap} node(s); a cut query needs disjoint sides"
            )
        return s, t

    def _finish(self, est: Estimate, proper: bool) -> Estimate:
        if not isinstance(proper, (bool, np.bool_)):
            raise TypeError(f"proper must be True or False, got {type(proper).__name__}")
        return project(est, est.low, est.high, step=1.0) if proper else est

    def cut(self, S: Iterable[Hashable], T: Iterable[Hashable], proper: bool = False) -> Estimate:
        """Estimate the number of edges between disjoint node sets S and T.

        Unbiased, with the exact graph-independent standard deviation
        sqrt(|S||T| p'(1-p')) / (1 - 2p') (DESIGN.md section 1).  For a
        directed release, edges from S to T.

        Parameters
        ----------
        S, T : collections of nodes
            Disjoint, non-empty; duplicates are ignored.
        proper : bool, default False
            Round and clip the estimate to an integer in 0..|S||T|.

        Returns
        -------
        Estimate

        Examples
        --------
        >>> import networkx as nx, dpgraph
        >>> G = nx.karate_club_graph()
        >>> R = dpgraph.release(G, epsilon=2.0, seed=1)      # seed: reproducible, not for production
        >>> S, T = range(0, 17), range(17, 34)
        >>> est = R.cut(S, T)
        >>> truth = nx.cut_size(G, S, T)
        >>> abs(est.value - truth) < 5 * est.std
        True
        """
        s, t = self._sides(S, T)
        observed = self._adj.cut_count(s, t)
        return self._finish(count_estimate(observed, s.size * t.size, self.channel), proper)

    def cuts(self, pairs: Sequence[tuple[Iterable[Hashable], Iterable[Hashable]]],
             proper: bool = False) -> Estimate:
        """Estimate many cut queries at once; a batch :class:`Estimate`.

        ``cuts(pairs)[k]`` equals ``cut(*pairs[k])``; the released counts of
        all queries are computed in one pass over the packed rows.

        Parameters
        ----------
        pairs : sequence of (S, T)
            Each S and T a non-empty collection of nodes, disjoint.
        proper : bool, default False
            Round and clip every estimate to an integer in 0..|S||T|.

        Returns
        -------
        Estimate
            A batch: ``.value`` and ``.std`` are arrays, one entry per pair.

        Raises
        ------
        TypeError, ValueError
            For a malformed pair, an empty or overlapping side, or unknown
            nodes; the message names the pair (``pairs[k]``).

        Examples
        --------
        >>> import networkx as nx, dpgraph
        >>> R = dpgraph.release(nx.path_graph(6), epsilon=1.0, seed=0)
        >>> est = R.cuts([([0, 1], [2, 3]), ([4], [5])])
        >>> len(est), est.value.shape
        (2, (2,))
        """
        if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Iterable):
            raise TypeError("pairs must be a sequence of (S, T) tuples")
        sides, rows = [], []
        for k, pair in enumerate(pairs):
            try:
                S, T = pair
            except (TypeError, ValueError):
                raise TypeError(f"pairs[{k}] must be an (S, T) tuple of node collections") from None
            try:
                s, t = self._sides(S, T)
            except (TypeError, ValueError) as exc:
                raise type(exc)(f"pairs[{k}]: {exc}") from None
            sides.append((s, t))
            rows.append(s.size * t.size)
        if not rows:
            raise ValueError("pairs is empty; pass at least one (S, T) query")
        if hasattr(self._adj, "cut_counts"):  # one pass over the rows for all queries
            observed = self._adj.cut_counts(sides)
        else:
            observed = [self._adj.cut_count(s, t) for s, t in sides]
        est = count_estimate(np.asarray(observed, float), np.asarray(rows, float), self.channel)
        return self._finish(est, proper)

    def edges_within(self, S: Iterable[Hashable], proper: bool = False) -> Estimate:
        """Estimate the number of edges with both ends in S.

        Parameters
        ----------
        S : collection of nodes
            At least 2 distinct nodes.
        proper : bool, default False
            Round and clip to an integer in 0..(number of pairs in S).

        Returns
        -------
        Estimate
            Unbiased, with the exact std for a full release.

        Raises
        ------
        ValueError
            If S has fewer than 2 nodes or nodes not in the graph.

        Examples
        --------
        >>> import networkx as nx, dpgraph
        >>> R = dpgraph.release(nx.complete_graph(8), epsilon=3.0, seed=0)
        >>> e = R.edges_within(range(8))
        >>> abs(e.value - 28) < 5 * e.std
        True
        """
        s = self._index.indices(S, "S")
        k = s.size
        pairs = k * (k - 1) if self.directed else k * (k - 1) // 2
        if pairs == 0:
            raise ValueError("S needs at least 2 nodes to contain a vertex pair")
        return self._finish(count_estimate(self._adj.within_count(s), pairs, self.channel), proper)

    # ---- the released graph as data --------------------------------------------
    def to_scipy_sparse(self, format: str = "csr") -> Any:
        """The released adjacency as a scipy sparse array (symmetric if undirected).

        Rows and columns follow ``nodes``.
        """
        import scipy.sparse as sp

        r, c = self._adj.edge_array()
        n = self.number_of_nodes()
        if not self.directed:
            r, c = np.concatenate([r, c]), np.concatenate([c, r])
        data = np.ones(r.size, dtype=np.int8)
        return sp.coo_array((data, (r, c)), shape=(n, n)).asformat(format)

    def to_networkx(self) -> nx.Graph:
        """The released synthetic graph as a networkx (Di)Graph.

        Its raw statistics are biased (at eps = 1 it has far more edges than
        the input); use the estimators of this class for answers.
        """
        H = nx.DiGraph() if self.directed else nx.Graph()
        H.add_nodes_from(self.nodes)
        r, c = self._adj.edge_array()
        labels = self.nodes
        H.add_edges_from(zip(map(labels.__getitem__, r.tolist()), map(labels.__getitem__, c.tolist())))
        return H
