"""Statistical privacy audits: can an observer tell neighbouring inputs apart?

A mechanism M is eps-DP when, for every pair of neighbouring inputs D, D' and
every set E of outputs, P[M(D) in E] <= e^eps P[M(D') in E].  The neighbour
audit (the method of Google's DP auditing tools and of DP-Sniper) runs M many
times on D and on D', estimates p1 = P[M(D) in E] and p2 = P[M(D') in E] with
exact Clopper-Pearson confidence bounds, and reports

    eps_LB = ln( LCB(p1) / UCB(p2) ),     eps_UB = ln( UCB(p1) / LCB(p2) ).

eps_LB is a high-confidence *lower bound on the privacy loss* of the
mechanism: if eps_LB > eps, the claim "eps-DP" is refuted at confidence
1 - alpha.  An audit can refute a privacy claim, never prove one; the proof
for dpgraph is the exact certification of its probabilities
(:mod:`dpgraph.core.probabilities`).  The audit's job is to catch the bugs the
certificate cannot see: a sampler that does not use the certified
probabilities, randomness reused across pairs or releases, a wrong epsilon.

The event E is chosen without peeking at the data it is judged on: a first,
smaller *search* sample ranks the outputs by their empirical likelihood ratio
and picks the level set with the best lower bound (the Neyman-Pearson form
of the most revealing event); a fresh, independent sample then estimates p1
and p2 for that fixed event.  Each of the four one-sided bounds holds with
probability 1 - alpha/2, so eps_LB <= true loss and eps_UB >= true log-ratio
of E each hold with probability at least 1 - alpha.

Mechanisms are plugged in as *samplers*: ``sampler(D, epsilon, n, source)``
returns ``n`` independent outputs of the mechanism on ``D`` as integer
outcome codes.  :func:`graph_sampler` and :func:`mechanism_sampler` turn a
release function (the library's own or a deliberately broken one) into a
sampler, so the same audit judges both.

Examples
--------
>>> import networkx as nx
>>> G = nx.path_graph(3)                      # pairs (0,1), (0,2), (1,2)
>>> H = G.copy(); H.remove_edge(0, 1)         # neighbour: differs in one pair
>>> res = neighbour_audit(graph_sampler(copies=100), G, H, epsilon=1.0,
...                       n=5_000, n_search=1_000, seed=0)
>>> res.passed, res.eps_lower <= 1.0 <= res.eps_upper
(True, True)
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import networkx as nx
import numpy as np
from scipy import stats

from .core import MechanismE, RandomSource, RRProbabilities, SecureRandom, Universe
from .graph import PackedWords, canonical_node_order

__all__ = [
    "AuditResult",
    "Sampler",
    "clopper_pearson",
    "graph_pairs",
    "graph_pmf",
    "graph_sampler",
    "histogram_test",
    "log_ratio_bounds",
    "mechanism_pmf",
    "mechanism_sampler",
    "neighbour_audit",
    "select_event",
]

#: ``sampler(D, epsilon, n, source) -> np.ndarray`` of ``n`` int outcome codes.
Sampler = Callable[[Any, float, int, RandomSource], np.ndarray]

DEFAULT_ALPHA = 1e-6


# ---------------------------------------------------------------------------
# Confidence bounds
# ---------------------------------------------------------------------------
def clopper_pearson(k: int, n: int, alpha: float = DEFAULT_ALPHA) -> tuple[float, float]:
    """Exact two-sided Clopper-Pearson interval for a binomial proportion.

    Each side holds with probability at least 1 - alpha/2.

    Parameters
    ----------
    k : int
        Successes, 0 <= k <= n.
    n : int
        Trials, n >= 1.
    alpha : float
        Total error probability of the two-sided interval.

    Returns
    -------
    (lower, upper) : tuple of float

    Examples
    --------
    >>> lo, hi = clopper_pearson(50, 100, alpha=0.05)
    >>> round(lo, 4), round(hi, 4)
    (0.3983, 0.6017)
    >>> clopper_pearson(0, 10)[0], clopper_pearson(10, 10)[1]
    (0.0, 1.0)
    """
    k, n = int(k), int(n)
    if n < 1 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n and n >= 1, got k={k}, n={n}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    lo = 0.0 if k == 0 else float(stats.beta.ppf(alpha / 2, k, n - k + 1))
    hi = 1.0 if k == n else float(stats.beta.ppf(1 - alpha / 2, k + 1, n - k))
    return lo, hi


def log_ratio_bounds(
    k1: int, n1: int, k2: int, n2: int, alpha: float = DEFAULT_ALPHA
) -> tuple[float, float, float]:
    """(eps_LB, point estimate, eps_UB) for ln(p1 / p2) from two binomial samples.

    eps_LB = ln(LCB(p1) / UCB(p2)) and eps_UB = ln(UCB(p1) / LCB(p2)), with
    Clopper-Pearson bounds at ``alpha``.  Infinite when a bound is 0.

    Examples
    --------
    >>> lb, est, ub = log_ratio_bounds(73106, 100_000, 26894, 100_000)
    >>> round(est, 3), round(lb, 3), round(ub, 3)
    (1.0, 0.965, 1.035)
    """
    lo1, hi1 = clopper_pearson(k1, n1, alpha)
    lo2, hi2 = clopper_pearson(k2, n2, alpha)

    def ln_ratio(a: float, b: float) -> float:
        if a <= 0:
            return -math.inf
        if b <= 0:
            return math.inf
        return math.log(a / b)

    est = ln_ratio(k1 / n1, k2 / n2) if (k1 or k2) else math.nan
    return ln_ratio(lo1, hi2), est, ln_ratio(hi1, lo2)


# ---------------------------------------------------------------------------
# The audit
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class AuditResult:
    """Outcome of a neighbour audit.

    Attributes
    ----------
    epsilon : float
        The privacy level the mechanism claims.
    eps_lower : float
        eps_LB: with probability >= 1 - alpha the mechanism's privacy loss is
        at least this.  The audit *refutes* the claim when eps_lower > epsilon.
    eps_hat : float
        Plug-in estimate ln(p1_hat / p2_hat) of the event's log-ratio.
    eps_upper : float
        Upper confidence bound on the event's log-ratio.
    event : tuple of int
        The outcome codes forming the audited event E.
    reversed : bool
        False: ratio P[M(D) in E] / P[M(D') in E]; True: the other way round.
    k1, n1, k2, n2 : int
        Hits and runs of the event on the numerator and denominator sides.
    alpha : float
        Error probability of each two-sided Clopper-Pearson interval.
    """

    epsilon: float
    eps_lower: float
    eps_hat: float
    eps_upper: float
    event: tuple
    reversed: bool
    k1: int
    n1: int
    k2: int
    n2: int
    alpha: float

    @property
    def passed(self) -> bool:
        """True when the audit finds no evidence against eps-DP (eps_LB <= epsilon)."""
        return bool(self.eps_lower <= self.epsilon)

    @property
    def half_width(self) -> float:
        """Half the width of [eps_LB, eps_UB] (about 0.035 at eps = 1, n = 10^5)."""
        return (self.eps_upper - self.eps_lower) / 2

    def __str__(self) -> str:
        verdict = "pass" if self.passed else "VIOLATION"
        side = "D'/D" if self.reversed else "D/D'"
        return (
            f"eps={self.epsilon:g}: eps_LB={self.eps_lower:.4f} eps_hat={self.eps_hat:.4f} "
            f"eps_UB={self.eps_upper:.4f} [{verdict}] event={list(self.event)} ({side}) "
            f"p1={self.k1}/{self.n1} p2={self.k2}/{self.n2} alpha={self.alpha:g}"
        )


def _counts(codes: np.ndarray, outcomes: np.ndarray) -> np.ndarray:
    pos = np.searchsorted(outcomes, codes)
    return np.bincount(pos, minlength=outcomes.size)


def select_event(
    codes1: np.ndarray, codes2: np.ndarray, alpha: float = DEFAULT_ALPHA
) -> tuple[tuple, bool]:
    """Pick the output event that best separates two samples of outcome codes.

    Candidate events are the likelihood-ratio level sets in both directions:
    sort the observed outcomes by (c1 + 1/2) / (c2 + 1/2) (or its inverse)
    and take every prefix.  By Neyman-Pearson these contain the most
    revealing event of the true distributions.  The candidate with the
    largest eps_LB on *these* samples wins; judge it on fresh samples.

    Returns
    -------
    (event, reversed) : (tuple of int, bool)

    Examples
    --------
    >>> select_event(np.array([1, 1, 1, 0]), np.array([0, 0, 0, 1]), alpha=0.5)
    ((1,), False)
    """
    codes1 = np.asarray(codes1, dtype=np.int64)
    codes2 = np.asarray(codes2, dtype=np.int64)
    outcomes = np.union1d(codes1, codes2)
    c1, c2 = _counts(codes1, outcomes), _counts(codes2, outcomes)
    n1, n2 = codes1.size, codes2.size
    best = (-math.inf, (int(outcomes[0]),), False)
    for rev, (a, na, b, nb) in ((False, (c1, n1, c2, n2)), (True, (c2, n2, c1, n1))):
        order = np.argsort(-(a + 0.5) / (b + 0.5), kind="stable")
        ka, kb = np.cumsum(a[order]), np.cumsum(b[order])
        for size in range(1, max(2, outcomes.size)):
            if size > outcomes.size:
                break
            lb = log_ratio_bounds(int(ka[size - 1]), na, int(kb[size - 1]), nb, alpha)[0]
            if lb > best[0]:
                best = (lb, tuple(int(x) for x in np.sort(outcomes[order[:size]])), rev)
    return best[1], best[2]


def _audit_sources(seed: int) -> list[RandomSource]:
    key = hashlib.sha256(b"dpgraph-audit" + str(int(seed)).encode()).digest()[:16]
    root = SecureRandom(key=key)
    return [root.substream(stage, side) for stage in (0, 1) for side in (0, 1)]


def neighbour_audit(
    sampler: Sampler,
    D1: Any,
    D2: Any,
    epsilon: float,
    *,
    n: int = 100_000,
    n_search: int = 10_000,
    event: Iterable[int] | None = None,
    alpha: float = DEFAULT_ALPHA,
    seed: int = 0,
) -> AuditResult:
    """Audit a mechanism's eps-DP claim on one pair of neighbouring inputs.

    Parameters
    ----------
    sampler : callable
        ``sampler(D, epsilon, n, source)`` -> ``n`` outcome codes of
        independent runs on ``D``; see :func:`graph_sampler`,
        :func:`mechanism_sampler`.
    D1, D2 : Any
        Neighbouring inputs (graphs differing in one vertex pair, databases
        differing in one row).
    epsilon : float
        The claimed privacy level, passed to the sampler.
    n : int, default 100_000
        Runs per side used to judge the event.
    n_search : int, default 10_000
        Extra runs per side used only to choose the event (ignored when
        ``event`` is given).
    event : iterable of int, optional
        A fixed event (set of outcome codes); both directions are judged and
        the larger eps_LB reported (total error <= 2 alpha).
    alpha : float, default 1e-6
        Error probability of each Clopper-Pearson interval.
    seed : int, default 0
        Makes the audit reproducible: the runs draw from keyed AES-CTR streams
        derived from it (the mechanism's sampling code is unchanged).

    Returns
    -------
    AuditResult
    """
    if n < 1 or n_search < 1:
        raise ValueError("n and n_search must be >= 1")
    src = _audit_sources(seed)
    if event is None:
        s1 = np.asarray(sampler(D1, epsilon, int(n_search), src[0]))
        s2 = np.asarray(sampler(D2, epsilon, int(n_search), src[1]))
        ev, rev = select_event(s1, s2, alpha)
        directions = [rev]
    else:
        ev = tuple(sorted(int(x) for x in event))
        directions = [False, True]
    y1 = np.asarray(sampler(D1, epsilon, int(n), src[2]))
    y2 = np.asarray(sampler(D2, epsilon, int(n), src[3]))
    if y1.shape != (n,) or y2.shape != (n,):
        raise ValueError("the sampler must return one outcome code per run")
    h1 = int(np.isin(y1, ev).sum())
    h2 = int(np.isin(y2, ev).sum())
    results = []
    for rev in directions:
        k1, k2 = (h2, h1) if rev else (h1, h2)
        lb, est, ub = log_ratio_bounds(k1, n, k2, n, alpha)
        results.append(AuditResult(float(epsilon), lb, est, ub, ev, rev, k1, n, k2, n, alpha))
    return max(results, key=lambda r: r.eps_lower)


# ---------------------------------------------------------------------------
# Samplers: turn release functions into outcome codes
# ---------------------------------------------------------------------------
def graph_pairs(n: int, directed: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Canonical positions (rows, cols) of the vertex pairs of an n-node graph.

    Bit k of a graph outcome code is the released value of pair k.

    Examples
    --------
    >>> [a.tolist() for a in graph_pairs(3)]
    [[0, 0, 1], [1, 2, 2]]
    """
    i, j = np.nonzero(~np.eye(n, dtype=bool)) if directed else np.triu_indices(n, 1)
    return i.astype(np.int64), j.astype(np.int64)


def _released_bits(R: Any, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Released values of pairs (rows[k], cols[k]) of a PrivateGraph-like object."""
    adj = R.adjacency
    words = adj.words if isinstance(adj, PackedWords) else None
    if isinstance(words, np.ndarray) and words.dtype == np.uint64 and words.ndim == 2:
        w = words[rows, cols >> 6]
        return ((w >> (cols & 63).astype(np.uint64)) & np.uint64(1)).astype(bool)
    A = R.to_scipy_sparse("csr")  # any other backend: the public route
    return np.asarray(A[rows, cols]).ravel() != 0


def _codes(bits: np.ndarray) -> np.ndarray:
    weights = np.left_shift(np.int64(1), np.arange(bits.shape[-1], dtype=np.int64))
    return bits.astype(np.int64) @ weights


def graph_sampler(release: Callable | None = None, *, copies: int = 1) -> Sampler:
    """A sampler running a graph release function; outcomes coded over vertex pairs.

    Parameters
    ----------
    release : callable, optional
        ``release(G, epsilon, seed=source)`` returning a PrivateGraph-like
        object (called with ``directed=True`` too for a DiGraph); defaults
        to :func:`dpgraph.release`.
    copies : int, default 1
        1 calls ``release`` once per run: the most literal audit.  ``copies``
        > 1 releases the disjoint union of that many relabelled copies of G
        in one call and reads one run off each copy.  That is the same public
        code path on a larger graph and is many times faster, but it only
        observes randomness *within* one release; bugs that repeat randomness
        *across* releases (a reused seed) need ``copies=1``.

    Returns
    -------
    Sampler
        For an n-node G, bit k of a code is the released value of the k-th
        pair of :func:`graph_pairs` in the canonical node order.
    """
    if release is None:
        from .graph import release as release
    if isinstance(copies, bool) or not isinstance(copies, int) or copies < 1:
        raise ValueError("copies must be an integer >= 1")
    unions: dict[int, tuple[Any, Any]] = {}

    def sampler(G: Any, epsilon: float, n: int, source: RandomSource) -> np.ndarray:
        nodes = canonical_node_order(G.nodes())
        nv = len(nodes)
        rows, cols = graph_pairs(nv, G.is_directed())
        opt = {"directed": True} if G.is_directed() else {}
        out = np.empty(n, dtype=np.int64)
        if copies == 1:
            for k in range(n):
                R = release(G, epsilon, seed=source, **opt)
                out[k] = _codes(_released_bits(R, rows, cols)[None, :])[0]
            return out
        key = id(G)
        if key not in unions or unions[key][0] is not G:
            pos = {v: i for i, v in enumerate(nodes)}
            big = nx.DiGraph() if G.is_directed() else nx.Graph()
            big.add_nodes_from(range(copies * nv))
            e = np.array([(pos[u], pos[v]) for u, v in G.edges()], dtype=np.int64).reshape(-1, 2)
            shift = (np.arange(copies, dtype=np.int64) * nv)[:, None, None]
            big.add_edges_from((e[None, :, :] + shift).reshape(-1, 2).tolist())
            unions[key] = (G, big)
        big = unions[key][1]
        base = (np.arange(copies, dtype=np.int64) * nv)[:, None]
        brows, bcols = (base + rows[None, :]).ravel(), (base + cols[None, :]).ravel()
        done = 0
        while done < n:
            R = release(big, epsilon, seed=source, **opt)
            bits = _released_bits(R, brows, bcols).reshape(copies, rows.size)
            take = min(copies, n - done)
            out[done : done + take] = _codes(bits[:take])
            done += take
        return out

    return sampler


def mechanism_sampler(
    universe: Universe, release: Callable | None = None, *, copies: int = 1
) -> Sampler:
    """A sampler running a K-ary release on a database of labels.

    Parameters
    ----------
    universe : Universe
    release : callable, optional
        ``release(X, epsilon, seed=source)`` returning released labels;
        defaults to :class:`dpgraph.core.MechanismE` on ``universe``.
    copies : int, default 1
        Runs per call: > 1 releases ``copies`` stacked copies of the
        database at once (rows are released independently, so each copy is
        one run); 1 calls the release once per run.

    Returns
    -------
    Sampler
        The code of a release Y of an n-row database is sum_i idx(Y_i) K^i.
    """
    if release is None:
        cache: dict[float, MechanismE] = {}

        def release(X: Any, epsilon: float, seed: Any = None) -> np.ndarray:
            if epsilon not in cache:
                cache[epsilon] = MechanismE(universe, epsilon)
            return cache[epsilon].release(X, seed=seed)

    K = universe.K

    def sampler(X: Any, epsilon: float, n: int, source: RandomSource) -> np.ndarray:
        X = np.asarray(X)
        weights = K ** np.arange(X.size, dtype=np.int64)
        if K ** X.size >= 2**62:
            raise ValueError("database too large to code every outcome in an int64")
        out = np.empty(n, dtype=np.int64)
        if copies == 1:
            for k in range(n):
                out[k] = universe.encode(release(X, epsilon, seed=source)).ravel() @ weights
            return out
        done = 0
        stacked = np.tile(X.ravel(), copies)
        while done < n:
            idx = universe.encode(release(stacked, epsilon, seed=source)).reshape(copies, -1)
            take = min(copies, n - done)
            out[done : done + take] = idx[:take] @ weights
            done += take
        return out

    return sampler


# ---------------------------------------------------------------------------
# Exact output distributions and the histogram test
# ---------------------------------------------------------------------------
def graph_pmf(G: Any, rr: RRProbabilities) -> np.ndarray:
    """Exact pmf over the 2^pairs outcome codes of a release of small G.

    Computed from the exact dyadic flip probability with Fractions, returned
    as floats (index = outcome code of :func:`graph_sampler`).

    Examples
    --------
    >>> from dpgraph.core.probabilities import rr_probabilities
    >>> p = graph_pmf(nx.path_graph(3), rr_probabilities(1.0))
    >>> p.size, round(float(p.sum()), 12)
    (8, 1.0)
    """
    nodes = canonical_node_order(G.nodes())
    rows, cols = graph_pairs(len(nodes), G.is_directed())
    if rows.size > 16:
        raise ValueError("graph_pmf enumerates every outcome; use graphs with <= 16 pairs")
    truth = np.array([G.has_edge(nodes[a], nodes[b]) for a, b in zip(rows, cols)], dtype=np.int64)
    x = int(_codes(truth[None, :])[0])
    flip, keep = rr.flip_fraction, 1 - rr.flip_fraction
    probs = []
    for code in range(1 << rows.size):
        d = (code ^ x).bit_count()
        probs.append(flip**d * keep ** (rows.size - d))
    assert sum(probs) == 1
    return np.array([float(p) for p in probs])


def mechanism_pmf(X: Sequence[Hashable], universe: Universe, rr: RRProbabilities) -> np.ndarray:
    """Exact pmf over the K^n outcome codes of mechanism E on a tiny database.

    Examples
    --------
    >>> from dpgraph.core.probabilities import rr_probabilities
    >>> p = mechanism_pmf([1, 2], Universe([1, 2, 3]), rr_probabilities(1.0, 3))
    >>> p.size, round(float(p.sum()), 12)
    (9, 1.0)
    """
    idx = universe.encode(np.asarray(X)).ravel()
    K, n = universe.K, idx.size
    if K**n > 1 << 16:
        raise ValueError("mechanism_pmf enumerates every outcome; keep K^n <= 65536")
    keep, move = rr.truth_fraction, rr.flip_fraction
    codes = np.arange(K**n)
    digits = (codes[:, None] // K ** np.arange(n)[None, :]) % K
    same = (digits == idx[None, :]).sum(axis=1)
    probs = [keep ** int(s) * move ** int(n - s) for s in same]
    assert sum(probs, Fraction(0)) == 1
    return np.array([float(p) for p in probs])


def histogram_test(codes: np.ndarray, pmf: np.ndarray, min_expected: float = 5.0) -> tuple[float, float]:
    """Chi-square goodness of fit of observed outcome codes to an exact pmf.

    Outcomes with expected count below ``min_expected`` are pooled into one
    bin (the chi-square approximation needs a few expected hits per bin);
    an observed code outside the support of ``pmf`` gives p-value 0.

    Returns
    -------
    (statistic, pvalue) : tuple of float

    Examples
    --------
    >>> codes = np.array([0] * 50 + [1] * 50)
    >>> round(histogram_test(codes, np.array([0.5, 0.5]))[1], 6)
    1.0
    """
    codes = np.asarray(codes, dtype=np.int64)
    pmf = np.asarray(pmf, dtype=float)
    if codes.size == 0:
        raise ValueError("codes is empty")
    if codes.min() < 0 or codes.max() >= pmf.size or np.any(pmf[codes] == 0):
        return math.inf, 0.0
    obs = np.bincount(codes, minlength=pmf.size).astype(float)
    exp = pmf * codes.size
    small = exp < min_expected
    if small.any():
        obs = np.append(obs[~small], obs[small].sum())
        exp = np.append(exp[~small], exp[small].sum())
        if exp[-1] == 0:
            obs, exp = obs[:-1], exp[:-1]
    if obs.size < 2:
        return 0.0, 1.0
    stat, p = stats.chisquare(obs, exp * obs.sum() / exp.sum())
    return float(stat), float(p)
