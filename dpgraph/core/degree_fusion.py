"""Fusing debiased pairs with noisy degrees: the best linear unbiased estimator, in closed form.

A composed release spends part of epsilon on randomized response over the N
vertex pairs and the rest on discrete Laplace noise added to every node's
degree.  The observations are

* the debiased pairs xhat = x + e, Cov e = v I (v = p'(1 - p') / (1 - 2 p')^2,
  the same for every pair whatever the graph);
* the noisy degrees z = B x + L, Cov L = V_L I (B the node-pair incidence
  matrix; for a directed release the out-degree rows stacked over the
  in-degree rows).

For a linear query c^T x the best linear unbiased estimator (generalised
least squares on both, exact because both covariances are known) is

    c^T xhat + v (B c)^T M^-1 r,      M = v B B^T + V_L I,   r = z - B xhat,

with variance v |c|^2 - v^2 (B c)^T M^-1 (B c) (Woodbury).  Undirected,
B B^T = (n - 2) I + J, so M = a I + v J with a = V_L + v (n - 2) and
M^-1 = (I - kappa J) / a, kappa = v / (a + n v).  Directed, B B^T is
[[(n-1) I, J - I], [J - I, (n-1) I]]; on the sums (out + in) and the
differences (out - in) it is alpha I + beta J again, so the same inverse
applies to each half.  r needs one O(n) pass; afterwards every query whose
B c is constant on a few node groups (a degree, a volume, a cut, the edge
count) costs O(|S| + |T|).  Weights and variances depend only on n, the group
sizes and the two noise variances: public quantities.

The part of the error due to the Laplace noise is sum_j lambda_j L_j,
lambda = v M^-1 B c.  Where one small group of nodes carries a large share of
it (a degree at a generous degree share), the error is far from normal;
:class:`NormalLaplaceInterval` gives the exact quantiles of the normal part
(the pairs and the spread-out Laplace terms) convolved with the exact
distribution of the dominant Laplace sum.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy.special import ndtr

from ..validation import check_epsilon
from .laplace import DiscreteLaplace

__all__ = ["DegreeFusion", "Group", "NormalLaplaceInterval", "check_share", "split_epsilon"]


def split_epsilon(epsilon: float, share: float) -> tuple[float, float]:
    """(pairs' epsilon, degrees' epsilon) of a composed release; they sum to at most epsilon.

    The degrees get ``share * epsilon``; the pairs the rest, lowered by one
    ulp when floating point would make the two sum above ``epsilon`` (checked
    in exact arithmetic), so that charging ``epsilon`` covers both.

    Parameters
    ----------
    epsilon : float
        The total privacy parameter, finite and > 0.
    share : float in [0, 1)
        The fraction spent on the degrees.

    Examples
    --------
    >>> split_epsilon(1.0, 0.25)
    (0.75, 0.25)
    >>> split_epsilon(1.0, 0.1)      # the float 0.9 plus 0.1 exceeds 1: one ulp less
    (0.8999999999999999, 0.1)
    >>> split_epsilon(2.0, 0.0)
    (2.0, 0.0)
    """
    epsilon = check_epsilon(epsilon)
    share = check_share(share)
    if share == 0.0:
        return epsilon, 0.0
    degrees = share * epsilon
    pairs = epsilon - degrees
    while Fraction(pairs) + Fraction(degrees) > Fraction(epsilon):
        pairs = math.nextafter(pairs, 0.0)
    return pairs, degrees


def check_share(share: object, name: str = "degree_share") -> float:
    """A share of epsilon for the degrees: a real number in [0, 1)."""
    if isinstance(share, bool) or not isinstance(share, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number in [0, 1), got {type(share).__name__}")
    s = float(share)
    if not (0.0 <= s < 1.0):
        raise ValueError(
            f"{name} must lie in [0, 1) (the fraction of epsilon spent on the noisy degrees; "
            f"0 releases the pairs alone), got {share!r}")
    return s


@dataclass(frozen=True)
class Group:
    """Nodes on which (B c) is constant: ``out`` on their out-coordinate, ``inn`` on the in-one.

    ``nodes`` holds positions, or is None for "every node not in another group"
    of the query.  Undirected releases use ``out`` only.
    """

    nodes: np.ndarray | None
    out: float
    inn: float = 0.0


class _Sym:
    """alpha I + beta J (size n): its inverse applied, and its quadratic form from sums."""

    def __init__(self, alpha: float, beta: float, n: int) -> None:
        self.alpha, self.kappa = alpha, beta / (alpha + n * beta)

    def apply(self, x: np.ndarray) -> np.ndarray:
        return (x - self.kappa * x.sum()) / self.alpha

    def quad(self, norm2: float, total: float) -> float:
        return (norm2 - self.kappa * total * total) / self.alpha

    def per_group(self, values: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        """(alpha I + beta J)^-1 g on each group, g constant ``values`` on groups of ``sizes``."""
        return (values - self.kappa * float(values @ sizes)) / self.alpha


class DegreeFusion:
    """The fused estimator of one composed release (see the module docstring).

    Parameters
    ----------
    n : int
        Nodes.
    directed : bool
    pair_variance : float
        v, the variance of one debiased pair.
    laplace : DiscreteLaplace
        The degrees' noise.
    residual : numpy.ndarray, optional
        r = z - B xhat: length n (undirected) or 2n (out then in).  Without it
        only variances and weights are available (the planner's use).
    """

    def __init__(self, n: int, directed: bool, pair_variance: float, laplace: DiscreteLaplace,
                 residual: np.ndarray | None = None) -> None:
        self.n, self.directed = int(n), bool(directed)
        self.v, self.laplace = float(pair_variance), laplace
        self.VL = laplace.variance
        v, n = self.v, self.n
        if directed:
            a = self.VL + v * (n - 1)
            self._s, self._d = _Sym(a - v, v, n), _Sym(a + v, -v, n)
        else:
            self._u = _Sym(self.VL + v * (n - 2), v, n)
        self.w_out = self.w_in = None
        if residual is not None:
            r = np.asarray(residual, dtype=float)
            if directed:
                ws, wd = self._s.apply(r[:n] + r[n:]), self._d.apply(r[:n] - r[n:])
                self.w_out, self.w_in = (ws + wd) / 2, (ws - wd) / 2
            else:
                self.w_out = self._u.apply(r)
            self._cum_out = float(self.w_out.sum())
            self._cum_in = float(self.w_in.sum()) if directed else 0.0

    # ---- one query -------------------------------------------------------------
    def _sizes(self, groups: list[Group]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Sizes, out- and in-values of the groups, plus a zero group for the rest."""
        named = sum(g.nodes.size for g in groups if g.nodes is not None)
        sizes = [self.n - named if g.nodes is None else g.nodes.size for g in groups]
        out, inn = [g.out for g in groups], [g.inn for g in groups]
        if all(g.nodes is not None for g in groups):
            sizes.append(self.n - named)
            out.append(0.0)
            inn.append(0.0)
        return np.array(sizes, float), np.array(out, float), np.array(inn, float)

    def correction(self, groups: list[Group]) -> float:
        """v (B c)^T M^-1 r for B c given by ``groups`` (needs the residual)."""
        if self.w_out is None:
            raise ValueError("this fusion was built without the noisy degrees' residual")
        named_out = named_in = 0.0
        total = 0.0
        for g in groups:
            if g.nodes is None:
                continue
            so = float(self.w_out[g.nodes].sum())
            si = float(self.w_in[g.nodes].sum()) if self.directed else 0.0
            named_out, named_in = named_out + so, named_in + si
            total += g.out * so + g.inn * si
        for g in groups:  # the complement group, if any
            if g.nodes is None:
                total += g.out * (self._cum_out - named_out) + g.inn * (self._cum_in - named_in)
        return self.v * total

    def laplace_weights(self, groups: list[Group]) -> tuple[np.ndarray, np.ndarray]:
        """(sizes, lambda) per group: the error's Laplace part is sum_j lambda_j L_j.

        For a directed release each group appears twice, once per coordinate.
        """
        sizes, out, inn = self._sizes(groups)
        v = self.v
        if not self.directed:
            return sizes, v * self._u.per_group(out, sizes)
        hs = self._s.per_group(out + inn, sizes)
        hd = self._d.per_group(out - inn, sizes)
        return np.concatenate([sizes, sizes]), v * np.concatenate([(hs + hd) / 2, (hs - hd) / 2])

    def variance(self, groups: list[Group], pair_norm2: float) -> float:
        """Exact variance of the fused estimate: v |c|^2 - v^2 (B c)^T M^-1 (B c).

        ``pair_norm2`` is |c|^2 (the number of pairs for a 0/1 query; 4 per
        pair counted twice, as by a volume's pairs inside S).
        """
        sizes, out, inn = self._sizes(groups)
        v = self.v
        if self.directed:
            s, d = out + inn, out - inn
            q = (self._s.quad(float(s * s @ sizes), float(s @ sizes))
                 + self._d.quad(float(d * d @ sizes), float(d @ sizes))) / 2
        else:
            q = self._u.quad(float(out * out @ sizes), float(out @ sizes))
        return max(v * pair_norm2 - v * v * q, 0.0)

    def interval(self, center: float, groups: list[Group], pair_norm2: float
                 ) -> NormalLaplaceInterval | None:
        """The exact interval rule when one group of at most 32 nodes carries >= 5% of the
        variance through its Laplace terms; None when the normal interval is accurate."""
        total = self.variance(groups, pair_norm2)
        sizes, lam = self.laplace_weights(groups)
        share = sizes * lam * lam * self.VL
        k = int(np.argmax(np.where(sizes <= 32, share, -1.0)))
        if sizes[k] > 32 or sizes[k] < 1 or total <= 0 or share[k] < 0.05 * total:
            return None
        normal = max(total - float(share[k]), 1e-12 * total)
        return NormalLaplaceInterval(float(center), math.sqrt(normal), float(lam[k]),
                                     int(sizes[k]), self.laplace)


class NormalLaplaceInterval:
    """Interval rule for ``center`` + N(0, sigma^2) + lam * (L_1 + ... + L_m), L_j discrete Laplace.

    Called as ``rule(z, low, high)`` (the protocol of
    :class:`~dpgraph.core.Estimate`'s ``interval``): the two-sided interval at
    the level 2 Phi(z) - 1, from the exact distribution (the pmf of the
    Laplace sum by FFT, truncated where its tail is below 1e-13, convolved
    with the normal by its cdf), clipped to [low, high].

    Examples
    --------
    >>> from dpgraph.core.laplace import discrete_laplace
    >>> rule = NormalLaplaceInterval(0.0, 1e-9, 1.0, 1, discrete_laplace(0.2, 2))
    >>> lo, hi = rule(1.959963984540054, -1e9, 1e9)      # ~ the Laplace's own 95% quantile
    >>> 28 <= hi <= 31 and lo == -hi
    True
    """

    def __init__(self, center: float, sigma: float, lam: float, m: int,
                 laplace: DiscreteLaplace) -> None:
        self.center, self.sigma, self.lam = center, sigma, abs(lam)
        self.m = m
        a = float(laplace.alpha)
        K = max(1, math.ceil(math.log(1e-13 * (1 - a)) / math.log(a)))
        k = np.arange(-K, K + 1)
        one = laplace.pmf(k)
        size = m * 2 * K + 1
        nfft = 1 << (size - 1).bit_length()
        pmf = np.fft.irfft(np.fft.rfft(one, nfft) ** m, nfft)[:size]
        pmf = np.clip(pmf, 0.0, None)
        keep = pmf > 1e-16 * pmf.max()  # the FFT's round-off floor, far below any quantile
        self._support = (np.arange(size)[keep] - m * K) * self.lam
        self._pmf = pmf[keep] / pmf[keep].sum()
        self._q: dict[float, float] = {}  # level -> half-width, shared by :meth:`at` copies

    def at(self, center: float) -> NormalLaplaceInterval:
        """The same rule centred on ``center`` (the distribution is shared, not recomputed)."""
        other = object.__new__(NormalLaplaceInterval)
        other.__dict__.update(self.__dict__)
        other.center = float(center)
        return other

    def cdf(self, x: float) -> float:
        """P(error <= x)."""
        return float(self._pmf @ ndtr((x - self._support) / self.sigma))

    def half_width(self, level: float) -> float:
        """q with P(|error| <= q) = level (the error is symmetric)."""
        if level in self._q:
            return self._q[level]
        lo, hi = 0.0, 10 * self.sigma + self.lam * float(np.abs(self._support).max()) + 1.0
        for _ in range(60):
            mid = (lo + hi) / 2
            if 2 * self.cdf(mid) - 1 < level:
                lo = mid
            else:
                hi = mid
        self._q[level] = hi
        return hi

    def __call__(self, z: float, low: float, high: float) -> tuple[float, float]:
        q = self.half_width(float(2 * ndtr(z) - 1))
        return (float(np.clip(self.center - q, low, high)),
                float(np.clip(self.center + q, low, high)))

    def __repr__(self) -> str:
        return (f"NormalLaplaceInterval(sigma={self.sigma:.4g}, lambda={self.lam:.4g}, "
                f"m={self.m})")
