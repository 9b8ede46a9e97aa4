"""Triangles, wedges, transitivity and clustering from one release.

Products of debiased entries over distinct pairs are unbiased because the
pairs are released independently; everything reduces to the released degrees
and, per row, eight integer sums over the common-neighbour counts C = Y Y
(see :func:`triangle_statistics`), counted without n x n floats by
:mod:`.triangle_counting` (2-hop counting on the released CSR, or
AND-popcount of packed rows).  Before the pass, :mod:`.triangle_planning`
predicts its std, cost and the plausible range of the count, and answers at
once, samples rows or refuses when the pass could not resolve anything or
would exceed its time limit (``max_seconds``, the caller's choice; without one
only a prediction of hours is refused) or ``max_memory``.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np

from ...core.estimate import Z95, BoundInterval, Estimate
from ...validation import Boolean, Integer, Interval, Optional, validate_params
from ..answers import (
    PROGRESS,
    PROPER,
    SEED,
    analytic,
    finish,
    finish_ratio,
    require_undirected,
)
from ..protocol import Release
from ._clustering import ClusteringSets, LevelSets
from ._shared import _cache, _entry_map
from ._triangle_terms import Constants, row_sums
from .triangle_counting import PROBED, REDUCTIONS, TriangleCounter
from .triangle_planning import CostLimitError, Deadline, TrianglePlan, limit_seconds, triangle_plan

__all__ = ["CostLimitError", "TrianglePlan", "TriangleStatistics", "average_clustering",
           "local_clustering",
           "transitivity", "triangle_plan", "triangle_statistics", "triangles", "wedges"]

# The limits every triangle analytic accepts (declared once, checked at the boundary).
_BUDGET = dict(max_seconds=Optional(Interval(numbers.Real, 0, None, closed="neither",
                                             example="600")),
               max_memory=Optional(Integer(minimum=1)))


@dataclass(frozen=True)
class TriangleStatistics:
    """Unbiased triangle and wedge counts of one release, with their (co)variances.

    Attributes
    ----------
    triangles, wedges : float
        Unbiased estimates of the triangle count and of the number of
        2-paths (wedges, i.e. sum_v C(deg v, 2)).
    var_triangles, var_wedges, cov : float
        Unbiased estimates of Var T^, Var W^ and Cov(T^, W^) (clipped at 0
        for the variances); with sampled rows, Var T^ includes the sampling
        variance.
    node_triangles, node_wedges : numpy.ndarray
        Per-node unbiased estimates (triangles through v, C(deg v, 2));
        ``node_triangles`` is NaN at the rows a sampled pass did not count.
    node_linear : numpy.ndarray
        Per node i, sum over j of s_ij L^2_ij, the unbiased estimates of the
        linear Hoeffding terms of Var T^ over the pairs at i (twice the
        linear term when summed over i); NaN where not counted.
    path : str
        How C was counted: ``"sparse"`` (2-hop counting on the released CSR),
        ``"packed"`` (AND-popcount of packed rows) or ``"dense"`` (the n x n
        reference).
    rows : int or None
        Number of rows of a sampled pass (None: every row).
    seed : int or None
        The seed of the public random samples of rows and of the columns the
        packed pass probes for the variance's fourth moment (None: nothing
        sampled; see :mod:`.triangle_counting`).
    """

    triangles: float
    wedges: float
    var_triangles: float
    var_wedges: float
    cov: float
    node_triangles: np.ndarray
    node_wedges: np.ndarray
    node_linear: np.ndarray | None = None
    path: str = "sparse"
    rows: int | None = None
    seed: int | None = None


@dataclass(frozen=True, eq=False)
class PlannedEstimate(Estimate):
    """An :class:`~dpgraph.core.Estimate` that also says how its triangle pass was planned.

    ``plan`` is the :class:`~.triangle_planning.TrianglePlan` (mode, cost,
    predicted std, plausible range, and a one-sentence ``reason``); the repr
    says when the value comes from a sample of rows.
    """

    plan: TrianglePlan | None = field(default=None, kw_only=True, repr=False)

    def __repr__(self) -> str:
        base = super().__repr__()
        if self.plan is not None and self.plan.mode == "sampled" and self.plan.resolvable:
            return f"{base[:-1]}, from {self.plan.rows:,} of {self.plan.n:,} rows sampled)"
        return base


def _planned(est: Estimate, plan: TrianglePlan) -> PlannedEstimate:
    kw = {f.name: getattr(est, f.name) for f in fields(Estimate) if f.init}
    return PlannedEstimate(**kw, plan=plan)


def _at_once(lo: float, hi: float, low: float, high: float, proper: bool, plan: TrianglePlan,
             reason: str | None = None) -> PlannedEstimate:
    """Unresolved, known only to lie in [lo, hi]: the midpoint, that interval at every level."""
    mid = 0.5 * (lo + hi)
    return PlannedEstimate(mid, float("nan"), feasible_range=(low, high), exact_std=False,
                           proper=proper, raw=mid,
                           interval=BoundInterval(lo, 0.0, hi, 0.0),
                           unresolved=plan.summary, detail=reason or plan.reason, plan=plan)


def _with_seed(plan: TrianglePlan, st: TriangleStatistics) -> TrianglePlan:
    """The plan, its reason naming the seed of the rows a sampled pass drew."""
    if st.rows is None or not plan.resolvable:
        return plan
    return replace(plan, reason=f"{plan.reason} (rows drawn with seed {st.seed})")


def _constants(R: Any) -> Constants:
    z0, z1 = _entry_map(R.channel)
    v0, v1 = R.channel.entry_variances()
    return Constants.of(R.number_of_nodes(), z0, z1, v0, v1)


def _statistics(counter: TriangleCounter, red: np.ndarray, rows: np.ndarray | None,
                nsums: np.ndarray, k: Constants, path: str, seed: int | None) -> TriangleStatistics:
    """Assemble the statistics from the reductions of ``rows`` (None: all) and every row's (N1, N2)."""
    n = counter.n
    d = counter.deg.astype(np.float64)
    S1, S2 = float(d.sum()), float(np.sum(d * d))
    linw = row_sums({"N1": nsums[:, 0], "N2": nsums[:, 1]}, d, S1, S2, k, ("linw",))["linw"]
    D = (n - 1) * k.z0 + k.dl * d  # row sums of Z
    Q = (n - 1) * k.u0 + k.eu * d  # row sums of U
    node_w = 0.5 * (D * D - Q)
    srow = (n - 1) * k.w0 + k.om * d  # row sums of S
    s2row = (n - 1) * k.w0**2 + ((k.w0 + k.om) ** 2 - k.w0**2) * d  # row sums of S o S
    var_w = max(0.5 * float(linw.sum()) + 0.5 * float(np.sum(srow * srow - s2row)), 0.0)
    sel = np.arange(n) if rows is None else rows
    sums = {name: red[:, c] for c, name in enumerate(REDUCTIONS)}
    t = row_sums(sums, d[sel], S1, S2, k, ("tri", "quad", "cub", "linc"))
    if red.shape[1] > len(REDUCTIONS):  # probed columns: the linear term from the probe alone
        sums.update((name, red[:, len(REDUCTIONS) + c]) for c, name in enumerate(PROBED))
    t["lin"] = row_sums(sums, d[sel], S1, S2, k, ("lin",))["lin"]
    x = t["tri"] / 6.0  # T^ = sum of x over all rows
    v = 0.5 * t["lin"] + 0.5 * t["quad"] + t["cub"] / 6.0  # Var T^ = sum of v (Hoeffding terms)
    cv = 0.5 * t["linc"] + 0.5 * t["quad"]  # Cov(T^, W^) = sum of cv
    if rows is None:
        T, var_t, cov = float(x.sum()), max(float(v.sum()), 0.0), float(cv.sum())
    else:  # simple random sample of rows: expansion estimates plus the sampling variance
        m = sel.size
        scale = n / max(m, 1)
        T, cov = scale * float(x.sum()), scale * float(cv.sum())
        samp = n * n * (1 - m / n) / m * float(np.var(x, ddof=1)) if m > 1 else 0.0
        var_t = max(scale * float(v.sum()), 0.0) + samp
    node_t = np.full(n, np.nan)
    node_lin = np.full(n, np.nan)
    node_t[sel] = 0.5 * t["tri"]
    node_lin[sel] = t["lin"]
    return TriangleStatistics(T, float(node_w.sum()), var_t, var_w, cov, node_t, node_w, node_lin,
                              path=path, rows=None if rows is None else int(sel.size), seed=seed)


