"""The input table: every kind of graph a release accepts, in one place.

Each row of :data:`INPUT_KINDS` says, for one kind of input:

* ``accepts(G)``: whether ``G`` is of this kind;
* ``count(G, nodes)``: the public number of nodes n, from the arguments alone
  (no edge read, nothing allocated), or None when it is unknown; the memory
  and disk checks run on it before anything else;
* ``edges(G, nodes, directed, options)``: the public vertex set (a
  :class:`~dpgraph.graph.encoding.NodeIndex`) and the edges as chunks of
  node positions (an :class:`EdgeStream`);
* ``like(labels, i, j, directed, folder)`` (optional): a public input of this
  kind on the vertex set ``labels`` with the edges (labels[i], labels[j]), for
  the calibration of a constant-time release (:mod:`dpgraph.graph.timing`);
  without it the calibration reads an edge array (:func:`edge_array_like`).

Every consumer reads through the table: the in-memory release
(:func:`read_input`, an :class:`~dpgraph.graph.encoding.EncodedGraph`), the
blockwise release (:func:`dpgraph.graph.blockwise.edge_keys`, streamed), the
memory checks (:func:`public_n`) and the command line (which calls
``dpgraph.release(path, nodes=...)``).  A new kind of input is one row here
plus its test.

The vertex set is public: it is what the release reveals about the nodes.  It
is never inferred from an edge list, array or table, whose nodes are only
those with an edge (that would reveal which nodes have none): pass it as
``nodes=``, a collection of labels or the number of nodes n (labels 0..n-1).
Edge attributes (weights, extra columns) are dropped with a
:class:`~dpgraph.exceptions.DroppedAttributesWarning`.  Errors give counts
and line numbers, never labels or edges.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain, islice, repeat
from numbers import Integral
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Union

import networkx as nx
import numpy as np

from ..exceptions import DroppedAttributesWarning
from .edgelist import (
    DEFAULT_CHUNK_BYTES,
    DistinctKeys,
    int_column,
    read_table_chunks,
    source_name,
)
from .encoding import EncodedGraph, NodeIndex, canonical_node_order, encode_graph
from .tables import frame_columns, is_dataframe

if TYPE_CHECKING:
    import scipy.sparse

__all__ = [
    "INPUT_KINDS",
    "EdgeStream",
    "GraphInput",
    "InputKind",
    "ReadOptions",
    "check_pairs",
    "edge_array_like",
    "input_kind",
    "public_n",
    "read_input",
    "stream_input",
    "vertex_set",
]

#: Everything :func:`dpgraph.release` takes as its graph.
GraphInput = Union[
    nx.Graph,
    "scipy.sparse.sparray",
    "scipy.sparse.spmatrix",
    np.ndarray,
    str,
    "os.PathLike[str]",
    Any,  # a pandas / polars DataFrame or a pyarrow Table of edges
]

_DROPPED = ("the input's edge attributes ({what}) are dropped: a graph release publishes only "
            "the presence of each vertex pair. To release edge values too, make a typed release: "
            "dpgraph.release(G, epsilon, nodes=..., edge_attr=NAME, values=[...]), NAME an edge "
            "attribute of a networkx graph or a column of a DataFrame (read a file with "
            "pandas.read_csv first)")


@dataclass(frozen=True)
class ReadOptions:
    """How an input is read: bytes per chunk and fsspec options of a file, whether
    integer vertex sets are indexed without a dict (``compact``, the blockwise release), and
    whether a networkx graph's edge attribute dicts are kept (``edge_data``, a typed release)."""

    chunk_bytes: int = DEFAULT_CHUNK_BYTES
    storage_options: dict | None = field(default=None, hash=False, compare=False)
    compact: bool = False
    edge_data: bool = False


