"""Every metric of the peers benchmark, in one place.

Conventions (definitions in docs/peers.md):

- relative errors use PGB's ``cal_rel``: |true - est| / |true| (PGB adds
  1e-15 to the denominator; a true value of exactly 0 gives NaN here, not
  1e15 |est|);
- divergences of distributions use PGB's ``cal_kl``: both count vectors are
  normalized to sum 1, the shorter padded with zeros, and
  KL = sum_i p_i log((p_i + e) / (q_i + e)), e the float64 machine epsilon;
- the SoK study scores global statistics by their absolute error (harmonic
  diameter: relative), and "local" distributions by scipy's 1-D Wasserstein
  distance between the two samples of values;
- partitions are compared with scikit-learn's ``normalized_mutual_info_score``
  (arithmetic normalization) and ``adjusted_rand_score``, against Louvain on
  the true graph (networkx ``louvain_communities``, seed 0).

Nothing is clipped before it is scored.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "CLUSTERING_BINS",
    "EPSILONS",
    "METRICS",
    "METRIC_INFO",
    "SOK_METRICS",
    "ari",
    "cal_kl",
    "cal_rel",
    "clustering_counts",
    "count_vector",
    "degree_kl",
    "graph_stats",
    "harmonic_diameter",
    "labels_modularity",
    "naive_stats",
    "nmi",
    "partition_labels",
    "score",
    "sequence_from_hist",
    "truth_stats",
    "wasserstein",
]

#: the privacy levels of the benchmark
EPSILONS = (0.5, 1.0, 2.0, 4.0)

#: metric key -> (short label, higher is better, definition)
METRIC_INFO: dict[str, tuple[str, bool, str]] = {
    "nmi": ("NMI", True, "NMI of the method's partition vs Louvain on the true graph"),
    "ari": ("ARI", True, "ARI of the method's partition vs Louvain on the true graph"),
    "partition_true_modularity": ("Q of partition on true graph", True,
                                  "modularity of the method's partition on the true graph"),
    "modularity_err": ("modularity abs. err", False,
                       "|Q(Louvain, true) - Q reported by the method| (SoK)"),
    "modularity_rel": ("modularity rel. err", False, "cal_rel of the same (PGB)"),
    "degree_kl": ("degree KL", False, "cal_kl(true degree histogram, method's) (PGB)"),
    "degree_w1": ("degree W1", False,
                  "Wasserstein between the 'nodes of degree i' vectors (SoK)"),
    "triangles_rel": ("triangles rel. err", False, "cal_rel of the triangle count (PGB)"),
    "transitivity_err": ("transitivity abs. err", False, "|true - method| (SoK)"),
    "transitivity_rel": ("transitivity rel. err", False, "cal_rel of transitivity (PGB)"),
    "assortativity_err": ("assortativity abs. err", False, "|true - method| (SoK)"),
    "density_err": ("density abs. err", False, "|true - method| (SoK)"),
    "harmonic_diameter_rel": ("harmonic diameter rel. err", False,
                              "|HD_true - HD| / HD_true, HD = n(n-1) / sum 1/d(u,v) (SoK)"),
    "clustering_kl": ("clustering distribution KL", False,
                      "cal_kl of the local clustering histograms (22 bins)"),
    "clustering_w1": ("clustering W1", False,
                      "Wasserstein between the local clustering values (SoK)"),
}

#: the metrics of the SoK study and PGB that the best-method table covers
SOK_METRICS = tuple(METRIC_INFO)

#: every column of a benchmark row besides dataset, epsilon, rep, method
METRICS = SOK_METRICS + (
    "nmi_dept", "ari_dept", "modularity_reported_err", "harmonic_diameter_rel_se",
    "triangles_covered", "triangles_resolved", "transitivity_covered", "transitivity_resolved",
    "density_covered", "density_resolved", "assortativity_covered", "assortativity_resolved",
    "modularity_covered", "communities_resolvable", "seconds", "peak_mib", "score_seconds",
)

#: local-clustering histogram bins: below 0, twenty of width 0.05 over [0, 1], above 1
CLUSTERING_BINS = np.concatenate([[-np.inf], np.linspace(0.0, 0.95, 20), [1.0 + 1e-9, np.inf]])

_FLOAT_EPS = float(np.finfo(np.float64).eps)


def cal_rel(true: float, est: float) -> float:
    """PGB's relative error |true - est| / |true|; NaN when ``true`` is 0.

    Examples
    --------
    >>> cal_rel(4.0, 3.0), cal_rel(-2.0, 1.0)
    (0.25, 1.5)
    """
    true, est = float(true), float(est)
    if true == 0 or not np.isfinite(true):
        return float("nan")
    return abs(true - est) / abs(true)


def cal_kl(a: Any, b: Any) -> float:
    """PGB's KL divergence of two count vectors (normalized, padded, machine-epsilon smoothed).

    Examples
    --------
    >>> cal_kl([1, 1, 2], [1, 1, 2]) == 0.0
    True
    >>> round(cal_kl([1, 1], [1, 3]), 4)  # 0.5 ln(0.5/0.25) + 0.5 ln(0.5/0.75)
    0.1438
    """
    p = np.asarray(a, dtype=float)
    q = np.asarray(b, dtype=float)
    size = max(p.size, q.size)
    p = np.pad(p, (0, size - p.size)) / p.sum()
    q = np.pad(q, (0, size - q.size)) / q.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = p * np.log((p + _FLOAT_EPS) / (q + _FLOAT_EPS))
    return float(np.sum(terms[p > 0]))


def degree_kl(true_deg: Any, est_hist: Any) -> float:
    """:func:`cal_kl` of the true degree histogram (from degrees) and an estimated one.

    ``est_hist`` is a histogram over degrees 0, 1, ... (counts or fractions).

    Examples
    --------
    >>> degree_kl(np.array([1, 1, 2]), np.array([0.0, 2 / 3, 1 / 3])) == 0.0
    True
    """
    return cal_kl(count_vector(true_deg), est_hist)


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
    """1-D Wasserstein distance between the finite values of two samples (scipy)."""
    from scipy.stats import wasserstein_distance

    u = np.asarray(u, float)
    v = np.asarray(v, float)
    return float(wasserstein_distance(u[np.isfinite(u)], v[np.isfinite(v)]))


def count_vector(deg: Any) -> np.ndarray:
    """[number of nodes with degree i for i in 0..max]: the degree histogram as counts."""
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


def clustering_counts(values: Any) -> np.ndarray:
    """Counts of local clustering values in :data:`CLUSTERING_BINS` (22 bins, none clipped)."""
    v = np.asarray(values, dtype=float)
    return np.histogram(v[np.isfinite(v)], bins=CLUSTERING_BINS)[0]


def partition_labels(partition: Any, nodes: Any) -> np.ndarray:
    """Community index of every node of ``nodes`` under ``partition`` (a list of sets)."""
    where = {}
    for c, block in enumerate(partition):
        for v in block:
            where[v] = c
    return np.array([where[v] for v in nodes])


def labels_modularity(rows: np.ndarray, cols: np.ndarray, deg: np.ndarray,
                      labels: np.ndarray) -> float:
    """Newman modularity (resolution 1) of ``labels`` on the graph of edges (rows, cols).

    Examples
    --------
    >>> import networkx as nx
    >>> G = nx.barbell_graph(4, 0); e = np.array(G.edges())
    >>> lab = np.array([0] * 4 + [1] * 4); d = np.bincount(e.ravel())
    >>> q = labels_modularity(e[:, 0], e[:, 1], d, lab)
    >>> bool(np.isclose(q, nx.community.modularity(G, [range(4), range(4, 8)])))
    True
    """
    m = rows.size
    if m == 0:
        return float("nan")
    k = int(labels.max()) + 1
    inside = np.bincount(labels[rows][labels[rows] == labels[cols]], minlength=k)
    vol = np.bincount(labels, weights=deg, minlength=k)
    return float(inside.sum() / m - np.sum((vol / (2.0 * m)) ** 2))


def harmonic_diameter(A: Any, sources: int | None = None, rng: Any = None) -> tuple[float, float]:
    """Harmonic diameter n(n-1) / sum_{u != v} 1/d(u, v) and its sampling standard error.

    Exact (standard error 0) when ``sources`` is None or >= n; otherwise the
    sum is estimated from ``sources`` BFS roots drawn uniformly without
    replacement: S^ = (n / k) sum over the roots of s_u, s_u = sum_v 1/d(u, v),
    with standard error n sqrt((1 - k/n) var(s) / k), carried to the
    diameter by the delta method (se(HD) = HD se(S^) / S^).

    Parameters
    ----------
    A : scipy.sparse matrix
        Symmetric adjacency (n x n).
    sources : int, optional
        Number of BFS roots; None for every node.
    rng : numpy.random.Generator, optional
        Draws the roots.

    Returns
    -------
    (float, float)
        The harmonic diameter (inf for a graph without edges) and its
        standard error.

    Examples
    --------
    >>> import networkx as nx
    >>> A = nx.to_scipy_sparse_array(nx.path_graph(4))
    >>> hd, se = harmonic_diameter(A)
    >>> bool(np.isclose(hd, nx.harmonic_diameter(nx.path_graph(4)))), se
    (True, 0.0)
    """
    from scipy.sparse.csgraph import shortest_path

    n = A.shape[0]
    if n < 2:
        return float("nan"), float("nan")
    exact = sources is None or sources >= n
    roots = np.arange(n) if exact else np.sort(np.random.default_rng(rng).choice(n, int(sources),
                                                                                  replace=False))
    s = np.empty(roots.size)
    chunk = max(1, (1 << 22) // n)
    for i in range(0, roots.size, chunk):
        D = shortest_path(A, method="D", unweighted=True, directed=False, indices=roots[i:i + chunk])
        with np.errstate(divide="ignore"):
            inv = np.where(np.isfinite(D) & (D > 0), 1.0 / D, 0.0)
        s[i:i + chunk] = inv.sum(axis=1)
    k = roots.size
    total = s.sum() * (n / k)
    if total <= 0:
        return float("inf"), 0.0
    hd = n * (n - 1) / total
    if exact or k < 2:
        return float(hd), 0.0
    se_total = n * np.sqrt((1 - k / n) * s.var(ddof=1) / k)
    return float(hd), float(hd * se_total / total)


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


def _local(deg: np.ndarray, rows: np.ndarray, cols: np.ndarray, n: int) -> dict:
    """Triangles per node, transitivity, clustering per node, density, assortativity."""
    import scipy.sparse as sp

    A = sp.csr_array((np.ones(2 * rows.size), (np.concatenate([rows, cols]),
                                               np.concatenate([cols, rows]))), shape=(n, n))
    tri = np.asarray((A @ A).multiply(A).sum(axis=1)).ravel() / 2.0
    wedges = deg * (deg - 1) / 2.0
    W = wedges.sum()
    return {
        "A": A,
        "triangles": float(tri.sum() / 3.0),
        "transitivity": float(tri.sum() / W) if W > 0 else 0.0,
        "clustering": np.where(wedges > 0, tri / np.maximum(wedges, 1.0), 0.0),
        "density": float(2.0 * rows.size / (n * (n - 1))) if n > 1 else float("nan"),
        "assortativity": _assortativity(deg, rows, cols),
    }


def graph_stats(H: Any, nodes: Any, seed: int = 0, hd_sources: int | None = 200) -> dict:
    """The SoK statistics of a (synthetic) networkx graph on the node set ``nodes``.

    Louvain (networkx, ``seed``) gives the partition and the modularity the
    SoK scores; the harmonic diameter uses ``hd_sources`` BFS roots (all
    nodes when None or >= n; see :func:`harmonic_diameter`).
    """
    import networkx as nx

    idx = {v: i for i, v in enumerate(nodes)}
    n = len(nodes)
    e = np.array([(idx[a], idx[b]) for a, b in H.edges()], dtype=np.int64).reshape(-1, 2)
    rows, cols = e[:, 0], e[:, 1]
    deg = np.bincount(np.concatenate([rows, cols]), minlength=n).astype(np.int64)
    out = _local(deg, rows, cols, n)
    out["degrees"] = deg
    hd, hd_se = harmonic_diameter(out.pop("A"), hd_sources, seed)
    out["harmonic_diameter"], out["harmonic_diameter_se"] = hd, hd_se
    out["partition"], out["modularity"] = None, float("nan")
    if rows.size:
        part = nx.community.louvain_communities(H, seed=seed)
        out["partition"] = part
        out["modularity"] = labels_modularity(rows, cols, deg, partition_labels(part, nodes))
    return out


def truth_stats(G: Any, name: str, dept: dict | None = None) -> dict:
    """The true graph's statistics (exact harmonic diameter, Louvain seed 0) and scoring aids."""
    from dpgraph.graph import canonical_node_order

    nodes = canonical_node_order(G.nodes())
    t = graph_stats(G, nodes, seed=0, hd_sources=None)
    idx = {v: i for i, v in enumerate(nodes)}
    e = np.array([(idx[a], idx[b]) for a, b in G.edges()], dtype=np.int64).reshape(-1, 2)
    t.update(name=name, nodes=nodes, rows=e[:, 0], cols=e[:, 1],
             labels=partition_labels(t["partition"], nodes), count_vector=count_vector(t["degrees"]),
             clustering_counts=clustering_counts(t["clustering"]),
             dept=np.array([dept[v] for v in nodes]) if dept is not None else None)
    return t


