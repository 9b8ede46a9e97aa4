"""The plan: every std of a release at one epsilon, or the epsilon a target needs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core import Z95, rr_probabilities, typed_subsampling
from ..core import pair_count as _pairs
from ..graph import typed_count_std
from ..graph.typed import tie_values
from ..validation import Boolean, Optional, Options, validate_params
from .motifs import transitivity_std, triangle_std
from .search import smallest_epsilon
from .stds import (
    ASSUMED,
    KEEP,
    NODES,
    POSITIVE,
    TARGET_EDGES,
    _check_sides,
    _check_subsample,
    cut_std,
    degree_std,
    keep_probability,
    number_of_edges_std,
)

__all__ = ["DEFAULT_EPSILONS", "Plan", "plan"]

#: The epsilon grid of the planner's table and plot when none is given.
DEFAULT_EPSILONS: tuple[float, ...] = (0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)

_STATISTICS = ("cut", "number_of_edges", "degree", "triangles", "transitivity")


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
    subsample : dict or None
        A sparse release: ``{"keep": s}`` or ``{"target_edges": k}``, as
        :func:`dpgraph.release` takes them; None for a full release.
    typed : dict or None
        A typed release: ``{"values": [...], "value": v, "weights": {...},
        "mix": {...}}`` (what the counts count, and the assumed share of the
        pairs per tie value, if any); None for an untyped release.
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
    subsample: dict | None = None
    typed: dict | None = None

    @property
    def K(self) -> int:
        """Values a pair takes: 2 for an untyped release, the tie values plus "no tie" else."""
        return 2 if self.typed is None else len(self.typed["values"]) + 1

    @property
    def keep(self) -> float:
        """The keep probability s at ``epsilon`` (1.0 for a full release)."""
        return _keep(self.nodes, self.epsilon, self.directed, self.subsample, self.K)

    def full_release_stds(self) -> dict:
        """The stds of the full release at ``epsilon`` (the same as ``stds`` without subsampling)."""
        if self.subsample is None:
            return dict(self.stds)
        return {k: _std_function(self.nodes, self.directed, self.sides, self.assumptions, k,
                                 typed=self.typed)(self.epsilon) for k in self.stds}

    def smallest_resolvable(self) -> dict:
        """For each planned count, the smallest true value the release can resolve.

        An estimate is resolved when its 95% interval excludes 0 and its
        half-width is at most half the value: value >= 2 x 1.96 std.
        (Transitivity, a ratio, is left out.)

        Examples
        --------
        >>> p = plan(50_000, 1.0, target_edges=200_000)
        >>> f"{p.smallest_resolvable()['number_of_edges']:.3g}"
        '1.05e+07'
        """
        return {k: 2 * Z95 * v for k, v in self.stds.items() if k != "transitivity"}

    def expected_released_edges(self) -> float:
        """Expected edges (ties of any value) of the release: s ((K-1) p' N + (1 - K p') m).

        m is the assumed edge count (else 0); K = 2 for an untyped release.
        """
        N = _pairs(self.nodes, self.directed)
        m = float(self.assumptions.get("edges", 0.0))
        p, K = self.flip_probability, self.K
        return self.keep * ((K - 1) * p * N + (1 - K * p) * m)

    def std_at(self, statistic: str, epsilon: float) -> float:
        """Std of ``statistic`` (a key of ``stds``) at another epsilon, same assumptions."""
        return _std_function(self.nodes, self.directed, self.sides, self.assumptions, statistic,
                             self.subsample, self.typed)(epsilon)

    def table(self, epsilons: Sequence[float] = DEFAULT_EPSILONS) -> list[dict]:
        """One row per epsilon: epsilon, p' (and keep, if subsampled), the std of every statistic."""
        rows = []
        for eps in epsilons:
            row = {"epsilon": float(eps),
                   "flip_probability": rr_probabilities(eps, self.K).flip_probability}
            if self.subsample is not None:
                row["keep"] = _keep(self.nodes, eps, self.directed, self.subsample, self.K)
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
        if self.typed is not None:
            out["typed"] = {"K": self.K, **{k: v for k, v in self.typed.items() if v is not None}}
        if self.subsample is not None:
            out["subsample"] = dict(self.subsample)
            out["keep"] = self.keep
            out["expected_released_edges"] = self.expected_released_edges()
            out["full_release"] = {f"{k}_std": v for k, v in self.full_release_stds().items()}
        out["smallest_resolvable"] = self.smallest_resolvable()
        return out


