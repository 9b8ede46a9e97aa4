"""Blockwise releases: fresh nonces, the store lock, validation on open, size checks."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import zarr
from scipy import stats

import dpgraph
from dpgraph.graph import _memory
from dpgraph.graph.blockwise import (
    edge_keys,
    open_blockwise,
    release_blockwise,
)
from dpgraph.graph.blockwise.tiles import release_tiled  # the in-memory reference

KEY = bytes(range(32))
ROOT = Path(__file__).resolve().parents[1]


def _graph(n=100, p=0.05, seed=1, directed=False):
    return nx.gnp_random_graph(n, p, seed=seed, directed=directed)


def _differing_pairs(A, B, n):
    bits = np.unpackbits((A ^ B).view(np.uint8), axis=1, bitorder="little")[:, :n]
    return int(bits.sum())


def _binomial_band(trials, q, alpha=1e-6):
    return stats.binom.ppf(alpha / 2, trials, q), stats.binom.isf(alpha / 2, trials, q)


# ---- one key, many releases: never the same flips ---------------------------------------
def test_same_key_on_neighbouring_graphs_does_not_reveal_the_pair(tmp_path, monkeypatch):
    """Two releases with one key of graphs differing in one pair.

    With independent flips the number of differing pairs is
    Binomial(N - 1, 2p(1-p)) plus at most one; shared flips give exactly 1.
    (Each call also gets its own key registry file, as two machines would.)
    """
    n = 100
    G = _graph(n)
    G2 = G.copy()
    u, v = next((u, v) for u in range(n) for v in range(u + 1, n) if not G.has_edge(u, v))
    G2.add_edge(u, v)
    monkeypatch.setenv("DPGRAPH_KEY_REGISTRY", str(tmp_path / "reg1.json"))
    A = release_blockwise(G, 1.0, tmp_path / "a.zarr", key=KEY, tile=(64, 64))
    monkeypatch.setenv("DPGRAPH_KEY_REGISTRY", str(tmp_path / "reg2.json"))
    B = release_blockwise(G2, 1.0, tmp_path / "b.zarr", key=KEY, tile=(64, 64))
    p = A.flip_probability
    N = n * (n - 1) // 2
    lo, hi = _binomial_band(N - 1, 2 * p * (1 - p))
    d = _differing_pairs(A.adjacency.words, B.adjacency.words, n)
    assert d > 1
    assert lo <= d <= hi + 1


def test_same_key_same_graph_twice_gives_independent_releases(tmp_path, monkeypatch):
    monkeypatch.setenv("DPGRAPH_KEY_REGISTRY", str(tmp_path / "keys.json"))  # read by old versions
    n = 90
    G = _graph(n, directed=True)
    A = release_blockwise(G, 0.5, tmp_path / "a.zarr", key=KEY, tile=(64, 64), directed=True)
    B = release_blockwise(G, 0.5, tmp_path / "b.zarr", key=KEY, tile=(64, 64), directed=True)
    assert A.nonce != B.nonce and A.release_id != B.release_id
    p = A.flip_probability
    lo, hi = _binomial_band(n * (n - 1), 2 * p * (1 - p))
    assert lo <= _differing_pairs(A.adjacency.words, B.adjacency.words, n) <= hi
    # the key and the stored nonce reproduce each release exactly
    e = edge_keys(G, directed=True)
    for R in (A, B):
        ref = release_tiled(e, 0.5, KEY, (64, 64), nonce=R.nonce)
        assert np.array_equal(R.adjacency.words, ref.adjacency.words)


def test_release_tiled_draws_a_fresh_nonce_by_default():
    e = edge_keys(_graph(80))
    a = release_tiled(e, 1.0, KEY, (64, 64)).adjacency.words
    b = release_tiled(e, 1.0, KEY, (64, 64)).adjacency.words
    assert not np.array_equal(a, b)
    with pytest.raises(TypeError, match="nonce"):
        release_tiled(e, 1.0, KEY, (64, 64), nonce=b"short")


# ---- resume -------------------------------------------------------------------------------
def test_resume_reuses_the_store_nonce(tmp_path):
    G = _graph(150)
    store = tmp_path / "r.zarr"
    B = release_blockwise(G, 1.0, store, key=KEY, tile=(64, 64))
    words = B.adjacency.words
    g = zarr.open_group(str(store), mode="r+")  # an interrupted write: half the tiles lost
    g["adjacency"][:64] = 0
    g.attrs.update({"complete": False})
    with pytest.raises(ValueError, match="incomplete"):
        open_blockwise(store)
    with pytest.raises(ValueError, match="another input"):
        release_blockwise(_graph(150, seed=2), 1.0, store, key=KEY, tile=(64, 64), resume=True)
    with pytest.raises(ValueError, match="another key"):
        release_blockwise(G, 1.0, store, key=bytes(32), tile=(64, 64), resume=True)
    with pytest.raises(ValueError, match="needs the key"):
        release_blockwise(G, 1.0, store, tile=(64, 64), resume=True)
    R = release_blockwise(G, 1.0, store, key=KEY, tile=(64, 64), resume=True)
    assert R.nonce == B.nonce and np.array_equal(R.adjacency.words, words)
    with pytest.raises(ValueError, match="nothing to resume"):
        release_blockwise(G, 1.0, store, key=KEY, tile=(64, 64), resume=True)
    with pytest.raises(ValueError, match="not both"):
        release_blockwise(G, 1.0, store, key=KEY, resume=True, overwrite=True)


# ---- two writers, one store ------------------------------------------------------------------
_CHILD = """
import os, sys, time
import dask
import networkx as nx
from dpgraph.core.randomness import SecureRandom
from dpgraph.graph.blockwise import release_blockwise

