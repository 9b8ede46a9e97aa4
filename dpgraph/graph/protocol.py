"""``Release``: what an analytic may ask of a released graph.

The analytics (:mod:`dpgraph.graph.analytics`) are functions of a release,
typed on this protocol rather than on :class:`~dpgraph.graph.PrivateGraph`,
so they sit below the class that exposes them as methods and no import runs
back up.  Everything here is public metadata or post-processing of the
released pairs; nothing reaches the input graph.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Protocol, runtime_checkable

import numpy as np

from ..core.estimators import Channel
from .adjacency import Adjacency
from .encoding import NodeIndex

__all__ = ["Release"]


@runtime_checkable
class Release(Protocol):
    """A released graph as the analytics see it (implemented by ``PrivateGraph``).

    Attributes
    ----------
    nodes : iterable
        The public vertex set in canonical order (``PrivateGraph`` gives a
        :class:`~dpgraph.graph.views.NodeView`, indexed by label as networkx's
        is); the node at position i is ``node_index.nodes[i]``.
    directed : bool
        Whether rows are ordered pairs.
    epsilon : float
        The privacy parameter of the release.
    flip_probability : float
        The certified flip probability p'.
    keep : float
        The subsampling rate of a sparse release (1 for a full one).
    channel : Channel
        P(released | true) of one pair, used by every estimator.
    adjacency : Adjacency
        The released pairs, by position.
    node_index : NodeIndex
        Labels <-> positions.
    """

    @property
    def nodes(self) -> Iterable[Hashable]: ...

    @property
    def directed(self) -> bool: ...

    @property
    def epsilon(self) -> float: ...

    @property
    def flip_probability(self) -> float: ...

    @property
    def keep(self) -> float: ...

    @property
    def channel(self) -> Channel: ...

    @property
    def adjacency(self) -> Adjacency: ...

    @property
    def node_index(self) -> NodeIndex: ...

    def number_of_nodes(self) -> int:
        """Size of the public vertex set."""
        ...

    def number_of_pairs(self) -> int:
        """Rows of the database: the vertex pairs."""
        ...

    def number_of_released_edges(self) -> int:
        """Edges of the released graph (raw, biased)."""
        ...

    def positions(self, labels: Iterable[Hashable], name: str = "nodes") -> np.ndarray:
        """Sorted distinct positions of a non-empty collection of node labels."""
        ...

    def cut_positions(self, S: Iterable[Hashable],
                      T: Iterable[Hashable] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Positions of the two disjoint sides of a cut (T None: the complement of S)."""
        ...

    def released_degrees(self) -> np.ndarray:
        """Raw degree of every node in the released graph (positions order)."""
        ...

    def released_edges(self) -> tuple[np.ndarray, np.ndarray]:
        """Positions (rows, cols) of every released edge."""
        ...