@dataclass(frozen=True, repr=False)
class EdgeStream:
    """An input's public vertex set and its edges as chunks of node positions.

    Attributes
    ----------
    index : NodeIndex
        The public vertex set in canonical order.
    chunks : iterable of (numpy.ndarray, numpy.ndarray)
        Positions of the two ends of every edge (-1: a label not in the
        vertex set), in one or more chunks, read lazily.
    what : str
        How messages name the input ("the file g.txt").
    checked : bool
        The chunks are already one array of distinct pairs without loops,
        ``rows < cols`` when undirected (a networkx graph, encoded).
    edge_data : list or None
        A networkx graph read with ``ReadOptions(edge_data=True)``: every
        edge's attribute dict, aligned with the checked chunk.
    """

    index: NodeIndex
    chunks: Iterable[tuple[np.ndarray, np.ndarray]]
    what: str
    checked: bool = False
    edge_data: list | None = None

    def __repr__(self) -> str:  # never the edges
        return f"EdgeStream(n={len(self.index)}, {self.what})"


@dataclass(frozen=True)
class InputKind:
    """One row of the input table (see the module docstring)."""

    name: str
    accepts: Callable[[Any], bool]
    count: Callable[[Any, Any], int | None]
    edges: Callable[[Any, Any, bool, ReadOptions], EdgeStream]
    like: Callable[[list, np.ndarray, np.ndarray, bool, str], Any] | None = None


def edge_array_like(labels: list, i: np.ndarray, j: np.ndarray, directed: bool,
                    folder: str) -> np.ndarray:
    """The ``(m, 2)`` object array of the edges (labels[i], labels[j]) (see ``InputKind.like``)."""
    arr = np.empty((i.size, 2), dtype=object)
    arr[:, 0] = [labels[a] for a in i.tolist()]
    arr[:, 1] = [labels[b] for b in j.tolist()]
    return arr


def _graph_like(labels: list, i: np.ndarray, j: np.ndarray, directed: bool, folder: str) -> Any:
    H = nx.DiGraph() if directed else nx.Graph()
    H.add_nodes_from(labels)
    H.add_edges_from(edge_array_like(labels, i, j, directed, folder).tolist())
    return H


def _matrix_like(labels: list, i: np.ndarray, j: np.ndarray, directed: bool, folder: str) -> Any:
    import scipy.sparse as sp

    n = len(labels)
    r, c = (i, j) if directed else (np.concatenate([i, j]), np.concatenate([j, i]))
    return sp.csr_array((np.ones(r.size, dtype=np.int8), (r, c)), shape=(n, n))


def _file_like(labels: list, i: np.ndarray, j: np.ndarray, directed: bool, folder: str) -> str:
    path = os.path.join(folder, "calibration.txt")
    with open(path, "w", encoding="utf-8") as fh:
        fh.writelines(f"{u} {v}\n" for u, v in edge_array_like(labels, i, j, directed,
                                                                folder).tolist())
    return path


# --------------------------------------------------------------------------- vertex sets
def _count(nodes: Any) -> int | None:
    """n of a vertex set given as n or as labels, without materializing it (None: unknown)."""
    if nodes is None or isinstance(nodes, (bool, np.bool_, str, bytes)):
        return None
    if isinstance(nodes, Integral):
        return int(nodes)
    try:
        return len(nodes)
    except TypeError:
        return None


