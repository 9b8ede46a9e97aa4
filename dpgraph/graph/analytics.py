"""Debiased graph analytics from one release.

Every pair {i, j} of the release is an independent row with channel
P(Y_ij = 1 | x_ij = 1) = alpha, P(Y_ij = 1 | x_ij = 0) = beta (randomized
response: alpha = 1 - p', beta = p'; a subsampled release has its own alpha,
beta).  The core (:func:`dpgraph.core.count_estimate`,
:func:`dpgraph.core.unbiased_estimate`) turns a released count into an unbiased
count; this module never re-derives that formula: it asks the core for the
debiased value of a single released 0 and a single released 1,

    z0 = count_estimate(0, 1, channel),   z1 = count_estimate(1, 1, channel),

so the debiased entry is Z_ij = z0 + (z1 - z0) Y_ij with E[Z_ij] = x_ij.

Products of debiased entries over *distinct* pairs are unbiased, because the
pairs are released independently.  Hence (sums over distinct vertices)

    triangles  T^ = sum_{i<j<k} Z_ij Z_jk Z_ik = trace(Z^3) / 6,
    wedges     W^ = sum_j sum_{i<k} Z_ij Z_kj,

are unbiased for every graph.  Everything needed is a function of the released
degrees and of the released common-neighbour counts C = Y Y, one exact integer
matrix product (float32 is exact for counts below 2^24), computed in row blocks.
Their variances follow from the orthogonal (Hoeffding) decomposition of a
multilinear polynomial in independent entries; each term is itself estimated
without bias from the same products (see :func:`triangle_statistics`).

Functions here take a :class:`~dpgraph.graph.PrivateGraph` (networkx style);
:class:`AnalyticsMixin` exposes them as methods.  They use only the adjacency
interface (``cut_count``, ``within_count``, ``degrees``, ``number_of_edges``)
and ``to_scipy_sparse``, so any backend and any binary channel works.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.estimators import Channel, Estimate, count_estimate, unbiased_estimate
from ._memory import check_fits

if TYPE_CHECKING:  # pragma: no cover
    import networkx as nx

    from .private import PrivateGraph

__all__ = [
    "AnalyticsMixin",
    "Communities",
    "TriangleStatistics",
    "average_clustering",
    "communities",
    "degree",
    "degree_assortativity",
    "degree_distribution",
    "degree_moments",
    "degree_transition_matrix",
    "degrees",
    "density",
    "density_between",
    "edge_count",
    "local_clustering",
    "modularity",
    "synthesize",
    "transitivity",
    "triangle_statistics",
    "triangles",
    "wedges",
]

# ----------------------------------------------------------------------------- helpers


def _check_release(R: Any) -> None:
    if not (hasattr(R, "_adj") and hasattr(R, "channel")):
        raise TypeError(f"R must be a dpgraph PrivateGraph, got {type(R).__name__}")


def _undirected(R: Any, what: str) -> None:
    _check_release(R)
    if R.directed:
        raise ValueError(
            f"{what} is defined here for undirected releases only; this release is directed. "
            "Release G.to_undirected() instead (its own epsilon-DP release)."
        )


def _alpha_beta(channel: Channel) -> tuple[float, float]:
    """P(1 | edge), P(1 | non-edge) of a binary channel."""
    if channel.K != 2:
        raise ValueError("graph analytics need a binary channel (K = 2)")
    beta = float(channel.r[1])
    return channel.d + beta, beta


def _entry_map(channel: Channel) -> tuple[float, float]:
    """(z0, z1): the core's debiased value of one released 0 and one released 1."""
    z = count_estimate(np.array([0.0, 1.0]), np.array([1.0, 1.0]), channel).value
    return float(z[0]), float(z[1])


def _entry_variances(channel: Channel) -> tuple[float, float]:
    """(v0, v1): Var Z_ij for a non-edge and for an edge.

    Var Z = Var Y / d^2 with Var Y = beta(1-beta) or alpha(1-alpha); for a
    symmetric channel both equal the core's (exact) per-row variance.
    """
    alpha, beta = _alpha_beta(channel)
    d2 = channel.d**2
    return beta * (1 - beta) / d2, alpha * (1 - alpha) / d2


def _cache(R: Any) -> dict:
    c = R.__dict__.get("_analytics_cache")
    if c is None:
        c = {}
        R.__dict__["_analytics_cache"] = c
    return c


def _observed_degrees(R: Any) -> np.ndarray:
    c = _cache(R)
    if "deg" not in c:
        c["deg"] = np.asarray(R._adj.degrees(), dtype=np.int64)
    return c["deg"]


# ----------------------------------------------------------------------------- counts


def edge_count(R: PrivateGraph) -> Estimate:
    """Unbiased estimate of the number of edges of the input graph.

    ``R.number_of_edges()`` is the raw count of the release (about
    p' N too many at eps = 1); this is the core's debiased count over all
    N vertex pairs, with its exact standard deviation.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.gnp_random_graph(60, 0.2, seed=1)
    >>> R = dpgraph.release(G, epsilon=2.0, seed=3)
    >>> e = R.edge_count()
    >>> abs(e.value - G.number_of_edges()) < 4 * e.std
    True
    """
    _check_release(R)
    return count_estimate(R.number_of_edges(), R.number_of_pairs, R.channel)


