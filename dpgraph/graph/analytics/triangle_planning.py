"""What a triangle computation can resolve, and what it costs, before it runs.

From public quantities (n, the channel) and the release's own cheap estimate
of the edge count m^ (one popcount), :func:`triangle_plan` predicts

* the std of the full computation.  The triangle estimate's variance is
  sum_e s_e L_e^2 + sum_{e, f adjacent} s_e s_f x_g + sum_{triples} s_e s_f s_g
  (see :func:`.motifs.triangle_statistics`); with s_e >= v = min(v0, v1) the
  last two are at least v^3 C(n, 3) + v^2 (n - 2) m, and the first is >= 0.
  The prediction is this lower bound, with m at the lower end of its 95%
  interval: whatever the graph, the full computation's std is at least this;
* the largest triangle count the graph can plausibly have: a graph with m
  edges has at most (2m)^{3/2} / 6 triangles, taken at m+ = m^ + 3.72 sd(m^)
  (one-sided level 1 - 10^-4) and capped at C(n, 3);
* the seconds and bytes of each counting path (:mod:`.triangle_counting`).

Then, in order:

1. std > plausible maximum: the computation cannot resolve anything the graph
   could hold; answer at once, unresolved, with the interval [0, max];
2. the cheapest path fits ``budget_seconds`` and ``max_memory``: compute all rows;
3. otherwise, with ``sample=True``: compute a simple random sample of k rows,
   k as large as the budget allows (drawn with public randomness: the rows
   chosen carry no information about the graph).  The estimate stays
   unbiased; its variance grows by the sampling variance
   n^2 (1 - k/n) / k x (variance of a row's triangle estimate), about
   Var(T^) (n/k - 1) / 3 where the noise dominates.  If that std still
   exceeds the plausible maximum, step 1 applies;
4. otherwise refuse (:class:`CostLimitError`), with the cost and the smallest
   count the full computation could resolve (2 x 1.96 std: the 95% interval
   then excludes 0 and its half-width is at most half the estimate).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, replace
from typing import Any

from ...core.estimate import Z95
from ...core.estimators import count_estimate
from .. import _memory
from .triangle_counting import Cost, TriangleCounter

__all__ = ["CostLimitError", "TrianglePlan", "triangle_plan"]

Z_PLAUSIBLE = 3.719016485455709  # one-sided 1 - 1e-4 normal quantile
MIN_ROWS = 16  # fewer sampled rows than this is not worth a pass
CALIBRATE_ABOVE = 1.0  # predicted seconds above which the speed is measured before deciding


class CostLimitError(MemoryError):
    """A computation would exceed its time or memory budget; raised before it starts.

    The message gives the predicted cost, the budget and what the computation
    could resolve, and how to allow it (a larger ``budget_seconds`` or
    ``max_memory``, or ``sample=True``).  A MemoryError, so that code handling
    a refused allocation handles this refusal too.
    """


def _secs(s: float) -> str:
    if s < 120:
        return f"{s:,.1f} s"
    if s < 7200:
        return f"{s / 60:,.1f} min"
    return f"{s / 3600:,.1f} h"


@dataclass(frozen=True)
class TrianglePlan:
    """The decision taken before a triangle computation, with its numbers.

    Attributes
    ----------
    mode : str
        What a count would run: ``"full"`` (every row), ``"sampled"``
        (``rows`` random rows) or ``"refused"`` (over budget and
        ``sample=False``, or not even a sample fits in memory).
    resolvable : bool
        Whether the std of what would run is within the plausible range;
        False: :func:`~.motifs.triangles` answers at once, unresolved.
    n : int
    edges, edges_high : float
        The debiased edge count m^ and its upper bound m+ (level 1 - 10^-4).
    plausible_max : float
        min(C(n, 3), (2 m+)^{3/2} / 6): the largest triangle count the graph can plausibly have.
    std_full : float
        Lower bound of the std of the full computation (see the module notes).
    std : float
        Predicted std of what runs (``std_full`` inflated by row sampling).
    full : Cost
        The cheapest path for every row (seconds, bytes).
    cost : Cost or None
        What runs (None when nothing runs).
    rows : int or None
        Sampled rows (None: every row or nothing).
    budget_seconds : float
    max_memory : int
    reason : str
        One sentence saying what was decided and why.
    """

    mode: str
    resolvable: bool
    n: int
    edges: float
    edges_high: float
    plausible_max: float
    std_full: float
    std: float
    full: Cost
    cost: Cost | None
    rows: int | None
    budget_seconds: float
    max_memory: int
    reason: str

    @property
    def summary(self) -> str:
        """One line for people on why the answer came unresolved, and what would resolve it.

        ``reason`` keeps the planner's costs and predictions.
        """
        if self.std_full > self.plausible_max:
            return ("the noise at this epsilon is larger than any count this graph could have: "
                    "a larger epsilon would resolve it")
        return ("counting every row needs more time or memory than the budget: a larger "
                "budget_seconds or max_memory would resolve it")

    @property
    def smallest_resolvable(self) -> float:
        """The smallest triangle count the full computation could resolve: 2 x 1.96 ``std_full``."""
        return 2 * Z95 * self.std_full


def _check_budget(budget_seconds: Any, max_memory: Any) -> tuple[float, int]:
    if isinstance(budget_seconds, bool) or not isinstance(budget_seconds, numbers.Real) \
            or not budget_seconds > 0 or not math.isfinite(float(budget_seconds)):
        raise ValueError(f"budget_seconds must be a positive number of seconds, got {budget_seconds!r}")
    if max_memory is None:
        return float(budget_seconds), _memory.available_memory() // 2
    if isinstance(max_memory, bool) or not isinstance(max_memory, numbers.Integral) or max_memory <= 0:
        raise ValueError(f"max_memory must be None or a positive number of bytes, got {max_memory!r}")
    return float(budget_seconds), int(max_memory)


def _sample_std(std_full: float, vmin: float, n: int, k: int) -> float:
    """Predicted std with k of n rows sampled (noise part of a row's variance, see the module notes)."""
    if k >= n:
        return std_full
    row_var = vmin**3 * math.comb(n, 3) / (3.0 * (n - 1))  # variance of one row's t^_i / 3
    return math.sqrt(std_full**2 + n * n * (1 - k / n) / k * row_var)


def _max_rows(counter: TriangleCounter, path: str, budget: float, memory: int) -> int:
    """Largest k whose sampled pass on ``path`` fits the budget and the memory (0 if none)."""
    n = counter.n
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi + 1) // 2
        c = counter.cost(path, mid)
        if c.seconds <= budget and c.bytes <= memory:
            lo = mid
        else:
            hi = mid - 1
    return lo


