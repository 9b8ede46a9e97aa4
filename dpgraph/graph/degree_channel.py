"""The degree channel: noisy degrees released beside the pairs, and the estimators that fuse both.

``dpgraph.release(G, epsilon, degree_share=s)`` spends (1 - s) epsilon on
randomized response over the pairs and s epsilon on every node's degree,
released with certified discrete Laplace noise of sensitivity 2 (one edge
moves two degrees undirected; directed, one edge moves one out-degree and one
in-degree, so the stacked (out, in) vector moves by 2 in L1 as well).  The
ledger is charged epsilon once (:class:`~dpgraph.core.ReleaseTransaction`
with ``laplace_share``).

The estimators of a release with the channel are the best linear unbiased
combination of the debiased pairs and the noisy degrees
(:class:`~dpgraph.core.degree_fusion.DegreeFusion`, where the formula and its
derivation live): one O(n) pass for the residuals of the noisy degrees
against the debiased released ones, then O(|S| + |T|) per query, with an
exact variance.  The noisy degrees enter unclipped and unrounded.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ..core.degree_fusion import DegreeFusion, Group, NormalLaplaceInterval
from ..core.estimate import Estimate
from ..core.estimators import count_estimate
from ..core.laplace import DiscreteLaplace
from ..core.randomness import RandomSource
from .answers import NodeEstimates, finish

__all__ = [
    "DegreeChannel",
    "FusedNodeEstimates",
    "channel_of",
    "degree_basis",
    "degree_header",
    "degree_kernel",
    "degree_read",
    "fused_cut",
    "fused_cuts",
    "fused_degrees",
    "fused_number_of_edges",
    "fused_volume",
    "input_degrees",
    "node_view",
    "sample",
]

#: sensitivity of the degree vector (undirected) or of the stacked (out, in) vector (directed)
SENSITIVITY = 2


class DegreeChannel:
    """The noisy degrees of a composed release and their certified noise.

    Attributes
    ----------
    share : float
        The fraction of ``total_epsilon`` spent on the degrees.
    total_epsilon : float
        What the release charged: the pairs' epsilon plus the degrees'.
    laplace : DiscreteLaplace
        The certified noise (epsilon = share * total_epsilon, sensitivity 2).
    noisy : numpy.ndarray of int64
        The released noisy degrees in ``nodes`` order: n of them, or for a
        directed release 2n (out-degrees, then in-degrees).  Read-only.
    """

    def __init__(self, share: float, total_epsilon: float, laplace: DiscreteLaplace,
                 noisy: np.ndarray) -> None:
        self.share, self.total_epsilon, self.laplace = float(share), float(total_epsilon), laplace
        self.noisy = np.array(noisy, dtype=np.int64)
        self.noisy.setflags(write=False)
        self._fusion: DegreeFusion | None = None
        self._debiased: np.ndarray | None = None

    def __repr__(self) -> str:  # public parameters only
        return (f"DegreeChannel(share={self.share:g}, epsilon={self.laplace.epsilon:g}, "
                f"noise_std={self.laplace.std:.4g}, degrees={self.noisy.size})")


def input_degrees(rows: np.ndarray, cols: np.ndarray, n: int, directed: bool) -> np.ndarray:
    """The true degrees of the encoded input (out then in if directed), int64."""
    a = np.bincount(rows, minlength=n).astype(np.int64)
    b = np.bincount(cols, minlength=n).astype(np.int64)
    return np.concatenate([a, b]) if directed else a + b


def sample(enc: Any, share: float, total_epsilon: float, laplace: DiscreteLaplace,
           source: RandomSource) -> DegreeChannel:
    """The channel of a committed release: the input's degrees plus exact discrete Laplace noise."""
    degrees = input_degrees(enc.rows, enc.cols, enc.n, enc.directed)
    return DegreeChannel(share, total_epsilon, laplace,
                         degrees + laplace.sample(degrees.size, source))


