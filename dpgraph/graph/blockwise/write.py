"""Writing a blockwise release: tiles sampled on Dask into a locked Zarr store.

Every release draws a fresh random nonce, stored with it; tile streams derive
from (key, nonce) (:func:`~dpgraph.graph.blockwise.tiles.tile_source`), so a
key used twice never repeats a flip.  Resuming an interrupted store reuses
that store's nonce, and so rewrites exactly the bits it had started writing.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import struct
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..._version import __version__
from ...core.probabilities import RRProbabilities
from ...core.transaction import ReleaseTransaction
from ...ledger import PrivacyLedger
from ...validation import Boolean, InstanceOf, Optional, refuse_overwrite, validate_params
from ..inputs import public_n
from .cluster import run_tasks, share
from .edges import EdgeKeys, check_keys, edge_keys
from .graph import BlockwiseGraph
from .location import StoreLocation
from .reader import FORMAT, FORMAT_VERSION, NODE_CHUNK, _open
from .sizing import check_resources
from .tiles import (
    DEFAULT_TILE,
    TilePlan,
    check_key,
    check_tile,
    new_nonce,
    sample_tile,
    tile_source,
)

__all__ = ["StoreBusyError", "release_blockwise"]


class StoreBusyError(RuntimeError):
    """Another process is writing to the same blockwise store."""


def release_id_of(key: bytes, nonce: bytes) -> str:
    """The public id of the release made with ``key`` and ``nonce`` (an HMAC; reveals neither)."""
    return hmac.new(key, b"dpgraph-blockwise-release-id" + nonce, hashlib.sha256).hexdigest()[:32]


def _input_tag(key: bytes, nonce: bytes, edges: EdgeKeys, rr: RRProbabilities,
               tile: tuple[int, int]) -> str:
    msg = b"dpgraph-blockwise-input" + nonce + edges.digest() + struct.pack(
        "<Qqq", rr.flip_numerator, tile[0], tile[1])
    return hmac.new(key, msg, hashlib.sha256).hexdigest()


@contextlib.contextmanager
def _store_lock(loc: StoreLocation) -> Iterator[None]:
    """Hold an exclusive lock on a local store for the whole write; fail at once if taken.

    The lock file is ``<store>.lock`` next to the store (the store itself is
    replaced on overwrite), where ``<store>`` is the store's real path
    (symbolic links resolved): every name of one store takes one lock.
    Remote stores (fsspec URLs) have no lock: write each release to a fresh
    location there.
    """
    path = loc.local_path
    if path is None:
        yield
        return
    from filelock import FileLock, Timeout

    lock_path = _lock_path(path)
    os.makedirs(os.path.dirname(lock_path), exist_ok=True)
    lock = FileLock(lock_path, timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise StoreBusyError(
            f"store {path!r} is being written by another process (its lock {lock_path!r} "
            "is held); wait for that release to finish, or write to another location"
        ) from None
    try:
        yield
    finally:
        lock.release()


def _lock_path(path: str) -> str:
    """The lock file of the local store at ``path``: its resolved path, plus ``.lock``."""
    return os.path.realpath(path).rstrip(os.sep) + ".lock"


def _refuse_ledger_paths(loc: StoreLocation, ledger: PrivacyLedger | None) -> None:
    """A store, or its lock file, that is the ledger it charges (or the ledger's lock) would
    overwrite the record of the budget; refused before anything is charged."""
    path = loc.local_path
    if path is None or ledger is None or ledger.path is None:
        return
    refuse_overwrite(path, f"store {path!r}", ledger=ledger.path)
    refuse_overwrite(_lock_path(path), f"store {path!r}: its lock file", ledger=ledger.path)


def _direct_chunk_dir(loc: StoreLocation, arr: Any) -> str | None:
    """Directory of the chunk files when a tile can be written as raw bytes, else None.

    Zarr stores an uncompressed chunk with the single little-endian bytes
    codec as exactly the C-order bytes of the (full-size) chunk.  Writing that
    file directly costs a quarter of the CPU and wall time of Zarr's write
    path; anything else (remote stores, other codecs or key encodings, a
    big-endian host) goes through Zarr.
    """
    from zarr.codecs import BytesCodec

    local = loc.local_path
    enc = arr.metadata.chunk_key_encoding
    codecs = tuple(arr.metadata.codecs)
    if (local is None or sys.byteorder != "little" or getattr(enc, "name", None) != "default"
            or getattr(enc, "separator", None) != "/" or len(codecs) != 1
            or not isinstance(codecs[0], BytesCodec) or codecs[0].endian.value != "little"):
        return None
    return os.path.join(local, "adjacency", "c")


def _put_tile(arr: Any, chunk_dir: str | None, plan: TilePlan, a: int, b: int,
              buffer: np.ndarray, words: np.ndarray) -> None:
    """Store tile (a, b), whose words are the top-left corner ``words`` of ``buffer``.

    A direct chunk is the whole full-size buffer (Zarr keeps edge chunks at
    full size, padded with the fill value 0): written as it is, no copy.
    """
    r0, r1, c0, c1 = plan.bounds(a, b)
    if chunk_dir is None:
        arr[r0:r1, c0:c1] = words
        return
    rows, cols = words.shape
    if rows < buffer.shape[0]:  # an edge tile: zero the padding of the reused buffer
        buffer[rows:] = 0
    if cols < buffer.shape[1]:
        buffer[:rows, cols:] = 0
    row_dir = os.path.join(chunk_dir, str(a))
    os.makedirs(row_dir, exist_ok=True)
    path = os.path.join(row_dir, str(b))
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb", buffering=0) as fh:
        fh.write(memoryview(buffer).cast("B"))
    os.replace(tmp, path)  # a reader never sees half a chunk


#: Tiles per Dask task.  A task samples its tiles one after another while a
#: background thread writes the previous one, so the disk writes overlap the
#: sampling instead of leaving the core idle (the in-memory release writes
#: nothing).  Consecutive tiles share a row band, so a task's edge keys are
#: one slice of the sorted keys.
TILES_PER_TASK = 4


def _write_tiles(loc: StoreLocation, key: bytes, nonce: bytes, plan: TilePlan,
                 tiles: list[tuple[int, int]], numerator: int, keys: np.ndarray) -> int:
    """Sample and store ``tiles``, each write overlapping the next tile's sampling.

    Two full-size tile buffers take turns: one is sampled into while the
    other is written, so no tile allocates fresh memory (whose page faults
    cost a third of the sampling) and none is copied before writing.
    """
    from concurrent.futures import ThreadPoolExecutor

    arr = loc.array("adjacency", "r+")
    chunk_dir = _direct_chunk_dir(loc, arr)
    full = (min(plan.tile_rows, plan.n), min(plan.tile_words, plan.nw)) if chunk_dir is None \
        else (plan.tile_rows, plan.tile_words)
    buffers = [np.empty(full, dtype=np.uint64), np.empty(full, dtype=np.uint64)]
    with ThreadPoolExecutor(max_workers=1) as writer:
        pending = None
        for k, (a, b) in enumerate(tiles):
            buf = buffers[k % 2]  # the other buffer may still be being written
            words = sample_tile(tile_source(key, nonce, a, b), plan, a, b, numerator, keys, out=buf)
            if pending is not None:
                pending.result()  # at most one tile in flight: memory stays two tiles
            pending = writer.submit(_put_tile, arr, chunk_dir, plan, a, b, buf, words)
        if pending is not None:
            pending.result()
    return len(tiles)


def _declared_n(edges: Any, nodes: Any) -> int | None:
    """The number of nodes, from the input table, before reading or allocating anything."""
    return edges.n if isinstance(edges, EdgeKeys) else public_n(edges, nodes)


def _as_edge_keys(edges: Any, nodes: Any, directed: bool,
                  storage_options: dict | None) -> EdgeKeys:
    if isinstance(edges, EdgeKeys):
        if edges.directed != bool(directed):
            raise ValueError("directed does not match the EdgeKeys; build them with the same flag")
        keys = edges.keys
        if not (isinstance(keys, np.ndarray) and keys.dtype == np.int64 and keys.ndim == 1):
            raise TypeError("the EdgeKeys' keys are not a one-dimensional int64 array; build "
                            "them with edge_keys() or EdgeKeys(...)")
        # checked again where they are consumed: the sampler XORs every key into the flips
        check_keys(keys, edges.n, edges.directed)
        return edges
    return edge_keys(edges, nodes, directed=directed, storage_options=storage_options)


def _refuse_foreign(loc: StoreLocation) -> None:
    local = loc.local_path
    if (local is not None and os.path.exists(local) and not loc.exists()
            and (not os.path.isdir(local) or os.listdir(local))):
        raise ValueError(
            f"{local!r} exists and is not a dpgraph blockwise store; refusing to write "
            "over it. Choose a new location"
        )


@validate_params(directed=Boolean(), overwrite=Boolean(), resume=Boolean(), progress=Boolean(),
                 storage_options=Optional(InstanceOf(dict, example={})))
def release_blockwise(
    edges: Any,
    epsilon: float,
    store: Any,
    *,
    nodes: Any = None,
    directed: bool = False,
    key: bytes | None = None,
    tile: tuple[int, int] = DEFAULT_TILE,
    client: Any = None,
    ledger: PrivacyLedger | None = None,
    overwrite: bool = False,
    resume: bool = False,
    storage_options: dict | None = None,
    progress: bool = False,
) -> BlockwiseGraph:
    """Release a graph tile by tile on Dask and store it as a Zarr array of packed bits.

    Parameters
    ----------
    edges : any input of the input table, or EdgeKeys
        An edge-list file or URL (read in one streaming pass; needs
        ``nodes``), a networkx graph, a scipy.sparse matrix, a DataFrame or an
        edge array with integer node labels (see :func:`dpgraph.release`), or
        prepared :class:`EdgeKeys` (:func:`edge_keys`).
    epsilon : float
        Privacy parameter per vertex pair.
    store : str, os.PathLike or zarr store
        Where to write: a local directory (default) or any fsspec URL.
    nodes : int or collection of int, optional
        The public vertex set (n, or the labels), required unless ``edges`` is
        a graph or a matrix.
    directed : bool, default False
    key : bytes, optional
        16 or 32 secret bytes.  With the store's nonce (``B.nonce``) it
        reproduces the release, and it is needed to ``resume`` an interrupted
        write.  ``None`` (the default) draws a fresh key and forgets it.
        Every release draws a fresh nonce, so reusing a key never repeats a
        flip.
    tile : (int, int), default (4096, 32768)
        Rows and columns of a tile, multiples of 64 (columns are packed 64 to
        a word; a default tile is 16 MiB).
    client : dask.distributed.Client, optional
        Where to run the tiles; default the active client or Dask's threads.
    ledger : dpgraph.PrivacyLedger, optional
        Charged ``epsilon`` after the inputs and sizes are checked and the
        store is locked, before any randomness is drawn; a refused charge
        releases nothing.  A resume is not charged again (it rewrites the
        same bits).
    overwrite : bool, default False
        Replace an existing store.  Refused otherwise.
    resume : bool, default False
        Finish an interrupted write of this store: needs the same ``key``,
        input, epsilon and tile; reuses the store's nonce.
    storage_options : dict, optional
        fsspec options for a remote store.
    progress : bool, default False
        Show a tqdm bar over tiles.

    Returns
    -------
    BlockwiseGraph

    Raises
    ------
    ValueError
        Invalid parameters, an existing store without ``overwrite``, a resume
        that does not match the store, or a store that needs more disk than
        is free (checked before writing).
    MemoryError
        A tile or the input needs more memory than is available.
    StoreBusyError
        Another process holds the store's lock (a concurrent write).
    BudgetExceededError
        The ledger refuses the charge.
    """
    import dask

    tx = ReleaseTransaction(epsilon, K=2, ledger=ledger)
    rr = tx.probabilities
    if overwrite and resume:
        raise ValueError("pass overwrite=True or resume=True, not both")
    if resume and key is None:
        raise ValueError("resume=True needs the key of the interrupted release")
    tr, tc = check_tile(tile)
    key = check_key(key) if key is not None else None
    loc = StoreLocation(store, storage_options)
    if loc.local_path is not None:  # every name of one store is one store (and one lock)
        loc = StoreLocation(os.path.realpath(loc.local_path), storage_options)
    n_hint = _declared_n(edges, nodes)
    if n_hint is not None and n_hint >= 2:  # before reading the input or allocating labels
        check_resources(TilePlan(n_hint, directed, tr, tc // 64), loc, client=client,
                        replacing=overwrite or resume)
    data = _as_edge_keys(edges, nodes, directed, storage_options)
    plan = TilePlan(data.n, data.directed, tr, tc // 64)
    check_resources(plan, loc, n_edges=data.keys.size, client=client,
                    replacing=overwrite or resume)
    _refuse_ledger_paths(loc, ledger)
    _refuse_foreign(loc)
    with _store_lock(loc):
        old = _existing_release(loc)
        if old is not None and not (overwrite or resume):
            raise ValueError(
                f"store {str(loc)!r} already exists; pass overwrite=True to "
                "replace it or choose a new location"
            )
        if resume:
            nonce = _resumable_nonce(old, loc, key, data, rr, (tr, tc))
        else:
            # every check that can fail is above: charge the ledger, then sample
            source = tx.commit(label="blockwise release")
            key = key if key is not None else source.uint64(4).tobytes()
            nonce = new_nonce()
            _create_store(loc, plan, data, rr, key, nonce, (tr, tc))
        keys_d = share(data.keys, client)
        tiles = plan.tiles()
        tasks = [
            dask.delayed(_write_tiles, pure=False)(loc, key, nonce, plan,
                                                   tiles[k : k + TILES_PER_TASK],
                                                   rr.flip_numerator, keys_d)
            for k in range(0, len(tiles), TILES_PER_TASK)
        ]
        run_tasks(tasks, client, progress)
        loc.group("r+").attrs.update({"complete": True})
        # written by this call under the lock: the metadata and arrays are checked, the bits
        # were just put there by the sampler
        return _open(loc, release_id_of(key, nonce), check_bits=False)


def _existing_release(loc: StoreLocation) -> dict | None:
    """The metadata of the dpgraph store at ``loc``, None if there is none; refuses foreign ones."""
    if not loc.exists():
        return None
    try:
        old = loc.group("r").attrs.asdict()
    except Exception:
        old = {}
    if old.get("format") != FORMAT:
        raise ValueError(
            f"{str(loc)!r} holds a Zarr store that is not a dpgraph blockwise release; "
            "refusing to overwrite it. Choose a new location"
        )
    return old


def _resumable_nonce(old: dict | None, loc: StoreLocation, key: bytes, data: EdgeKeys,
                     rr: RRProbabilities, tile: tuple[int, int]) -> bytes:
    if old is None:
        raise ValueError(f"nothing to resume: no blockwise store at {str(loc)!r}")
    if old.get("complete") is True:
        raise ValueError(f"store {str(loc)!r} holds a complete release; nothing to resume")
    try:
        nonce = bytes.fromhex(old["nonce"])
    except (KeyError, TypeError, ValueError):
        raise ValueError("the store has no valid nonce; it cannot be resumed, "
                         "write it again with overwrite=True") from None
    if old.get("release_id") != release_id_of(key, nonce):
        raise ValueError("the store was started with another key; resume with that key, "
                         "or write it again with overwrite=True")
    if old.get("input_tag") != _input_tag(key, nonce, data, rr, tile):
        raise ValueError(
            "the store was started for another input, epsilon or tile shape; resuming would "
            "mix two releases. Resume with the same arguments or write it again with "
            "overwrite=True"
        )
    return nonce


def _create_store(loc: StoreLocation, plan: TilePlan, data: EdgeKeys, rr: RRProbabilities,
                  key: bytes, nonce: bytes, tile: tuple[int, int]) -> None:
    group = loc.group("w")
    group.create_array("adjacency", shape=(plan.n, plan.nw), chunks=(plan.tile_rows,
                                                                     plan.tile_words),
                       dtype="uint64", fill_value=0, compressors=None)
    group.create_array("nodes", shape=(plan.n,), chunks=(min(plan.n, NODE_CHUNK),),
                       dtype="int64", compressors=None)[:] = data.index.labels
    group.attrs.update({
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "release_id": release_id_of(key, nonce),
        "nonce": nonce.hex(),
        "epsilon": rr.epsilon,
        "flip_numerator": str(rr.flip_numerator),
        "n": plan.n,
        "directed": plan.directed,
        "tile": [tile[0], tile[1]],
        "input_tag": _input_tag(key, nonce, data, rr, tile),
        "complete": False,
        "dpgraph_version": __version__,
    })
