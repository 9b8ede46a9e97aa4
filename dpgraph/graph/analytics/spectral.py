"""The debiased adjacency as an operator and its leading spectrum.

Shared by community detection and synthesis.  The debiased adjacency of a
release is Z = z0 (J - I) + s A: the debiased value z0 of a released 0 on
every pair, plus s = (z1 - z0) / f times the released 0/1 adjacency A (or its
finding part, a fraction f of the pairs, see :mod:`._pairsplit`).  Z is
never formed: its products with a block of vectors are one
:meth:`~dpgraph.graph.adjacency.Adjacency.matmat` of A (a pass over the
packed bits or the CSR rows) plus a rank-one correction, so the leading
eigenvectors cost a few dozen passes over the release and O(n k) floats.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._shared import _entry_map

_EIGEN_STREAM = 0x5B118  # stream id of the random start block (public randomness)


class DebiasedOperator:
    """Z = z0 (J - I) + scale A for a 0/1 adjacency A, as products only.

    Parameters
    ----------
    adjacency : Adjacency
        Undirected; ``matmat`` gives A @ X with A symmetric.
    z0, scale : float
        Z_ij = z0 + scale A_ij off the diagonal, 0 on it.
    """

    def __init__(self, adjacency: Any, z0: float, scale: float) -> None:
        self.adjacency = adjacency
        self.n = int(adjacency.n)
        self.z0 = float(z0)
        self.scale = float(scale)

    def matmat(self, X: np.ndarray) -> np.ndarray:
        """Z @ X for a (n, k) block (float64 unless X is float32)."""
        X = np.asarray(X)
        vector = X.ndim == 1
        X = X.reshape(self.n, -1)
        out = self.adjacency.matmat(X)
        out *= self.scale
        out += self.z0 * (X.sum(axis=0, keepdims=True) - X)
        return out[:, 0] if vector else out

    def block_sums(self, lab: np.ndarray, k: int) -> np.ndarray:
        """H^T Z H for the one-hot community matrix H of labels ``lab`` (k x k, float64)."""
        H = np.zeros((self.n, k), dtype=np.float64)
        H[np.arange(self.n), lab] = 1.0
        return H.T @ self.matmat(H)

    def linear_operator(self) -> Any:
        """Z as a :class:`scipy.sparse.linalg.LinearOperator` (symmetric, float64)."""
        from scipy.sparse.linalg import LinearOperator

        return LinearOperator((self.n, self.n), matvec=self.matmat, matmat=self.matmat,
                              rmatvec=self.matmat, rmatmat=self.matmat, dtype=np.float64)


def _release_operator(R: Any) -> DebiasedOperator:
    """Z of a whole (undirected) release: z0 (J - I) + (z1 - z0) Y."""
    z0, z1 = _entry_map(R.channel)
    return DebiasedOperator(R.adjacency, z0, z1 - z0)


def noise_variance(channel: Any, rho: float, f: float = 1.0) -> float:
    """Mean variance of an off-diagonal entry of Z when structure is absent.

    Z_ij = z0 + (d^-1 / f) Y_ij [pair in the finding part], the part a
    public random fraction f of the pairs: with pi = P(Y_ij = 1) = beta +
    (alpha - beta) x_ij, Var Z_ij = d^-2 (pi / f - pi^2), averaged over a
    graph of density rho, plus rho (1 - rho), the variance of the entries of
    a random graph of that density (no community structure).  f = 1 gives
    the channel's own entry variance.
    """
    a, b = float(channel.alpha), float(channel.beta)
    rho = float(np.clip(rho, 0.0, 1.0))
    pi = b + (a - b) * rho
    pi2 = (1.0 - rho) * b * b + rho * a * a
    return (pi / f - pi2) / float(channel.d) ** 2 + rho * (1.0 - rho)


def _noise_edge(R: Any, m: float) -> float:
    """Edge of the structure-less part of Z's spectrum, 2 sqrt(n s^2) (see :func:`noise_variance`).

    A graph without community structure has no eigenvalue of Z far above this.
    """
    n = R.number_of_nodes()
    rho = m / max(int(R.number_of_pairs()), 1)
    return float(2.0 * np.sqrt(n * noise_variance(R.channel, rho)))


def _orthonormal(Y: np.ndarray) -> np.ndarray:
    """An orthonormal basis of Y's columns (thin QR, signs fixed by the diagonal of R)."""
    Q, Rr = np.linalg.qr(Y)
    s = np.sign(np.diag(Rr))
    s[s == 0] = 1.0
    return Q * s


