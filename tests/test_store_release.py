"""A blockwise (Zarr) store as a release: the degree distribution in one pass over the store,
the report within two, what needs the whole matrix refused before a tile is read,
``dpgraph report STORE`` (``save``, a file pointing at the store: test_store_pointer.py)."""

from __future__ import annotations

import math
import warnings

import networkx as nx
import pytest

from dpgraph.cli import main
from dpgraph.graph import _memory
from dpgraph.graph.blockwise import graph as bg
from dpgraph.graph.blockwise import open_blockwise, release_blockwise

KEY = bytes(range(32))


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("store") / "s.zarr"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        release_blockwise(nx.gnp_random_graph(500, 0.02, seed=1), 1.0, path, key=KEY, tile=(128, 128))
    return path


@pytest.fixture
def reads(monkeypatch):
    """Passes over the store: tiles read (the reductions read through ``_read_tile``), rows
    read from the store by ``row_blocks``, and reads of the whole matrix (``words``)."""
    count = {"tiles": 0, "rows": 0, "words": 0}
    read, blocks, words = bg._read_tile, bg.ZarrAdjacency.row_blocks, bg.ZarrAdjacency.words

    def counted(*args):
        count["tiles"] += 1
        return read(*args)

    def counted_blocks(self, block=2048):
        from_store = self._words is None  # else from the copy a whole-matrix call read
        for i0, bits in blocks(self, block):
            count["rows"] += bits.shape[0] * from_store
            yield i0, bits

    def counted_words(self):
        count["words"] += self._words is None  # read from the store once, then kept
        return words.fget(self)

    monkeypatch.setattr(bg, "_read_tile", counted)
    monkeypatch.setattr(bg.ZarrAdjacency, "row_blocks", counted_blocks)
    monkeypatch.setattr(bg.ZarrAdjacency, "words", property(counted_words))
    return count


def _passes(B, reads):
    return (reads["tiles"] / len(B.adjacency._plan.tiles()) + reads["rows"] / B.number_of_nodes()
            + reads["words"])


def test_degree_distribution_is_one_pass(store, reads):
    """The edge count and the degrees come from the same pass (before: a popcount pass, then a
    degree pass)."""
    B = open_blockwise(store)
    reads.update(tiles=0, rows=0, words=0)
    h = B.degree_distribution()
    assert _passes(B, reads) == 1
    assert abs(float(h.sum()) - 1.0) < 1e-9
    B.number_of_edges(), B.degree(0), B.released_degrees()  # answered from that pass
    assert _passes(B, reads) == 1
    assert 2 * B.number_of_released_edges() == int(B.released_degrees().sum())


def test_report_within_two_passes(store, reads):
    from dpgraph.report import build_report

    B = open_blockwise(store)
    reads.update(tiles=0, rows=0, words=0)
    html = build_report(B)
    assert "500 nodes" in html
    assert _passes(B, reads) <= 2


@pytest.mark.parametrize("call", ["triangles", "transitivity", "communities"])
def test_whole_matrix_calls_refused_before_reading(store, reads, call, monkeypatch):
    B = open_blockwise(store)
    monkeypatch.setattr(_memory, "SMALL", 0)
    monkeypatch.setattr(_memory, "available_memory", lambda: 1 << 10)
    reads.update(tiles=0, rows=0, words=0)
    with pytest.raises(MemoryError, match="blockwise store of 500 nodes") as info:
        getattr(B, call)()
    assert reads == {"tiles": 0, "rows": 0, "words": 0}
    msg = str(info.value)
    assert "needs" in msg and "available" in msg and "degree_distribution" in msg


def test_cli_report_of_a_store(store, tmp_path, capsys):
    out = tmp_path / "r.html"
    assert main(["report", str(store), "-o", str(out)]) == 0
    assert "500 nodes" in out.read_text(encoding="utf-8")
    assert main(["report", str(store), "-o", str(tmp_path / "s.html"), "--verify-key", "k.pub"]) == 2
    assert "carries no signature" in capsys.readouterr().err


def test_small_store_still_answers_triangles(store):
    est = open_blockwise(store).triangles()
    assert est.std > 0 and math.isfinite(est.value)


def test_degree_pass_compiled_and_numpy_agree(store, monkeypatch):
    """The column sums of the degree pass: bit-sliced counters (numba) or unpacked bits (numpy)."""
    import numpy as np

    fast = open_blockwise(store).released_degrees()
    monkeypatch.setattr(bg, "_COLUMN_KERNEL", [None])
    slow = open_blockwise(store).released_degrees()
    assert np.array_equal(fast, slow) and fast.sum() > 0
    rng = np.random.default_rng(0)
    bits = rng.random((300, 7 * 64)) < 0.4
    words = np.packbits(bits, axis=1, bitorder="little").view("<u8")
    counts = np.zeros(7 * 64, dtype=np.int64)
    monkeypatch.undo()
    kernel = bg._column_kernel()
    if kernel is not None:  # 300 rows: planes of 9 bits, ripples of every length
        kernel(np.ascontiguousarray(words), counts)
        assert np.array_equal(counts, bits.sum(axis=0))
