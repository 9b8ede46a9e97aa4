"""Blockwise releases: Dask (LocalCluster) + Zarr equal the in-memory release bit for bit."""

from __future__ import annotations

import json
import os

import distributed
import networkx as nx
import numpy as np
import pytest
import zarr
from scipy import stats

import dpgraph
from dpgraph.graph import blockwise as bw
from dpgraph.graph.adjacency import Adjacency, PackedWords
from dpgraph.graph.blockwise import (
    edge_keys,
    open_blockwise,
    release_blockwise,
)
from dpgraph.graph.blockwise.tiles import (
    release_tiled,  # the in-memory reference
    tile_source,
)

KEY = bytes(range(32))
NONCE = bytes(range(100, 116))
P_MIN = 1e-4


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       dashboard_address=":0")
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def _graph(n=203, p=0.04, seed=1, directed=False):
    return nx.gnp_random_graph(n, p, seed=seed, directed=directed)


# ---- bit for bit ------------------------------------------------------------------
def test_single_tile_equals_dpgraph_release():
    G = _graph()
    R = release_tiled(edge_keys(G), 1.0, KEY, tile=(1024, 1024), nonce=NONCE)
    D = dpgraph.release(G, 1.0, seed=tile_source(KEY, NONCE, 0, 0))
    assert np.array_equal(R.adjacency.words, D.adjacency.words)


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("tile", [(64, 64), (128, 192)])
def test_cluster_release_equals_in_memory(client, tmp_path, directed, tile):
    G = _graph(directed=directed)
    e = edge_keys(G, directed=directed)
    B = release_blockwise(e, 1.5, tmp_path / "r.zarr", directed=directed, key=KEY, tile=tile,
                          client=client)
    ref = release_tiled(e, 1.5, KEY, tile=tile, nonce=B.nonce)
    assert np.array_equal(B.adjacency.words, ref.adjacency.words)
    # and again on Dask's single-threaded scheduler: worker count and order do not matter
    import dask

    with dask.config.set(scheduler="synchronous"):
        C = release_blockwise(e, 1.5, tmp_path / "s.zarr", directed=directed, key=KEY,
                              tile=tile)
    assert np.array_equal(C.adjacency.words,
                          release_tiled(e, 1.5, KEY, tile, nonce=C.nonce).adjacency.words)
    # the diagonal and (undirected) lower triangle are empty, the padding too
    bits = np.unpackbits(ref.adjacency.words.view(np.uint8), axis=1, bitorder="little")
    n = G.number_of_nodes()
    assert not bits[:, n:].any()
    assert not np.diagonal(bits[:, :n]).any()
    if not directed:
        assert not np.tril(bits[:, :n]).any()


@pytest.mark.parametrize("batch", [256, 3])  # one batch of tile results, or many folded
def test_queries_match_in_memory(client, tmp_path, batch, monkeypatch):
    from dpgraph.graph.blockwise import graph as bgraph

    monkeypatch.setattr(bgraph, "_BATCH", batch)
    G = _graph(n=300)
    e = edge_keys(G)
    B = release_blockwise(e, 1.0, tmp_path / "q.zarr", key=KEY, tile=(64, 128), client=client)
    ref = release_tiled(e, 1.0, KEY, tile=(64, 128), nonce=B.nonce)
    assert B.number_of_released_edges() == ref.number_of_released_edges()
    assert np.array_equal(B.released_degrees(), ref.adjacency.degrees())
    ed = edge_keys(_graph(n=300, directed=True), directed=True)
    D = release_blockwise(ed, 1.0, tmp_path / "d.zarr", key=KEY, tile=(64, 128), directed=True,
                          client=client)
    assert np.array_equal(D.released_degrees(), release_tiled(
        ed, 1.0, KEY, tile=(64, 128), nonce=D.nonce).adjacency.degrees())
    rng = np.random.default_rng(3)
    pairs = []
    for _ in range(7):
        p = rng.permutation(300)
        pairs.append((p[:150], p[150:]))
    pairs.append(([0, 5], [7]))
    a, b = B.cuts(pairs), ref.cuts(pairs)
    assert np.array_equal(a.value, b.value) and np.array_equal(a.std, b.std)
    assert B.cut([0, 5], [7]).raw == ref.cut([0, 5], [7]).raw
    assert B.edges_within(range(120)).value == ref.edges_within(range(120)).value
    assert "release_id" in repr(B)
    assert isinstance(B.adjacency, Adjacency) and isinstance(B.adjacency, PackedWords)
    assert B.adjacency.file_kind == "store"  # saved as a pointer to the store