@validate_params(progress=PROGRESS, **_BUDGET, sample=Boolean(), seed=SEED)
def triangle_statistics(R: Release, progress: bool | None = None, *,
                        max_seconds: float | None = None, max_memory: int | None = None,
                        sample: bool = True, seed: int | None = None) -> TriangleStatistics:
    """Triangles, wedges, their variances and per-node counts in one pass.

    Let Z = z0 + delta Y off the diagonal (delta = z1 - z0), U = Z o Z and
    S = v0 + (v1 - v0) Z, the unbiased estimate of each entry's variance.  With
    C = Y Y (common released neighbours) and released degrees, every product
    Z^2, U^2, UZ, S^2 has a closed form, e.g. for i != j

        (Z^2)_ij = (n-2) z0^2 + z0 delta (deg_i + deg_j - 2 Y_ij) + delta^2 C_ij.

    Variance of T^ (Hoeffding decomposition; every term unbiased):
    linear  sum_{i<j} S_ij L^2_ij  with L^2 = (Z^2)^2 - U^2 + Z^2 estimating the
    squared number of common neighbours; quadratic sum_{j<k} Z_jk (S^2)_jk;
    cubic trace(S^3) / 6.  Var W^ and Cov(T^, W^) likewise.  Summed over j,
    each row's terms are closed forms in eight integer sums of C over the row
    and over the row's released neighbours (:mod:`._triangle_terms`), counted
    by 2-hop counting on the released CSR or by AND-popcount of packed rows
    (:mod:`.triangle_counting`; above 8,192 nodes the variances' sums over
    non-edges come from probed pairs, unbiased), whichever the cost model finds cheaper:
    memory O(n + released edges) or the size of the release, never n x n
    floats.  The wedge terms need only the degrees and neighbour degree sums.

    When counting every row exceeds ``max_seconds`` or ``max_memory``, a
    simple random sample of rows is counted instead (``sample=True``): the
    estimates stay unbiased and ``var_triangles`` includes the sampling
    variance (see :mod:`.triangle_planning`).  The result is cached per
    release (a sampled one per ``seed``).

    Parameters
    ----------
    progress : bool or None, default None
        Show a progress bar (tqdm) over the pass; None shows it for
        releases of 5,000 nodes or more when the error stream is a terminal.
    max_seconds : float or None, default None
        Wall-clock seconds the pass may take: the operation-count prediction
        is compared with it before the pass (over it: rows are sampled, or
        the call is refused), and the pass stops with :class:`CostLimitError`
        once it has run that long.  None: no limit (the enclosing
        :func:`~.triangle_planning.time_limit`, if any); only a prediction of
        hours (:data:`~.triangle_planning.UNLIMITED_CEILING`) is refused.
    max_memory : int or None, default None
        Bytes the pass may allocate; None: half the memory available now.
    sample : bool, default True
        Over the limit, count a random sample of rows (True) or refuse (False).
    seed : int or None, default None
        Seed of the row sample and of the probed columns (public randomness;
        None draws fresh entropy, reported in ``seed``).

    Raises
    ------
    ValueError
        For a directed release.
    CostLimitError
        Over the limit with ``sample=False``, or when not even a sample fits
        (before the pass); or the pass ran past ``max_seconds`` (nothing kept).

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.karate_club_graph()
    >>> st = triangle_statistics(dpgraph.release(G, epsilon=4.0, seed=0))
    >>> round(st.var_triangles ** 0.5) > 0, st.rows is None
    (True, True)
    """
    require_undirected(R, "triangle counting")
    plan, counter = _plan(R, max_seconds, max_memory, sample)
    return _computed(R, plan, counter, progress, seed)