def vertex_set(nodes: Any, what: str | None = None, *, compact: bool = False) -> NodeIndex:
    """The public vertex set given as ``nodes=``: the number of nodes n, or the labels.

    Parameters
    ----------
    nodes : int or collection of hashable labels
        n (labels 0..n-1) or the labels, each once.
    what : str, optional
        The input that needs it, for the message when ``nodes`` is None.
    compact : bool, default False
        For integer labels, build the index without a dict (vertex sets of
        millions of nodes: the blockwise release).

    Examples
    --------
    >>> vertex_set(3).nodes
    (0, 1, 2)
    >>> vertex_set(["b", "a"]).nodes
    ('a', 'b')
    """
    if nodes is None:
        raise TypeError(
            f"G must be a networkx graph or a matrix, or come with nodes= (the public vertex "
            f"set, e.g. nodes=range(n) or nodes=n) when it is {what or 'this input'}: the "
            "vertex set is not inferred from the edges, which would reveal which nodes have none"
        )
    if isinstance(nodes, (bool, np.bool_)):
        raise TypeError("nodes must be the number of nodes n or a collection of node labels, "
                        "not a bool")
    if isinstance(nodes, Integral):
        n = int(nodes)
        if n < 2:
            raise ValueError(f"nodes must be at least 2 nodes, got {n}")
        if compact:
            return NodeIndex.from_integers(np.arange(n, dtype=np.int64))
        return NodeIndex(range(n))
    if isinstance(nodes, (str, bytes, dict)) or not isinstance(nodes, Iterable):
        raise TypeError("nodes must be the number of nodes n or a collection of node labels, "
                        f"got {type(nodes).__name__}")
    if isinstance(nodes, (np.ndarray, range)):
        arr = np.asarray(nodes)
        if arr.ndim != 1:
            raise ValueError(f"nodes must be one-dimensional, got shape {arr.shape}")
        if arr.dtype.kind in "iu" and arr.size and compact:
            labels = np.unique(arr).astype(np.int64)
            if labels.size != arr.size or (arr.dtype.kind == "u" and arr.max() >= 1 << 63):
                raise ValueError("nodes has repeated labels (or labels beyond int64); "
                                 "pass each node once")
            if labels.size < 2:
                raise ValueError(f"nodes must have at least 2 nodes, got {labels.size}")
            return NodeIndex.from_integers(labels)
        labels = arr.tolist()  # numpy scalars become Python ints and floats
    else:
        labels = list(nodes)
    if len(labels) < 2:
        raise ValueError(f"nodes must have at least 2 nodes, got {len(labels)}")
    try:
        distinct = len(set(labels))
    except TypeError:
        raise TypeError("nodes must hold hashable labels") from None
    if distinct != len(labels):
        raise ValueError("nodes has repeated labels; pass each node once")
    return NodeIndex(canonical_node_order(labels))


# --------------------------------------------------------------------------- the table
def _warn_dropped(what: str) -> None:
    """Warn once per call, pointing at the first frame outside dpgraph (the caller's line)."""
    level, frame = 2, sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("dpgraph."):
        level, frame = level + 1, frame.f_back
    warnings.warn(_DROPPED.format(what=what), DroppedAttributesWarning, stacklevel=level)


def _networkx_edges(G: Any, nodes: Any, directed: bool, options: ReadOptions) -> EdgeStream:
    if any(map(bool, _edge_data(G))):
        _warn_dropped("networkx edge data")
    enc = encode_graph(G, directed=directed, edge_data=options.edge_data)
    if nodes is None:
        return EdgeStream(enc.index, [(enc.rows, enc.cols)], "G", checked=True,
                          edge_data=enc.edge_data)
    index = vertex_set(nodes, compact=options.compact)
    pos = index.find(enc.index.nodes)
    missing = int((pos < 0).sum())
    if missing:
        raise ValueError(f"G has {missing} of its {enc.n} node(s) outside nodes=; nodes must be "
                         "the whole public vertex set")
    rows, cols = pos[enc.rows], pos[enc.cols]
    if not directed:  # the new order may swap the ends of a pair
        rows, cols = np.minimum(rows, cols), np.maximum(rows, cols)
    return EdgeStream(index, [(rows, cols)], "G", checked=True, edge_data=enc.edge_data)


def _edge_data(G: Any) -> Iterator[dict]:
    """The attribute dict of one edge of every node, through C-level iterators only.

    One edge a node, not every edge: each attribute dict is a separate object,
    and touching all of them doubled a release's time (and its dependence on m).
    Attributes given to some edges only may therefore go unmentioned; they are
    dropped all the same.
    """
    return chain.from_iterable(map(islice, map(dict.values, map(itemgetter(1), G.adjacency())),
                                   repeat(1)))