def test_cut_estimates_unbiased_across_keys():
    """50 keyed releases: z-scores with the exact std have mean 0 (4 standard errors)."""
    G = _graph(n=130, p=0.1)
    e = edge_keys(G)
    S, T = list(range(60)), list(range(60, 130))
    truth = nx.cut_size(G, S, T)
    z = []
    for k in range(50):
        R = release_tiled(e, 1.0, bytes([k]) * 16, tile=(64, 64))
        est = R.cut(S, T)
        z.append((est.value - truth) / est.std)
    z = np.array(z)
    assert abs(z.mean()) < 4 / np.sqrt(z.size)
    stat = z.var(ddof=1) * (z.size - 1)
    assert stats.chi2.sf(stat, z.size - 1) > P_MIN / 2 and stats.chi2.cdf(stat, z.size - 1) > P_MIN / 2


# ---- edge-list input ----------------------------------------------------------------
def test_edge_list_streaming_matches_graph(tmp_path):
    G = _graph(n=150)
    path = tmp_path / "g.txt"
    lines = ["# a comment", "% not this one"][:1]
    for u, v in G.edges():
        lines.append(f"{v} {u} 1.0")  # reversed, with a weight column
    lines += [f"{u} {v}" for u, v in list(G.edges())[:10]]  # duplicates
    path.write_text("\n".join(lines) + "\n")
    e_file = edge_keys(path, nodes=150, chunk_bytes=1024)
    e_graph = edge_keys(G)
    assert np.array_equal(e_file.keys, e_graph.keys)
    B = release_blockwise(str(path), 1.0, tmp_path / "f.zarr", nodes=150, key=KEY,
                          tile=(64, 64))
    assert np.array_equal(B.adjacency.words, release_tiled(e_graph, 1.0, KEY, (64, 64),
                                                                nonce=B.nonce).adjacency.words)


def test_edge_list_with_labels(tmp_path):
    path = tmp_path / "g.txt"
    path.write_text("10 30\n30 20\n")
    e = edge_keys(path, nodes=[30, 10, 20, 40])
    assert list(e.index.nodes) == [10, 20, 30, 40]
    assert e.keys.tolist() == [0 * 4 + 2, 1 * 4 + 2]


def test_edge_list_errors(tmp_path):
    path = tmp_path / "g.txt"
    path.write_text("0 1\n1 9\n")
    with pytest.raises(ValueError, match="not in nodes"):
        edge_keys(path, nodes=5)
    path.write_text("0 1\n3 3\n")
    with pytest.raises(ValueError, match="self-loop"):
        edge_keys(path, nodes=5)
    path.write_text("0 x\n")
    with pytest.raises(ValueError, match="line 1: expected an integer"):
        edge_keys(path, nodes=5)
    with pytest.raises(FileNotFoundError):
        edge_keys(tmp_path / "missing.txt", nodes=5)
    with pytest.raises(TypeError, match="nodes"):
        edge_keys(path, nodes=None)
    with pytest.raises(TypeError, match="nodes="):
        release_blockwise(str(path), 1.0, tmp_path / "x.zarr", key=KEY)


def test_error_messages_do_not_echo_edges(tmp_path):
    path = tmp_path / "g.txt"
    path.write_text("12345 67890\n")
    with pytest.raises(ValueError) as info:
        edge_keys(path, nodes=5)
    assert "12345" not in str(info.value) and "67890" not in str(info.value)


# ---- the store ------------------------------------------------------------------------
def _make(tmp_path, name="r.zarr", G=None, key=KEY):
    e = edge_keys(G if G is not None else _graph(n=100))
    return release_blockwise(e, 1.0, tmp_path / name, key=key, tile=(64, 64))


def test_missing_store(tmp_path):
    with pytest.raises(FileNotFoundError, match="no dpgraph blockwise release"):
        open_blockwise(tmp_path / "nothing.zarr")


def test_foreign_store(tmp_path):

    zarr.open_group(str(tmp_path / "other.zarr"), mode="w").attrs.update({"hello": 1})
    with pytest.raises(ValueError, match="not a dpgraph blockwise"):
        open_blockwise(tmp_path / "other.zarr")


