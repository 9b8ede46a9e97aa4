"""numba kernels of the bit-sliced samplers; imported lazily by :mod:`dpgraph.core.sampling`.

They compute exactly what the numpy rounds compute, from the same random
words in the same order, fused into one pass (no temporaries, no separate
compaction pass), so a seed gives identical words with or without numba.
The binary (Bernoulli) and K-ary samplers share one comparison loop,
:func:`compare_rounds`.
"""

from __future__ import annotations

import numba as nb
import numpy as np

_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
_BLOCK = 1024  # words per block of the K-ary rounds: the block's state stays in the L1 cache


@nb.njit(cache=True, nogil=True)
def compare_round(row, b, out, und):  # pragma: no cover - compiled
    """One round of the bit-sliced comparison of 64-lane words with a threshold.

    row[i] supplies the next bit (most significant first) of the 64 lanes'
    uniform integers of word i, b the threshold's bit as 0 or all ones.  A
    lane is decided below the threshold (its bit of ``out`` set) where its
    bit is 0 and the threshold's 1, decided not below in the reverse case,
    and stays open (its bit of ``und`` kept) where they agree.  Contiguous
    rows, so LLVM vectorizes the loop.
    """
    for i in range(out.shape[0]):
        d = row[i]
        u = und[i]
        out[i] |= ~d & u & b
        und[i] = u & ~(d ^ b)


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
    for k in range(rounds):  # round-major over contiguous rows
        compare_round(draws[k], bits[k], out, und)
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


@nb.njit(cache=True, nogil=True)
def kary_dense_rounds(draws, tbits, lt, alive, open_und):  # pragma: no cover - compiled
    """The first rounds against every threshold j (bits ``tbits[j]``) for every word; compacts.

    ``lt[j]`` collects the lanes decided below threshold j.  Writes the
    indices of the words with a lane still open against some threshold to
    ``alive`` and their open lanes to ``open_und`` (one row a word, one
    column a threshold); returns how many.  Blocks of words, each block's
    state in a small buffer, so the block's draws and state stay in the L1
    cache while every threshold reads them and while the block is compacted.
    """
    rounds, c = draws.shape
    J = lt.shape[0]
    o = np.empty(_BLOCK, dtype=np.uint64)
    und = np.empty((J, _BLOCK), dtype=np.uint64)
    count = 0
    for i0 in range(0, c, _BLOCK):
        w = min(c, i0 + _BLOCK) - i0
        for j in range(J):
            out = o[:w]
            u = und[j, :w]
            out[:] = 0
            u[:] = _ALL
            for k in range(rounds):
                compare_round(draws[k, i0 : i0 + w], tbits[j, k], out, u)
            lt[j, i0 : i0 + w] = out
        for i in range(w):  # compact the block's open words while they are in cache
            any_open = np.uint64(0)
            for j in range(J):
                any_open |= und[j, i]
            if any_open != 0:
                alive[count] = i0 + i
                for j in range(J):
                    open_und[count, j] = und[j, i]
                count += 1
    return count


@nb.njit(cache=True, nogil=True)
def kary_sparse_round(lt, open_und, alive, draws, tbits_k, count):  # pragma: no cover - compiled
    """One further round for the ``count`` open words (one draw each); returns the new count."""
    J = tbits_k.shape[0]
    kept = 0
    for q in range(count):
        i = alive[q]
        d = draws[q]
        o = np.uint64(0)
        for j in range(J):
            b = tbits_k[j]
            u = open_und[q, j]
            lt[j, i] |= ~d & u & b
            u &= ~(d ^ b)
            open_und[kept, j] = u
            o |= u
        if o != 0:
            alive[kept] = i
            kept += 1
    return kept


@nb.njit(cache=True, nogil=True)
def count_planes(lt, S):  # pragma: no cover - compiled
    """S += [U < t_j] for every j: a bit-sliced counter over the planes S (B, c)."""
    J, c = lt.shape
    B = S.shape[0]
    carry = np.empty(c, dtype=np.uint64)
    for j in range(J):
        for i in range(c):
            carry[i] = lt[j, i]
        for k in range(B):
            for i in range(c):
                s = S[k, i]
                S[k, i] = s ^ carry[i]
                carry[i] = s & carry[i]
