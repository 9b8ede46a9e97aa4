"""The public universe of a typed release and the encoding of a graph's ties in it.

A typed release stores one value per vertex pair from a universe declared by
the curator before looking at the data: index 0 is "no tie", indices
1..K-1 are the declared tie values (kinds of relationship, or bins of a
numeric edge attribute).  It is the core's
:class:`~dpgraph.core.universe.Universe` of the labels [None, v_1, ...,
v_{K-1}] (None, never a tie value, stands for "no tie").  The universe is never read from the data: the
values present in a graph would reveal which kinds of tie occur.  A tie
whose attribute is missing, not declared, NaN or infinite is refused, and the
message gives a count, never the offending value.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from numbers import Real
from operator import is_
from typing import Any

import numpy as np

from ...core.sampling import value_bits
from ...core.universe import Universe
from ..encoding import EncodedGraph

__all__ = ["MAX_TIE_VALUES", "NO_TIE", "TieValues", "encode_typed", "has_other_attributes",
           "tie_values", "value_bits"]

#: At most this many tie values (K <= 256, 8 bit planes): every typed query
#: visits each value, and a file stores at most 8 planes.
MAX_TIE_VALUES = 255

_NO_TIE_WORDS = ("no tie", "none", "")


#: The label of "no tie" (value index 0) in the universe of a typed release.
NO_TIE = None


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
    universe : Universe
        The core's universe of a pair's values, labels ``[None, *values]``
        (derived; None is "no tie").
    """

    edge_attr: Hashable
    values: tuple
    bins: tuple | None = None
    universe: Universe = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "universe", Universe((NO_TIE, *self.values)))

    @property
    def K(self) -> int:
        """Size of the universe of a pair: the tie values plus "no tie"."""
        return self.universe.K

    def indices(self, values: Sequence) -> np.ndarray:
        """Value index of each of ``values``: 1..K-1 for a declared tie value, else 0 or -1.

        0 for None ("no tie"), -1 for anything else not declared; no error
        (the caller counts the refused ones without showing them).

        Examples
        --------
        >>> tie_values("kind", ["a", "b"]).indices(["b", "z", None]).tolist()
        [2, -1, 0]
        """
        return self.universe.lookup(values if isinstance(values, list) else list(values))

    def index_of(self, value: Any, name: str = "value") -> int:
        """Value index (1..K-1) of a declared tie value; ValueError naming ``name`` otherwise.

        Examples
        --------
        >>> tie_values("kind", ["friend", "family"]).index_of("family")
        2
        """
        idx = int(self.indices([value])[0])
        if idx >= 1:
            return idx
        raise ValueError(f"{name} is not one of the {len(self.values)} declared tie values; pick "
                         "one of them (a release's R.tie_values.values)")

    def row_function(self, value: Any = None, weights: Any = None) -> np.ndarray:
        """phi on the K values of a pair: [x = value], the declared weights, or [x is a tie].

        The row function of a typed count (the release's estimators) and of
        its planned std (the planner).

        Parameters
        ----------
        value : a declared tie value, optional
        weights : mapping {tie value: finite weight}, optional
            Values not listed weigh 0; "no tie" always weighs 0.

        Returns
        -------
        numpy.ndarray of float, shape (K,)

        Raises
        ------
        TypeError, ValueError
            Naming ``value`` or ``weights``: both given, an undeclared value, a
            weight that is not a real number (a string or a bool), a NaN or
            infinite weight, all weights 0.

        Examples
        --------
        >>> ties = tie_values("sign", ["-", "+"])
        >>> ties.row_function(value="+").tolist(), ties.row_function(weights={"-": -1, "+": 1}).tolist()
        ([0.0, 0.0, 1.0], [0.0, -1.0, 1.0])
        """
        phi = np.zeros(self.K)
        if value is not None and weights is not None:
            raise TypeError("pass value= (ties of one value) or weights= (a weighted count), not both")
        if weights is not None:
            if not isinstance(weights, Mapping):
                raise TypeError("weights must be a mapping {tie value: weight}, e.g. {'trust': 1, "
                                "'distrust': -1}")
            for key, w in weights.items():
                idx = self.index_of(key, "weights has a key that")
                if isinstance(w, (bool, np.bool_)) or not isinstance(w, Real):
                    raise TypeError("weights must map tie values to real numbers (not strings "
                                    "or booleans)")
                if not math.isfinite(float(w)):
                    raise ValueError("weights must be finite (no NaN or infinite weight)")
                phi[idx] = float(w)
            if not np.any(phi != 0):
                raise ValueError("weights gives every tie value weight 0; the count would be 0")
            return phi
        if value is not None:
            phi[self.index_of(value, "value")] = 1.0
            return phi
        phi[1:] = 1.0
        return phi

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
        edges = tuple(bins)
        if not all(_is_number(type(b)) for b in edges):
            raise TypeError("bins must hold real numbers (the bin edges), not strings or "
                            "booleans, e.g. bins=[-10, 0, 3, 10]")
        floats = tuple(_float_or_none(b) for b in edges)
        if any(b is None for b in floats):  # a 400-digit int, a huge Fraction
            raise ValueError("bins must be finite numbers within the float range (about "
                             "+-1.8e308); bound the attribute's range in advance, e.g. "
                             "bins=[-10, 0, 3, 10]")
        edges = floats
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


def _float_or_none(x: Any) -> float | None:
    """``float(x)``, or None when x is beyond the float range (an int of 400 digits)."""
    try:
        return float(x)
    except OverflowError:
        return None


