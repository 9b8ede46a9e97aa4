"""The interval of the average clustering: two valid sets, intersected.

networkx's average clustering is C = (1/n) sum_v t_v f(d_v), f(d) = 1 / C(d, 2)
(0 for d < 2).  The release gives unbiased per-node triangle counts t^_v but
pins each degree down only to +- 2 sqrt((n - 1) v), so C is identified only
as far as the release resolves how the triangles are spread over the
degrees.  Two sets contain C with probability >= 1 - alpha / 2 each; their
intersection (level >= 1 - alpha by the union bound) is the interval.

**Per-node bound** (narrow where every degree is resolved, e.g. dense
graphs): with each degree inside its own interval [d-_v, d+_v],
L = (1/n) sum_v t_v f(d+_v) <= C <= U = (1/n) sum_v t_v f(max(d-_v, 2)); L and U
are linear in the t_v, estimated without bias with a variance bound from the
Hoeffding terms of a weighted triangle sum (:func:`weighted_triangle_variance`).

**Identified set by degree** (narrow where the degrees are resolved only in
aggregate, e.g. sparse graphs of homogeneous degree at eps = 4): unknowns
N_d (nodes of degree d) and T_d (their triangles, T_d <= C(d, 2) N_d), C =
(1/n) sum_d T_d f(d).  The release estimates linear functionals of them
without bias: the number of nodes whose released degree S_v is <= s has mean
sum_d N_d P(S <= s | d) (S | d ~ Bin(d, alpha) + Bin(n - 1 - d, beta)); the
triangle mass at nodes whose released degree, the pairs of the triangle
excluded, is <= s,

    M_s = sum_v sum_{j<k} Z_vj Z_vk Z_jk 1{S_v - Y_vj - Y_vk <= s},

has mean sum_d T_d P(S' <= s | d) (S' | d ~ Bin(d - 2, alpha) + Bin(n - 1 - d, beta):
the indicator depends only on pairs outside the triangle, independent of
its three entries), and it is a closed form in each node's released degree
and the released edges inside, across and outside its released
neighbourhood.  With the triangle, wedge and edge totals, each within
z sd of its estimate (z of Bonferroni over the constraints), the smallest
and largest C over all (N, T) that satisfy them are two linear programs.
Coverage is at least the level whatever the graph; the set is conservative
by construction (it contains every C the constraints allow).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.optimize import linprog
from scipy.special import ndtr, ndtri
from scipy.stats import binom

from ...core.estimators import count_estimate

N_THRESHOLDS = 8  # released-degree thresholds of each kind of constraint


def pair_weights(d: np.ndarray) -> np.ndarray:
    """f(d) = 1 / C(d, 2) for d >= 2, else 0."""
    d = np.asarray(d, dtype=float)
    return np.where(d >= 2, 2.0 / np.maximum(d * (d - 1), 2.0), 0.0)


def weighted_triangle_variance(R: Any, st: Any, w: np.ndarray, Yw: np.ndarray) -> float:
    """Variance bound of sum_v w_v t^_v (weights fixed), from its Hoeffding terms.

    sum_v w_v t^_v = sum_{i<j<k} a_ijk Z_ij Z_jk Z_ik with a_ijk = w_i + w_j + w_k.
    Cubic term: vmax^3 sum a^2 (closed form in the power sums of w);
    quadratic: vmax^2 sum_{j<k} x_jk sum_{i != j,k} a_ijk^2, x replaced by the
    debiased Z (unbiased; its sum over released pairs from the degrees and
    ``Yw`` = Y w); linear: sum_{i<j} s_ij (sum_k a_ijk x_ik x_jk)^2, bounded
    through the per-node sums of s_ij L^2_ij with
    (w_i + w_j + wbar)^2 <= 2 w_i^2 + 2 w_j^2 + wbar^2 + 2 wbar (w_i + w_j).
    vmax = max(v0, v1) (exact for randomized response, an upper bound otherwise).
    """
    n = R.number_of_nodes()
    v0, v1 = R.channel.entry_variances()
    vmax = max(v0, v1)
    S = np.asarray(R.released_degrees(), dtype=float)
    p1, p2 = float(w.sum()), float(np.sum(w * w))
    e2 = 0.5 * (p1 * p1 - p2)
    cubic = vmax**3 * ((n - 1) * (n - 2) / 2 * p2 + 2 * (n - 2) * e2)

    def f(a: np.ndarray, b: np.ndarray) -> np.ndarray:  # sum_{i != j, k} (w_i + a + b)^2
        s = a + b
        return p2 - a * a - b * b + 2 * p1 * s + (n - 4) * s * s

    full = n * n * p2 - 2 * n * p2 + 4 * n * p1 * p1 + (n - 4) * (2 * n * p2 + 2 * p1 * p1)
    all_pairs = 0.5 * (full - float(np.sum(f(w, w))))
    m_rel = 0.5 * float(S.sum())
    released = (m_rel * p2 + (n - 5) * float(S @ (w * w)) + 2 * p1 * float(S @ w)
                + (n - 4) * float(w @ Yw))  # sum over released pairs of f(w_r, w_c)
    z0, z1 = (float(x) for x in R.channel.debias(np.array([0.0, 1.0])))
    quad = vmax**2 * max(z0 * all_pairs + (z1 - z0) * released, 0.0)
    lam = np.maximum(st.node_linear, 0.0)
    wbar = p1 / n
    lin = 2 * float(np.sum(w * w * lam)) + 2 * wbar * float(np.sum(w * lam)) \
        + 0.5 * wbar * wbar * float(lam.sum())
    return float(cubic + quad + lin)


def _z(level: float, k: int = 1) -> float:
    """Two-sided normal quantile at ``level``, Bonferroni over k statistics."""
    return float(ndtri(1 - (1 - level) / (2 * k)))


class ClusteringSets:
    """Everything the two sets need, computed once; :meth:`interval` solves for a level."""

    def __init__(self, R: Any, st: Any, red: np.ndarray, counter: Any) -> None:
        self.R = R
        self.n = n = R.number_of_nodes()
        ch = R.channel
        self.alpha, self.beta = float(ch.alpha), float(ch.beta)
        z0, z1 = (float(x) for x in ch.debias(np.array([0.0, 1.0])))
        v0, v1 = ch.entry_variances()
        self.S = S = np.asarray(R.released_degrees(), dtype=np.int64)
        Sf = S.astype(float)
        self.st = st
        self.t = st.node_triangles
        deg = count_estimate(Sf, np.full(n, float(n - 1)), ch)
        self.d_hat = np.asarray(deg.value, dtype=float)
        self.d_sd = np.asarray(deg.std, dtype=float)
        # per node: released edges inside, across and outside its released neighbourhood
        E1, N1 = red[:, 3].astype(float), red[:, 6].astype(float)
        m_rel = 0.5 * float(Sf.sum())
        e_in = 0.5 * E1
        e_cross = N1 - Sf - E1
        e_out = m_rel - Sf - e_in - e_cross
        dl = z1 - z0
        self.A = (z1 * z1 * (z0 * Sf * (Sf - 1) / 2 + dl * e_in),
                  z1 * z0 * (z0 * Sf * (n - 1 - Sf) + dl * e_cross),
                  z0 * z0 * (z0 * (n - 1 - Sf) * (n - 2 - Sf) / 2 + dl * e_out))
        N = R.number_of_pairs()
        m_hat = float(count_estimate(m_rel, N, ch).value)
        q = (self.alpha * (1 - self.alpha), self.beta * (1 - self.beta))
        self.var_mrel = max(N * q[1] + max(m_hat, 0.0) * (q[0] - q[1]), N * min(q))  # Var(m')
        self.common = z0 * z0 * dl  # coefficient of m' in each node's outside part
        self.sd_S = math.sqrt((n - 1) * max(v0, v1)) * (self.alpha - self.beta)
        # thresholds (from the observed released degrees), weights and their products with Y
        probs = np.linspace(0.05, 0.95, N_THRESHOLDS)
        self.sH = np.unique(np.quantile(S, probs).round().astype(np.int64))
        sM = np.unique(np.quantile(S, probs).round().astype(np.int64) - 2)
        self.sM = sM[sM >= 0]
        W = [(s >= S).astype(float) for s in self.sM]
        self._bound_levels: dict = {}
        self._W = W
        self._Ybound: dict = {}
        self.counter = counter
        self.Yw = counter.matmul(np.stack(W, axis=1)) if W else np.zeros((n, 0))
        self.rows = self._constraints(m_hat)

    # ------------------------------------------------------------------ per-node bound
    def bound(self, level: float) -> tuple[float, float]:
        """[L^ - z sd(L^), U^ + z sd(U^)] within [0, 1], degrees inside their ``level`` intervals."""
        n, z = self.n, _z(level)
        half = z * self.d_sd
        d_lo = np.clip(np.ceil(self.d_hat - half), 0, n - 1)
        d_hi = np.clip(np.floor(self.d_hat + half), 0, n - 1)
        w_lo = pair_weights(d_hi)
        w_hi = np.where(d_hi >= 2, pair_weights(np.maximum(d_lo, 2)), 0.0)
        key = round(level, 12)
        if key not in self._Ybound:
            self._Ybound[key] = self.counter.matmul(np.stack([w_lo, w_hi], axis=1))
        Y = self._Ybound[key]
        L, U = float(w_lo @ self.t) / n, float(w_hi @ self.t) / n
        sL = math.sqrt(weighted_triangle_variance(self.R, self.st, w_lo, Y[:, 0])) / n
        sU = math.sqrt(weighted_triangle_variance(self.R, self.st, w_hi, Y[:, 1])) / n
        # L, U lie in [0, 1]: |U^ - U| <= z sU implies U <= max(U^, 0) + z sU (never degenerate)
        return (float(np.clip(min(L, 1.0) - z * sL, 0, 1)),
                float(np.clip(max(U, 0.0) + z * sU, 0, 1)))

    # ------------------------------------------------------------------ identified set
    def _parts(self, g: Any) -> np.ndarray:
        S = self.S
        return self.A[0] * g(S - 2) + self.A[1] * g(S - 1) + self.A[2] * g(S)

    def _grid(self) -> np.ndarray:
        """Degrees the linear programs range over: every degree up to 200, then a grid."""
        n = self.n
        top = (self.S.max() - self.beta * (n - 1)) / (self.alpha - self.beta)
        dmax = int(min(n - 1, max(2.0, top + 6 * self.sd_S / (self.alpha - self.beta))))
        if dmax <= 400:
            return np.arange(dmax + 1)
        return np.unique(np.concatenate([np.arange(201), np.geomspace(200, dmax, 200).round()]
                                        ).astype(np.int64))

    def _cdf(self, grid: np.ndarray, shift: int, thresholds: np.ndarray) -> np.ndarray:
        """P(Bin(d - shift, alpha) + Bin(n - 1 - d, beta) <= s) for d in grid, s in thresholds."""
        n, a, b = self.n, self.alpha, self.beta
        out = np.zeros((grid.size, thresholds.size))
        smax = int(thresholds.max()) if thresholds.size else 0
        for i, d in enumerate(grid):
            if d < shift:
                continue
            k = int(d) - shift
            lo_a, hi_a = _window(k, a)
            lo_b, hi_b = _window(n - 1 - int(d), b)
            if lo_a + lo_b > smax:
                continue
            pa = binom.pmf(np.arange(lo_a, hi_a + 1), k, a)
            pb = binom.pmf(np.arange(lo_b, hi_b + 1), n - 1 - int(d), b)
            cdf = np.cumsum(np.convolve(pa, pb))  # support starts at lo_a + lo_b
            idx = thresholds - (lo_a + lo_b)
            out[i] = np.where(idx < 0, 0.0, cdf[np.clip(idx, 0, cdf.size - 1)])
        return out

    def _constraints(self, m_hat: float) -> list:
        """(kind, function on the grid, estimate, sd) of every constraint."""
        n, S, st = self.n, self.S, self.st
        self.grid = grid = self._grid()
        gf = grid.astype(float)
        rows = []
        hist = np.bincount(S, minlength=int(S.max()) + 3).astype(float)
        qmax = max(self.alpha * (1 - self.alpha), self.beta * (1 - self.beta))
        FH = self._cdf(grid, 0, self.sH)
        for j, s in enumerate(self.sH):
            H = float(np.sum(s >= S))
            local = float(hist[max(0, s - 2) : s + 3].mean())
            psi = local + 2 * math.sqrt(local + 1)  # nodes whose released degree can cross s
            rows.append(("N", FH[:, j], H, math.sqrt(H * (1 - H / n) + qmax * psi * psi)))
        FM = self._cdf(grid, 2, self.sM)
        whole = self.A[0] + self.A[1] + self.A[2]
        for j, s in enumerate(self.sM):
            def g(x: np.ndarray, s: int = int(s)) -> np.ndarray:
                return (x <= s).astype(float)

            mv = self._parts(g)
            w = self._W[j]
            jump = mv - w * whole  # where the pairs of the triangle move S_v across s
            F = _normal_cdf((s + 0.5 - (S - 1.0)) / max(self.sd_S, 1e-12))
            var = (weighted_triangle_variance(self.R, st, w, self.Yw[:, j]) + float(np.sum(jump**2))
                   + (self.common * float(w.sum())) ** 2 * self.var_mrel
                   + float(np.sum(self.t**2 * F * (1 - F))))
            rows.append(("T", FM[:, j], float(mv.sum()), math.sqrt(var)))
        rows.append(("T", np.where(grid >= 2, 1.0, 0.0), 3 * st.triangles, 3 * math.sqrt(st.var_triangles)))
        rows.append(("N", gf * (gf - 1) / 2, st.wedges, math.sqrt(st.var_wedges)))
        sd_m = math.sqrt(self.var_mrel) / (self.alpha - self.beta)
        rows.append(("N", gf, 2 * m_hat, 2 * sd_m))
        return rows

    def identified(self, level: float) -> tuple[float, float] | None:
        """min and max of C over the (N, T) the constraints allow at ``level`` (None: infeasible)."""
        grid, n = self.grid, self.n
        G = grid.size
        z = _z(level, len(self.rows))
        A_ub, b_ub = [], []
        for kind, phi, est, sd in self.rows:
            row = np.zeros(2 * G)
            row[(0 if kind == "N" else G) : (G if kind == "N" else 2 * G)] = phi
            scale = max(float(np.abs(phi).max()), 1e-300)
            A_ub += [row / scale, -row / scale]
            # every constrained functional is >= 0: |est - x| <= z sd implies x <= max(est, 0) + z sd
            b_ub += [(max(est, 0.0) + z * sd) / scale, -(est - z * sd) / scale]
        gf = grid.astype(float)
        cap = np.zeros((G, 2 * G))  # T_d <= C(d, 2) N_d
        cap[np.arange(G), G + np.arange(G)] = 1.0
        cap[np.arange(G), np.arange(G)] = -gf * (gf - 1) / 2
        A = np.vstack([np.array(A_ub), cap])
        b = np.concatenate([np.array(b_ub), np.zeros(G)])
        eq = np.concatenate([np.ones(G), np.zeros(G)])[None, :] / n
        obj = np.concatenate([np.zeros(G), pair_weights(gf) / n])
        bounds = [(0, None)] * G + [(0, 0) if d < 2 else (0, None) for d in grid]
        lo = linprog(obj, A, b, eq, [1.0], bounds=bounds, method="highs")
        hi = linprog(-obj, A, b, eq, [1.0], bounds=bounds, method="highs")
        if not (lo.success and hi.success):
            return None
        return float(np.clip(lo.fun, 0, 1)), float(np.clip(-hi.fun, 0, 1))

    def interval(self, level: float) -> tuple[float, float]:
        """The intersection of the two sets at level 1 - (1 - level) / 2 each."""
        each = 1 - (1 - level) / 2
        blo, bhi = self.bound(each)
        ident = self.identified(each)
        if ident is None:  # the constraints contradict each other at this level: the bound alone
            return blo, bhi
        lo, hi = max(blo, ident[0]), min(bhi, ident[1])
        if lo > hi:  # disjoint (each misses with probability <= (1 - level) / 2): their hull
            return min(blo, ident[0]), max(bhi, ident[1])
        return lo, hi


class LevelSets:
    """The interval rule of :func:`.motifs.average_clustering`: the sets at the level of ``z`` (cached)."""

    def __init__(self, sets: ClusteringSets) -> None:
        self.sets = sets
        self.done: dict = {}

    def __call__(self, z: float, low: float, high: float) -> tuple[float, float]:
        level = float(2 * ndtr(z) - 1)
        key = round(level, 12)
        if key not in self.done:
            self.done[key] = self.sets.interval(level)
        lo, hi = self.done[key]
        return float(np.clip(lo, low, high)), float(np.clip(hi, low, high))


def _window(k: int, p: float) -> tuple[int, int]:
    """Support of Bin(k, p) outside which the mass is negligible (12 sd)."""
    if k <= 0:
        return 0, 0
    sd = math.sqrt(k * p * (1 - p))
    return max(0, int(k * p - 12 * sd - 2)), min(k, int(k * p + 12 * sd + 2))


def _normal_cdf(x: np.ndarray) -> np.ndarray:
    return ndtr(x)
