"""Parsing and loading: SNAP edge lists and MovieLens-style ratings, vectorized.

Whole files are tokenized with numpy, and malformed lines are reported by line
number without echoing their content (a data file may be private).
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any, Union

import numpy as np

from .._frames import drops_input_frames
from ..graph.edgelist import int_column, read_table_chunks
from ..validation import Boolean, Integer, Options, validate_params
from .registry import REGISTRY, available, fetch  # noqa: F401 (available: used by the doctests)

__all__ = [
    "Ratings",
    "bitcoin_alpha",
    "email_eu_core",
    "facebook",
    "movielens_100k",
    "movielens_cofans",
    "read_ratings",
    "snap_edgelist",
]

PathLike = Union[str, "os.PathLike[str]"]


def _int_table(path: Path, label: str, columns: int, exact: bool = False,
               delimiter: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The first ``columns`` integer columns of a file and the line of every row.

    Read through dpgraph's one edge-list reader
    (:func:`dpgraph.graph.edgelist.read_table_chunks`: ``#`` comments, ``%``
    comment lines, gzip, line numbers in errors, never content).
    """
    tables, lines = [], []
    for chunk in read_table_chunks(path, columns=columns, exact=exact, delimiter=delimiter):
        tables.append(np.column_stack([int_column(c, chunk.lines, label)
                                       for c in chunk.columns]))
        lines.append(chunk.lines)
    if not tables:
        return np.empty((0, columns), dtype=np.int64), np.empty(0, dtype=np.int64)
    return np.concatenate(tables), np.concatenate(lines)


def _resolve_source(path_or_name: Any, arg: str) -> tuple[Path, str]:
    if isinstance(path_or_name, str) and path_or_name in REGISTRY:
        return fetch(path_or_name), path_or_name
    if not isinstance(path_or_name, (str, os.PathLike)):
        raise TypeError(
            f"{arg} must be a registered dataset name or a file path, "
            f"got {type(path_or_name).__name__}"
        )
    path = Path(path_or_name).expanduser()
    if not path.is_file():
        known = ", ".join(sorted(REGISTRY))
        raise ValueError(
            f"{arg}: no such file {str(path)!r} and not a registered dataset name ({known}); "
            "pass an existing path"
        )
    return path, path.name


# --------------------------------------------------------------------------- graphs


@drops_input_frames
@validate_params(directed=Boolean(), self_loops=Options("error", "drop"))
def snap_edgelist(
    path_or_name: PathLike, directed: bool = False, self_loops: str = "error"
) -> Any:
    """Load a SNAP-style edge list (one ``u v`` pair of integer ids per line).

    Read by dpgraph's one edge-list reader
    (:func:`dpgraph.graph.edgelist.read_table_chunks`): ``#`` starts a
    comment, lines starting with ``%`` are comments, gzip files are detected
    by their magic bytes, and columns after the first two (weights,
    timestamps) are ignored.

    Parameters
    ----------
    path_or_name : str or os.PathLike
        A file path or a registered dataset name (e.g. ``"facebook"``).
    directed : bool, default False
        Return a ``networkx.DiGraph`` instead of a ``networkx.Graph``.
    self_loops : {"error", "drop"}, default "error"
        What to do with ``u u`` lines.  dpgraph's release refuses graphs with
        self-loops, so the default reports them (by line number).

    Returns
    -------
    networkx.Graph or networkx.DiGraph
        Integer node ids; duplicate edges are merged.

    Raises
    ------
    ValueError
        Missing file, a line without 2 integer columns, negative ids, or a
        self-loop with ``self_loops="error"``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "g.txt").write_text("# toy\\n0 1\\n1 2\\n")
    >>> G = snap_edgelist(d / "g.txt")
    >>> G.number_of_nodes(), G.number_of_edges()
    (3, 2)
    """
    import networkx as nx

    path, label = _resolve_source(path_or_name, "path_or_name")
    edges, lines = _int_table(path, label, 2)
    if (edges < 0).any():
        ln = int(lines[np.flatnonzero((edges < 0).any(axis=1))[0]])
        raise ValueError(f"{label}, line {ln}: node ids must be non-negative integers")
    loops = edges[:, 0] == edges[:, 1]
    if loops.any():
        if self_loops == "error":
            ln = int(lines[np.flatnonzero(loops)[0]])
            raise ValueError(
                f"{label}, line {ln}: self-loop; pass self_loops='drop' to discard self-loops"
            )
        edges = edges[~loops]
    G = nx.DiGraph() if directed else nx.Graph()
    G.add_nodes_from(np.unique(edges).tolist())
    G.add_edges_from(edges.tolist())
    return G


_LOADER_SECTIONS = """
    Returns
    -------
    networkx.{kind}
        Named ``"{name}"`` (in ``G.graph["name"]``).

    Raises
    ------
    DatasetNotFoundError
        The registered ``"{dataset}"`` file is not present and cannot be
        downloaded (see :func:`fetch`).

    Examples
    --------
    >>> G = {func}()  # doctest: +SKIP
    >>> G.number_of_nodes(), G.number_of_edges()  # doctest: +SKIP
    {shape}
"""


