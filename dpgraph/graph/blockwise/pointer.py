"""The 'store' payload kind of the dpgraph file format: a file that points at a blockwise store.

A blockwise release lives in its Zarr store (:mod:`dpgraph.graph.blockwise`);
``R.save(path)`` on it writes a small ``.dpg`` file of kind ``"store"``: the
usual header (public vertex set, epsilon, the exact flip numerator, an
optional name and signature) and no payload, plus the fields below naming
the store and what it must hold.  :func:`dpgraph.load` reopens the store,
validates it as :func:`~dpgraph.graph.blockwise.open_blockwise` does, and
refuses it unless it is the release the file names: so ``dpgraph report
FILE.dpg`` (and ``--verify-key``, for a signed file) works on a store.

Header fields added by the writer::

    store                  the store's location: a path relative to the file's folder when
                           both are local (so a folder holding both can be moved), else the URL
                           as the store was opened (never its storage options)
    release_id, nonce      the store's own (its metadata fields)
    tile                   [rows, cols] of the store's tiles
    store_metadata_sha256  SHA-256 (hex) of the store's metadata as canonical JSON (keys
                           sorted, no spaces): any change to it is refused on load

The reader refuses, naming the store as the file holds it: a store that is
missing (moved, deleted, or the file moved without it), a store that holds
another release or whose metadata changed, and a store whose size, direction,
epsilon, flip numerator or node labels disagree with the file's header.  The
bits of the tiles are the store's: they are checked as on every open (no bit
where no vertex pair is), not digested (a digest would read the whole store).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from ..encoding import NodeIndex
from ..io import current_folder
from .graph import BlockwiseGraph
from .location import StoreLocation
from .reader import _open

__all__ = ["metadata_digest", "store_payload", "store_read", "store_release"]


def metadata_digest(meta: dict) -> str:
    """SHA-256 (hex) of a store's metadata as canonical JSON (sorted keys, no spaces).

    Examples
    --------
    >>> metadata_digest({"b": 1, "a": [2]}) == metadata_digest({"a": [2], "b": 1})
    True
    """
    text = json.dumps(meta, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _where(location: Any) -> str:
    """The store's location as the file records it: relative to the file's folder if local."""
    target = location.target
    if not isinstance(target, str):
        raise TypeError("saving a pointer to a blockwise store needs the store's path or URL; "
                        "this release was opened from a store object: open it with "
                        "open_blockwise(path) and save again")
    local = location.local_path
    if local is None:  # a URL: recorded as opened, its storage options never
        return target
    store = os.path.abspath(local)
    try:
        return Path(os.path.relpath(store, os.path.abspath(current_folder()))).as_posix()
    except ValueError:  # another drive: no relative path exists
        return Path(store).as_posix()


def store_payload(adj: Any) -> tuple[dict, np.ndarray]:
    """Header fields of a pointer to the store of ``adj`` (a ZarrAdjacency), and no payload."""
    meta = adj.metadata
    fields = {
        "store": _where(adj.location),
        "release_id": str(meta["release_id"]),
        "nonce": str(meta["nonce"]),
        "tile": [int(adj._plan.tile_rows), 64 * int(adj._plan.tile_words)],
        "store_metadata_sha256": metadata_digest(meta),
    }
    return fields, np.zeros(0, dtype=np.uint8)


def _text(header: dict, field: str, size: int) -> str:
    v = header.get(field)
    if not isinstance(v, str) or not 0 < len(v) <= size or not v.isprintable():
        raise ValueError(f"file header: field {field!r} of a store pointer is missing or "
                         "malformed; the file is corrupted")
    return v


def store_read(buf: np.ndarray, header: dict, n: int, directed: bool) -> Any:
    """Open the store a pointer names and check it is that release; its ZarrAdjacency.

    Raises
    ------
    FileNotFoundError
        The store is not where the file says (moved or deleted).
    ValueError
        A payload (pointers have none), malformed fields, a store that fails
        :func:`~dpgraph.graph.blockwise.open_blockwise`'s checks, holds
        another release, or whose metadata, size, direction, epsilon, flip
        numerator or labels differ from what the file names.
    """
    if buf.nbytes:
        raise ValueError("file payload: a store pointer has no payload; the file is corrupted")
    where = _text(header, "store", 4096)
    release_id = _text(header, "release_id", 64)
    digest = _text(header, "store_metadata_sha256", 64)
    shown = repr(where)
    target = where if "://" in where else str(current_folder() / where)
    loc = StoreLocation(target)
    if not loc.exists():
        raise FileNotFoundError(
            f"the blockwise store this file points to, {shown} (relative to the file's folder), "
            "is missing: it was moved or deleted, or the file was moved without it. Keep the "
            "file beside the store as saved, or save a new pointer with "
            "open_blockwise(store).save(path)")
    try:
        R = _open(loc, release_id, check_bits=True)
    except ValueError as exc:
        raise ValueError(f"the blockwise store at {shown} is not the release this file points "
                         f"to: {exc}") from None
    if metadata_digest(R.metadata) != digest:
        raise ValueError(f"the blockwise store at {shown} holds release {release_id} but its "
                         "metadata changed since the file was saved; refusing it")
    plan = R.adjacency._plan
    same = (R.number_of_nodes() == n and R.directed == directed
            and str(R.metadata.get("flip_numerator")) == header.get("flip_numerator")
            and float(R.epsilon) == float(header.get("epsilon", -1))
            and header.get("nonce") == R.metadata.get("nonce")
            and header.get("tile") == [plan.tile_rows, 64 * plan.tile_words])
    nodes = header.get("nodes")
    if same and isinstance(nodes, list) and all(type(v) is int for v in nodes):
        try:
            labels = np.asarray(nodes, dtype=np.int64)
        except OverflowError:
            same = False
        else:
            same = np.array_equal(labels, np.asarray(R.adjacency.location.array("nodes")[:]))
    else:
        same = False
    if not same:
        raise ValueError(f"the blockwise store at {shown} disagrees with this file's header (node "
                         "count, labels, direction, epsilon, flip numerator, nonce or tiles); "
                         "the file or the store was altered")
    return R.adjacency


def store_release(adjacency: Any, index: Any, probabilities: Any, channel: Any = None,
                  keep: float = 1.0, name: str | None = None, *_: Any) -> Any:
    """The BlockwiseGraph :func:`dpgraph.load` builds from a checked store pointer."""
    index = NodeIndex.from_integers(np.asarray(index.nodes, dtype=np.int64))  # vectorized lookups
    return BlockwiseGraph(adjacency, index, probabilities, adjacency.metadata, name=name)