def test_version_mismatch_and_other_release(tmp_path):

    B = _make(tmp_path)
    assert open_blockwise(tmp_path / "r.zarr", release_id=B.release_id).release_id == B.release_id
    with pytest.raises(ValueError, match="another release"):
        open_blockwise(tmp_path / "r.zarr", release_id="0" * 32)
    g = zarr.open_group(str(tmp_path / "r.zarr"), mode="r+")
    g.attrs.update({"format_version": bw.FORMAT_VERSION + 1})
    with pytest.raises(ValueError, match="format version"):
        open_blockwise(tmp_path / "r.zarr")
    g.attrs.update({"format_version": bw.FORMAT_VERSION, "complete": False})
    with pytest.raises(ValueError, match="incomplete"):
        open_blockwise(tmp_path / "r.zarr")
    g.attrs.update({"complete": True, "flip_numerator": "1"})
    with pytest.raises(ValueError, match="certify"):
        open_blockwise(tmp_path / "r.zarr")


def test_existing_store_needs_overwrite(tmp_path):
    _make(tmp_path)
    with pytest.raises(ValueError, match="overwrite=True"):
        _make(tmp_path)
    e = edge_keys(_graph(n=100))
    again = release_blockwise(e, 1.0, tmp_path / "r.zarr", key=KEY, tile=(64, 64),
                              overwrite=True)
    assert again.number_of_nodes() == 100


@pytest.mark.parametrize("tile", [(63, 64), (64, 100), (0, 64), ("a", 64), 5])
def test_bad_tile(tile, tmp_path):
    with pytest.raises((ValueError, TypeError), match="tile"):
        release_blockwise(_graph(n=70), 1.0, tmp_path / "t.zarr", key=KEY, tile=tile)


@pytest.mark.parametrize("key", [b"short", "a" * 16, 12])
def test_bad_key(key, tmp_path):
    with pytest.raises(TypeError, match="key"):
        release_blockwise(_graph(n=70), 1.0, tmp_path / "k.zarr", key=key)


def test_non_integer_labels_refused(tmp_path):
    G = nx.relabel_nodes(_graph(n=70), {i: f"v{i}" for i in range(70)})
    with pytest.raises(TypeError, match="integer node labels"):
        release_blockwise(G, 1.0, tmp_path / "l.zarr", key=KEY)


def test_metadata_is_public_only(tmp_path):
    B = _make(tmp_path)
    meta = B.metadata
    for k in ("format", "format_version", "release_id", "epsilon", "flip_numerator", "n",
              "directed", "tile", "input_tag", "complete"):
        assert k in meta
    text = json.dumps(meta)
    assert KEY.hex() not in text
    assert int(meta["flip_numerator"]) == B.probabilities.flip_numerator
    assert os.path.exists(tmp_path / "r.zarr" / "nodes")


def test_multi_query_kernel_matches_numpy_fallback(monkeypatch):
    from dpgraph.graph import packed

    rng = np.random.default_rng(4)
    words = rng.integers(0, 2**63, (200, 7), dtype=np.int64).astype(np.uint64)
    rows = (rng.random((5, 200)) < 0.5).astype(np.uint8)
    masks = rng.integers(0, 2**63, (5, 7), dtype=np.int64).astype(np.uint64)
    expect = [sum(int(np.bitwise_count(words[i] & masks[q]).sum()) for i in np.flatnonzero(rows[q]))
              for q in range(5)]
    assert packed.multi_query_popcount(words, rows, masks).tolist() == expect
    monkeypatch.setattr(packed, "HAVE_NUMBA", False)
    assert packed.multi_query_popcount(words, rows, masks).tolist() == expect


def test_local_cluster_workers_get_the_malloc_environment(tmp_path):
    cluster = bw.local_cluster(1, 1, processes=True)
    try:
        with distributed.Client(cluster) as c:
            env = c.run(lambda: os.environ.get("MALLOC_TRIM_THRESHOLD_"))
            assert list(env.values()) == [bw.WORKER_ENV["MALLOC_TRIM_THRESHOLD_"]]
            e = edge_keys(_graph(n=100))
            B = release_blockwise(e, 1.0, tmp_path / "p.zarr", key=KEY, tile=(64, 64), client=c)
            assert np.array_equal(B.adjacency.words, release_tiled(e, 1.0, KEY, (64, 64),
                                                                      nonce=B.nonce).adjacency.words)
    finally:
        cluster.close()


