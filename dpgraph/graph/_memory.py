"""Refuse allocations that cannot fit, before making them (free memory from psutil).

Free memory is what the OS can give now (psutil), capped by this process's
address-space limit (``resource.RLIMIT_AS``) and its cgroup's memory limit
when they are tighter.  A method that materializes something sizes it first
and, when it cannot fit, raises :class:`MemoryError` through
:func:`check_call_fits`: what it needs, what is free, what the release is,
and what to do instead -- only alternatives that apply to *this* release
(never "use a sparse release" on a sparse release) and that fit now.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import psutil

__all__ = [
    "DENSE_RELEASE_ADVICE",
    "NODE_BYTES",
    "SMALL",
    "SPARSE_RELEASE_ADVICE",
    "Alternative",
    "available_memory",
    "check_call_fits",
    "check_fits",
    "check_node_count",
    "check_release_fits",
    "free_disk",
    "release_bytes",
    "release_kind",
    "size_text",
    "sparse_release_alternative",
]

#: below this many bytes a check does not ask the OS
SMALL = 64 << 20
#: what to do instead of a dense release that cannot fit (said only where a release is made)
DENSE_RELEASE_ADVICE = "use a machine with more memory or a sparse (keep=) or blockwise release"
#: ... and instead of a sparse release that cannot fit
SPARSE_RELEASE_ADVICE = ("use a machine with more memory, a smaller keep= or target_edges=, or a "
                         "blockwise release")
#: bytes per node of the encoded input (labels tuple, position dict, canonical order)
NODE_BYTES = 200
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


def _decades(x: int) -> int:
    """A k with 10^k <= x (x >= 1), without str() (which refuses ints of over 4,300 digits)."""
    return int((x.bit_length() - 1) * 0.30102999566398)


#: a size no float holds: no machine has it, and it can only come from a mistyped number
_BEYOND_FLOAT = 1 << 1000


def check_fits(nbytes: int, what: str, instead: str | None = None) -> None:
    """Raise MemoryError naming ``what``, what it needs and what is available, if it cannot fit.

    ``instead`` says what to do instead; the default, "run it where <size>
    is free", applies to any release: a call on a release that knows its
    kind uses :func:`check_call_fits`, which offers only what applies to it.
    A size beyond any float is a ValueError: a mistyped number, not a
    machine too small.
    """
    if nbytes < SMALL:  # not worth asking the OS
        return
    if nbytes >= _BEYOND_FLOAT:
        raise ValueError(f"{what} would need {size_text(nbytes)} of memory, beyond any machine; "
                         "check the sizes given")
    avail = available_memory()
    if nbytes > avail:
        raise MemoryError(
            f"{what} needs {size_text(nbytes)} of memory but only {size_text(avail)} is "
            f"available; nothing was allocated. Instead: "
            f"{instead or f'run it where {size_text(nbytes)} is free'}"
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
    encoded = NODE_BYTES * n
    if sparse:
        return encoded + 16 * (n + 1)
    words = n * ((n + 63) // 64)
    return encoded + 8 * words + 12 * 8 * min(words, _GROUP_WORDS)


def check_node_count(n: int) -> None:
    """Refuse more nodes than int64 positions can number: a mistyped count, not a small machine."""
    if n > sys.maxsize:
        raise ValueError(f"nodes: at least 10^{_decades(n)} nodes, more than any release can "
                         f"hold (at most {sys.maxsize:,})")


def check_release_fits(n: int | None, directed: bool, sparse: bool) -> None:
    """Refuse, before encoding the input or allocating anything, a release that cannot fit.

    ``n`` is the public node count from the input table
    (:func:`dpgraph.graph.inputs.public_n`); None (unknown) is left to the
    validation that follows.
    """
    if not isinstance(n, int) or n < 2:
        return
    check_node_count(n)
    kind = "sparse" if sparse else "dense"
    count = f"{n:,}" if n < 10**18 else f"at least 10^{_decades(n)}"
    check_fits(release_bytes(n, bool(directed), sparse), f"a {kind} release of {count} nodes",
               SPARSE_RELEASE_ADVICE if sparse else DENSE_RELEASE_ADVICE)


# ---------------------------------------------------------------------------
# what a call costs, and what to do instead
# ---------------------------------------------------------------------------
def size_text(nbytes: float) -> str:
    """``nbytes`` for a message: MiB below 1 GiB, GiB above (two decimals); a huge int as a power of ten.

    Examples
    --------
    >>> size_text(30 * 2**30), size_text(16 << 20), size_text(1000), size_text(10**400)
    ('30.00 GiB', '16.00 MiB', '0.00 MiB', '9.31e390 GiB')
    """
    if isinstance(nbytes, int) and nbytes >= 1 << 80:  # integers: a float could overflow
        g, k = nbytes >> 30, _decades(nbytes >> 30)
        return f"{g / 10**k:.2f}e{k} GiB"  # the quotient is in [1, 20): a float
    if abs(nbytes) < 2**30:
        return f"{nbytes / 2**20:,.2f} MiB"
    return f"{nbytes / 2**30:,.2f} GiB"


#: The kinds of release (:func:`release_kind`).
KINDS = ("dense", "sparse", "blockwise")


def release_kind(R: Any) -> str:
    """``"dense"``, ``"sparse"`` or ``"blockwise"``: how the release ``R`` stores its pairs.

    The ``storage`` of its row in the table of release kinds (``R.kind``,
    :func:`dpgraph.graph.kinds.kind_of`): a sparse typed release is sparse.
    """
    return R.kind.storage


@dataclass(frozen=True)
class Alternative:
    """Something to do instead of a call that cannot fit.

    Attributes
    ----------
    text : str
        What to do, e.g. ``"R.to_edgelist(path) writes the edges to disk"``.
    kinds : tuple of str
        The release kinds it applies to (default: all).
    nbytes : int or None
        Memory it needs, when known: an alternative that cannot fit now
        either is not offered.
    """

    text: str
    kinds: tuple[str, ...] = KINDS
    nbytes: int | None = None


def sparse_release_alternative(n: int) -> Alternative:
    """Release a sparse sample: offered for dense and blockwise releases only."""
    return Alternative(
        "release a sparse sample instead: dpgraph.release(G, epsilon, target_edges=k) keeps "
        f"about k released edges (`dpgraph plan --nodes {n} --epsilon E --target-edges k` "
        "shows what it costs in accuracy first)",
        kinds=("dense", "blockwise"))


def _describe(R: Any) -> str:
    try:
        kind = release_kind(R)
        n = R.number_of_nodes()
        m = R.number_of_released_edges() if kind != "blockwise" else None
    except Exception:  # pragma: no cover - a foreign object: say nothing about it
        return ""
    edges = f", {m:,} released edges" if m is not None else ""
    keep = f", keep={R.keep:.3g}" if kind == "sparse" else ""
    return f" (this release: {kind}, {n:,} nodes{edges}{keep})"


def check_call_fits(R: Any, nbytes: int, what: str,
                    alternatives: Sequence[Alternative] = ()) -> None:
    """Refuse, before allocating, a call on ``R`` that needs more memory than is free.

    Raises :class:`MemoryError` saying what ``what`` needs, what is
    available, what the release is, and what to do instead: the
    ``alternatives`` that apply to this release's kind and fit in the memory
    available now, then a machine with enough memory.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> R = dpgraph.release(nx.path_graph(5), epsilon=1.0, seed=0)
    >>> check_call_fits(R, 1000, "a tiny table")  # fits: returns None
    """
    nbytes = int(nbytes)
    if nbytes < SMALL:
        return
    avail = available_memory()
    if nbytes <= avail:
        return
    kind = release_kind(R)
    offered = [a.text for a in alternatives
               if kind in a.kinds and (a.nbytes is None or a.nbytes <= avail)]
    offered.append(f"run it where {size_text(nbytes)} is free")
    raise MemoryError(
        f"{what} needs {size_text(nbytes)} of memory but only {size_text(avail)} is available"
        f"{_describe(R)}; nothing was allocated. Instead: " + "; or ".join(offered)
    )


def free_disk(path: str | os.PathLike[str]) -> int:
    """Free bytes on the file system that holds ``path`` (its nearest existing parent)."""
    import shutil

    probe = os.path.abspath(os.fspath(path))
    while not os.path.exists(probe):
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    return int(shutil.disk_usage(probe).free)
