"""Community detection from a release, with a detectability test and an honest modularity.

Two problems make community detection on a randomized-response release
different from detection on a graph:

* **Detectability.**  The debiased adjacency Z is the true adjacency plus a
  symmetric noise matrix with independent entries; the eigenvalues of such
  noise fill [-e, e] with e = 2 sqrt(n s^2) (s^2 the mean entry variance).
  Only eigenvalues of Z above e carry structure.  With fewer than two of them
  (the first one is the graph's average degree, not a split of it) the
  release cannot resolve any community at this epsilon, and the result says
  so (``Communities.resolvable`` is False, one community holding every node)
  instead of presenting a giant community and splinters of noise as an answer.
* **Selection bias.**  A partition chosen to have many released edges inside
  its communities also has, by construction, a favourable noise draw there:
  scored on the same pairs its debiased modularity is biased upward (by
  +0.6 on a large sparse graph at eps = 1).  Here the vertex pairs are split
  with public randomness (independent of the graph and of the release):
  communities are found on one part, and the modularity is estimated only
  from the other (held-out) part, whose noise the partition never saw.  Given
  the split that estimate is unbiased for the held-out part's share of the
  true counts; it is slightly conservative, because the held-out true edges
  are the ones the partition could not use.

The default method (``"denoised"``) keeps the eigenvectors above the edge,
shrinks their eigenvalues to the signal strength (theta with
lambda = theta + e^2 / (4 theta), the spiked-Wigner relation), connects every
node to its ``knn`` nearest neighbours by cosine similarity of the denoised
rows and runs Louvain (networkx, seeded) on that graph.  ``"spectral"``
clusters the same embedding by k-means into (structural directions + 1)
communities.
"""

from __future__ import annotations

import numbers
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...core.estimate import Estimate
from ..protocol import Release
from ._shared import (
    _check_max_communities,
    _check_seed,
    _dense_release,
    _entry_map,
    _undirected,
    analytic,
    check_proper,
    finish,
)
from .counts import number_of_edges

__all__ = ["Communities", "communities"]

_SPLIT_STREAM = 0x5B117  # fixed stream id of the public pair split (with ``seed``)


@dataclass(frozen=True, repr=False)
class Communities:
    """Communities found from a release.

    Attributes
    ----------
    partition : list of frozenset
        The communities (node labels), largest first.  A single community
        holding every node when ``resolvable`` is False.
    modularity : Estimate
        Estimated modularity of ``partition`` on the true graph, from the
        held-out vertex pairs only (exactly 0 with std 0 for a single
        community, whose modularity is 0 on every graph).
    resolvable : bool
        False when fewer than two eigenvalues of the debiased adjacency clear
        the noise edge: no community structure can be resolved at this
        epsilon (on this graph), and ``partition`` is the trivial one.
    eigenvalues : numpy.ndarray
        The leading eigenvalues of the debiased adjacency (finding part of
        the split) that were inspected, descending.
    noise_edge : float
        2 sqrt(n s^2), s^2 the mean entry variance of the finding part
        (noise of the channel plus that of a random graph of the estimated
        density): eigenvalues above it carry structure.
    k : int
        Number of eigenvalues above the edge (times 1 + margin).
    holdout : float
        Fraction of the vertex pairs held out for the modularity estimate.
    method : str
        The clustering method used.
    """

    partition: list
    modularity: Estimate
    resolvable: bool
    eigenvalues: np.ndarray = field(default_factory=lambda: np.zeros(0))
    noise_edge: float = float("nan")
    k: int = 0
    holdout: float = 0.0
    method: str = "denoised"

    def labels(self, nodes: Iterable[Hashable]) -> np.ndarray:
        """Community index of each node in ``nodes`` (order of ``partition``)."""
        where = {v: c for c, block in enumerate(self.partition) for v in block}
        return np.array([where[v] for v in nodes])

    def __repr__(self) -> str:  # a summary: never the partition itself
        sizes = [len(b) for b in self.partition]
        head = ", ".join(str(s) for s in sizes[:5]) + (", ..." if len(sizes) > 5 else "")
        return (f"Communities({len(sizes)} communities, sizes [{head}], "
                f"modularity={self.modularity.value:.4f} +- {self.modularity.std:.4f} "
                f"(held-out {self.holdout:g} of pairs), resolvable={self.resolvable}, "
                f"method={self.method!r})")


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


