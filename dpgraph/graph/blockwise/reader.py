"""The Zarr store of a blockwise release: its format, validation, and opening it for queries.

Store layout (a Zarr v3 group)::

    <store>/zarr.json      group attributes: the metadata below
    <store>/adjacency      uint64 (n, ceil(n / 64)), chunks = one tile
    <store>/nodes          int64 (n,): the node labels in canonical (sorted) order

Everything is checked on open (:func:`validate_metadata`, then the arrays and
the tiles where stray bits could hide): a crafted or damaged store is refused
with a ValueError naming the field, never read as a different release.
"""

from __future__ import annotations

import math
import numbers
import os
from typing import Any

import numpy as np

from ...core.probabilities import RRProbabilities
from .._memory import check_fits
from ..encoding import NodeIndex
from ..packed import clear_non_pairs, words_per_row
from .graph import BlockwiseGraph, ZarrAdjacency
from .location import StoreLocation
from .tiles import DEFAULT_TILE, NONCE_BYTES, TilePlan

__all__ = ["FORMAT", "FORMAT_VERSION", "open_blockwise", "validate_metadata"]

FORMAT = "dpgraph-blockwise"
FORMAT_VERSION = 2  # 2: per-release nonce
_HALF = 1 << 63  # flip numerators are at most 2^63 (p' <= 1/2)


def _bad(field: str, why: str) -> ValueError:
    return ValueError(f"blockwise store metadata field {field!r} {why}; the store is damaged "
                      "or was not written by dpgraph")


def _int_field(meta: dict, field: str, lo: int) -> int:
    v = meta.get(field)
    if not isinstance(v, numbers.Integral) or isinstance(v, bool) or v < lo:
        raise _bad(field, f"must be an integer >= {lo}, got {v!r}")
    return int(v)


def _hex_field(meta: dict, field: str, nbytes: int) -> str:
    v = meta.get(field)
    if not isinstance(v, str) or len(v) != 2 * nbytes or any(
            c not in "0123456789abcdef" for c in v):
        raise _bad(field, f"must be {2 * nbytes} lowercase hex digits")
    return v


def validate_metadata(meta: Any) -> dict:
    """Check the types and ranges of a store's metadata; return the fields the reader uses.

    Raises
    ------
    ValueError
        Naming the first field that is missing, of the wrong type or out of
        range.
    """
    if not isinstance(meta, dict):
        raise ValueError("blockwise store metadata must be a JSON object")
    directed = meta.get("directed")
    if not isinstance(directed, bool):
        raise _bad("directed", f"must be true or false (a JSON boolean), got {directed!r}")
    complete = meta.get("complete")
    if not isinstance(complete, bool):
        raise _bad("complete", f"must be true or false (a JSON boolean), got {complete!r}")
    n = _int_field(meta, "n", 2)
    tile = meta.get("tile")
    if (not isinstance(tile, list) or len(tile) != 2
            or not all(isinstance(x, numbers.Integral) and not isinstance(x, bool) for x in tile)
            or any(x < 64 or x % 64 for x in tile)):
        raise _bad("tile", f"must be [rows, cols], positive multiples of 64, got {tile!r}")
    eps = meta.get("epsilon")
    if (not isinstance(eps, numbers.Real) or isinstance(eps, bool)
            or not math.isfinite(float(eps)) or float(eps) <= 0):
        raise _bad("epsilon", f"must be a finite positive number, got {eps!r}")
    num = meta.get("flip_numerator")
    if not isinstance(num, str) or not num.isascii() or not num.isdigit() or len(num) > 20:
        raise _bad("flip_numerator", "must be a decimal string of an integer")
    if not 0 < int(num) <= _HALF:
        raise _bad("flip_numerator", "must be in 1..2^63 (a flip probability in (0, 1/2])")
    return {
        "n": n,
        "directed": directed,
        "complete": complete,
        "tile": (int(tile[0]), int(tile[1])),
        "epsilon": float(eps),
        "flip_numerator": int(num),
        "nonce": bytes.fromhex(_hex_field(meta, "nonce", NONCE_BYTES)),
        "release_id": _hex_field(meta, "release_id", 16),
    }