def _keep(nodes: int, epsilon: float, directed: bool, subsample: dict | None, K: int) -> float:
    """The keep probability of a (typed, if K > 2) release: 1.0 without subsampling."""
    if subsample is None or K == 2:
        return keep_probability(nodes, epsilon, directed, **(subsample or {}))
    return typed_subsampling(rr_probabilities(epsilon, K), nodes, directed, **subsample).keep


def _std_function(nodes: int, directed: bool, sides: Any, a: dict, statistic: str,
                  subsample: dict | None = None, typed: dict | None = None):
    if typed is not None:
        return _typed_std_function(nodes, directed, sides, statistic, typed, subsample)
    sub = subsample or {}
    if statistic == "cut":
        if sides is None:
            raise ValueError("the cut std needs sides=(|S|, |T|) (command line: --sides A,B)")
        return lambda e: cut_std(nodes, e, sides, directed, **sub)
    if statistic == "number_of_edges":
        return lambda e: number_of_edges_std(nodes, e, directed, **sub)
    if statistic == "degree":
        return lambda e: degree_std(nodes, e, directed, **sub)
    if statistic in ("triangles", "transitivity"):
        if directed:
            raise ValueError(f"{statistic} is planned for undirected releases only (directed=False)")
        if a.get("edges") is None:
            raise ValueError(f"the {statistic} std depends on the graph: pass an assumed edges= "
                             "(command line: --assumed-edges)")
        kw = {"wedges": a.get("wedges"), "four_cycles": a.get("four_cycles")}
        kw.update(sub)
        if statistic == "triangles":
            return lambda e: triangle_std(nodes, e, a["edges"], **kw)
        if a.get("transitivity") is None:
            raise ValueError("the transitivity std needs an assumed transitivity= "
                         "(command line: --assumed-transitivity)")
        return lambda e: transitivity_std(nodes, e, a["edges"], a["transitivity"], **kw)
    raise ValueError(
        f"statistic must be one of cut, number_of_edges, degree, triangles, transitivity; got {statistic!r}"
    )


def _typed_std_function(nodes: int, directed: bool, sides: Any, statistic: str, typed: dict,
                        subsample: dict | None = None):
    """epsilon -> std of a typed count (cut, all pairs, one node's pairs): typed_count_std."""
    if statistic in ("triangles", "transitivity"):
        raise ValueError(f"{statistic} is planned for untyped releases only; drop values= (a typed "
                         "release's any-tie triangles have the asymmetric channel of the collapse)")
    if statistic == "cut":
        if sides is None:
            raise ValueError("the cut std needs sides=(|S|, |T|) (command line: --sides A,B)")
        pairs = sides[0] * sides[1]
    elif statistic == "number_of_edges":
        pairs = _pairs(nodes, directed)
    elif statistic == "degree":
        pairs = nodes - 1
    else:
        raise ValueError(f"statistic must be one of {', '.join(_STATISTICS)}; got {statistic!r}")
    kw = {k: typed.get(k) for k in ("value", "weights", "mix")}
    kw.update(subsample or {})
    return lambda e: typed_count_std(pairs, e, typed["values"], nodes=nodes, directed=directed,
                                     **kw)


def _typed_plan(values: Any, value: Any, weights: Any, mix: Any, subsample: Any,
                statistic: Any) -> dict | None:
    """The typed part of a plan, validated as the release and its estimators validate it."""
    if values is None:
        if value is not None or weights is not None or mix is not None:
            raise ValueError("value=, weights= and mix= plan a typed release: declare its tie "
                             "values too, e.g. values=['distrust', 'trust'] (command line: --values)")
        return None
    ties = tie_values("value", values)
    ties.row_function(value, weights)  # refuses an undeclared value, bad weights, both given
    if mix is not None:
        typed_count_std(1, 1.0, ties.values, value=value, weights=weights, mix=mix)  # checks mix
    if statistic in ("triangles", "transitivity"):
        raise ValueError(f"{statistic} is planned for untyped releases only; drop values=")
    return {"values": list(ties.values), "value": value,
            "weights": None if weights is None else dict(weights),
            "mix": None if mix is None else dict(mix)}


