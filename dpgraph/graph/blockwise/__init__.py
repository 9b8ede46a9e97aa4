"""Blockwise releases on Dask, stored as a Zarr array of packed bits.

The packed adjacency (the same bit layout as
:class:`~dpgraph.graph.packed.PackedAdjacency`: bit ``j % 64`` of word ``j // 64``
of row i is pair (i, j); undirected releases keep only j > i) is cut into tiles
of ``tile_rows`` rows by ``tile_cols`` columns.  Every release draws a fresh
random nonce, stored with it; tile (a, b) is sampled from the stream
:func:`~dpgraph.graph.blockwise.tiles.tile_source` derives from the release
key, the nonce and the tile coordinates (HMAC-SHA256), so the release is the
same bit for bit whatever the number of workers or the order in which tiles
run, and one key used for two releases never repeats a flip.  Inside a tile,
words are drawn in 64-row bands exactly as the in-memory release
(:func:`~dpgraph.graph.dense.sample_packed_flips`) draws them, so a release
made of one tile equals ``dpgraph.release`` seeded with that tile's stream.

Tiles below the diagonal of an undirected release hold no pairs and are never
written.  Queries (edge counts, degrees, batches of cuts) are Dask reductions
over the tiles; a batch of Q cuts reads each tile once and answers all Q.

Modules: :mod:`.edges` (the public vertex set and the edges as pair keys,
from any input of :mod:`dpgraph.graph.inputs`), :mod:`.tiles` (the grid,
streams and tile sampler), :mod:`.location` (the store location),
:mod:`.sizing` (disk and memory checks), :mod:`.write` (the locked write),
:mod:`.reader` (the format and validation on open), :mod:`.graph` (the
adjacency over the store), :mod:`.pointer` (a ``.dpg`` file pointing at the
store: ``R.save(path)``, ``dpgraph.load(path)``; its file kind ``"store"`` is
registered on import) and :mod:`.cluster` (Dask plumbing).

Optional dependencies: ``dask``, ``distributed`` (for a cluster), ``zarr`` and
``fsspec`` (any fsspec URL as the store).  They are imported inside the
functions, so ``import dpgraph`` works without them.

Store layout (a Zarr v3 group)::

    <store>/zarr.json      group attributes: the metadata below
    <store>/adjacency      uint64 (n, ceil(n / 64)), chunks = one tile
    <store>/nodes          int64 (n,): the node labels in canonical (sorted) order

Metadata: ``format`` ("dpgraph-blockwise"), ``format_version``, ``release_id``
(an HMAC of the key and nonce), ``nonce`` (hex), ``epsilon``,
``flip_numerator`` (decimal string of M, p' = M / 2^64), ``n``, ``directed``,
``tile``, ``input_tag`` (a keyed HMAC of the input, meaningless without the
key; it lets a resume check it continues the same input) and ``complete``.
"""

from dataclasses import replace

from ..kinds import KINDS, register_kind
from .cluster import WORKER_ENV, local_cluster
from .edges import EdgeKeys, edge_keys
from .graph import BlockwiseGraph, ZarrAdjacency
from .pointer import store_payload, store_read, store_release
from .reader import FORMAT, FORMAT_VERSION, open_blockwise, validate_metadata
from .write import StoreBusyError, release_blockwise

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "WORKER_ENV",
    "BlockwiseGraph",
    "EdgeKeys",
    "StoreBusyError",
    "ZarrAdjacency",
    "edge_keys",
    "local_cluster",
    "open_blockwise",
    "release_blockwise",
    "validate_metadata",
]

#: the blockwise row of the table of release kinds, completed with its file payload: a .dpg
#: pointing at a store, and the BlockwiseGraph dpgraph.load builds from one
register_kind(replace(KINDS["blockwise"], payload=(store_payload, store_read),
                      release_type=store_release))

