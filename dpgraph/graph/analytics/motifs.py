"""Triangles, wedges, transitivity and clustering from one release.

Products of debiased entries over distinct pairs are unbiased because the
pairs are released independently; everything reduces to the released degrees
and common-neighbour counts C = Y Y (see :func:`triangle_statistics`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...core.estimate import BoundInterval, Estimate
from ...core.estimators import count_estimate
from ..protocol import Release
from ._shared import (
    Z95,
    _block_rows,
    _cache,
    _dense_release,
    _entry_map,
    _observed_degrees,
    _released_pairs,
    _undirected,
    analytic,
    check_proper,
    finish,
    finish_ratio,
    progress_range,
)


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
        for the variances).
    node_triangles, node_wedges : numpy.ndarray
        Per-node unbiased estimates (triangles through v, C(deg v, 2)).
    node_linear : numpy.ndarray
        Per node i, sum over j of s_ij L^2_ij, the unbiased estimates of the
        linear Hoeffding terms of Var T^ over the pairs at i (twice the
        linear term when summed over i).
    """

    triangles: float
    wedges: float
    var_triangles: float
    var_wedges: float
    cov: float
    node_triangles: np.ndarray
    node_wedges: np.ndarray
    node_linear: np.ndarray | None = None


_USE_NUMBA = True  # tests switch it off to compare the numpy path


def _compiled_kernel():
    """The numba block kernel, or None (numba absent or switched off): numpy fallback."""
    if not _USE_NUMBA:
        return None
    try:
        from ._trikernel import block_terms
    except ImportError:  # pragma: no cover - numba is optional
        return None
    return block_terms


