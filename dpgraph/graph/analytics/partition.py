"""Debiased Newman modularity of a given partition.

Two estimators: :func:`modularity` (every pair of the release, for a
partition chosen without looking at it) and :func:`heldout_modularity` (the
pairs of a public random part the partition never saw, for a partition found
on the others; used by :func:`~dpgraph.graph.analytics.communities`).
Both read the release through k x k block counts only (a product of the
adjacency with the community indicator), never an n x n array.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any

import numpy as np

from ...core.estimate import Estimate
from ...core.estimators import count_estimate, unbiased_estimate
from ...validation import validate_params
from ..answers import PROPER, analytic, finish, finish_ratio, require_undirected
from ..protocol import Release
from ._shared import _entry_map, _observed_degrees
from .counts import number_of_edges


def _partition_labels(R: Any, partition: Any) -> np.ndarray:
    """Community id (0..k-1) of every node position, validating the partition."""
    if isinstance(partition, (str, bytes)) or not isinstance(partition, Iterable):
        raise TypeError("partition must be an iterable of node collections (e.g. a list of sets)")
    n = R.number_of_nodes()
    lab = np.full(n, -1, dtype=np.int64)
    seen = 0
    for c, block in enumerate(partition):
        idx = R.positions(block, f"partition[{c}]")
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
    within_obs = np.diag(_block_counts(R, lab, k)).copy()
    in_pairs = sizes * (sizes - 1) / 2.0
    out_pairs = sizes * (n - sizes)
    e_c = count_estimate(within_obs, in_pairs, R.channel)
    D_c = unbiased_estimate(
        dsum_obs,
        np.broadcast_to(np.array([[0.0, 2.0], [0.0, 1.0]]), (k, 2, 2)),
        np.stack([in_pairs, out_pairs], axis=1),
        R.channel,
    )
    m_est = number_of_edges(R)
    m = float(m_est.value)
    if m <= 0:
        raise ValueError("the estimated number of edges is <= 0; modularity is undefined")
    E = float(np.sum(e_c.value))
    Dv = np.asarray(D_c.value, dtype=float)
    # D_c = sum_in 2 Z + sum_out Z, so Var D_c = sum_in 4 Var Z + sum_out Var Z with
    # Var Z_ij = v0 + (v1 - v0) x_ij; replacing x_ij by Z_ij gives an unbiased estimate
    # of Var D_c for any channel (the core's std is a worst-case bound for asymmetric ones)
    v0, v1 = R.channel.entry_variances()
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
    return Estimate(float(value), float(np.sqrt(var)), exact_std=False, feasible_range=(-0.5, 1.0))


def _modularity_parts(within_obs: Any, out_obs: Any, sizes: np.ndarray, n: int,
                      channel: Any) -> tuple[Any, Any]:
    """(A, B) with A / B the modularity, each unbiased, from released block counts.

    Q = E/m - sum_c D_c^2 / (4 m^2) = (4 E m - S) / (4 m^2) with E = sum_c e_c,
    S = sum_c D_c^2.  From the channel's unbiased e_c, D_c = 2 e_c + out_c and
    m = E + (sum_c out_c) / 2:  A = 4 (E^ m^ - Var E^) - sum_c (D^_c^2 - Var D^_c)
    and B = 4 (m^2 - Var m^) are unbiased for 4 E m - S and 4 m^2 (E^ and m^
    share the pairs inside communities, so Cov(E^, m^) = Var E^; each variance
    is itself estimated without bias, Var Z_ij = v0 + (v1 - v0) x_ij).
    Vectorised over leading axes (one row per simulated release).
    """
    N = n * (n - 1) / 2.0
    in_pairs = sizes * (sizes - 1) / 2.0
    out_pairs = sizes * (n - sizes)
    v0, v1 = channel.entry_variances()
    e = channel.debias(within_obs, in_pairs)
    z_out = channel.debias(out_obs, out_pairs)
    D = 2.0 * e + z_out
    var_D = 4 * (v0 * in_pairs + (v1 - v0) * e) + (v0 * out_pairs + (v1 - v0) * z_out)
    E = np.sum(e, axis=-1)
    m = E + 0.5 * np.sum(z_out, axis=-1)
    var_E = v0 * in_pairs.sum() + (v1 - v0) * E
    var_m = v0 * N + (v1 - v0) * m
    A = 4 * (E * m - var_E) - np.sum(D * D - var_D, axis=-1)
    B = 4 * (m * m - var_m)
    return A, B


def _block_counts(R: Any, lab: np.ndarray, k: int) -> np.ndarray:
    """Released edges between every pair of communities (k x k, symmetric, diagonal inside).

    H^T A H for the one-hot community matrix H: one product of the adjacency
    with H (a pass over the packed bits or the CSR rows), exact integers.
    """
    n = lab.size
    H = np.zeros((n, k), dtype=np.float64)
    H[np.arange(n), lab] = 1.0
    O = np.rint(H.T @ R.adjacency.matmat(H))  # ordered pairs: the diagonal counts inside twice
    return O - np.diag(np.diag(O)) / 2.0


def _within_out(O: Any) -> tuple[Any, Any]:
    """Released edges inside each community and from it to the rest, from block counts."""
    within = np.diagonal(O, axis1=-2, axis2=-1)
    return within, O.sum(axis=-1) - within


_BOOTSTRAP_MAX_COMMUNITIES = 300
_BOOTSTRAP_DRAWS = 1000


def _bootstrap_moments(R: Any, O: np.ndarray, sizes: np.ndarray) -> tuple[float, float, float]:
    """Var A^, Var B^, Cov(A^, B^) by a parametric bootstrap from the known channel.

    The block edge counts are estimated without bias (e^_cc'); released block
    counts are simulated through the channel, independent per block, normal
    with the binomials' mean beta P + d e and variance
    e alpha (1 - alpha) + (P - e) beta (1 - beta) (e projected onto [0, P]
    in the variance only); (A, B) of :func:`_modularity_parts` on each draw.
    Post-processing with public randomness (fixed seed): reproducible.
    """
    ch = R.channel
    n = R.number_of_nodes()
    k = sizes.size
    pairs = np.outer(sizes, sizes)
    np.fill_diagonal(pairs, sizes * (sizes - 1) / 2.0)
    iu = np.triu_indices(k)
    P = pairs[iu]
    e_hat = np.asarray(ch.debias(O[iu], P), dtype=float)
    ep = np.clip(e_hat, 0, P)
    sd = np.sqrt(ep * ch.alpha * (1 - ch.alpha) + (P - ep) * ch.beta * (1 - ch.beta))
    rng = np.random.default_rng(0)
    sims = ch.beta * P + ch.d * e_hat + sd * rng.standard_normal((_BOOTSTRAP_DRAWS, P.size))
    Os = np.zeros((_BOOTSTRAP_DRAWS, k, k))
    Os[:, iu[0], iu[1]] = sims
    Os[:, iu[1], iu[0]] = sims
    A, B = _modularity_parts(*_within_out(Os), sizes, n, ch)
    C = np.cov(A, B)
    return float(C[0, 0]), float(C[1, 1]), float(C[0, 1])


@analytic
@validate_params(proper=PROPER)
def modularity(R: Release, partition: Iterable[Iterable[Hashable]],
               proper: bool = True) -> Estimate:
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
    proper : bool, default True
        Project the value onto the feasible range [-1/2, 1] (interval centred
        on the debiased value, clipped); False returns the debiased value.

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
    require_undirected(R, "modularity")
    lab = _partition_labels(R, partition)
    n = R.number_of_nodes()
    k = int(lab.max()) + 1
    sizes = np.bincount(lab, minlength=k).astype(float)
    if k > _BOOTSTRAP_MAX_COMMUNITIES:  # too many blocks to simulate: delta method
        if float(number_of_edges(R, proper=False).value) <= 0:
            return finish(Estimate(float("nan"), float("nan"), exact_std=False, feasible_range=(-0.5, 1.0)),
                          proper)
        return finish(_modularity_from_labels(R, lab), proper)
    O = _block_counts(R, lab, k)
    A, B = _modularity_parts(*_within_out(O), sizes, n, R.channel)
    var_A, var_B, cov = _bootstrap_moments(R, O, sizes)
    return finish_ratio(float(A), float(B), var_A, var_B, cov, proper, -0.5, 1.0)


def heldout_modularity(edges: np.ndarray, pairs: np.ndarray, channel: Any, m: Estimate,
                       g: float) -> Estimate:
    """Modularity of a partition estimated from a held-out part of the pairs only.

    The held-out part is a public random fraction g of the pairs (each pair
    independently), which the partition never saw.  ``edges`` and ``pairs``
    are its k x k block counts over ordered pairs (released edges and pairs
    of the part between communities a and b, the diagonal counting each
    pair inside twice).  W = (z0 + (z1 - z0) Y) / g on a held-out pair has,
    given the split, E[W_ij] = A_ij / g, so block sums of W stand for the
    block's sums over all its pairs: C = (z0 pairs + (z1 - z0) edges) / g.
    With e_c = C_cc / 2 and D_c = (C 1)_c, D_c^2 is debiased by an
    unbiased estimate of its variance (per pair the channel's
    v0 + (v1 - v0) A_ij over g^2, A_ij replaced by its estimate, plus the
    variance of which true edges fall in the part, A_ij (1 - g) / g), and
    Q = sum_c e_c / m - sum_c D_c^2 / (4 m^2), m the edge count of the whole
    release (it does not depend on the partition).  The std is the delta
    method over the held-out pairs plus m's own error.

    Examples
    --------
    >>> from dpgraph.core import Channel
    >>> ch = Channel.binary(0.9, 0.1)
    >>> E = np.array([[60.0, 50.0], [50.0, 60.0]])  # released edges, ordered pairs
    >>> P = np.array([[200.0, 400.0], [400.0, 200.0]])  # held-out pairs, ordered
    >>> q = heldout_modularity(E, P, ch, Estimate(125.0, 5.0), 0.5)
    >>> round(q.value, 3), round(q.std, 3)
    (0.322, 0.127)
    """
    z0, z1 = _entry_map(channel)
    C = (z0 * np.asarray(pairs, dtype=float) + (z1 - z0) * np.asarray(edges, dtype=float)) / g
    P = np.asarray(pairs, dtype=float)
    v0, v1 = channel.entry_variances()
    # sum over ordered pairs of Var W_ij: the channel's noise (v0 + (v1 - v0) A_ij) / g^2
    # on held-out pairs, plus which true edges fell in the held-out part, A_ij (1 - g) / g
    # per pair (unconditionally on the split); sums of A_ij replaced by their estimates
    Vb = v0 / g**2 * P + (v1 - v0) / g * C + (1.0 - g) / g * C
    return _modularity_from_blocks(C, Vb, m)


def _modularity_from_blocks(C: np.ndarray, Vb: np.ndarray, m: Estimate) -> Estimate:
    """Modularity and its delta-method std from unbiased ordered-pair block sums C and their variances Vb."""
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
