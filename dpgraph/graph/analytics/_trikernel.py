"""numba kernel of the triangle pass: every per-pair term of one row block in one loop.

Imported lazily by :mod:`.motifs`; the numpy path there gives the same sums
(up to floating-point summation order) when numba is absent.
"""

from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True, parallel=True, fastmath=False)
def block_terms(C, Yb, i0, deg, D, Q, n, z0, dl, u0, eps_u, w0, om, node_t, node_lin):  # pragma: no cover - compiled
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