def _registered_graph(dataset: str, name: str, kind: str, shape: tuple[int, int]) -> Any:
    """Decorator of a loader of one registered graph: its docstring's common sections."""
    def decorate(func: Any) -> Any:
        func.__doc__ = func.__doc__.rstrip() + "\n" + _LOADER_SECTIONS.format(
            kind=kind, name=name, dataset=dataset, func=func.__name__, shape=shape) + "    "
        return func
    return decorate


@_registered_graph("facebook", "SNAP ego-Facebook", "Graph", (4039, 88234))
def facebook() -> Any:
    """Load SNAP ego-Facebook as an undirected ``networkx.Graph``.

    4039 nodes (ids 0..4038), 88234 edges; the file is checked against its
    published SHA-256.  Cite McAuley & Leskovec, "Learning to Discover Social
    Circles in Ego Networks", NIPS 2012.
    """
    G = snap_edgelist("facebook")
    G.graph["name"] = "SNAP ego-Facebook"
    return G


@_registered_graph("bitcoin-alpha", "SNAP Bitcoin Alpha", "DiGraph", (3783, 24186))
def bitcoin_alpha() -> Any:
    """Load SNAP Bitcoin Alpha, a signed, weighted trust network, as a ``networkx.DiGraph``.

    Users of the Bitcoin Alpha platform rate each other from -10 (total
    distrust) to +10 (total trust); 3783 users (the nodes: every user in the
    file) and 24186 ratings u -> v with edge attributes ``rating`` (int, never
    0) and ``time`` (seconds since the epoch).  94% of the ratings are
    positive; ratings 1 and 2 are 79% of those.  The file (lines
    ``source,target,rating,time``) is checked against its registered
    SHA-256.  Cite S. Kumar, F. Spezzano, V. S. Subrahmanian, C. Faloutsos,
    "Edge Weight Prediction in Weighted Signed Networks", ICDM 2016.
    """
    import networkx as nx

    path, source = _resolve_source("bitcoin-alpha", "bitcoin_alpha")
    table, lines = _int_table(path, source, 4, exact=True, delimiter=",")
    u, v, rating, time = (table[:, k] for k in range(4))
    bad = np.flatnonzero((u == v) | (rating == 0) | (np.abs(rating) > 10))
    if bad.size:
        raise ValueError(f"{source}, line {int(lines[bad[0]])}: expected a rating of -10..10 "
                         "(not 0) between two different users")
    G = nx.DiGraph(name="SNAP Bitcoin Alpha")
    G.add_nodes_from(np.unique(np.concatenate([u, v])).tolist())
    G.add_edges_from((a, b, {"rating": r, "time": t}) for a, b, r, t in
                     zip(u.tolist(), v.tolist(), rating.tolist(), time.tolist()))
    if G.number_of_edges() != u.size:
        raise ValueError(f"{source}: a user rates another more than once; expected one rating a pair")
    return G


@validate_params(departments=Boolean())
def email_eu_core(departments: bool = False) -> Any:
    """Load SNAP email-Eu-core as an undirected ``networkx.Graph``.

    Emails within a European research institution: 1005 nodes (every node of
    the department file, the 19 isolated ones included), 16064 undirected
    edges once direction, self-loops and duplicates are dropped.  The 42
    departments are the ground-truth communities.  Both files are checked
    against their SHA-256.  Cite Leskovec, Kleinberg & Faloutsos, "Graph
    evolution: densification and shrinking diameters", TKDD 2007, and Yin,
    Benson, Leskovec & Gleich, "Local higher-order graph clustering", KDD 2017.

    Parameters
    ----------
    departments : bool, default False
        Also return the department of every node.

    Returns
    -------
    networkx.Graph, or (networkx.Graph, dict)
        The graph; with ``departments=True`` also ``{node: department}``.

    Raises
    ------
    DatasetNotFoundError
        A file is not present and cannot be downloaded.

    Examples
    --------
    >>> if available("email-eu-core") and available("email-eu-core-departments"):
    ...     G, dept = email_eu_core(departments=True)
    ...     assert (G.number_of_nodes(), G.number_of_edges(), len(set(dept.values()))) == (1005, 16064, 42)
    """
    import networkx as nx

    D = snap_edgelist("email-eu-core", directed=True, self_loops="drop")
    path = fetch("email-eu-core-departments")
    table, _ = _int_table(path, path.name, 2, exact=True)
    labels = {int(v): int(d) for v, d in table.tolist()}
    G = nx.Graph(name="SNAP email-Eu-core (undirected)")
    G.add_nodes_from(sorted(set(labels) | set(D.nodes())))
    G.add_edges_from(D.edges())
    return (G, labels) if departments else G


# --------------------------------------------------------------------------- ratings


