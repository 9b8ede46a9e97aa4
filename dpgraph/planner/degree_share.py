"""Planning a degree share: the std of a workload's answers at each share, and the best one.

A composed release (``dpgraph.release(G, eps, degree_share=s)``) answers
degrees, volumes, cuts and the edge count by fusing the pairs with the noisy
degrees (:class:`~dpgraph.core.degree_fusion.DegreeFusion`).  Their standard
deviations depend only on n, the query's side sizes and the two epsilons, so
the planner computes them exactly, before anything is released, from the same
formula the estimators use.  Share 0 is mechanism E alone at the full epsilon.

A workload lists queries by size:

* ``"degree"``: one node's degree (out-degree if directed);
* ``"edges"``: the edge count;
* ``("boundary", k)``: the cut between k nodes and the rest;
* ``("cut", a, b)``: a cut between disjoint sets of a and b nodes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core import (
    Channel,
    DegreeFusion,
    Group,
    count_estimate,
    discrete_laplace,
    pair_count,
    rr_probabilities,
    split_epsilon,
)
from ..validation import check_epsilon, check_positive_int

__all__ = ["DEFAULT_SHARES", "DEFAULT_WORKLOAD", "DegreeSharePlan", "degree_share_plan",
           "parse_workload"]

#: the shares tabulated by default
DEFAULT_SHARES = (0.0, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.7, 0.9)
#: a degree, boundary cuts of 10 and 100 nodes, the edge count and a 10 x 100 cut
DEFAULT_WORKLOAD = ("degree", ("boundary", 10), ("boundary", 100), "edges", ("cut", 10, 100))


def _name(q: Any) -> str:
    if q in ("degree", "edges"):
        return {"degree": "degree", "edges": "edge count"}[q]
    return f"boundary |S|={q[1]}" if q[0] == "boundary" else f"cut {q[1]}x{q[2]}"


def _check(q: Any, n: int) -> Any:
    if q in ("degree", "edges"):
        return q
    ok = isinstance(q, (tuple, list)) and len(q) >= 2 and q[0] in ("boundary", "cut") \
        and all(isinstance(x, (int, np.integer)) and x >= 1 for x in q[1:]) \
        and len(q) == (2 if q[0] == "boundary" else 3) and sum(q[1:]) <= n \
        and (q[0] == "cut" or q[1] < n)
    if not ok:
        raise ValueError(f"workload: {q!r} is not a query; use 'degree', 'edges', ('boundary', k) "
                         f"with 1 <= k < n, or ('cut', a, b) with a + b <= n (n = {n})")
    return tuple(int(x) if not isinstance(x, str) else x for x in q)


def _groups(q: Any, n: int, directed: bool) -> tuple[list[Group], float]:
    """(B c as groups, |c|^2) of a query by its sizes (which nodes does not matter)."""
    if q == "degree":
        one = np.arange(1)
        g = [Group(one, n - 1.0, 0.0), Group(None, 0.0, 1.0)] if directed \
            else [Group(one, n - 1.0), Group(None, 1.0)]
        return g, n - 1.0
    if q == "edges":
        return [Group(None, n - 1.0, n - 1.0 if directed else 0.0)], float(pair_count(n, directed))
    a = q[1]
    b = n - a if q[0] == "boundary" else q[2]
    S, T = np.arange(a), (None if q[0] == "boundary" else np.arange(a, a + b))
    g = [Group(S, float(b), 0.0), Group(T, 0.0, float(a))] if directed \
        else [Group(S, float(b)), Group(T, float(a))]
    return g, float(a * b)


def _share(s: Any) -> float:
    split_epsilon(1.0, s)  # the release's own check of a share
    return float(s)


def _stds(n: int, epsilon: float, share: float, directed: bool, workload: list) -> np.ndarray:
    pairs, noise = split_epsilon(epsilon, share)
    v = float(count_estimate(0.0, 1.0, Channel.randomized_response(rr_probabilities(pairs))).std) ** 2
    out = []
    if share == 0:
        return np.array([np.sqrt(v * _groups(q, n, directed)[1]) for q in workload])
    F = DegreeFusion(n, directed, v, discrete_laplace(noise, 2))
    for q in workload:
        g, norm2 = _groups(q, n, directed)
        out.append(np.sqrt(F.variance(g, norm2)))
    return np.array(out)


@dataclass(frozen=True)
class DegreeSharePlan:
    """The exact std of every workload query at each share, and the shares that minimise them.

    Attributes
    ----------
    nodes, epsilon, directed
        The planned release.
    queries : tuple of str
        The workload's queries, named.
    shares : numpy.ndarray
        The tabulated shares.
    stds : numpy.ndarray, shape (len(shares), len(queries))
    best : dict
        query name -> (share, std) minimising its std over a fine grid of
        shares in [0, 0.95] (a degree or the edge count improves all the way to
        the grid's end: the noisy degrees answer them alone); ``"workload"`` -> the share minimising the mean
        of (std / std at share 0)^2 over the queries.
    """

    nodes: int
    epsilon: float
    directed: bool
    queries: tuple
    shares: np.ndarray
    stds: np.ndarray
    best: dict

    def table(self) -> list[dict]:
        """One row a share: {"share": s, query name: std, ...}."""
        return [{"share": float(s), **{q: float(x) for q, x in zip(self.queries, row)}}
                for s, row in zip(self.shares, self.stds)]

    def to_dict(self) -> dict:
        """JSON-ready: parameters, the table and the best shares."""
        return {"nodes": self.nodes, "epsilon": self.epsilon, "directed": self.directed,
                "table": self.table(),
                "best": {k: {"share": s, "std": x} for k, (s, x) in self.best.items()}}


def degree_share_plan(nodes: int, epsilon: float, *, directed: bool = False,
                      workload: Sequence | None = None,
                      shares: Sequence[float] | None = None) -> DegreeSharePlan:
    """The std of each workload query at each degree share, exactly, from public quantities.

    Parameters
    ----------
    nodes : int
        n, at least 3.
    epsilon : float
        The release's total epsilon.
    directed : bool, default False
    workload : sequence, optional
        Queries (see the module docstring); default :data:`DEFAULT_WORKLOAD`.
    shares : sequence of float in [0, 1), optional
        The shares tabulated; default :data:`DEFAULT_SHARES`.

    Returns
    -------
    DegreeSharePlan

    Examples
    --------
    >>> p = degree_share_plan(4039, 1.0, workload=["degree", "edges", ("boundary", 10)],
    ...                       shares=[0, 0.1])
    >>> [round(x) for x in p.stds[0]], [round(x) for x in p.stds[1]]
    ([61, 2740, 193], [26, 862, 84])
    >>> share, std = p.best["boundary |S|=10"]   # a boundary cut of 10 nodes is best at 0.43
    >>> share, round(std, 1)
    (0.43, 31.0)
    """
    n = check_positive_int(nodes, "nodes", minimum=3)
    epsilon = check_epsilon(epsilon)
    work = [_check(q, n) for q in (DEFAULT_WORKLOAD if workload is None else workload)]
    if not work:
        raise ValueError("workload is empty; list at least one query, e.g. ['degree']")
    grid = np.array([_share(s) for s in (DEFAULT_SHARES if shares is None else shares)])
    stds = np.array([_stds(n, epsilon, float(s), bool(directed), work) for s in grid])
    fine = np.round(np.linspace(0.0, 0.95, 96), 4)
    fstds = np.array([_stds(n, epsilon, float(s), bool(directed), work) for s in fine])
    names = tuple(_name(q) for q in work)
    best = {q: (float(fine[np.argmin(fstds[:, k])]), float(fstds[:, k].min()))
            for k, q in enumerate(names)}
    rel = np.mean((fstds / fstds[0]) ** 2, axis=1)
    best["workload"] = (float(fine[np.argmin(rel)]), float(np.sqrt(rel.min())))
    return DegreeSharePlan(n, epsilon, bool(directed), names, grid, stds, best)


def parse_workload(text: str) -> list:
    """A workload from text: ``degree,edges,boundary:10,cut:10x100``.

    Examples
    --------
    >>> parse_workload("degree,boundary:10,cut:10x100,edges")
    ['degree', ('boundary', 10), ('cut', 10, 100), 'edges']
    """
    out: list = []
    for item in (t.strip() for t in text.split(",")):
        kind, _, size = item.partition(":")
        try:
            if kind in ("degree", "edges") and not size:
                out.append(kind)
            elif kind == "boundary":
                out.append(("boundary", int(size)))
            elif kind == "cut":
                a, b = size.split("x")
                out.append(("cut", int(a), int(b)))
            else:
                raise ValueError
        except ValueError:
            raise ValueError(f"workload item {item!r}: use degree, edges, boundary:K or cut:AxB"
                             ) from None
    return out