def _is_scipy_sparse(G: Any) -> bool:
    if not type(G).__module__.startswith("scipy.sparse"):
        return False  # scipy is imported only for a scipy input
    import scipy.sparse as sp

    return bool(sp.issparse(G))


def _matrix_n(A: Any, nodes: Any) -> int | None:
    shape = getattr(A, "shape", ())
    return int(shape[0]) if len(shape) == 2 else None


def _matrix_edges(A: Any, nodes: Any, directed: bool, options: ReadOptions) -> EdgeStream:
    import scipy.sparse as sp

    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"an adjacency matrix must be square, got shape {A.shape}")
    n = int(A.shape[0])
    index = vertex_set(n if nodes is None else nodes, compact=options.compact)
    if len(index) != n:
        raise ValueError(f"nodes= has {len(index)} labels for a {n} x {n} matrix; pass one a row")
    B = sp.csr_array(A, copy=True)
    B.eliminate_zeros()
    if B.dtype != np.bool_ and np.any(B.data != 1):
        _warn_dropped("matrix entries other than 1, e.g. weights")
    if B.diagonal().any():
        raise ValueError("the matrix has non-zero diagonal entries (self-loops); "
                         "vertex pairs {i, i} are not rows of the database. Zero the diagonal")
    pattern = (B != 0).astype(np.int8)
    if not directed and (pattern != pattern.T).nnz:
        raise ValueError("the matrix is not symmetric; pass directed=True for a directed "
                         "graph, or symmetrize it (e.g. A + A.T)")
    coo = pattern.tocoo()
    r, c = coo.row.astype(np.int64), coo.col.astype(np.int64)
    if not directed:
        keep = r < c
        r, c = r[keep], c[keep]
    labels = range(n) if nodes is None else (np.asarray(nodes).tolist()
                                             if isinstance(nodes, np.ndarray) else list(nodes))
    order = index.find(labels)  # matrix row -> canonical position
    return EdgeStream(index, [(order[r], order[c])], "the matrix")


def _is_edge_array(G: Any) -> bool:
    return isinstance(G, (np.ndarray, list, tuple))


def _nodes_n(G: Any, nodes: Any) -> int | None:
    return _count(nodes)


def _array_edges(G: Any, nodes: Any, directed: bool, options: ReadOptions) -> EdgeStream:
    index = vertex_set(nodes, "an edge array or list", compact=options.compact)
    arr = np.asarray(G)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(f"an edge array must have shape (m, 2), got {arr.shape}; pass an "
                         "adjacency matrix as scipy.sparse, e.g. scipy.sparse.csr_array(A)")
    return EdgeStream(index, [(index.find(arr[:, 0]), index.find(arr[:, 1]))], "the edge array")


def _is_path(G: Any) -> bool:
    return isinstance(G, (str, os.PathLike))


def _file_edges(path: Any, nodes: Any, directed: bool, options: ReadOptions) -> EdgeStream:
    index = vertex_set(nodes, "an edge-list file", compact=options.compact)
    what = f"the file {source_name(path)}"
    return EdgeStream(index, _file_chunks(path, index, options), what)


def _file_chunks(path: Any, index: NodeIndex,
                 options: ReadOptions) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    name = source_name(path)
    by_text = None if index.labels is not None else _text_map(index)
    warned = False
    for chunk in read_table_chunks(path, columns=2, chunk_bytes=options.chunk_bytes,
                                   storage_options=options.storage_options):
        if chunk.extra and not warned:
            _warn_dropped("columns after the first two")
            warned = True
        if by_text is None:  # integer labels: parsed as numbers, looked up vectorized
            yield tuple(index.find(int_column(col, chunk.lines, name))  # type: ignore[misc]
                        for col in chunk.columns)
        else:
            yield tuple(_text_positions(col, chunk.lines, by_text, name)  # type: ignore[misc]
                        for col in chunk.columns)