def leading_eigenpairs(op: Any, ell: int, a: float, seed: int | None,
                       degree: int = 10, passes: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Leading eigenpairs of a symmetric operator, by Chebyshev-filtered subspace iteration.

    A block of ``ell`` vectors is multiplied by the degree-``degree``
    Chebyshev polynomial of Z / a (bounded by 1 on the noise bulk [-a, a],
    growing fast above it), ``passes`` times, then Rayleigh-Ritz.  Each
    product is one ``op.matmat`` of the block, so the cost is ``passes *
    degree + 1`` passes over the release.  Eigenvalues come out as lower
    bounds of the true ones (conservative counts above ``a``), descending.
    The random start block is public randomness from ``seed``.

    Returns
    -------
    (values, vectors) : numpy.ndarray of shape (ell,), (n, ell)
    """
    from scipy.linalg import solve_triangular

    n = op.n
    ell = int(min(ell, n))
    if n <= 400:  # small: the dense matrix costs less than the iteration
        Zd = op.matmat(np.eye(n))
        vals, vecs = np.linalg.eigh((Zd + Zd.T) / 2)
        return vals[::-1][:ell], vecs[:, ::-1][:, :ell]
    rng = np.random.default_rng(None if seed is None else [seed, _EIGEN_STREAM])
    X = _orthonormal(rng.standard_normal((n, ell)))
    for _ in range(passes):
        prev, cur = X, op.matmat(X) / a
        for step in range(degree - 1):
            prev, cur = cur, 2.0 * op.matmat(cur) / a - prev
            if step % 3 == 2:  # keep the block well conditioned: the recurrence commutes
                Q, Rr = np.linalg.qr(cur)  # with right-multiplication, so (prev, cur) R^-1
                prev = solve_triangular(Rr, prev.T, trans="T").T
                cur = Q
        X = _orthonormal(cur)
    T = X.T @ op.matmat(X)
    w, V = np.linalg.eigh((T + T.T) / 2)
    order = np.argsort(w)[::-1]
    return w[order], X @ V[:, order]


def eigen_above(op: Any, a: float, cap: int, seed: int | None,
                start: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """Leading eigenpairs of ``op``: every one above ``a``, at most ``cap``, descending.

    The block starts at ``start`` vectors and doubles while all but a few of its
    Ritz values clear ``a`` (so the count is never capped by the block),
    up to ``cap + 8``.
    """
    n = op.n
    cap = int(max(1, min(cap, n - 1)))
    ell = min(int(start), cap + 8, n)
    while True:
        vals, vecs = leading_eigenpairs(op, ell, a, seed)
        above = int(np.sum(vals > a))
        if above <= ell - 4 or ell >= min(cap + 8, n):
            keep = min(cap, vals.size)
            return vals[:keep], vecs[:, :keep]
        ell = min(2 * ell, cap + 8, n)


def _leading_eigen(R: Any, edge: float, cap: int, start: int = 16,
                   on_product: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """Largest (algebraic) eigenpairs of the release's Z, descending: all above ``edge`` up to ``cap``.

    With ``edge = inf`` the ``cap`` largest.  ``start``: the first block's width (see
    :func:`eigen_above`); ``on_product()``, if given, is called after every product with Z.
    """
    op = _release_operator(R)
    if on_product is not None:
        product = op.matmat

        def counted(X: np.ndarray) -> np.ndarray:
            out = product(X)
            on_product()
            return out

        op.matmat = counted
    cap = int(max(1, min(cap, op.n - 2)))
    if np.isfinite(edge):
        return eigen_above(op, edge, cap, 0, start)
    if op.n <= 400:
        return leading_eigenpairs(op, cap, 1.0, 0)
    from scipy.sparse.linalg import eigsh  # a fixed rank: exact Lanczos, wherever the values lie

    v_init = np.random.default_rng([0, _EIGEN_STREAM]).standard_normal(op.n)
    vals, vecs = eigsh(op.linear_operator(), k=cap, which="LA", v0=v_init, tol=1e-5)
    order = np.argsort(vals)[::-1]
    return vals[order], vecs[:, order]
