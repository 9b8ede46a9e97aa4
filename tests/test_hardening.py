"""Hardening: crafted stores, hand-built inputs, ledgers reached by two names, exceptions that
carry data, non-float epsilons, sizes before work, the command line's promise, documented
exception types and timing.  Each test names the promise of SECURITY.md it checks."""

from __future__ import annotations

import json
import os
import signal
import warnings
from contextlib import contextmanager
from fractions import Fraction

import networkx as nx
import numpy as np
import pytest

import dpgraph

warnings.filterwarnings("ignore", category=dpgraph.SeededReleaseWarning)
zarr = pytest.importorskip("zarr")


@contextmanager
def deadline(seconds: int):
    """Fail instead of hanging when the body runs longer than ``seconds``."""
    def expired(signum, frame):
        raise TimeoutError(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _store(tmp_path, n=300, tile=(64, 256), G=None):
    from dpgraph.graph.blockwise import release_blockwise

    path = tmp_path / "s.zarr"
    release_blockwise(G if G is not None else nx.empty_graph(n), 1.0, path, tile=tile)
    return path


# --------------------------------------------------------------------------- 1. hidden bits
def test_lower_triangle_bits_in_a_straddling_tile_are_refused(tmp_path):
    from dpgraph.graph.blockwise import open_blockwise

    path = _store(tmp_path)
    open_blockwise(path)  # clean
    adj = zarr.open_array(str(path), path="adjacency", mode="r+")
    # rows 128..191 have their diagonal in word 2; tile (2, 0) holds words 0..3, so it
    # straddles the diagonal and words 0 and 1 of those rows lie below it
    adj[130, 0] = np.uint64(1 << 5)  # pair (130, 5): lower triangle
    with pytest.raises(ValueError, match="lower triangle"):
        open_blockwise(path)
    adj[130, 0] = np.uint64(0)
    adj[191, 1] = np.uint64(1 << 63)  # pair (191, 127)
    with pytest.raises(ValueError, match="lower triangle"):
        open_blockwise(path)


# --------------------------------------------------------------------------- 2. memory bombs
def _replace_nodes(path, n, **kwargs):
    g = zarr.open_group(str(path), mode="r+")
    del g["nodes"]
    g.create_array("nodes", shape=(n,), dtype="int64", **kwargs)[:] = np.arange(n)


def test_store_codecs_and_chunks_the_writer_never_produces_are_refused(tmp_path):
    from dpgraph.graph.blockwise import open_blockwise

    path = _store(tmp_path)
    # a compressed nodes array: a small file could declare a gigantic chunk
    _replace_nodes(path, 300, chunks=(300,), compressors=zarr.codecs.GzipCodec())
    with pytest.raises(ValueError, match="codecs or a layout"):
        open_blockwise(path)
    # uncompressed, but a chunk 2^22 labels long for 300 nodes
    _replace_nodes(path, 300, chunks=(1 << 22,), compressors=None)
    with pytest.raises(ValueError, match="chunks"):
        open_blockwise(path)


def test_store_tile_larger_than_the_matrix_is_refused(tmp_path):
    from dpgraph.graph.blockwise import open_blockwise

    path = _store(tmp_path, n=300, tile=(64, 256))
    g = zarr.open_group(str(path), mode="r+")
    tile = [8192, 65536]  # 64 MiB a chunk for a 300-node matrix
    del g["adjacency"]
    g.create_array("adjacency", shape=(300, 5), chunks=(tile[0], tile[1] // 64), dtype="uint64",
                   fill_value=0, compressors=None)
    g.attrs["tile"] = tile
    with pytest.raises(ValueError, match="'tile'"):
        open_blockwise(path)


def test_huge_metadata_file_is_refused_before_parsing(tmp_path):
    from dpgraph.graph.blockwise import open_blockwise

    path = _store(tmp_path)
    meta = json.loads((path / "nodes" / "zarr.json").read_text())
    meta["attributes"] = {"pad": "x" * (2 << 20)}
    (path / "nodes" / "zarr.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="larger than any dpgraph writes"):
        open_blockwise(path)


# --------------------------------------------------------------------------- 3. EdgeKeys
def test_hand_built_edge_keys_are_validated_and_never_printed():
    from dpgraph.graph import blockwise
    from dpgraph.graph.encoding import NodeIndex

    index = NodeIndex.from_integers(np.arange(10))
    Keys = getattr(blockwise, "EdgeKeys", None) or blockwise.EdgeInput  # (named EdgeInput before)
    ok = Keys(index, np.array([1, 23]), False)  # (0, 1), (2, 3)
    assert "23" not in repr(ok) and "edges=2" in repr(ok)
    with pytest.raises(ValueError):
        ok.keys[0] = 5  # read-only: cannot be edited after the checks
    for bad, why in [([10], "below the diagonal"),   # (1, 0): lower triangle
                     ([11], "diagonal"),              # (1, 1)
                     ([100], "n\\^2"),                # beyond the matrix
                     ([-1], "n\\^2"),
                     ([23, 1], "sorted"), ([1, 1], "sorted")]:
        with pytest.raises(ValueError, match=why):
            Keys(index, np.array(bad), False)
    assert Keys(index, np.array([10]), True).keys.tolist() == [10]  # (1, 0) is a directed pair
    with pytest.raises(ValueError, match="diagonal"):
        Keys(index, np.array([11]), True)


def test_a_lower_triangle_key_never_reaches_the_sampler(tmp_path):
    from dpgraph.graph import blockwise
    from dpgraph.graph.encoding import NodeIndex

    index = NodeIndex.from_integers(np.arange(100))
    with pytest.raises(ValueError):
        Keys = getattr(blockwise, "EdgeKeys", None) or blockwise.EdgeInput
        bad = Keys(index, np.array([5 * 100 + 3]), False)  # (5, 3)
        blockwise.release_blockwise(bad, 1.0, tmp_path / "x.zarr")
    assert not (tmp_path / "x.zarr").exists()