def _plan(R: Any, max_seconds: Any, max_memory: Any, sample: Any
          ) -> tuple[TrianglePlan, TriangleCounter | None]:
    """The plan for these arguments, decided once per release (with the counter it made)."""
    cache = _cache(R)  # the arguments are declared by the public callers
    key = ("tri-plan", limit_seconds(max_seconds), max_memory, sample)
    if key in cache:
        return cache[key], None
    counter = TriangleCounter(R)
    done = "tri" in cache
    plan = triangle_plan(R, max_seconds, max_memory, sample, counter)
    if done:  # every row was counted before: nothing left to decide
        plan = replace(plan, mode="full", resolvable=plan.std_full <= plan.plausible_max,
                       std=plan.std_full, cost=plan.full, rows=None,
                       reason="every row counted (earlier, for this release)")
    cache[key] = plan
    return plan, counter


def _computed(R: Any, plan: TrianglePlan, counter: TriangleCounter | None, progress: Any,
              seed: Any) -> TriangleStatistics:
    """The statistics the plan calls for (cached per release; a sampled pass per seed)."""
    cache = _cache(R)
    if "tri" in cache:
        return cache["tri"]
    if plan.mode == "refused":
        raise CostLimitError(plan.reason)
    counter = TriangleCounter(R) if counter is None else counter
    k = _constants(R)
    path = plan.cost.path
    limit = plan.max_seconds
    deadline = Deadline(f"the triangle pass on {counter.n:,} nodes", limit or 0.0,
                        limit is not None, plan.cost.seconds)
    if plan.mode == "full":
        red = counter.reductions(path, None, progress, deadline, seed)
        counter.release_inputs()
        st = _statistics(counter, red, None, red[:, 6:], k, path, counter.probe_seed)
        cache["tri"] = st
        cache["tri-red"] = red
        return st
    key = ("tri-sampled", plan.rows, seed)
    if seed is None and "tri-sampled" in cache:
        return cache["tri-sampled"]
    if key not in cache:
        s = int(np.random.SeedSequence().entropy) if seed is None else seed
        rows = np.sort(np.random.default_rng(s).choice(counter.n, size=plan.rows, replace=False))
        red = counter.reductions(path, rows, progress, deadline, s)
        nsums = counter.neighbour_sums()
        counter.release_inputs()
        cache[key] = _statistics(counter, red, rows, nsums, k, path, s)
        if seed is None:
            cache["tri-sampled"] = cache[key]
    return cache[key]


