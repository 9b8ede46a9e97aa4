"""A synthetic graph from one release (post-processing).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .._memory import check_fits
from ._shared import _alpha_beta, _block_rows, _check_seed, _undirected
from .counts import edge_count
from .spectral import _leading_eigen, _noise_edge

if TYPE_CHECKING:  # pragma: no cover
    import networkx as nx

    from ..private import PrivateGraph



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
