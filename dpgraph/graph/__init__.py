"""Graph release: a graph is the database of its vertex pairs (K = 2)."""

from .entry import load, release
from .private import PrivateGraph
from .sparse import SparseAdjacency

__all__ = ["PrivateGraph", "SparseAdjacency", "load", "release"]
