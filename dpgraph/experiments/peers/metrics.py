"""Metrics of the peers benchmark, computed as the SoK study computes them.

Partition agreement uses scikit-learn's ``normalized_mutual_info_score``
(arithmetic normalization) and ``adjusted_rand_score``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "EPSILONS",
    "METHODS",
    "METRICS",
    "ari",
    "count_vector",
    "degree_kl",
    "graph_metrics",
    "naive_metrics",
    "nmi",
    "partition_labels",
    "sequence_from_hist",
    "wasserstein",
]


#: the privacy levels, methods and columns of the benchmark
EPSILONS = (0.5, 1.0, 2.0, 4.0)
METHODS = ("naive", "dpgraph", "dpgraph-synth", "TmF", "PrivGraph")
METRICS = (
    "transitivity_err", "transitivity_rel", "degree_kl", "degree_w1", "modularity_err",
    "nmi", "ari", "partition_true_modularity", "modularity_reported_err", "nmi_dept", "ari_dept",
    "density_err", "assortativity_err", "clustering_w1", "triangles_rel", "triangles_covered",
    "resolvable",
)


def nmi(a: Any, b: Any) -> float:
    """Normalized mutual information of two labelings (scikit-learn, arithmetic mean).

    Examples
    --------
    >>> round(nmi([0, 0, 1, 1], [1, 1, 0, 0]), 6), round(nmi([0, 0, 1, 1], [0, 1, 0, 1]), 6)
    (1.0, 0.0)
    """
    from sklearn.metrics import normalized_mutual_info_score

    return float(normalized_mutual_info_score(np.asarray(a), np.asarray(b)))


def ari(a: Any, b: Any) -> float:
    """Adjusted Rand index of two labelings (scikit-learn).

    Examples
    --------
    >>> ari([0, 0, 1, 1], [1, 1, 0, 0])
    1.0
    """
    from sklearn.metrics import adjusted_rand_score

    return float(adjusted_rand_score(np.asarray(a), np.asarray(b)))


def wasserstein(u: Any, v: Any) -> float:
    """1-D Wasserstein distance between two samples (scipy.stats.wasserstein_distance)."""
    from scipy.stats import wasserstein_distance

    u = np.asarray(u, float)
    v = np.asarray(v, float)
    return float(wasserstein_distance(u[np.isfinite(u)], v[np.isfinite(v)]))


def degree_kl(true_deg: np.ndarray, est_hist: np.ndarray, mix: float = 1e-3) -> float:
    """KL(true degree histogram || estimate), the estimate mixed with ``mix`` of uniform.

    Examples
    --------
    >>> h = np.bincount([1, 1, 2], minlength=4) / 3
    >>> degree_kl(np.array([1, 1, 2]), h) < 1e-2
    True
    """
    n = max(int(true_deg.max()) + 1, est_hist.size)
    p = np.bincount(true_deg, minlength=n).astype(float)
    p /= p.sum()
    q = np.zeros(n)
    q[: est_hist.size] = est_hist
    q = q / q.sum()
    q = (1 - mix) * q + mix / n
    nz = p > 0
    return float(np.sum(p[nz] * np.log(p[nz] / q[nz])))


def count_vector(deg: np.ndarray) -> np.ndarray:
    """[number of nodes with degree i for i in 0..max]: the SoK's degree 'distribution'."""
    return np.bincount(np.asarray(deg, dtype=np.int64))


def sequence_from_hist(h: np.ndarray, n: int) -> np.ndarray:
    """n degrees at the quantiles (k + 1/2)/n of the histogram h (a degree sequence).

    Examples
    --------
    >>> sequence_from_hist(np.array([0.0, 0.5, 0.25, 0.25]), 4).tolist()
    [1, 1, 2, 3]
    """
    cdf = np.cumsum(h / h.sum())
    q = (np.arange(n) + 0.5) / n
    return np.minimum(np.searchsorted(cdf, q), h.size - 1)


def partition_labels(partition: Any, nodes: Any) -> np.ndarray:
    """Community index of every node of ``nodes`` under ``partition`` (a list of sets)."""
    where = {}
    for c, block in enumerate(partition):
        for v in block:
            where[v] = c
    return np.array([where[v] for v in nodes])


def _assortativity(deg: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> float:
    """Degree assortativity: Pearson correlation of end degrees over both edge orientations."""
    if rows.size == 0:
        return float("nan")
    x = np.concatenate([deg[rows], deg[cols]]).astype(float)
    y = np.concatenate([deg[cols], deg[rows]]).astype(float)
    sx, sy = x.std(), y.std()
    if sx == 0 or sy == 0:
        return float("nan")
    return float(np.mean((x - x.mean()) * (y - y.mean())) / (sx * sy))


def graph_metrics(H: Any, nodes: Any, louvain: bool = True, seed: int = 0) -> dict:
    """Statistics of a (synthetic) networkx graph, computed as the SoK does."""
    import networkx as nx

    idx = {v: i for i, v in enumerate(nodes)}
    n = len(nodes)
    deg = np.zeros(n, dtype=np.int64)
    for v, d in H.degree():
        deg[idx[v]] = d
    e = np.array([(idx[a], idx[b]) for a, b in H.edges()], dtype=np.int64).reshape(-1, 2)
    clus = nx.clustering(H)
    out = {
        "transitivity": nx.transitivity(H),
        "degrees": deg,
        "density": nx.density(H),
        "assortativity": _assortativity(deg, e[:, 0], e[:, 1]),
        "clustering": np.array([clus[v] for v in nodes]),
        "partition": None,
        "modularity": float("nan"),
    }
    if louvain and H.number_of_edges():
        part = nx.community.louvain_communities(H, seed=seed)
        out["partition"] = part
        out["modularity"] = nx.community.modularity(H, part)
    return out


def naive_metrics(R: Any, louvain: bool) -> dict:
    """The SoK statistics of the raw release (the release treated as the graph)."""
    Y = R.to_scipy_sparse("csr").astype(np.float32).toarray()
    n = Y.shape[0]
    deg = R.released_degrees().astype(np.float64)
    t_node = np.zeros(n)
    b = max(1, min(n, (1 << 21) // max(n, 1)))
    for i0 in range(0, n, b):
        C = Y[i0: i0 + b] @ Y
        t_node[i0: i0 + b] = 0.5 * np.sum(C * Y[i0: i0 + b], axis=1, dtype=np.float64)
    wed = deg * (deg - 1) / 2
    T = t_node.sum() / 3
    W = wed.sum()
    rows, cols = R.released_edges()
    out = {
        "transitivity": 3 * T / W if W > 0 else 0.0,
        "degrees": deg.astype(np.int64),
        "density": float(deg.sum() / 2 / (n * (n - 1) / 2)),
        "assortativity": _assortativity(deg, rows, cols),
        "clustering": np.where(wed > 0, t_node / np.maximum(wed, 1), 0.0),
        "partition": None,
        "modularity": float("nan"),
        "triangles": T,
    }
    del Y
    if louvain:
        import networkx as nx

        H = R.to_networkx()
        part = nx.community.louvain_communities(H, seed=0)
        out["partition"] = part
        out["modularity"] = nx.community.modularity(H, part)
    return out
