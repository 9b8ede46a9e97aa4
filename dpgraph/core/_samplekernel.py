"""numba kernels of the bit-sliced Bernoulli sampler; imported lazily by :mod:`dpgraph.core.sampling`.

They compute exactly what the numpy rounds compute, from the same random
words in the same order, fused into one pass (no temporaries, no separate
compaction pass), so a seed gives identical words with or without numba.
"""

from __future__ import annotations

import numba as nb
import numpy as np

_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)


@nb.njit(cache=True, nogil=True)
def dense_rounds(draws, bits, out, alive, und):  # pragma: no cover - compiled
    """First rounds for every word of ``out`` (zeroed); compacts the open words.

    draws[k, i] supplies bit 63 - k of the 64 lanes' uniform integers for word
    i; bits[k] is the numerator's bit 63 - k as 0 or all ones.  A lane is
    decided 1 where its bit is 0 and the numerator's 1, decided 0 in the
    reverse case, and stays open where they agree.  Writes the indices of the
    words with open lanes to ``alive`` and their open lanes to ``und``;
    returns how many.
    """
    rounds, c = draws.shape
    for i in range(c):
        out[i] = 0
        und[i] = _ALL
    for k in range(rounds):  # round-major: contiguous rows, so LLVM vectorizes the loop
        b = bits[k]
        row = draws[k]
        for i in range(c):
            d = row[i]
            u = und[i]
            out[i] |= ~d & u & b
            und[i] = u & ~(d ^ b)
    count = 0
    for i in range(c):  # compact the open words in place (count <= i)
        u = und[i]
        if u != 0:
            alive[count] = i
            und[count] = u
            count += 1
    return count


@nb.njit(cache=True, nogil=True)
def sparse_round(out, alive, und, draws, bit, count):  # pragma: no cover - compiled
    """One further round for the ``count`` open words (one draw each); returns the new count."""
    kept = 0
    for j in range(count):
        d = draws[j]
        u = und[j]
        out[alive[j]] |= ~d & u & bit
        u &= ~(d ^ bit)
        if u != 0:
            alive[kept] = alive[j]
            und[kept] = u
            kept += 1
    return kept
