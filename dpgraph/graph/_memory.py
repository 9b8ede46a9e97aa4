"""Refuse allocations that cannot fit, before making them (free memory from psutil)."""

from __future__ import annotations

import psutil

__all__ = ["available_memory", "check_fits", "check_release_fits", "release_bytes"]

_SMALL = 64 << 20
#: bytes per node of the encoded input (labels tuple, position dict, canonical order)
_NODE_BYTES = 200
_GROUP_WORDS = 1 << 20  # words per sampler call (graph/dense.py); scratch is ~12 words each


def available_memory() -> int:
    """Bytes of memory this process can still get now.

    The least of the system's available memory (psutil), the room left
    under the process's address-space limit (``ulimit -v``) and the room
    left in its cgroup (``memory.max``), so a limited process is refused
    before it allocates, not killed after.
    """
    avail = int(psutil.virtual_memory().available)
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft not in (resource.RLIM_INFINITY, -1):
            avail = min(avail, soft - psutil.Process().memory_info().vms)
    except (ImportError, OSError, ValueError):
        pass
    try:
        with open("/sys/fs/cgroup/memory.max") as fh:
            limit = fh.read().strip()
        if limit != "max":
            with open("/sys/fs/cgroup/memory.current") as fh:
                avail = min(avail, int(limit) - int(fh.read().strip()))
    except (OSError, ValueError):
        pass
    return max(0, avail)


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


def check_release_fits(n: int | None, directed: bool, sparse: bool) -> None:
    """Refuse, before encoding the input or allocating anything, a release that cannot fit.

    ``n`` is the public node count from the input table
    (:func:`dpgraph.graph.inputs.public_n`); None (unknown) is left to the
    validation that follows.
    """
    if not isinstance(n, int) or n < 2:
        return
    kind = "sparse" if sparse else "dense"
    check_fits(release_bytes(n, bool(directed), sparse), f"a {kind} release of {n:,} nodes")
