"""Degree moments, degree assortativity and the degree distribution.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.estimate import BoundInterval, Estimate
from ...core.estimators import Channel
from .._memory import check_fits
from ..protocol import Release
from ._shared import (
    Z95,
    _cache,
    _entry_map,
    _observed_degrees,
    _undirected,
    analytic,
    check_proper,
)
from .counts import number_of_edges


def degree_moments(R: Release) -> dict:
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
    m = float(number_of_edges(R).value)
    W = float(np.sum(0.5 * (D * D - Q)))
    S3 = float(np.sum((D**3 - 3 * D * Q + 2 * R3) / 6.0))
    u = D - z0
    P = z0 * (u.sum() ** 2 - np.sum(u * u)) / 2.0
    A = R.to_scipy_sparse("coo")
    up = A.row < A.col
    i, j = A.row[up], A.col[up]
    P += float(np.sum(z1 * (D[i] - z1) * (D[j] - z1) - z0 * (D[i] - z0) * (D[j] - z0)))
    return {"m": m, "d2": 2 * W + 2 * m, "d3": 2 * m + 6 * W + 6 * S3, "B": m + 2 * W + P}


@analytic
def degree_assortativity(R: Release, proper: bool = True) -> Estimate:
    """Degree assortativity (networkx's Pearson coefficient) from unbiased moments.

    r = (B/m - mu^2) / (d3 / 2m - mu^2), mu = d2 / 2m, with the unbiased
    moments of :func:`degree_moments`: a consistent ratio estimator, not
    unbiased.  **No error bar**: its sampling spread has no closed form here,
    so ``ci()`` is the whole feasible range [-1, 1], ``std`` the matching
    equivalent (1 / 1.96) and ``resolved`` is False; the value is a point
    estimate only (docs/analytics.md tabulates its error over releases).

    Parameters
    ----------
    proper : bool, default True
        Value clipped to [-1, 1] (0 when the estimated edge count or degree
        variance is <= 0); False returns the raw ratio (NaN in those cases).

    Returns
    -------
    Estimate
        The point estimate; its interval is the whole feasible range [-1, 1].

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.barabasi_albert_graph(300, 3, seed=1)
    >>> r = dpgraph.release(G, epsilon=4.0, seed=0).degree_assortativity()
    >>> abs(r.value - nx.degree_assortativity_coefficient(G)) < 0.1
    True
    """
    proper = check_proper(proper)
    mo = degree_moments(R)
    m = mo["m"]
    raw = float("nan")
    if m > 0:
        mu = mo["d2"] / (2 * m)
        num = mo["B"] / m - mu * mu
        den = mo["d3"] / (2 * m) - mu * mu
        raw = num / den if den > 0 else float("nan")
    value = (float(np.clip(raw, -1.0, 1.0)) if np.isfinite(raw) else 0.0) if proper else raw
    # no error bar: the interval is the whole feasible range and the estimate is unresolved
    return Estimate(value, 2.0 / (2 * Z95), exact_std=False, feasible_range=(-1.0, 1.0),
                    proper=proper, raw=raw, interval=BoundInterval(-1.0, 0.0, 1.0, 0.0),
                    unresolved="assortativity has no error bar here (its interval is [-1, 1])")


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
    alpha, beta = channel.alpha, channel.beta
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


class DegreeDistribution(np.ndarray):
    """A degree histogram h[d] (an array summing to 1) with its uncertainty band.

    Attributes
    ----------
    lower, upper : numpy.ndarray
        Pointwise band: the smallest and largest h[d] over the models the
        release does not reject at ``level`` (profile likelihood).  A wide
        band says the release pins the shape down little.
    method : str
        "lognormal", "negbin" (fitted families) or "em" (nonparametric).
    params : dict
        Fitted parameters (family models) or {} (EM).
    level : float
        Level of the band.
    """

    lower: np.ndarray
    upper: np.ndarray
    method: str
    params: dict
    level: float

    def __new__(
        cls, h: np.ndarray, lower: np.ndarray, upper: np.ndarray, method: str, params: dict,
        level: float,
    ) -> DegreeDistribution:
        obj = np.asarray(h, dtype=float).view(cls)
        obj.lower, obj.upper = np.asarray(lower, float), np.asarray(upper, float)
        obj.method, obj.params, obj.level = method, dict(params), float(level)
        return obj

    def __array_finalize__(self, obj: Any) -> None:
        if obj is None:
            return
        for a, default in (("lower", None), ("upper", None), ("method", ""), ("params", {}),
                           ("level", float("nan"))):
            setattr(self, a, getattr(obj, a, default))

    def __reduce__(self):  # plain array on pickling: the band travels as attributes only here
        return (np.asarray, (np.asarray(self),))


def _support(R: Any) -> int:
    """Largest true degree with non-negligible likelihood: max debiased degree + 6 noise sd."""
    n = R.number_of_nodes()
    ch = R.channel
    obs = _observed_degrees(R)
    v0, v1 = ch.entry_variances()
    s = float(np.sqrt((n - 1) * max(v0, v1)))
    top = float(ch.debias(float(obs.max()), n - 1))
    return int(min(n - 1, max(2, np.ceil(top + 6 * s + 3))))


def _transition(R: Any, dmax: int) -> np.ndarray:
    cache = _cache(R)
    key = ("degP", dmax)
    if key not in cache:
        cache[key] = degree_transition_matrix(R.number_of_nodes(), R.channel, max_degree=dmax)
    return cache[key]


def _family_pmfs(family: str, dmax: int, shapes: np.ndarray, locs: np.ndarray) -> np.ndarray:
    """pmfs on 0..dmax (rows: every (shape, loc) of the grid), the last bin holding the tail."""
    from scipy import stats

    d = np.arange(dmax + 2, dtype=float)
    S, M = np.meshgrid(shapes, locs, indexing="ij")
    S, M = S.ravel()[:, None], M.ravel()[:, None]
    if family == "lognormal":  # D = floor(X), log X ~ N(log median, sigma), X >= 1 (D >= 1)
        cdf = np.zeros((S.shape[0], d.size))
        F = stats.norm.cdf((np.log(d[1:]) - np.log(M)) / S)
        cdf[:, 1:] = (F - F[:, :1]) / np.maximum(1 - F[:, :1], 1e-300)
    elif family == "negbin":  # shape r, mean M
        cdf = stats.nbinom.cdf(d - 1, S, S / (S + M))
    else:  # pragma: no cover - validated by the caller
        raise ValueError(family)
    q = np.diff(cdf, axis=1)[:, : dmax + 1]
    q[:, -1] += 1.0 - cdf[:, dmax + 1]
    return np.clip(q, 0.0, None) / np.maximum(q.sum(axis=1, keepdims=True), 1e-300)


_FAMILY_DEFAULT = {"lognormal": 0.6, "negbin": 3.0}
_FAMILY_GRIDS = {
    "lognormal": np.geomspace(0.12, 2.5, 28),
    "negbin": np.geomspace(0.3, 300.0, 28),
}


def _fit_family(R: Any, family: str, level: float):
    from scipy.stats import chi2

    n = R.number_of_nodes()
    obs = _observed_degrees(R)
    dmax = _support(R)
    P = _transition(R, dmax)
    ys, cy = np.unique(obs, return_counts=True)
    Py = P[ys]
    dh = np.asarray(R.channel.debias(obs.astype(float), n - 1))
    top = max(float(np.quantile(dh, 0.999)), 2.0)
    locs = np.geomspace(0.2, min(max(top, 3.0), dmax), 64)
    shapes = _FAMILY_GRIDS[family]
    Q = _family_pmfs(family, dmax, shapes, locs)
    ll = np.log(np.maximum(Py @ Q.T, 1e-300)).T @ cy  # one log-likelihood per model
    ok = 2 * (ll.max() - ll) <= chi2.ppf(level, 2)
    # the shape is barely identified at small epsilon (the likelihood is flat in it):
    # take the shape the release does not reject that is nearest the family's default
    # (chosen on the graph zoo), then the most likely location for it
    okshape = ok.reshape(shapes.size, locs.size).any(axis=1)
    dist = np.where(okshape, np.abs(np.log(shapes / _FAMILY_DEFAULT[family])), np.inf)
    si = int(np.argmin(dist))
    best = si * locs.size + int(np.argmax(ll.reshape(shapes.size, locs.size)[si]))
    params = {"shape": float(shapes[best // locs.size]), "loc": float(locs[best % locs.size]),
              "loglik": float(ll[best])}
    h = np.zeros(n)
    lo, hi = np.zeros(n), np.zeros(n)
    h[: dmax + 1] = Q[best]
    lo[: dmax + 1] = Q[ok].min(axis=0)
    hi[: dmax + 1] = Q[ok].max(axis=0)
    return h, lo, hi, params


@analytic
def degree_distribution(
    R: Release,
    method: str = "lognormal",
    level: float = 0.95,
    iterations: int = 300,
    smoothing: float = 0.25,
    tol: float = 1e-7,
) -> DegreeDistribution:
    """Estimated degree histogram of the input graph, with an uncertainty band.

    The released degree of a node of true degree d is
    Binomial(d, alpha) + Binomial(n - 1 - d, beta)
    (:func:`degree_transition_matrix`), so the released degrees are a sample
    from the mixture sum_d h(d) P(. | d).  At small epsilon that noise (sd
    about sqrt((n - 1) v), some 50 degrees at eps = 1 and n = 3,000) hides
    the shape of a sparse graph's histogram: the data pin down its mean and
    its heavy tail, little else.  So the default fits a two-parameter family
    by maximum likelihood through the exact channel, and the band shows every
    member of the family the release does not reject:

    ``method="lognormal"`` (default): D = floor(X), X log-normal; chosen on
    the graph zoo (docs/analytics.md) as the family closest to the truth
    over sparse and dense, heavy-tailed and homogeneous graphs.
    ``method="negbin"``: negative binomial (shape r, mean mu).
    ``method="em"``: nonparametric EM on the mixture weights with a light
    smoothing step (EMS, weight ``smoothing``); the band is the fit itself
    (no likelihood set).

    The support is 0 .. (largest debiased released degree + 6 noise sd), so
    the cost is one n x support transition matrix, not n x n.  Post-processing
    of the release only.

    Parameters
    ----------
    R : PrivateGraph
        Undirected release.
    method : {"lognormal", "negbin", "em"}, default "lognormal"
    level : float, default 0.95
        Level of the band (profile-likelihood set: 2 (l_max - l) <= chi2_2(level)).
    iterations, smoothing, tol
        EM only: maximum iterations, smoothing weight in [0, 1), stopping
        tolerance on the L1 change of h.

    Returns
    -------
    DegreeDistribution, shape (n,)
        h[d] = estimated fraction of nodes with degree d (sums to 1), an
        ndarray with ``lower``, ``upper``, ``method``, ``params``, ``level``.

    Raises
    ------
    ValueError
        Unknown ``method``, ``smoothing`` outside [0, 1), ``level`` outside
        (0, 1), or a directed release.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.random_regular_graph(10, 200, seed=0)
    >>> h = dpgraph.release(G, epsilon=3.0, seed=1).degree_distribution()
    >>> h.shape, round(float(h.sum()), 6), abs(float(h @ np.arange(200)) - 10) < 2
    ((200,), 1.0, True)
    >>> bool(np.all(h.lower <= h) and np.all(h <= h.upper))
    True
    """
    _undirected(R, "degree_distribution")
    if method not in ("lognormal", "negbin", "em"):
        raise ValueError(f"method must be 'lognormal', 'negbin' or 'em', got {method!r}")
    if not (0.0 <= smoothing < 1.0):
        raise ValueError(f"smoothing must be in [0, 1), got {smoothing!r}")
    if not (0.0 < level < 1.0):
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    if method != "em":
        h, lo, hi, params = _fit_family(R, method, level)
        return DegreeDistribution(h, lo, hi, method, params, level)
    n = R.number_of_nodes()
    obs = _observed_degrees(R)
    dmax = _support(R)
    P = _transition(R, dmax)
    ys, cy = np.unique(obs, return_counts=True)
    Pn, cn = P[ys], cy / cy.sum()
    h = np.full(dmax + 1, 1.0 / (dmax + 1))
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
    out = np.zeros(n)
    out[: dmax + 1] = h
    return DegreeDistribution(out, out, out, "em", {}, level)