@analytic
@validate_params(proper=PROPER, progress=PROGRESS, **_BUDGET, sample=Boolean(), seed=SEED)
def triangles(R: Release, proper: bool = True, progress: bool | None = None, *,
              max_seconds: float | None = None, max_memory: int | None = None, sample: bool = True,
              seed: int | None = None) -> Estimate:
    """Estimate of the number of triangles, unbiased for every input graph.

    T^ = sum over vertex triples of the product of the three debiased
    entries.  ``std`` is the square root of an unbiased estimate of the exact
    variance (``exact_std=False``); see :func:`triangle_statistics`.

    Before counting, :func:`triangle_plan` predicts the std of the full
    computation, its cost, and the largest count the graph can plausibly
    have ((2m)^{3/2} / 6 at an upper confidence bound of the edge count m).
    Where the std exceeds that range the answer comes at once, unresolved:
    the midpoint of [0, max], that interval as ``ci()``.  Where the full
    count exceeds ``max_seconds`` (or, without one, takes hours), a random sample of rows is counted (unbiased,
    larger std), or with ``sample=False`` :class:`CostLimitError` is raised
    with the cost and the smallest count the full computation could resolve.
    The result's ``plan`` says which happened and holds the numbers (its
    repr says when rows were sampled); ``reason`` says why an answer is not
    resolved.

    Parameters
    ----------
    proper : bool, default True
        Project the value onto [0, C(n, 3)] (interval centred on the unbiased
        count, clipped); False returns the unbiased count.
    progress : bool or None, default None
        Progress bar of the triangle pass (see :func:`triangle_statistics`).
    max_seconds, max_memory, sample, seed
        As in :func:`triangle_statistics`.

    Returns
    -------
    PlannedEstimate
        The triangle count (unbiased, or projected), with an estimated std
        and the ``plan``.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.karate_club_graph()
    >>> t = dpgraph.release(G, epsilon=4.0, seed=0).triangles()
    >>> abs(t.value - 45) < 4 * t.std, t.reason is None
    (True, True)
    >>> dpgraph.release(G, epsilon=0.1, seed=0).triangles().plan.mode
    'full'
    """
    require_undirected(R, "triangle counting")
    n = R.number_of_nodes()
    feasible = (0.0, n * (n - 1) * (n - 2) / 6)
    plan, counter = _plan(R, max_seconds, max_memory, sample)
    if not plan.resolvable:
        return _at_once(0.0, plan.plausible_max, *feasible, proper, plan)
    st = _computed(R, plan, counter, progress, seed)
    est = PlannedEstimate(st.triangles, float(np.sqrt(st.var_triangles)), exact_std=False,
                          feasible_range=feasible, plan=_with_seed(plan, st))
    return finish(est, proper, step=1.0)


