"""What the graph baselines share: how they read the input, how they build their output
graph, and the common part of their results."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core import resolve_random

__all__ = ["SyntheticGraph", "graph_of_pairs", "read_graph"]


def read_graph(G: Any, seed: Any) -> tuple[Any, np.random.Generator]:
    """The input as every graph baseline reads it (undirected, in the canonical node order
    of :func:`dpgraph.graph.encode_graph`) and the numpy generator of ``seed``."""
    from ..graph import encode_graph

    return encode_graph(G, directed=False), resolve_random(seed).generator()


def graph_of_pairs(nodes: Any, rows: np.ndarray, cols: np.ndarray) -> Any:
    """The synthetic graph on ``nodes`` with the edges (nodes[rows[k]], nodes[cols[k]])."""
    import networkx as nx

    H = nx.Graph()
    H.add_nodes_from(nodes)
    H.add_edges_from(zip(map(nodes.__getitem__, np.asarray(rows).tolist()),
                         map(nodes.__getitem__, np.asarray(cols).tolist())))
    return H


@dataclass(frozen=True, repr=False)
class SyntheticGraph:
    """What a graph baseline releases (its result classes add their own quantities).

    Attributes
    ----------
    graph : networkx.Graph
        The synthetic graph on the input's node set.
    budget : dict
        The epsilon each step spent; they sum to the epsilon asked for.
    """

    graph: Any
    budget: dict

    #: what the epsilon protects, for the repr (edge-DP unless said otherwise)
    _privacy = ""

    def _details(self) -> str:
        """The result's own summary in its repr (released quantities only)."""
        return ""

    def __repr__(self) -> str:  # a summary, never the edges
        details = self._details()
        return (f"{type(self).__name__}(nodes={self.graph.number_of_nodes()}, "
                f"edges={self.graph.number_of_edges()}, {details}{', ' if details else ''}"
                f"epsilon={sum(self.budget.values()):.6g}{self._privacy})")
