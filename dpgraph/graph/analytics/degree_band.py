"""A simultaneous confidence band for the degree histogram, through the exact channel.

The set.  For a histogram h, every expectation of the released degrees'
empirical distribution is linear in h: E F_n(y) = sum_d h(d) P(released <= y | d)
(:mod:`.degree_kernel`) and E mean(((y - c)/s)^k) = sum_d h(d) E[((Y - c)/s)^k | d].
The statistic (:class:`Statistic`) is the largest standardized deviation
between the observed values and these expectations, over F_n at ``_GRID``
released degrees (half at quantiles of the released degrees, half spread over
their distinct values, and the value just below the smallest; scale
sqrt(max(F_n (1 - F_n), ``_FLOOR``/n) / n)) and the first ``_MOMENTS`` moments
of (y - c)/s (c, s the observed mean and sd; scale: their sample sd / sqrt(n)).
The confidence set is

    C = { h >= 0, sum h = 1 :  every |observed - expected(h)| <= q scale }.

C is a polytope (the constraints are linear in h), so the smallest and largest
value of any tail mass P(D >= k) over C is a linear programme (HiGHS through
scipy); nothing is gridded.

The threshold.  q is the ``level`` quantile of the same statistic
computed on releases simulated through the exact
channel from the fitted histogram (post-processing: no privacy cost): each
simulated release draws a degree sequence of n nodes from the fit, then every
node's released degree from its own column of the kernel, and the statistic
is taken against that sequence's own histogram (the truth of the simulated
world).  Two released degrees share one vertex pair, which shifts every
degree together (the mean released degree varies twice as much as for
independent nodes); the simulation keeps this: a node's uniform is
Phi(sqrt(rho) W + sqrt(1 - rho) E_v), W common to all nodes, rho the
covariance of two released degrees (one pair's variance, beta (1 - beta))
over the node's variance.  The margins are exact.  The draws use a fixed
public seed.

Whenever the true histogram lies in C (probability ``level`` when the
simulation reproduces the statistic's law), every tail mass of the truth lies
between its smallest and largest value over C: the band is simultaneous over
all degrees.  The pmf band follows from the tail band (h(d) = S(d) - S(d+1)),
also simultaneous.  The tails are computed at every degree up to 6, then at
degrees 30% apart; between two computed degrees the band takes the outer of
its neighbours' bounds (a tail mass is monotone), so it only widens.
"""

from __future__ import annotations

import numpy as np

from .degree_fit import single_threaded
from .degree_kernel import DegreeKernel

_GRID = 64
_DRAWS = 200
_SEED = 8_675_309  # public: the simulated releases are post-processing
_CHUNK = 1 << 20  # simulated node draws per block (about 40 bytes each)
_SOLVER_TOL = 1e-6  # HiGHS meets constraints and optimality to ~1e-7
_MOMENTS = 3
_FLOOR = 10.0