@dataclasses.dataclass(frozen=True, repr=False)
class Ratings:
    """A table of ratings, one row per rating (column arrays of equal length).

    Attributes
    ----------
    user, item, rating, timestamp : numpy.ndarray
        ``int64`` arrays; ``rating`` takes values in ``1..max_rating``.
    max_rating : int
        Size of the rating scale (5 for MovieLens).
    """

    user: np.ndarray
    item: np.ndarray
    rating: np.ndarray
    timestamp: np.ndarray
    max_rating: int = 5

    def __len__(self) -> int:
        return int(self.rating.shape[0])

    def __repr__(self) -> str:  # summary only, never the rows
        return (
            f"Ratings(n={len(self)}, users={np.unique(self.user).size}, "
            f"items={np.unique(self.item).size}, scale=1..{self.max_rating})"
        )

    def subset(self, mask_or_index: np.ndarray) -> Ratings:
        """Return the rows selected by a boolean mask or an index array.

        Examples
        --------
        >>> r = Ratings(np.array([1, 2]), np.array([5, 6]), np.array([3, 4]), np.array([0, 0]))
        >>> len(r.subset(r.rating > 3))
        1
        """
        return Ratings(
            self.user[mask_or_index],
            self.item[mask_or_index],
            self.rating[mask_or_index],
            self.timestamp[mask_or_index],
            self.max_rating,
        )


@drops_input_frames
@validate_params(max_rating=Integer(minimum=2))
def read_ratings(path: PathLike, max_rating: int = 5) -> Ratings:
    """Read a MovieLens-style ratings file: ``user item rating timestamp`` per line.

    Parameters
    ----------
    path : str or os.PathLike
        Plain or gzip-compressed, tab or space separated.
    max_rating : int, default 5
        Ratings must be integers in ``1..max_rating``.

    Returns
    -------
    Ratings

    Raises
    ------
    ValueError
        Missing file, a line without exactly 4 integer columns, or a rating
        outside ``1..max_rating``; the message gives the line number.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "u.data"
    >>> _ = p.write_text("1\\t10\\t5\\t0\\n2\\t10\\t3\\t0\\n")
    >>> r = read_ratings(p)
    >>> r.rating.tolist()
    [5, 3]
    """
    path, label = _resolve_source(path, "path")
    table, lines = _int_table(path, label, 4, exact=True)
    if table.shape[0] == 0:
        raise ValueError(f"{label}: no ratings found; expected 'user item rating timestamp' lines")
    rating = table[:, 2]
    bad = (rating < 1) | (rating > max_rating)
    if bad.any():
        ln = int(lines[np.flatnonzero(bad)[0]])
        raise ValueError(
            f"{label}, line {ln}: rating outside the universe 1..{max_rating}"
        )
    return Ratings(
        user=np.ascontiguousarray(table[:, 0]),
        item=np.ascontiguousarray(table[:, 1]),
        rating=np.ascontiguousarray(rating),
        timestamp=np.ascontiguousarray(table[:, 3]),
        max_rating=int(max_rating),
    )


def movielens_100k() -> Ratings:
    """Load the MovieLens 100K ratings (``u.data``), checksum-verified.

    100000 ratings 1..5 by 943 users of 1682 movies.  In dpgraph's
    statistical-query experiments these ratings stand in for the paper's
    Netflix ratings, which are not available.  The MovieLens licence forbids
    redistribution: dpgraph never ships the file.

    Returns
    -------
    Ratings
        With ``max_rating=5``.

    Raises
    ------
    DatasetNotFoundError
        Not in the data directory (dpgraph cannot ship it) and the
        download from GroupLens failed.

    Examples
    --------
    >>> if available("movielens-100k"):
    ...     r = movielens_100k()
    ...     assert len(r) == 100000 and set(r.rating.tolist()) == {1, 2, 3, 4, 5}
    """
    return read_ratings(fetch("movielens-100k"), max_rating=5)


@validate_params(min_shared=Integer(minimum=1))
def movielens_cofans(min_shared: int = 5) -> Any:
    """MovieLens 100K users as a graph: linked when both gave five stars to enough common movies.

    A real social-style graph derived from :func:`movielens_100k`: 943 users,
    an edge between two users who gave 5 stars to at least ``min_shared``
    common movies.  Nodes are 0..942 in the order of the sorted user ids.

    Parameters
    ----------
    min_shared : int, default 5
        Common five-star movies needed for an edge.

    Returns
    -------
    networkx.Graph

    Examples
    --------
    >>> if available("movielens-100k"):
    ...     G = movielens_cofans()
    ...     assert G.number_of_nodes() == 943 and G.number_of_edges() > 0
    """
    import networkx as nx
    import scipy.sparse as sp

    r = movielens_100k()
    users = np.unique(r.user)
    u = np.searchsorted(users, r.user)
    _, i = np.unique(r.item, return_inverse=True)
    five = r.rating == 5
    B = sp.csr_array((np.ones(int(five.sum())), (u[five], i[five])),
                     shape=(users.size, int(i.max()) + 1))
    C = (B @ B.T).tocoo()
    keep = (C.row < C.col) & (C.data >= min_shared)
    G = nx.Graph(name=f"MovieLens 100K co-fans (>= {min_shared} shared five-star movies)")
    G.add_nodes_from(range(users.size))
    G.add_edges_from(zip(C.row[keep].tolist(), C.col[keep].tolist()))
    return G