started, go, store = sys.argv[1:4]
orig = SecureRandom.uint64
def slow(self, n):  # hold the write open until the parent says go
    if not os.path.exists(go):
        open(started, "w").close()
        while not os.path.exists(go):
            time.sleep(0.02)
    return orig(self, n)
SecureRandom.uint64 = slow
with dask.config.set(scheduler="synchronous"):
    B = release_blockwise(nx.gnp_random_graph(100, 0.05, seed=1), 1.0, store,
                          key=bytes(range(32)), tile=(64, 64))
print(B.nonce.hex())
"""


def test_concurrent_writers_to_one_store(tmp_path, monkeypatch):
    monkeypatch.setenv("DPGRAPH_KEY_REGISTRY", str(tmp_path / "keys.json"))  # read by old versions
    store = tmp_path / "shared.zarr"
    started, go = tmp_path / "started", tmp_path / "go"
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(_CHILD), str(started),
                              str(go), str(store)], cwd=ROOT, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not started.exists():
            assert child.poll() is None, child.stderr.read()
            assert time.monotonic() < deadline, "the first writer never started"
            time.sleep(0.02)
        with pytest.raises(dpgraph.graph.blockwise.StoreBusyError, match="another process"):
            release_blockwise(_graph(100, seed=7), 1.0, store, tile=(64, 64), overwrite=True)
    finally:
        go.touch()
        out, err = child.communicate(timeout=300)
    assert child.returncode == 0, err
    B = open_blockwise(store)  # the first writer's release, whole and uninterleaved
    assert B.nonce.hex() == out.strip()
    ref = release_tiled(edge_keys(_graph(100, seed=1)), 1.0, KEY, (64, 64),
                        nonce=B.nonce)
    assert np.array_equal(B.adjacency.words, ref.adjacency.words)
    # once the first writer is done, the store can be replaced
    C = release_blockwise(_graph(100, seed=7), 1.0, store, tile=(64, 64), overwrite=True)
    assert C.release_id != B.release_id


# ---- validation on open ---------------------------------------------------------------------
def _store(tmp_path, n=130, directed=False):
    B = release_blockwise(_graph(n, directed=directed), 1.0, tmp_path / "v.zarr", key=KEY,
                          tile=(64, 64), directed=directed)
    return B, zarr.open_group(str(tmp_path / "v.zarr"), mode="r+")


def _drop(g, field):
    meta = g.attrs.asdict()
    del meta[field]
    g.attrs.put(meta)


@pytest.mark.parametrize("field, value", [
    ("directed", "false"), ("directed", 0), ("complete", "true"),
    ("n", "130"), ("n", True), ("n", 1),
    ("tile", [0, 0]), ("tile", [64]), ("tile", [64, 100]), ("tile", "64,64"),
    ("flip_numerator", "0"), ("flip_numerator", 5), ("flip_numerator", str(1 << 64)),
    ("flip_numerator", "-3"), ("flip_numerator", "1e5"),
    ("epsilon", "1.0"), ("epsilon", -1.0), ("epsilon", 0.0), ("epsilon", True),
    ("nonce", "xyz"), ("nonce", 7), ("release_id", None),
])
def test_bad_metadata_is_refused_naming_the_field(tmp_path, field, value):
    _, g = _store(tmp_path)
    g.attrs.update({field: value})
    with pytest.raises(ValueError, match=f"'{field}'"):
        open_blockwise(tmp_path / "v.zarr")


@pytest.mark.parametrize("field", ["epsilon", "nonce", "flip_numerator", "directed", "tile", "n"])
def test_missing_metadata_is_refused_naming_the_field(tmp_path, field):
    _, g = _store(tmp_path)
    _drop(g, field)
    with pytest.raises(ValueError, match=f"'{field}'"):
        open_blockwise(tmp_path / "v.zarr")


def test_non_finite_epsilon_is_refused(tmp_path):
    _, g = _store(tmp_path)
    g.attrs.update({"epsilon": float("inf")})
    with pytest.raises(ValueError, match="'epsilon'"):
        open_blockwise(tmp_path / "v.zarr")


def test_shape_mismatch_with_n_is_refused(tmp_path):
    _, g = _store(tmp_path)
    g.attrs.update({"n": 140})
    with pytest.raises(ValueError, match="'adjacency'"):
        open_blockwise(tmp_path / "v.zarr")
    g.attrs.update({"n": 130, "tile": [128, 64]})
    with pytest.raises(ValueError, match="chunks"):
        open_blockwise(tmp_path / "v.zarr")


@pytest.mark.parametrize("labels", ["duplicated", "unsorted"])
def test_bad_node_labels_are_refused(tmp_path, labels):
    _, g = _store(tmp_path)
    nodes = np.arange(130, dtype=np.int64)
    if labels == "duplicated":
        nodes[5] = 4
    else:
        nodes[[5, 6]] = nodes[[6, 5]]
    g["nodes"][:] = nodes
    with pytest.raises(ValueError, match="sorted, unique"):
        open_blockwise(tmp_path / "v.zarr")


def test_a_store_without_node_chunks_is_refused_before_its_labels_are_built(tmp_path):
    """A few KB of metadata declaring n = 2^24 and no node chunk: refused from a listing,
    before the 128 MiB of labels (zeros, the fill value) are built."""
    import tracemalloc

    _, g = _store(tmp_path)
    n = 1 << 24
    del g["nodes"], g["adjacency"]
    g.create_array("nodes", shape=(n,), chunks=(1 << 20,), dtype="int64", compressors=None)
    g.create_array("adjacency", shape=(n, n // 64), chunks=(4096, 512), dtype="uint64",
                   fill_value=0, compressors=None)
    g.attrs.update({"n": n, "tile": [4096, 32768]})
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match="0 of its 16 chunks"):
            open_blockwise(tmp_path / "v.zarr")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20  # never the 8n bytes of labels


def test_node_labels_are_checked_across_chunk_seams(tmp_path, monkeypatch):
    from dpgraph.graph.blockwise import reader, write

    monkeypatch.setattr(reader, "NODE_CHUNK", 64)
    monkeypatch.setattr(write, "NODE_CHUNK", 64)
    _, g = _store(tmp_path)  # 130 labels: chunks of 64, 64 and 2
    open_blockwise(tmp_path / "v.zarr")
    nodes = np.arange(130, dtype=np.int64)
    nodes[[63, 64]] = nodes[[64, 63]]  # each chunk sorted, the seam not
    nodes[:64].sort()
    nodes[64:128].sort()
    assert np.all(nodes[1:64] > nodes[:63]) and np.all(nodes[65:128] > nodes[64:127])
    g["nodes"][:] = nodes
    with pytest.raises(ValueError, match="sorted, unique"):
        open_blockwise(tmp_path / "v.zarr")
    g["nodes"][:] = np.arange(130)
    os.remove(tmp_path / "v.zarr" / "nodes" / "c" / "1")  # a missing middle chunk reads as 0s
    with pytest.raises(ValueError, match="2 of its 3 chunks"):
        open_blockwise(tmp_path / "v.zarr")


@pytest.mark.parametrize("directed, where", [
    (False, "diagonal"), (False, "lower"), (False, "padding"), (False, "lower-tile"),
    (True, "diagonal"), (True, "padding"),  # a directed release uses both triangles
])
def test_stray_bits_are_refused(tmp_path, directed, where):
    B, g = _store(tmp_path, directed=directed)
    assert open_blockwise(tmp_path / "v.zarr").number_of_released_edges() == B.number_of_released_edges()
    # n = 130: columns 130..191 of the last word are padding; (100, 10) lies in a tile
    # wholly below the diagonal, which an undirected release never writes
    row, col = {"diagonal": (70, 70), "lower": (70, 66), "padding": (3, 135),
                "lower-tile": (100, 10)}[where]
    arr = g["adjacency"]
    word = arr[row, col // 64] | np.uint64(1 << (col % 64))
    arr[row, col // 64] = word
    with pytest.raises(ValueError, match="no vertex pair"):
        open_blockwise(tmp_path / "v.zarr")


def test_valid_store_still_opens_with_all_checks(tmp_path):
    B, _ = _store(tmp_path)
    R = open_blockwise(tmp_path / "v.zarr")
    assert R.number_of_released_edges() == B.number_of_released_edges() and R.nonce == B.nonce


# ---- size checks before any work ------------------------------------------------------------
def _no_work(monkeypatch):
    """Fail at once if a release gets as far as reading its input or creating its store.

    The size checks must come first; without this guard a regression would start
    allocating 8 GB of labels or writing hundreds of GB.
    """
    from dpgraph.graph.blockwise import write

    def refuse(*args, **kwargs):
        raise AssertionError("the release went past its size checks")

    monkeypatch.setattr(write, "_as_edge_keys", refuse)
    monkeypatch.setattr(write, "_create_store", refuse)


def _fake_disk(free):
    def disk_usage(path):
        return shutil._ntuple_diskusage(10 * free, 9 * free, free)
    return disk_usage


def test_three_million_nodes_on_small_disk_is_refused_before_writing(tmp_path, monkeypatch):
    _no_work(monkeypatch)
    monkeypatch.setattr(shutil, "disk_usage", _fake_disk(77 * 10**9))
    edges = tmp_path / "edges.txt"
    edges.write_text("0 1\n")
    with pytest.raises(ValueError, match=r"needs about [\d,.]+ GiB of disk .* only 71.71 GiB"):
        release_blockwise(str(edges), 1.0, tmp_path / "big.zarr", nodes=3_000_000)
    assert not (tmp_path / "big.zarr").exists()


def test_billion_nodes_refused_with_a_clear_message(tmp_path, monkeypatch):
    _no_work(monkeypatch)
    edges = tmp_path / "edges.txt"
    edges.write_text("0 1\n")
    monkeypatch.setattr(shutil, "disk_usage", _fake_disk(10**12))
    with pytest.raises(ValueError, match="n = 1,000,000,000 nodes needs about"):
        release_blockwise(str(edges), 1.0, tmp_path / "huge.zarr", nodes=10**9)
    # with disk enough, the node labels alone (8 GB) exceed this process's memory
    monkeypatch.setattr(shutil, "disk_usage", _fake_disk(10**20))
    monkeypatch.setattr(_memory, "available_memory", lambda: 4 << 30)
    with pytest.raises(MemoryError, match=r"node labels .* \(7.45 GiB\) but only 4.00 GiB"):
        release_blockwise(str(edges), 1.0, tmp_path / "huge.zarr", nodes=10**9)
    assert not (tmp_path / "huge.zarr").exists()


def test_tile_larger_than_memory_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(_memory, "available_memory", lambda: 1 << 19)
    with pytest.raises(MemoryError, match="use a smaller tile"):
        release_blockwise(_graph(2000), 1.0, tmp_path / "m.zarr", tile=(1024, 4096))
    assert not (tmp_path / "m.zarr").exists()


# ---- the ledger --------------------------------------------------------------------------------
def test_ledger_is_charged_once_per_release_and_refuses_over_budget(tmp_path):
    from dpgraph.exceptions import BudgetExceededError

    L = dpgraph.PrivacyLedger(total_epsilon=1.5)
    L.save(tmp_path / "budget.json")
    G = _graph(100)
    B = release_blockwise(G, 1.0, tmp_path / "a.zarr", key=KEY, tile=(64, 64), ledger=L)
    assert L.spent == pytest.approx(1.0)
    with pytest.raises(BudgetExceededError):
        release_blockwise(G, 1.0, tmp_path / "b.zarr", tile=(64, 64), ledger=L)
    assert not (tmp_path / "b.zarr").exists()  # refused before anything was written
    # a resume rewrites the same bits and is not charged again
    zarr.open_group(str(tmp_path / "a.zarr"), mode="r+").attrs.update({"complete": False})
    R = release_blockwise(G, 1.0, tmp_path / "a.zarr", key=KEY, tile=(64, 64), ledger=L,
                          resume=True)
    assert R.nonce == B.nonce and L.spent == pytest.approx(1.0)
    # the file holds the charge for other processes too
    assert dpgraph.PrivacyLedger.load(tmp_path / "budget.json").spent == pytest.approx(1.0)
    with pytest.raises(TypeError, match="ledger"):
        release_blockwise(G, 0.1, tmp_path / "c.zarr", ledger="budget.json")