def grid_points(y: np.ndarray, y0: int, k: int = _GRID) -> np.ndarray:
    """Released degrees at which the band's constraints are imposed (sorted, distinct).

    Half at quantiles of ``y``, half spread over its distinct values, and the
    value just below the smallest (where F_n = 0: no histogram may put mass
    on degrees whose released degrees would fall there); not below ``y0``.
    """
    ys = np.unique(y)
    if ys.size > k:
        levels = np.linspace(0.0, 1.0, k // 2 + 2)[1:-1]
        at_quantiles = np.quantile(y, levels, method="lower").astype(np.int64)
        spread = ys[np.linspace(0, ys.size - 1, k - k // 2).astype(np.int64)]
        ys = np.unique(np.concatenate([at_quantiles, spread]))
    below = ys[:1] - 1
    return np.concatenate([below[below >= y0], ys])


def _weights(F: np.ndarray, n: int) -> np.ndarray:
    return np.sqrt(np.maximum(F * (1.0 - F), _FLOOR / n))


def simulate(K: DegreeKernel, cdf: np.ndarray, seq: np.ndarray,
             rng: np.random.Generator) -> np.ndarray:
    """Released degrees of simulated releases: row b has true degrees ``seq[b]`` (B x n ints).

    Node v's released degree is its kernel column's quantile at
    Phi(sqrt(rho_v) W + sqrt(1 - rho_v) E_v), W shared by the release:
    exact margins, and the covariance beta (1 - beta) of two released degrees
    (their shared pair) to first order.
    """
    from scipy import special

    n, a, b = K.n, K.alpha, K.beta
    B = seq.shape[0]
    d = np.arange(cdf.shape[1])
    var = d * a * (1 - a) + (n - 1 - d) * b * (1 - b)
    rho = np.clip(b * (1 - b) / np.maximum(var, 1e-300), 0.0, 1.0)[seq]
    z = np.sqrt(rho) * rng.standard_normal((B, 1)) + np.sqrt(1.0 - rho) * rng.standard_normal(seq.shape)
    ny = cdf.shape[0]
    # every column shifted by twice its index: one sorted array (one copy of the kernel)
    flat = np.add(cdf.T, 2.0 * d[:, None], order="C").ravel()
    pos = np.searchsorted(flat, (special.ndtr(z) + 2.0 * seq).ravel()).reshape(seq.shape) - seq * ny
    return np.clip(pos, 0, ny - 1) + K.y0


class Statistic:
    """The distance between the released degrees and a histogram, as a vector of standardized
    deviations: the empirical distribution function at the grid points (scaled by
    sqrt(F (1 - F) / n), floored at 1 / n) and the first ``_MOMENTS`` moments of
    (y - c) / s (c, s: the observed mean and sd, fixed), each scaled by its sample
    sd / sqrt(n).  Every expectation is linear in the histogram: ``A @ h``.
    """

    def __init__(self, K: DegreeKernel, cdf: np.ndarray, y: np.ndarray) -> None:
        self.n = y.size
        self.g = grid_points(y, K.y0)
        self.c, self.s = float(np.mean(y)), max(float(np.std(y)), 1.0)
        z = (np.arange(K.y0, K.y1 + 1) - self.c) / self.s
        powers = np.array([z**k for k in range(1, _MOMENTS + 1)]).reshape(-1, z.size)
        self.A = np.vstack([cdf[self.g - K.y0], powers @ K.pmf])  # expectations: A @ h
        self.y0 = K.y0

    def features(self, sorted_y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(observed features, their scales) of samples of released degrees (rows sorted)."""
        Y = np.atleast_2d(sorted_y)
        F = np.stack([np.searchsorted(row, self.g, side="right") for row in Y]) / self.n
        z = (Y - self.c) / self.s
        powers = [z]
        for _ in range(_MOMENTS - 1):
            powers.append(powers[-1] * z)
        P = np.stack(powers[:_MOMENTS], axis=1)  # draws x moments x n
        scale = np.concatenate([_weights(F, self.n), np.maximum(P.std(axis=2), 1e-12)], axis=1)
        f, scale = np.concatenate([F, P.mean(axis=2)], axis=1), scale / np.sqrt(self.n)
        return (f[0], scale[0]) if np.ndim(sorted_y) == 1 else (f, scale)


def threshold(K: DegreeKernel, cdf: np.ndarray, h: np.ndarray, stat: Statistic,
              level: float, draws: int = _DRAWS) -> float:
    """The ``level`` quantile of max |features - A h_own| / scale over releases simulated
    from ``h`` (h_own: each simulated degree sequence's own histogram)."""
    n = K.n
    rng = np.random.default_rng(_SEED)
    J = h.size
    p = np.clip(h, 0.0, None) / np.clip(h, 0.0, None).sum()
    per = max(1, _CHUNK // n)
    stats = []
    for start in range(0, draws, per):
        seq = rng.choice(J, size=(min(per, draws - start), n), p=p)
        f, scale = stat.features(np.sort(simulate(K, cdf, seq, rng), axis=1))
        own = np.stack([np.bincount(row, minlength=J) for row in seq]) / n
        stats.extend(np.max(np.abs(f - own @ stat.A.T) / scale, axis=1).tolist())
    return float(np.quantile(stats, level, method="higher"))


def _tail_grid(dmax: int) -> np.ndarray:
    """Degrees at which the tail band is computed: 1 .. 6, then 30% apart, then dmax."""
    k = list(range(1, min(dmax, 6) + 1))
    while k[-1] < dmax:
        k.append(min(dmax, int(np.ceil(k[-1] * 1.3))))
    return np.asarray(k)


def tail_band(K: DegreeKernel, cdf: np.ndarray, y: np.ndarray, h: np.ndarray, level: float,
              edges: np.ndarray | None = None,
              draws: int = _DRAWS) -> tuple[np.ndarray, np.ndarray, dict]:
    """(lower, upper) of P(D >= k) for k = 0 .. dmax + 1 over the confidence set C, and a summary.

    ``edges`` (bins of true degrees, as :func:`~.degree_fit.degree_edges`): the
    programmes work on bin masses, each bin's kernel column taken as the
    midrange of its degrees' columns and every constraint widened by the
    largest half-range, so the set only grows; the tails are exact at the
    edges.  Default: every degree is a bin.
    """
    edges = np.arange(h.size + 1) if edges is None else np.asarray(edges)
    with single_threaded():
        return _tail_band(K, cdf, y, h, level, edges, draws)


def _tail_band(K: DegreeKernel, cdf: np.ndarray, y: np.ndarray, h: np.ndarray, level: float,
               edges: np.ndarray, draws: int) -> tuple[np.ndarray, np.ndarray, dict]:
    from scipy.optimize import Bounds, LinearConstraint, milp

    stat = Statistic(K, cdf, y)
    F, w = stat.features(np.sort(y))
    Phi_g = stat.A
    q = threshold(K, cdf, h, stat, level, draws)
    fit = float(np.max(np.abs(F - Phi_g @ h) / w))
    info = {"threshold": q, "fit_statistic": fit, "widened": False}
    hi_b = np.maximum.reduceat(Phi_g, edges[:-1], axis=1)
    lo_b = np.minimum.reduceat(Phi_g, edges[:-1], axis=1)
    Phi_g, slack = 0.5 * (hi_b + lo_b), 0.5 * (hi_b - lo_b).max(axis=1)
    J = Phi_g.shape[1]
    opts = {"presolve": False}
    sum_one = LinearConstraint(np.ones((1, J)), 1.0, 1.0)

    def solve(c, tol):
        cons = [LinearConstraint(Phi_g, F - tol - slack, F + tol + slack), sum_one]
        return milp(c, constraints=cons, bounds=Bounds(0.0, np.inf), options=opts)

    c = np.zeros(J)
    c[1:] = 1.0
    if solve(c, q * w).status != 0:
        # the data fall outside every histogram at this threshold (probability <= 1 - level):
        # widen by the smallest threshold any histogram reaches
        t = np.concatenate([np.zeros(J), [1.0]])
        A = np.hstack([np.vstack([Phi_g, -Phi_g]), -np.concatenate([w, w])[:, None]])
        rhs = np.concatenate([F + slack, slack - F])
        res = milp(t, constraints=[LinearConstraint(A, -np.inf, rhs),
                                   LinearConstraint(np.append(np.ones(J), 0.0)[None, :], 1.0, 1.0)],
                   bounds=Bounds(0.0, np.inf), options=opts)
        if res.x is None:  # no threshold the solver can certify: the band says nothing
            top = h.size
            lower, upper = np.zeros(top + 1), np.ones(top + 1)
            lower[0], upper[top] = 1.0, 0.0
            info.update(threshold=float("inf"), widened=True)
            return lower, upper, info
        q = q + float(res.x[-1])
        info.update(threshold=q, widened=True)
    tol = q * w
    dmax = h.size - 1
    ks = np.unique(edges[np.searchsorted(edges, _tail_grid(dmax))])  # snapped up to bin edges
    ks = ks[(ks >= 1) & (ks <= dmax)]
    lo_k, hi_k = np.zeros(ks.size), np.zeros(ks.size)
    for i, k in enumerate(ks):
        c = np.zeros(J)
        c[np.searchsorted(edges, k):] = 1.0
        r_lo, r_hi = solve(c, tol), solve(-c, tol)
        # outward by the solver's tolerance, so rounding never excludes a histogram of the set
        lo_k[i] = r_lo.fun - _SOLVER_TOL if r_lo.status == 0 else 0.0
        hi_k[i] = -r_hi.fun + _SOLVER_TOL if r_hi.status == 0 else 1.0
        if hi_k[i] <= 2 * _SOLVER_TOL:  # every larger tail is below this one: done
            hi_k[i:] = hi_k[i]
            break
    top = dmax + 1
    lower, upper = np.zeros(top + 1), np.zeros(top + 1)
    lower[0] = upper[0] = 1.0
    # between computed degrees: the next one's lower bound and the previous one's upper bound
    nxt = np.searchsorted(ks, np.arange(1, top + 1), side="left")
    prv = np.searchsorted(ks, np.arange(1, top + 1), side="right") - 1
    lower[1:] = np.where(nxt < ks.size, lo_k[np.minimum(nxt, ks.size - 1)], 0.0)
    upper[1:] = np.where(prv >= 0, hi_k[np.maximum(prv, 0)], 1.0)
    lower[top] = upper[top] = 0.0  # no true degree above the support
    lower, upper = np.clip(lower, 0.0, 1.0), np.clip(upper, 0.0, 1.0)
    upper = np.maximum(upper, lower)
    return lower, upper, info
