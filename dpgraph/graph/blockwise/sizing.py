"""Disk and memory a blockwise release needs, checked before anything is written or allocated."""

from __future__ import annotations

import os
import shutil
from typing import Any

from .. import _memory
from .._memory import size_text
from .location import StoreLocation
from .tiles import TilePlan

__all__ = ["check_resources", "driver_memory", "store_bytes", "tile_memory"]

# a tile being written, the next tile's words, the sampler's uniform words and temporaries
_TILE_COPIES = 5


def store_bytes(plan: TilePlan) -> int:
    """Bytes the store takes on disk: every tile holding pairs as one full-size chunk, plus labels.

    Zarr writes edge chunks at full tile size, so this is an upper bound on
    what is written (tiles that sample no 1 bit at all are not stored).
    """
    tile = plan.tile_rows * plan.tile_words * 8
    return plan.count_tiles() * tile + 8 * plan.n


def tile_memory(plan: TilePlan) -> int:
    """Peak bytes one worker needs to sample and write one tile."""
    return _TILE_COPIES * min(plan.tile_rows, plan.n) * min(plan.tile_words, plan.nw) * 8


def driver_memory(plan: TilePlan, n_edges: int) -> int:
    """Bytes the calling process holds: node labels and the sorted edge keys."""
    return 8 * plan.n + 8 * int(n_edges)


def _free_disk(loc: StoreLocation) -> int | None:
    path = loc.local_path
    if path is None:  # remote store: its backend reports no free space
        return None
    probe = os.path.abspath(path)
    while not os.path.exists(probe):
        parent = os.path.dirname(probe)
        if parent == probe:
            return None
        probe = parent
    return int(shutil.disk_usage(probe).free)


def _existing_bytes(loc: StoreLocation) -> int:
    path = loc.local_path
    if path is None or not os.path.isdir(path):
        return 0
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.path.getsize(os.path.join(root, f))
            except OSError:
                pass
    return total


def _worker_memory(client: Any) -> int | None:
    """The smallest memory limit of the cluster's workers (None: unknown or unlimited)."""
    try:
        workers = client.scheduler_info()["workers"].values()
        limits = [int(w.get("memory_limit") or 0) for w in workers]
    except Exception:
        return None
    limits = [x for x in limits if x > 0]
    return min(limits) if limits else None


def check_resources(plan: TilePlan, loc: StoreLocation, *, n_edges: int = 0,
                    client: Any = None, replacing: bool = False) -> None:
    """Refuse a release whose store or tiles cannot fit, saying how much is needed and free.

    Raises
    ------
    ValueError
        The store needs more disk than is free at its location (local stores).
    MemoryError
        A tile needs more memory than a worker (or this machine) has, or the
        node labels and edges do not fit in this process.
    """
    _memory.check_node_count(plan.n)
    need = store_bytes(plan)
    free = _free_disk(loc)
    if free is not None:
        free += _existing_bytes(loc) if replacing else 0
        if need > free:
            raise ValueError(
                f"the store of a release of n = {plan.n:,} nodes needs about {size_text(need)} "
                f"of disk ({plan.count_tiles():,} tiles of {plan.tile_rows} x "
                f"{64 * plan.tile_words} pairs) but only {size_text(free)} is free at {str(loc)!r}; "
                "write it to a larger disk or an object store (an fsspec URL)"
            )
    per_tile = tile_memory(plan)
    limit = _worker_memory(client) if client is not None else None
    where = "a worker's memory limit"
    if limit is None:
        limit, where = _memory.available_memory(), "the available memory"
    if per_tile > limit:
        raise MemoryError(
            f"one tile of {plan.tile_rows} x {64 * plan.tile_words} pairs needs about "
            f"{size_text(per_tile)} to sample but {where} is {size_text(limit)}; use a smaller tile="
        )
    held = driver_memory(plan, n_edges)
    avail = _memory.available_memory()
    if held > avail:
        raise MemoryError(
            f"a release of n = {plan.n:,} nodes holds its node labels and edges in this process "
            f"({size_text(held)}) but only {size_text(avail)} is available"
        )