# ---- the degree distribution's basis ----------------------------------------------
class LaplaceDegreeKernel:
    """P(noisy degree = z | true degree = d) = P(L = z - d), for z in y0 .. y1 and d in 0 .. dmax.

    The kernel interface of the degree distribution's fit and band
    (:mod:`~dpgraph.graph.analytics.degree_kernel`): ``alpha = 1`` and
    ``beta = 0`` say that no pair noise is involved, so the fit bins every
    value and the band simulates independent nodes, as the noisy degrees are.
    """

    alpha, beta = 1.0, 0.0

    def __init__(self, n: int, laplace: DiscreteLaplace, dmax: int, rows: tuple[int, int]) -> None:
        a = float(laplace.alpha)
        tail = int(np.ceil(np.log(1e-15 * (1 - a)) / np.log(a)))  # P(|L| > tail) < 1e-15
        self.n, self.dmax = int(n), int(dmax)
        self.y0, self.y1 = min(int(rows[0]), -tail), max(int(rows[1]), self.dmax + tail)
        y = np.arange(self.y0, self.y1 + 1)[:, None]
        self.pmf = laplace.pmf(y - np.arange(self.dmax + 1)[None, :])
        self.pmf /= self.pmf.sum(axis=0, keepdims=True)

    def cdf(self) -> np.ndarray:
        F = np.cumsum(self.pmf, axis=0)
        F /= F[-1]
        return F

    def rows(self, y: np.ndarray) -> np.ndarray:
        return self.pmf[np.asarray(y, dtype=np.int64) - self.y0]


def degree_basis(R: Any, pairs_resolution: float) -> tuple[np.ndarray, float] | None:
    """(noisy degrees, their noise sd) when they pin a node's degree down better than its
    pairs (sd ``pairs_resolution``), else None.  A public choice: both sds are public."""
    dc = channel_of(R)
    if dc is None or R.directed or dc.laplace.std >= pairs_resolution:
        return None
    return dc.noisy, dc.laplace.std


def degree_kernel(R: Any, dmax: int) -> LaplaceDegreeKernel:
    """The noisy degrees' kernel on the support 0 .. dmax."""
    dc = channel_of(R)
    return LaplaceDegreeKernel(R.number_of_nodes(), dc.laplace, dmax,
                               (int(dc.noisy.min()), int(dc.noisy.max())))


# ---- the file payload -------------------------------------------------------------
def degree_header(dc: DegreeChannel) -> dict:
    """The header fields of a release file with the channel (public parameters only)."""
    return {"share": dc.share, "total_epsilon": dc.total_epsilon,
            "epsilon": dc.laplace.epsilon, "sensitivity": dc.laplace.sensitivity,
            "laplace_numerator": str(int(dc.laplace.numerator)), "count": int(dc.noisy.size)}


def degree_read(header: dict, buf: np.ndarray, kind: str, n: int, directed: bool,
                pairs_epsilon: float) -> tuple[DegreeChannel, np.ndarray]:
    """(channel, the kind's payload) from a file's header and payload, every field checked.

    The split of epsilon and the Laplace numerator are re-derived from the
    total and the share, and refused unless exactly those of the header.
    """
    from ..core.degree_fusion import check_share, split_epsilon
    from ..core.laplace import discrete_laplace

    h = header.get("degree_channel")
    fields = {"share", "total_epsilon", "epsilon", "sensitivity", "laplace_numerator", "count"}
    if kind != "packed" or not isinstance(h, dict) or set(h) != fields \
            or type(h["share"]) is not float or type(h["total_epsilon"]) not in (int, float) \
            or not isinstance(h["laplace_numerator"], str) or not h["laplace_numerator"].isdigit() \
            or len(h["laplace_numerator"]) > 20 or h["sensitivity"] != SENSITIVITY \
            or type(h["count"]) is not int or h["count"] != (2 * n if directed else n):
        raise ValueError("degree_channel header fields are malformed; the file is corrupted")
    try:
        share = check_share(h["share"])
        pairs, noise = split_epsilon(h["total_epsilon"], share)
    except (TypeError, ValueError):
        raise ValueError("degree_channel share or total_epsilon out of range") from None
    if share == 0 or pairs != pairs_epsilon or noise != h["epsilon"]:
        raise ValueError("degree_channel epsilons disagree with the total and the share")
    laplace = discrete_laplace(noise, SENSITIVITY)
    if laplace.numerator != int(h["laplace_numerator"]) or not laplace.certify():
        raise ValueError("degree_channel noise is not the certified one of its epsilon; refusing it")
    nb = 8 * h["count"]
    if buf.nbytes < nb:
        raise ValueError("payload too short for its noisy degrees; the file is corrupted")
    noisy = buf[buf.nbytes - nb:].view("<i8").astype(np.int64)
    return DegreeChannel(share, float(h["total_epsilon"]), laplace, noisy), buf[: buf.nbytes - nb]


