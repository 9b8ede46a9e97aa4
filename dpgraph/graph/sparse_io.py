"""The 'sparse' payload kind of the dpgraph file format (CSR of a sparse release).

:mod:`dpgraph.graph.io` writes a header (public metadata, including the
channel (d, r) of a subsampled release) and a payload whose layout its
``kind`` names.  This module provides the writer and reader of the payload of
a :class:`~dpgraph.graph.sparse.SparseAdjacency`, held by the sparse row of
the table of release kinds (:data:`dpgraph.graph.kinds.KINDS`).

Payload (little-endian)::

    indptr   int64 x (n + 1)          row i holds stored pairs indptr[i] .. indptr[i+1]-1
    indices  int32 or int64 x E       their columns, strictly increasing within a row

Header fields added by the writer: ``stored_pairs`` (E), ``index_bytes`` (4 or
8) and ``keep_numerator`` (decimal string k, keep = k / 2^64).  The reader
refuses a payload whose sizes disagree with the header, whose indptr is not
monotone from 0 to E, or that stores a pair outside the database (j <= i for
an undirected release, j == i for a directed one, j >= n) or a pair twice;
and, when the header carries a channel, one that is not exactly the channel
of (keep_numerator, flip_numerator).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import numpy as np

from ..core import kept_response

if TYPE_CHECKING:
    from .sparse import SparseAdjacency

__all__ = ["read_csr", "sparse_payload", "sparse_read"]


def sparse_payload(adj: SparseAdjacency) -> tuple[dict, np.ndarray]:
    """Header fields and payload bytes of a SparseAdjacency.

    Examples
    --------
    >>> from dpgraph.graph.sparse import SparseAdjacency
    >>> A = SparseAdjacency.from_pairs(np.array([0, 1]), np.array([2, 2]), 3, False)
    >>> meta, buf = sparse_payload(A)
    >>> meta["stored_pairs"], buf.nbytes
    (2, 40)
    """
    indptr = np.ascontiguousarray(adj.indptr, dtype=np.int64)
    indices = np.ascontiguousarray(adj.indices)
    if sys.byteorder != "little":  # pragma: no cover - big-endian hosts
        indptr, indices = indptr.byteswap(), indices.byteswap()
    payload = np.concatenate([indptr.view(np.uint8), indices.view(np.uint8)])
    meta = {
        "stored_pairs": int(indices.size),
        "index_bytes": int(indices.itemsize),
        "keep_numerator": str(int(adj.keep_numerator)),
    }
    return meta, payload


def read_csr(buf: np.ndarray, header: dict, n: int, directed: bool,
             extra_bytes_per_pair: int = 0) -> tuple[np.ndarray, np.ndarray, int, np.ndarray]:
    """Check and read the CSR part of a payload: (indptr, indices, keep_numerator, rest).

    ``rest`` is what follows the columns, ``extra_bytes_per_pair`` bytes a
    stored pair (a sparse typed release's values).

    Raises
    ------
    ValueError
        If the payload is inconsistent with the header or stores a pair that
        is not a row of the database.
    """
    from ..core.pairs import pair_index

    E, width = header.get("stored_pairs"), header.get("index_bytes")
    raw = header.get("keep_numerator")
    try:
        if not (isinstance(raw, str) and raw.isdigit() and len(raw) <= 20):
            raise ValueError
        keep_numerator = int(raw)
    except ValueError:
        raise ValueError("file header: keep_numerator is missing or malformed") from None
    if not (isinstance(E, int) and E >= 0 and width in (4, 8) and 1 <= keep_numerator <= 1 << 64):
        raise ValueError("file header: sparse layout fields are malformed; the file is corrupted")
    if buf.nbytes != 8 * (n + 1) + (width + extra_bytes_per_pair) * E:
        raise ValueError("file header: payload size does not match n and stored_pairs")
    indptr = buf[: 8 * (n + 1)].view("<i8").astype(np.int64, copy=False)
    end = 8 * (n + 1) + width * E
    indices = buf[8 * (n + 1) : end].view("<i4" if width == 4 else "<i8")
    indices = indices.astype(np.int32 if width == 4 else np.int64, copy=False)
    if indptr[0] != 0 or indptr[-1] != E or np.any(np.diff(indptr) < 0):
        raise ValueError("file payload: row pointers are not monotone from 0 to stored_pairs")
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    cols = indices.astype(np.int64)
    if E and (cols.min() < 0 or cols.max() >= n or np.any(cols == rows)
              or (not directed and np.any(cols < rows))):
        raise ValueError("file has pairs outside the vertex pairs of its graph; it is corrupted")
    if E > 1 and np.any(np.diff(pair_index(rows, cols, n, directed)) <= 0):
        raise ValueError("file payload: pairs are unsorted or repeated; the file is corrupted")
    return indptr, indices, keep_numerator, buf[end:]


def sparse_read(buf: np.ndarray, header: dict, n: int, directed: bool) -> SparseAdjacency:
    """Rebuild and validate a SparseAdjacency from a payload and its header.

    Raises
    ------
    ValueError
        If the payload is inconsistent with the header or stores a pair that
        is not a row of the database.
    """
    from ..core.probabilities import RRProbabilities
    from .sparse import SparseAdjacency

    indptr, indices, keep_numerator, _ = read_csr(buf, header, n, directed)
    ch = header.get("channel")
    if not isinstance(ch, dict):  # the estimators must use the exact subsampled channel
        raise ValueError("file header: a sparse release needs its channel; the file is corrupted")
    number = lambda x: type(x) in (int, float)  # JSON numbers only (not lists, null, bools)
    if not (number(ch.get("d")) and isinstance(ch.get("r"), list)
            and all(number(x) for x in ch["r"]) and number(header.get("keep"))):
        raise ValueError("file header: keep and the channel (d, r) must be numbers; the file "
                         "is corrupted")
    rr = RRProbabilities(K=2, epsilon=float(header["epsilon"]),
                         flip_numerator=int(header["flip_numerator"]))
    probs = kept_response(rr, keep_numerator, typed=False)
    if float(header.get("keep", -1)) != float(probs.keep):
        raise ValueError("file header: keep does not match keep_numerator; the file is corrupted")
    exact = probs.channel
    if float(ch.get("d", -1)) != exact.d or [float(x) for x in ch.get("r", [])] != exact.r.tolist():
        raise ValueError("file header: channel does not match keep_numerator and "
                         "flip_numerator; the file is corrupted")
    return SparseAdjacency(indptr, indices, n, directed, keep_numerator=keep_numerator)
