"""The debiased adjacency as an operator and its leading spectrum.

Shared by community detection and synthesis.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._shared import _entry_map


def _debiased_operator(R: Any):
    """Z as a LinearOperator: Z v = z0 (sum v - v) + delta Y v (Y sparse)."""
    from scipy.sparse.linalg import LinearOperator

    n = R.number_of_nodes()
    z0, z1 = _entry_map(R.channel)
    dl = z1 - z0
    Y = R.to_scipy_sparse("csr").astype(np.float64)

    def mv(v: np.ndarray) -> np.ndarray:
        v = np.asarray(v, dtype=float)
        if v.ndim == 1:
            return z0 * (v.sum() - v) + dl * (Y @ v)
        return z0 * (v.sum(axis=0, keepdims=True) - v) + dl * (Y @ v)

    return LinearOperator((n, n), matvec=mv, matmat=mv, dtype=np.float64), Y, z0, dl


def _noise_edge(R: Any, m: float) -> float:
    """Edge of the structure-less part of Z's spectrum, 2 sqrt(n (v + rho (1 - rho))).

    v is the mean per-entry variance of the mechanism's noise and rho(1-rho)
    that of a random graph of the estimated density rho: a graph without
    community structure has no eigenvalue of Z far above this.
    """
    n = R.number_of_nodes()
    N = R.number_of_pairs()
    v0, v1 = R.channel.entry_variances()
    rho = float(np.clip(m / N, 0.0, 1.0))
    vbar = v0 * (1 - rho) + v1 * rho
    return float(2.0 * np.sqrt(n * (vbar + rho * (1 - rho))))


def _leading_eigen(R: Any, edge: float, cap: int) -> tuple[np.ndarray, np.ndarray]:
    """Largest (algebraic) eigenpairs of Z, descending: all above ``edge`` up to ``cap``."""
    from scipy.sparse.linalg import eigsh

    n = R.number_of_nodes()
    Zop, Y, z0, dl = _debiased_operator(R)
    cap = int(max(1, min(cap, n - 2)))
    if n <= 200:
        Zd = z0 * (np.ones((n, n)) - np.eye(n)) + dl * Y.toarray()
        vals, vecs = np.linalg.eigh(Zd)
        return vals[::-1][:cap], vecs[:, ::-1][:, :cap]
    kk = min(12, cap)
    while True:  # ask for more eigenpairs only while all of them are above the edge
        v_init = np.random.default_rng(0).standard_normal(n)
        vals, vecs = eigsh(Zop, k=kk, which="LA", v0=v_init, tol=1e-5)
        order = np.argsort(vals)[::-1]
        vals, vecs = vals[order], vecs[:, order]
        if vals[-1] <= edge or kk >= cap:
            return vals, vecs
        kk = min(2 * kk, cap)