def channel_of(R: Any) -> DegreeChannel | None:
    """The release's degree channel, or None (every release kind without one)."""
    return getattr(R, "degree_channel", None)


def _debiased_degrees(R: Any) -> np.ndarray:
    """B xhat: the debiased released degrees (out then in if directed)."""
    dc = channel_of(R)
    if dc._debiased is None:
        n = R.number_of_nodes()
        obs = np.asarray(R.released_degrees(), dtype=float)
        if R.directed:
            ins = np.asarray(R.adjacency.matvec(np.ones(n), transpose=True), dtype=float)
            obs = np.concatenate([obs, ins])
        dc._debiased = np.asarray(count_estimate(obs, np.full(obs.size, n - 1.0), R.channel).raw,
                                  dtype=float)
    return dc._debiased


def _fusion(R: Any) -> DegreeFusion:
    dc = channel_of(R)
    if dc._fusion is None:
        v = float(count_estimate(0.0, 1.0, R.channel).std) ** 2
        residual = dc.noisy.astype(float) - _debiased_degrees(R)
        dc._fusion = DegreeFusion(R.number_of_nodes(), R.directed, v, dc.laplace, residual)
    return dc._fusion


def _answer(F: DegreeFusion, base: float, groups: list[Group], norm2: float, high: float,
            proper: bool) -> Estimate:
    raw = base + F.correction(groups)
    std = F.variance(groups, norm2) ** 0.5
    est = Estimate(raw, std, feasible_range=(0.0, high), interval=F.interval(raw, groups, norm2))
    return finish(est, proper, step=1.0)


# ---- the queries -----------------------------------------------------------------
def fused_number_of_edges(R: Any, proper: bool) -> Estimate:
    """The edge count from the pairs and the noisy degrees."""
    F, n, N = _fusion(R), R.number_of_nodes(), float(R.number_of_pairs())
    base = float(count_estimate(R.number_of_released_edges(), N, R.channel).raw)
    g = [Group(None, n - 1.0, n - 1.0 if R.directed else 0.0)]
    return _answer(F, base, g, N, N, proper)


def _degree_groups(R: Any, i: int) -> list[Group]:
    n = R.number_of_nodes()
    at = np.array([i])
    if R.directed:  # out-degree: (n-1) on i's out-coordinate, 1 on every other in-coordinate
        return [Group(at, n - 1.0, 0.0), Group(None, 0.0, 1.0)]
    return [Group(at, n - 1.0), Group(None, 1.0)]


