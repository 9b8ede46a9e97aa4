"""PrivateGraph: the released synthetic graph and its companion estimators."""

from __future__ import annotations

import os
from collections.abc import Hashable, Iterable, Sequence
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np

from ..core.estimators import Channel, Estimate, count_estimate, project
from ..core.probabilities import CertifiedRelease, RRProbabilities
from ..validation import Boolean, validate_params
from .adjacency import Adjacency
from .analytics.mixin import AnalyticsMixin
from .convert import edges_to_networkx
from .encoding import NodeIndex, pair_count
from .io import IOMixin

__all__ = ["PrivateGraph"]


class _CallableCount(int):
    """An int that returns itself when called: a method that also reads as its old attribute."""

    def __call__(self) -> int:
        return int(self)


class PrivateGraph(CertifiedRelease, AnalyticsMixin, IOMixin):
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
                      T: Iterable[Hashable] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Positions of the two sides of a cut query; refuses overlapping sides.

        ``T=None`` means the complement of S (every other node), as in
        ``networkx.cut_size``.

        Examples
        --------
        >>> import networkx as nx, dpgraph
        >>> R = dpgraph.release(nx.path_graph(4), epsilon=1.0, seed=0)
        >>> [p.tolist() for p in R.cut_positions([1, 0], [3])]
        [[0, 1], [3]]
        """
        s = self._index.indices(S, "S")
        if T is None:
            member = np.ones(len(self._index), dtype=bool)
            member[s] = False
            t = np.flatnonzero(member)
            if t.size == 0:
                raise ValueError("S covers every node, so its complement T is empty; "
                                 "pass T or a smaller S")
            return s, t
        t = self._index.indices(T, "T")
        member = np.zeros(len(self._index), dtype=bool)  # O(n), no sort
        member[s] = True
        overlap = int(np.count_nonzero(member[t]))
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

    def is_directed(self) -> bool:
        """Whether rows are ordered pairs, like ``networkx.Graph.is_directed()``."""
        return self.directed

    def number_of_nodes(self) -> int:
        """Size of the public vertex set."""
        return len(self._index)

    @property
    def number_of_pairs(self) -> _CallableCount:
        """Rows of the database: n(n-1)/2 unordered (n(n-1) ordered) pairs.

        Call it like ``number_of_nodes()``: ``R.number_of_pairs()``.  The
        older attribute form ``R.number_of_pairs`` still reads as the same int.

        Examples
        --------
        >>> import networkx as nx, dpgraph
        >>> R = dpgraph.release(nx.path_graph(5), epsilon=1.0, seed=0)
        >>> R.number_of_pairs(), R.number_of_pairs == 10
        (10, True)
        """
        return _CallableCount(pair_count(self.number_of_nodes(), self.directed))

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
        # older spelling of cut_positions, still used inside graph.analytics
        return self.cut_positions(S, T)

    def _finish(self, est: Estimate, proper: bool) -> Estimate:
        return project(est, *est.feasible_range, step=1.0) if proper else est

    @validate_params(proper=Boolean())
    def cut(self, S: Iterable[Hashable], T: Iterable[Hashable] | None = None,
            proper: bool = False) -> Estimate:
        """Estimate the number of edges between disjoint node sets S and T.

        Unbiased, with the exact graph-independent standard deviation
        sqrt(|S||T| p'(1-p')) / (1 - 2p') (docs/design.md).  For a
        directed release, edges from S to T.

        Parameters
        ----------
        S : collection of nodes
            Non-empty; duplicates are ignored.
        T : collection of nodes, optional
            Disjoint from S, non-empty.  Default: every node not in S (the
            complement), as in ``networkx.cut_size``.
        proper : bool, default False
            Round and clip the estimate to an integer in 0..|S||T|.

        Returns
        -------
        Estimate
            Unbiased number of S-T edges; ``std`` is exact and graph-independent.

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
        >>> R.cut(S).value == est.value     # T defaults to the complement of S
        True
        """
        s, t = self.cut_positions(S, T)
        observed = self._adj.cut_count(s, t)
        return self._finish(count_estimate(observed, s.size * t.size, self.channel), proper)

    @validate_params(proper=Boolean())
    def cuts(self, pairs: Sequence[tuple[Iterable[Hashable], Iterable[Hashable]]],
             proper: bool = False) -> Estimate:
        """Estimate many cut queries at once; a batch :class:`Estimate`.

        ``cuts(pairs)[k]`` equals ``cut(*pairs[k])``; the released counts of
        all queries are computed in one pass over the packed rows.

        Parameters
        ----------
        pairs : sequence of (S, T)
            Each S and T a non-empty collection of nodes, disjoint; T may be
            None for the complement of S.
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

    @validate_params(proper=Boolean())
    def cut_batch(self, membership: np.ndarray, proper: bool = False) -> Estimate:
        """Estimate Q cut queries given as one (Q x n) membership matrix, in one pass.

        Row q describes query q over ``nodes`` (column i is ``nodes[i]``).  A
        boolean matrix puts node i in S_q where True and in T_q where False
        (T_q the complement of S_q); an integer matrix uses 1 for S_q, -1 for
        T_q and 0 for nodes in neither.  ``cut_batch(M)[q]`` equals
        ``cut(S_q, T_q)``.  Complement cuts of an undirected release read
        only the rows of the smaller side, for all queries in one pass.

        Parameters
        ----------
        membership : numpy.ndarray of bool or int, shape (Q, n)
            Every row needs at least one node on each side.
        proper : bool, default False
            Round and clip every estimate to an integer in 0..|S_q||T_q|.

        Returns
        -------
        Estimate
            A batch: ``.value`` and ``.std`` have shape (Q,).

        Raises
        ------
        TypeError, ValueError
            If ``membership`` is not a 2-D bool or integer array with n
            columns, holds values other than -1, 0, 1, or a row has an empty
            side (the message names the row).

        Examples
        --------
        >>> import networkx as nx, numpy as np, dpgraph
        >>> R = dpgraph.release(nx.path_graph(6), epsilon=1.0, seed=0)
        >>> M = np.array([[1, 1, 1, -1, -1, -1], [1, -1, 0, 0, 0, 0]])
        >>> est = R.cut_batch(M == 1)                   # halves: {0, 1, 2} vs {3, 4, 5}
        >>> bool(est.value[0] == R.cut([0, 1, 2], [3, 4, 5]).value)
        True
        >>> R.cut_batch(M).value.shape                   # signed: query 1 is {0} vs {1}
        (2,)
        """
        n = self.number_of_nodes()
        if not isinstance(membership, np.ndarray):
            raise TypeError(
                f"membership must be a numpy array of shape (Q, {n}), got {type(membership).__name__}; "
                "e.g. np.asarray(rows, dtype=bool)"
            )
        if membership.ndim != 2 or membership.shape[1] != n or membership.shape[0] == 0:
            raise ValueError(
                f"membership must have shape (Q, {n}) with Q >= 1 (one column per node, in "
                f"PrivateGraph.nodes order), got {membership.shape}"
            )
        if membership.dtype == np.bool_:
            member = np.where(membership, np.int8(1), np.int8(-1))
        elif membership.dtype.kind in "iu":
            if np.any((membership < -1) | (membership > 1)):
                raise ValueError("membership must hold 1 (node in S), -1 (in T) or 0 (in neither)")
            member = membership.astype(np.int8)
        else:
            raise TypeError(f"membership must be a bool or integer array, got dtype {membership.dtype}")
        size_s = np.count_nonzero(member == 1, axis=1)
        size_t = np.count_nonzero(member == -1, axis=1)
        empty = np.flatnonzero((size_s == 0) | (size_t == 0))
        if empty.size:
            raise ValueError(
                f"membership row {int(empty[0])} has an empty side; a cut needs at least one node in "
                "S (1 or True) and one in T (-1 or False)"
            )
        observed = self._adj.membership_cut_counts(member)
        rows = size_s.astype(float) * size_t.astype(float)
        est = count_estimate(np.asarray(observed, float), rows, self.channel)
        return self._finish(est, proper)

    @validate_params(proper=Boolean())
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

    def to_edgelist(self, path: str | os.PathLike[str], delimiter: str = " ") -> None:
        """Write the released edges to a text file, one ``u v`` line per edge.

        Like ``networkx.write_edgelist(H, path, data=False)`` for the released
        graph H: node labels are written with ``str``; each unordered pair
        once (a directed release writes ``u v`` for the edge u -> v).  A first
        comment line gives the public parameters.  Isolated nodes have no line:
        the vertex set is ``nodes``.  Read it back with
        ``networkx.read_edgelist(path, nodetype=...)``.

        Parameters
        ----------
        path : str or os.PathLike
            Destination file; overwritten if it exists.
        delimiter : str, default " "
            Between the two labels of a line.

        Raises
        ------
        FileNotFoundError
            If the folder of ``path`` does not exist (the message names ``path``).
        ValueError
            If a label's text contains the delimiter or a line break (the
            file could not be read back); relabel, or pick another delimiter.

        Examples
        --------
        >>> import networkx as nx, dpgraph, tempfile, os
        >>> R = dpgraph.release(nx.path_graph(4), epsilon=5.0, seed=0)
        >>> path = os.path.join(tempfile.mkdtemp(), "released.txt")
        >>> R.to_edgelist(path)
        >>> H = nx.read_edgelist(path, nodetype=int)
        >>> H.number_of_edges() == R.number_of_edges()
        True
        """
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
        if not isinstance(delimiter, str) or not delimiter or "\n" in delimiter:
            raise ValueError("delimiter must be a non-empty string without line breaks, e.g. ' '")
        labels = [str(v) for v in self.nodes]
        if any(delimiter in t or "\n" in t or "\r" in t for t in labels):
            raise ValueError(
                f"a node label's text contains the delimiter {delimiter!r} or a line break; "
                "relabel the nodes or pass another delimiter"
            )
        path = Path(path)
        if not path.parent.is_dir():
            raise FileNotFoundError(f"cannot write {path}: its folder {path.parent} does not exist")
        r, c = self.released_edges()
        kind = "directed" if self.directed else "undirected"
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(f"# dpgraph {kind} release: {self.number_of_nodes()} nodes, "
                     f"epsilon={self.epsilon:g}, flip_probability={self.flip_probability:.6g}, "
                     f"keep={self.keep:.6g}; isolated nodes have no line\n")
            for start in range(0, r.size, 1 << 16):
                rows, cols = r[start : start + (1 << 16)], c[start : start + (1 << 16)]
                fh.writelines(f"{labels[i]}{delimiter}{labels[j]}\n"
                              for i, j in zip(rows.tolist(), cols.tolist()))

    def to_networkx(self) -> nx.Graph:
        """The released synthetic graph as a networkx (Di)Graph.

        Its raw statistics are biased (at eps = 1 it has far more edges than
        the input); use the estimators of this class for answers.
        """
        r, c = self.released_edges()
        return edges_to_networkx(self.nodes, r, c, self.directed)
