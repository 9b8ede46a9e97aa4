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
  The seconds come from operation counts times fixed per-operation constants
  (measured once on a 2-core machine): the same release gets the same
  prediction, and the same decision, on a quiet or a loaded machine.  Nothing
  is timed when a call starts.

Then, in order:

1. std > plausible maximum: the computation cannot resolve anything the graph
   could hold; answer at once, unresolved, with the interval [0, max];
2. the cheapest path fits the time limit and ``max_memory``: compute all
   rows.  The time limit is ``max_seconds`` when the caller gives one
   (argument, or :func:`time_limit` around the call), else
   :data:`UNLIMITED_CEILING` (hours): a call without a limit runs unless
   its predicted cost is absurd;
3. otherwise, with ``sample=True``: compute a simple random sample of k rows,
   k as large as the limit allows (drawn with public randomness: the rows
   chosen carry no information about the graph).  The estimate stays
   unbiased; its variance grows by the sampling variance
   n^2 (1 - k/n) / k x (variance of a row's triangle estimate), about
   Var(T^) (n/k - 1) / 3 where the noise dominates.  If that std still
   exceeds the plausible maximum, step 1 applies;
4. otherwise refuse (:class:`CostLimitError`), with the cost, the smallest
   count the full computation could resolve (2 x 1.96 std: the 95% interval
   then excludes 0 and its half-width is at most half the estimate) and the
   ``max_seconds`` that allows it.

A ``max_seconds`` the caller gives is also enforced while the pass runs
(:class:`Deadline`): past it the pass stops with :class:`CostLimitError`
and nothing is kept.
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from ...core.estimate import Z95
from ...core.estimators import count_estimate
from .. import _memory
from .triangle_counting import Cost, TriangleCounter

__all__ = ["UNLIMITED_CEILING", "CostLimitError", "Deadline", "TrianglePlan", "check_max_seconds",
           "time_limit", "triangle_plan"]

Z_PLAUSIBLE = 3.719016485455709  # one-sided 1 - 1e-4 normal quantile
MIN_ROWS = 16  # fewer sampled rows than this is not worth a pass
#: predicted seconds (operation-count model) above which a call without ``max_seconds`` is
#: refused: hours, a cost no one waits for by accident
UNLIMITED_CEILING = 4 * 3600.0
#: seconds past ``max_seconds`` before a running computation is stopped (a limit below a
#: second is a decision before the call, not a stopwatch)
GRACE = 1.0
_LIMIT: ContextVar[float | None] = ContextVar("dpgraph_max_seconds", default=None)


class CostLimitError(MemoryError):
    """A computation would exceed (or did exceed) its time or memory limit.

    Raised before the computation starts when its predicted cost exceeds the
    limit, or while it runs when a ``max_seconds`` the caller gave has passed
    (nothing is kept).  The message gives the predicted cost, the limit, what
    the computation could resolve, and how to allow it (a larger
    ``max_seconds`` or ``max_memory``, ``max_seconds=None``, or
    ``sample=True``).  A MemoryError, so that code handling a refused
    allocation handles this refusal too.
    """


def check_max_seconds(max_seconds: Any) -> float | None:
    """``max_seconds`` validated: None (no limit) or a positive, finite number of seconds.

    Examples
    --------
    >>> check_max_seconds(None), check_max_seconds(90)
    (None, 90.0)
    """
    if max_seconds is None:
        return None
    if isinstance(max_seconds, bool) or not isinstance(max_seconds, numbers.Real) \
            or not max_seconds > 0 or not math.isfinite(float(max_seconds)):
        raise ValueError(f"max_seconds must be None (no limit) or a positive number of seconds, "
                         f"got {max_seconds!r}")
    return float(max_seconds)


@contextmanager
def time_limit(max_seconds: float | None) -> Iterator[None]:
    """Within the block, analytics called without ``max_seconds`` take this one.

    For code that calls the analytics for you (``dpgraph report``, the
    experiments): ``with time_limit(600): build_report(R)`` gives every
    triangle and community computation of the report 600 seconds.  An
    explicit ``max_seconds=`` argument wins; None restores "no limit".

    Parameters
    ----------
    max_seconds : float or None
        Wall-clock seconds each computation may take; None: no limit (a
        call still refuses a predicted cost above :data:`UNLIMITED_CEILING`).

    Examples
    --------
    >>> with time_limit(60):
    ...     limit_seconds(None)
    (60.0, True)
    >>> limit_seconds(None)[1]
    False
    """
    token = _LIMIT.set(check_max_seconds(max_seconds))
    try:
        yield
    finally:
        _LIMIT.reset(token)


def limit_seconds(max_seconds: Any) -> tuple[float, bool]:
    """(the seconds a call may take, whether the caller set them) for an argument ``max_seconds``.

    The argument, else the enclosing :func:`time_limit`, else
    :data:`UNLIMITED_CEILING` (not set by the caller: only an absurd
    prediction is refused, and nothing is stopped while it runs).
    """
    given = check_max_seconds(max_seconds)
    if given is None:
        given = _LIMIT.get()
    return (UNLIMITED_CEILING, False) if given is None else (given, True)


def how_to_allow(predicted: float, given: bool, limit: float) -> str:
    """The sentence of a refusal that says which ``max_seconds`` allows the call."""
    need = max(1, math.ceil(predicted * 1.5))
    if given:
        return (f"it exceeds max_seconds={limit:g}. Pass max_seconds={need:d} (or more), or "
                "max_seconds=None for no limit, to run it")
    return (f"more than the {_secs(UNLIMITED_CEILING)} a call runs without a limit. Pass "
            f"max_seconds={need:d} (or more) to run it anyway")


class Deadline:
    """The wall-clock limit a caller gave, checked between blocks of a long computation.

    ``check()`` raises :class:`CostLimitError` once ``max_seconds`` (plus
    :data:`GRACE`) has passed since the deadline was made; without a limit
    set by the caller it never raises.  Stopping keeps nothing: results are cached only when a
    computation completes.
    """

    def __init__(self, what: str, limit: float, given: bool, predicted: float) -> None:
        self.what, self.limit, self.given, self.predicted = what, limit, given, predicted
        self.start = time.perf_counter()

    def check(self) -> None:
        """Raise :class:`CostLimitError` when the caller's ``max_seconds`` has passed."""
        if not self.given:
            return
        spent = time.perf_counter() - self.start
        if spent > self.limit + GRACE:
            need = max(math.ceil(self.limit * 2), math.ceil(self.predicted * 1.5), 1)
            raise CostLimitError(
                f"{self.what} stopped after {_secs(spent)}: over max_seconds={self.limit:g} "
                f"(predicted {_secs(self.predicted)}); nothing was kept. Pass a larger "
                f"max_seconds (e.g. {need:d}) or max_seconds=None for no limit")


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
        (``rows`` random rows) or ``"refused"`` (over the time limit or
        ``max_memory`` and ``sample=False``, or not even a sample fits).
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
    max_seconds : float or None
        The caller's time limit (None: none, only an absurd prediction,
        above :data:`UNLIMITED_CEILING`, is refused).
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
    max_seconds: float | None
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
        return ("counting every row needs more time or memory than the limits given: a larger "
                "max_seconds or max_memory would resolve it")

    @property
    def smallest_resolvable(self) -> float:
        """The smallest triangle count the full computation could resolve: 2 x 1.96 ``std_full``."""
        return 2 * Z95 * self.std_full


