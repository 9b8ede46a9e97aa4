"""Shared internals of the analytics modules: the channel's entry map, the
per-release cache, dense blocks and the progress bar.

Nothing here is public; the statistics live in the sibling modules, and what
an analytic returns and how it is registered in :mod:`dpgraph.graph.answers`.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from ...core.estimators import Channel
from .._memory import check_call_fits


def _entry_map(channel: Channel) -> tuple[float, float]:
    """(z0, z1): the channel's debiased value of one released 0 and one released 1."""
    z = channel.debias(np.array([0.0, 1.0]))
    return float(z[0]), float(z[1])


class ReleaseCache:
    """Per-release cache of derived arrays (released degrees, triangle statistics, ...).

    Keyed weakly by the release, so it lives exactly as long as the release
    and never writes into the release object.  A release is immutable, so
    entries never go stale.
    """

    def __init__(self) -> None:
        self._store: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def of(self, R: Any) -> dict:
        """The cache dictionary of release ``R`` (created on first use)."""
        c = self._store.get(R)
        if c is None:
            c = {}
            self._store[R] = c
        return c


_CACHE = ReleaseCache()


def _cache(R: Any) -> dict:
    return _CACHE.of(R)


def _has_node(R: Any, v: Any) -> bool:
    """Whether ``v`` is a single node of the release (networkx's ``v in G``)."""
    c = _cache(R)
    if "node_set" not in c:
        c["node_set"] = frozenset(R.nodes)
    try:
        return v in c["node_set"]
    except TypeError:  # unhashable: a collection
        return False


def _observed_degrees(R: Any) -> np.ndarray:
    c = _cache(R)
    if "deg" not in c:
        c["deg"] = np.asarray(R.released_degrees(), dtype=np.int64)
    return c["deg"]


def _dense_release(R: Any) -> np.ndarray:
    """Symmetric released adjacency as float32 (exact 0/1), refusing what cannot fit."""
    n = R.number_of_nodes()
    check_call_fits(R, 3 * n * n * 4,
                    f"the dense released adjacency of {n:,} nodes (float32, n^2 entries)")
    Y = np.empty((n, n), dtype=np.float32)
    for i0, bits in R.adjacency.row_blocks():
        Y[i0 : i0 + bits.shape[0]] = bits
    # the store may hold each unordered pair once (upper triangle): symmetrize
    np.maximum(Y, Y.T, out=Y)
    return Y


def _block_rows(n: int) -> int:
    return max(1, min(n, (1 << 21) // max(n, 1)))


def progress_range(start: int, stop: int, step: int, progress: Any, n: int, what: str):
    """``range(start, stop, step)``, wrapped in a tqdm bar when ``progress`` asks for one.

    ``progress=None`` shows the bar for releases of 5,000 nodes or more when
    the error stream is a terminal; tqdm missing means no bar.  ``progress``
    is declared (``PROGRESS``) by the public function that takes it.
    """
    import sys

    show = (n >= 5000 and sys.stderr.isatty()) if progress is None else bool(progress)
    steps = range(start, stop, step)
    if not show:
        return steps
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - optional
        return steps
    return tqdm(steps, desc=what, unit="block", leave=False)
