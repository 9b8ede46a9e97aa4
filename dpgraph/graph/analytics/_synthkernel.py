"""numba kernels of synthesis: the fused candidate pass over packed bits, the greedy selection.

Imported lazily (through :func:`dpgraph._numba.load_kernels`) by
:mod:`.synthesis` and :mod:`.synthesis_targets`, whose numpy paths keep the
same candidates (up to float32 rounding of the prior) and the same selection
when numba is absent.
"""

from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True, nogil=True)
def score_block(words, i0, i1, n, left, right, bound, t_out, t_in,
                out_r, out_c, out_p, out_b):  # pragma: no cover - compiled
    """Pairs (i, j), i0 <= i < i1, i < j < n, whose prior left[i] . right[j] reaches the
    threshold of their class (``t_in`` if the released bit is 1, else ``t_out``).

    The bit of pair (i, j) is bit j & 63 of ``words[i, j >> 6]`` (the upper triangle).
    ``bound[i]`` bounds row i's priors from above (Cauchy-Schwarz): a row that cannot
    reach the smaller threshold is skipped whole.  Writes the kept pairs to the ``out_``
    arrays (capacity: every pair of the block) and returns how many.
    """
    k = left.shape[1]
    lowest = min(t_out, t_in)
    cnt = 0
    one = np.uint64(1)
    for i in range(i0, i1):
        if bound[i] < lowest:
            continue
        for w in range((i + 1) >> 6, words.shape[1]):
            word = words[i, w]
            j0 = max(w << 6, i + 1)
            j1 = min((w + 1) << 6, n)
            for j in range(j0, j1):
                if k == 1:
                    p = np.float32(left[i, 0] * right[j, 0])
                else:
                    s = 0.0
                    for c in range(k):
                        s += left[i, c] * right[j, c]
                    p = np.float32(s)
                bit = (word >> np.uint64(j & 63)) & one
                if bit != 0:
                    if p < t_in:
                        continue
                elif p < t_out:
                    continue
                out_r[cnt] = i
                out_c[cnt] = j
                out_p[cnt] = p
                out_b[cnt] = bit != 0
                cnt += 1
    return cnt


@nb.njit(cache=True, nogil=True)
def greedy(rows, cols, left, most):  # pragma: no cover - compiled
    """Pairs taken in order while both ends have ``left`` > 0 (decremented), at most ``most``."""
    chosen = np.zeros(rows.size, dtype=np.bool_)
    count = 0
    for t in range(rows.size):
        if count >= most:
            break
        a, b = rows[t], cols[t]
        if left[a] > 0 and left[b] > 0:
            left[a] -= 1
            left[b] -= 1
            chosen[t] = True
            count += 1
    return chosen
