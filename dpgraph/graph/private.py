"""PrivateGraph: the released synthetic graph and its companion estimators."""

from __future__ import annotations

from typing import Any, Hashable, Iterable, Sequence

import networkx as nx
import numpy as np

from ..core.estimators import Channel, Estimate, count_estimate, project
from ..core.probabilities import RRProbabilities
from .adjacency import Adjacency
from .analytics.mixin import AnalyticsMixin
from .encoding import NodeIndex, pair_count
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
        adjacency: Adjacency,
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

    # ---- the release as data, by position -------------------------------------
    @property
    def adjacency(self) -> Adjacency:
        """The released pairs (an :class:`~dpgraph.graph.adjacency.Adjacency`), read-only.

        Its methods take and return node *positions* 0..n-1 in ``nodes``
        order; map labels with :meth:`positions`.  Counts read from it are
        raw (biased); the estimators of this class debias them.
        """
        return self._adj

    @property
    def node_index(self) -> NodeIndex:
        """The public map between node labels and positions (``nodes`` order)."""
        return self._index

    def positions(self, labels: Iterable[Hashable], name: str = "nodes") -> np.ndarray:
        """Sorted distinct positions of a non-empty collection of node labels.

        Parameters
        ----------
        labels : collection of nodes
        name : str, default "nodes"
            Argument name used in error messages.

        Raises
        ------
        TypeError, ValueError
            If ``labels`` is not a collection, is empty or holds unknown nodes.

        Examples
        --------
        >>> import networkx as nx, dpgraph
        >>> R = dpgraph.release(nx.path_graph(["a", "b", "c"]), epsilon=1.0, seed=0)
        >>> R.positions(["c", "a"]).tolist()
        [0, 2]
        """
        return self._index.indices(labels, name)

    def cut_positions(self, S: Iterable[Hashable],
                      T: Iterable[Hashable]) -> tuple[np.ndarray, np.ndarray]:
        """Positions of the two sides of a cut query; refuses overlapping sides.

        Examples
        --------
        >>> import networkx as nx, dpgraph
        >>> R = dpgraph.release(nx.path_graph(4), epsilon=1.0, seed=0)
        >>> [p.tolist() for p in R.cut_positions([1, 0], [3])]
        [[0, 1], [3]]
        """
        s = self._index.indices(S, "S")
        t = self._index.indices(T, "T")
        overlap = np.intersect1d(s, t, assume_unique=True).size
        if overlap:
            raise ValueError(
                f"S and T share {overlap} node(s); a cut query needs disjoint sides"
            )
        return s, t

    def released_degrees(self) -> np.ndarray:
        """Raw degree of every node in the released graph (``nodes`` order, int64).

        Out-degrees if directed.  Biased: see ``degrees`` for estimates.
        """
        return np.asarray(self._adj.degrees(), dtype=np.int64)

    def released_edges(self) -> tuple[np.ndarray, np.ndarray]:
        """Positions (rows, cols) of every released edge, each unordered pair once.

        For an undirected release ``rows < cols``.  ``nodes[rows[k]]`` and
        ``nodes[cols[k]]`` are the labels; :meth:`to_networkx` builds the
        labelled graph.
        """
        return self._adj.edge_array()

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
        return pair_count(self.number_of_nodes(), self.directed)

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
        return self.cut_positions(S, T)

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
        s, t = self.cut_positions(S, T)
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
                s, t = self.cut_positions(S, T)
            except (TypeError, ValueError) as exc:
                raise type(exc)(f"pairs[{k}]: {exc}") from None
            sides.append((s, t))
            rows.append(s.size * t.size)
        if not rows:
            raise ValueError("pairs is empty; pass at least one (S, T) query")
        observed = self._adj.cut_counts(sides)  # one pass over the rows where it can
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
        pairs = pair_count(s.size, self.directed)
        if pairs == 0:
            raise ValueError("S needs at least 2 nodes to contain a vertex pair")
        return self._finish(count_estimate(self._adj.within_count(s), pairs, self.channel), proper)

    # ---- the released graph as data --------------------------------------------
    def to_scipy_sparse(self, format: str = "csr") -> Any:
        """The released adjacency as a scipy sparse array (symmetric if undirected).

        Rows and columns follow ``nodes``.
        """
        import scipy.sparse as sp

        r, c = self.released_edges()
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
        r, c = self.released_edges()
        labels = self.nodes
        H.add_edges_from(zip(map(labels.__getitem__, r.tolist()), map(labels.__getitem__, c.tolist())))
        return H
