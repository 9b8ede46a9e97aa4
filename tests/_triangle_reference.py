"""The direct n x n evaluation of the triangle statistics: the oracle of the tests.

This is how :func:`dpgraph.graph.analytics.motifs.triangle_statistics` was
computed before the sparse and packed passes: the release materialized as a
dense float32 matrix Y (3 n^2 floats) and every per-pair term evaluated on row
blocks of C = Y Y.  It is the oracle of ``tests/test_motifs.py`` (same values
to floating-point tolerance) and the baseline of ``benchmarks/bench_motifs.py``;
the library does not call it.  The per-block pass is compiled with numba when
numba is installed, in numpy otherwise.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpgraph.graph.analytics._shared import _block_rows, _dense_release, _entry_map
from dpgraph.graph.analytics.motifs import TriangleStatistics
from dpgraph.graph.answers import require_undirected

__all__ = ["dense_triangle_statistics"]


try:  # numba is optional: without it the numpy pass below gives the same values
    import numba as nb
except ImportError:  # pragma: no cover
    nb = None

if nb is not None:
    @nb.njit(cache=True, parallel=True, fastmath=False)
    def block_terms(C, Yb, i0, deg, D, Q, n, z0, dl, u0, eps_u, w0, om, node_t, node_lin):
        rows, cols = C.shape
        tri = 0.0
        lin_t = 0.0
        quad_t = 0.0
        cub_t = 0.0
        lin_w = 0.0
        lin_c = 0.0
        a0 = (n - 2) * z0 * z0
        b0 = (n - 2) * u0 * u0
        c0 = (n - 2) * u0 * z0
        s0 = (n - 2) * w0 * w0
        for r in nb.prange(rows):
            i = i0 + r
            di = deg[i]
            Di0 = D[i]
            Qi0 = Q[i]
            tri_r = 0.0
            lin_r = 0.0
            quad_r = 0.0
            cub_r = 0.0
            linw_r = 0.0
            linc_r = 0.0
            for j in range(cols):
                if j == i:
                    continue
                y = np.float64(Yb[r, j])
                c = np.float64(C[r, j])
                ai = di - y
                aj = deg[j] - y
                Z = z0 + dl * y
                U = u0 + eps_u * y
                Sv = w0 + om * y
                Z2 = a0 + z0 * dl * (ai + aj) + dl * dl * c
                U2 = b0 + u0 * eps_u * (ai + aj) + eps_u * eps_u * c
                UZ = c0 + u0 * dl * aj + eps_u * z0 * ai + eps_u * dl * c
                ZU = c0 + z0 * eps_u * aj + dl * u0 * ai + dl * eps_u * c
                S2 = s0 + w0 * om * (ai + aj) + om * om * c
                tri_r += Z2 * Z
                lin_r += Sv * (Z2 * Z2 - U2 + Z2)
                quad_r += Z * S2
                cub_r += S2 * Sv
                Di = Di0 - Z
                Dj = D[j] - Z
                Qi = Qi0 - U
                Qj = Q[j] - U
                linw_r += Sv * ((Di + Dj) ** 2 - (Qi - Di) - (Qj - Dj))
                linc_r += Sv * (Z2 * (Di + Dj) - UZ - ZU + 2 * Z2)
            node_t[i] = 0.5 * tri_r
            node_lin[i] = lin_r
            tri += tri_r
            lin_t += lin_r
            quad_t += quad_r
            cub_t += cub_r
            lin_w += linw_r
            lin_c += linc_r
        return tri, lin_t, quad_t, cub_t, lin_w, lin_c


def dense_triangle_statistics(R: Any, use_numba: bool = True) -> TriangleStatistics:
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
    kernel = block_terms if use_numba and nb is not None else None
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
