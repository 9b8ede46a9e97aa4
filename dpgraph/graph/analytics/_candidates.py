"""Candidate partitions from a spectral embedding (the finding step of community detection).

Every function here sees only the embedding X (n x q, the structural
eigenvectors of the finding part scaled by their shrunk eigenvalues) and the
finding part's debiased block sums; nothing is n x n (similarities are
computed in row blocks, the neighbour graph has n * knn edges).

* :func:`knn_louvain`: Louvain on the cosine k-nearest-neighbour graph of the
  rows of X; its communities are merged by Louvain on the graph of
  communities weighted by their debiased edge counts (:func:`merge_on_blocks`,
  "denoised");
* :func:`with_background`: the same communities with the nodes whose
  embedding does not clear the noise (squared norm below c times that of a
  row of pure noise) moved to one background community before the merge:
  at low epsilon most rows of X are noise, and their cosine directions would
  scatter them over the communities;
* :func:`kmeans_labels`: k-means of the unnormalized rows into q + 1
  clusters ("spectral"); rows near the origin form their own cluster.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np


def knn_graph(X: np.ndarray, knn: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows, cols, weights) of the cosine ``knn``-nearest-neighbour graph, positive weights only."""
    n = X.shape[0]
    Xn = X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-12)
    knn = int(min(knn, n - 1))
    rows_all, cols_all, w_all = [], [], []
    step = max(1, (1 << 20) // max(n, 1))
    for i0 in range(0, n, step):  # blocks of rows keep the similarity matrix small (8 MiB)
        S = Xn[i0:i0 + step] @ Xn.T
        S[np.arange(S.shape[0]), np.arange(i0, i0 + S.shape[0])] = -np.inf
        idx = np.argpartition(-S, knn - 1, axis=1)[:, :knn]
        rows_all.append(np.repeat(np.arange(i0, i0 + S.shape[0]), knn))
        cols_all.append(idx.ravel())
        w_all.append(np.take_along_axis(S, idx, axis=1).ravel())
    rows, cols, w = (np.concatenate(x) for x in (rows_all, cols_all, w_all))
    ok = w > 0
    return rows[ok], cols[ok], w[ok]


def louvain(n: int, rows: np.ndarray, cols: np.ndarray, w: np.ndarray, seed: int | None,
            resolution: float = 1.0) -> np.ndarray:
    """Louvain communities (networkx, ``seed``) of a weighted graph on 0..n-1, as labels."""
    import networkx as nx

    H = nx.Graph()
    H.add_nodes_from(range(n))
    H.add_weighted_edges_from(zip(rows.tolist(), cols.tolist(), w.tolist()))
    lab = np.empty(n, dtype=np.int64)
    parts = nx.community.louvain_communities(H, weight="weight", seed=seed, resolution=resolution)
    for c, block in enumerate(parts):
        lab[list(block)] = c
    return lab


def merge_on_blocks(block_sums: Callable[[np.ndarray, int], np.ndarray], lab: np.ndarray,
                    seed: int | None, resolution: float = 1.0) -> np.ndarray:
    """Louvain on the graph of communities, weighted by the debiased counts between them.

    Louvain on a k-nearest-neighbour graph over-segments a continuous
    embedding; its communities are merged again by modularity computed on
    the debiased adjacency of the finding part (``block_sums(lab, k)``, the
    k x k ordered-pair sums; negative ones set to 0; a community's internal
    count is a self-loop).
    """
    k = int(lab.max()) + 1
    if k < 2:
        return lab
    C = block_sums(lab, k)
    iu = np.triu_indices(k, 1)
    w = C[iu]
    ok = w > 0
    inner = np.diag(C) / 2.0
    rows = np.concatenate([iu[0][ok], np.flatnonzero(inner > 0)])
    cols = np.concatenate([iu[1][ok], np.flatnonzero(inner > 0)])
    weights = np.concatenate([w[ok], inner[inner > 0]])
    merged = louvain(k, rows, cols, weights, seed, resolution)
    return merged[lab]


def knn_louvain(X: np.ndarray, knn: int, seed: int | None) -> np.ndarray:
    """Louvain (networkx, ``seed``) on the cosine kNN graph of the rows of X: many small communities."""
    return louvain(X.shape[0], *knn_graph(X, knn), seed)


def with_background(X: np.ndarray, lab: np.ndarray, noise_sq: float, c: float) -> np.ndarray | None:
    """``lab`` + 1 on the rows with squared norm above c * ``noise_sq``, 0 (the background) elsewhere.

    ``noise_sq`` is the expected squared norm of a row of X that carries no
    structure.  None when every row, or too few rows, clear the threshold.
    """
    conf = np.einsum("ij,ij->i", X, X) > c * noise_sq
    if conf.sum() <= X.shape[1] + 1 or conf.all():
        return None
    return np.where(conf, lab + 1, 0)


def kmeans_labels(X: np.ndarray, k: int, seed: int | None, restarts: int = 4) -> np.ndarray:
    """"spectral": k-means (k-means++ starts, best of ``restarts``) of the rows of X."""
    from scipy.cluster.vq import kmeans2

    rng = np.random.default_rng(seed)
    X = np.asarray(X, dtype=np.float64)
    # never more centres than distinct rows: k-means++ would divide by zero drawing the extra
    k = int(min(k, np.unique(X, axis=0).shape[0]))
    best = None
    for _ in range(restarts):
        with warnings.catch_warnings():  # an empty cluster is an unused label: harmless
            warnings.filterwarnings("ignore", "One of the clusters is empty", UserWarning)
            cent, lab = kmeans2(X, k, minit="++", seed=rng, iter=50)
        inertia = float(np.sum((X - cent[lab]) ** 2))
        if best is None or inertia < best[0]:
            best = (inertia, lab)
    return best[1]


class LocalRule:
    """The final assignment of every node from its own embedding row: a local rule.

    ``cosine``: the community whose (unit) centroid direction is nearest to
    the row's direction; otherwise the nearest centroid (k-means).  With a
    ``threshold``, rows of squared norm at most it form community 0 (the
    background) and the others take 1 + the nearest of the other centroids.
    Because a node's community depends on its own row only (the centroids
    are fixed), the effect of one more released edge on two nodes'
    communities can be computed exactly (:meth:`reach` bounds which nodes it can move; see the
    counterfactual of the held-out score in :mod:`.community`).
    """

    def __init__(self, centroids: np.ndarray, cosine: bool, threshold: float | None) -> None:
        self.centroids = np.asarray(centroids, dtype=np.float64)
        self.cosine = bool(cosine)
        self.threshold = threshold
        self._half_sq = 0.5 * np.einsum("ij,ij->i", self.centroids, self.centroids)

    @property
    def k(self) -> int:
        """Number of communities the rule can give (background included)."""
        return self.centroids.shape[0] + (self.threshold is not None)

    def _scores(self, X: np.ndarray) -> np.ndarray:
        if self.cosine:
            Xn = X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-300)
            return Xn @ self.centroids.T
        return X @ self.centroids.T - self._half_sq

    def __call__(self, X: np.ndarray) -> np.ndarray:
        """Community of every row of X."""
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        lab = np.argmax(self._scores(X), axis=1)
        if self.threshold is not None:
            lab = np.where(np.einsum("ij,ij->i", X, X) <= self.threshold, 0, lab + 1)
        return lab.astype(np.int64)

    def reach(self, X: np.ndarray) -> np.ndarray:
        """A lower bound, per row, on how far the row must move to change its community.

        The score of community c exceeds the best one's only once
        (x' - x) . (mu_c - mu_best) makes up their gap, so a move of length t
        must reach gap_c / |mu_c - mu_best| for some c.  Cosine scores see
        the direction, which a move of length t turns by at most 2 t / |x|.
        With a threshold, the norm must cross sqrt(threshold).
        """
        X = np.asarray(X, dtype=np.float64)
        norm = np.linalg.norm(X, axis=1)
        S = self._scores(X)
        best = np.argmax(S, axis=1)
        C = self.centroids
        out = np.full(X.shape[0], np.inf)
        for c in range(C.shape[0]):  # k passes of n: the centroids are few
            dist = np.linalg.norm(C[c][None, :] - C[best], axis=1)
            gap = S[np.arange(S.shape[0]), best] - S[:, c]
            with np.errstate(divide="ignore", invalid="ignore"):
                t = np.where(best == c, np.inf, gap / dist)
            out = np.minimum(out, t)
        if self.cosine:
            out = out * norm / 2.0
        if self.threshold is not None:
            out = np.minimum(out, np.abs(norm - np.sqrt(self.threshold)))
        return out


