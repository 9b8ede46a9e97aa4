"""The dense community detection of dpgraph 0.2, frozen as the baseline of bench_communities.

Not part of the library: the n x n float32 pipeline that ``R.communities()``
ran before it read the release through products with the packed bits (the
released adjacency, the debiased finding part and the held-out part each as
an n x n float32 matrix, the pair split as an n x n mask).  The benchmark runs
it beside the current implementation to compare partitions, time and peak
memory in the same run.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpgraph.core.estimate import Estimate
from dpgraph.graph.analytics._shared import _dense_release, _entry_map

_SPLIT_STREAM = 0x5B117


def _pair_split(n: int, find_fraction: float, seed: int | None) -> tuple[np.ndarray, float]:
    """Symmetric boolean n x n mask of the finding part (public randomness, no diagonal).

    Each pair is in the finding part with probability thr / 65536, returned
    with the mask (the exact probability the estimators must use).
    """
    rng = np.random.default_rng(None if seed is None else [seed, _SPLIT_STREAM])
    thr = min(max(round(find_fraction * 65536), 1), 65535)
    F = np.triu(rng.integers(0, 65536, size=(n, n), dtype=np.uint16) < thr, 1)
    F |= F.T
    return F, thr / 65536


def _masked_debiased(Y: np.ndarray, mask: np.ndarray, a: float, b: float) -> np.ndarray:
    """(a + b Y) on the pairs of ``mask``, 0 elsewhere, in float32 (in place, one n^2 buffer)."""
    out = np.multiply(Y, np.float32(b), dtype=np.float32)
    out += np.float32(a)
    out *= mask
    return out


def _whitener(Y: np.ndarray) -> np.ndarray:
    """M with Y @ M orthonormal (from the float64 Gram matrix; gemm, not LAPACK QR)."""
    Y64 = Y.astype(np.float64)
    w, V = np.linalg.eigh(Y64.T @ Y64)
    w = np.maximum(w, w.max() * 1e-13)
    return (V / np.sqrt(w)) @ V.T


def _orthonormal(Y: np.ndarray) -> np.ndarray:
    """An orthonormal basis of Y's columns (two Gram passes restore orthogonality)."""
    for _ in range(2):
        Y = Y @ _whitener(Y).astype(Y.dtype)
    return Y


