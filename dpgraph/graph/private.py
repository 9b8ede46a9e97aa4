"""PrivateGraph: the released synthetic graph and its companion estimators."""

from __future__ import annotations

import os
from collections.abc import Hashable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import networkx as nx
import numpy as np

from ..core.estimators import Channel
from ..core.pairs import pair_count
from ..core.probabilities import CertifiedRelease, RRProbabilities
from . import (
    _memory,
    analytics,  # noqa: F401  the analytics register themselves on import
)
from .adjacency import Adjacency, ValuedAdjacency
from .answers import bind_analytics
from .convert import (
    blocks_to_networkx,
    csr_bytes,
    edge_blocks,
    edgelist_bytes,
    networkx_bytes,
    to_csr,
    write_edgelist,
)
from .degree_channel import DegreeChannel
from .encoding import NodeIndex
from .io import IOMixin
from .kinds import ANALYTIC_NEEDS, ReleaseKind, declare_needs, kind_of
from .typed import balance, estimators, reciprocity  # noqa: F401  typed analytics register too
from .typed.encoding import TieValues
from .views import DegreeAttribute, NetworkxRefusals, NodeView

if TYPE_CHECKING:  # the bound analytics as type checkers see them (bind_analytics makes them)
    from .analytics import community as _community
    from .analytics import counts as _counts
    from .analytics import cut_queries as _cuts
    from .analytics import degree_stats as _degree_stats
    from .analytics import motifs as _motifs
    from .analytics import partition as _partition
    from .analytics import synthesis as _synthesis
    from .typed import balance as _balance
    from .typed import estimators as _typed
    from .typed import reciprocity as _reciprocity

__all__ = ["PrivateGraph"]


def _declared(cls: type) -> type:
    """Every analytic with declared needs (:data:`~.kinds.ANALYTIC_NEEDS`) refuses by them."""
    for name in ANALYTIC_NEEDS:
        setattr(cls, name, declare_needs(name, getattr(cls, name)))
    return cls


