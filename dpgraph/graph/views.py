"""networkx's views on a release: ``R.nodes`` and ``R.degree``.

A release speaks networkx where the meaning is the same, and refuses the rest
(:class:`NetworkxRefusals`: ``R.edges``, ``R.has_edge``, ``R.neighbors``, the
adjacency networkx functions walk) with a message naming what to use.  ``R.nodes`` is the
public vertex set, indexed by label as networkx's ``G.nodes`` is;
``R.degree`` is callable (``R.degree(nbunch)``), subscriptable
(``R.degree[v]``) and iterable (``(node, estimate)`` pairs) like networkx's
degree view, with debiased estimates in place of the true degrees.  Positions
(row i of the released matrix) are ``R.node_index.nodes[i]``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Hashable, Iterator, Mapping, Set
from types import MappingProxyType
from typing import Any

from .encoding import NodeIndex

__all__ = ["DegreeAttribute", "DegreeView", "NetworkxRefusals", "NodeView", "NotAGraphError"]

#: the attributes of every node of a release: none (only the vertex set is public)
_NO_ATTRIBUTES: Mapping = MappingProxyType({})


class NodeView(Mapping, Set):
    """The public vertex set of a release, like networkx's ``G.nodes``.

    Iterable in the release's canonical order, sized, ``v in R.nodes``,
    callable (``R.nodes()`` is the view itself) and indexed by *label*, as
    networkx's view is: ``R.nodes[v]`` is v's attribute dictionary, and a
    release keeps no node attributes, so it is an empty read-only mapping
    (``R.nodes[v].get("club")`` is None).  A label that is not a node raises
    KeyError naming it; a slice is refused, as networkx refuses it.  The i-th
    node (row i of ``R.to_scipy_sparse()``) is ``list(R.nodes)[i]``, or
    ``R.node_index.nodes[i]`` without building a list.  The view equals a
    tuple or another view holding the same nodes in the same order, and
    supports set operations (``R.nodes & {1, 2}``) as networkx's does.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> R = dpgraph.release(nx.path_graph(["a", "b", "c"]), epsilon=1.0, seed=0)
    >>> R.nodes
    NodeView(('a', 'b', 'c'))
    >>> list(R.nodes()), "b" in R.nodes, len(R.nodes), dict(R.nodes["a"])
    (['a', 'b', 'c'], True, 3, {})
    """

    __slots__ = ("_index",)

    def __init__(self, index: NodeIndex) -> None:
        self._index = index

    def __call__(self, data: Any = False) -> NodeView:
        if data is not False:
            raise TypeError("a release keeps no node attributes (only the vertex set is "
                            "public): call R.nodes() without data")
        return self

    def __len__(self) -> int:
        return len(self._index)

    def __iter__(self) -> Iterator[Hashable]:
        return iter(self._index.nodes)

    def __contains__(self, v: Any) -> bool:
        return v in self._index

    def __getitem__(self, v: Any) -> Mapping:
        if isinstance(v, slice):
            raise TypeError(f"NodeView does not support slicing, try list(R.nodes)"
                            f"[{v.start or ''}:{v.stop or ''}]")
        if v not in self._index:  # node labels are public: naming one reveals nothing
            raise KeyError(f"node {v!r} is not in the release")
        return _NO_ATTRIBUTES

    @classmethod
    def _from_iterable(cls, it: Any) -> set:  # set operations give plain sets, as networkx's
        return set(it)

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, NodeView):
            other = other._index.nodes
        if not isinstance(other, (tuple, range)):
            return NotImplemented
        mine = self._index.nodes
        if isinstance(mine, range) and isinstance(other, range):
            return mine == other
        return len(mine) == len(other) and all(a == b for a, b in zip(mine, other))

    def __hash__(self) -> int:
        return hash(tuple(self._index.nodes))

    def __repr__(self) -> str:  # node labels are public
        nodes = self._index.nodes
        if len(nodes) <= 20:
            return f"NodeView({tuple(nodes)!r})"
        head = ", ".join(repr(v) for v in nodes[:5])
        return f"NodeView({len(nodes)} nodes: {head}, ..., {nodes[-1]!r})"


class DegreeView:
    """``R.degree``: networkx's degree view over the debiased degree estimates.

    ``R.degree(v)``, ``R.degree(nbunch)`` and ``R.degree()`` call
    :func:`dpgraph.graph.analytics.degree` (same arguments, including
    ``proper=``); ``R.degree[v]`` is ``R.degree(v)`` (KeyError naming v
    when it is not a node); iterating gives ``(node, estimate)`` pairs of
    every node, as ``for v, d in G.degree`` does; ``len(R.degree)`` is the
    number of nodes and ``v in R.degree`` whether v is one; ``to_frame()``
    and ``to_dict()`` are every node's as a table (value, std, ci_low,
    ci_high, resolved, reason).  Each estimate
    is an :class:`~dpgraph.core.Estimate` (a number with an error bar).

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> R = dpgraph.release(nx.star_graph(40), epsilon=2.0, seed=2)
    >>> float(R.degree[0]) == float(R.degree(0)), len(R.degree), 0 in R.degree
    (True, 41, True)
    >>> [v for v, d in R.degree][:3]
    [0, 1, 2]
    """

    __slots__ = ("_func", "_release")

    def __init__(self, release: Any, func: Callable) -> None:
        self._release = release
        self._func = func

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._func(self._release, *args, **kwargs)

    @property
    def __signature__(self) -> inspect.Signature:  # the analytic's, without the release
        sig = inspect.signature(self._func)
        return sig.replace(parameters=list(sig.parameters.values())[1:])

    def __getitem__(self, v: Any) -> Any:
        if isinstance(v, slice) or v not in self._release.node_index:
            raise KeyError(f"node {v!r} is not in the release")
        return self._func(self._release, v)

    def __iter__(self) -> Iterator[tuple[Hashable, Any]]:
        return iter(self._func(self._release))

    def __len__(self) -> int:
        return self._release.number_of_nodes()

    def __contains__(self, v: Any) -> bool:
        return v in self._release.node_index

    def to_dict(self) -> dict:
        """Every node's degree estimate as columns (``R.degree().to_dict()``)."""
        return self._func(self._release).to_dict()

    def to_frame(self) -> Any:
        """Every node's degree estimate as a pandas DataFrame (``R.degree().to_frame()``)."""
        return self._func(self._release).to_frame()

    def __repr__(self) -> str:  # a summary, never the values
        return f"DegreeView({len(self)} nodes)"