def _stray_bits_in_band(loc: StoreLocation, plan: TilePlan, r0: int, r1: int,
                        words: tuple[int, int]) -> int:
    """1 bits of rows r0..r1, packed words ``words``, that are no vertex pair."""
    w0, w1 = words
    block = np.asarray(loc.array("adjacency")[r0:r1, w0:w1])
    if not block.any():
        return 0
    stray = 0
    if not plan.directed:  # words left of each row's diagonal word hold no pair
        left = np.arange(w0, w1)[None, :] < (np.arange(r0, r1) >> 6)[:, None]
        stray += int(np.bitwise_count(block[left]).sum(dtype=np.int64))
        block = np.where(left, np.uint64(0), block)
    kept = block.copy()
    clear_non_pairs(kept, plan.n, plan.directed, row0=r0, word0=w0)  # the layout's own masks
    return stray + int(np.bitwise_count(block).sum(dtype=np.int64)
                       - np.bitwise_count(kept).sum(dtype=np.int64))


def _chunk_missing(loc: StoreLocation, arr: Any, a: int, b: int) -> bool:
    """True when tile (a, b) is certainly not stored (local store, default chunk keys)."""
    local = loc.local_path
    enc = getattr(arr.metadata, "chunk_key_encoding", None)
    if local is None or getattr(enc, "name", None) != "default":
        return False
    sep = getattr(enc, "separator", "/")
    return not os.path.exists(os.path.join(local, "adjacency", f"c{sep}{a}{sep}{b}"))


