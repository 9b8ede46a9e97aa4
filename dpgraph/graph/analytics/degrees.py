"""Degree moments, degree assortativity and the degree distribution.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...core.estimators import Channel, Estimate
from .._memory import check_fits
from ._shared import _alpha_beta, _cache, _entry_map, _observed_degrees, _undirected
from .counts import edge_count

if TYPE_CHECKING:  # pragma: no cover
    from ..private import PrivateGraph



def degree_moments(R: PrivateGraph) -> dict:
    """Unbiased estimates of the degree moments behind degree assortativity.

    Returns m, sum_v d_v^2, sum_v d_v^3 and B = sum_{edges} d_i d_j, each
    unbiased: with a_ij = d_i - x_ij, B = m + 2 W + P where
    P = sum_{i<j} x_ij a_ij a_ji is estimated by sum_{i<j} Z_ij (D_i - Z_ij)(D_j - Z_ij)
    (all factors over distinct pairs; D the row sums of Z), computed as its
    value with every Y_ij = 0 in closed form plus a correction over the
    released edges; sum_v C(d_v, 3) is the elementary symmetric polynomial
    (D^3 - 3 D Q + 2 R3) / 6 of each row.  O(n + released edges).

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> mo = degree_moments(dpgraph.release(nx.star_graph(5), epsilon=50.0, seed=0))
    >>> [round(mo[k]) for k in ("m", "d2", "d3", "B")]
    [5, 30, 130, 25]
    """
    _undirected(R, "degree moments")
    n = R.number_of_nodes()
    z0, z1 = _entry_map(R.channel)
    deg = _observed_degrees(R).astype(float)
    D = (n - 1) * z0 + (z1 - z0) * deg
    Q = (n - 1) * z0**2 + (z1**2 - z0**2) * deg
    R3 = (n - 1) * z0**3 + (z1**3 - z0**3) * deg
    m = float(edge_count(R).value)
    W = float(np.sum(0.5 * (D * D - Q)))
    S3 = float(np.sum((D**3 - 3 * D * Q + 2 * R3) / 6.0))
    u = D - z0
    P = z0 * (u.sum() ** 2 - np.sum(u * u)) / 2.0
    A = R.to_scipy_sparse("coo")
    up = A.row < A.col
    i, j = A.row[up], A.col[up]
    P += float(np.sum(z1 * (D[i] - z1) * (D[j] - z1) - z0 * (D[i] - z0) * (D[j] - z0)))
    return {"m": m, "d2": 2 * W + 2 * m, "d3": 2 * m + 6 * W + 6 * S3, "B": m + 2 * W + P}


def degree_assortativity(R: PrivateGraph) -> Estimate:
    """Degree assortativity (networkx's Pearson coefficient) from unbiased moments.

    r = (B/m - mu^2) / (d3 / 2m - mu^2), mu = d2 / 2m, with the unbiased
    moments of :func:`degree_moments`: a consistent ratio estimator, not
    unbiased.  **No error bar**: ``std`` is NaN (and ``exact_std`` False), so
    the Estimate's ``ci()`` is not informative; only ``value`` is meaningful.
    ``value`` is NaN when the estimated edge count or degree variance is <= 0.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.barabasi_albert_graph(300, 3, seed=1)
    >>> r = dpgraph.release(G, epsilon=4.0, seed=0).degree_assortativity()
    >>> abs(r.value - nx.degree_assortativity_coefficient(G)) < 0.1
    True
    """
    mo = degree_moments(R)
    m = mo["m"]
    if m <= 0:
        return Estimate(float("nan"), float("nan"), -1.0, 1.0, exact_std=False)
    mu = mo["d2"] / (2 * m)
    num = mo["B"] / m - mu * mu
    den = mo["d3"] / (2 * m) - mu * mu
    r = num / den if den > 0 else float("nan")
    return Estimate(float(np.clip(r, -1.0, 1.0)), float("nan"), -1.0, 1.0, exact_std=False)


def degree_transition_matrix(n: int, channel: Channel, max_degree: int | None = None) -> np.ndarray:
    """P[k, d] = P(released degree k | true degree d) for an n-node undirected release.

    The released degree of a node of true degree d is
    Binomial(d, alpha) + Binomial(n - 1 - d, beta) (independent pairs); the
    two pmfs are convolved by FFT in chunks of d.

    Parameters
    ----------
    n : int
        Number of nodes.
    channel : Channel
        Binary release channel.
    max_degree : int, optional
        Largest true degree in the support (default n - 1).

    Returns
    -------
    numpy.ndarray, shape (n, max_degree + 1)
        Columns sum to 1.

    Examples
    --------
    >>> from dpgraph.core import Channel
    >>> P = degree_transition_matrix(5, Channel.binary(1.0, 0.0))
    >>> bool(np.allclose(P, np.eye(5)))
    True
    """
    from scipy.stats import binom

    if n < 2:
        raise ValueError(f"n must be >= 2, got {n}")
    alpha, beta = _alpha_beta(channel)
    dmax = n - 1 if max_degree is None else int(min(max_degree, n - 1))
    check_fits(2 * n * (dmax + 1) * 8, f"the {n} x {dmax + 1} degree transition matrix")
    L = 1 << int(np.ceil(np.log2(2 * n)))
    k = np.arange(n)
    P = np.empty((n, dmax + 1))
    chunk = max(1, (1 << 22) // L)
    for d0 in range(0, dmax + 1, chunk):
        d = np.arange(d0, min(dmax + 1, d0 + chunk))[:, None]
        a = binom.pmf(k[None, :], d, alpha)
        b = binom.pmf(k[None, :], n - 1 - d, beta)
        conv = np.fft.irfft(np.fft.rfft(a, L, axis=1) * np.fft.rfft(b, L, axis=1), L, axis=1)
        block = np.clip(conv[:, :n], 0.0, None)
        block /= block.sum(axis=1, keepdims=True)
        P[:, d0 : d0 + d.shape[0]] = block.T
    return P


def degree_distribution(
    R: PrivateGraph,
    iterations: int = 300,
    smoothing: float = 0.25,
    tol: float = 1e-7,
) -> np.ndarray:
    """Estimated degree histogram of the input graph by deconvolution (EM).

    The released degrees are a sample from the mixture sum_d h(d) P(. | d)
    (:func:`degree_transition_matrix`); EM on the mixture weights h, started
    from the uniform histogram, with a light smoothing step (EMS: each
    iteration averages h(d) with its neighbours, weight ``smoothing``) to stop
    the deconvolution from fitting sampling noise with spikes.  Post-processing
    of the release only.

    Parameters
    ----------
    R : PrivateGraph
        Undirected release.
    iterations : int, default 300
        Maximum EM iterations.
    smoothing : float, default 0.25
        Weight of the neighbour average in the smoothing step (0 = plain EM).
    tol : float
        Stop when the L1 change of h falls below this.

    Returns
    -------
    numpy.ndarray, shape (n,)
        h[d] = estimated fraction of nodes with degree d (sums to 1);
        multiply by ``R.number_of_nodes()`` for counts.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.random_regular_graph(10, 200, seed=0)
    >>> h = dpgraph.release(G, epsilon=3.0, seed=1).degree_distribution()
    >>> h.shape, round(float(h.sum()), 6), abs(float(h @ np.arange(200)) - 10) < 2
    ((200,), 1.0, True)
    """
    _undirected(R, "degree_distribution")
    if not (0.0 <= smoothing < 1.0):
        raise ValueError(f"smoothing must be in [0, 1), got {smoothing!r}")
    n = R.number_of_nodes()
    obs = _observed_degrees(R)
    counts = np.bincount(obs, minlength=n).astype(float)
    cache = _cache(R)
    if "degP" not in cache:
        cache["degP"] = degree_transition_matrix(n, R.channel)
    P = cache["degP"]
    nz = counts > 0
    Pn, cn = P[nz], counts[nz] / counts.sum()
    h = np.full(n, 1.0 / n)
    for _ in range(int(iterations)):
        mix = Pn @ h
        h_new = h * (Pn.T @ (cn / np.maximum(mix, 1e-300)))
        if smoothing > 0:
            pad = np.concatenate([h_new[:1], h_new, h_new[-1:]])
            h_new = (1 - smoothing) * h_new + smoothing * 0.5 * (pad[:-2] + pad[2:])
        h_new /= h_new.sum()
        done = np.abs(h_new - h).sum() < tol
        h = h_new
        if done:
            break
    return h