def _filtered_eigen(Z: np.ndarray, ell: int, a: float, seed: int | None,
                    degree: int = 8, passes: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Leading eigenpairs of symmetric Z above ``a``, by Chebyshev-filtered subspace iteration.

    The degree-``degree`` Chebyshev polynomial on [-a, a] keeps the noise
    bulk bounded by 1 and grows fast outside it, so a few block products
    (BLAS-3, ``passes * degree + 1`` of them) isolate the eigenvectors above
    the noise edge; Rayleigh-Ritz then gives eigenvalues that are lower
    bounds of the true ones (conservative counts).  The three-term
    recurrence commutes with right-multiplication, so the block is
    re-orthonormalized every three steps to keep its columns well conditioned.
    """
    n = Z.shape[0]
    if n <= 300:
        vals, vecs = np.linalg.eigh(Z.astype(np.float64))
        return vals[::-1][:ell], vecs[:, ::-1][:, :ell]
    rng = np.random.default_rng(None if seed is None else [seed, _SPLIT_STREAM + 1])
    X = _orthonormal(rng.standard_normal((n, ell)).astype(Z.dtype))
    for _ in range(passes):
        prev, cur = X, (Z @ X) / a
        for step in range(degree - 1):
            prev, cur = cur, 2.0 * (Z @ cur) / a - prev
            if step % 3 == 2:
                M = _whitener(cur).astype(Z.dtype)
                prev, cur = prev @ M, cur @ M
        X = _orthonormal(cur)
    T = (X.T @ (Z @ X)).astype(np.float64)
    w, V = np.linalg.eigh((T + T.T) / 2)
    order = np.argsort(w)[::-1]
    return w[order], (X @ V[:, order].astype(Z.dtype))


def _louvain_knn(X: np.ndarray, knn: int, seed: int | None) -> np.ndarray:
    """Louvain on the cosine k-nearest-neighbour graph of the rows of X."""
    import networkx as nx

    n = X.shape[0]
    Xn = X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-12)
    knn = min(knn, n - 1)
    rows_all, cols_all, w_all = [], [], []
    step = max(1, (1 << 22) // max(n, 1))
    for i0 in range(0, n, step):  # blocks of rows keep the similarity matrix small
        S = Xn[i0:i0 + step] @ Xn.T
        S[np.arange(S.shape[0]), np.arange(i0, i0 + S.shape[0])] = -np.inf
        idx = np.argpartition(-S, knn - 1, axis=1)[:, :knn]
        w = np.take_along_axis(S, idx, axis=1)
        rows_all.append(np.repeat(np.arange(i0, i0 + S.shape[0]), knn))
        cols_all.append(idx.ravel())
        w_all.append(w.ravel())
    rows, cols, w = (np.concatenate(x) for x in (rows_all, cols_all, w_all))
    ok = w > 0
    H = nx.Graph()
    H.add_nodes_from(range(n))
    H.add_weighted_edges_from(zip(rows[ok].tolist(), cols[ok].tolist(), w[ok].tolist()))
    lab = np.empty(n, dtype=np.int64)
    for c, block in enumerate(nx.community.louvain_communities(H, weight="weight", seed=seed)):
        lab[list(block)] = c
    return lab


def _merge_on_blocks(Zf: np.ndarray, lab: np.ndarray, seed: int | None,
                     resolution: float = 1.0) -> np.ndarray:
    """Louvain on the graph of communities, weighted by the debiased counts between them.

    Louvain on a k-nearest-neighbour graph over-segments a continuous
    embedding; its communities are merged again by modularity computed on
    the debiased adjacency of the finding part (block sums, negative ones set
    to 0; a community's internal count is a self-loop).
    """
    import networkx as nx

    n = lab.size
    k = int(lab.max()) + 1
    if k < 2:
        return lab
    H = np.zeros((n, k), dtype=Zf.dtype)
    H[np.arange(n), lab] = 1.0
    C = (H.T @ (Zf @ H)).astype(np.float64)
    B = nx.Graph()
    B.add_nodes_from(range(k))
    iu = np.triu_indices(k, 1)
    w = C[iu]
    ok = w > 0
    B.add_weighted_edges_from(zip(iu[0][ok].tolist(), iu[1][ok].tolist(), w[ok].tolist()))
    inner = np.diag(C) / 2.0
    B.add_weighted_edges_from((c, c, float(inner[c])) for c in range(k) if inner[c] > 0)
    merged = np.empty(k, dtype=np.int64)
    parts = nx.community.louvain_communities(B, weight="weight", seed=seed,
                                             resolution=resolution)
    for c, block in enumerate(parts):
        merged[list(block)] = c
    return merged[lab]


def _heldout_modularity(W: np.ndarray, held: np.ndarray, lab: np.ndarray, channel: Any,
                       m: Estimate, holdout: float) -> Estimate:
    """Modularity of the partition ``lab`` estimated from the held-out pairs only.

    ``W`` is the debiased adjacency on held-out pairs divided by ``holdout``
    (zero elsewhere): given the split E[W_ij] = A_ij / holdout on a held-out
    pair, so sums of W over the held-out pairs of a block stand for the
    block's sums over all its pairs.  With H the community indicator:
    e_c = (H^T W H)_cc / 2, D_c = (H^T W H 1)_c; D_c^2 is debiased by an
    unbiased estimate of its noise variance (per pair v0 + (v1 - v0) A_ij,
    divided by holdout^2, A_ij replaced by its unbiased estimate, plus the
    variance of which true edges fall in the held-out part), and
    Q = sum_c e_c / m - sum_c D_c^2 / (4 m^2) with m the edge count of the
    whole release (it does not depend on the partition).  The std is the
    delta method over the held-out pairs plus m's own error.
    """
    n = lab.size
    k = int(lab.max()) + 1
    H = np.zeros((n, k), dtype=W.dtype)
    H[np.arange(n), lab] = 1.0
    C = (H.T @ (W @ H)).astype(np.float64)  # ordered-pair block sums
    P = (H.T @ (held.astype(W.dtype) @ H)).astype(np.float64)  # ordered held-out pairs
    v0, v1 = channel.entry_variances()
    g = holdout
    # sum over ordered pairs of Var W_ij: the channel's noise (v0 + (v1 - v0) A_ij) / g^2
    # on held-out pairs, plus which true edges fell in the held-out part, A_ij (1 - g) / g
    # per pair (unconditionally on the split); sums of A_ij replaced by their estimates
    Vb = v0 / g**2 * P + (v1 - v0) / g * C + (1.0 - g) / g * C
    dC, dV = np.diag(C), np.diag(Vb)
    e = dC / 2.0
    D = C.sum(axis=1)
    var_D = 2.0 * dV + (Vb.sum(axis=1) - dV)  # 4 Var over unordered inside + Var across
    mv = max(float(m.value), 1.0)
    E = float(e.sum())
    Ssq = float(np.sum(D * D - var_D))
    value = E / mv - Ssq / (4.0 * mv * mv)
    g_in = 1.0 / mv - D / mv**2
    G_out = -(D[:, None] + D[None, :]) / (2.0 * mv * mv)
    var = float(np.sum(g_in**2 * dV / 2.0))
    var += float(np.sum(G_out**2 * Vb) - np.sum(np.diag(G_out) ** 2 * dV)) / 2.0
    dm = -E / mv**2 + Ssq / (2.0 * mv**3)
    var += dm * dm * float(m.std) ** 2
    return Estimate(float(value), float(np.sqrt(max(var, 0.0))), exact_std=False,
                    feasible_range=(-0.5, 1.0))

def dense_communities(R, holdout: float = 0.15, knn: int = 10, seed: int = 0,
                      margin: float = 0.03, max_communities: int = 60):
    """(labels, modularity Estimate, k) of the 0.2 method ("denoised") on release R."""
    n = R.number_of_nodes()
    m = R.number_of_edges(proper=False)
    z0, z1 = _entry_map(R.channel)
    dl = z1 - z0
    v0, v1 = R.channel.entry_variances()
    Y = _dense_release(R)
    F, f = _pair_split(n, 1.0 - holdout, seed)
    holdout = 1.0 - f
    Z = _masked_debiased(Y, F, z0 / f, dl / f)
    N = R.number_of_pairs()
    rho = float(np.clip(float(m.value) / N, 0.0, 1.0))
    vbar = v0 * (1.0 - rho) + v1 * rho
    s2 = (vbar + rho) / f - rho * rho
    edge = float(2.0 * np.sqrt(n * s2))
    thr = edge * (1.0 + float(margin))
    ell = int(min(max_communities + 8, n - 1))
    vals, vecs = _filtered_eigen(Z, ell, thr, seed)
    q = int(min(np.sum(vals > thr), max_communities))
    if q < 2:
        return np.zeros(n, dtype=np.int64), Estimate(0.0, 0.0), q
    lam = vals[:q]
    theta = (lam + np.sqrt(np.maximum(lam * lam - edge * edge, 0.0))) / 2.0
    X = vecs[:, :q] * theta.astype(vecs.dtype)
    lab = _merge_on_blocks(Z, _louvain_knn(X, int(knn), seed), seed, 1.0)
    _, lab = np.unique(lab, return_inverse=True)
    del Z
    held = ~F
    np.fill_diagonal(held, False)
    W = _masked_debiased(Y, held, z0 / holdout, dl / holdout)
    del Y
    if lab.max() == 0:
        return lab, Estimate(0.0, 0.0), q
    return lab, _heldout_modularity(W, held, lab, R.channel, m, holdout), q
