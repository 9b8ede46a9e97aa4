"""Writing a blockwise release: tiles sampled on Dask into a Zarr store."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import struct
from pathlib import Path
from typing import Any

import numpy as np

from ...core.probabilities import RRProbabilities, rr_probabilities
from .cluster import run_tasks, share
from .input import EdgeInput, edge_input_from_graph, read_edge_list
from .queries import BlockwiseGraph
from .storage import StoreLocation
from .store import FORMAT, FORMAT_VERSION, open_blockwise
from .tiles import DEFAULT_TILE, TilePlan, check_key, check_tile, sample_tile, tile_source

__all__ = ["release_blockwise"]


def _release_id(key: bytes) -> str:
    return hmac.new(key, b"dpgraph-blockwise-release-id", hashlib.sha256).hexdigest()[:32]


def _input_tag(key: bytes, edges: EdgeInput, rr: RRProbabilities, tile: tuple[int, int]) -> str:
    msg = b"dpgraph-blockwise-input" + edges.digest() + struct.pack(
        "<Qqq", rr.move_numerator, tile[0], tile[1])
    return hmac.new(key, msg, hashlib.sha256).hexdigest()


def _registry_path(registry: Any) -> Path:
    if registry is not None:
        return Path(registry)
    env = os.environ.get("DPGRAPH_KEY_REGISTRY")
    if env:
        return Path(env)
    return Path.home() / ".cache" / "dpgraph" / "blockwise_keys.json"


_KEY_REUSE = (
    "this key already released a different input graph (or another epsilon or tile shape). "
    "Two releases under one key share their random flips, so XOR-ing them reveals exactly "
    "which vertex pairs differ between the inputs, with no noise: the privacy of every "
    "changed pair would be lost. Use a fresh key (e.g. os.urandom(32)) for every input"
)


def _check_registry(path: Path, release_id: str, tag: str) -> None:
    try:
        known = json.loads(path.read_text()) if path.exists() else {}
    except (OSError, ValueError):
        raise ValueError(
            f"the key registry {str(path)!r} is unreadable; fix or remove it "
            "(it guards against reusing a key across inputs)"
        ) from None
    if known.get(release_id, tag) != tag:
        raise ValueError(_KEY_REUSE)


def _record_registry(path: Path, release_id: str, tag: str) -> None:
    known = json.loads(path.read_text()) if path.exists() else {}
    known[release_id] = tag
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(known, indent=0, sort_keys=True))
    os.replace(tmp, path)


def _write_tile(loc: StoreLocation, key: bytes, plan: TilePlan, a: int, b: int,
                numerator: int, keys: np.ndarray) -> int:
    words = sample_tile(tile_source(key, a, b), plan, a, b, numerator, keys)
    r0, r1, c0, c1 = plan.bounds(a, b)
    loc.array("adjacency", "r+")[r0:r1, c0:c1] = words
    return int(np.bitwise_count(words).sum(dtype=np.int64))


def _version() -> str:
    from ... import __version__

    return __version__


def _as_edge_input(edges: Any, nodes: Any, directed: bool,
                   storage_options: dict | None) -> EdgeInput:
    if isinstance(edges, EdgeInput):
        if edges.directed != bool(directed):
            raise ValueError("directed does not match the EdgeInput; build it with the same flag")
        return edges
    if isinstance(edges, (str, os.PathLike)):
        if nodes is None:
            raise ValueError(
                "nodes is required with an edge-list file: pass n or the public vertex set"
            )
        return read_edge_list(edges, nodes, directed=directed, storage_options=storage_options)
    return edge_input_from_graph(edges, directed=directed)


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
    registry: Any = None,
    overwrite: bool = False,
    storage_options: dict | None = None,
    progress: bool = False,
) -> BlockwiseGraph:
    """Release a graph tile by tile on Dask and store it as a Zarr array of packed bits.

    Parameters
    ----------
    edges : str, os.PathLike, EdgeInput or networkx.Graph
        An edge-list file (read in one streaming pass by
        :func:`read_edge_list`; needs ``nodes``), a prepared :class:`EdgeInput`,
        or a networkx graph with integer node labels.
    epsilon : float
        Privacy parameter per vertex pair.
    store : str, os.PathLike or zarr store
        Where to write: a local directory (default) or any fsspec URL.
    nodes : int or collection of int, optional
        The public vertex set, required with an edge-list file.
    directed : bool, default False
    key : bytes, optional
        16 or 32 secret bytes making the release reproducible by whoever
        holds the key.  ``None`` (the safe default) draws a fresh key from the
        OS and forgets it.  Never reuse a key for a different input (refused).
    tile : (int, int), default (4096, 32768)
        Rows and columns of a tile, multiples of 64 (columns are packed 64 to
        a word; a default tile is 16 MiB).
    client : dask.distributed.Client, optional
        Where to run the tiles; default the active client or Dask's threads.
    registry : path, optional
        The key registry file; default ``$DPGRAPH_KEY_REGISTRY`` or
        ``~/.cache/dpgraph/blockwise_keys.json``.
    overwrite : bool, default False
        Replace an existing store.  Refused otherwise.
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
        On a key that already released a different input, an existing store
        without ``overwrite``, or invalid parameters.
    """
    import dask

    rr = rr_probabilities(epsilon, 2)
    data = _as_edge_input(edges, nodes, directed, storage_options)
    tr, tc = check_tile(tile)
    plan = TilePlan(data.n, data.directed, tr, tc // 64)
    recorded = key is not None
    key = check_key(key) if recorded else os.urandom(32)
    release_id = _release_id(key)
    tag = _input_tag(key, data, rr, (tr, tc))
    reg = _registry_path(registry)
    if recorded:
        _check_registry(reg, release_id, tag)
    loc = StoreLocation(store, storage_options)
    local = loc.local_path
    if (local is not None and os.path.exists(local) and not loc.exists()
            and (not os.path.isdir(local) or os.listdir(local))):
        raise ValueError(
            f"{local!r} exists and is not a dpgraph blockwise store; refusing to write "
            "over it. Choose a new location"
        )
    if loc.exists():
        try:
            old = loc.group("r").attrs.asdict()
        except Exception:  # noqa: BLE001
            old = {}
        if old.get("format") != FORMAT:
            raise ValueError(
                f"{str(loc)!r} holds a Zarr store that is not a dpgraph blockwise release; "
                "refusing to overwrite it. Choose a new location"
            )
        if old.get("release_id") == release_id and old.get("input_tag") != tag:
            raise ValueError(_KEY_REUSE)
        if not overwrite:
            raise ValueError(
                f"store {str(loc)!r} already exists; pass overwrite=True to "
                "replace it or choose a new location"
            )
    group = loc.group("w")
    group.create_array("adjacency", shape=(plan.n, plan.nw), chunks=(tr, tc // 64),
                       dtype="uint64", fill_value=0, compressors=None)
    group.create_array("nodes", shape=(plan.n,), chunks=(min(plan.n, 1 << 20),),
                       dtype="int64", compressors=None)[:] = data.index.labels
    meta = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "release_id": release_id,
        "epsilon": rr.epsilon,
        "flip_numerator": str(rr.move_numerator),
        "n": plan.n,
        "directed": plan.directed,
        "tile": [tr, tc],
        "input_tag": tag,
        "complete": False,
        "dpgraph_version": _version(),
    }
    group.attrs.update(meta)
    keys_d = share(data.keys, client)
    tasks = [
        dask.delayed(_write_tile, pure=False)(loc, key, plan, a, b, rr.move_numerator, keys_d)
        for a, b in plan.tiles()
    ]
    run_tasks(tasks, client, progress)
    if recorded:
        _record_registry(reg, release_id, tag)
    group.attrs.update({"complete": True})
    return open_blockwise(store, release_id=release_id, storage_options=storage_options)