def density(R: PrivateGraph) -> Estimate:
    """Unbiased estimate of the density m / N (N = number of vertex pairs).

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> R = dpgraph.release(nx.complete_graph(30), epsilon=3.0, seed=0)
    >>> d = R.density()
    >>> abs(d.value - 1.0) < 4 * d.std
    True
    """
    _check_release(R)
    N = float(R.number_of_pairs)
    est = unbiased_estimate(R.number_of_edges(), [[0.0, 1.0]], [N], R.channel, normalizer=N)
    return Estimate(est.value, est.std, 0.0, 1.0, est.exact_std)


def degrees(R: PrivateGraph) -> Estimate:
    """Unbiased estimate of every node's degree (out-degree if directed).

    Returns a batch :class:`Estimate` in the order of ``R.nodes``.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.star_graph(40)
    >>> R = dpgraph.release(G, epsilon=2.0, seed=2)
    >>> d = R.degrees()
    >>> len(d) == 41 and abs(d[0].value - 40) < 4 * d[0].std
    True
    """
    _check_release(R)
    n = R.number_of_nodes()
    obs = _observed_degrees(R).astype(float)
    return count_estimate(obs, np.full(n, float(n - 1)), R.channel)


def degree(R: PrivateGraph, S: Iterable[Hashable]) -> Estimate:
    """Unbiased estimate of the degree sum of a node set S (sum of its degrees).

    The degree sum counts each edge inside S twice and each edge leaving S
    once: the row function is 2 on pairs within S and 1 on pairs from S to the
    rest, so the core's estimator applies directly (undirected releases).

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.karate_club_graph()
    >>> R = dpgraph.release(G, epsilon=2.0, seed=0)
    >>> e = R.degree([0, 1, 2])
    >>> truth = sum(d for _, d in G.degree([0, 1, 2]))
    >>> abs(e.value - truth) < 4 * e.std
    True
    """
    _undirected(R, "degree(S)")
    s = R._index.indices(S, "S")
    n, k = R.number_of_nodes(), s.size
    obs = float(_observed_degrees(R)[s].sum())
    within = k * (k - 1) / 2.0
    across = float(k * (n - k))
    est = unbiased_estimate(
        obs, np.array([[0.0, 2.0], [0.0, 1.0]]), np.array([within, across]), R.channel
    )
    return Estimate(est.value, est.std, 0.0, 2 * within + across, est.exact_std)


def density_between(R: PrivateGraph, S: Iterable[Hashable], T: Iterable[Hashable]) -> Estimate:
    """Unbiased estimate of the edge density between disjoint node sets S and T.

    cut(S, T) / (|S||T|), through the core with normalizer |S||T|.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.complete_bipartite_graph(20, 20)
    >>> R = dpgraph.release(G, epsilon=2.0, seed=0)
    >>> e = R.density_between(range(20), range(20, 40))
    >>> abs(e.value - 1.0) < 4 * e.std
    True
    """
    _check_release(R)
    s, t = R._sides(S, T)
    rows = float(s.size * t.size)
    obs = R._adj.cut_count(s, t)
    est = unbiased_estimate(obs, [[0.0, 1.0]], [rows], R.channel, normalizer=rows)
    return Estimate(est.value, est.std, 0.0, 1.0, est.exact_std)


# ----------------------------------------------------------------------------- triangles


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


def _dense_release(R: Any) -> np.ndarray:
    """Symmetric released adjacency as float32 (exact 0/1), refusing what cannot fit."""
    n = R.number_of_nodes()
    check_fits(3 * n * n * 4, f"the dense released adjacency of {n} nodes (float32, n^2 entries)")
    A = R.to_scipy_sparse("csr")
    Y = np.zeros((n, n), dtype=np.float32)
    coo = A.tocoo()
    Y[coo.row, coo.col] = 1.0
    return Y


