"""Triangle and transitivity stds under an assumed graph (see :mod:`dpgraph.planner`)."""

from __future__ import annotations

import math
import numbers
from typing import Any

from ..core import pair_count
from ..validation import Integer, Interval, Optional, validate_params
from .stds import (
    ASSUMED,
    KEEP,
    MAX_NODES,
    TARGET_EDGES,
    _channel,
    _entry_variances,
)

#: Declared constraints of the motif stds (a triangle needs three nodes).
_ARGS = dict(nodes=Integer(minimum=3, maximum=MAX_NODES), edges=ASSUMED,
             wedges=Optional(ASSUMED), four_cycles=Optional(ASSUMED), keep=KEEP,
             target_edges=TARGET_EDGES)

__all__ = ["transitivity_std", "triangle_std", "triangle_variance_terms"]


# ----------------------------------------------------------------------------- triangles
def _graph_assumptions(nodes: int, edges: Any, wedges: Any, four_cycles: Any) -> tuple[float, float, float]:
    N = pair_count(nodes, False)
    m = edges
    if m > N:
        raise ValueError(f"edges={m:g} exceeds the {N} vertex pairs of {nodes} nodes")
    if wedges is None:
        d = 2.0 * m / nodes
        W = nodes * d * max(d - 1.0, 0.0) / 2.0
    else:
        W = wedges
    C4 = W * W / (4.0 * N) if four_cycles is None else four_cycles
    return m, W, C4


def _triangle_variances(nodes: int, epsilon: float, m: float, keep: Any,
                        target_edges: Any) -> tuple[float, float]:
    """(v, triples): the per-entry variance of the linear and quadratic terms and the sum
    over vertex triples of the product of their three entry variances.

    Randomized response: v and v^3 C(n, 3), exactly.  A sparse release's
    entries have variance v0 (non-edge) < v1 (edge): v = v1 and the triples
    that touch an edge (at most m (n - 2)) at v1^3, the rest at v0^3, which
    bounds the variance from above.
    """
    v0, v1 = _entry_variances(_channel(epsilon, nodes, False, keep, target_edges))
    triples = math.comb(nodes, 3)
    touched = min(float(triples), m * (nodes - 2))
    return v1, v0**3 * triples + (v1**3 - v0**3) * touched


@validate_params(**_ARGS)
def triangle_variance_terms(
    nodes: int, epsilon: float, edges: float, wedges: float | None = None,
    four_cycles: float | None = None, *, keep: float | None = None,
    target_edges: int | None = None,
) -> dict[str, float]:
    """The three terms of Var T^ (triangle estimator) under an assumed graph.

    linear = v (W + 4 C4), quadratic = v^2 (n-2) m, cubic = v^3 C(n, 3), with v
    the exact per-pair variance of a debiased entry at ``epsilon``.  Exact for
    any graph with the given m, W and C4 (see the module docstring for the
    defaults of W and C4).  Undirected releases only.  For a sparse release
    (``keep`` or ``target_edges``) an upper bound: edges' entries have the
    larger variance v1, and every term uses v1 except the triples of
    non-edges (``_triangle_variances``).

    Examples
    --------
    >>> t = triangle_variance_terms(100, 2.0, edges=500)
    >>> sorted(t)
    ['cubic', 'linear', 'quadratic']
    """
    m, W, C4 = _graph_assumptions(nodes, edges, wedges, four_cycles)
    v, triples = _triangle_variances(nodes, epsilon, m, keep, target_edges)
    return {
        "linear": v * (W + 4.0 * C4),
        "quadratic": v * v * (nodes - 2) * m,
        "cubic": triples,
    }


def triangle_std(nodes: int, epsilon: float, edges: float, wedges: float | None = None,
                 four_cycles: float | None = None, *, keep: float | None = None,
                 target_edges: int | None = None) -> float:
    """Std of the unbiased triangle count under an assumed graph (exact given m, W, C4).

    Parameters
    ----------
    nodes : int
        Number of nodes (>= 3); undirected releases.
    epsilon : float
        Privacy parameter per vertex pair.
    edges : float
        Assumed number of edges m.
    wedges, four_cycles : float, optional
        Assumed W and C4 (defaults in the module docstring).
    keep, target_edges : optional
        A sparse release's subsampling (an upper bound then).

    Examples
    --------
    >>> triangle_std(100, 2.0, edges=500) > triangle_std(100, 4.0, edges=500)
    True
    """
    terms = triangle_variance_terms(nodes, epsilon, edges, wedges, four_cycles, keep=keep,
                                    target_edges=target_edges)
    return math.sqrt(sum(terms.values()))


@validate_params(**_ARGS, transitivity=Interval(numbers.Real, 0, 1, example="0.3"),
                 edge_degree_products=Optional(ASSUMED))
def transitivity_std(
    nodes: int, epsilon: float, edges: float, transitivity: float,
    wedges: float | None = None, four_cycles: float | None = None,
    edge_degree_products: float | None = None, *, keep: float | None = None,
    target_edges: int | None = None,
) -> float:
    """Delta-method std of the transitivity estimate 3 T^ / W^ under an assumed graph.

    The variance of the linearisation (3/W) T^ - (tau/W) W^, computed exactly
    from the Hoeffding decomposition of T^ and W^ (W^ = sum_j sum_{i<k}
    Z_ij Z_kj): per pair the linear coefficient c1 c_ij + c2 a_ij with
    a_ij = d_i + d_j - 2 x_ij, per pair of pairs sharing a vertex
    c1 x_ik + c2, per triple c1.  The sums it needs are
    sum c^2 = W + 4 C4, sum a^2 = (n-6)(2W+2m) + 4m^2 + 4m and
    sum c a = 2B - 2W - 2m - 6T with B = sum over edges of d_i d_j
    (``edge_degree_products``; default (2W+2m)^2 / (4m), no degree
    correlation).  T = tau W / 3.  A sparse release (``keep`` or
    ``target_edges``): an upper bound, as in :func:`triangle_variance_terms`.

    Examples
    --------
    >>> s = transitivity_std(200, 2.0, edges=2000, transitivity=0.3)
    >>> 0 < s < 1
    True
    """
    tau = transitivity
    m, W, C4 = _graph_assumptions(nodes, edges, wedges, four_cycles)
    if W <= 0 or m <= 0:
        raise ValueError("transitivity needs edges > 0 and wedges > 0 (no wedge, no ratio)")
    n, T = nodes, tau * W / 3.0
    d2 = 2 * W + 2 * m
    B = d2 * d2 / (4 * m) if edge_degree_products is None else edge_degree_products
    sum_c2 = W + 4 * C4
    sum_a2 = (n - 6) * d2 + 4 * m * m + 4 * m
    sum_ca = 2 * B - d2 - 6 * T
    c1, c2 = 3.0 / W, -tau / W
    v, triples = _triangle_variances(n, epsilon, m, keep, target_edges)
    slots = n * math.comb(n - 1, 2)
    lin = v * (c1 * c1 * sum_c2 + 2 * c1 * c2 * sum_ca + c2 * c2 * sum_a2)
    quad = v * v * ((n - 2) * m * (c1 + c2) ** 2 + (slots - (n - 2) * m) * c2 * c2)
    cub = c1 * c1 * triples
    return math.sqrt(max(lin, 0.0) + quad + cub)


