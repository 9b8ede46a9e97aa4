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

Everything here takes public quantities only and never touches a graph.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from numbers import Integral, Real
from typing import Any

import numpy as np

from .core import Channel, count_estimate, rr_probabilities
from .graph.typed.planning import typed_cut_std
from .validation import check_bool

_STATISTICS = ("cut", "number_of_edges", "degree", "triangles", "transitivity")
_FLOAT_MAX = 1.7976931348623157e308

__all__ = [
    "DEFAULT_EPSILONS",
    "Plan",
    "count_std",
    "cut_std",
    "degree_std",
    "number_of_edges_std",
    "plan",
    "smallest_epsilon",
    "transitivity_std",
    "triangle_std",
    "triangle_variance_terms",
    "typed_cut_std",
]

#: The epsilon grid of the planner's table and plot when none is given.
DEFAULT_EPSILONS: tuple[float, ...] = (0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)

_EPS_HIGH = 200.0  # above this the certified p' is at its floor of 2^-64


# ----------------------------------------------------------------------------- validation
def _int(value: Any, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}; pass e.g. {name}=100")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def _positive(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    x = float(value) if abs(value) <= _FLOAT_MAX else math.inf  # 10**400: not finite
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    return x


def _nonneg(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    x = float(value) if abs(value) <= _FLOAT_MAX else math.inf  # 10**400: not finite
    if not (math.isfinite(x) and x >= 0):
        raise ValueError(f"{name} must be finite and >= 0, got {value!r}")
    return x


def _pairs(nodes: int, directed: bool) -> int:
    return nodes * (nodes - 1) if directed else nodes * (nodes - 1) // 2


def _check_sides(sides: Any, nodes: int) -> tuple[int, int]:
    try:
        a, b = sides
    except (TypeError, ValueError):
        raise TypeError("sides must be a pair (|S|, |T|) of side sizes, e.g. sides=(100, 200)") from None
    a = _int(a, "sides[0] (|S|)", 1)
    b = _int(b, "sides[1] (|T|)", 1)
    if a + b > nodes:
        raise ValueError(
            f"sides: |S| + |T| = {a + b} exceeds nodes={nodes}; the sides of a cut are disjoint"
        )
    return a, b


# ----------------------------------------------------------------------------- exact stds
def _channel(epsilon: float) -> Channel:
    return Channel.randomized_response(rr_probabilities(epsilon))


def count_std(rows: int, epsilon: float) -> float:
    """Exact std of the debiased count over ``rows`` vertex pairs at ``epsilon``.

    The core's :func:`~dpgraph.core.count_estimate` standard deviation with
    the certified channel: sqrt(rows p'(1-p')) / (1 - 2p'), graph-free.

    Examples
    --------
    >>> p = rr_probabilities(1.0).flip_probability
    >>> abs(count_std(100, 1.0) - (100 * p * (1 - p)) ** 0.5 / (1 - 2 * p)) < 1e-12
    True
    """
    rows = _int(rows, "rows", 1)
    return float(count_estimate(0.0, float(rows), _channel(epsilon)).std)


def _row_variance(epsilon: float) -> float:
    """v: variance of one debiased entry (the core's count std over one row, squared)."""
    return count_std(1, epsilon) ** 2


def cut_std(nodes: int, epsilon: float, sides: Sequence[int], directed: bool = False) -> float:
    """Exact std of a cut estimate between disjoint sides of the given sizes.

    Parameters
    ----------
    nodes : int
        Number of nodes (>= 2); bounds |S| + |T|.
    epsilon : float
        Privacy parameter per vertex pair.
    sides : (int, int)
        |S| and |T|, each >= 1.
    directed : bool, default False
        For a directed release the cut counts edges from S to T: the same
        |S||T| rows.

    Examples
    --------
    >>> round(cut_std(4039, 1.0, (100, 200)), 3)
    135.696
    """
    nodes = _int(nodes, "nodes", 2)
    a, b = _check_sides(sides, nodes)
    return count_std(a * b, epsilon)


def number_of_edges_std(nodes: int, epsilon: float, directed: bool = False) -> float:
    """Exact std of the debiased edge count (all N vertex pairs).

    Parameters
    ----------
    nodes : int
        Number of nodes (>= 2).
    epsilon : float
        Privacy parameter per vertex pair.
    directed : bool, default False
        N = n(n-1) ordered pairs if True, n(n-1)/2 otherwise.

    Examples
    --------
    >>> number_of_edges_std(4039, 1.0) == count_std(4039 * 4038 // 2, 1.0)
    True
    """
    nodes = _int(nodes, "nodes", 2)
    return count_std(_pairs(nodes, bool(directed)), epsilon)


def degree_std(nodes: int, epsilon: float, directed: bool = False) -> float:
    """Exact std of one node's debiased degree (out-degree if directed).

    Parameters
    ----------
    nodes : int
        Number of nodes n (>= 2); a degree counts n - 1 rows.
    epsilon : float
        Privacy parameter per vertex pair.
    directed : bool, default False
        Out-degrees of a directed release cover the same n - 1 rows.

    Examples
    --------
    >>> degree_std(100, 2.0) == count_std(99, 2.0)
    True
    """
    nodes = _int(nodes, "nodes", 2)
    return count_std(nodes - 1, epsilon)


# ----------------------------------------------------------------------------- triangles
def _graph_assumptions(nodes: int, edges: Any, wedges: Any, four_cycles: Any) -> tuple[float, float, float]:
    N = _pairs(nodes, False)
    m = _nonneg(edges, "edges")
    if m > N:
        raise ValueError(f"edges={m:g} exceeds the {N} vertex pairs of {nodes} nodes")
    if wedges is None:
        d = 2.0 * m / nodes
        W = nodes * d * max(d - 1.0, 0.0) / 2.0
    else:
        W = _nonneg(wedges, "wedges")
    C4 = W * W / (4.0 * N) if four_cycles is None else _nonneg(four_cycles, "four_cycles")
    return m, W, C4


def triangle_variance_terms(
    nodes: int, epsilon: float, edges: float, wedges: float | None = None,
    four_cycles: float | None = None,
) -> dict[str, float]:
    """The three terms of Var T^ (triangle estimator) under an assumed graph.

    linear = v (W + 4 C4), quadratic = v^2 (n-2) m, cubic = v^3 C(n, 3), with v
    the exact per-pair variance of a debiased entry at ``epsilon``.  Exact for
    any graph with the given m, W and C4 (see the module docstring for the
    defaults of W and C4).  Undirected releases only.

    Examples
    --------
    >>> t = triangle_variance_terms(100, 2.0, edges=500)
    >>> sorted(t)
    ['cubic', 'linear', 'quadratic']
    """
    nodes = _int(nodes, "nodes", 3)
    m, W, C4 = _graph_assumptions(nodes, edges, wedges, four_cycles)
    v = _row_variance(epsilon)
    return {
        "linear": v * (W + 4.0 * C4),
        "quadratic": v * v * (nodes - 2) * m,
        "cubic": v**3 * math.comb(nodes, 3),
    }


def triangle_std(nodes: int, epsilon: float, edges: float, wedges: float | None = None,
                 four_cycles: float | None = None) -> float:
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

    Examples
    --------
    >>> triangle_std(100, 2.0, edges=500) > triangle_std(100, 4.0, edges=500)
    True
    """
    return math.sqrt(sum(triangle_variance_terms(nodes, epsilon, edges, wedges, four_cycles).values()))


def transitivity_std(
    nodes: int, epsilon: float, edges: float, transitivity: float,
    wedges: float | None = None, four_cycles: float | None = None,
    edge_degree_products: float | None = None,
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
    correlation).  T = tau W / 3.

    Examples
    --------
    >>> s = transitivity_std(200, 2.0, edges=2000, transitivity=0.3)
    >>> 0 < s < 1
    True
    """
    nodes = _int(nodes, "nodes", 3)
    tau = _nonneg(transitivity, "transitivity")
    if tau > 1:
        raise ValueError(f"transitivity must be in [0, 1], got {transitivity!r}")
    m, W, C4 = _graph_assumptions(nodes, edges, wedges, four_cycles)
    if W <= 0 or m <= 0:
        raise ValueError("transitivity needs edges > 0 and wedges > 0 (no wedge, no ratio)")
    n, T = nodes, tau * W / 3.0
    d2 = 2 * W + 2 * m
    B = d2 * d2 / (4 * m) if edge_degree_products is None else _nonneg(
        edge_degree_products, "edge_degree_products")
    sum_c2 = W + 4 * C4
    sum_a2 = (n - 6) * d2 + 4 * m * m + 4 * m
    sum_ca = 2 * B - d2 - 6 * T
    c1, c2 = 3.0 / W, -tau / W
    v = _row_variance(epsilon)
    slots = n * math.comb(n - 1, 2)
    lin = v * (c1 * c1 * sum_c2 + 2 * c1 * c2 * sum_ca + c2 * c2 * sum_a2)
    quad = v * v * ((n - 2) * m * (c1 + c2) ** 2 + (slots - (n - 2) * m) * c2 * c2)
    cub = v**3 * c1 * c1 * math.comb(n, 3)
    return math.sqrt(max(lin, 0.0) + quad + cub)


# ----------------------------------------------------------------------------- search
def _float_to_key(x: float) -> int:
    return struct.unpack("<q", struct.pack("<d", x))[0]


def _key_to_float(k: int) -> float:
    return struct.unpack("<d", struct.pack("<q", k))[0]


def smallest_epsilon(std_at: Callable[[float], float], target: float,
                     name: str = "target_std") -> float:
    """The smallest float epsilon with ``std_at(epsilon) <= target``.

    ``std_at`` must be non-increasing in epsilon, as every std here is: the
    certified p' never grows with epsilon and every variance grows with p'
    below 1/2.  Bisection over the ordered bit patterns of positive floats,
    so the answer is exact: the next smaller float misses the target.
    Epsilons too small for 64-bit dyadic sampling count as missing it.

    Raises
    ------
    ValueError
        If even epsilon = 200 (p' at its floor 2^-64) misses the target.

    Examples
    --------
    >>> e = smallest_epsilon(lambda eps: count_std(10000, eps), 50.0)
    >>> count_std(10000, e) <= 50.0 < count_std(10000, float(np.nextafter(e, 0)))
    True
    """
    target = _positive(target, name)

    def ok(eps: float) -> bool:
        try:
            return std_at(eps) <= target
        except ValueError:  # below the precision floor of dyadic sampling
            return False

    if not ok(_EPS_HIGH):
        raise ValueError(
            f"{name}={target:g} cannot be met at any epsilon (std {std_at(_EPS_HIGH):.3g} even at "
            f"epsilon={_EPS_HIGH:g}); ask for a larger {name}"
        )
    lo, hi = _float_to_key(5e-324), _float_to_key(_EPS_HIGH)  # ok(hi) holds, ok(lo) does not
    if ok(_key_to_float(lo)):  # pragma: no cover - the precision floor forbids it
        return _key_to_float(lo)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(_key_to_float(mid)):
            hi = mid
        else:
            lo = mid
    return _key_to_float(hi)


# ----------------------------------------------------------------------------- the plan
@dataclass(frozen=True)
class Plan:
    """Planned accuracy of a release with public parameters only.

    Attributes
    ----------
    nodes : int
    directed : bool
    epsilon : float
        Given, or the smallest epsilon meeting the target.
    flip_probability : float
        The certified p' at ``epsilon``.
    realized_epsilon : float
        ln of the sampler's exact worst likelihood ratio (<= epsilon).
    stds : dict
        Std of each planned statistic at ``epsilon``: ``cut`` (when
        ``sides`` is given), ``number_of_edges``, ``degree`` and, under assumed
        values, ``triangles`` and ``transitivity``.
    sides : tuple or None
    assumptions : dict
        The assumed graph values the graph-dependent stds use.
    target : dict or None
        What was asked for (statistic, target std, relative error).
    """

    nodes: int
    directed: bool
    epsilon: float
    flip_probability: float
    realized_epsilon: float
    stds: dict
    sides: tuple | None = None
    assumptions: dict = field(default_factory=dict)
    target: dict | None = None

    def std_at(self, statistic: str, epsilon: float) -> float:
        """Std of ``statistic`` (a key of ``stds``) at another epsilon, same assumptions."""
        return _std_function(self.nodes, self.directed, self.sides, self.assumptions, statistic)(
            epsilon)

    def table(self, epsilons: Sequence[float] = DEFAULT_EPSILONS) -> list[dict]:
        """One row per epsilon: epsilon, p' and the std of every planned statistic."""
        rows = []
        for eps in epsilons:
            row = {"epsilon": float(eps), "flip_probability": rr_probabilities(eps).flip_probability}
            for name in self.stds:
                row[f"{name}_std"] = self.std_at(name, eps)
            rows.append(row)
        return rows

    def plot(self, epsilons: Sequence[float] | None = None, ax: Any = None, relative: bool = True):
        """Error against epsilon (log-log), one line per statistic; returns the Axes.

        With ``relative`` the std is divided by the assumed value where one
        is known (cut, edges, triangles), so the lines share a scale.
        """
        import matplotlib.pyplot as plt

        eps = np.geomspace(0.05, 10.0, 60) if epsilons is None else np.asarray(epsilons, float)
        if ax is None:
            _, ax = plt.subplots(figsize=(6.4, 4.0))
        scale = {"cut": self.assumptions.get("cut"), "number_of_edges": self.assumptions.get("edges"),
                 "triangles": self.assumptions.get("triangles")}
        for name in self.stds:
            s = np.array([self.std_at(name, e) for e in eps])
            div = scale.get(name) if relative else None
            label = name.replace("_", " ")
            if div:
                s, label = s / div, f"{label} (relative)"
            ax.plot(eps, s, label=label)
        ax.axvline(self.epsilon, color="grey", lw=0.8, ls=":")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("epsilon per vertex pair")
        ax.set_ylabel("standard deviation")
        ax.set_title(f"Planned error, {self.nodes} nodes")
        ax.legend(fontsize=8)
        return ax

    def to_dict(self) -> dict:
        """JSON-ready summary: epsilon, p' and ``<statistic>_std`` fields."""
        out = {"nodes": self.nodes, "directed": self.directed, "epsilon": self.epsilon,
               "flip_probability": self.flip_probability,
               "realized_epsilon": self.realized_epsilon}
        if self.sides is not None:
            out["sides"] = list(self.sides)
        out.update({f"{k}_std": v for k, v in self.stds.items()})
        if self.assumptions:
            out["assumptions"] = dict(self.assumptions)
        if self.target is not None:
            out["target"] = dict(self.target)
        return out


def _std_function(nodes: int, directed: bool, sides: Any, a: dict, statistic: str):
    if statistic == "cut":
        if sides is None:
            raise ValueError("the cut std needs sides=(|S|, |T|) (command line: --sides A,B)")
        return lambda e: cut_std(nodes, e, sides, directed)
    if statistic == "number_of_edges":
        return lambda e: number_of_edges_std(nodes, e, directed)
    if statistic == "degree":
        return lambda e: degree_std(nodes, e, directed)
    if statistic in ("triangles", "transitivity"):
        if directed:
            raise ValueError(f"{statistic} is planned for undirected releases only (directed=False)")
        if a.get("edges") is None:
            raise ValueError(f"the {statistic} std depends on the graph: pass an assumed edges= "
                             "(command line: --assumed-edges)")
        kw = {"wedges": a.get("wedges"), "four_cycles": a.get("four_cycles")}
        if statistic == "triangles":
            return lambda e: triangle_std(nodes, e, a["edges"], **kw)
        if a.get("transitivity") is None:
            raise ValueError("the transitivity std needs an assumed transitivity= "
                         "(command line: --assumed-transitivity)")
        return lambda e: transitivity_std(nodes, e, a["edges"], a["transitivity"], **kw)
    raise ValueError(
        f"statistic must be one of cut, number_of_edges, degree, triangles, transitivity; got {statistic!r}"
    )


def plan(
    nodes: int,
    epsilon: float | None = None,
    *,
    directed: bool = False,
    sides: Sequence[int] | None = None,
    target_std: float | None = None,
    target_relative_error: float | None = None,
    statistic: str | None = None,
    cut: float | None = None,
    edges: float | None = None,
    triangles: float | None = None,
    transitivity: float | None = None,
    wedges: float | None = None,
    four_cycles: float | None = None,
) -> Plan:
    """Plan a release: the error of its estimates at ``epsilon``, or the epsilon a target needs.

    Parameters
    ----------
    nodes : int
        Number of nodes of the public vertex set (>= 2).
    epsilon : float, optional
        Privacy parameter per vertex pair.  Give it, or a target.
    directed : bool, default False
    sides : (int, int), optional
        Side sizes of a cut query to plan for.
    target_std : float, optional
        Find the smallest epsilon whose std of ``statistic`` is <= this.
    target_relative_error : float, optional
        Find the smallest epsilon whose std / assumed value of ``statistic``
        is <= this (needs the assumed value: ``cut``, ``edges`` or
        ``triangles``).
    statistic : str, optional
        What the target is about: ``cut`` (default when ``sides`` is
        given), ``number_of_edges`` (default otherwise), ``degree``,
        ``triangles`` or ``transitivity``.
    cut, edges, triangles, transitivity, wedges, four_cycles : float, optional
        Assumed values of the input graph.  ``edges`` is needed for the
        triangle and transitivity stds; the others refine them (module
        docstring) or scale a relative error.

    Returns
    -------
    Plan

    Examples
    --------
    >>> p = plan(4039, 1.0, sides=(100, 200))
    >>> round(p.stds["cut"], 3)
    135.696
    >>> q = plan(4039, sides=(100, 200), target_std=100.0)
    >>> q.stds["cut"] <= 100.0
    True
    """
    nodes = _int(nodes, "nodes", 2)
    directed = check_bool(directed, "directed")  # "no" would be read as True
    if statistic is not None and statistic not in _STATISTICS:
        raise ValueError(f"statistic must be one of {', '.join(_STATISTICS)}; got {statistic!r}")
    sides = None if sides is None else _check_sides(sides, nodes)
    assumptions = {}
    for key, val in (("cut", cut), ("edges", edges), ("triangles", triangles),
                     ("transitivity", transitivity), ("wedges", wedges), ("four_cycles", four_cycles)):
        if val is not None:
            assumptions[key] = _nonneg(val, key)
    if cut is not None and sides is not None and assumptions["cut"] > sides[0] * sides[1]:
        raise ValueError(f"cut={cut:g} exceeds the |S||T| = {sides[0] * sides[1]} pairs of the sides")
    if target_std is not None and target_relative_error is not None:
        raise ValueError("give target_std or target_relative_error, not both")
    target = None
    if target_std is not None or target_relative_error is not None:
        if epsilon is not None:
            raise ValueError("give epsilon or a target (target_std / target_relative_error), not both")
        stat = statistic or ("cut" if sides is not None else "number_of_edges")
        fn = _std_function(nodes, directed, sides, assumptions, stat)
        if target_std is not None:
            goal = _positive(target_std, "target_std")
            epsilon = smallest_epsilon(fn, goal, "target_std")
            target = {"statistic": stat, "target_std": goal}
        else:
            rel = _positive(target_relative_error, "target_relative_error")
            key = {"cut": "cut", "number_of_edges": "edges", "triangles": "triangles",
                   "transitivity": "transitivity"}.get(stat)
            value = assumptions.get(key) if key else None
            if not value:
                raise ValueError(
                    f"target_relative_error for {stat} needs an assumed value > 0 "
                    f"({'--assumed-' + key if key else 'not available for degree'})"
                )
            epsilon = smallest_epsilon(fn, rel * value, "target_relative_error x assumed value")
            target = {"statistic": stat, "target_relative_error": rel, "assumed_value": value}
    if epsilon is None:
        raise ValueError("give epsilon (e.g. epsilon=1.0) or a target_std / target_relative_error")
    rr = rr_probabilities(epsilon)
    names = (["cut"] if sides is not None else []) + ["number_of_edges", "degree"]
    if not directed and "edges" in assumptions and nodes >= 3:
        names.append("triangles")
        if "transitivity" in assumptions:
            names.append("transitivity")
    stds = {k: _std_function(nodes, directed, sides, assumptions, k)(rr.epsilon) for k in names}
    return Plan(nodes, directed, rr.epsilon, rr.flip_probability, rr.realized_epsilon, stds,
                sides, assumptions, target)