@analytic
@validate_params(proper=PROPER, progress=PROGRESS)
def wedges(R: Release, proper: bool = True,
           progress: bool | None = None) -> Estimate:
    """Estimate of the number of wedges (2-paths), sum_v C(deg v, 2), unbiased.

    W^ = sum_v (D_v^2 - Q_v) / 2 with D_v, Q_v the row sums of Z and Z o Z: a
    function of the released degrees only; its variance needs the sums of the
    neighbours' released degrees (one pass over the released edges, no
    triangle counting).  ``std`` is estimated from the release.

    Parameters
    ----------
    proper : bool, default True
        Project the value onto [0, n C(n - 1, 2)]; False returns the unbiased count.
    progress : bool or None, default None
        Unused (the pass is linear in the released edges); kept for symmetry
        with :func:`triangles`.

    Returns
    -------
    Estimate
        Unbiased (or projected) wedge count.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.karate_club_graph()
    >>> w = dpgraph.release(G, epsilon=4.0, seed=0).wedges()
    >>> truth = sum(d * (d - 1) // 2 for _, d in G.degree())
    >>> abs(w.value - truth) < 4 * w.std
    True
    """
    require_undirected(R, "wedge counting")
    W, var_w = _wedge_statistics(R)
    n = R.number_of_nodes()
    est = Estimate(W, float(np.sqrt(var_w)), exact_std=False,
                   feasible_range=(0.0, n * (n - 1) * (n - 2) / 2))
    return finish(est, proper, step=1.0)


def _wedge_statistics(R: Any) -> tuple[float, float]:
    """(W^, Var^ W^) from the degrees and neighbour degree sums (cached; no triangle pass)."""
    cache = _cache(R)
    if "tri" in cache:
        return cache["tri"].wedges, cache["tri"].var_wedges
    if "wedges" not in cache:
        counter = TriangleCounter(R)
        nsums = counter.neighbour_sums()
        counter.release_inputs()
        empty = np.zeros((0, 8), dtype=np.int64)
        st = _statistics(counter, empty, np.zeros(0, dtype=np.int64), nsums, _constants(R),
                         "sparse", None)
        cache["wedges"] = (st.wedges, st.var_wedges)
    return cache["wedges"]


