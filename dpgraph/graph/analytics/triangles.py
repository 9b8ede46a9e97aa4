"""Triangles, wedges, transitivity and clustering from one release.

Products of debiased entries over distinct pairs are unbiased because the
pairs are released independently; everything reduces to the released degrees
and common-neighbour counts C = Y Y (see :func:`triangle_statistics`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ...core.estimators import Estimate
from ._shared import _block_rows, _cache, _dense_release, _entry_map, _entry_variances, _undirected

if TYPE_CHECKING:  # pragma: no cover
    from ..private import PrivateGraph



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
    """

    triangles: float
    wedges: float
    var_triangles: float
    var_wedges: float
    cov: float
    node_triangles: np.ndarray
    node_wedges: np.ndarray


def triangle_statistics(R: PrivateGraph) -> TriangleStatistics:
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
    v0, v1 = _entry_variances(R.channel)
    gam = v1 - v0
    w0, om = v0 + gam * z0, gam * dl
    Y = _dense_release(R)
    deg = Y.sum(axis=1, dtype=np.float64)
    D = (n - 1) * z0 + dl * deg  # row sums of Z
    Q = (n - 1) * u0 + eps_u * deg  # row sums of U
    tri = lin_t = quad_t = cub_t = lin_w = lin_c = 0.0
    node_t = np.zeros(n)
    b = _block_rows(n)
    for i0 in range(0, n, b):
        i1 = min(n, i0 + b)
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
        lin_t += (Sv * L2).sum()
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
    out = TriangleStatistics(float(T), W, float(var_t), float(var_w), float(cov), node_t, node_w)
    cache["tri"] = out
    return out


def triangles(R: PrivateGraph) -> Estimate:
    """Unbiased estimate of the number of triangles, for every input graph.

    T^ = sum over vertex triples of the product of the three debiased
    entries.  ``std`` is the square root of an unbiased estimate of the exact
    variance (``exact_std=False``); see :func:`triangle_statistics`.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.karate_club_graph()
    >>> t = dpgraph.release(G, epsilon=4.0, seed=0).triangles()
    >>> abs(t.value - 45) < 4 * t.std
    True
    """
    st = triangle_statistics(R)
    n = R.number_of_nodes()
    return Estimate(st.triangles, float(np.sqrt(st.var_triangles)), 0.0, n * (n - 1) * (n - 2) / 6,
                    exact_std=False)


def wedges(R: PrivateGraph) -> Estimate:
    """Unbiased estimate of the number of wedges (2-paths), sum_v C(deg v, 2).

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.karate_club_graph()
    >>> w = dpgraph.release(G, epsilon=4.0, seed=0).wedges()
    >>> truth = sum(d * (d - 1) // 2 for _, d in G.degree())
    >>> abs(w.value - truth) < 4 * w.std
    True
    """
    st = triangle_statistics(R)
    n = R.number_of_nodes()
    return Estimate(st.wedges, float(np.sqrt(st.var_wedges)), 0.0, n * (n - 1) * (n - 2) / 2,
                    exact_std=False)


def transitivity(R: PrivateGraph) -> Estimate:
    """Transitivity 3 T / W as a ratio of the unbiased estimates.

    ``std`` is the delta-method approximation
    tau sqrt(Var T/T^2 + Var W/W^2 - 2 Cov/(T W)) with the unbiased (co)variance
    estimates of :func:`triangle_statistics`; the ratio is consistent, not
    exactly unbiased (its bias is O(Var W / W^2)).

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.karate_club_graph()
    >>> t = dpgraph.release(G, epsilon=4.0, seed=0).transitivity()
    >>> abs(t.value - nx.transitivity(G)) < 4 * t.std
    True
    """
    st = triangle_statistics(R)
    T, W = st.triangles, st.wedges
    if W <= 0:
        return Estimate(float("nan"), float("inf"), 0.0, 1.0, exact_std=False)
    tau = 3.0 * T / W
    rel = st.var_triangles / max(T * T, 1e-300) + st.var_wedges / (W * W) - 2 * st.cov / (
        max(abs(T), 1e-300) * W) * np.sign(T)
    std = abs(tau) * np.sqrt(max(rel, 0.0)) if T != 0 else 3.0 * np.sqrt(st.var_triangles) / W
    return Estimate(float(tau), float(std), 0.0, 1.0, exact_std=False)


def local_clustering(R: PrivateGraph) -> np.ndarray:
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


def average_clustering(R: PrivateGraph) -> Estimate:
    """Average local clustering: mean of the plug-in per-node ratios.

    A ratio estimator per node (see :func:`local_clustering`); ``std`` is a
    delta-method approximation treating nodes as independent, ignoring the
    clipping and the bias of the per-node ratios (which can be large at small
    epsilon: prefer :meth:`transitivity` as a global clustering measure).

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> a = dpgraph.release(nx.karate_club_graph(), epsilon=4.0, seed=0).average_clustering()
    >>> 0.0 <= a.value <= 1.0
    True
    """
    st = triangle_statistics(R)
    n = R.number_of_nodes()
    c = local_clustering(R)
    v0, v1 = _entry_variances(R.channel)
    vmax = max(v0, v1)
    # per-node: Var t_v ~ vmax^3 C(n-1, 2) (cubic term); ratio delta method
    w = np.maximum(st.node_wedges, 1.0)
    var_c = vmax**3 * (n - 1) * (n - 2) / 2 / w**2
    std = float(np.sqrt(np.minimum(var_c, 0.25).sum()) / n)
    return Estimate(float(c.mean()), std, 0.0, 1.0, exact_std=False)
