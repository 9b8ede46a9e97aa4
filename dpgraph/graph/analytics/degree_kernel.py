"""The channel of one node's degree, restricted to the released degrees that carry probability.

The released degree of a node of true degree d in an n-node undirected
release is Binomial(d, alpha) + Binomial(n - 1 - d, beta) (its n - 1 pairs
are released independently).  For each d that law lives on a window of a
few standard deviations (sd^2 = d alpha (1 - alpha) + (n - 1 - d) beta (1 - beta));
outside it the probability is below 1e-15 on each side.  The kernel stores
P(released = y | true = d) only for y between the lowest and the highest
window over the support d = 0 .. D, so its memory is
(number of such y) x (D + 1) floats, never n x n: for a sparse graph at
eps = 1 and n = 100,000 about 2,800 x 3,200 (72 MB), for a subsampled
(``target_edges=``) release of 50,000 nodes about 300 x 50,000.

Nothing here is public; :func:`~dpgraph.graph.analytics.degree_transition_matrix`
and :func:`~dpgraph.graph.analytics.degree_distribution` use it.
"""

from __future__ import annotations

import numpy as np

from .._memory import check_fits

TAIL = 1e-15  # probability left out of each binomial's window on each side
_CHUNK = 1 << 19  # floats per block of the convolution


def binomial_windows(m: np.ndarray, p: float) -> tuple[np.ndarray, np.ndarray]:
    """[lo, hi] of Binomial(m, p), vectorized over m, leaving out at most TAIL on each side.

    Examples
    --------
    >>> lo, hi = binomial_windows(np.array([0, 10, 1000]), 0.5)
    >>> lo.tolist(), hi.tolist()
    ([0, 0, 374], [0, 10, 626])
    """
    from scipy import stats

    m = np.asarray(m, dtype=np.int64)
    if p <= 0.0:
        return np.zeros_like(m), np.zeros_like(m)
    if p >= 1.0:
        return m.copy(), m.copy()
    lo = np.nan_to_num(stats.binom.ppf(TAIL, m, p), nan=0.0)
    hi = np.nan_to_num(stats.binom.isf(TAIL, m, p), nan=0.0)
    lo = np.clip(lo - 1, 0, m).astype(np.int64)
    hi = np.clip(hi + 1, 0, m).astype(np.int64)
    return lo, hi


def _windows(n: int, alpha: float, beta: float, dmax: int):
    d = np.arange(dmax + 1, dtype=np.int64)
    la, ha = binomial_windows(d, alpha)
    lb, hb = binomial_windows(n - 1 - d, beta)
    return la, ha, lb, hb


def kernel_rows(n: int, alpha: float, beta: float, dmax: int) -> tuple[int, int]:
    """(y0, y1): the released degrees that carry probability for some true degree 0 .. dmax."""
    la, ha, lb, hb = _windows(n, alpha, beta, dmax)
    return int((la + lb).min()), int(min(n - 1, (ha + hb).max()))


def kernel_bytes(n: int, alpha: float, beta: float, dmax: int) -> int:
    """Bytes the kernel of true degrees 0 .. dmax needs (its matrix and its running sum)."""
    y0, y1 = kernel_rows(n, alpha, beta, dmax)
    return 2 * 8 * (y1 - y0 + 1) * (dmax + 1) + 8 * _CHUNK * 6


class DegreeKernel:
    """P(released degree = y | true degree = d) for y in y0 .. y1 and d in 0 .. dmax.

    Attributes
    ----------
    n, alpha, beta, dmax : the release's size and channel, the largest true degree
    y0, y1 : int
        First and last released degree with probability above ~1e-15 for some d.
    pmf : numpy.ndarray, shape (y1 - y0 + 1, dmax + 1)
        Columns sum to 1 (each is the exact convolution of the two binomial
        pmfs on its window, renormalized over the window).

    Examples
    --------
    >>> K = DegreeKernel(5, 1.0, 0.0, 4)
    >>> (K.y0, K.y1), bool(np.allclose(K.pmf, np.eye(5)))
    ((0, 4), True)
    """

    def __init__(self, n: int, alpha: float, beta: float, dmax: int,
                 rows: tuple[int, int] | None = None, what: str = "degree kernel") -> None:
        from scipy import stats
        from scipy.signal import fftconvolve

        self.n, self.alpha, self.beta, self.dmax = int(n), float(alpha), float(beta), int(dmax)
        d = np.arange(self.dmax + 1, dtype=np.int64)
        la, ha, lb, hb = _windows(self.n, self.alpha, self.beta, self.dmax)
        lo, hi = la + lb, np.minimum(ha + hb, self.n - 1)
        y0, y1 = int(lo.min()), int(hi.max())
        if rows is not None:
            y0, y1 = min(y0, int(rows[0])), max(y1, int(rows[1]))
        self.y0, self.y1 = y0, y1
        ny = y1 - y0 + 1
        check_fits(8 * ny * (self.dmax + 1) + 8 * _CHUNK * 6,
                   f"the {what} ({ny:,} released x {self.dmax + 1:,} true degrees)")
        P = np.zeros((ny, self.dmax + 1))
        wa, wb = ha - la + 1, hb - lb + 1
        step = max(1, _CHUNK // int((wa + wb).max()))
        for s in range(0, self.dmax + 1, step):
            sl = slice(s, min(self.dmax + 1, s + step))
            dd = d[sl][:, None]
            WA, WB = int(wa[sl].max()), int(wb[sl].max())
            ka = la[sl][:, None] + np.arange(WA)[None, :]
            kb = lb[sl][:, None] + np.arange(WB)[None, :]
            A = np.where(ka <= ha[sl][:, None], stats.binom.pmf(ka, dd, self.alpha), 0.0)
            B = np.where(kb <= hb[sl][:, None], stats.binom.pmf(kb, self.n - 1 - dd, self.beta), 0.0)
            C = fftconvolve(A, B, axes=1) if min(WA, WB) > 64 else _direct(A, B)
            np.clip(C, 0.0, None, out=C)
            width = (hi[sl] - lo[sl] + 1)[:, None]
            j = np.arange(C.shape[1])[None, :]
            keep = j < width
            C[~keep] = 0.0
            C /= C.sum(axis=1, keepdims=True)
            r, c = np.nonzero(keep)
            P[lo[sl][r] - y0 + c, s + r] = C[r, c]
        self.pmf = P

    def cdf(self) -> np.ndarray:
        """P(released <= y | d) on the rows y0 .. y1 (a new array)."""
        F = np.cumsum(self.pmf, axis=0)
        F /= F[-1]
        return F

    def rows(self, y: np.ndarray) -> np.ndarray:
        """The kernel's rows for released degrees ``y`` (inside y0 .. y1)."""
        return self.pmf[np.asarray(y, dtype=np.int64) - self.y0]


def _direct(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Row-wise full convolution of two short 2-D arrays (shift-and-add over B's columns)."""
    out = np.zeros((A.shape[0], A.shape[1] + B.shape[1] - 1))
    for j in range(B.shape[1]):
        out[:, j : j + A.shape[1]] += A * B[:, j : j + 1]
    return out
