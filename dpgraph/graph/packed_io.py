"""The packed payload of the file format: a full binary release's words, row by row."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from .packed import PackedAdjacency, has_non_pair_bits, words_per_row

__all__ = ["packed_payload", "packed_read"]


def packed_payload(adj: Any) -> tuple[dict, np.ndarray]:
    """(header fields, payload) of a :class:`~dpgraph.graph.packed.PackedAdjacency`."""
    words = np.ascontiguousarray(adj.words)
    if sys.byteorder != "little":  # pragma: no cover - big-endian hosts
        words = words.byteswap()
    meta = {"words_per_row": int(words.shape[1]), "word_bits": 64, "bit_order": "lsb0"}
    return meta, words


def packed_read(buf: np.ndarray, header: dict, n: int, directed: bool) -> Any:
    """The :class:`~dpgraph.graph.packed.PackedAdjacency` of a payload, checked against n."""
    nw = words_per_row(n)
    if header.get("words_per_row") != nw or header.get("word_bits") != 64 \
            or header.get("bit_order") != "lsb0":
        raise ValueError("file header: packed layout fields do not match n; the file is corrupted")
    if buf.nbytes != n * nw * 8:
        raise ValueError("file header: payload size does not match n; the file is corrupted")
    words = buf.view("<u8").reshape(n, nw).astype(np.uint64, copy=False)
    if has_non_pair_bits(words, n, directed):
        raise ValueError("file has bits set outside the vertex pairs of its graph; it is corrupted")
    return PackedAdjacency(words, n, directed)