@analytic
@validate_params(proper=PROPER, progress=PROGRESS, **_BUDGET, sample=Boolean(), seed=SEED)
def transitivity(R: Release, proper: bool = True, progress: bool | None = None, *,
                 max_seconds: float | None = None, max_memory: int | None = None,
                 sample: bool = True, seed: int | None = None) -> Estimate:
    """Transitivity 3 T / W with Fieller's interval, in [0, 1].

    3T^ and W^ are unbiased and jointly normal (sums over many independent
    pairs) with the unbiased (co)variance estimates of
    :func:`triangle_statistics`, so (3T^ - tau W^) / sd(3T^ - tau W^) is a
    standard normal pivot at the true tau: the interval is the set of tau in
    [0, 1] it does not reject (Fieller), exact in the normal limit whatever
    the size of W^ (where the delta method fails: small or noisy
    denominators).  When W^ is not significantly positive the interval is
    the whole of [0, 1] and ``resolved`` is False.  The triangle count is
    planned as in :func:`triangles`: where it cannot be resolved the answer
    comes at once, unresolved, with the interval [0, min(1, 3 T+ / W-)]
    (T+ the plausible maximum, W- the lower end of W's 95% interval).

    Parameters
    ----------
    proper : bool, default True
        Value 3T^/W^ clipped to [0, 1] (the interval's midpoint when W^ <= 0);
        False returns the raw ratio (NaN when W^ <= 0, with ``resolved`` False).
    progress, max_seconds, max_memory, sample, seed
        As in :func:`triangles` (the same triangle pass).

    Returns
    -------
    Estimate
        ``ci(level)`` is Fieller's interval; ``std`` its 95% half-width / 1.96.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.karate_club_graph()
    >>> t = dpgraph.release(G, epsilon=4.0, seed=0).transitivity()
    >>> lo, hi = t.ci()
    >>> 0 <= lo <= t.value <= hi <= 1
    True
    """
    require_undirected(R, "triangle counting")
    plan, counter = _plan(R, max_seconds, max_memory, sample)
    if not plan.resolvable:
        W, var_w = _wedge_statistics(R)
        w_lo = W - Z95 * np.sqrt(var_w)
        hi = 1.0 if w_lo <= 0 else float(min(1.0, 3 * plan.plausible_max / w_lo))
        return _at_once(0.0, hi, 0.0, 1.0, proper, plan)
    st = _computed(R, plan, counter, progress, seed)
    est = finish_ratio(3.0 * st.triangles, st.wedges, 9.0 * st.var_triangles, st.var_wedges,
                       3.0 * st.cov, proper, 0.0, 1.0)
    return _planned(est, _with_seed(plan, st))


@validate_params(proper=PROPER, **_BUDGET)
def local_clustering(R: Release, proper: bool = True, *, max_seconds: float | None = None,
                     max_memory: int | None = None) -> np.ndarray:
    """Plug-in local clustering coefficient of every node (biased, noisy).

    t^_v / w^_v with per-node unbiased triangle and wedge estimates, clipped to
    [0, 1] when ``proper``; 0 where w^_v < 1 either way (networkx's value for a
    node with no wedge).  Each is a ratio of two noisy sums over about n^2/2
    and n pairs: at small epsilon individual values are dominated by noise.
    Every row is counted: over the limit, :class:`CostLimitError` is raised.

    Parameters
    ----------
    R : PrivateGraph
        Undirected release.
    proper : bool, default True
        Clip each ratio to [0, 1]; False returns the raw ratios (negative or
        above 1 where the noise puts them).
    max_seconds, max_memory
        The triangle pass's limits (see :func:`triangle_statistics`).

    Returns
    -------
    numpy.ndarray
        One value per node, in the release's node order.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> R = dpgraph.release(nx.karate_club_graph(), epsilon=4.0, seed=0)
    >>> c = local_clustering(R)
    >>> c.shape, bool(((0 <= c) & (c <= 1)).all())
    ((34,), True)
    >>> raw = local_clustering(R, proper=False)
    >>> bool((np.clip(raw, 0, 1) == c).all())
    True
    """
    require_undirected(R, "local clustering")
    plan, counter = _plan(R, max_seconds, max_memory, False)
    st = _computed(R, plan, counter, None, None)
    w = st.node_wedges
    c = np.where(w >= 1.0, st.node_triangles / np.maximum(w, 1.0), 0.0)
    return np.clip(c, 0.0, 1.0) if proper else c