def _check_memory(max_memory: Any) -> int:
    if max_memory is None:
        return _memory.available_memory() // 2
    if isinstance(max_memory, bool) or not isinstance(max_memory, numbers.Integral) or max_memory <= 0:
        raise ValueError(f"max_memory must be None or a positive number of bytes, got {max_memory!r}")
    return int(max_memory)


def _sample_std(std_full: float, vmin: float, n: int, k: int) -> float:
    """Predicted std with k of n rows sampled (noise part of a row's variance, see the module notes)."""
    if k >= n:
        return std_full
    row_var = vmin**3 * math.comb(n, 3) / (3.0 * (n - 1))  # variance of one row's t^_i / 3
    return math.sqrt(std_full**2 + n * n * (1 - k / n) / k * row_var)


def _max_rows(counter: TriangleCounter, path: str, limit: float, memory: int) -> int:
    """Largest k whose sampled pass on ``path`` fits the time limit and the memory (0 if none)."""
    n = counter.n
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi + 1) // 2
        c = counter.cost(path, mid)
        if c.seconds <= limit and c.bytes <= memory:
            lo = mid
        else:
            hi = mid - 1
    return lo


def triangle_plan(R: Any, max_seconds: float | None = None, max_memory: int | None = None,
                  sample: bool = True, counter: TriangleCounter | None = None) -> TrianglePlan:
    """Predict the std, cost and plausible range of a triangle computation, and decide.

    Parameters
    ----------
    R : PrivateGraph
        An undirected release.
    max_seconds : float or None, default None
        Wall-clock seconds the counting pass may take, compared with the
        operation-count model (numba on 2 cores, scaled by numba's threads;
        nothing is timed now).  None: the enclosing :func:`time_limit`, else
        no limit (a prediction above :data:`UNLIMITED_CEILING` is refused).
    max_memory : int or None, default None
        Bytes the pass may allocate; None is half the memory available now.
    sample : bool, default True
        Over the limit, sample rows (True) or refuse (False).
    counter : TriangleCounter, optional
        A prepared counter of ``R`` (its degrees are read once).

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
    limit, given = limit_seconds(max_seconds)
    memory = _check_memory(max_memory)
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
    return _decide(counter, (n, m_hat, m_hi, tmax, vmin, std_full), limit, given, memory, sample)


def _decide(counter: TriangleCounter, stats: tuple, limit: float, given: bool, memory: int,
            sample: bool) -> TrianglePlan:
    """The decision of :func:`triangle_plan` for the counter's cost model."""
    n, m_hat, m_hi, tmax, vmin, std_full = stats
    costs = [counter.cost(p) for p in counter.paths()]
    fits = [c for c in costs if c.bytes <= memory]
    full = min(fits or costs, key=lambda c: c.seconds)
    base = dict(n=n, edges=m_hat, edges_high=m_hi, plausible_max=float(tmax), std_full=std_full,
                full=full, max_seconds=limit if given else None, max_memory=memory)
    could = (f"the full computation ({full.path} path, about {_secs(full.seconds)} and "
             f"{_memory.size_text(full.bytes)}) has a std of at least {std_full:,.4g}")
    beyond = (f"more than the largest triangle count a graph with at most {m_hi:,.0f} edges "
              f"can have ({tmax:,.4g})")
    unresolvable = "not resolvable at this epsilon, answered without counting"
    if full.bytes <= memory and full.seconds <= limit:
        if std_full > tmax:
            reason = f"{could}, {beyond}: {unresolvable}"
        else:
            reason = f"every row counted ({full.path} path, about {_secs(full.seconds)})"
        return TrianglePlan("full", std_full <= tmax, std=std_full, cost=full, rows=None,
                            reason=reason, **base)
    slow, big = full.seconds > limit, full.bytes > memory
    need = max(1, math.ceil(full.seconds * 1.5))
    exceeded = ([f"max_seconds={limit:g}" if given else
                 f"the {_secs(UNLIMITED_CEILING)} a call runs without max_seconds"] if slow else []) \
        + ([f"max_memory={_memory.size_text(memory)}"] if big else [])
    over = (f"{could}; it exceeds {' and '.join(exceeded)}, and could resolve counts from "
            f"{2 * Z95 * std_full:,.4g} up")
    allow = " or ".join(([f"max_seconds={need:d} or more"] if slow else [])
                        + (["a larger max_memory"] if big else []))
    k, path = max((_max_rows(counter, p, limit, memory), p) for p in counter.paths())
    if std_full > tmax:
        reason = f"{could}, {beyond}: {unresolvable}"
    elif not sample:
        reason = f"{over}; refused (pass sample=True, or {allow})"
    elif k < MIN_ROWS:
        where = (f", or run it where {_memory.size_text(full.bytes)} is free: max_memory "
                 "defaults to half the memory available") if big else ""
        reason = f"{over}; not even {MIN_ROWS} sampled rows fit: refused (pass {allow}{where})"
    if not sample or k < MIN_ROWS:
        return TrianglePlan("refused", std_full <= tmax, std=std_full, cost=None, rows=None,
                            reason=reason, **base)
    std_k = _sample_std(std_full, vmin, n, k)
    cost = counter.cost(path, k)
    if std_full > tmax:
        pass
    elif std_k > tmax:
        reason = (f"{over}; a sample of {k:,} rows within the limit would have a std of at least "
                  f"{std_k:,.4g}, {beyond}: not resolvable within the limit, answered without "
                  "counting")
    else:
        reason = (f"{over}; estimated from {k:,} of {n:,} rows ({path} path, about "
                  f"{_secs(cost.seconds)}), a simple random sample drawn with public randomness: "
                  f"unbiased, std at least {std_k:,.4g} instead of {std_full:,.4g}")
    return TrianglePlan("sampled", std_k <= tmax, std=std_k, cost=cost, rows=k, reason=reason,
                        **base)
