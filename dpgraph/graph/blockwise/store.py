"""The Zarr store of a blockwise release: its format and opening it for queries.

Store layout (a Zarr v3 group)::

    <store>/zarr.json      group attributes: the metadata below
    <store>/adjacency      uint64 (n, ceil(n / 64)), chunks = one tile
    <store>/nodes          int64 (n,): the node labels in canonical (sorted) order
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.probabilities import RRProbabilities
from ..encoding import NodeIndex
from ..packed import words_per_row
from .queries import BlockwiseGraph, ZarrAdjacency
from .storage import StoreLocation
from .tiles import TilePlan

__all__ = ["FORMAT", "FORMAT_VERSION", "open_blockwise"]

FORMAT = "dpgraph-blockwise"
FORMAT_VERSION = 1


def open_blockwise(store: Any, *, release_id: str | None = None,
                   storage_options: dict | None = None) -> BlockwiseGraph:
    """Open a stored blockwise release for queries.

    Parameters
    ----------
    store : str, os.PathLike or zarr store
    release_id : str, optional
        Refuse the store unless it holds this release.
    storage_options : dict, optional

    Returns
    -------
    BlockwiseGraph

    Raises
    ------
    FileNotFoundError
        No store at that location.
    ValueError
        Not a dpgraph blockwise store, another format version, another
        release, an interrupted write, or a flip probability that fails
        certification.
    """
    loc = StoreLocation(store, storage_options)
    if not loc.exists():
        raise FileNotFoundError(
            f"no dpgraph blockwise release at {str(loc)!r}; "
            "check the path or write one with release_blockwise"
        )
    group = loc.group("r")
    meta = group.attrs.asdict()
    if meta.get("format") != FORMAT:
        raise ValueError(f"{str(loc)!r} is not a dpgraph blockwise release store")
    if meta.get("format_version") != FORMAT_VERSION:
        raise ValueError(
            f"store has format version {meta.get('format_version')!r}; this dpgraph reads "
            f"version {FORMAT_VERSION}. Use the dpgraph version that wrote it"
        )
    if release_id is not None and meta.get("release_id") != release_id:
        raise ValueError(
            f"store holds release {meta.get('release_id')!r}, not {release_id!r}: "
            "it is from another release"
        )
    if not meta.get("complete"):
        raise ValueError("store holds an incomplete release (the write was interrupted); "
                         "write it again with overwrite=True")
    rr = RRProbabilities(K=2, epsilon=float(meta["epsilon"]),
                         move_numerator=int(meta["flip_numerator"]))
    if not rr.certify():
        raise ValueError("store's flip probability does not certify its epsilon; refusing it")
    n = int(meta["n"])
    arr = group["adjacency"]
    if arr.shape != (n, words_per_row(n)):
        raise ValueError("store's adjacency shape does not match its metadata")
    labels = np.asarray(group["nodes"][:], dtype=np.int64)
    tr, tc = (int(x) for x in meta["tile"])
    adjacency = ZarrAdjacency(loc, TilePlan(n, bool(meta["directed"]), tr, tc // 64))
    return BlockwiseGraph(adjacency, NodeIndex.from_integers(labels), rr, meta)
