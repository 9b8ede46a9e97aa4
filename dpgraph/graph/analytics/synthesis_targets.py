"""How many edges a synthetic graph gets, and how many each node gets.

Two estimates of a release speak about the total degree: the debiased edge
count m^ (unbiased, with its exact standard deviation) and the estimated
degree distribution h (:func:`~.degree_stats.degree_distribution`, whose
mean is the total degree a degree sequence drawn from it has).  When the
release resolves the edge count they agree to within its standard
deviation; when it does not (a subsampled release at small epsilon: m^ is
0 +- millions), m^ is noise, and scaling the distribution's quantiles to
2 m^ stretches its tail by the same factor -- a node of the distribution's
top quantile 160 became a hub of 484 at 10^5 nodes.  So:

* the synthetic edge count is the distribution's, n mean(h) / 2, moved into
  the edge count's 95% interval [m^ - 1.96 sd, m^ + 1.96 sd] when it lies
  outside (:func:`synthetic_edge_count`);
* the degree targets are the quantiles of the distribution closest to h
  (in Kullback-Leibler divergence) with that mean: h exponentially tilted,
  h_t(d) ~ h(d) e^(t d), t = 0 when no move was needed
  (:func:`target_degrees`), so no target exceeds the (1 - 1/2n) quantile
  of the distribution the edge count allows.

The selection of the pairs under these targets is :func:`degree_constrained`.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ...core.estimate import Z95
from ._shared import _observed_degrees
from .counts import _degree_estimate, number_of_edges

_OWN_Z = 4.0  # a node's own degree estimate overrides its quantile target beyond this many sd
_STUB_ROUNDS = 4  # rounds of random stub pairing after the greedy pass


def synthetic_edge_count(R: Any, h: Any) -> tuple[int, dict]:
    """(m_out, info): the synthetic graph's edge count and the numbers it came from.

    m_out = round(clip(n mean(h) / 2, m^ - 1.96 sd, m^ + 1.96 sd)), clipped to
    [0, N] (m^ the raw debiased edge count, sd its exact standard deviation):
    inside the count's 95% interval the release cannot tell the two apart,
    and the distribution knows that degrees are non-negative.  A
    warning says when m^ is within two standard deviations of 0 (the
    release does not pin the size down: the distribution's mean sets it).

    Raises
    ------
    ValueError
        m_out rounds to 0: nothing to synthesize (the message gives both
        estimates and what resolves them).
    """
    n, N = R.number_of_nodes(), R.number_of_pairs()
    est = number_of_edges(R, proper=False)
    value, std = float(est.value), float(est.std)
    hv = np.asarray(h, dtype=float)
    implied = 0.5 * n * float(hv @ np.arange(hv.size)) / max(float(hv.sum()), 1e-300)
    lo, hi = value - Z95 * std, value + Z95 * std
    m_out = int(np.clip(round(min(max(implied, lo), hi)), 0, N))
    info = {"edge_count": value, "edge_count_std": std, "implied_by_distribution": implied,
            "edges": m_out}
    if m_out == 0:
        raise ValueError(
            f"R.synthesize() has nothing to rest on: the estimated edge count is {value:,.0f} "
            f"(std {std:,.0f}) and the degree distribution's mean implies {implied:,.0f}, which "
            "projects to 0 edges, so the synthetic graph would be empty. A release at a larger "
            "epsilon (or, for a sparse release, a larger target_edges) resolves the edge count")
    if value < 2.0 * std:
        warnings.warn(
            f"R.synthesize(): the estimated edge count {value:,.0f} is within two standard "
            f"deviations ({std:,.0f}) of 0, so this release does not resolve the synthetic "
            f"graph's size: its {m_out:,} edges follow the estimated degree distribution's mean "
            f"({implied:,.0f} edges)", UserWarning, stacklevel=4)
    return m_out, info


def band_cap(h: Any, n: int) -> int:
    """The largest degree the distribution's band allows a node: the largest d with
    n * ccdf_upper[d] >= 1 (at least one node of degree d or more within the band)."""
    upper = np.asarray(getattr(h, "ccdf_upper", np.cumsum(np.asarray(h)[::-1])[::-1]), dtype=float)
    allowed = np.flatnonzero(n * upper >= 1.0 - 1e-9)
    return int(min(n - 1, allowed[-1])) if allowed.size else n - 1


def tilted(h: np.ndarray, mean: float) -> np.ndarray:
    """h exponentially tilted to the given mean: h_t(d) ~ h(d) e^(t d), the distribution of
    that mean closest to h in Kullback-Leibler divergence (t by bisection; h itself when its
    mean is already ``mean``; the extreme support point when ``mean`` lies beyond it)."""
    h = np.asarray(h, dtype=float)
    h = h / h.sum()
    d = np.arange(h.size, dtype=float)
    have = float(h @ d)
    support = np.flatnonzero(h > 0)
    if support.size == 0 or abs(have - mean) <= 1e-9 * max(1.0, mean):
        return h
    if mean <= support[0] or mean >= support[-1]:
        out = np.zeros_like(h)
        out[support[0] if mean <= support[0] else support[-1]] = 1.0
        return out
    top = int(support[-1]) + 1  # the tilt keeps the support: work on it only
    logh = np.full(top, -np.inf)
    logh[support] = np.log(h[support])
    dd = d[:top]

    def at(t: float) -> tuple[np.ndarray, float]:
        w = logh + t * dd
        w = np.exp(w - w.max())
        w /= w.sum()
        return w, float(w @ dd)

    lo_t, hi_t = (0.0, 1.0) if mean > have else (-1.0, 0.0)
    while (at(hi_t)[1] < mean) if mean > have else (at(lo_t)[1] > mean):
        if mean > have:
            lo_t, hi_t = hi_t, 2 * hi_t
        else:
            lo_t, hi_t = 2 * lo_t, lo_t
    for _ in range(60):
        mid = 0.5 * (lo_t + hi_t)
        if at(mid)[1] < mean:
            lo_t = mid
        else:
            hi_t = mid
    out = np.zeros_like(h)
    out[:top] = at(0.5 * (lo_t + hi_t))[0]
    return out


def target_degrees(R: Any, h: Any, m_out: int, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """Target degree of every node (summing to 2 m_out up to the overrides), and the band's
    largest degree ``cap`` (:func:`band_cap`).

    Targets: the quantiles (i + 1/2) / n of h tilted to mean 2 m_out / n
    (:func:`tilted`), the few units their sum misses added or taken at random,
    assigned by the rank of the released degree (random tie-break); a node
    whose own degree estimate is further from that quantile than ``_OWN_Z``
    of its exact standard deviations, and than the n-fold two-sided 5% normal
    quantile (so that chance alone moves about 0.05 node of n), gets its own
    estimate instead; every target is at most ``cap``.

    The quantiles of a distribution estimate place the few nodes of a heavy tail badly (a
    hub of degree 250 among 1,000 nodes is 0.1% of the mass, which the estimate spreads over
    a wide range); a hub's own estimate is exact to a few standard deviations.  At 10^4
    nodes and more a fixed 4 sd would let the noise of a few ordinary nodes make hubs."""
    from scipy.stats import norm

    n = R.number_of_nodes()
    cap = band_cap(h, n)
    hv = tilted(np.asarray(h, dtype=float), 2.0 * m_out / n)
    cdf = np.cumsum(hv)
    seq = np.minimum(np.searchsorted(cdf, (np.arange(n) + 0.5) / n * cdf[-1]), cap).astype(np.int64)
    miss = 2 * m_out - int(seq.sum())  # the quantiles' rounding: a few units, at random nodes
    if miss > 0:
        room = np.flatnonzero(seq < cap)
        if room.size:
            np.add.at(seq, rng.choice(room, miss, replace=miss > room.size), 1)
    elif miss < 0:
        have = np.repeat(np.arange(n), seq)  # one entry per unit: remove -miss of them
        np.subtract.at(seq, have[rng.choice(have.size, min(-miss, have.size), replace=False)], 1)
    seq = np.clip(seq, 0, cap)
    order = np.lexsort((rng.random(n), _observed_degrees(R)))
    target = np.empty(n, dtype=np.int64)
    target[order] = np.sort(seq)
    est = _degree_estimate(R, True)
    value, std = np.asarray(est.value, dtype=float), np.asarray(est.std, dtype=float)
    z = max(_OWN_Z, float(norm.isf(0.025 / n)))
    own = np.abs(value - target) > z * std
    target[own] = np.clip(np.rint(value[own]), 0, cap).astype(np.int64)
    return target, cap


def degree_constrained(rows: np.ndarray, cols: np.ndarray, target: np.ndarray, cap: int,
                       m_hat: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The chosen pairs: the candidates (best first) taken greedily under the degree targets,
    then random pairing of the left-over stubs (a few rounds), then the best remaining
    candidates up to m^ whose two ends are below their target + 1 and below ``cap`` (the
    band's largest degree): no node ends more than one edge above its target, so the
    synthetic degrees follow the targets and no hub appears that they lack."""
    n = target.size
    if m_hat <= 0:
        return np.array([], dtype=np.int64), np.array([], dtype=np.int64)
    left = target.astype(np.int64).copy()
    chosen = _greedy(rows.astype(np.int64), cols.astype(np.int64), left, m_hat)
    count = int(chosen.sum())
    picked = np.flatnonzero(chosen)
    taken = np.sort(rows[picked].astype(np.int64) * n + cols[picked])  # sorted: _member
    extra_r, extra_c = [], []
    for _ in range(_STUB_ROUNDS):  # a round's rejects (self-pairs, repeats) pair again
        stubs_left = np.maximum(left, 0)
        if count >= m_hat or stubs_left.sum() < 2:
            break
        stubs = rng.permutation(np.repeat(np.arange(n), stubs_left))
        half = stubs.size // 2
        u, v = np.minimum(stubs[0:2 * half:2], stubs[1:2 * half:2]), \
            np.maximum(stubs[0:2 * half:2], stubs[1:2 * half:2])
        key = u * n + v
        ok = u != v
        _, first = np.unique(key, return_index=True)  # a repeat within the round: once
        keep = np.zeros(key.size, dtype=bool)
        keep[first] = True
        ok &= keep & ~_member(key, taken)
        idx = np.flatnonzero(ok)[: max(0, m_hat - count)]
        if idx.size == 0:
            continue
        extra_r.append(u[idx])
        extra_c.append(v[idx])
        taken = np.sort(np.concatenate([taken, key[idx]]))
        np.subtract.at(left, u[idx], 1)
        np.subtract.at(left, v[idx], 1)
        count += idx.size
    out_r = np.concatenate([rows[picked].astype(np.int64), *extra_r])
    out_c = np.concatenate([cols[picked].astype(np.int64), *extra_c])
    if count < m_hat and rows.size:  # top up with the best pairs not yet taken, within the band
        deg = np.bincount(np.concatenate([out_r, out_c]), minlength=n).astype(np.int64)
        limit = np.minimum(target + 1, cap).astype(np.int64)  # at most one edge above the target
        key = rows.astype(np.int64) * n + cols
        free = np.flatnonzero(~_member(key, taken))
        room = limit - deg
        more = np.flatnonzero(_greedy(rows[free].astype(np.int64), cols[free].astype(np.int64),
                                      room, m_hat - count))
        out_r = np.concatenate([out_r, rows[free][more].astype(np.int64)])
        out_c = np.concatenate([out_c, cols[free][more].astype(np.int64)])
    return out_r, out_c


def _member(keys: np.ndarray, sorted_keys: np.ndarray) -> np.ndarray:
    """Whether each of ``keys`` is in ``sorted_keys`` (sorted): a binary search each, where
    numpy's isin hashes both arrays (pair keys up to n^2 rule out its table method)."""
    if sorted_keys.size == 0:
        return np.zeros(keys.size, dtype=bool)
    at = np.minimum(np.searchsorted(sorted_keys, keys), sorted_keys.size - 1)
    return sorted_keys[at] == keys


def _greedy(rows: np.ndarray, cols: np.ndarray, left: np.ndarray, most: int) -> np.ndarray:
    """Which of the pairs (in order) are taken while both ends have ``left`` > 0 (decremented in
    place), at most ``most`` of them."""
    from ..._numba import load_kernels

    kernel = load_kernels("dpgraph.graph.analytics._synthkernel", ("greedy",))
    if kernel is not None:
        return kernel[0](rows, cols, left, int(most))
    chosen = np.zeros(rows.size, dtype=bool)
    left_l = left.tolist()
    count = 0
    for t, (a, b) in enumerate(zip(rows.tolist(), cols.tolist())):
        if count >= most:
            break
        if left_l[a] > 0 and left_l[b] > 0:
            left_l[a] -= 1
            left_l[b] -= 1
            chosen[t] = True
            count += 1
    left[:] = left_l
    return chosen