@analytic
@validate_params(proper=PROPER, progress=PROGRESS, **_BUDGET)
def average_clustering(R: Release, proper: bool = True, progress: bool | None = None, *,
                       max_seconds: float | None = None, max_memory: int | None = None
                       ) -> Estimate:
    """Average local clustering (networkx's: nodes of degree < 2 count as 0), with its interval.

    C = (1/n) sum_v t_v / C(d_v, 2).  The per-node triangle counts t_v have
    unbiased estimates, but the denominators need the degrees, which the
    release pins down only to within about +- 2 sqrt((n - 1) v) (v the entry
    variance): at small epsilon a node of degree 3 cannot be told from one of
    degree 30, and C is identified only as far as the release resolves how
    the triangles are spread over the degrees.  The interval at level
    1 - a is the intersection of two sets of level 1 - a/2 each (see
    :mod:`._clustering`):

    * a per-node bound, every degree inside its own interval; narrow where
      each degree is resolved (dense graphs);
    * the identified set of two linear programs over the number of nodes and
      of triangles at each degree, constrained by unbiased estimates of the
      released-degree distribution, of the triangle mass by released degree
      (each triangle's own pairs left out, so the estimate is exactly
      unbiased) and of the triangle, wedge and edge totals, each within its
      Bonferroni margin; narrow where the degrees are resolved in aggregate
      (sparse graphs of homogeneous degree at large epsilon).

    Both contain C with at least their level whatever the graph, so the
    interval is conservative: it contains every value the release cannot
    rule out.  The value is its midpoint (of all points of a set the
    statistic is only known to lie in, the one with the smallest worst-case
    error); ``resolved`` is True when the 95% interval excludes 0 and its
    half-width is at most half the value, and ``reason`` says why not
    otherwise.  Every row of the triangle pass is needed: over the limit the
    answer is [0, 1] at once, unresolved, with the cost as the reason.
    Prefer :func:`transitivity` as a global clustering number: it is
    identified and has an exact pivot.

    Parameters
    ----------
    proper : bool, default True
        Kept for symmetry with the other analytics; the value is the
        interval's midpoint either way.
    progress : bool or None, default None
        Progress bar of the triangle pass (see :func:`triangle_statistics`).
    max_seconds, max_memory
        Budget of the triangle pass (see :func:`triangle_statistics`).

    Returns
    -------
    Estimate
        ``ci(level)`` the interval above at that level (computed on demand);
        ``std`` its 95% half-width / 1.96; ``reason`` and ``plan``.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> a = dpgraph.release(nx.karate_club_graph(), epsilon=4.0, seed=0).average_clustering()
    >>> lo, hi = a.ci()
    >>> 0.0 <= lo <= a.value <= hi <= 1.0
    True
    """
    require_undirected(R, "average clustering")
    plan, counter = _plan(R, max_seconds, max_memory, False)
    if plan.mode != "full":
        why = f"average clustering needs every row of the triangle pass: {plan.reason}"
        return _at_once(0.0, 1.0, 0.0, 1.0, proper, plan, why)
    st = _computed(R, plan, counter, progress, None)
    cache = _cache(R)
    if "clustering" not in cache:
        counter = TriangleCounter(R)
        cache["clustering"] = ClusteringSets(R, st, cache["tri-red"], counter)
        counter.release_inputs()
    rule = LevelSets(cache["clustering"])
    lo, hi = rule(Z95, 0.0, 1.0)
    mid, sd = 0.5 * (lo + hi), (hi - lo) / (2 * Z95) if hi - lo < 1 else np.nan  # [0, 1]: none
    return PlannedEstimate(mid, sd, feasible_range=(0.0, 1.0), exact_std=False,
                           proper=proper, raw=mid, interval=rule, plan=plan)