def naive_stats(R: Any) -> dict:
    """The statistics of the raw release treated as the graph (no Louvain, no distances).

    Louvain on millions of released edges takes minutes and the release's
    distances are all 1 or 2 at small epsilon, so the naive row has no
    partition and no harmonic diameter.  Triangles per node come from the
    dense release in row blocks (the release is dense at small epsilon).
    """
    Y = R.to_scipy_sparse("csr").astype(np.float32).toarray()
    n = Y.shape[0]
    rows, cols = R.released_edges()
    rows, cols = rows.astype(np.int64), cols.astype(np.int64)
    deg = np.bincount(np.concatenate([rows, cols]), minlength=n).astype(np.int64)
    tri = np.zeros(n)
    b = max(1, min(n, (1 << 21) // max(n, 1)))
    for i0 in range(0, n, b):
        C = Y[i0: i0 + b] @ Y
        tri[i0: i0 + b] = 0.5 * np.sum(C * Y[i0: i0 + b], axis=1, dtype=np.float64)
    del Y
    wedges = deg * (deg - 1) / 2.0
    W = wedges.sum()
    return {
        "triangles": float(tri.sum() / 3.0),
        "transitivity": float(tri.sum() / W) if W > 0 else 0.0,
        "clustering": np.where(wedges > 0, tri / np.maximum(wedges, 1.0), 0.0),
        "density": float(2.0 * rows.size / (n * (n - 1))) if n > 1 else float("nan"),
        "assortativity": _assortativity(deg, rows, cols),
        "degrees": deg, "partition": None, "modularity": float("nan"),
        "harmonic_diameter": float("nan"), "harmonic_diameter_se": float("nan"),
    }


def _covered(est: tuple | None, truth: float) -> tuple[float, float]:
    """(interval covers truth, resolved) of an estimate given as (value, lo, hi, resolved)."""
    if est is None:
        return float("nan"), float("nan")
    _, lo, hi, resolved = est
    return float(lo <= truth <= hi), float(resolved)


def score(truth: dict, m: dict) -> dict:
    """The metric columns of one method's answer ``m``, never clipped.

    ``m`` holds the statistics of :func:`graph_stats` (or ``degree_hist``,
    a histogram of fractions, in place of ``degrees``), and optionally
    ``estimates``: {statistic: (value, ci_low, ci_high, resolved)} and
    ``reported_modularity`` with ``modularity_ci`` for dpgraph's estimators.
    A statistic the method does not give (None or NaN) scores NaN.
    """
    nodes = truth["nodes"]
    n = len(nodes)
    row: dict = {}
    row["transitivity_err"] = abs(m["transitivity"] - truth["transitivity"])
    row["transitivity_rel"] = cal_rel(truth["transitivity"], m["transitivity"])
    row["triangles_rel"] = cal_rel(truth["triangles"], m["triangles"])
    if m.get("degree_hist") is not None:
        hist = np.asarray(m["degree_hist"], dtype=float)
        row["degree_kl"] = degree_kl(truth["degrees"], hist)
        row["degree_w1"] = wasserstein(truth["count_vector"], count_vector(sequence_from_hist(hist, n)))
    else:
        row["degree_kl"] = degree_kl(truth["degrees"], count_vector(m["degrees"]))
        row["degree_w1"] = wasserstein(truth["count_vector"], count_vector(m["degrees"]))
    row["density_err"] = abs(m["density"] - truth["density"])
    row["assortativity_err"] = abs(m["assortativity"] - truth["assortativity"])
    row["clustering_w1"] = wasserstein(truth["clustering"], m["clustering"])
    row["clustering_kl"] = cal_kl(truth["clustering_counts"], clustering_counts(m["clustering"]))
    hd = m.get("harmonic_diameter", float("nan"))
    row["harmonic_diameter_rel"] = cal_rel(truth["harmonic_diameter"], hd)
    row["harmonic_diameter_rel_se"] = m.get("harmonic_diameter_se", float("nan")) / truth[
        "harmonic_diameter"]
    row["modularity_err"] = abs(m["modularity"] - truth["modularity"])
    row["modularity_rel"] = cal_rel(truth["modularity"], m["modularity"])
    if m.get("partition") is not None:
        lab = partition_labels(m["partition"], nodes)
        row["nmi"], row["ari"] = nmi(truth["labels"], lab), ari(truth["labels"], lab)
        q_true = labels_modularity(truth["rows"], truth["cols"], truth["degrees"], lab)
        row["partition_true_modularity"] = q_true
        if m.get("reported_modularity") is not None:
            row["modularity_reported_err"] = abs(m["reported_modularity"] - q_true)
            lo, hi = m["modularity_ci"]
            row["modularity_covered"] = float(lo <= q_true <= hi)
        if truth.get("dept") is not None:
            row["nmi_dept"], row["ari_dept"] = nmi(truth["dept"], lab), ari(truth["dept"], lab)
    est = m.get("estimates", {})
    for stat in ("triangles", "transitivity", "density", "assortativity"):
        row[f"{stat}_covered"], row[f"{stat}_resolved"] = _covered(est.get(stat), truth[stat])
    if "communities_resolvable" in m:
        row["communities_resolvable"] = float(m["communities_resolvable"])
    return {k: float(row.get(k, float("nan"))) for k in METRICS if k not in (
        "seconds", "peak_mib", "score_seconds")}