def _kmeans(X: np.ndarray, k: int, seed: int | None) -> np.ndarray:
    from scipy.cluster.vq import kmeans2

    rng = np.random.default_rng(seed)
    best = None
    for _ in range(4):
        cent, lab = kmeans2(X.astype(np.float64), k, minit="++", seed=rng, iter=50)
        inertia = float(np.sum((X - cent[lab]) ** 2))
        if best is None or inertia < best[0]:
            best = (inertia, lab)
    return best[1]


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


def _check_fraction(x: Any, name: str, lo: float, hi: float) -> float:
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real) or not (lo < x < hi):
        raise ValueError(f"{name} must be a number in ({lo:g}, {hi:g}), got {x!r}")
    return float(x)


@analytic
def communities(
    R: Release,
    method: str = "denoised",
    max_communities: int = 60,
    holdout: float = 0.15,
    knn: int = 10,
    seed: int | None = 0,
    margin: float = 0.03,
    resolution: float = 1.0,
    proper: bool = True,
) -> Communities:
    """Community detection from a release, with a detectability test and an honest modularity.

    1. The vertex pairs are split at random (public randomness from ``seed``,
       independent of the graph): a fraction ``1 - holdout`` to find
       communities, ``holdout`` to score them.
    2. On the finding part, Z (debiased adjacency, rescaled) has noise with
       spectrum edge e = 2 sqrt(n s^2), s^2 the mean entry variance (the
       channel's plus that of a random graph of the estimated density).  Its
       eigenvalues above e (1 + ``margin``) carry structure.  Fewer than two:
       **no structure is resolvable** at this epsilon; the result has
       ``resolvable=False``, one community, modularity exactly 0.
    3. ``method="denoised"``: the q structural eigenvectors, scaled by the
       shrunk eigenvalues theta (lambda = theta + e^2 / (4 theta)), embed
       the nodes; a cosine ``knn``-nearest-neighbour graph of the embedding
       is partitioned by Louvain (networkx, ``seed``), and those communities
       are merged by Louvain on the graph of communities weighted by their
       debiased edge counts (finding part).  ``method="spectral"``:
       k-means of the same embedding into q + 1 communities.
    4. The modularity of the partition on the true graph is estimated from
       the held-out pairs only (:func:`heldout_modularity`), so choosing the
       partition on the same release does not bias it upward.

    Post-processing of the release only: no privacy budget is spent, and the
    randomness (split, Louvain, k-means) is public.

    Parameters
    ----------
    R : PrivateGraph
        Undirected release.
    method : {"denoised", "spectral"}, default "denoised"
    max_communities : int, default 60
        Upper bound (>= 1) on the structural eigenvectors used (and on the
        k-means clusters); 1 always returns the trivial partition.
    holdout : float, default 0.15
        Fraction of vertex pairs, in (0, 1), held out to score the partition.
        Larger: a more precise modularity estimate, a less accurate partition.
    knn : int, default 10
        Neighbours per node in the denoised similarity graph (>= 1).
    seed : int or None, default 0
        Non-negative seed of the pair split, Louvain and k-means; None for
        fresh randomness.
    margin : float, default 0.03
        Relative margin (>= 0) above the noise edge for an eigenvalue to count.
    resolution : float, default 1.0
        Louvain's resolution (> 0) when merging communities (larger: more,
        smaller communities).
    proper : bool, default True
        Clip the modularity estimate to [-1/2, 1] (its interval too, centred
        on the unclipped value); False returns the unclipped, unbiased-given-
        the-split estimate.

    Returns
    -------
    Communities
        The partition, its held-out modularity estimate, the detectability
        flag ``resolvable`` and the inspected eigenvalues.  Its repr is a
        summary (sizes, modularity), never the partition.

    Raises
    ------
    ValueError
        Unknown ``method``; ``max_communities`` or ``knn`` < 1; ``holdout``
        outside (0, 1); negative ``margin`` or ``seed``; ``resolution`` <= 0;
        a directed release.
    TypeError
        ``max_communities``, ``knn`` or ``seed`` not an int; ``proper`` not a bool.
    MemoryError
        The dense n x n matrices do not fit in memory.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.planted_partition_graph(2, 150, 0.3, 0.01, seed=1)
    >>> res = dpgraph.release(G, epsilon=3.0, seed=0).communities()
    >>> res.resolvable, len(res.partition) >= 2
    (True, True)
    >>> q_true = nx.community.modularity(G, res.partition)
    >>> abs(res.modularity.value - q_true) < 4 * res.modularity.std
    True
    """
    _undirected(R, "community detection")
    if method not in ("denoised", "spectral"):
        raise ValueError(f"method must be 'denoised' or 'spectral', got {method!r}")
    max_communities = _check_max_communities(max_communities)
    if isinstance(knn, (bool, np.bool_)) or not isinstance(knn, numbers.Integral):
        raise TypeError(f"knn must be an int >= 1, got {type(knn).__name__}")
    if int(knn) < 1:
        raise ValueError(f"knn must be an int >= 1, got {int(knn)}")
    holdout = _check_fraction(holdout, "holdout", 0.0, 1.0)
    if isinstance(margin, (bool, np.bool_)) or not isinstance(margin, numbers.Real) or margin < 0:
        raise ValueError(f"margin must be a number >= 0, got {margin!r}")
    if isinstance(resolution, (bool, np.bool_)) or not isinstance(resolution, numbers.Real) \
            or not resolution > 0:
        raise ValueError(f"resolution must be a number > 0, got {resolution!r}")
    proper = check_proper(proper)
    seed = _check_seed(seed)
    n = R.number_of_nodes()
    nodes = R.nodes
    trivial = [frozenset(nodes)]
    zero = Estimate(0.0, 0.0, feasible_range=(-0.5, 1.0))
    if n < 3:
        return Communities(trivial, zero, False, holdout=holdout, method=method)
    m = number_of_edges(R, proper=False)
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
    s2 = (vbar + rho) / f - rho * rho  # Var of a finding-part entry, averaged over pairs
    edge = float(2.0 * np.sqrt(n * s2))
    thr = edge * (1.0 + float(margin))
    ell = int(min(max_communities + 8, n - 1))
    vals, vecs = _filtered_eigen(Z, ell, thr, seed)
    q = int(min(np.sum(vals > thr), max_communities))
    if q < 2:
        return Communities(trivial, zero, False, np.asarray(vals), edge, q, holdout, method)
    lam = vals[:q]
    theta = (lam + np.sqrt(np.maximum(lam * lam - edge * edge, 0.0))) / 2.0
    X = vecs[:, :q] * theta.astype(vecs.dtype)
    if method == "denoised":
        lab = _merge_on_blocks(Z, _louvain_knn(X, int(knn), seed), seed, float(resolution))
    else:
        lab = _kmeans(X, int(min(q + 1, max_communities, n)), seed)
    _, lab = np.unique(lab, return_inverse=True)
    # score on the held-out pairs only
    del Z
    held = ~F
    np.fill_diagonal(held, False)
    W = _masked_debiased(Y, held, z0 / holdout, dl / holdout)
    del Y
    if lab.max() == 0:
        return Communities(trivial, zero, True, np.asarray(vals), edge, q, holdout, method)
    mod = _heldout_modularity(W, held, lab, R.channel, m, holdout)
    mod = finish(mod, proper, -0.5, 1.0)
    blocks = [frozenset(nodes[i] for i in np.flatnonzero(lab == c)) for c in range(lab.max() + 1)]
    blocks.sort(key=len, reverse=True)
    return Communities(blocks, mod, True, np.asarray(vals), edge, q, holdout, method)
