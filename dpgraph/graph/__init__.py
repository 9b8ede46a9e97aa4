"""Graph release: a graph is the database of its vertex pairs (K = 2)."""

from .private import PrivateGraph
from .api import release
from .sparse import SparseAdjacency

__all__ = ["PrivateGraph", "release", "SparseAdjacency"]