def fit_rule(X: np.ndarray, lab: np.ndarray, cosine: bool, threshold: float | None,
             iters: int = 5) -> tuple[LocalRule, np.ndarray]:
    """A :class:`LocalRule` from a partition, refined by a few reassignment steps.

    Centroids of the communities of ``lab`` (unit mean directions if
    ``cosine``; background community 0 excluded when ``threshold`` is set),
    every node reassigned by the rule, and again until nothing moves (at most
    ``iters`` times).  Empty communities are dropped.  The returned labels
    are exactly the rule applied to X.
    """
    X = np.asarray(X, dtype=np.float64)
    Xs = X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-300) if cosine else X
    lab = np.unique(lab, return_inverse=True)[1]
    rule = None
    for _ in range(max(1, iters)):
        groups = lab if threshold is None else lab - 1  # background (0) -> -1, not a centroid
        k = int(groups.max()) + 1
        if k < 1:
            break
        cent = np.zeros((k, X.shape[1]))
        np.add.at(cent, groups[groups >= 0], Xs[groups >= 0])
        keep = np.bincount(groups[groups >= 0], minlength=k) > 0
        cent = cent[keep]
        if cosine:
            cent /= np.maximum(np.linalg.norm(cent, axis=1, keepdims=True), 1e-300)
        else:
            cent /= np.bincount(groups[groups >= 0], minlength=k)[keep][:, None]
        rule = LocalRule(cent, cosine, threshold)
        new = rule(X)
        if np.array_equal(new, lab):
            break
        lab = new
    if rule is None:
        return LocalRule(np.zeros((1, X.shape[1])), cosine, None), np.zeros(X.shape[0], dtype=np.int64)
    return rule, rule(X)