def _block_rows(n: int) -> int:
    return max(1, min(n, (1 << 21) // max(n, 1)))


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


def degree_moments(R: PrivateGraph) -> dict:
    """Unbiased estimates of the degree moments behind degree assortativity.

    Returns m, sum_v d_v^2, sum_v d_v^3 and B = sum_{edges} d_i d_j, each
    unbiased: with a_ij = d_i - x_ij, B = m + 2 W + P where
    P = sum_{i<j} x_ij a_ij a_ji is estimated by sum_{i<j} Z_ij (D_i - Z_ij)(D_j - Z_ij)
    (all factors over distinct pairs; D the row sums of Z), computed as its
    value with every Y_ij = 0 in closed form plus a correction over the
    released edges; sum_v C(d_v, 3) is the elementary symmetric polynomial
    (D^3 - 3 D Q + 2 R3) / 6 of each row.  O(n + released edges).

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> mo = degree_moments(dpgraph.release(nx.star_graph(5), epsilon=50.0, seed=0))
    >>> [round(mo[k]) for k in ("m", "d2", "d3", "B")]
    [5, 30, 130, 25]
    """
    _undirected(R, "degree moments")
    n = R.number_of_nodes()
    z0, z1 = _entry_map(R.channel)
    deg = _observed_degrees(R).astype(float)
    D = (n - 1) * z0 + (z1 - z0) * deg
    Q = (n - 1) * z0**2 + (z1**2 - z0**2) * deg
    R3 = (n - 1) * z0**3 + (z1**3 - z0**3) * deg
    m = float(edge_count(R).value)
    W = float(np.sum(0.5 * (D * D - Q)))
    S3 = float(np.sum((D**3 - 3 * D * Q + 2 * R3) / 6.0))
    u = D - z0
    P = z0 * (u.sum() ** 2 - np.sum(u * u)) / 2.0
    A = R.to_scipy_sparse("coo")
    up = A.row < A.col
    i, j = A.row[up], A.col[up]
    P += float(np.sum(z1 * (D[i] - z1) * (D[j] - z1) - z0 * (D[i] - z0) * (D[j] - z0)))
    return {"m": m, "d2": 2 * W + 2 * m, "d3": 2 * m + 6 * W + 6 * S3, "B": m + 2 * W + P}


def degree_assortativity(R: PrivateGraph) -> Estimate:
    """Degree assortativity (networkx's Pearson coefficient) from unbiased moments.

    r = (B/m - mu^2) / (d3 / 2m - mu^2), mu = d2 / 2m, with the unbiased
    moments of :func:`degree_moments`: a consistent ratio estimator, not
    unbiased.  **No error bar**: ``std`` is NaN (and ``exact_std`` False), so
    the Estimate's ``ci()`` is not informative; only ``value`` is meaningful.
    ``value`` is NaN when the estimated edge count or degree variance is <= 0.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.barabasi_albert_graph(300, 3, seed=1)
    >>> r = dpgraph.release(G, epsilon=4.0, seed=0).degree_assortativity()
    >>> abs(r.value - nx.degree_assortativity_coefficient(G)) < 0.1
    True
    """
    mo = degree_moments(R)
    m = mo["m"]
    if m <= 0:
        return Estimate(float("nan"), float("nan"), -1.0, 1.0, exact_std=False)
    mu = mo["d2"] / (2 * m)
    num = mo["B"] / m - mu * mu
    den = mo["d3"] / (2 * m) - mu * mu
    r = num / den if den > 0 else float("nan")
    return Estimate(float(np.clip(r, -1.0, 1.0)), float("nan"), -1.0, 1.0, exact_std=False)


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


# ----------------------------------------------------------------------------- degrees


def degree_transition_matrix(n: int, channel: Channel, max_degree: int | None = None) -> np.ndarray:
    """P[k, d] = P(released degree k | true degree d) for an n-node undirected release.

    The released degree of a node of true degree d is
    Binomial(d, alpha) + Binomial(n - 1 - d, beta) (independent pairs); the
    two pmfs are convolved by FFT in chunks of d.

    Parameters
    ----------
    n : int
        Number of nodes.
    channel : Channel
        Binary release channel.
    max_degree : int, optional
        Largest true degree in the support (default n - 1).

    Returns
    -------
    numpy.ndarray, shape (n, max_degree + 1)
        Columns sum to 1.

    Examples
    --------
    >>> from dpgraph.core import Channel
    >>> P = degree_transition_matrix(5, Channel.binary(1.0, 0.0))
    >>> bool(np.allclose(P, np.eye(5)))
    True
    """
    from scipy.stats import binom

    if n < 2:
        raise ValueError(f"n must be >= 2, got {n}")
    alpha, beta = _alpha_beta(channel)
    dmax = n - 1 if max_degree is None else int(min(max_degree, n - 1))
    check_fits(2 * n * (dmax + 1) * 8, f"the {n} x {dmax + 1} degree transition matrix")
    L = 1 << int(np.ceil(np.log2(2 * n)))
    k = np.arange(n)
    P = np.empty((n, dmax + 1))
    chunk = max(1, (1 << 22) // L)
    for d0 in range(0, dmax + 1, chunk):
        d = np.arange(d0, min(dmax + 1, d0 + chunk))[:, None]
        a = binom.pmf(k[None, :], d, alpha)
        b = binom.pmf(k[None, :], n - 1 - d, beta)
        conv = np.fft.irfft(np.fft.rfft(a, L, axis=1) * np.fft.rfft(b, L, axis=1), L, axis=1)
        block = np.clip(conv[:, :n], 0.0, None)
        block /= block.sum(axis=1, keepdims=True)
        P[:, d0 : d0 + d.shape[0]] = block.T
    return P


def degree_distribution(
    R: PrivateGraph,
    iterations: int = 300,
    smoothing: float = 0.25,
    tol: float = 1e-7,
) -> np.ndarray:
    """Estimated degree histogram of the input graph by deconvolution (EM).

    The released degrees are a sample from the mixture sum_d h(d) P(. | d)
    (:func:`degree_transition_matrix`); EM on the mixture weights h, started
    from the uniform histogram, with a light smoothing step (EMS: each
    iteration averages h(d) with its neighbours, weight ``smoothing``) to stop
    the deconvolution from fitting sampling noise with spikes.  Post-processing
    of the release only.

    Parameters
    ----------
    R : PrivateGraph
        Undirected release.
    iterations : int, default 300
        Maximum EM iterations.
    smoothing : float, default 0.25
        Weight of the neighbour average in the smoothing step (0 = plain EM).
    tol : float
        Stop when the L1 change of h falls below this.

    Returns
    -------
    numpy.ndarray, shape (n,)
        h[d] = estimated fraction of nodes with degree d (sums to 1);
        multiply by ``R.number_of_nodes()`` for counts.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.random_regular_graph(10, 200, seed=0)
    >>> h = dpgraph.release(G, epsilon=3.0, seed=1).degree_distribution()
    >>> h.shape, round(float(h.sum()), 6), abs(float(h @ np.arange(200)) - 10) < 2
    ((200,), 1.0, True)
    """
    _undirected(R, "degree_distribution")
    if not (0.0 <= smoothing < 1.0):
        raise ValueError(f"smoothing must be in [0, 1), got {smoothing!r}")
    n = R.number_of_nodes()
    obs = _observed_degrees(R)
    counts = np.bincount(obs, minlength=n).astype(float)
    cache = _cache(R)
    if "degP" not in cache:
        cache["degP"] = degree_transition_matrix(n, R.channel)
    P = cache["degP"]
    nz = counts > 0
    Pn, cn = P[nz], counts[nz] / counts.sum()
    h = np.full(n, 1.0 / n)
    for _ in range(int(iterations)):
        mix = Pn @ h
        h_new = h * (Pn.T @ (cn / np.maximum(mix, 1e-300)))
        if smoothing > 0:
            pad = np.concatenate([h_new[:1], h_new, h_new[-1:]])
            h_new = (1 - smoothing) * h_new + smoothing * 0.5 * (pad[:-2] + pad[2:])
        h_new /= h_new.sum()
        done = np.abs(h_new - h).sum() < tol
        h = h_new
        if done:
            break
    return h


# ----------------------------------------------------------------------------- modularity


def _partition_labels(R: Any, partition: Any) -> np.ndarray:
    """Community id (0..k-1) of every node position, validating the partition."""
    if isinstance(partition, (str, bytes)) or not isinstance(partition, Iterable):
        raise TypeError("partition must be an iterable of node collections (e.g. a list of sets)")
    n = R.number_of_nodes()
    lab = np.full(n, -1, dtype=np.int64)
    seen = 0
    for c, block in enumerate(partition):
        idx = R._index.indices(block, f"partition[{c}]")
        if np.any(lab[idx] >= 0):
            raise ValueError(
                f"partition[{c}] repeats a node already in an earlier community; "
                "communities must be disjoint"
            )
        lab[idx] = c
        seen += idx.size
    if seen != n:
        raise ValueError(
            f"partition covers {seen} of {n} nodes; every node must be in exactly one community "
            "(add singletons for the rest)"
        )
    return lab


def _modularity_from_labels(R: Any, lab: np.ndarray) -> Estimate:
    n = R.number_of_nodes()
    k = int(lab.max()) + 1
    sizes = np.bincount(lab, minlength=k).astype(float)
    deg_obs = _observed_degrees(R).astype(float)
    dsum_obs = np.bincount(lab, weights=deg_obs, minlength=k)
    A = R.to_scipy_sparse("csr")
    coo = A.tocoo()
    same = lab[coo.row] == lab[coo.col]
    within_obs = np.bincount(lab[coo.row[same]], minlength=k).astype(float) / 2.0
    in_pairs = sizes * (sizes - 1) / 2.0
    out_pairs = sizes * (n - sizes)
    e_c = count_estimate(within_obs, in_pairs, R.channel)
    D_c = unbiased_estimate(
        dsum_obs,
        np.broadcast_to(np.array([[0.0, 2.0], [0.0, 1.0]]), (k, 2, 2)),
        np.stack([in_pairs, out_pairs], axis=1),
        R.channel,
    )
    m_est = edge_count(R)
    m = float(m_est.value)
    if m <= 0:
        raise ValueError("the estimated number of edges is <= 0; modularity is undefined")
    E = float(np.sum(e_c.value))
    Dv = np.asarray(D_c.value, dtype=float)
    # D_c = sum_in 2 Z + sum_out Z, so Var D_c = sum_in 4 Var Z + sum_out Var Z with
    # Var Z_ij = v0 + (v1 - v0) x_ij; replacing x_ij by Z_ij gives an unbiased estimate
    # of Var D_c for any channel (the core's std is a worst-case bound for asymmetric ones)
    v0, v1 = _entry_variances(R.channel)
    out_obs = dsum_obs - 2.0 * within_obs
    z_in = np.asarray(e_c.value, dtype=float)
    z_out = np.asarray(count_estimate(out_obs, out_pairs, R.channel).value, dtype=float)
    var_D = 4 * (v0 * in_pairs + (v1 - v0) * z_in) + (v0 * out_pairs + (v1 - v0) * z_out)
    Dsq = Dv * Dv - var_D  # unbiased for D_c^2
    Sum = float(np.sum(Dsq))
    value = E / m - Sum / (4 * m * m)
    # delta method: gradient of Q with respect to each pair's indicator
    vmax = max(v0, v1)
    c0 = -E / m**2 + Sum / (2 * m**3)
    h = c0 / 2 - Dv[lab] / (2 * m * m)
    base = (n - 2) * float(np.sum(h * h)) + float(np.sum(h)) ** 2
    hc = c0 / 2 - Dv / (2 * m * m)
    extra = float(np.sum(in_pairs * (4 * hc / m + 1 / m**2)))
    var = vmax * max(base + extra, 0.0)
    return Estimate(float(value), float(np.sqrt(var)), -0.5, 1.0, exact_std=False)


def modularity(R: PrivateGraph, partition: Iterable[Iterable[Hashable]]) -> Estimate:
    """Debiased Newman modularity of a partition of the nodes.

    Q = sum_c [ e_c / m - (D_c / 2m)^2 ] with e_c the edges inside community
    c and D_c its degree sum.  e_c, D_c and m are the core's unbiased counts;
    D_c^2 is replaced by D_c^2 - Var D_c (unbiased), so only the division by
    m^ and m^2 is a plug-in (relative error ~ std(m)/m, tiny).  ``std`` is a
    delta-method approximation using the largest per-pair variance.

    Raises
    ------
    ValueError
        Partition with an unknown node, a node in two communities, or not
        covering every node; a directed release.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.karate_club_graph()
    >>> part = nx.community.louvain_communities(G, seed=1)
    >>> q = dpgraph.release(G, epsilon=4.0, seed=0).modularity(part)
    >>> truth = nx.community.modularity(G, part, weight=None)  # releases are unweighted
    >>> abs(q.value - truth) < 4 * q.std
    True
    """
    _undirected(R, "modularity")
    lab = _partition_labels(R, partition)
    return _modularity_from_labels(R, lab)


# ----------------------------------------------------------------------------- communities


@dataclass(frozen=True)
class Communities:
    """Communities found from a release.

    Attributes
    ----------
    partition : list of frozenset
        The communities (node labels), largest first.
    modularity : Estimate
        Debiased modularity of ``partition`` on the input graph.
    eigenvalues : numpy.ndarray
        The leading eigenvalues of the debiased adjacency that were inspected.
    noise_edge : float
        2 sqrt(n (v + rho(1 - rho))) for the mean per-entry noise variance v
        and the estimated density rho: the edge of the structure-less
        spectrum; eigenvalues above it carry structure.
    k : int
        Number of communities asked of the clustering step.
    """

    partition: list
    modularity: Estimate
    eigenvalues: np.ndarray
    noise_edge: float
    k: int

    def labels(self, nodes: Iterable[Hashable]) -> np.ndarray:
        """Community index of each node in ``nodes`` (order of ``partition``)."""
        where = {v: c for c, block in enumerate(self.partition) for v in block}
        return np.array([where[v] for v in nodes])


def _debiased_operator(R: Any):
    """Z as a LinearOperator: Z v = z0 (sum v - v) + delta Y v (Y sparse)."""
    from scipy.sparse.linalg import LinearOperator

    n = R.number_of_nodes()
    z0, z1 = _entry_map(R.channel)
    dl = z1 - z0
    Y = R.to_scipy_sparse("csr").astype(np.float64)

    def mv(v: np.ndarray) -> np.ndarray:
        v = np.asarray(v, dtype=float)
        if v.ndim == 1:
            return z0 * (v.sum() - v) + dl * (Y @ v)
        return z0 * (v.sum(axis=0, keepdims=True) - v) + dl * (Y @ v)

    return LinearOperator((n, n), matvec=mv, matmat=mv, dtype=np.float64), Y, z0, dl


def _noise_edge(R: Any, m: float) -> float:
    """Edge of the structure-less part of Z's spectrum, 2 sqrt(n (v + rho (1 - rho))).

    v is the mean per-entry variance of the mechanism's noise and rho(1-rho)
    that of a random graph of the estimated density rho: a graph without
    community structure has no eigenvalue of Z far above this.
    """
    n = R.number_of_nodes()
    N = n * (n - 1) / 2
    v0, v1 = _entry_variances(R.channel)
    rho = float(np.clip(m / N, 0.0, 1.0))
    vbar = v0 * (1 - rho) + v1 * rho
    return float(2.0 * np.sqrt(n * (vbar + rho * (1 - rho))))


def _leading_eigen(R: Any, edge: float, cap: int) -> tuple[np.ndarray, np.ndarray]:
    """Largest (algebraic) eigenpairs of Z, descending: all above ``edge`` up to ``cap``."""
    from scipy.sparse.linalg import eigsh

    n = R.number_of_nodes()
    Zop, Y, z0, dl = _debiased_operator(R)
    cap = int(max(1, min(cap, n - 2)))
    if n <= 200:
        Zd = z0 * (np.ones((n, n)) - np.eye(n)) + dl * Y.toarray()
        vals, vecs = np.linalg.eigh(Zd)
        return vals[::-1][:cap], vecs[:, ::-1][:, :cap]
    kk = min(12, cap)
    while True:  # ask for more eigenpairs only while all of them are above the edge
        v_init = np.random.default_rng(0).standard_normal(n)
        vals, vecs = eigsh(Zop, k=kk, which="LA", v0=v_init, tol=1e-5)
        order = np.argsort(vals)[::-1]
        vals, vecs = vals[order], vecs[:, order]
        if vals[-1] <= edge or kk >= cap:
            return vals, vecs
        kk = min(2 * kk, cap)


def _check_seed(seed: Any) -> int | None:
    """Validate a post-processing ``seed``: None or a non-negative int."""
    import numbers

    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"seed must be None or a non-negative int, got {type(seed).__name__}")
    if int(seed) < 0:
        raise ValueError(f"seed must be None or a non-negative int, got {int(seed)}")
    return int(seed)


def _check_max_communities(max_communities: Any) -> int:
    """Validate ``max_communities``: an int >= 1."""
    import numbers

    if isinstance(max_communities, (bool, np.bool_)) or not isinstance(
        max_communities, numbers.Integral
    ):
        raise TypeError(
            f"max_communities must be an int >= 1, got {type(max_communities).__name__}"
        )
    if int(max_communities) < 1:
        raise ValueError(f"max_communities must be an int >= 1, got {int(max_communities)}")
    return int(max_communities)


def communities(
    R: PrivateGraph,
    max_communities: int = 60,
    refine: int = 0,
    seed: int | None = 0,
    margin: float = 0.03,
    normalize: bool = False,
    method: str = "spectral",
) -> Communities:
    """Community detection from a release: spectral on the debiased adjacency.

    ``method="spectral"`` (default) runs the steps below.  ``method="synth-louvain"``
    instead runs Louvain (networkx, ``seed``) on :func:`synthesize`'s graph,
    whose edges are the release's most probable pairs under the spectral
    prior; it recovers more of a sparse social graph's community structure at
    eps >= 0.5 in our benchmark (docs/analytics.md) but leaves the nodes that
    get no synthesized edge as singletons.

    1. Z (debiased adjacency) = signal + a symmetric noise matrix with
       independent entries of variance about v; the noise spectrum ends near
       2 sqrt(n v).  Eigenvalues of Z above that edge (times 1 + ``margin``,
       for finite-n fluctuations) carry structure; with q of them we ask for
       q + 1 communities (one per structural direction plus a background).
    2. Nodes are embedded by those eigenvectors scaled by their eigenvalues
       and clustered by k-means.  The embedding is not row-normalized by
       default: a node without signal has a small embedding and falls in the
       background community, instead of being scattered by amplified noise.
    3. Optionally ``refine`` rounds of modularity-greedy relabelling on Z
       (each node moves to the community maximizing its debiased modularity
       gain z_{v,c}/m - d_v D_c / (2 m^2), all nodes at once).  Off by
       default: at small epsilon the greedy moves fit the noise (the
       partition's debiased modularity rises while its true modularity falls).

    The returned modularity is the debiased estimate for the partition found;
    as for any data-chosen partition it can be optimistic (selection bias),
    strongly so if ``refine`` or ``normalize`` are used at small epsilon.

    Post-processing of the release only.  ``seed`` drives only k-means'
    initialisation (not privacy-relevant).

    Parameters
    ----------
    R : PrivateGraph
        Undirected release.
    max_communities : int, default 60
        Upper bound (>= 1) on the number of communities asked of k-means.
    refine : int, default 0
        Non-negative number of modularity-greedy relabelling rounds.
    seed : int or None, default 0
        Non-negative seed of k-means / Louvain initialisation.
    margin : float, default 0.03
        Relative margin above the noise edge for an eigenvalue to count.
    normalize : bool, default False
        Row-normalize the spectral embedding.
    method : {"spectral", "synth-louvain"}, default "spectral"

    Raises
    ------
    ValueError
        Unknown ``method``, ``max_communities`` < 1, negative ``refine`` or
        ``seed``, or a directed release.
    TypeError
        ``max_communities`` or ``seed`` not an int.

    Returns
    -------
    Communities
        partition, its debiased modularity, the inspected eigenvalues.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.planted_partition_graph(2, 40, 0.5, 0.02, seed=1)
    >>> res = dpgraph.release(G, epsilon=3.0, seed=0).communities()
    >>> len(res.partition) >= 2 and res.modularity.value > 0.2
    True
    """
    from scipy.cluster.vq import kmeans2

    _undirected(R, "community detection")
    if method not in ("spectral", "synth-louvain"):
        raise ValueError(f"method must be 'spectral' or 'synth-louvain', got {method!r}")
    max_communities = _check_max_communities(max_communities)
    seed = _check_seed(seed)
    if isinstance(refine, (bool, np.bool_)) or int(refine) != refine or refine < 0:
        raise ValueError(f"refine must be a non-negative int, got {refine!r}")
    n = R.number_of_nodes()
    m = max(float(edge_count(R).value), 1.0)
    if method == "synth-louvain":
        import networkx as nx

        H = synthesize(R, seed=seed)
        part = nx.community.louvain_communities(H, seed=seed)
        pos = {v: i for i, v in enumerate(R.nodes)}
        lab = np.empty(n, dtype=np.int64)
        for c, block in enumerate(part):
            lab[[pos[v] for v in block]] = c
        blocks = sorted((frozenset(b) for b in part), key=len, reverse=True)
        edge = _noise_edge(R, m)
        return Communities(blocks, _modularity_from_labels(R, lab), np.array([]), edge, len(blocks))
    Zop, Y, z0, dl = _debiased_operator(R)
    edge = _noise_edge(R, m)
    vals, vecs = _leading_eigen(R, edge * (1.0 + margin), max_communities + 1)
    above = int(np.sum(vals > edge * (1.0 + margin)))
    # one community per structural eigenvector plus a background community
    k = int(min(max(above + 1, 2), max_communities, n))
    X = vecs[:, : max(above, 1)] * np.abs(vals[: max(above, 1)])
    if normalize:
        X = X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-12)
    rng = np.random.default_rng(seed)
    best = None
    for _ in range(4):
        cent, lab = kmeans2(X, k, minit="++", seed=rng, iter=50)
        inertia = float(np.sum((X - cent[lab]) ** 2))
        if best is None or inertia < best[0]:
            best = (inertia, lab)
    lab = best[1]
    # modularity-greedy refinement on the debiased adjacency
    dhat = (z0 * (n - 1) + dl * np.asarray(Y.sum(axis=1)).ravel())
    for _ in range(int(refine)):
        _, lab = np.unique(lab, return_inverse=True)
        kc = int(lab.max()) + 1
        H = np.zeros((n, kc))
        H[np.arange(n), lab] = 1.0
        Zc = Zop.matmat(H)  # debiased edges from each node to each community
        Dc = dhat @ H
        gain = Zc / m - np.outer(dhat, Dc) / (2 * m * m)
        # a node's own contribution to its community's degree sum
        gain[np.arange(n), lab] += dhat * dhat / (2 * m * m)
        new = np.argmax(gain, axis=1)
        if np.array_equal(new, lab):
            break
        lab = new
    _, lab = np.unique(lab, return_inverse=True)
    q = _modularity_from_labels(R, lab)
    nodes = R.nodes
    blocks = [frozenset(nodes[i] for i in np.flatnonzero(lab == c)) for c in range(lab.max() + 1)]
    blocks.sort(key=len, reverse=True)
    return Communities(blocks, q, np.asarray(vals), float(edge), k)


# ----------------------------------------------------------------------------- synthesis


def synthesize(
    R: PrivateGraph,
    rank: int | None = None,
    seed: int | None = None,
) -> nx.Graph:
    """A sparse networkx graph with about the estimated number of edges.

    Post-processing of the release only (no privacy cost):

    1. a prior edge probability for every pair from the rank-k spectral
       approximation of the debiased adjacency Z (k = eigenvalues above the
       noise edge, or ``rank``), clipped to [1e-4, 1 - 1e-4];
    2. the posterior probability that the pair is an edge given its own
       released bit (Bayes with the channel's alpha, beta);
    3. the m^ = round(edge_count) pairs of highest posterior are the edges
       (ties broken at random with ``seed``).

    What it preserves: the number of nodes, about the estimated edge count,
    the community structure the spectrum carries (edges concentrate inside the
    denoised blocks) and roughly which nodes are high-degree.  What it does
    not: triangles, clustering and the degree distribution's shape are those
    of a low-rank block model, not of the input (use the estimators
    :meth:`triangles`, :meth:`transitivity`, :meth:`degree_distribution`
    for those numbers); individual edges are mostly wrong at small epsilon.

    Parameters
    ----------
    R : PrivateGraph
        Undirected release.
    rank : int or None, default None
        Rank of the spectral prior, in 1..n-2; None: the eigenvalues above the noise edge.
    seed : int or None, default None
        Non-negative seed of the random tie-break.

    Returns
    -------
    networkx.Graph
        Same nodes as the release, about ``edge_count().value`` edges.

    Raises
    ------
    ValueError
        ``rank`` out of range, negative ``seed``, or a directed release.
    TypeError
        ``seed`` not None or an int.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.planted_partition_graph(2, 40, 0.4, 0.02, seed=1)
    >>> R = dpgraph.release(G, epsilon=2.0, seed=0)
    >>> H = R.synthesize(seed=0)
    >>> H.number_of_nodes(), abs(H.number_of_edges() - R.edge_count().value) <= 1
    (80, True)
    """
    import networkx as nx

    _undirected(R, "synthesize")
    seed = _check_seed(seed)
    n = R.number_of_nodes()
    check_fits(6 * n * n, f"synthesis over the {n * (n - 1) // 2} vertex pairs")
    alpha, beta = _alpha_beta(R.channel)
    m_hat = int(np.clip(round(float(edge_count(R).value)), 0, n * (n - 1) // 2))
    if rank is None:
        edge = _noise_edge(R, m_hat) * 1.03
        vals, vecs = _leading_eigen(R, edge, 60)
        keep = vals > edge
    else:
        r = int(rank)
        if not (1 <= r <= n - 2):
            raise ValueError(f"rank must be in 1..{n - 2}, got {rank!r}")
        vals, vecs = _leading_eigen(R, np.inf, r)
        keep = np.ones(vals.size, dtype=bool)
    Y = R.to_scipy_sparse("csr")
    Vk, lk = vecs[:, keep], vals[keep]
    if lk.size:
        # shrink each outlier eigenvalue to its signal value: lambda = theta + n v / theta
        lam = np.abs(lk)
        nv = n * ((alpha * (1 - alpha) + beta * (1 - beta)) / 2) / R.channel.d**2
        theta = 0.5 * (lam + np.sqrt(np.maximum(lam * lam - 4 * nv, 0.0)))
        lk = np.sign(lk) * theta
    pbar = m_hat / max(n * (n - 1) / 2, 1)
    lo, hi = np.log(alpha / beta) if beta > 0 else 50.0, np.log((1 - alpha) / (1 - beta)) if alpha < 1 else -50.0
    rng = np.random.default_rng(seed)
    Ycsr = Y.tocsr()
    rows_all, cols_all, score_all = [], [], []
    b = _block_rows(n)
    for i0 in range(0, n, b):
        i1 = min(n, i0 + b)
        if lk.size:
            prior = (Vk[i0:i1] * lk) @ Vk.T
        else:
            prior = np.full((i1 - i0, n), pbar)
        prior = np.clip(prior, 1e-4, 1 - 1e-4)
        yb = Ycsr[i0:i1].toarray() > 0
        logit = np.log(prior) - np.log1p(-prior) + np.where(yb, lo, hi)
        logit += 1e-9 * rng.random(logit.shape)  # random tie-break
        r_idx, c_idx = np.nonzero(np.arange(n)[None, :] > np.arange(i0, i1)[:, None])
        rows_all.append((r_idx + i0).astype(np.int32))
        cols_all.append(c_idx.astype(np.int32))
        score_all.append(logit[r_idx, c_idx].astype(np.float32))
    rows = np.concatenate(rows_all)
    cols = np.concatenate(cols_all)
    score = np.concatenate(score_all)
    if m_hat < score.size:
        top = np.argpartition(-score, m_hat)[:m_hat] if m_hat > 0 else np.array([], dtype=int)
    else:
        top = np.arange(score.size)
    H = nx.Graph()
    nodes = R.nodes
    H.add_nodes_from(nodes)
    H.add_edges_from(zip(map(nodes.__getitem__, rows[top].tolist()),
                         map(nodes.__getitem__, cols[top].tolist())))
    return H


# ----------------------------------------------------------------------------- mixin


class AnalyticsMixin:
    """PrivateGraph methods for graph statistics beyond cuts (see :mod:`dpgraph.graph.analytics`)."""

    def edge_count(self) -> Estimate:
        """Unbiased number of edges of the input graph (see :func:`edge_count`)."""
        return edge_count(self)

    def density(self) -> Estimate:
        """Unbiased density (see :func:`density`)."""
        return density(self)

    def degrees(self) -> Estimate:
        """Unbiased degree of every node, a batch Estimate (see :func:`degrees`)."""
        return degrees(self)

    def degree(self, S: Iterable[Hashable]) -> Estimate:
        """Unbiased degree sum of the node set S (see :func:`degree`)."""
        return degree(self, S)

    def density_between(self, S: Iterable[Hashable], T: Iterable[Hashable]) -> Estimate:
        """Unbiased edge density between disjoint node sets (see :func:`density_between`).

        Parameters
        ----------
        S, T : iterable of node labels
            Disjoint node sets of the release.

        Returns
        -------
        Estimate
            cut(S, T) / (|S| |T|), unbiased, with its standard deviation.

        Raises
        ------
        ValueError
            A node not in the release, or S and T sharing a node.
        """
        return density_between(self, S, T)

    def triangles(self) -> Estimate:
        """Unbiased triangle count (see :func:`triangles`)."""
        return triangles(self)

    def wedges(self) -> Estimate:
        """Unbiased wedge (2-path) count (see :func:`wedges`)."""
        return wedges(self)

    def transitivity(self) -> Estimate:
        """Transitivity 3T/W with a delta-method std (see :func:`transitivity`)."""
        return transitivity(self)

    def degree_assortativity(self) -> Estimate:
        """Degree assortativity from unbiased degree moments (see :func:`degree_assortativity`).

        Returns
        -------
        Estimate
            ``value`` is networkx's Pearson degree assortativity, a consistent
            ratio of unbiased moments (not itself unbiased), clipped to [-1, 1].
            **It has no error bar**: ``std`` is NaN, so ``ci()`` and
            ``4 * std`` checks are meaningless for it; to gauge its noise,
            compare releases or use the Monte-Carlo experiments.  ``value`` is
            NaN when the estimated edge count or degree variance is <= 0.
        """
        return degree_assortativity(self)

    def average_clustering(self) -> Estimate:
        """Average local clustering, plug-in ratio (see :func:`average_clustering`)."""
        return average_clustering(self)

    def degree_distribution(self, iterations: int = 300, smoothing: float = 0.25) -> np.ndarray:
        """Deconvolved degree histogram of the input graph (see :func:`degree_distribution`).

        Parameters
        ----------
        iterations : int, default 300
            Maximum EM iterations.
        smoothing : float, default 0.25
            Weight of the neighbour average in the EMS smoothing step, in [0, 1).

        Returns
        -------
        numpy.ndarray, shape (n,)
            h[d] = estimated fraction of nodes with degree d (sums to 1).

        Raises
        ------
        ValueError
            ``smoothing`` outside [0, 1), or a directed release.
        """
        return degree_distribution(self, iterations=iterations, smoothing=smoothing)

    def modularity(self, partition: Iterable[Iterable[Hashable]]) -> Estimate:
        """Debiased Newman modularity of a partition (see :func:`modularity`).

        Parameters
        ----------
        partition : iterable of iterables of node labels
            Communities covering every node exactly once.

        Returns
        -------
        Estimate
            Modularity of ``partition`` on the (unweighted) input graph, with a
            delta-method ``std`` (``exact_std`` is False).

        Raises
        ------
        ValueError
            Unknown node, node in two communities, partition not covering
            every node, estimated edge count <= 0, or a directed release.
        """
        return modularity(self, partition)

    def communities(self, method: str = "spectral", max_communities: int = 60, refine: int = 0,
                    seed: int | None = 0) -> Communities:
        """Communities with their debiased modularity (see :func:`communities`).

        Parameters
        ----------
        method : {"spectral", "synth-louvain"}, default "spectral"
            Spectral clustering of the debiased adjacency, or Louvain on
            :meth:`synthesize`'s graph.
        max_communities : int, default 60
            Upper bound (>= 1) on the number of communities the spectral method asks for.
        refine : int, default 0
            Rounds of modularity-greedy relabelling (non-negative; see
            :func:`communities` for why it is off by default).
        seed : int or None, default 0
            Non-negative seed of k-means / Louvain initialisation (post-processing only).

        Returns
        -------
        Communities
            The partition, its debiased modularity and the inspected eigenvalues.

        Raises
        ------
        ValueError
            Unknown ``method``, ``max_communities`` < 1, negative ``refine`` or
            ``seed``, or a directed release.
        TypeError
            ``max_communities`` or ``seed`` not an int.
        """
        return communities(self, max_communities=max_communities, refine=refine, seed=seed,
                           method=method)

    def synthesize(self, rank: int | None = None, seed: int | None = None) -> nx.Graph:
        """A sparse synthetic graph with about the estimated edge count (see :func:`synthesize`).

        Parameters
        ----------
        rank : int or None, default None
            Rank of the spectral prior, in 1..n-2; None picks the eigenvalues
            above the noise edge.
        seed : int or None, default None
            Non-negative seed of the random tie-break (post-processing only).

        Returns
        -------
        networkx.Graph
            Same nodes as the release, about ``edge_count().value`` edges.

        Raises
        ------
        ValueError
            ``rank`` out of range, negative ``seed``, or a directed release.
        TypeError
            ``seed`` not None or an int.
        """
        return synthesize(self, rank=rank, seed=seed)