def triangle_statistics(R: Release, progress: bool | None = None) -> TriangleStatistics:
    """Triangles, wedges, their variances and per-node counts in one pass.

    Let Z = z0 + delta Y off the diagonal (delta = z1 - z0), U = Z o Z and
    S = v0 + (v1 - v0) Z, the unbiased estimate of each entry's variance.  With
    C = Y Y (common released neighbours) and released degrees, every product
    Z^2, U^2, UZ, S^2 has a closed form, e.g. for i != j

        (Z^2)_ij = (n-2) z0^2 + z0 delta (deg_i + deg_j - 2 Y_ij) + delta^2 C_ij.

    Variance of T^ (Hoeffding decomposition; every term unbiased):
    linear  sum_{i<j} S_ij L^2_ij  with L^2 = (Z^2)^2 - U^2 + Z^2 estimating the
    squared number of common neighbours; quadratic sum_{j<k} Z_jk (S^2)_jk;
    cubic trace(S^3) / 6.  Var W^ and Cov(T^, W^) likewise.  Cost: one n x n
    x n float32 product, in row blocks; memory about 3 n^2 float32.

    Parameters
    ----------
    progress : bool or None, default None
        Show a progress bar (tqdm) over the row blocks; None shows it for
        releases of 5,000 nodes or more when the error stream is a terminal.

    Raises
    ------
    ValueError
        For a directed release.
    MemoryError
        When the dense n x n release does not fit (the message gives the size).

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.karate_club_graph()
    >>> st = triangle_statistics(dpgraph.release(G, epsilon=4.0, seed=0))
    >>> round(st.var_triangles ** 0.5) > 0
    True
    """
    _undirected(R, "triangle counting")
    cache = _cache(R)
    if "tri" in cache:
        return cache["tri"]
    n = R.number_of_nodes()
    z0, z1 = _entry_map(R.channel)
    dl = z1 - z0
    u0, eps_u = z0 * z0, z1 * z1 - z0 * z0
    v0, v1 = R.channel.entry_variances()
    gam = v1 - v0
    w0, om = v0 + gam * z0, gam * dl
    Y = _dense_release(R)
    deg = Y.sum(axis=1, dtype=np.float64)
    D = (n - 1) * z0 + dl * deg  # row sums of Z
    Q = (n - 1) * u0 + eps_u * deg  # row sums of U
    tri = lin_t = quad_t = cub_t = lin_w = lin_c = 0.0
    node_t = np.zeros(n)
    node_lin = np.zeros(n)
    b = _block_rows(n)
    kernel = _compiled_kernel()
    for i0 in progress_range(0, n, b, progress, n, "triangles"):
        i1 = min(n, i0 + b)
        if kernel is not None:  # one compiled pass over the block
            terms = kernel(Y[i0:i1] @ Y, Y[i0:i1], i0, deg, D, Q, n, z0, dl, u0, eps_u, w0, om,
                           node_t, node_lin)
            tri, lin_t, quad_t, cub_t, lin_w, lin_c = (
                a + t for a, t in zip((tri, lin_t, quad_t, cub_t, lin_w, lin_c), terms))
            continue
        C = (Y[i0:i1] @ Y).astype(np.float64)
        Yb = Y[i0:i1].astype(np.float64)
        off = np.ones_like(Yb, dtype=bool)
        off[np.arange(i1 - i0), np.arange(i0, i1)] = False
        di = deg[i0:i1, None]
        dj = deg[None, :]
        ai = di - Yb  # sum_{k != i, j} Y_ik
        aj = dj - Yb  # sum_{k != i, j} Y_kj
        Z = np.where(off, z0 + dl * Yb, 0.0)
        U = np.where(off, u0 + eps_u * Yb, 0.0)
        Sv = np.where(off, w0 + om * Yb, 0.0)
        Z2 = np.where(off, (n - 2) * z0 * z0 + z0 * dl * (ai + aj) + dl * dl * C, 0.0)
        U2 = (n - 2) * u0 * u0 + u0 * eps_u * (ai + aj) + eps_u * eps_u * C
        UZ = (n - 2) * u0 * z0 + u0 * dl * aj + eps_u * z0 * ai + eps_u * dl * C
        ZU = (n - 2) * z0 * u0 + z0 * eps_u * aj + dl * u0 * ai + dl * eps_u * C
        S2 = (n - 2) * w0 * w0 + w0 * om * (ai + aj) + om * om * C
        ZZ = Z2 * Z
        tri += ZZ.sum()
        node_t[i0:i1] = 0.5 * ZZ.sum(axis=1)
        L2 = Z2 * Z2 - U2 + Z2
        SL = (Sv * L2).sum(axis=1)
        node_lin[i0:i1] = SL
        lin_t += SL.sum()
        quad_t += (Z * S2).sum()
        cub_t += (S2 * Sv).sum()
        Di = D[i0:i1, None] - Z
        Dj = D[None, :] - Z
        Qi = Q[i0:i1, None] - U
        Qj = Q[None, :] - U
        M2 = (Di + Dj) ** 2 - (Qi - Di) - (Qj - Dj)
        lin_w += (Sv * M2).sum()
        LM = Z2 * (Di + Dj) - UZ - ZU + 2 * Z2
        lin_c += (Sv * LM).sum()
    T = tri / 6.0
    node_w = 0.5 * (D * D - Q)
    W = float(node_w.sum())
    # pairs i<j are half the ordered off-diagonal sums
    lin_t, quad_t, lin_w, lin_c = lin_t / 2, quad_t / 2, lin_w / 2, lin_c / 2
    cub_t = cub_t / 6.0
    srow = (n - 1) * w0 + om * deg  # row sums of S
    s2row = (n - 1) * w0 * w0 + ((w0 + om) ** 2 - w0 * w0) * deg  # row sums of S o S
    quad_w = 0.5 * float(np.sum(srow * srow - s2row))
    var_t = max(lin_t + quad_t + cub_t, 0.0)
    var_w = max(lin_w + quad_w, 0.0)
    cov = lin_c + quad_t
    out = TriangleStatistics(float(T), W, float(var_t), float(var_w), float(cov), node_t, node_w,
                             node_lin)
    cache["tri"] = out
    return out


@analytic
def triangles(R: Release, proper: bool = True,
              progress: bool | None = None) -> Estimate:
    """Estimate of the number of triangles, unbiased for every input graph.

    T^ = sum over vertex triples of the product of the three debiased
    entries.  ``std`` is the square root of an unbiased estimate of the exact
    variance (``exact_std=False``); see :func:`triangle_statistics`.

    Parameters
    ----------
    proper : bool, default True
        Project the value onto [0, C(n, 3)] (interval centred on the unbiased
        count, clipped); False returns the unbiased count.
    progress : bool or None, default None
        Progress bar of the triangle pass (see :func:`triangle_statistics`).

    Returns
    -------
    Estimate
        The triangle count (unbiased, or projected), with an estimated std.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.karate_club_graph()
    >>> t = dpgraph.release(G, epsilon=4.0, seed=0).triangles()
    >>> abs(t.value - 45) < 4 * t.std
    True
    """
    return _motif_count(R, "triangles", 6, proper, progress)


