"""Degree moments, degree assortativity and the degree distribution.

The degree distribution's kernel, fit and band live in :mod:`.degree_kernel`,
:mod:`.degree_fit` and :mod:`.degree_band`.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ...core.estimate import BoundInterval, Estimate, apply_proper
from ...core.estimators import Channel
from ...validation import Integer, Interval, Optional, Options, validate_params
from .. import _memory
from .._memory import available_memory, size_text
from ..answers import PROPER, analytic, require_undirected
from ..degree_channel import degree_basis, degree_kernel
from ..protocol import Release
from ._shared import _cache, _entry_map, _observed_degrees
from .counts import number_of_edges
from .degree_kernel import DegreeKernel, kernel_bytes, kernel_rows


def degree_moments(R: Release) -> dict:
    """Unbiased estimates of the degree moments behind degree assortativity.

    Returns m, sum_v d_v^2, sum_v d_v^3 and B = sum_{edges} d_i d_j, each
    unbiased: with a_ij = d_i - x_ij, B = m + 2 W + P where
    P = sum_{i<j} x_ij a_ij a_ji is estimated by sum_{i<j} Z_ij (D_i - Z_ij)(D_j - Z_ij)
    (all factors over distinct pairs; D the row sums of Z), computed as its
    value with every Y_ij = 0 in closed form plus a correction over the
    released edges; sum_v C(d_v, 3) is the elementary symmetric polynomial
    (D^3 - 3 D Q + 2 R3) / 6 of each row.  Time O(n + released edges) (one product
    of the released adjacency with a vector), memory O(n).

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> mo = degree_moments(dpgraph.release(nx.star_graph(5), epsilon=50.0, seed=0))
    >>> [round(mo[k]) for k in ("m", "d2", "d3", "B")]
    [5, 30, 130, 25]
    """
    require_undirected(R, "degree moments")
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
    # the correction over released edges (i, j), bilinear in D: from one product A D with the
    # released adjacency (its own blocks, O(n) memory) instead of a list of the edges
    AD = np.asarray(R.adjacency.matvec(D), dtype=float)
    P += float((z1 - z0) * (D @ AD) / 2.0 - (z1**2 - z0**2) * (deg @ D)
               + (z1**3 - z0**3) * deg.sum() / 2.0)
    return {"m": m, "d2": 2 * W + 2 * m, "d3": 2 * m + 6 * W + 6 * S3, "B": m + 2 * W + P}


@analytic
@validate_params(proper=PROPER)
def degree_assortativity(R: Release, proper: bool = True) -> Estimate:
    """Degree assortativity (networkx's Pearson coefficient) from unbiased moments.

    r = (B/m - mu^2) / (d3 / 2m - mu^2), mu = d2 / 2m, with the unbiased
    moments of :func:`degree_moments`: a consistent ratio estimator, not
    unbiased.  **No error bar**: its sampling spread has no closed form here,
    so ``ci()`` is the whole feasible range [-1, 1], ``std`` is NaN (no
    error bar to state) and ``resolved`` is False; the value is a point
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
    mo = degree_moments(R)
    m = mo["m"]
    raw = float("nan")
    if m > 0:
        mu = mo["d2"] / (2 * m)
        num = mo["B"] / m - mu * mu
        den = mo["d3"] / (2 * m) - mu * mu
        raw = num / den if den > 0 else float("nan")
    # no error bar: the interval is the whole feasible range and the estimate is unresolved
    est = Estimate(raw, float("nan"), exact_std=False, feasible_range=(-1.0, 1.0),
                   interval=BoundInterval(-1.0, 0.0, 1.0, 0.0),
                   unresolved="assortativity has no error bar here (its interval is [-1, 1])")
    return apply_proper(est, proper)  # an undefined ratio: the middle of [-1, 1], 0


def degree_transition_matrix(n: int, channel: Channel, max_degree: int | None = None) -> np.ndarray:
    """P[k, d] = P(released degree k | true degree d) for an n-node undirected release.

    The released degree of a node of true degree d is
    Binomial(d, alpha) + Binomial(n - 1 - d, beta) (independent pairs).  Each
    column is computed on its own window of released degrees (all but 1e-15
    of each binomial, exact convolution) and is zero outside it, so the
    work is (max_degree + 1) x window, not n x n; the returned matrix itself
    has n rows.  :func:`degree_distribution` keeps only the rows inside the
    windows.

    Parameters
    ----------
    n : int
        Number of nodes (>= 2).
    channel : Channel
        Binary release channel (``R.channel``).
    max_degree : int, optional
        Largest true degree in the support (default n - 1).

    Returns
    -------
    numpy.ndarray, shape (n, max_degree + 1)
        Columns sum to 1.

    Raises
    ------
    ValueError
        ``n`` < 2 or ``max_degree`` < 0.
    MemoryError
        The n x (max_degree + 1) matrix does not fit; the message gives the
        largest ``max_degree`` that does.

    Examples
    --------
    >>> from dpgraph.core import Channel
    >>> P = degree_transition_matrix(5, Channel.binary(1.0, 0.0))
    >>> bool(np.allclose(P, np.eye(5)))
    True
    """
    n = int(n)
    if n < 2:
        raise ValueError(f"n must be >= 2, got {n}")
    if max_degree is not None and int(max_degree) < 0:
        raise ValueError(f"max_degree must be None or >= 0, got {max_degree}")
    dmax = n - 1 if max_degree is None else int(min(max_degree, n - 1))
    need = 8 * n * (dmax + 1) + kernel_bytes(n, channel.alpha, channel.beta, dmax)
    avail = available_memory()
    if need > max(avail, _memory.SMALL):
        fit = max(0, int(avail // (16 * n)) - 1)
        raise MemoryError(
            f"the {n:,} x {dmax + 1:,} degree transition matrix needs {size_text(need)} "
            f"but {size_text(avail)} is available; nothing was allocated. Instead: pass "
            f"max_degree={fit:,} or less "
            "(degree_distribution needs only the rows inside each column's window)")
    K = DegreeKernel(n, channel.alpha, channel.beta, dmax, what="degree transition matrix")
    P = np.zeros((n, dmax + 1))
    P[K.y0 : K.y1 + 1] = K.pmf
    return P


class DegreeDistribution(np.ndarray):
    """A degree histogram h[d] (an array summing to 1) with its confidence band.

    ``h[d]`` is the estimated fraction of nodes of degree d, d = 0 .. n - 1.

    Attributes
    ----------
    lower, upper : numpy.ndarray
        Band on the histogram h[d]: simultaneous over all d (the truth lies
        inside at every degree at once with probability about ``level``).
        Derived from the tail band: h[d] = S(d) - S(d + 1).
    ccdf_lower, ccdf_upper : numpy.ndarray
        Band on the tail S(d) = P(degree >= d) (the complementary CDF),
        simultaneous over all d: the smallest and largest tail of every
        histogram in the release's ``level`` confidence set.
    band : str
        ``"simultaneous"`` (both bands above).
    method : str
        The ``method`` asked for: ``"auto"``, ``"lognormal"`` or ``"negbin"``.
    params : dict
        What the fit chose: ``model`` ("families" or "families x spline"), the
        posterior weight of each family and minimum degree, the most likely
        family member, the spline penalty and its held-out likelihood gain,
        the support, and the band's threshold.
    level : float
        Level of the band.
    """

    lower: np.ndarray
    upper: np.ndarray
    ccdf_lower: np.ndarray
    ccdf_upper: np.ndarray
    band: str
    method: str
    params: dict
    level: float

    def __new__(cls, h: np.ndarray, lower: np.ndarray, upper: np.ndarray, method: str,
                params: dict, level: float, ccdf_lower: np.ndarray | None = None,
                ccdf_upper: np.ndarray | None = None,
                band: str = "simultaneous") -> DegreeDistribution:
        obj = np.asarray(h, dtype=float).view(cls)
        obj.lower, obj.upper = np.asarray(lower, float), np.asarray(upper, float)
        tail = _tail(np.asarray(h, float))
        obj.ccdf_lower = tail if ccdf_lower is None else np.asarray(ccdf_lower, float)
        obj.ccdf_upper = tail if ccdf_upper is None else np.asarray(ccdf_upper, float)
        obj.method, obj.params, obj.level, obj.band = method, dict(params), float(level), band
        return obj

    def __array_finalize__(self, obj: Any) -> None:
        if obj is None:
            return
        for a, default in (("lower", None), ("upper", None), ("ccdf_lower", None),
                           ("ccdf_upper", None), ("band", ""), ("method", ""), ("params", {}),
                           ("level", float("nan"))):
            setattr(self, a, getattr(obj, a, default))

    def __reduce__(self):  # plain array on pickling: the band travels as attributes only here
        return (np.asarray, (np.asarray(self),))

    def ccdf(self) -> np.ndarray:
        """The estimated tail S(d) = P(degree >= d), d = 0 .. n - 1 (a plain array)."""
        return _tail(np.asarray(self, float))


def _tail(h: np.ndarray) -> np.ndarray:
    """S(d) = sum_{k >= d} h(k)."""
    return np.clip(np.cumsum(h[::-1])[::-1], 0.0, 1.0)


def _support(R: Any) -> int:
    """Largest true degree with non-negligible likelihood: max debiased degree + 6 noise sd."""
    n = R.number_of_nodes()
    ch = R.channel
    basis = degree_basis(R, _resolution(R))  # the noisy degrees, when a better basis
    if basis is not None:
        return int(min(n - 1, max(2, np.ceil(float(basis[0].max()) + 6 * basis[1] + 3))))
    obs = _observed_degrees(R)
    top = float(ch.debias(float(obs.max()), n - 1))
    return int(min(n - 1, max(2, np.ceil(top + 6 * _resolution(R) + 3))))


def _resolution(R: Any) -> float:
    """Standard deviation of one node's debiased degree (the deconvolution's resolution)."""
    v0, v1 = R.channel.entry_variances()
    return float(np.sqrt((R.number_of_nodes() - 1) * max(v0, v1)))


_FIXED_BYTES = 96 << 20  # blocks of the convolution and of the band's simulation


def _needed_bytes(n: int, alpha: float, beta: float, dmax: int) -> int:
    """Memory of the kernel and its copies alive at once (binned rows, running sum, the
    simulation's sorted array, transients: 5.5 copies measured), the quadrature and the
    blocks."""
    from .degree_fit import _COARSE

    y0, y1 = kernel_rows(n, alpha, beta, dmax)
    cols = dmax + 1
    return (6 * 8 * (y1 - y0 + 1) * cols + 3 * 8 * _COARSE[0] * _COARSE[1] * cols
            + 8 * 64 * n + _FIXED_BYTES)


def _check_memory(R: Any, dmax: int, asked: int | None) -> None:
    n, ch = R.number_of_nodes(), R.channel
    need = _needed_bytes(n, ch.alpha, ch.beta, dmax)
    avail = available_memory()
    if need <= max(avail, _memory.SMALL):
        return
    lo, hi = 0, dmax
    while lo < hi:  # largest support that fits
        mid = (lo + hi + 1) // 2
        if _needed_bytes(n, ch.alpha, ch.beta, mid) <= avail:
            lo = mid
        else:
            hi = mid - 1
    y0, y1 = kernel_rows(n, ch.alpha, ch.beta, dmax)
    if lo >= 1:
        hint = (f"pass max_degree={lo:,} (true degrees above it are treated as {lo:,}; the "
                f"debiased released degrees of this release reach {_support(R):,})")
    else:
        hint = ("no support fits: free memory first (this release's degree counts, "
                "R.degree() and R.number_of_edges(), need only O(n))")
    raise MemoryError(
        f"the degree distribution of this release needs {size_text(need)} "
        f"({y1 - y0 + 1:,} released x {dmax + 1:,} true degrees) but {size_text(avail)} "
        f"is available{'' if asked is None else f' (max_degree={asked:,})'}; nothing was "
        f"allocated. Instead: {hint}")


_METHODS = ("auto", "lognormal", "negbin")


@analytic
@validate_params(method=Options(*_METHODS), level=Interval(numbers.Real, 0, 1, closed="neither"),
                 max_degree=Optional(Integer(minimum=1)))
def degree_distribution(
    R: Release,
    method: str = "auto",
    level: float = 0.95,
    max_degree: int | None = None,
) -> DegreeDistribution:
    """Estimated degree histogram of the input graph, with a simultaneous confidence band.

    The released degree of a node of true degree d is
    Binomial(d, alpha) + Binomial(n - 1 - d, beta), so the released degrees
    are a sample from the mixture sum_d h(d) P(. | d).  At small epsilon
    that noise (sd about sqrt((n - 1) v): some 50 degrees at eps = 1 and
    n = 3,000) hides the shape of a sparse graph's histogram; at large
    epsilon or on large graphs the release pins down more.  The method adapts:

    ``method="auto"`` (default): the posterior mean over two-parameter
    families (D = k0 + Z, Z log-normal-floor or negative binomial, minimum
    degree k0; uniform prior over family and log-parameters, minimum degrees
    above 1 a priori e^-5 as likely and only for the log-normal), times
    exp(spline in log(1 + d)) with a penalty chosen by 5-fold held-out
    likelihood (the spline is dropped where it does not improve the held-out
    likelihood by more than one standard error).  ``"lognormal"``,
    ``"negbin"``: the posterior mean within one family, no spline.  The
    likelihood is that of the released degrees through the exact channel
    (:mod:`~dpgraph.graph.analytics.degree_fit`).  That likelihood takes the
    n degrees as independent, but they share their vertex pairs, so it
    misses half the variance of the mean degree 2 m^ / n; every method's
    estimate is averaged over a shift of all degrees by that missing
    variance (``params["location_variance"]``), a node of degree >= 1 never
    shifted to 0 (the location's spread is no evidence of isolated nodes).

    The band (:mod:`~dpgraph.graph.analytics.degree_band`) does not depend on
    the model: it is the range, over every histogram whose expected
    released-degree distribution stays within a calibrated distance of the
    observed one, of each tail P(D >= d) (``ccdf_lower``, ``ccdf_upper``) and
    hence of each h[d] (``lower``, ``upper``).  Simultaneous over all d at
    ``level``; the distance is calibrated on releases simulated from the fit
    through the exact channel.  A wide band says how little the release pins
    the shape down.

    Memory is O((max_degree + 1) x released-degree window), never n x n (a
    sparse release of 50,000 nodes: about 300 x 50,000 floats); it is
    checked before anything is allocated.  Post-processing of the release only.

    Parameters
    ----------
    R : Release
        Undirected release (dense or sparse).
    method : {"auto", "lognormal", "negbin"}, default "auto"
    level : float, default 0.95
        Level of the band, in (0, 1).
    max_degree : int, optional
        Largest true degree in the support (default: the largest debiased
        released degree + 6 noise sd, at most n - 1).  Degrees above it are
        treated as ``max_degree``.

    Returns
    -------
    DegreeDistribution, shape (n,)
        h[d] = estimated fraction of nodes with degree d (sums to 1), an
        ndarray with ``lower``, ``upper``, ``ccdf_lower``, ``ccdf_upper``,
        ``band``, ``method``, ``params``, ``level``.

    Raises
    ------
    ValueError
        Unknown ``method``, ``level`` outside (0, 1), ``max_degree`` < 1, or
        a directed release.
    MemoryError
        Before allocating, when the kernel does not fit in the memory
        available; the message gives the sizes and a ``max_degree`` that fits.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.random_regular_graph(10, 200, seed=0)
    >>> h = dpgraph.release(G, epsilon=3.0, seed=1).degree_distribution()
    >>> h.shape, round(float(h.sum()), 6), abs(float(h @ np.arange(200)) - 10) < 2
    ((200,), 1.0, True)
    >>> bool(np.all(h.lower <= h) and np.all(h <= h.upper)), h.band
    (True, 'simultaneous')
    >>> bool(h.ccdf_lower[10] <= 1.0 <= h.ccdf_upper[10])  # truth: every node has degree 10
    True
    """
    require_undirected(R, "degree_distribution")
    level = float(level)
    n = R.number_of_nodes()
    dmax = _support(R) if max_degree is None else int(min(max_degree, n - 1))
    key = ("degree_distribution", method, level, dmax)
    cache = _cache(R)
    if key not in cache:
        _check_memory(R, dmax, max_degree)
        cache[key] = _estimate(R, method, level, dmax)
    return _copy(cache[key])


def _copy(h: DegreeDistribution) -> DegreeDistribution:
    return DegreeDistribution(np.array(h), h.lower.copy(), h.upper.copy(), h.method,
                              dict(h.params), h.level, h.ccdf_lower.copy(), h.ccdf_upper.copy(),
                              h.band)


def _estimate(R: Any, method: str, level: float, dmax: int) -> DegreeDistribution:
    n, ch = R.number_of_nodes(), R.channel
    basis = degree_basis(R, _resolution(R))
    if basis is not None:  # the noisy degrees: exact, independent across nodes
        return _estimate_from(R, method, level, dmax, degree_kernel(R, dmax), basis[0],
                              basis[1], 0.0, basis[0])
    y = _observed_degrees(R)
    K = DegreeKernel(n, ch.alpha, ch.beta, dmax, rows=(int(y.min()), int(y.max())))
    # the fit's likelihood takes the degrees as independent: it misses about half the
    # variance of the mean degree 2 m^ / n (the degrees share their pairs); add it back
    shift_var = 0.5 * (2.0 * float(number_of_edges(R, proper=False).std) / n) ** 2
    return _estimate_from(R, method, level, dmax, K, y, _resolution(R), shift_var,
                          np.asarray(ch.debias(y.astype(float), n - 1)))


def _estimate_from(R: Any, method: str, level: float, dmax: int, K: Any, y: np.ndarray,
                   resolution: float, shift_var: float, debiased: np.ndarray
                   ) -> DegreeDistribution:
    from .degree_band import tail_band
    from .degree_fit import FAMILIES, binned, corrected, family_average, location_averaged

    n = R.number_of_nodes()
    data = binned(K, y, resolution)
    top = float(np.clip(np.quantile(debiased, 0.999), 3.0, max(dmax, 3)))
    families = FAMILIES if method == "auto" else (method,)
    h, summary = family_average(data, dmax, top, families)
    params: dict = {"model": "families", "families": summary["family"],
                    "min_degree": summary["min_degree"], "most_likely": summary["most_likely"],
                    "support": dmax, "bin_width": data.width}
    if method == "auto":
        h, spline = corrected(data, h, resolution)
        params.update(spline_penalty=spline["penalty"], heldout_gain=spline["heldout_gain"])
        if np.isfinite(spline["penalty"]):
            params["model"] = "families x spline"
    h = location_averaged(h, shift_var)
    params["location_variance"] = shift_var
    cdf = K.cdf()
    lo_s, hi_s, info = tail_band(K, cdf, y, h, level, data.edges)
    del cdf
    S = np.append(_tail(h), 0.0)
    inside = bool(np.all(S - lo_s >= -1e-9) and np.all(hi_s - S >= -1e-9))
    lo_s, hi_s = np.minimum(lo_s, S), np.maximum(hi_s, S)  # the band always holds the estimate
    lo_s[0] = hi_s[0] = 1.0
    params.update(band_threshold=info["threshold"], band_widened=info["widened"],
                  fit_in_band=inside)
    lo_h = np.clip(lo_s[:-1] - hi_s[1:], 0.0, 1.0)
    hi_h = np.clip(hi_s[:-1] - lo_s[1:], 0.0, 1.0)
    out = np.zeros((5, n))
    out[0, : dmax + 1] = h
    out[1, : dmax + 1], out[2, : dmax + 1] = lo_h, hi_h
    out[3, : dmax + 1], out[4, : dmax + 1] = lo_s[:-1], hi_s[:-1]
    return DegreeDistribution(out[0], out[1], out[2], method, params, level, out[3], out[4])