def triangle_plan(R: Any, budget_seconds: float = 30.0, max_memory: int | None = None,
                  sample: bool = True, counter: TriangleCounter | None = None,
                  calibrate: bool = True) -> TrianglePlan:
    """Predict the std, cost and plausible range of a triangle computation, and decide.

    Parameters
    ----------
    R : PrivateGraph
        An undirected release.
    budget_seconds : float, default 30
        Wall-clock seconds the counting pass may take (predicted from a cost
        model measured with numba on 2 cores; scaled by numba's threads).
    max_memory : int or None, default None
        Bytes the pass may allocate; None is half the memory available now.
    sample : bool, default True
        Over budget, sample rows (True) or refuse (False).
    counter : TriangleCounter, optional
        A prepared counter of ``R`` (its degrees are read once; the input a
        calibration builds is kept in it for the pass).
    calibrate : bool, default True
        When the pass would take more than a second by the model, time a
        small part of it now (at most 3% of the budget, public rows) and
        decide again with the measured speed: a loaded machine gets fewer
        rows, not a late answer.

    Returns
    -------
    TrianglePlan

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> R = dpgraph.release(nx.karate_club_graph(), epsilon=0.1, seed=0)
    >>> p = triangle_plan(R)
    >>> p.mode, p.resolvable, p.std_full > p.plausible_max
    ('full', False, True)
    """
    budget, memory = _check_budget(budget_seconds, max_memory)
    if not isinstance(sample, bool):
        raise TypeError(f"sample must be True or False, got {type(sample).__name__}")
    counter = TriangleCounter(R) if counter is None else counter
    n = counter.n
    e = count_estimate(R.number_of_released_edges(), R.number_of_pairs(), R.channel)
    m_hat, m_sd = float(e.value), float(e.std)
    m_hi = min(float(R.number_of_pairs()), max(0.0, m_hat + Z_PLAUSIBLE * m_sd))
    m_lo = max(0.0, m_hat - Z95 * m_sd)
    tmax = min(math.comb(n, 3), (2 * m_hi) ** 1.5 / 6)
    vmin = min(R.channel.entry_variances())
    std_full = math.sqrt(vmin**3 * math.comb(n, 3) + vmin**2 * max(n - 2, 0) * m_lo)
    stats = (n, m_hat, m_hi, tmax, vmin, std_full)
    plan = _decide(counter, stats, budget, memory, sample)
    if calibrate and counter.measured is None and plan.resolvable and plan.cost is not None \
            and plan.cost.seconds > CALIBRATE_ABOVE:
        # measure this machine now (its load) on a small part of the pass, then decide again
        spent = counter.calibrate(plan.cost.path, min(1.0, 0.03 * budget))
        plan = _decide(counter, stats, max(budget - spent, 1e-3), memory, sample)
        plan = replace(plan, budget_seconds=budget, reason=(
            f"{plan.reason} (speed measured now: {counter.slowdown:.2g} x the model)"))
    return plan


