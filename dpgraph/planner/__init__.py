"""Accuracy planner: how accurate a release will be, before anything is released.

The noise of a release depends only on public quantities: the number of
nodes, whether pairs are ordered, and the certified flip probability p' that
epsilon buys (:func:`dpgraph.core.rr_probabilities`).  For counts of pairs (a
cut, the edge count, one node's degree) the standard deviation of the
debiased estimate is therefore known exactly in advance: it is the core's
:func:`~dpgraph.core.count_estimate` standard deviation for that many rows,
which this module asks for rather than re-deriving.

For triangle counts the variance also depends on the graph.  The estimator
T^ = sum over vertex triples of Z_ij Z_jk Z_ik (debiased entries Z, each with
variance v = the core's per-row variance) has, by the orthogonal (Hoeffding)
decomposition of this multilinear polynomial in independent entries,

    Var T^ = v sum_{i<j} c_ij^2  +  v^2 (n - 2) m  +  v^3 C(n, 3),

where c_ij is the number of common neighbours of i and j and m the number of
edges.  sum c_ij^2 = W + 4 C4 (W wedges, C4 four-cycles).  So the planner
needs an assumed edge count, and optionally assumed wedges and four-cycles:
by default W = n C(d, 2) with d = 2m/n (the value of a regular graph and the
smallest W for m edges) and 4 C4 = W^2 / N (codegrees spread evenly, the
Erdos-Renyi value; clustered graphs have more).  The cubic, graph-free term
dominates at small epsilon.  Transitivity 3T/W is a ratio; its standard
deviation here is the delta method (the variance of its linearisation,
computed exactly from the same decomposition, which also needs the sum of
d_i d_j over edges, assumed degree-uncorrelated by default).

A typed release (``values=``) has K values a pair; the std of a typed or
weighted count depends on the truth when K > 2, so the planner gives the
worst case over it, or the exact std under an assumed share of the pairs
per tie value (:func:`typed_count_std`).

Everything here takes public quantities only and never touches a graph.
"""

from ..graph import typed_count_std, typed_cut_std
from .degree_share import DegreeSharePlan, degree_share_plan, parse_workload
from .motifs import transitivity_std, triangle_std, triangle_variance_terms
from .plan import DEFAULT_EPSILONS, Plan, plan
from .search import smallest_epsilon
from .stds import count_std, cut_std, degree_std, keep_probability, number_of_edges_std

__all__ = [
    "DEFAULT_EPSILONS",
    "DegreeSharePlan",
    "Plan",
    "count_std",
    "cut_std",
    "degree_share_plan",
    "degree_std",
    "keep_probability",
    "number_of_edges_std",
    "parse_workload",
    "plan",
    "smallest_epsilon",
    "transitivity_std",
    "triangle_std",
    "triangle_variance_terms",
    "typed_count_std",
    "typed_cut_std",
]