def _boundary_bands(loc: StoreLocation, arr: Any, plan: TilePlan) -> list:
    """(first row, end row, (first word, end word)) of every place a stray bit could sit.

    The diagonal words of every 64-row band, the last (padding) word of every
    row, and, undirected, every stored tile wholly below the diagonal and
    every word left of the diagonal in a tile that straddles it (from the
    tile's first word on).  The rest of the matrix holds pairs only, so it
    is never read.
    """
    out = []
    nw, ra, cb = plan.nw, *plan.grid
    for a in range(ra):
        r0, r1, _, _ = plan.bounds(a, 0)
        first = r0 >> 6
        if not plan.directed:  # the straddling tile's words left of the diagonal, too
            first = (first // plan.tile_words) * plan.tile_words
        out.append((r0, r1, (first, min(nw, ((r1 - 1) >> 6) + 1))))  # diagonal words
        if ((r1 - 1) >> 6) + 1 < nw:
            out.append((r0, r1, (nw - 1, nw)))  # padding (and the last word's pairs)
        if not plan.directed:
            for b in range(cb):
                _, _, c0, c1 = plan.bounds(a, b)
                if 64 * c1 <= r0 + 1 and not _chunk_missing(loc, arr, a, b):
                    out.append((r0, r1, (c0, c1)))
    return out


#: the nodes array is written in chunks of at most this many labels
NODE_CHUNK = 1 << 20
#: the largest zarr.json a store of this format has (a few hundred bytes)
_MAX_JSON_BYTES = 1 << 20


def _check_layout(arr: Any, name: str, chunks: tuple[int, ...]) -> None:
    """Refuse, from the metadata alone, any layout the writer never produces.

    One little-endian ``bytes`` codec (no compressor, no filter, no
    sharding), default chunk keys, no storage transformer and exactly the
    writer's chunk shape: so nothing is decoded that is larger than the
    chunk the writer would have written (a gzip chunk declaring 2^30 labels
    is refused before a byte of it is read).
    """
    from zarr.codecs import BytesCodec

    meta = arr.metadata
    codecs = tuple(getattr(meta, "codecs", ()))
    enc = getattr(meta, "chunk_key_encoding", None)
    if (getattr(meta, "zarr_format", None) != 3 or len(codecs) != 1
            or not isinstance(codecs[0], BytesCodec) or codecs[0].endian is None
            or codecs[0].endian.value != "little"
            or getattr(enc, "name", None) != "default" or getattr(enc, "separator", None) != "/"
            or tuple(getattr(meta, "storage_transformers", ())) != ()):
        raise ValueError(f"blockwise store array {name!r} has codecs or a layout that "
                         "dpgraph never writes (only uncompressed little-endian chunks); the "
                         "store is damaged or crafted")
    if tuple(arr.chunks) != chunks:
        raise ValueError(f"blockwise store array {name!r} has chunks {tuple(arr.chunks)}, not "
                         f"the {chunks} dpgraph writes for its shape")


def _check_json_sizes(loc: StoreLocation) -> None:
    """A local store's metadata files are small: refuse a huge one before parsing it."""
    local = loc.local_path
    if local is None:
        return
    for sub in ("", "adjacency", "nodes"):
        path = os.path.join(local, sub, "zarr.json")
        try:
            size = os.stat(path).st_size
        except OSError:
            continue
        if size > _MAX_JSON_BYTES:
            raise ValueError(f"blockwise store metadata {os.path.join(sub, 'zarr.json')!r} is "
                             f"{size:,} bytes, larger than any dpgraph writes; the store is "
                             "damaged or crafted")


def _read_labels(nodes: Any, n: int) -> np.ndarray:
    """The node labels, a chunk at a time: every chunk must be stored (the writer stores them
    all: sorted, unique labels are never all zeros, the fill value) and the order is checked
    chunk by chunk, so a crafted store fails before its labels are built, not after."""
    chunk = int(nodes.chunks[0])
    count = -(-n // chunk)
    stored = int(nodes.nchunks_initialized)  # a listing of the store: no chunk is read
    if stored != count:
        raise ValueError(f"blockwise store array 'nodes' has {stored} of its {count} chunks; "
                         "the store is damaged or crafted")
    labels = np.empty(n, dtype=np.int64)
    last = None
    for k in range(count):
        a, b = k * chunk, min(n, (k + 1) * chunk)
        part = np.asarray(nodes[a:b], dtype=np.int64)
        if np.any(part[1:] <= part[:-1]) or (last is not None and part[0] <= last):
            raise ValueError("blockwise store array 'nodes' must hold sorted, unique labels")
        labels[a:b] = part
        last = part[-1]
    return labels


def _own_array(loc: StoreLocation, name: str) -> Any:
    """Array ``name`` opened as every read opens it: from its own ``zarr.json``.

    The checks below look at this object, never at the group's view of its
    members (which could come from consolidated metadata that the reads do
    not follow).
    """
    problem = None
    try:
        return loc.array(name)
    except (KeyError, FileNotFoundError, LookupError):
        problem = f"blockwise store has no {name!r} array; it is damaged"
    except (ValueError, TypeError) as exc:  # zarr's own refusal of a malformed zarr.json
        problem = (f"blockwise store array {name!r} has unreadable metadata "
                   f"({type(exc).__name__}); the store is damaged or crafted")
    raise ValueError(problem)


def _check_arrays(loc: StoreLocation, fields: dict,
                  check_bits: bool) -> tuple[TilePlan, np.ndarray]:
    n = fields["n"]
    tr, tc = fields["tile"]
    nw = words_per_row(n)
    # the tile is at most the default or the (64-padded) matrix, whichever is larger
    if tr > max(DEFAULT_TILE[0], 64 * ((n + 63) // 64)) or tc > max(DEFAULT_TILE[1], 64 * nw):
        raise _bad("tile", f"{[tr, tc]} is larger than both the default tile and the padded "
                           f"matrix of n = {n}")
    arr, nodes = _own_array(loc, "adjacency"), _own_array(loc, "nodes")
    if arr.dtype != np.uint64 or arr.shape != (n, words_per_row(n)):
        raise ValueError(f"blockwise store array 'adjacency' must be uint64 of shape "
                         f"{(n, words_per_row(n))} for n = {n}, got {arr.dtype} {arr.shape}")
    if tuple(arr.chunks) != (tr, tc // 64):
        raise ValueError(f"blockwise store array 'adjacency' has chunks {tuple(arr.chunks)}, "
                         f"not the tile {(tr, tc // 64)} of the metadata field 'tile'")
    if nodes.dtype != np.int64 or nodes.shape != (n,):
        raise ValueError(f"blockwise store array 'nodes' must be int64 of shape ({n},)")
    _check_layout(arr, "adjacency", (tr, tc // 64))
    _check_layout(nodes, "nodes", (min(n, NODE_CHUNK),))
    for name, a in (("adjacency", arr), ("nodes", nodes)):
        # a tile never written (below the diagonal) reads as the fill value: it must be 0
        fill = getattr(a.metadata, "fill_value", None)
        if fill is None or int(fill) != 0:
            raise ValueError(f"blockwise store array {name!r} has fill value {fill!r}, not the 0 "
                             "dpgraph writes (tiles never written would read as set bits); the "
                             "store is damaged or crafted")
    check_fits(8 * n, f"the node labels of a blockwise store of {n:,} nodes")
    if check_bits:  # a band of tile rows by (tile + diagonal) words, with two copies
        check_fits(3 * 8 * tr * (tc // 64 + tr // 64 + 1), "checking a tile of the store")
    labels = _read_labels(nodes, n)
    plan = TilePlan(n, fields["directed"], tr, tc // 64)
    if check_bits:
        import dask

        tasks = [dask.delayed(_stray_bits_in_band, pure=True)(loc, plan, r0, r1, w)
                 for r0, r1, w in _boundary_bands(loc, arr, plan)]
        stray = sum(dask.compute(*tasks))
        if stray:
            where = ("diagonal or padding" if plan.directed
                     else "diagonal, lower triangle or padding")
            raise ValueError(f"blockwise store array 'adjacency' has {stray} bit(s) set on the "
                             f"{where}, which hold no vertex pair; the store is damaged or "
                             "crafted")
    return plan, labels


def open_blockwise(store: Any, *, release_id: str | None = None,
                   storage_options: dict | None = None) -> BlockwiseGraph:
    """Open a stored blockwise release for queries, after validating it.

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
        release, an interrupted write, a flip probability that fails
        certification, metadata of the wrong type or out of range (the
        message names the field), arrays of the wrong shape or type,
        unsorted or repeated node labels, or bits set where no vertex pair
        is (diagonal, lower triangle of an undirected release, padding).
    """
    return _open(StoreLocation(store, storage_options), release_id, check_bits=True)


def _open(loc: StoreLocation, release_id: str | None, *, check_bits: bool) -> BlockwiseGraph:
    """Open and validate; ``check_bits=False`` only for a store this process just wrote, locked."""
    if not loc.exists():
        raise FileNotFoundError(
            f"no dpgraph blockwise release at {str(loc)!r}; "
            "check the path or write one with release_blockwise"
        )
    _check_json_sizes(loc)
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
    fields = validate_metadata(meta)
    if not fields["complete"]:
        raise ValueError("store holds an incomplete release (the write was interrupted); "
                         "resume it with release_blockwise(..., key=, resume=True) or write it "
                         "again with overwrite=True")
    rr = RRProbabilities(K=2, epsilon=fields["epsilon"], flip_numerator=fields["flip_numerator"])
    if not rr.certify():
        raise ValueError("store's flip probability does not certify its epsilon; refusing it")
    plan, labels = _check_arrays(loc, fields, check_bits)
    return BlockwiseGraph(ZarrAdjacency(loc, plan, meta), NodeIndex.from_integers(labels), rr, meta)