def _is_number(t: type) -> bool:
    """A real-number type other than bool (a string or a bool is not a bin's number)."""
    return issubclass(t, Real) and not issubclass(t, (bool, np.bool_))


def _value_indices(attrs: list, ties: TieValues) -> np.ndarray:
    """Value index 1..K-1 of every tie's attribute; counts, never values, in errors.

    The common case costs one look-up a tie (one type check per distinct
    type for ``bins``); the refused ties are only examined to say how many
    of each kind there are.
    """
    name = f"edge attribute {ties.edge_attr!r}"
    if ties.bins is not None:
        if not all(map(_is_number, set(map(type, attrs)))):  # one type check per distinct type
            _refuse_missing(attrs, name)
            bad = sum(1 for a in attrs if not _is_number(type(a)))
            raise TypeError(f"{bad} edge(s) of G have an {name} that is not a real number (a "
                            "string or a boolean, say): bins= maps numbers; convert the "
                            "attribute to numbers, or declare its values with values=")
        x = None
        try:
            x = np.array(attrs, dtype=float)
        except OverflowError:  # raised outside the handler: nothing of the values is chained
            pass
        if x is None:
            huge = sum(1 for a in attrs if _float_or_none(a) is None)
            raise ValueError(f"{huge} edge(s) of G have an {name} beyond the float range "
                             f"(about +-1.8e308), outside the declared bins; widen bins= in "
                             "advance or bound the attribute")
        bad = int(np.count_nonzero(~np.isfinite(x)))
        if bad:
            raise ValueError(f"{bad} edge(s) of G have a NaN or infinite {name}; "
                             "weights must be finite")
        edges = np.asarray(ties.bins)
        outside = int(np.count_nonzero((x < edges[0]) | (x > edges[-1])))
        if outside:
            raise ValueError(f"{outside} edge(s) of G have an {name} outside the declared bins "
                             f"[{edges[0]:g}, {edges[-1]:g}]; widen bins= in advance")
        idx = np.searchsorted(edges, x, side="right")
        return np.minimum(idx, edges.size - 1).astype(np.int64)
    out = ties.indices(attrs).astype(np.int64, copy=False)  # <= 0: missing, None or not declared
    refused = np.flatnonzero(out <= 0).tolist()
    if not refused:
        return out
    bad = [attrs[k] for k in refused]
    _refuse_missing(bad, name)
    nonfinite = sum(1 for a in bad if isinstance(a, (float, np.floating)) and not math.isfinite(a))
    if nonfinite:
        raise ValueError(f"{nonfinite} edge(s) of G have a NaN or infinite {name}; "
                         "weights must be finite")
    raise ValueError(f"{len(bad)} edge(s) of G have an {name} that is not among the declared "
                     "values=; declare every tie value in advance (the values are not shown)")


def _refuse_missing(attrs: list, name: str) -> None:
    missing = sum(map(is_, attrs, repeat(_MISSING)))
    if missing:
        raise ValueError(f"{missing} edge(s) of G have no {name}; every tie of a typed release "
                         "needs a declared value")


_MISSING = object()


def _edge_data(enc: EncodedGraph) -> list:
    if enc.edge_data is None:
        raise ValueError("the input must be encoded with its edge attributes, "
                         "read_input(G, ..., edge_data=True)")
    return enc.edge_data


def encode_typed(enc: EncodedGraph, ties: TieValues) -> np.ndarray:
    """Value index (1..K-1) of every edge of ``enc`` (``enc.rows[k], enc.cols[k]``).

    Reads ``ties.edge_attr`` from the attribute dicts the encoder kept
    (``enc.edge_data``, one per encoded edge, read in the encoder's pass).

    Parameters
    ----------
    enc : EncodedGraph
        The input encoded with ``edge_data=True``.
    ties : TieValues

    Returns
    -------
    numpy.ndarray of int64, shape (m,)

    Raises
    ------
    ValueError, TypeError
        Counting the ties whose attribute is missing, undeclared, NaN or
        infinite, outside the bins, or not a number for ``bins=``; no
        value is shown.

    Examples
    --------
    >>> import networkx as nx
    >>> from dpgraph.graph.encoding import encode_graph
    >>> G = nx.Graph([(0, 1, {"kind": "b"}), (1, 2, {"kind": "a"})])
    >>> encode_typed(encode_graph(G, edge_data=True), tie_values("kind", ["a", "b"])).tolist()
    [2, 1]
    """
    data = _edge_data(enc)  # dict.get unbound: no method look-up a tie
    return _value_indices(list(map(dict.get, data, repeat(ties.edge_attr), repeat(_MISSING))), ties)


def has_other_attributes(enc: EncodedGraph) -> bool:
    """Whether some edge of ``enc`` carries more than one attribute (all edges, keys counted only).

    Called after :func:`encode_typed`, which refuses an edge without the
    typed attribute: an edge with more than one key then has another one.
    One ``len`` per attribute dict, no key or value read.

    Examples
    --------
    >>> import networkx as nx
    >>> from dpgraph.graph.encoding import encode_graph
    >>> G = nx.path_graph(4)
    >>> nx.set_edge_attributes(G, "a", "kind")
    >>> G.edges[2, 3]["note"] = "x"
    >>> has_other_attributes(encode_graph(G, edge_data=True))
    True
    """
    return max(map(len, _edge_data(enc)), default=0) > 1
