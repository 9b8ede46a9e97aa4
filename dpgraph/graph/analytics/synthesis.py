"""A synthetic graph from one release (post-processing).
"""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np

from .._memory import check_fits
from ..protocol import Release
from ._shared import (
    _block_rows,
    _check_seed,
    _observed_degrees,
    _undirected,
    analytic,
    progress_range,
)
from .counts import number_of_edges
from .degree_stats import degree_distribution
from .spectral import _leading_eigen, _noise_edge


@analytic
def synthesize(
    R: Release,
    rank: int | None = None,
    seed: int | None = None,
    progress: bool | None = None,
) -> nx.Graph:
    """A sparse networkx graph with about the estimated number of edges.

    Post-processing of the release only (no privacy cost):

    1. a prior edge probability for every pair from the rank-k spectral
       approximation of the debiased adjacency Z (k = eigenvalues above the
       noise edge, or ``rank``), clipped to [1e-4, 1 - 1e-4];
    2. the posterior probability that the pair is an edge given its own
       released bit (Bayes with the channel's alpha, beta);
    3. a target degree for every node: the estimated degree distribution
       (:func:`degree_distribution`) as a sequence of n quantiles scaled to
       2 m^ (m^ = round(number_of_edges)), given to the nodes in the order of
       their debiased released degrees;
    4. pairs in decreasing posterior order become edges while both ends are
       below their target degree; stubs left over are paired at random
       (configuration model), and the highest remaining pairs top the count
       up to m^ (ties broken at random with ``seed``).

    What it preserves: the number of nodes, the estimated edge count, the
    estimated degree sequence (no mass of isolated nodes the input lacks:
    every node gets about its target degree), the community structure the
    spectrum carries (edges concentrate inside the denoised blocks) and
    which nodes are high-degree.  What it does not: triangles and clustering
    are those of a low-rank block model, not of the input (use the
    estimators :meth:`triangles`, :meth:`transitivity` for those numbers);
    individual edges are mostly wrong at small epsilon.

    Parameters
    ----------
    R : PrivateGraph
        Undirected release.
    rank : int or None, default None
        Rank of the spectral prior, in 1..n-2; None: the eigenvalues above the noise edge.
    seed : int or None, default None
        Non-negative seed of the random tie-break.
    progress : bool or None, default None
        Progress bar over the row blocks (tqdm); None shows it for releases of
        5,000 nodes or more when the error stream is a terminal.

    Returns
    -------
    networkx.Graph
        Same nodes as the release, about ``number_of_edges().value`` edges.

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
    >>> H.number_of_nodes(), abs(H.number_of_edges() - R.number_of_edges().value) <= 1
    (80, True)
    """
    import networkx as nx

    _undirected(R, "synthesize")
    seed = _check_seed(seed)
    n, N = R.number_of_nodes(), R.number_of_pairs()
    check_fits(6 * n * n, f"synthesis over the {N} vertex pairs")
    alpha, beta = R.channel.alpha, R.channel.beta
    m_hat = int(np.clip(round(float(number_of_edges(R).value)), 0, N))
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
    pbar = m_hat / max(N, 1)
    lo, hi = np.log(alpha / beta) if beta > 0 else 50.0, np.log((1 - alpha) / (1 - beta)) if alpha < 1 else -50.0
    rng = np.random.default_rng(seed)
    Ycsr = Y.tocsr()
    rows_all, cols_all, score_all = [], [], []
    b = _block_rows(n)
    for i0 in progress_range(0, n, b, progress, n, "synthesize"):
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
    target = _target_degrees(R, m_hat, rng)
    top = _degree_constrained(rows, cols, score, target, m_hat, rng)
    H = nx.Graph()
    nodes = R.nodes
    H.add_nodes_from(nodes)
    er, ec = top
    H.add_edges_from(zip(map(nodes.__getitem__, er.tolist()), map(nodes.__getitem__, ec.tolist())))
    return H


def _target_degrees(R: Any, m_hat: int, rng: np.random.Generator) -> np.ndarray:
    """Target degree of every node: the estimated distribution's quantiles, summing to 2 m^,
    assigned by the rank of the debiased released degree (random tie-break)."""
    n = R.number_of_nodes()
    h = np.asarray(degree_distribution(R), dtype=float)
    cdf = np.cumsum(h / h.sum())
    seq = np.minimum(np.searchsorted(cdf, (np.arange(n) + 0.5) / n), n - 1).astype(float)
    if seq.sum() > 0:
        seq *= 2.0 * m_hat / seq.sum()
    # stochastic rounding keeps the sum's expectation
    seq = np.floor(seq + rng.random(n)).astype(np.int64)
    seq = np.clip(seq, 0, n - 1)
    order = np.lexsort((rng.random(n), _observed_degrees(R)))
    target = np.empty(n, dtype=np.int64)
    target[order] = np.sort(seq)
    return target


def _degree_constrained(rows: np.ndarray, cols: np.ndarray, score: np.ndarray,
                        target: np.ndarray, m_hat: int,
                        rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the chosen pairs: greedy by score under the degree targets, then
    random pairing of the left-over stubs, then the best remaining pairs up to m^."""
    size = score.size
    if m_hat <= 0 or size == 0:
        return np.array([], dtype=np.int64), np.array([], dtype=np.int64)
    budget = int(min(size, 8 * m_hat + 1000))
    cand = np.argpartition(-score, budget - 1)[:budget] if budget < size else np.arange(size)
    cand = cand[np.argsort(-score[cand], kind="stable")]
    left = target.copy()
    chosen = np.zeros(cand.size, dtype=bool)
    r_c, c_c = rows[cand].tolist(), cols[cand].tolist()
    left_l = left.tolist()
    count = 0
    for t in range(cand.size):
        a, b = r_c[t], c_c[t]
        if left_l[a] > 0 and left_l[b] > 0:
            left_l[a] -= 1
            left_l[b] -= 1
            chosen[t] = True
            count += 1
            if count >= m_hat:
                break
    picked = cand[chosen]
    n = target.size
    taken = set((rows[picked].astype(np.int64) * n + cols[picked]).tolist())
    extra_r, extra_c = [], []
    left = np.asarray(left_l)
    if count < m_hat and left.sum() > 1:
        stubs = rng.permutation(np.repeat(np.arange(n), np.maximum(left, 0)))
        u, v = stubs[0::2][: stubs.size // 2], stubs[1::2][: stubs.size // 2]
        for a, b in zip(np.minimum(u, v).tolist(), np.maximum(u, v).tolist()):
            if a != b and a * n + b not in taken and count < m_hat:
                taken.add(a * n + b)
                extra_r.append(a)
                extra_c.append(b)
                count += 1
    out_r = np.concatenate([rows[picked].astype(np.int64), np.array(extra_r, dtype=np.int64)])
    out_c = np.concatenate([cols[picked].astype(np.int64), np.array(extra_c, dtype=np.int64)])
    if count < m_hat:  # top up with the best pairs not yet taken
        key = rows[cand].astype(np.int64) * n + cols[cand]
        free = cand[~np.isin(key, np.fromiter(taken, dtype=np.int64, count=len(taken)))]
        more = free[: m_hat - count]
        out_r = np.concatenate([out_r, rows[more].astype(np.int64)])
        out_c = np.concatenate([out_c, cols[more].astype(np.int64)])
    return out_r, out_c