def _text_map(index: NodeIndex) -> dict[str, int]:
    by_text: dict[str, int] = {}
    for k, v in enumerate(index.nodes):
        if by_text.setdefault(str(v), k) != k:
            raise ValueError(
                "two labels of nodes= read the same as text (e.g. 1 and '1'), so the lines "
                "of an edge-list file cannot name them; relabel the nodes"
            )
    return by_text


def _text_positions(tokens: np.ndarray, lines: np.ndarray, by_text: dict[str, int],
                    name: str) -> np.ndarray:
    uniq, inverse = np.unique(tokens, return_inverse=True)
    pos = np.empty(uniq.size, dtype=np.int64)
    for k, tok in enumerate(uniq.tolist()):
        text = None
        try:
            text = tok.decode("utf-8")
        except UnicodeDecodeError:
            pass
        if text is None:  # raised outside the handler: the exception would hold the bytes
            raise ValueError(f"{name}, line {int(lines[np.argmax(inverse == k)])}: not valid "
                             "UTF-8 text")
        pos[k] = by_text.get(text, -1)
    return pos[inverse.ravel()]


def _frame_edges(df: Any, nodes: Any, directed: bool, options: ReadOptions) -> EdgeStream:
    index = vertex_set(nodes, "a table of edges", compact=options.compact)
    names, column = frame_columns(df)
    if "source" in names and "target" in names:
        pick = ["source", "target"]
    elif len(names) >= 2:
        pick = names[:2]
    else:
        raise ValueError(f"a table of edges needs two columns (source and target), got "
                         f"{len(names)}")
    if len(names) > 2:
        _warn_dropped("columns other than the two of the edge ends")
    u, v = (column(c) for c in pick)
    return EdgeStream(index, [(index.find(u), index.find(v))], "the table")


#: The input table, tried in order.
INPUT_KINDS: tuple[InputKind, ...] = (
    InputKind("a networkx Graph or DiGraph", lambda G: isinstance(G, nx.Graph),
              lambda G, nodes: _count(nodes) if nodes is not None else G.number_of_nodes(),
              _networkx_edges, _graph_like),
    InputKind("a scipy.sparse adjacency matrix", _is_scipy_sparse, _matrix_n, _matrix_edges,
              _matrix_like),
    InputKind("the path or URL of an edge-list file", _is_path, _nodes_n, _file_edges,
              _file_like),
    InputKind("a DataFrame of edges (pandas, polars) or a pyarrow Table", is_dataframe,
              _nodes_n, _frame_edges),
    InputKind("an (m, 2) array of edges", _is_edge_array, _nodes_n, _array_edges),
)


def input_kind(G: Any) -> InputKind:
    """The row of the input table that accepts ``G``; TypeError listing them all if none.

    Examples
    --------
    >>> input_kind(nx.path_graph(3)).name
    'a networkx Graph or DiGraph'
    """
    for kind in INPUT_KINDS:
        if kind.accepts(G):
            return kind
    names = ", ".join(k.name for k in INPUT_KINDS)
    raise TypeError(f"G must be one of: {names}; got {type(G).__name__}")


def public_n(G: Any, nodes: Any = None) -> int | None:
    """The public number of nodes of a release of ``G``, from the arguments alone.

    Nothing is read or allocated: this is what memory and disk are checked
    against before the input is.  None when it is unknown (``nodes`` is an
    iterator, or missing where it is required).

    Examples
    --------
    >>> public_n(nx.path_graph(3)), public_n("edges.txt", nodes=10**11)
    (3, 100000000000)
    """
    return input_kind(G).count(G, nodes)


def stream_input(G: Any, nodes: Any = None, directed: bool = False, *,
                 options: ReadOptions | None = None) -> EdgeStream:
    """The public vertex set and the edges of any accepted input, through the table."""
    return input_kind(G).edges(G, nodes, bool(directed), options or ReadOptions())


