"""Graph release: a graph is the database of its vertex pairs (K = 2, or K values typed).

The faces of this layer: :func:`release` and :func:`load`, the released graph
:class:`PrivateGraph`, the :class:`~dpgraph.graph.protocol.Release` protocol the
analytics are typed on, the storage protocols (:class:`Adjacency`,
:class:`PackedWords`, :class:`ValuedAdjacency` of a typed release), the declared
tie values of a typed release (:class:`TieValues`) and the public vertex order
(:func:`canonical_node_order`).
"""

from .adjacency import Adjacency, PackedWords, ValuedAdjacency
from .encoding import NodeIndex, canonical_node_order
from .entry import load, release
from .private import PrivateGraph
from .protocol import Release
from .sparse import SparseAdjacency
from .typed import TieValues, TypedAdjacency

__all__ = [
    "Adjacency",
    "NodeIndex",
    "PackedWords",
    "PrivateGraph",
    "Release",
    "SparseAdjacency",
    "TieValues",
    "TypedAdjacency",
    "ValuedAdjacency",
    "canonical_node_order",
    "load",
    "release",
]