def fused_degrees(R: Any, proper: bool) -> tuple[Estimate, NormalLaplaceInterval | None]:
    """Every node's degree (out-degree if directed) as a batch, and the interval rule's shape.

    The shape is the same for every node (it depends on n and the noise
    only); ``rule.at(center)`` places it on one node's raw estimate.
    """
    F, n = _fusion(R), R.number_of_nodes()
    base = _debiased_degrees(R)[:n]
    if R.directed:
        corr = F.v * ((n - 1) * F.w_out + (F.w_in.sum() - F.w_in))
    else:
        corr = F.v * ((n - 2) * F.w_out + F.w_out.sum())
    raw = base + corr
    groups = _degree_groups(R, 0)
    std = F.variance(groups, n - 1.0) ** 0.5
    est = Estimate(raw, np.full(n, std), feasible_range=(0.0, float(n - 1)))
    return finish(est, proper, step=1.0), F.interval(0.0, groups, n - 1.0)


class FusedNodeEstimates(NodeEstimates):
    """Per-node degrees whose single-node estimates carry the exact normal-Laplace interval."""

    def __init__(self, nodes: tuple, estimate: Estimate,
                 rule: NormalLaplaceInterval | None = None) -> None:
        super().__init__(nodes, estimate)
        self.rule = rule

    def __getitem__(self, v: Any) -> Estimate:
        est = super().__getitem__(v)
        return est if self.rule is None else replace(est, interval=self.rule.at(est.raw))

    def __iter__(self):
        for i, v in enumerate(self.nodes):
            est = self.estimate[i]
            yield v, est if self.rule is None else replace(est, interval=self.rule.at(est.raw))


def node_view(R: Any, proper: bool) -> tuple[Estimate, Any] | None:
    """(degrees, view class) for ``R.degree`` on a release with the channel, else None."""
    if channel_of(R) is None:
        return None
    est, rule = fused_degrees(R, proper)

    def view(nodes: tuple, estimate: Estimate) -> FusedNodeEstimates:
        return FusedNodeEstimates(nodes, estimate, rule)

    return est, view


def fused_volume(R: Any, s: np.ndarray, proper: bool) -> Estimate:
    """The degree sum of S (undirected): B c = (n - 2) 1_S + |S| 1."""
    F, n, k = _fusion(R), R.number_of_nodes(), s.size
    base = float(_debiased_degrees(R)[s].sum())
    within, across = k * (k - 1) / 2.0, float(k * (n - k))
    g = [Group(s, n - 2.0 + k), Group(None, float(k))]
    return _answer(F, base, g, 4 * within + across, 2 * within + across, proper)


def _cut_groups(R: Any, s: np.ndarray, t: np.ndarray) -> list[Group]:
    rest = None if s.size + t.size == R.number_of_nodes() else t  # the complement: O(|S|)
    if R.directed:
        return [Group(s, float(t.size), 0.0), Group(rest, 0.0, float(s.size))]
    return [Group(s, float(t.size)), Group(rest, float(s.size))]


def fused_cut(R: Any, s: np.ndarray, t: np.ndarray, proper: bool) -> Estimate:
    """The S-T edge count (S to T if directed): B c is |T| on S and |S| on T."""
    rows = float(s.size * t.size)
    base = float(count_estimate(R.adjacency.cut_count(s, t), rows, R.channel).raw)
    return _answer(_fusion(R), base, _cut_groups(R, s, t), rows, rows, proper)


def fused_cuts(R: Any, sides: list, proper: bool) -> Estimate:
    """A batch of cuts (normal intervals; :func:`fused_cut` gives one its exact interval)."""
    F = _fusion(R)
    rows = np.array([s.size * t.size for s, t in sides], dtype=float)
    base = np.asarray(count_estimate(np.asarray(R.adjacency.cut_counts(sides), dtype=float),
                                     rows, R.channel).raw, dtype=float)
    raw = np.empty(len(sides))
    std = np.empty(len(sides))
    for q, (s, t) in enumerate(sides):
        g = _cut_groups(R, s, t)
        raw[q] = base[q] + F.correction(g)
        std[q] = F.variance(g, rows[q]) ** 0.5
    return finish(Estimate(raw, std, feasible_range=(np.zeros_like(rows), rows)), proper,
                  step=1.0)