@analytic
def wedges(R: Release, proper: bool = True,
           progress: bool | None = None) -> Estimate:
    """Estimate of the number of wedges (2-paths), sum_v C(deg v, 2), unbiased.

    Counted in the same pass as :func:`triangles` (see
    :func:`triangle_statistics`); ``std`` is likewise estimated from the release.

    Parameters
    ----------
    proper : bool, default True
        Project the value onto [0, n C(n - 1, 2)]; False returns the unbiased count.
    progress : bool or None, default None
        As in :func:`triangles`.

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
    return _motif_count(R, "wedges", 2, proper, progress)


def _motif_count(R: Release, name: str, divisor: int, proper: bool,
                 progress: bool | None) -> Estimate:
    """Count ``name`` of :class:`TriangleStatistics` with its estimated std.

    The feasible range is [0, n (n - 1) (n - 2) / divisor]: 6 for triangles
    (C(n, 3)), 2 for wedges (n C(n - 1, 2)).
    """
    st = triangle_statistics(R, progress)
    n = R.number_of_nodes()
    est = Estimate(getattr(st, name), float(np.sqrt(getattr(st, "var_" + name))),
                   exact_std=False, feasible_range=(0.0, n * (n - 1) * (n - 2) / divisor))
    return finish(est, proper, step=1.0)


@analytic
def transitivity(R: Release, proper: bool = True,
                 progress: bool | None = None) -> Estimate:
    """Transitivity 3 T / W with Fieller's interval, in [0, 1].

    3T^ and W^ are unbiased and jointly normal (sums over many independent
    pairs) with the unbiased (co)variance estimates of
    :func:`triangle_statistics`, so (3T^ - tau W^) / sd(3T^ - tau W^) is a
    standard normal pivot at the true tau: the interval is the set of tau in
    [0, 1] it does not reject (Fieller), exact in the normal limit whatever
    the size of W^ (where the delta method fails: small or noisy
    denominators).  When W^ is not significantly positive the interval is
    the whole of [0, 1] and ``resolved`` is False.

    Parameters
    ----------
    proper : bool, default True
        Value 3T^/W^ clipped to [0, 1] (the interval's midpoint when W^ <= 0);
        False returns the raw ratio (NaN when W^ <= 0, with ``resolved`` False).
    progress : bool or None, default None
        Progress bar of the triangle pass (see :func:`triangle_statistics`).

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
    st = triangle_statistics(R, progress)
    return finish_ratio(3.0 * st.triangles, st.wedges, 9.0 * st.var_triangles, st.var_wedges,
                        3.0 * st.cov, proper, 0.0, 1.0)


def local_clustering(R: Release) -> np.ndarray:
    """Plug-in local clustering coefficient of every node (biased, noisy).

    t^_v / w^_v with per-node unbiased triangle and wedge estimates, clipped to
    [0, 1] (0 where w^_v < 1).  Each coefficient is a ratio of two noisy sums
    over about n^2/2 and n pairs, so at small epsilon individual values are
    dominated by noise; use it for distributions only with care.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> c = local_clustering(dpgraph.release(nx.karate_club_graph(), epsilon=4.0, seed=0))
    >>> c.shape, bool(((0 <= c) & (c <= 1)).all())
    ((34,), True)
    """
    st = triangle_statistics(R)
    w = st.node_wedges
    c = np.where(w >= 1.0, st.node_triangles / np.maximum(w, 1.0), 0.0)
    return np.clip(c, 0.0, 1.0)


def _weighted_triangle_variance(R: Any, st: TriangleStatistics, w: np.ndarray) -> float:
    """Variance bound of sum_v w_v t^_v (weights fixed), from its Hoeffding terms.

    sum_v w_v t^_v = sum_{i<j<k} a_ijk Z_ij Z_jk Z_ik with a_ijk = w_i + w_j + w_k.
    Cubic term: vmax^3 sum a^2 (closed form in the power sums of w);
    quadratic: vmax^2 sum_{j<k} x_jk sum_{i != j,k} a_ijk^2, x replaced by the
    debiased Z (unbiased); linear: sum_{i<j} s_ij (sum_k a_ijk x_ik x_jk)^2,
    bounded through the per-node sums of s_ij L^2_ij with
    (w_i + w_j + wbar)^2 <= 2 w_i^2 + 2 w_j^2 + wbar^2 + 2 wbar (w_i + w_j).
    vmax = max(v0, v1) (exact for randomized response, an upper bound otherwise).
    """
    n = R.number_of_nodes()
    v0, v1 = R.channel.entry_variances()
    vmax = max(v0, v1)
    p1, p2 = float(w.sum()), float(np.sum(w * w))
    e2 = 0.5 * (p1 * p1 - p2)
    cubic = vmax**3 * ((n - 1) * (n - 2) / 2 * p2 + 2 * (n - 2) * e2)
    # f(j, k) = sum_{i != j, k} (w_i + w_j + w_k)^2
    #         = p2 - w_j^2 - w_k^2 + 2 p1 b + (n - 4) b^2,  b = w_j + w_k

    def f(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        s = a + b
        return p2 - a * a - b * b + 2 * p1 * s + (n - 4) * s * s

    full = n * n * p2 - 2 * n * p2 + 4 * n * p1 * p1 + (n - 4) * (2 * n * p2 + 2 * p1 * p1)
    diag = float(np.sum(f(w, w)))
    all_pairs = 0.5 * (full - diag)
    z0, z1 = _entry_map(R.channel)
    r, c = _released_pairs(R)
    quad = vmax**2 * max(z0 * all_pairs + (z1 - z0) * float(np.sum(f(w[r], w[c]))), 0.0)
    lam = np.maximum(st.node_linear, 0.0)
    wbar = p1 / n
    lin = 2 * float(np.sum(w * w * lam)) + 2 * wbar * float(np.sum(w * lam)) \
        + 0.5 * wbar * wbar * float(lam.sum())
    return float(cubic + quad + lin)


def _pair_weights(d: np.ndarray) -> np.ndarray:
    """1 / C(d, 2) for d >= 2, else 0."""
    d = np.asarray(d, dtype=float)
    return np.where(d >= 2, 2.0 / np.maximum(d * (d - 1), 2.0), 0.0)


@analytic
def average_clustering(R: Release, proper: bool = True,
                       progress: bool | None = None) -> Estimate:
    """Average local clustering (networkx's: nodes of degree < 2 count as 0), with bounds.

    C = (1/n) sum_v t_v / C(d_v, 2).  The per-node triangle counts t_v have
    unbiased estimates t^_v, but the denominators depend on the unknown
    degrees, which the release pins down only to within about
    +- 2 sqrt((n - 1) v) (v the entry variance): at small epsilon a node of
    degree 3 cannot be told from one of degree 30, and C is not identified
    by the release.  The interval is therefore a bound: with each degree
    inside its own 95% interval [d-_v, d+_v],

        L = (1/n) sum_v t_v / C(d+_v, 2)  <=  C  <=  U = (1/n) sum_v t_v / C(max(d-_v, 2), 2),

    and both are linear in the t_v, estimated without bias with a variance
    bound (:func:`_weighted_triangle_variance`); the interval is
    [L^ - 1.96 sd(L^), U^ + 1.96 sd(U^)] within [0, 1].  It is conservative
    (coverage above 95% where the degrees are uncertain) and is the whole
    of [0, 1] (``resolved`` False) where the release cannot resolve C.
    With ``proper`` the value is the interval's midpoint (of all points of a
    set the statistic is only known to lie in, the one with the smallest
    worst-case error); ``raw`` is the plug-in (1/n) sum_v t^_v / C(round(d^_v), 2),
    biased upwards where the degrees are noisy.  Prefer :func:`transitivity` as a
    global clustering number: it is identified and has an exact pivot.

    Parameters
    ----------
    proper : bool, default True
        The interval's midpoint as the value; False returns the plug-in itself.
    progress : bool or None, default None
        Progress bar of the triangle pass (see :func:`triangle_statistics`).

    Returns
    -------
    Estimate
        ``ci()`` is the bound above (at level 0.95 only); ``std`` its half-width / 1.96.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> a = dpgraph.release(nx.karate_club_graph(), epsilon=4.0, seed=0).average_clustering()
    >>> lo, hi = a.ci()
    >>> 0.0 <= lo <= a.value <= hi <= 1.0
    True
    """
    proper = check_proper(proper)
    st = triangle_statistics(R, progress)
    n = R.number_of_nodes()
    deg = count_estimate(_observed_degrees(R).astype(float), np.full(n, float(n - 1)), R.channel)
    d_hat = np.asarray(deg.value, dtype=float)
    half = Z95 * np.asarray(deg.std, dtype=float)
    d_lo = np.clip(np.ceil(d_hat - half), 0, n - 1)
    d_hi = np.clip(np.floor(d_hat + half), 0, n - 1)
    w_lo = _pair_weights(d_hi)
    w_hi = np.where(d_hi >= 2, _pair_weights(np.maximum(d_lo, 2)), 0.0)
    t = st.node_triangles
    L = float(w_lo @ t) / n
    U = float(w_hi @ t) / n
    sL = np.sqrt(_weighted_triangle_variance(R, st, w_lo)) / n
    sU = np.sqrt(_weighted_triangle_variance(R, st, w_hi)) / n
    rule = BoundInterval(L, sL, U, sU)
    lo, hi = rule(Z95, 0.0, 1.0)
    raw = float(_pair_weights(np.round(np.clip(d_hat, 0, n - 1))) @ t) / n
    std = (hi - lo) / (2 * Z95)
    value = 0.5 * (lo + hi) if proper else raw  # the midpoint minimises the worst-case error
    return Estimate(value, std, exact_std=False, feasible_range=(0.0, 1.0), proper=proper,
                    raw=raw, interval=rule)
