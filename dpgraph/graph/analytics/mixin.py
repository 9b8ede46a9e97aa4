"""PrivateGraph methods for the analytics: each delegates to its module function.

The docstring and signature are those of the function (shared by
:func:`~dpgraph.graph.analytics._shared.delegate`), so they are written once
and cannot drift.  This module imports only the analytics modules, never
:mod:`dpgraph.graph.private` (no import cycle).
"""

from __future__ import annotations

from ._shared import delegate
from .community import communities
from .counts import degree, degrees, density, density_between, edge_count, volume
from .degree_stats import degree_assortativity, degree_distribution
from .motifs import average_clustering, transitivity, triangles, wedges
from .partition import modularity
from .synthesis import synthesize

__all__ = ["AnalyticsMixin"]


class AnalyticsMixin:
    """PrivateGraph methods for graph statistics beyond cuts (see :mod:`dpgraph.graph.analytics`)."""

    edge_count = delegate(edge_count)
    density = delegate(density)
    degrees = delegate(degrees)
    degree = delegate(degree)
    volume = delegate(volume)
    density_between = delegate(density_between)
    triangles = delegate(triangles)
    wedges = delegate(wedges)
    transitivity = delegate(transitivity)
    degree_assortativity = delegate(degree_assortativity)
    average_clustering = delegate(average_clustering)
    degree_distribution = delegate(degree_distribution)
    modularity = delegate(modularity)
    communities = delegate(communities)
    synthesize = delegate(synthesize)
