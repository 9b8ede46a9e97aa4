"""The typed branch of :func:`dpgraph.release`: validate, open the transaction, sample."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Hashable, Sequence
from numbers import Real
from typing import Any, NamedTuple

from networkx import DiGraph, Graph

from ...core.estimators import Channel
from ...core.probabilities import RRProbabilities
from ...core.transaction import ReleaseTransaction
from ...exceptions import DroppedAttributesWarning
from .. import kinds
from ..encoding import NodeIndex
from ..inputs import _warn_dropped, public_n, read_input, vertex_set
from ..tables import frame_columns, is_dataframe
from .adjacency import TypedAdjacency
from .encoding import TieValues, encode_typed, has_other_attributes, tie_values
from .sparse_adjacency import SparseTypedAdjacency

__all__ = ["TypedParts", "typed_release"]


class TypedParts(NamedTuple):
    """What a typed release is made of (the arguments of a PrivateGraph)."""

    adjacency: TypedAdjacency | SparseTypedAdjacency
    index: NodeIndex
    probabilities: RRProbabilities
    tie_values: TieValues
    channel: Channel | None = None  # the subsampled K-ary channel of a sparse release
    keep: float = 1.0


def typed_release(G: Any, epsilon: float, seed: Any, *, directed: bool,
                  nodes: Sequence[Hashable] | None, ledger: Any, edge_attr: Any,
                  values: Sequence | None, bins: Sequence[Real] | None,
                  keep: Any, target_edges: Any, max_edges: Any,
                  edge_bound: Any = None) -> TypedParts:
    """Release G's pairs with their declared tie values, K-ary mechanism E on every pair.

    Every check happens before :meth:`ReleaseTransaction.commit`: the
    declaration, epsilon for K values, the input and its attribute values,
    ``keep``/``target_edges`` (a sparse typed release) and the memory needed,
    sized from public quantities only (n, K, epsilon, keep and the declared
    ``edge_bound``, or the worst case), never from the input's ties.
    """
    if edge_attr is None:
        raise TypeError("values= and bins= declare the values of an edge attribute: pass "
                        "edge_attr= too (e.g. edge_attr='kind')")
    sparse = keep is not None or target_edges is not None
    if max_edges is not None:
        raise ValueError("max_edges= (the constant-time mode) is for untyped releases; a typed "
                         "release's time grows with its ties like the binary release's does")
    ties = tie_values(edge_attr, values, bins)
    if is_dataframe(G):  # the same tables as an untyped release, with a value column
        G = _table_graph(G, edge_attr, nodes, directed)
    if not isinstance(G, Graph):
        raise TypeError("edge_attr= names the value of each edge: pass a networkx Graph or "
                        "DiGraph whose edges carry that attribute, or a DataFrame (pandas, "
                        f"polars) or pyarrow Table with a column of that name; got "
                        f"{type(G).__name__}")
    tx = ReleaseTransaction(epsilon, K=ties.K, seed=seed, ledger=ledger)
    row = kinds.row_for(typed=True, sparse=sparse)
    n = public_n(G, nodes)
    if isinstance(n, int) and n >= 2:  # from public quantities, before reading G
        plan = kinds.check(row, tx.probabilities, n, directed, keep, target_edges, edge_bound)
    with warnings.catch_warnings():  # the typed attribute is released, not dropped
        warnings.simplefilter("ignore", DroppedAttributesWarning)
        enc = read_input(G, directed=directed, nodes=nodes, edge_data=True)
    x = encode_typed(enc, ties)  # the attribute dicts the encoder kept, in its pass
    if not (isinstance(n, int) and n >= 2):  # n was not known from the arguments: it is now
        plan = kinds.check(row, tx.probabilities, enc.n, directed, keep, target_edges,
                           edge_bound)
    if has_other_attributes(enc):
        _warn_other_attributes(ties.edge_attr)
    data = row.mechanics.prepare(enc, x, plan)  # what grows with the ties: sized with the input
    made = kinds.run(row, tx, enc, data, plan)  # charge, then sample
    return TypedParts(made.adjacency, enc.index, tx.probabilities, ties, made.channel, made.keep)


def _table_graph(df: Any, edge_attr: Any, nodes: Any, directed: bool) -> Graph:
    """A table of edges with the column ``edge_attr``, as the networkx graph the typed encoder reads.

    The edge ends are the columns ``source`` and ``target`` when the table has
    both, else its first two columns besides ``edge_attr``; other columns are
    dropped with a :class:`~dpgraph.exceptions.DroppedAttributesWarning`.  A
    pair listed twice keeps its last value.  ``nodes=`` is required, as for
    an untyped table: the vertex set is never read off the edges.
    """
    vertex_set(nodes, "a table of edges")  # refuses nodes=None, before reading the table
    names, column = frame_columns(df)
    name = str(edge_attr)
    if name not in names:
        raise ValueError(f"edge_attr={edge_attr!r} names no column of the table; its columns "
                         f"are {names}")
    rest = [c for c in names if c != name]
    ends = ["source", "target"] if {"source", "target"} <= set(rest) else rest[:2]
    if len(ends) < 2:
        raise ValueError(f"a table of edges needs two columns for the edge ends besides "
                         f"edge_attr={edge_attr!r}; got {names}")
    if len(names) > 3:
        _warn_dropped(f"columns other than the edge ends and {edge_attr!r}")
    u, v, x = column(ends[0]), column(ends[1]), column(name)
    H = DiGraph() if directed else Graph()
    H.add_edges_from((a, b, {edge_attr: w}) for a, b, w in zip(u.tolist(), v.tolist(), x.tolist()))
    return H


def _warn_other_attributes(edge_attr: Any) -> None:
    """Warn that edges carry attributes besides ``edge_attr`` (they are dropped).

    Every edge is checked (one ``len`` of its attribute dict,
    :func:`~.encoding.has_other_attributes`), not one edge a node as the
    untyped release's warning does: the typed release reads every edge's
    attribute dict anyway.
    """
    level, frame = 2, sys._getframe(1)  # point at the first frame outside dpgraph
    while frame is not None and frame.f_globals.get("__name__", "").startswith("dpgraph."):
        level, frame = level + 1, frame.f_back
    warnings.warn(f"the input's edge attributes other than {edge_attr!r} are dropped: a "
                  "typed release publishes each pair's declared value only",
                  DroppedAttributesWarning, stacklevel=level)
