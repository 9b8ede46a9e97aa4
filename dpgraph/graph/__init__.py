"""Graph release: a graph is the database of its vertex pairs (K = 2)."""

from .private import PrivateGraph
from .api import release

__all__ = ["PrivateGraph", "release"]