@validate_params(nodes=NODES, directed=Boolean(), statistic=Optional(Options(*_STATISTICS)),
                 target_std=Optional(POSITIVE), target_relative_error=Optional(POSITIVE),
                 **dict.fromkeys(("cut", "edges", "triangles", "transitivity", "wedges",
                                  "four_cycles"), Optional(ASSUMED)),
                 keep=KEEP, target_edges=TARGET_EDGES)
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
    keep: float | None = None,
    target_edges: int | None = None,
    values: Sequence | None = None,
    value: Any = None,
    weights: Mapping | None = None,
    mix: Mapping | None = None,
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
    keep, target_edges : optional
        Plan a sparse release (``dpgraph.release(G, eps, keep=...)`` or
        ``target_edges=...``): every std is then the one that release will
        report, and the plan also gives the full release's
        (:meth:`Plan.full_release_stds`) and the keep probability.
    values : sequence, optional
        Plan a typed release (``dpgraph.release(G, eps, edge_attr=...,
        values=values)``, K = len(values) + 1 values a pair): the cut, edge
        count and degree stds are then those of typed counts
        (:func:`~dpgraph.planner.typed_count_std`): the worst case over the
        truth (the variance depends on it when K > 2), or exact under
        ``mix``.  Triangles are planned for untyped releases only.
    value : a tie value, optional
        With ``values``: count the ties of this value (default: of any value).
    weights : mapping {tie value: weight}, optional
        With ``values``: a weighted count (e.g. net trust).
    mix : mapping {tie value: share of the pairs}, optional
        With ``values``: the assumed share of the pairs holding each tie
        value (the rest: no tie); the stds are then exact under it.

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

    The cost of subsampling, before releasing:

    >>> s = plan(50_000, 1.0, target_edges=200_000)
    >>> f"{s.stds['number_of_edges']:.3g} vs {s.full_release_stds()['number_of_edges']:.3g}"
    '2.68e+06 vs 3.39e+04'

    A typed release (K = 4), its distrust cut and its net-trust cut:

    >>> v = ["distrust", "trust", "strong"]
    >>> t = plan(3783, 1.0, directed=True, sides=(300, 300), values=v, value="distrust")
    >>> w = plan(3783, 1.0, directed=True, sides=(300, 300), values=v,
    ...          weights={"distrust": -1, "trust": 1, "strong": 2})
    >>> round(t.stds["cut"]), round(w.stds["cut"])
    (499, 1159)
    """
    sides = None if sides is None else _check_sides(sides, nodes)
    _check_subsample(keep, target_edges)
    subsample = ({"keep": float(keep)} if keep is not None else
                 {"target_edges": int(target_edges)} if target_edges is not None else None)
    typed = _typed_plan(values, value, weights, mix, subsample, statistic)
    assumptions = {}
    for key, val in (("cut", cut), ("edges", edges), ("triangles", triangles),
                     ("transitivity", transitivity), ("wedges", wedges), ("four_cycles", four_cycles)):
        if val is not None:
            assumptions[key] = val
    if cut is not None and sides is not None and assumptions["cut"] > sides[0] * sides[1]:
        raise ValueError(f"cut={cut:g} exceeds the |S||T| = {sides[0] * sides[1]} pairs of the sides")
    if target_std is not None and target_relative_error is not None:
        raise ValueError("give target_std or target_relative_error, not both")
    target = None
    if target_std is not None or target_relative_error is not None:
        if epsilon is not None:
            raise ValueError("give epsilon or a target (target_std / target_relative_error), not both")
        stat = statistic or ("cut" if sides is not None else "number_of_edges")
        fn = _std_function(nodes, directed, sides, assumptions, stat, subsample, typed)
        if target_std is not None:
            goal = target_std
            epsilon = smallest_epsilon(fn, goal, "target_std")
            target = {"statistic": stat, "target_std": goal}
        else:
            rel = target_relative_error
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
    rr = rr_probabilities(epsilon, 2 if typed is None else len(typed["values"]) + 1)
    names = (["cut"] if sides is not None else []) + ["number_of_edges", "degree"]
    if typed is None and not directed and "edges" in assumptions and nodes >= 3:
        names.append("triangles")
        if "transitivity" in assumptions:
            names.append("transitivity")
    if subsample is not None:  # refuses a target above what the full release gives
        _keep(nodes, rr.epsilon, directed, subsample, rr.K)
    stds = {k: _std_function(nodes, directed, sides, assumptions, k, subsample, typed)(rr.epsilon)
            for k in names}
    return Plan(nodes, directed, rr.epsilon, rr.flip_probability, rr.realized_epsilon, stds,
                sides, assumptions, target, subsample, typed)
