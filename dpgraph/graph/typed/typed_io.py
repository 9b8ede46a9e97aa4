"""The 'typed' and 'sparsetyped' payload kinds of the dpgraph file format.

Registered in :mod:`dpgraph.graph.io` next to ``packed`` and ``sparse``.

'typed' (a dense typed release, the value bit planes).
Payload: ``value_bits`` planes, each the ``packed`` layout (n rows of
ceil(n / 64) little-endian uint64 words); plane k holds bit k of every
pair's value index.  Header fields added: ``value_bits``, ``words_per_row``,
``word_bits`` (64), ``bit_order`` ("lsb0") and ``tie_values`` (the declared
``edge_attr``, ``values`` and ``bins``: public, declared before the release).

The reader refuses a declaration that :func:`~.encoding.tie_values` would
refuse, a ``value_bits`` other than ceil(log2 K), a payload of the wrong
size, bits outside the vertex pairs in any plane, and a pair spelling a value
index >= K.  The flip numerator must be the certified one for K values
(checked by the caller, :func:`dpgraph.graph.io.read_release`).

'sparsetyped' (a subsampled typed release): the ``sparse`` payload (indptr
int64 x (n + 1), indices int32 or int64 x E, its header fields
``stored_pairs``, ``index_bytes``, ``keep_numerator``), then one uint8 value
index (1..K-1) a stored pair, and ``tie_values``.  The reader refuses what
the ``sparse`` reader refuses and a value outside 1..K-1; the caller derives
keep and the channel from ``keep_numerator`` and the flip numerator and
refuses a header that claims others.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from ..packed import has_non_pair_bits, words_per_row
from ..sparse_io import read_csr, sparse_payload
from .adjacency import TypedAdjacency, _indicator
from .encoding import TieValues, tie_values, value_bits
from .sparse_adjacency import SparseTypedAdjacency

__all__ = ["header_tie_values", "sparse_typed_payload", "sparse_typed_read", "typed_payload",
           "typed_read"]


def typed_payload(adj: TypedAdjacency) -> tuple[dict, np.ndarray]:
    """Header fields and payload bytes of a TypedAdjacency (the caller adds ``tie_values``).

    Examples
    --------
    >>> planes = np.zeros((2, 3, 1), dtype=np.uint64)
    >>> meta, buf = typed_payload(TypedAdjacency(planes, 3, False, 3))
    >>> meta["value_bits"], buf.nbytes
    (2, 48)
    """
    planes = np.ascontiguousarray(adj.planes)
    if sys.byteorder != "little":  # pragma: no cover - big-endian hosts
        planes = planes.byteswap()
    meta = {"value_bits": int(planes.shape[0]), "words_per_row": int(planes.shape[2]),
            "word_bits": 64, "bit_order": "lsb0"}
    return meta, planes.reshape(-1)


def header_tie_values(header: dict, label_from_json: Any) -> TieValues:
    """The declared tie values of a typed file's header, validated as at release time."""
    raw = header.get("tie_values")
    if not isinstance(raw, dict) or set(raw) != {"edge_attr", "values", "bins"} \
            or not isinstance(raw["values"], list) or not raw["values"] \
            or not (raw["bins"] is None or isinstance(raw["bins"], list)):
        raise ValueError("file header: a typed file needs tie_values {edge_attr, values, bins}")
    try:
        values = [label_from_json(v) for v in raw["values"]]
        ties = tie_values(label_from_json(raw["edge_attr"]), values, raw["bins"])
    except (TypeError, ValueError):
        raise ValueError("file header: tie_values is not a valid declaration") from None
    return ties


def typed_read(buf: np.ndarray, header: dict, n: int, directed: bool) -> TypedAdjacency:
    """Check and read a typed payload (``header["K"]`` set by the caller from ``tie_values``)."""
    K = int(header["K"])
    B = value_bits(K)
    nw = words_per_row(n)
    if header.get("value_bits") != B or header.get("words_per_row") != nw \
            or header.get("word_bits") != 64 or header.get("bit_order") != "lsb0":
        raise ValueError("file header: typed layout fields do not match n and K; the file is corrupted")
    if buf.nbytes != B * n * nw * 8:
        raise ValueError("file header: payload size does not match n and K; the file is corrupted")
    planes = buf.view("<u8").reshape(B, n, nw).astype(np.uint64, copy=False)
    if any(has_non_pair_bits(planes[k], n, directed) for k in range(B)):
        raise ValueError("file has bits set outside the vertex pairs of its graph; it is corrupted")
    for v in range(K, 1 << B):  # value indices the universe does not have
        if np.any(_indicator(planes, v)):
            raise ValueError("file has a pair whose value index is not one of its K values; "
                             "it is corrupted")
    return TypedAdjacency(planes, n, directed, K)


def sparse_typed_payload(adj: SparseTypedAdjacency) -> tuple[dict, np.ndarray]:
    """Header fields and payload bytes of a SparseTypedAdjacency: its CSR, then its values.

    Examples
    --------
    >>> A = SparseTypedAdjacency(np.array([0, 1, 1]), np.array([1], dtype=np.int32),
    ...                          np.array([2], dtype=np.uint8), 2, False, 3)
    >>> meta, buf = sparse_typed_payload(A)
    >>> meta["stored_pairs"], meta["value_bytes"], buf.nbytes
    (1, 1, 29)
    """
    meta, csr = sparse_payload(adj.any_tie)
    meta["value_bytes"] = 1
    return meta, np.concatenate([csr, np.ascontiguousarray(adj.values, dtype=np.uint8)])


def sparse_typed_read(buf: np.ndarray, header: dict, n: int, directed: bool) -> SparseTypedAdjacency:
    """Check and read a sparse typed payload (``header["K"]`` set by the caller)."""
    K = int(header["K"])
    if header.get("value_bytes") != 1:
        raise ValueError("file header: value_bytes must be 1; the file is corrupted")
    indptr, indices, keep_numerator, values = read_csr(buf, header, n, directed, 1)
    values = values.view(np.uint8)
    if values.size and (values.min() < 1 or values.max() >= K):
        raise ValueError("file has a stored pair whose value index is not one of its K - 1 tie "
                         "values; it is corrupted")
    return SparseTypedAdjacency(indptr, indices, values.copy(), n, directed, K, keep_numerator)
