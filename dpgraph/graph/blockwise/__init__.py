"""Blockwise releases on Dask, stored as a Zarr array of packed bits.

The packed adjacency (the same bit layout as
:class:`~dpgraph.graph.packed.PackedAdjacency`: bit ``j % 64`` of word ``j // 64``
of row i is pair (i, j); undirected releases keep only j > i) is cut into tiles
of ``tile_rows`` rows by ``tile_cols`` columns.  Tile (a, b) is sampled from its
own stream ``SecureRandom(key).substream(a, b)`` (an HMAC-SHA256 derivation of
one release key and the tile coordinates), so the release is the same bit for
bit whatever the number of workers or the order in which tiles run.  Inside a
tile, words are drawn in 64-row bands exactly as the in-memory release
(:func:`~dpgraph.graph.release.sample_packed_flips`) draws them, so a release
made of one tile equals
``dpgraph.release(G, eps, seed=SecureRandom(key=key).substream(0, 0))``.

Tiles below the diagonal of an undirected release hold no pairs and are never
written (Zarr stores no chunk for them).  Queries (edge counts, degrees, batches
of cuts) are Dask reductions over the tiles; a batch of Q cuts reads each tile
once and answers all Q with one matrix product.

Optional dependencies: ``dask``, ``distributed`` (for a cluster), ``zarr`` and
``fsspec`` (any fsspec URL as the store).  They are imported inside the
functions, so ``import dpgraph`` works without them.

Store layout (a Zarr v3 group)::

    <store>/zarr.json      group attributes: the metadata below
    <store>/adjacency      uint64 (n, ceil(n / 64)), chunks = one tile
    <store>/nodes          int64 (n,): the node labels in canonical (sorted) order

Metadata: ``format`` ("dpgraph-blockwise"), ``format_version``, ``release_id``,
``epsilon``, ``flip_numerator`` (decimal string of M, p' = M / 2^64), ``n``,
``directed``, ``tile``, ``input_tag`` (a keyed HMAC of the input, meaningless
without the key) and ``complete``.

Key reuse.  Two releases of *different* graphs under one key use the same
random flips, so XOR-ing them reveals exactly the pairs where the graphs
differ, with no noise at all.  Writing refuses a key that has already released
a different input (checked against the target store and a small local registry
of (release id, input tag) pairs, neither of which says anything about a graph
to someone without the key).  Re-running the same input with the same key is
allowed: it reproduces the same release and costs no privacy.
"""

from .cluster import WORKER_ENV, local_cluster
from .input import EdgeInput, edge_input_from_graph, read_edge_list
from .queries import BlockwiseGraph, ZarrAdjacency
from .store import FORMAT, FORMAT_VERSION, open_blockwise, validate_metadata
from .tiles import release_tiled
from .write import StoreBusyError, release_blockwise

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "WORKER_ENV",
    "BlockwiseGraph",
    "EdgeInput",
    "StoreBusyError",
    "ZarrAdjacency",
    "edge_input_from_graph",
    "local_cluster",
    "open_blockwise",
    "read_edge_list",
    "release_blockwise",
    "release_tiled",
    "validate_metadata",
]


def __getattr__(name: str):
    if name == "IntegerNodeIndex":  # merged into NodeIndex; the old name still works
        import warnings

        from ..encoding import NodeIndex

        warnings.warn("IntegerNodeIndex is deprecated; use NodeIndex.from_integers(labels)",
                      DeprecationWarning, stacklevel=2)
        return NodeIndex.from_integers
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
