"""The release: randomized response on every vertex pair, bit-packed."""

from __future__ import annotations

import numpy as np

from ..core.probabilities import RRProbabilities
from ..core.randomness import RandomSource
from ..core.sampling import bernoulli_words
from ._memory import check_fits
from .encoding import EncodedGraph
from .packed import PackedAdjacency, words_per_row

__all__ = ["release_packed"]

_BLOCK_ROWS = 1024  # fixed: the stream consumed per block must not depend on the machine


def release_packed(enc: EncodedGraph, rr: RRProbabilities, source: RandomSource) -> PackedAdjacency:
    """Flip every vertex pair of ``enc`` independently with probability rr.move_probability.

    Each row block draws exactly the words it needs (for an undirected graph,
    from the word holding pair (i, i+1) on), samples them with the bit-sliced
    dyadic sampler, clears the bits that are not rows of the database (the
    diagonal, the lower triangle, the padding past n) and XORs in the true
    edges.  Memory: the packed matrix (n^2 / 8 bytes) plus one block.
    """
    n, directed = enc.n, enc.directed
    nw = words_per_row(n)
    check_fits(n * nw * 8, f"a packed release of {n} nodes")
    words = np.zeros((n, nw), dtype=np.uint64)
    col_word = np.arange(nw)
    tail_bits = n % 64
    one = np.uint64(1)
    for i0 in range(0, n, _BLOCK_ROWS):
        i = np.arange(i0, min(n, i0 + _BLOCK_ROWS))
        if directed:
            need = np.ones((i.size, nw), dtype=bool)
        else:
            need = col_word[None, :] >= ((i + 1) >> 6)[:, None]
        block = np.zeros((i.size, nw), dtype=np.uint64)
        block[need] = bernoulli_words(int(need.sum()), rr.move_numerator, source)
        r = np.arange(i.size)
        if directed:  # clear the diagonal bit
            block[r, i >> 6] &= ~np.left_shift(one, (i & 63).astype(np.uint64))
        else:  # keep only bits j > i in the word holding j = i + 1
            w0, b = (i + 1) >> 6, ((i + 1) & 63).astype(np.uint64)
            ok = w0 < nw
            block[r[ok], w0[ok]] &= ~(np.left_shift(one, b[ok]) - one)
        if tail_bits:
            block[:, nw - 1] &= np.uint64((1 << tail_bits) - 1)
        words[i0 : i0 + i.size] = block
    flat = enc.rows * nw + (enc.cols >> 6)
    np.bitwise_xor.at(words.reshape(-1), flat, np.left_shift(one, (enc.cols & 63).astype(np.uint64)))
    return PackedAdjacency(words, n, directed)
