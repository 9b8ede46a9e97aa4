"""Community detection from a release (spectral on the debiased adjacency).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ...core.estimators import Estimate
from ._shared import _check_max_communities, _check_seed, _undirected
from .counts import edge_count
from .modularity import _modularity_from_labels
from .spectral import _debiased_operator, _leading_eigen, _noise_edge
from .synthesis import synthesize

if TYPE_CHECKING:  # pragma: no cover
    from ..private import PrivateGraph



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
