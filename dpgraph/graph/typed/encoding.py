"""The public universe of a typed release and the encoding of a graph's ties in it.

A typed release stores one value per vertex pair from a universe declared by
the curator before looking at the data: index 0 is "no tie", indices
1..K-1 are the declared tie values (kinds of relationship, or bins of a
numeric edge attribute).  The universe is never read from the data: the
values present in a graph would reveal which kinds of tie occur.  A tie
whose attribute is missing, not declared, NaN or infinite is refused, and the
message gives a count, never the offending value.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from itertools import chain, compress, repeat
from numbers import Real
from operator import is_, itemgetter, methodcaller
from typing import Any

import networkx as nx
import numpy as np

from ...core.pairs import pair_index
from ..encoding import EncodedGraph

__all__ = ["MAX_TIE_VALUES", "TieValues", "encode_typed", "tie_values", "value_bits"]

#: At most this many tie values (K <= 256, 8 bit planes): every typed query
#: visits each value, and a file stores at most 8 planes.
MAX_TIE_VALUES = 255

_NO_TIE_WORDS = ("no tie", "none", "")


def _hashable(v: Any) -> bool:
    try:
        hash(v)
    except TypeError:
        return False
    return True


def value_bits(K: int) -> int:
    """Bit planes needed to store a value index 0..K-1: ceil(log2 K).

    Examples
    --------
    >>> value_bits(2), value_bits(3), value_bits(4), value_bits(5)
    (1, 2, 2, 3)
    """
    return max(1, (int(K) - 1).bit_length())


@dataclass(frozen=True)
class TieValues:
    """The declared universe of tie values of a typed release (public).

    Attributes
    ----------
    edge_attr : hashable
        The edge attribute that holds a tie's value (in the input and in
        ``to_networkx()`` of the release).
    values : tuple
        The K - 1 tie values, in the declared order; value index i + 1 is
        ``values[i]``, index 0 is "no tie".
    bins : tuple of float or None
        For a numeric attribute, the bin edges b_0 < ... < b_{K-1}: tie value
        i covers [b_i, b_{i+1}) (the last bin includes its right edge).
    """

    edge_attr: Hashable
    values: tuple
    bins: tuple | None = None

    @property
    def K(self) -> int:
        """Size of the universe of a pair: the tie values plus "no tie"."""
        return len(self.values) + 1

    def index_of(self, value: Any, name: str = "value") -> int:
        """Value index (1..K-1) of a declared tie value; ValueError naming ``name`` otherwise.

        Examples
        --------
        >>> tie_values("kind", ["friend", "family"]).index_of("family")
        2
        """
        try:
            idx = {v: i + 1 for i, v in enumerate(self.values)}.get(value)
        except TypeError:  # unhashable
            idx = None
        if idx is not None:
            return idx
        raise ValueError(f"{name} is not one of the {len(self.values)} declared tie values of this "
                         f"release; pick one of R.tie_values.values")

    def __repr__(self) -> str:
        shown = ", ".join(repr(v) for v in self.values[:6]) + (", ..." if len(self.values) > 6 else "")
        return f"TieValues(edge_attr={self.edge_attr!r}, values=[{shown}], K={self.K})"


def _bin_label(lo: float, hi: float, last: bool) -> str:
    return f"[{lo:g}, {hi:g}]" if last else f"[{lo:g}, {hi:g})"


def tie_values(edge_attr: Any, values: Sequence | None = None,
               bins: Sequence[Real] | None = None) -> TieValues:
    """Validate a curator's declaration of tie values.

    Parameters
    ----------
    edge_attr : hashable
        The edge attribute holding each tie's value.
    values : sequence, optional
        The tie values (distinct, hashable; "no tie" is implicit and may not
        be listed).  With ``bins``, optional names of the bins.
    bins : sequence of float, optional
        Bin edges of a numeric attribute, finite and strictly increasing.

    Returns
    -------
    TieValues

    Raises
    ------
    TypeError, ValueError
        Naming the argument: no values and no bins, duplicates, "no tie" (or
        None) among the values, NaN or infinite bin edges, more than
        ``MAX_TIE_VALUES`` values.

    Examples
    --------
    >>> tie_values("rating", bins=[-10, 0, 3, 10]).values
    ('[-10, 0)', '[0, 3)', '[3, 10]')
    """
    if edge_attr is None:
        raise TypeError("edge_attr must name the edge attribute holding each tie's value")
    try:
        hash(edge_attr)
    except TypeError:
        raise TypeError("edge_attr must be hashable (an attribute name such as 'kind')") from None
    edges = None
    if bins is not None:
        if isinstance(bins, (str, bytes)) or not hasattr(bins, "__iter__"):
            raise TypeError("bins must be a sequence of bin edges, e.g. bins=[-10, 0, 3, 10]")
        try:
            edges = tuple(float(b) for b in bins)
        except (TypeError, ValueError):
            raise TypeError("bins must hold real numbers (the bin edges)") from None
        if len(edges) < 2:
            raise ValueError("bins needs at least 2 edges (one bin), e.g. bins=[0, 1, 10]")
        if not all(math.isfinite(b) for b in edges):
            raise ValueError("bins must be finite (no NaN or infinite edges); bound the attribute's "
                             "range in advance, e.g. bins=[-10, 0, 3, 10]")
        if any(b >= c for b, c in itertools.pairwise(edges)):
            raise ValueError("bins must be strictly increasing")
    if values is None:
        if edges is None:
            raise ValueError("a typed release needs the tie values declared in advance: pass "
                             "values=[...] (kinds of tie) or bins=[...] (a numeric attribute)")
        labels = tuple(_bin_label(lo, hi, k == len(edges) - 2)
                       for k, (lo, hi) in enumerate(itertools.pairwise(edges)))
    else:
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
            raise TypeError("values must be a sequence of tie values, e.g. values=['friend', 'family']")
        labels = tuple(v.item() if isinstance(v, np.generic) else v for v in values)
        if not labels:
            raise ValueError("values is empty; declare at least one tie value")
        for v in labels:
            try:
                hash(v)
            except TypeError:
                raise TypeError("values must be hashable (strings, numbers)") from None
            if v is None or (isinstance(v, str) and v.strip().lower() in _NO_TIE_WORDS):
                raise ValueError("values must list the tie values only: 'no tie' is implicit "
                                 "(value index 0); remove it from values")
            if isinstance(v, float) and not math.isfinite(v):
                raise ValueError("values must not hold NaN or infinite numbers")
        if len(set(labels)) != len(labels):
            raise ValueError("values has duplicates; list each tie value once")
        if edges is not None and len(labels) != len(edges) - 1:
            raise ValueError(f"values names {len(labels)} bins but bins has {len(edges) - 1}; "
                             "give one name per bin")
    if len(labels) > MAX_TIE_VALUES:
        raise ValueError(f"values: {len(labels)} tie values declared; a typed release stores at "
                         f"most {MAX_TIE_VALUES} (K <= 256 values a pair, 8 bit planes)")
    return TieValues(edge_attr, labels, edges)


def _value_indices(attrs: list, ties: TieValues) -> np.ndarray:
    """Value index 1..K-1 of every tie's attribute; counts, never values, in errors."""
    name = f"edge attribute {ties.edge_attr!r}"
    missing = sum(map(is_, attrs, repeat(_MISSING)))
    if missing:
        raise ValueError(f"{missing} edge(s) of G have no {name}; every tie of a typed release "
                         "needs a declared value")
    if ties.bins is not None:
        try:
            x = np.array(attrs, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"the {name} must be numeric when bins= is given "
                             "(some edges hold non-numbers)") from None
        bad = int(np.count_nonzero(~np.isfinite(x)))
        if bad:
            raise ValueError(f"{bad} edge(s) of G have a NaN or infinite {name}; "
                             "weights must be finite")
        edges = np.asarray(ties.bins)
        outside = int(np.count_nonzero((x < edges[0]) | (x > edges[-1])))
        if outside:
            raise ValueError(f"{outside} edge(s) of G have a {name} outside the declared bins "
                             f"[{edges[0]:g}, {edges[-1]:g}]; widen bins= in advance")
        idx = np.searchsorted(edges, x, side="right")
        return np.minimum(idx, edges.size - 1).astype(np.int64)
    lookup = {v: i + 1 for i, v in enumerate(ties.values)}
    try:  # dict look-ups at C speed; 0 where a value is not declared
        out = np.fromiter(map(lookup.get, attrs, repeat(0)), dtype=np.int64, count=len(attrs))
    except TypeError:  # an unhashable attribute: one at a time
        out = np.array([lookup.get(a, 0) if _hashable(a) else 0 for a in attrs], dtype=np.int64)
    nonfinite = unknown = 0
    for k in np.flatnonzero(out == 0).tolist():
        a = attrs[k]
        if isinstance(a, (float, np.floating)) and not math.isfinite(a):
            nonfinite += 1
        else:
            unknown += 1
    if nonfinite:
        raise ValueError(f"{nonfinite} edge(s) of G have a NaN or infinite {name}; "
                         "weights must be finite")
    if unknown:
        raise ValueError(f"{unknown} edge(s) of G have a {name} that is not among the declared "
                         "values=; declare every tie value in advance (the values are not shown)")
    return out


