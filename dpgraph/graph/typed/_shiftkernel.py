"""numba kernel of the typed release's last step; imported lazily by :mod:`.sampler`.

It computes exactly what the numpy path of :func:`.sampler._shift_ties`
computes (the same planes), in one pass over the ties instead of one
gather and one unbuffered XOR pass a plane.
"""

from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True, nogil=True)
def shift_ties(planes, nw, rows, cols, values, K):  # pragma: no cover - compiled
    """Replace the value S stored at every tie (rows[e], cols[e]) by (values[e] + S) mod K.

    ``planes`` is (B, n * nw) uint64: plane k holds bit k of every pair's
    value index, pair (i, j) at bit j % 64 of word i * nw + j // 64.  The
    ties are distinct pairs.
    """
    B = planes.shape[0]
    one = np.uint64(1)
    for e in range(rows.size):
        w = rows[e] * nw + (cols[e] >> 6)
        b = np.uint64(cols[e] & 63)
        s = 0
        for k in range(B):
            s |= int((planes[k, w] >> b) & one) << k
        change = ((values[e] + s) % K) ^ s
        for k in range(B):
            if (change >> k) & 1:
                planes[k, w] ^= one << b
