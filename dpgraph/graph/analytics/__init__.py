"""Debiased graph analytics from one release.

Every pair {i, j} of the release is an independent row with channel
P(Y_ij = 1 | x_ij = 1) = alpha, P(Y_ij = 1 | x_ij = 0) = beta (randomized
response: alpha = 1 - p', beta = p'; a subsampled release has its own alpha,
beta).  The core (:func:`dpgraph.core.count_estimate`,
:func:`dpgraph.core.unbiased_estimate`) turns a released count into an unbiased
count; this module never re-derives that formula: it asks the core for the
debiased value of a single released 0 and a single released 1,

    z0 = count_estimate(0, 1, channel),   z1 = count_estimate(1, 1, channel),

so the debiased entry is Z_ij = z0 + (z1 - z0) Y_ij with E[Z_ij] = x_ij.

Products of debiased entries over *distinct* pairs are unbiased, because the
pairs are released independently.  Hence (sums over distinct vertices)

    triangles  T^ = sum_{i<j<k} Z_ij Z_jk Z_ik = trace(Z^3) / 6,
    wedges     W^ = sum_j sum_{i<k} Z_ij Z_kj,

are unbiased for every graph.  Everything needed is a function of the released
degrees and of the released common-neighbour counts C = Y Y, one exact integer
matrix product (float32 is exact for counts below 2^24), computed in row blocks.
Their variances follow from the orthogonal (Hoeffding) decomposition of a
multilinear polynomial in independent entries; each term is itself estimated
without bias from the same products (see :func:`triangle_statistics`).

Functions here take a release (networkx style), typed on the
:class:`~dpgraph.graph.protocol.Release` protocol; each public one is
registered with :func:`dpgraph.graph.answers.analytic` and returns what
:mod:`dpgraph.graph.answers` builds; :class:`~dpgraph.graph.PrivateGraph`
exposes every registered function as a method sharing its docstring and
signature (``R.triangles()`` is ``triangles(R)``).  A new analytic is one
decorated function.

Modules: :mod:`.cut_queries` (cut, cuts, cut_batch, edges_within),
:mod:`.counts` (edge count, density, degrees, volume), :mod:`.motifs`
(triangles, wedges, transitivity, clustering), :mod:`.degree_stats` (degree
moments, assortativity, degree distribution), :mod:`.partition` (modularity of
a given partition), :mod:`.community` (community detection), :mod:`.synthesis`
(synthetic graphs).  No module is named like a function it holds, so both
stay reachable (``tests/test_layout.py`` checks it).  They use only the
adjacency interface (``cut_count``, ``within_count``, ``degrees``,
``number_of_edges``) and ``to_scipy_sparse``, so any backend and any binary
channel works.
"""

from .community import Communities, communities
from .counts import (
    degree,
    density,
    density_between,
    number_of_edges,
    volume,
)
from .cut_queries import cut, cut_batch, cuts, edges_within
from .degree_stats import (
    DegreeDistribution,
    degree_assortativity,
    degree_distribution,
    degree_moments,
    degree_transition_matrix,
)
from .motifs import (
    PlannedEstimate,
    TriangleStatistics,
    average_clustering,
    local_clustering,
    transitivity,
    triangle_statistics,
    triangles,
    wedges,
)
from .partition import modularity
from .synthesis import synthesize
from .triangle_planning import (
    UNLIMITED_CEILING,
    CostLimitError,
    TrianglePlan,
    time_limit,
    triangle_plan,
)

__all__ = [
    "UNLIMITED_CEILING",
    "Communities",
    "CostLimitError",
    "DegreeDistribution",
    "PlannedEstimate",
    "TrianglePlan",
    "TriangleStatistics",
    "average_clustering",
    "communities",
    "cut",
    "cut_batch",
    "cuts",
    "degree",
    "degree_assortativity",
    "degree_distribution",
    "degree_moments",
    "degree_transition_matrix",
    "density",
    "density_between",
    "edges_within",
    "local_clustering",
    "modularity",
    "number_of_edges",
    "synthesize",
    "time_limit",
    "transitivity",
    "triangle_plan",
    "triangle_statistics",
    "triangles",
    "volume",
    "wedges",
]
