"""Debiased Newman modularity of a given partition.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from ...core.estimators import Estimate, count_estimate, unbiased_estimate
from ._shared import _entry_variances, _observed_degrees, _undirected
from .counts import edge_count

if TYPE_CHECKING:  # pragma: no cover
    from ..private import PrivateGraph



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
        Partition with an unknown node, a node in two communities, or not
        covering every node; estimated edge count <= 0; a directed release.

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
