"""The direct n x n evaluation of the triangle statistics, kept as a reference.

This is how :func:`.motifs.triangle_statistics` was computed before the
sparse and packed passes: the release materialized as a dense float32 matrix
Y (3 n^2 floats) and every per-pair term evaluated on row blocks of C = Y Y.
It is the oracle of the tests (same values to floating-point tolerance) and
the baseline of ``benchmarks/bench_motifs.py``; the library does not call it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..._numba import load_kernels
from ..answers import require_undirected
from ._shared import _block_rows, _dense_release, _entry_map
from .motifs import TriangleStatistics

if TYPE_CHECKING:  # pragma: no cover
    from ..private import PrivateGraph

__all__ = ["dense_triangle_statistics"]


def dense_triangle_statistics(R: PrivateGraph, use_numba: bool = True) -> TriangleStatistics:
    """Triangle statistics by the dense n x n pass (see the module docstring).

    Raises MemoryError when 3 n^2 float32 do not fit.
    """
    require_undirected(R, "triangle counting")
    n = R.number_of_nodes()
    z0, z1 = _entry_map(R.channel)
    dl = z1 - z0
    u0, eps_u = z0 * z0, z1 * z1 - z0 * z0
    v0, v1 = R.channel.entry_variances()
    gam = v1 - v0
    w0, om = v0 + gam * z0, gam * dl
    Y = _dense_release(R)
    deg = Y.sum(axis=1, dtype=np.float64)
    D = (n - 1) * z0 + dl * deg  # row sums of Z
    Q = (n - 1) * u0 + eps_u * deg  # row sums of U
    tri = lin_t = quad_t = cub_t = lin_w = lin_c = 0.0
    node_t = np.zeros(n)
    node_lin = np.zeros(n)
    b = _block_rows(n)
    k = load_kernels("dpgraph.graph.analytics._trikernel", ("block_terms",)) if use_numba else None
    kernel = None if k is None else k[0]
    for i0 in range(0, n, b):
        i1 = min(n, i0 + b)
        if kernel is not None:  # one compiled pass over the block
            terms = kernel(Y[i0:i1] @ Y, Y[i0:i1], i0, deg, D, Q, n, z0, dl, u0, eps_u, w0, om,
                           node_t, node_lin)
            tri, lin_t, quad_t, cub_t, lin_w, lin_c = (
                a + t for a, t in zip((tri, lin_t, quad_t, cub_t, lin_w, lin_c), terms))
            continue
        C = (Y[i0:i1] @ Y).astype(np.float64)
        Yb = Y[i0:i1].astype(np.float64)
        off = np.ones_like(Yb, dtype=bool)
        off[np.arange(i1 - i0), np.arange(i0, i1)] = False
        di = deg[i0:i1, None]
        dj = deg[None, :]
        ai = di - Yb  # sum_{k != i, j} Y_ik
        aj = dj - Yb  # sum_{k != i, j} Y_kj
        Z = np.where(off, z0 + dl * Yb, 0.0)
        U = np.where(off, u0 + eps_u * Yb, 0.0)
        Sv = np.where(off, w0 + om * Yb, 0.0)
        Z2 = np.where(off, (n - 2) * z0 * z0 + z0 * dl * (ai + aj) + dl * dl * C, 0.0)
        U2 = (n - 2) * u0 * u0 + u0 * eps_u * (ai + aj) + eps_u * eps_u * C
        UZ = (n - 2) * u0 * z0 + u0 * dl * aj + eps_u * z0 * ai + eps_u * dl * C
        ZU = (n - 2) * z0 * u0 + z0 * eps_u * aj + dl * u0 * ai + dl * eps_u * C
        S2 = (n - 2) * w0 * w0 + w0 * om * (ai + aj) + om * om * C
        ZZ = Z2 * Z
        tri += ZZ.sum()
        node_t[i0:i1] = 0.5 * ZZ.sum(axis=1)
        L2 = Z2 * Z2 - U2 + Z2
        SL = (Sv * L2).sum(axis=1)
        node_lin[i0:i1] = SL
        lin_t += SL.sum()
        quad_t += (Z * S2).sum()
        cub_t += (S2 * Sv).sum()
        Di = D[i0:i1, None] - Z
        Dj = D[None, :] - Z
        Qi = Q[i0:i1, None] - U
        Qj = Q[None, :] - U
        M2 = (Di + Dj) ** 2 - (Qi - Di) - (Qj - Dj)
        lin_w += (Sv * M2).sum()
        LM = Z2 * (Di + Dj) - UZ - ZU + 2 * Z2
        lin_c += (Sv * LM).sum()
    T = tri / 6.0
    node_w = 0.5 * (D * D - Q)
    W = float(node_w.sum())
    # pairs i<j are half the ordered off-diagonal sums
    lin_t, quad_t, lin_w, lin_c = lin_t / 2, quad_t / 2, lin_w / 2, lin_c / 2
    cub_t = cub_t / 6.0
    srow = (n - 1) * w0 + om * deg  # row sums of S
    s2row = (n - 1) * w0 * w0 + ((w0 + om) ** 2 - w0 * w0) * deg  # row sums of S o S
    quad_w = 0.5 * float(np.sum(srow * srow - s2row))
    var_t = max(lin_t + quad_t + cub_t, 0.0)
    var_w = max(lin_w + quad_w, 0.0)
    cov = lin_c + quad_t
    return TriangleStatistics(float(T), W, float(var_t), float(var_w), float(cov), node_t, node_w,
                              node_lin, path="dense")