_MISSING = object()


def encode_typed(G: Any, enc: EncodedGraph, ties: TieValues) -> np.ndarray:
    """Value index (1..K-1) of every edge of ``enc`` (``enc.rows[k], enc.cols[k]``).

    Parameters
    ----------
    G : networkx.Graph or networkx.DiGraph
        The input, whose edges carry ``ties.edge_attr``.
    enc : EncodedGraph
        Its encoding (positions over the public vertex set).
    ties : TieValues

    Returns
    -------
    numpy.ndarray of int64, shape (m,)

    Examples
    --------
    >>> import networkx as nx
    >>> from dpgraph.graph.encoding import encode_graph
    >>> G = nx.Graph([(0, 1, {"kind": "b"}), (1, 2, {"kind": "a"})])
    >>> encode_typed(G, encode_graph(G), tie_values("kind", ["a", "b"])).tolist()
    [2, 1]
    """
    if not isinstance(G, nx.Graph):
        raise TypeError("edge_attr= needs a networkx Graph or DiGraph whose edges carry the "
                        f"attribute, got {type(G).__name__}")
    # every (u, v, data) of G's adjacency at C speed (an undirected edge appears twice),
    # then each encoded pair finds its attribute by its pair index
    items = list(G.adjacency())
    inner = list(map(itemgetter(1), items))
    deg = np.fromiter(map(len, inner), dtype=np.int64, count=len(inner))
    n, total = enc.n, int(deg.sum())
    u = np.repeat(enc.index.positions(map(itemgetter(0), items), len(items)), deg)
    v = enc.index.positions(chain.from_iterable(inner), total)
    get = methodcaller("get", ties.edge_attr, _MISSING)
    datas = list(chain.from_iterable(map(dict.values, inner)))
    if not enc.directed:
        first = u < v  # an undirected edge is listed from both ends: keep one
        u, v = u[first], v[first]
        datas = list(compress(datas, first.tolist()))
    if np.array_equal(u, enc.rows) and np.array_equal(v, enc.cols):  # the encoder's own order
        return _value_indices(list(map(get, datas)), ties)
    key = pair_index(np.minimum(u, v) if not enc.directed else u,
                     np.maximum(u, v) if not enc.directed else v, n, enc.directed)
    order = np.argsort(key, kind="stable")
    pos = order[np.searchsorted(key[order], pair_index(enc.rows, enc.cols, n, enc.directed))]
    attrs = list(map(get, itemgetter(*pos.tolist())(datas))) if pos.size > 1 else \
        [get(datas[int(p)]) for p in pos]
    return _value_indices(attrs, ties)
