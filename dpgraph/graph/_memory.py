"""Refuse allocations that cannot fit, before making them (free memory from psutil)."""

from __future__ import annotations

from typing import Any

import psutil

__all__ = ["available_memory", "check_fits", "check_release_fits", "release_bytes"]

_SMALL = 64 << 20
#: bytes per node of the encoded input (labels tuple, position dict, canonical order)
_NODE_BYTES = 200
_GROUP_WORDS = 1 << 20  # words per sampler call (graph/dense.py); scratch is ~12 words each


def available_memory() -> int:
    """Bytes of memory the OS can give this process now (``psutil.virtual_memory().available``)."""
    return int(psutil.virtual_memory().available)


def _gib(nbytes: int) -> str:
    return f"{nbytes / 2**30:,.2f} GiB"


def check_fits(nbytes: int, what: str) -> None:
    """Raise MemoryError naming ``what``, what it needs and what is available, if it cannot fit."""
    if nbytes < _SMALL:  # not worth asking the OS
        return
    avail = available_memory()
    if nbytes > avail:
        raise MemoryError(
            f"{what} needs {_gib(nbytes)} of memory but only {_gib(avail)} is available; "
            "use a machine with more memory or a sparse (keep=) or blockwise release"
        )


def release_bytes(n: int, directed: bool, sparse: bool) -> int:
    """Memory an in-memory release of ``n`` nodes needs before its output grows.

    Dense: the packed matrix (n * ceil(n / 64) words) plus the sampler's
    scratch and the encoded input.  Sparse: the encoded input and the row
    pointers; the released pairs come on top (checked where they are drawn).

    Examples
    --------
    >>> release_bytes(10**9, False, False) > 10**17
    True
    """
    n = int(n)
    encoded = _NODE_BYTES * n
    if sparse:
        return encoded + 16 * (n + 1)
    words = n * ((n + 63) // 64)
    return encoded + 8 * words + 12 * 8 * min(words, _GROUP_WORDS)


def check_release_fits(G: Any, directed: bool, sparse: bool, nodes: Any = None) -> None:
    """Refuse, before encoding ``G`` or allocating anything, a release that cannot fit.

    Only the public node count is read: ``len(nodes)`` when given, else
    ``G.number_of_nodes()`` or a matrix's number of rows; inputs whose count
    is unknown are left to the validation that follows.
    """
    n = None
    if nodes is not None and hasattr(nodes, "__len__"):
        n = len(nodes)
    count = getattr(G, "number_of_nodes", None)
    if callable(count):
        n = max(n or 0, count())
    elif n is None and hasattr(G, "shape") and hasattr(G, "nnz"):  # a scipy.sparse matrix
        n = G.shape[0]
    if not isinstance(n, int) or n < 2:
        return
    kind = "sparse" if sparse else "dense"
    check_fits(release_bytes(n, bool(directed), sparse), f"a {kind} release of {n:,} nodes")