class DegreeAttribute:
    """The attribute ``R.degree``: a :class:`DegreeView` of the release.

    On the class (``PrivateGraph.degree``) it is the method the analytic
    registry made, so its docstring and signature stay those of
    :func:`dpgraph.graph.analytics.degree`.
    """

    def __init__(self, method: Callable) -> None:
        self._method = method
        self.__doc__ = method.__doc__

    def __get__(self, release: Any, owner: type | None = None) -> Any:
        if release is None:
            return self._method
        return DegreeView(release, self._method)


class NotAGraphError(AttributeError):
    """A networkx name a release does not have: the message says what to use instead.

    An AttributeError, so ``hasattr(R, "edges")`` is False and code that
    tells graphs apart by their attributes does not take a release for one;
    read directly (``R.edges``) or by a networkx function (``nx.cut_size(R,
    S)``) it says why and what answers the question.
    """


_WHY = ("a release does not know the graph's edges: each vertex pair was flipped at random, so "
        "the released edges are mostly noise and a networkx function run on them would read "
        "noise as the graph. ")
_RAW = "R.to_networkx() is the raw released graph, for a networkx function run knowingly on noise"


class _Refused:
    """A networkx attribute of a graph that a release refuses (:class:`NotAGraphError`)."""

    def __init__(self, instead: str) -> None:
        self.instead = instead
        self.__doc__ = f"Refused (:class:`NotAGraphError`): use {instead}."

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, release: Any, owner: type | None = None) -> Any:
        if release is None:
            return self
        raise NotAGraphError(f"R.{self.name} is not defined: {_WHY}Use {self.instead}; {_RAW}")


_CUT = "R.cut(S, T) for the edges between two node sets (nx.cut_size), R.number_of_edges()"
_PAIR = ("R.cut([u], [v]) for one pair's estimate (mostly noise: a release cannot tell whether "
         "one pair is an edge)")
_NEAR = "R.degree(v) for a node's debiased degree (its neighbours are not known)"
_ANY = ("R.nodes for the public vertex set and the release's estimators (R.cut, R.degree, "
        "R.triangles, R.local_clustering, R.communities)")
_SUB = "R.cut and R.degree on the nodes of interest"


class NetworkxRefusals:
    """networkx's edge-level names on a release, each refused with what to use instead.

    ``R.edges``, ``R.has_edge``, ``R.neighbors``, ``R.adj`` and the rest
    would hand out the released edges as if they were the graph's.  Each
    raises :class:`NotAGraphError` naming the release's estimator for the
    question (``R.cut`` for ``nx.cut_size``, ``R.degree`` for the
    neighbours) and :meth:`~dpgraph.PrivateGraph.to_networkx` for the raw
    released graph; a networkx function given a release
    (``nx.cut_size(R, S)``, ``nx.clustering(R)``) stops at the first of
    them it reads.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> R = dpgraph.release(nx.path_graph(4), epsilon=1.0, seed=0)
    >>> hasattr(R, "edges")
    False
    >>> try:
    ...     nx.cut_size(R, [0, 1])
    ... except AttributeError as e:
    ...     print(str(e)[:59])
    R.is_multigraph is not defined: a release does not know the
    """

    edges = _Refused(_CUT)
    out_edges = _Refused(_CUT)
    in_edges = _Refused(_CUT)
    size = _Refused(_CUT)
    has_edge = _Refused(_PAIR)
    get_edge_data = _Refused(_PAIR)
    neighbors = _Refused(_NEAR)
    successors = _Refused(_NEAR)
    predecessors = _Refused(_NEAR)
    adj = _Refused(_NEAR)
    succ = _Refused(_NEAR)
    pred = _Refused(_NEAR)
    nbunch_iter = _Refused(_ANY)
    is_multigraph = _Refused(_ANY)
    subgraph = _Refused(_SUB)
    edge_subgraph = _Refused(_SUB)
    # the internals networkx functions read directly (nx.triangles, connected_components)
    _adj = _Refused(_NEAR)
    _succ = _Refused(_NEAR)
    _pred = _Refused(_NEAR)
    _node = _Refused(_ANY)