def test_never_writes_over_foreign_data(tmp_path):

    other = tmp_path / "mine"
    other.mkdir()
    (other / "precious.txt").write_text("keep me")
    with pytest.raises(ValueError, match="not a dpgraph blockwise store"):
        release_blockwise(_graph(n=70), 1.0, other, key=KEY, overwrite=True)
    assert (other / "precious.txt").read_text() == "keep me"
    zarr.open_group(str(tmp_path / "z.zarr"), mode="w").attrs.update({"hello": 1})
    with pytest.raises(ValueError, match="not a dpgraph blockwise release"):
        release_blockwise(_graph(n=70), 1.0, tmp_path / "z.zarr", key=KEY,
                          overwrite=True)
    empty = tmp_path / "empty"
    empty.mkdir()
    B = release_blockwise(_graph(n=70), 1.0, empty, key=KEY, tile=(64, 64))
    assert B.number_of_nodes() == 70


def test_zarr_write_path_equals_direct_chunk_files(tmp_path, monkeypatch):
    """Local stores write chunk files directly; Zarr's own write path gives the same store."""
    from dpgraph.graph.blockwise import write

    e = edge_keys(_graph(n=203))
    A = release_blockwise(e, 1.0, tmp_path / "direct.zarr", key=KEY, tile=(128, 192))
    monkeypatch.setattr(write, "_direct_chunk_dir", lambda loc, arr: None)
    B = release_blockwise(e, 1.0, tmp_path / "zarr.zarr", key=KEY, tile=(128, 192))
    for R in (A, B):
        ref = release_tiled(e, 1.0, KEY, (128, 192), nonce=R.nonce)
        assert np.array_equal(R.adjacency.words, ref.adjacency.words)
    assert open_blockwise(tmp_path / "direct.zarr").number_of_released_edges() == A.number_of_released_edges()
    assert not list((tmp_path / "direct.zarr").rglob("*.tmp"))


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("tile", [(64, 64), (128, 192), (192, 128)])
def test_tiles_sampled_into_a_dirty_reused_buffer_are_the_fresh_tiles(directed, tile):
    """Writers reuse two full-size buffers: whatever a buffer held, the tile is the same."""
    from dpgraph.core import rr_probabilities
    from dpgraph.graph.blockwise.tiles import TilePlan, sample_tile

    e = edge_keys(_graph(n=203, directed=directed), directed=directed)
    plan = TilePlan(e.n, directed, tile[0], tile[1] // 64)
    num = rr_probabilities(1.0).flip_numerator
    dirty = np.full((plan.tile_rows, plan.tile_words), np.uint64(2**64 - 1))
    for a, b in plan.tiles():
        fresh = sample_tile(tile_source(KEY, NONCE, a, b), plan, a, b, num, e.keys)
        reused = sample_tile(tile_source(KEY, NONCE, a, b), plan, a, b, num, e.keys, out=dirty)
        assert np.shares_memory(reused, dirty) and np.array_equal(fresh, reused), (a, b)


def test_edge_chunk_files_are_padded_with_zeros(tmp_path):
    """Zarr reads an edge chunk at full tile size: its padding must be the fill value 0."""
    e = edge_keys(_graph(n=203))
    B = release_blockwise(e, 1.0, tmp_path / "r.zarr", key=KEY, tile=(128, 192))
    chunks = sorted((tmp_path / "r.zarr" / "adjacency" / "c").rglob("*"))
    files = [p for p in chunks if p.is_file()]
    assert files and all(p.stat().st_size == 128 * 3 * 8 for p in files)
    for p in files:
        a, b = int(p.parent.name), int(p.name)
        words = np.fromfile(p, dtype="<u8").reshape(128, 3)
        rows, cols = min(203 - 128 * a, 128), min(4 - 3 * b, 3)
        assert not words[rows:].any() and not words[:, cols:].any(), (a, b)
        ref = B.adjacency.words[128 * a : 128 * a + rows, 3 * b : 3 * b + cols]
        assert np.array_equal(words[:rows, :cols], ref)
