"""The release: randomized response on every vertex pair, bit-packed.

Layout and randomness schedule
------------------------------
The packed matrix has ``n`` rows of ``nw = ceil(n / 64)`` uint64 words (see
:mod:`dpgraph.graph.packed`).  Rows are processed in *bands* of 64 rows; band
``a`` (rows 64a .. 64a+63) of an undirected release only has pairs (i, j),
j > i, in words ``a .. nw-1``, so it draws a rectangle of ``64 x (nw - a)``
Bernoulli words and nothing for the zero lower triangle: about n^2 / 128
words in all, i.e. one random bit per unordered pair plus half a diagonal
word per row.  A directed release draws every word.

Bands are grouped so one call to :func:`~dpgraph.core.sampling.bernoulli_words`
samples at most ``_GROUP_WORDS`` words.  The grouping depends on ``n`` only,
and the sampler's use of the stream is fixed, so a seed gives the same release
on every machine and thread count.  Bits that are not rows of the database
(the diagonal, the lower part of each diagonal word, padding past column n-1)
are cleared afterwards, then the true edges are XORed in: a released bit is
``edge XOR flip`` with ``P(flip) = numerator / 2^64`` exactly.

Memory: the packed matrix (n^2 / 8 bytes, 2 bits per unordered pair) plus one
group of sampled words (<= 8 MiB) and the sampler's scratch (about 9x that).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..core.probabilities import RRProbabilities
from ..core.randomness import RandomSource
from ..core.sampling import bernoulli_words
from .encoding import EncodedGraph
from .packed import PackedAdjacency, clear_non_pairs, words_per_row, xor_edges

__all__ = ["fill_bands", "release_packed", "row_bands", "sample_bands", "sample_packed_flips",
           "xor_edges"]

_GROUP_WORDS = 1 << 20  # words sampled per sampler call; fixed, part of the seed contract


def row_bands(n: int, nw: int, directed: bool) -> list[tuple[int, int, int]]:
    """(first row, last row + 1, first word) of every 64-row band.

    An undirected release's band ``a`` starts at word ``a`` (nothing is drawn
    for the zero lower triangle); a directed one's at word 0.
    """
    return [(r0, min(n, r0 + 64), 0 if directed else r0 >> 6) for r0 in range(0, n, 64)]


def sample_bands(out: np.ndarray, bands: list[tuple[int, int, int]], end_word: int,
                 draw: Callable[[int], np.ndarray], row0: int = 0, word0: int = 0) -> None:
    """Fill each band (rows r0..r1, words w0..end_word) of ``out`` with sampled words.

    The bands are grouped, in band order, so that one call ``draw(total)``
    samples at most ``_GROUP_WORDS`` words; its result, shape (..., total),
    is cut into the group's bands along the last axis; its leading axes (one
    bit set per tie value, for a typed release) map to those of ``out``.
    This grouping is the seed contract shared by the binary and typed
    releases and the blockwise tiles (``row0`` and ``word0`` place a tile's
    bands in its own array).
    """
    k = 0
    while k < len(bands):  # one sampler call per group of bands
        group, total = [], 0
        while k < len(bands):
            r0, r1, w0 = bands[k]
            size = (r1 - r0) * (end_word - w0)
            if group and total + size > _GROUP_WORDS:
                break
            group.append(bands[k])
            total += size
            k += 1
        flat = draw(total)
        off = 0
        for r0, r1, w0 in group:
            size = (r1 - r0) * (end_word - w0)
            block = flat[..., off : off + size].reshape(flat.shape[:-1] + (r1 - r0, end_word - w0))
            out[..., r0 - row0 : r1 - row0, w0 - word0 : end_word - word0] = block
            off += size


def fill_bands(out: np.ndarray, bands: list[tuple[int, int, int]], end_word: int,
               numerator: int, source: RandomSource, row0: int = 0, word0: int = 0) -> None:
    """Fill each band (rows r0..r1, words w0..end_word) of ``out`` with flip words.

    :func:`sample_bands` with :func:`~dpgraph.core.sampling.bernoulli_words`
    as the sampler: the schedule shared by the in-memory release and the
    blockwise tiles.
    """
    scratch = [np.empty(0, dtype=np.uint64)]  # one buffer reused by every group: fresh pages cost more

    def draw(total: int) -> np.ndarray:
        if scratch[0].size < total:
            scratch[0] = np.empty(total, dtype=np.uint64)
        return bernoulli_words(total, numerator, source, out=scratch[0][:total])

    sample_bands(out, bands, end_word, draw, row0, word0)


def sample_packed_flips(n: int, directed: bool, numerator: int, source: RandomSource,
                        out: np.ndarray | None = None) -> np.ndarray:
    """Packed matrix of independent flips: bit (i, j) is 1 with prob. numerator / 2^64.

    Only bits that are rows of the database can be 1: j > i for an undirected
    release, j != i for a directed one, and j < n.

    Parameters
    ----------
    n : int
        Number of nodes (>= 2).
    directed : bool
        Ordered pairs (all j != i) instead of unordered ones (j > i).
    numerator : int
        Flip probability numerator, in [0, 2^64).
    source : RandomSource
        Uniform 64-bit words.
    out : numpy.ndarray, optional
        A zeroed uint64 array of shape (n, ceil(n / 64)) to fill.

    Returns
    -------
    numpy.ndarray of uint64, shape (n, ceil(n / 64))

    Examples
    --------
    >>> from dpgraph.core.randomness import SeededRandom
    >>> w = sample_packed_flips(5, False, (1 << 64) - 1, SeededRandom(0))  # p ~ 1
    >>> [bin(int(x)) for x in w[:, 0]]
    ['0b11110', '0b11100', '0b11000', '0b10000', '0b0']
    """
    nw = words_per_row(n)
    words = np.zeros((n, nw), dtype=np.uint64) if out is None else out
    fill_bands(words, row_bands(n, nw, directed), nw, numerator, source)
    clear_non_pairs(words, n, directed)
    return words


def release_packed(enc: EncodedGraph, rr: RRProbabilities, source: RandomSource) -> PackedAdjacency:
    """Flip every vertex pair of ``enc`` independently with probability rr.flip_probability.

    Parameters
    ----------
    enc : EncodedGraph
        The validated input (edge endpoints as node positions).
    rr : RRProbabilities
        Certified K = 2 probabilities; pairs flip with ``rr.flip_numerator / 2^64``.
    source : RandomSource
        Where every random bit comes from.

    Returns
    -------
    PackedAdjacency

    The memory is not checked here, after a charge: ``dpgraph.release``
    checks :func:`~dpgraph.graph._memory.release_bytes` (the matrix, one
    group of sampled words and the sampler's scratch) before it.

    Examples
    --------
    >>> import networkx as nx
    >>> from dpgraph.graph.encoding import encode_graph
    >>> from dpgraph.core.probabilities import rr_probabilities
    >>> from dpgraph.core.randomness import SeededRandom
    >>> adj = release_packed(encode_graph(nx.path_graph(100)), rr_probabilities(5.0), SeededRandom(0))
    >>> adj.n, adj.nbytes
    (100, 1600)
    """
    n, directed = enc.n, enc.directed
    words = sample_packed_flips(n, directed, rr.flip_numerator, source)
    xor_edges(words, enc.rows, enc.cols)
    return PackedAdjacency(words, n, directed)