def _decide(counter: TriangleCounter, stats: tuple, budget: float, memory: int,
            sample: bool) -> TrianglePlan:
    """The decision of :func:`triangle_plan` for the counter's current cost model."""
    n, m_hat, m_hi, tmax, vmin, std_full = stats
    costs = [counter.cost(p) for p in counter.paths()]
    fits = [c for c in costs if c.bytes <= memory]
    full = min(fits or costs, key=lambda c: c.seconds)
    base = dict(n=n, edges=m_hat, edges_high=m_hi, plausible_max=float(tmax), std_full=std_full,
                full=full, budget_seconds=budget, max_memory=memory)
    could = (f"the full computation ({full.path} path, about {_secs(full.seconds)} and "
             f"{_memory.size_text(full.bytes)}) has a std of at least {std_full:,.4g}")
    beyond = (f"more than the largest triangle count a graph with at most {m_hi:,.0f} edges "
              f"can have ({tmax:,.4g})")
    unresolvable = "not resolvable at this epsilon, answered without counting"
    if full.bytes <= memory and full.seconds <= budget:
        if std_full > tmax:
            reason = f"{could}, {beyond}: {unresolvable}"
        else:
            reason = f"every row counted ({full.path} path, about {_secs(full.seconds)})"
        return TrianglePlan("full", std_full <= tmax, std=std_full, cost=full, rows=None,
                            reason=reason, **base)
    over = (f"{could}; it exceeds the budget ({_secs(budget)}, {_memory.size_text(memory)}) and could resolve "
            f"counts from {2 * Z95 * std_full:,.4g} up")
    k, path = max((_max_rows(counter, p, budget, memory), p) for p in counter.paths())
    if std_full > tmax:
        reason = f"{could}, {beyond}: {unresolvable}"
    elif not sample:
        reason = f"{over}; refused (pass sample=True, or a larger budget_seconds / max_memory)"
    elif k < MIN_ROWS:
        reason = (f"{over}; not even {MIN_ROWS} sampled rows fit: refused (pass a larger "
                  f"budget_seconds or max_memory, or run it where {_memory.size_text(full.bytes)} "
                  "is free: max_memory defaults to half the memory available)")
    if not sample or k < MIN_ROWS:
        return TrianglePlan("refused", std_full <= tmax, std=std_full, cost=None, rows=None,
                            reason=reason, **base)
    std_k = _sample_std(std_full, vmin, n, k)
    cost = counter.cost(path, k)
    if std_full > tmax:
        pass
    elif std_k > tmax:
        reason = (f"{over}; a sample of {k:,} rows within the budget would have a std of at least "
                  f"{std_k:,.4g}, {beyond}: not resolvable within the budget, answered without "
                  "counting")
    else:
        reason = (f"{over}; estimated from {k:,} of {n:,} rows ({path} path, about "
                  f"{_secs(cost.seconds)}), a simple random sample drawn with public randomness: "
                  f"unbiased, std at least {std_k:,.4g} instead of {std_full:,.4g}")
    return TrianglePlan("sampled", std_k <= tmax, std=std_k, cost=cost, rows=k, reason=reason,
                        **base)