@_declared
@bind_analytics
class PrivateGraph(CertifiedRelease, IOMixin, NetworkxRefusals):
    """An eps-edge-DP synthetic graph with debiased, error-barred estimators.

    Built by :func:`dpgraph.release`; holds only the released pairs and public
    metadata (vertex set, epsilon, the exact flip probability), never the
    input graph.  Every answer is post-processing of the release, so any
    number of queries costs no further privacy.

    It speaks networkx where the meaning is the same: ``R.nodes`` (a
    :class:`NodeView`), ``len(R)``, ``v in R``, ``for v in R``,
    ``R.number_of_nodes()``; ``R.number_of_edges()`` and ``R.degree(...)``
    are debiased estimates of the input graph's, never raw counts of the
    released one.  ``R[v]`` (networkx's neighbours) is refused: the released
    neighbours are mostly noise; see :meth:`__getitem__`.

    Attributes
    ----------
    nodes : NodeView
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
        P(released | true) of a pair, used by every estimator; for a typed
        release, of the pair's "any tie" indicator (the binary collapse).
    name : str or None
        The data set's public name when the curator gave one
        (``R.save(path, name=...)``, ``dpgraph release --name``), else None.
    tie_values : TieValues or None
        The declared tie values of a typed release (``dpgraph.release(...,
        edge_attr=, values=)``); None for an untyped release.
    degree_channel : DegreeChannel or None
        The noisy degrees of a composed release (``dpgraph.release(...,
        degree_share=s)``), which the degree, volume, cut and edge-count
        estimators fuse with the pairs; None otherwise.  ``epsilon`` is then
        the pairs' part and ``total_epsilon`` what was charged.
    total_epsilon : float
        What the release cost: ``epsilon``, plus the degree channel's share
        on a composed release (the epsilon given to :func:`dpgraph.release`).
    typed_channel : Channel
        The K-ary channel of a typed release's pairs, subsampled for a sparse
        typed release (the binary channel otherwise).
    """

    def __init__(
        self,
        adjacency: Adjacency,
        index: NodeIndex,
        probabilities: RRProbabilities,
        channel: Channel | None = None,
        keep: float = 1.0,
        name: str | None = None,
        tie_values: TieValues | None = None,
        degree_channel: DegreeChannel | None = None,
    ) -> None:
        self._pairs = adjacency
        self.degree_channel = degree_channel
        self._index = index
        self.probabilities = probabilities
        self.keep = float(keep)
        self.name = name
        self.tie_values = tie_values
        if tie_values is not None:  # ``channel``, if given, is the K-ary one (a sparse release)
            if not isinstance(adjacency, ValuedAdjacency) or adjacency.K != tie_values.K \
                    or probabilities.K != tie_values.K \
                    or (channel is not None and channel.K != tie_values.K):
                raise ValueError("a typed release needs a typed adjacency and probabilities for "
                                 "its K values")
            self.typed_channel = channel if channel is not None else \
                Channel.randomized_response(probabilities)
            self.channel = self.typed_channel.collapse(np.arange(tie_values.K) > 0)
        else:
            self.channel = channel if channel is not None else Channel.randomized_response(probabilities)
            self.typed_channel = self.channel

    if TYPE_CHECKING:  # bound at import by bind_analytics; listed here for type checkers
        number_of_edges = _counts.number_of_edges
        density = _counts.density
        degree = _counts.degree
        volume = _counts.volume
        density_between = _counts.density_between
        modularity = _partition.modularity
        communities = _community.communities
        cut = _cuts.cut
        cuts = _cuts.cuts
        cut_batch = _cuts.cut_batch
        edges_within = _cuts.edges_within
        degree_assortativity = _degree_stats.degree_assortativity
        degree_distribution = _degree_stats.degree_distribution
        triangles = _motifs.triangles
        wedges = _motifs.wedges
        transitivity = _motifs.transitivity
        average_clustering = _motifs.average_clustering
        synthesize = _synthesis.synthesize
        value_counts = _typed.value_counts
        value_fraction = _typed.value_fraction
        value_degree = _typed.value_degree
        value_volume = _typed.value_volume
        balance = _balance.balance
        mutual_ties = _reciprocity.mutual_ties
        reciprocity = _reciprocity.reciprocity

    @property
    def kind(self) -> ReleaseKind:
        """This release's row in the table of release kinds (:mod:`dpgraph.graph.kinds`)."""
        return kind_of(self)

    # ---- the release as data, by position -------------------------------------
    @property
    def adjacency(self) -> Adjacency:
        """The released pairs (an :class:`~dpgraph.graph.adjacency.Adjacency`), read-only.

        Its methods take and return node *positions* 0..n-1 in ``nodes``
        order; map labels with :meth:`positions`.  Counts read from it are
        raw (biased); the estimators of this class debias them.
        """
        return self._pairs

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
        return np.asarray(self._pairs.degrees(), dtype=np.int64)

    def released_edges(self) -> tuple[np.ndarray, np.ndarray]:
        """Positions (rows, cols) of every released edge, each unordered pair once.

        For an undirected release ``rows < cols``.  ``nodes[rows[k]]`` and
        ``nodes[cols[k]]`` are the labels; :meth:`to_networkx` builds the
        labelled graph.  Two int64 arrays of the released edges' length (a
        full release at eps = 1 has about 0.27 n^2 / 2 edges), gathered from
        row blocks: the memory is checked first.

        Raises
        ------
        MemoryError
            Before allocating, when the arrays (and the row blocks' parts
            they are joined from) cannot fit in the memory available now; the
            message gives both sizes and what to do instead on this release.
        """
        m = self.number_of_released_edges()
        sparse = _memory.release_kind(self) == "sparse"  # its CSR gives the arrays directly
        need = 16 * m * (1 if sparse else 2)
        _memory.check_call_fits(self, need, f"R.released_edges() of {m:,} released edges",
                                self._export_alternatives("released_edges"))
        return self._pairs.edge_array()

    # ---- public metadata ------------------------------------------------------
    @property
    def nodes(self) -> NodeView:
        """The public vertex set, in canonical order (rows of ``to_scipy_sparse``): a :class:`NodeView`."""
        return NodeView(self._index)

    def __len__(self) -> int:
        """The number of nodes, like ``len(G)``."""
        return len(self.nodes)

    def __iter__(self) -> Iterator[Hashable]:
        """The nodes, like ``iter(G)``."""
        return iter(self.nodes)

    def __contains__(self, v: Any) -> bool:
        """Whether ``v`` is a node, like ``v in G`` (False for an unhashable value)."""
        return v in self.nodes

    def __getitem__(self, v: Any) -> Any:
        """Refused: networkx's ``G[v]`` is v's neighbours, which a release does not know.

        The released neighbours of v are mostly flips (at eps = 1 about
        p'(n - 1) of them are noise, far more than v's true degree), so
        returning them under networkx's name would pass a biased read for the
        truth.  Use ``R.degree(v)`` (debiased, with an error bar) or, for the
        raw released graph itself, ``R.to_networkx()[v]``.

        Raises
        ------
        TypeError
            Always, naming the alternatives.
        """
        raise TypeError(
            "R[v] is not defined: a release does not know v's neighbours (those of the "
            "released graph are mostly noise). Use R.degree(v) for v's debiased degree, or "
            "R.to_networkx()[v] for its neighbours in the raw released graph")

    @property
    def directed(self) -> bool:
        """True when rows are ordered pairs (a released DiGraph)."""
        return self._pairs.directed

    def is_directed(self) -> bool:
        """Whether rows are ordered pairs, like ``networkx.Graph.is_directed()``."""
        return self.directed

    def number_of_nodes(self) -> int:
        """Size of the public vertex set."""
        return len(self._index)

    def number_of_pairs(self) -> int:
        """Rows of the database: n(n-1)/2 unordered (n(n-1) ordered) pairs.

        Examples
        --------
        >>> import networkx as nx, dpgraph
        >>> R = dpgraph.release(nx.path_graph(5), epsilon=1.0, seed=0)
        >>> R.number_of_pairs()
        10
        """
        return pair_count(self.number_of_nodes(), self.directed)

    def number_of_released_edges(self) -> int:
        """Edges of the *released* graph: raw, biased (about p' N too many).

        The estimate of the input graph's edge count is :meth:`number_of_edges`.
        """
        return self._pairs.number_of_edges()

    @property
    def total_epsilon(self) -> float:
        """What the release cost: the pairs' ``epsilon`` plus a composed degree channel's share.

        Examples
        --------
        >>> import networkx as nx, dpgraph
        >>> R = dpgraph.release(nx.path_graph(5), epsilon=1.0, seed=0, degree_share=0.25)
        >>> R.epsilon, R.total_epsilon
        (0.75, 1.0)
        """
        dc = self.degree_channel
        return self.epsilon if dc is None else float(dc.total_epsilon)

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        keep = "" if self.keep == 1.0 else f", keep={self.keep:.6g}, {self._subsample_cost()}"
        if self.tie_values is not None:
            keep += f", edge_attr={self.tie_values.edge_attr!r}, K={self.tie_values.K}"
        if self.degree_channel is not None:
            keep += (f", degree_share={self.degree_channel.share:g} of total_epsilon="
                     f"{self.degree_channel.total_epsilon:g}")
        return (
            f"PrivateGraph({kind}, nodes={self.number_of_nodes()}, epsilon={self.epsilon:g}, "
            f"flip_probability={self.flip_probability:.6g}{keep}, "
            f"released_edges={self.number_of_released_edges()})"
        )

    def _subsample_cost(self) -> str:
        """What subsampling costs, from public quantities: the edge count's std against the full
        release's (every count's std grows by about the same factor)."""
        from ..core.estimators import count_estimate

        N = float(self.number_of_pairs())
        std = float(count_estimate(0.0, N, self.channel).std)
        dense = Channel.randomized_response(self.probabilities)
        if dense.K > 2:  # a typed release: its any-tie collapse
            dense = dense.collapse(np.arange(dense.K) > 0)
        full = float(count_estimate(0.0, N, dense).std)
        return f"number_of_edges std {std:.3g} ({std / full:.3g}x the full release's {full:.3g})"

    # ---- the released graph as data --------------------------------------------
    def _export_alternatives(self, but: str) -> list:
        """What to do instead of an export that cannot fit (all but ``but``), with their sizes."""
        n, m, d = self.number_of_nodes(), self.number_of_released_edges(), self.directed
        A = _memory.Alternative
        alts = {
            "to_scipy_sparse": A(f"R.to_scipy_sparse() holds the same edges in "
                                 f"{_memory.size_text(csr_bytes(n, m, d))}", nbytes=csr_bytes(n, m, d)),
            "to_edgelist": A("R.to_edgelist(path) streams the edges to a text file, one row "
                             "block in memory at a time"),
        }
        out = [a for k, a in alts.items() if k != but]
        out.append(A("the estimators (R.number_of_edges(), R.degree(), R.cuts(...)) answer "
                     "from the release without building the released graph"))
        out.append(_memory.sparse_release_alternative(n))
        return out

    def to_scipy_sparse(self, format: str = "csr") -> Any:
        """The released adjacency as a scipy sparse array (symmetric if undirected).

        Rows and columns follow ``nodes``; data int8 (1 for a released edge).
        Built in one pass over row blocks, straight into CSR; the memory it
        needs (about 10 bytes per released edge in CSR) is checked first.

        Parameters
        ----------
        format : str, default "csr"
            Any scipy sparse format (``"csr"``, ``"csc"``, ``"coo"``, ...).

        Raises
        ------
        MemoryError
            Before allocating, when the array cannot fit in the memory
            available now; the message gives both sizes and what to do
            instead on this release.

        Examples
        --------
        >>> import networkx as nx, dpgraph
        >>> R = dpgraph.release(nx.path_graph(3), epsilon=8.0, seed=1)
        >>> R.to_scipy_sparse().toarray().tolist()
        [[0, 1, 0], [1, 0, 1], [0, 1, 0]]
        """
        if not isinstance(format, str):
            raise TypeError(f"format must be a scipy sparse format name such as 'csr', "
                            f"got {type(format).__name__}")
        n, m = self.number_of_nodes(), self.number_of_released_edges()
        need = csr_bytes(n, m, self.directed, format)
        _memory.check_call_fits(self, need, f"R.to_scipy_sparse({format!r}) of {m:,} released edges",
                                self._export_alternatives("to_scipy_sparse"))
        return to_csr(self._pairs, format)

    def to_edgelist(self, path: str | os.PathLike[str], delimiter: str = " ") -> None:
        """Write the released edges to a text file, one ``u v`` line per edge.

        Like ``networkx.write_edgelist(H, path, data=False)`` for the released
        graph H: node labels are written with ``str``; each unordered pair
        once (a directed release writes ``u v`` for the edge u -> v).  A first
        comment line gives the public parameters.  Isolated nodes have no line:
        the vertex set is ``nodes``.  Read it back with
        ``networkx.read_edgelist(path, nodetype=...)``.  Streams: one row block
        of edges is in memory at a time; the file's size is checked against
        the free disk first.

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
        OSError
            (errno ENOSPC) before writing, when the file would not fit on
            the free disk; the message gives both sizes.

        Examples
        --------
        >>> import networkx as nx, dpgraph, tempfile, os
        >>> R = dpgraph.release(nx.path_graph(4), epsilon=5.0, seed=0)
        >>> path = os.path.join(tempfile.mkdtemp(), "released.txt")
        >>> R.to_edgelist(path)
        >>> H = nx.read_edgelist(path, nodetype=int)
        >>> H.number_of_edges() == R.number_of_released_edges()
        True
        """
        import errno

        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
        if not isinstance(delimiter, str) or not delimiter or "\n" in delimiter:
            raise ValueError("delimiter must be a non-empty string without line breaks, e.g. ' '")
        n, m = self.number_of_nodes(), self.number_of_released_edges()
        _memory.check_call_fits(self, 120 * n + 100 * min(m, 1 << 20),
                                f"the {n:,} node labels of R.to_edgelist")
        labels = [str(v) for v in self.nodes]
        text = "\n".join(labels)  # one scan: a delimiter without "\n" cannot span two labels
        if "\r" in text or text.count("\n") != len(labels) - 1 or delimiter in text:
            raise ValueError(
                f"a node label's text contains the delimiter {delimiter!r} or a line break; "
                "relabel the nodes or pass another delimiter"
            )
        path = Path(path)
        if not path.parent.is_dir():
            raise FileNotFoundError(f"cannot write {path}: its folder {path.parent} does not exist")
        free = _memory.free_disk(path.parent) + (path.stat().st_size if path.is_file() else 0)
        need = edgelist_bytes(labels, None, m, delimiter, True)  # a bound: no pass for the degrees
        if need > free and not self.directed:  # the exact size, from the degrees
            need = edgelist_bytes(labels, self.released_degrees(), m, delimiter, False)
        if need > free:
            raise OSError(errno.ENOSPC,
                          f"the edge list of {m:,} released edges needs {_memory.size_text(need)} of disk "
                          f"but {_memory.size_text(free)} is free at {path.parent}; nothing was written. "
                          "Write it to a larger disk, or use the estimators, which need no export")
        kind = "directed" if self.directed else "undirected"
        with open(path, "wb") as fh:
            fh.write(f"# dpgraph {kind} release: {self.number_of_nodes()} nodes, "
                     f"epsilon={self.epsilon:g}, flip_probability={self.flip_probability:.6g}, "
                     f"keep={self.keep:.6g}; isolated nodes have no line\n".encode())
            write_edgelist(fh, labels, self._pairs, delimiter, m)

    def to_networkx(self) -> nx.Graph:
        """The released synthetic graph as a networkx (Di)Graph.

        Its raw statistics are biased (at eps = 1 it has far more edges than
        the input); use the estimators of this class for answers.  A typed
        release carries each released tie's value in the edge attribute
        ``tie_values.edge_attr``, as the input did.  A networkx graph takes
        about 260 bytes per edge: the need is checked first (a full release
        at eps = 1 has about 0.27 n^2 / 2 edges).

        Raises
        ------
        MemoryError
            Before building anything, when the graph cannot fit in the
            memory available now; the message gives both sizes and what to
            do instead on this release.

        Examples
        --------
        >>> import networkx as nx, dpgraph
        >>> R = dpgraph.release(nx.path_graph(4), epsilon=8.0, seed=1)
        >>> sorted(R.to_networkx().edges())
        [(0, 1), (1, 2), (2, 3)]
        >>> G = nx.Graph([(0, 1, {"kind": "a"}), (1, 2, {"kind": "b"})])
        >>> H = dpgraph.release(G, 8.0, seed=0, edge_attr="kind", values=["a", "b"]).to_networkx()
        >>> {H.edges[e]["kind"] for e in H.edges} <= {"a", "b"}
        True
        """
        n, m = self.number_of_nodes(), self.number_of_released_edges()
        typed = self.tie_values is not None
        need = networkx_bytes(n, m) + (100 * m if typed else 0)  # a value in each edge's dict
        _memory.check_call_fits(self, need,
                                f"R.to_networkx() of {n:,} nodes and {m:,} released edges",
                                self._export_alternatives("to_networkx"))
        H = blocks_to_networkx(self.nodes, edge_blocks(self._pairs), self.directed)
        if typed:
            labels = (None, *self.tie_values.values)
            attr = self.tie_values.edge_attr
            nodes = self._index.nodes  # by position
            for r, c in edge_blocks(self._pairs):
                values = self._pairs.edge_values(r, c)
                for i, j, v in zip(r.tolist(), c.tolist(), values.tolist()):
                    H.adj[nodes[i]][nodes[j]][attr] = labels[v]
        return H


# R.degree is networkx's degree view (callable, subscriptable, iterable) over the analytic that
# bind_analytics made a method of the class; on the class it stays that method
PrivateGraph.degree = DegreeAttribute(PrivateGraph.degree)