def check_pairs(u: np.ndarray, v: np.ndarray, directed: bool, what: str, *,
                earlier: tuple[int, int] = (0, 0)) -> tuple[np.ndarray, np.ndarray]:
    """Refuse ends outside the vertex set and self-loops; orient undirected pairs ``u < v``.

    ``earlier`` is (missing ends, self-loops) counted in earlier blocks of the
    same input, so a refusal counts the whole input.
    """
    missing = int((u < 0).sum() + (v < 0).sum()) + earlier[0]
    if missing:
        raise ValueError(f"{what} names {missing} edge end(s) that are not in nodes=; nodes "
                         "must be the whole public vertex set")
    loops = int(np.count_nonzero(u == v)) + earlier[1]
    if loops:
        raise ValueError(f"{what} has self-loops ({loops}); vertex pairs {{i, i}} are not rows "
                         "of the database. Remove them")
    if not directed:
        u, v = np.minimum(u, v), np.maximum(u, v)
    return u.astype(np.int64, copy=False), v.astype(np.int64, copy=False)


def read_input(G: GraphInput, directed: bool = False,
               nodes: Sequence[Hashable] | int | None = None, *,
               edge_data: bool = False) -> EncodedGraph:
    """Validate any accepted input and encode its edges as node positions.

    Parameters
    ----------
    G : networkx graph, scipy.sparse matrix, edge-list path, DataFrame or (m, 2) array
        See :data:`INPUT_KINDS`.
    directed : bool, default False
        Ordered pairs; a networkx input must then be a DiGraph, a matrix
        may be asymmetric, and ``u v`` is the edge u -> v.
    nodes : int or sequence of node labels, optional
        The public vertex set.  Required for an edge array, table or file;
        for a matrix, the labels of its rows (default 0..n-1); for a
        networkx graph, a superset of its nodes.
    edge_data : bool, default False
        For a networkx graph, keep every edge's attribute dict in the same
        pass (``EncodedGraph.edge_data``; a typed release reads its values).

    Returns
    -------
    EncodedGraph
        The public vertex set in canonical order and every edge once, as
        positions (``rows < cols`` if undirected).

    Raises
    ------
    TypeError, ValueError
        For an input of another type, a missing or inconsistent ``nodes``,
        self-loops, or an asymmetric matrix without ``directed=True``.

    Examples
    --------
    >>> enc = read_input(np.array([[0, 1], [1, 2], [2, 1]]), nodes=4)
    >>> enc.n, enc.rows.tolist(), enc.cols.tolist()
    (4, [0, 1], [1, 2])
    """
    stream = stream_input(G, nodes, directed, options=ReadOptions(edge_data=bool(edge_data)))
    if stream.checked:
        (rows, cols), = list(stream.chunks)
        return EncodedGraph(stream.index, rows, cols, bool(directed), stream.edge_data)
    n = np.uint64(len(stream.index))
    # repeated mentions of a pair (or both orders of an undirected one) are one edge, collapsed
    # a block at a time: memory follows the distinct pairs, not the lines (keys u * n + v)
    seen, bad = DistinctKeys(), [0, 0]  # missing ends and self-loops, counted to the end
    for u, v in stream.chunks:
        u, v = np.asarray(u), np.asarray(v)
        if bad[0] or bad[1] or (u < 0).any() or (v < 0).any() or (u == v).any():
            bad = [bad[0] + int((u < 0).sum() + (v < 0).sum()), bad[1] + int((u == v).sum())]
            continue
        u, v = check_pairs(u, v, directed, stream.what)
        seen.add(u.astype(np.uint64) * n + v.astype(np.uint64))
    empty = np.zeros(0, dtype=np.int64)
    check_pairs(empty, empty, directed, stream.what, earlier=(bad[0], bad[1]))
    keys = seen.keys()
    return EncodedGraph(stream.index, (keys // n).astype(np.int64), (keys % n).astype(np.int64),
                        bool(directed))
