"""R.to_edgelist formats blocks of lines (compiled, straight from the release's rows on two threads,
or in numpy): the bytes are those of the line-by-line text."""

from __future__ import annotations

import io

import networkx as nx
import numpy as np
import pytest

import dpgraph
from dpgraph.graph import convert
from dpgraph.graph.convert import edge_blocks, write_edge_lines


def _line_by_line(R, path, delimiter=" "):
    """The text to_edgelist wrote before it formatted in blocks: one f-string per edge."""
    labels = [str(v) for v in R.nodes]
    kind = "directed" if R.directed else "undirected"
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(f"# dpgraph {kind} release: {R.number_of_nodes()} nodes, "
                 f"epsilon={R.epsilon:g}, flip_probability={R.flip_probability:.6g}, "
                 f"keep={R.keep:.6g}; isolated nodes have no line\n")
        for r, c in edge_blocks(R.adjacency):
            fh.writelines(f"{labels[i]}{delimiter}{labels[j]}\n" for i, j in zip(r.tolist(), c.tolist()))


def _graphs():
    G = nx.gnp_random_graph(300, 0.05, seed=1)
    yield "int", G
    yield "unicode", nx.relabel_nodes(G, {v: f"nœud-{v}" * (1 + v % 4) for v in G})
    yield "tuple", nx.relabel_nodes(G, {v: (v, "x" * (v % 7)) for v in G})  # str has ", "
    yield "directed", nx.gnp_random_graph(200, 0.05, seed=2, directed=True)


@pytest.fixture(params=["compiled", "numpy"])
def formatter(request, monkeypatch):
    """The compiled loops for every block however small, or numpy's path throughout."""
    if request.param == "compiled":
        monkeypatch.setattr(convert, "_COMPILED_LINES", 1)
        monkeypatch.setattr(convert, "_COMPILED_BITS", 1)
        monkeypatch.setattr(convert, "_DIRECT_PAIRS", 5_000)  # many blocks of the direct writer
        monkeypatch.setattr(convert, "_DIRECT_STORED", 100)
    else:
        monkeypatch.setattr(convert, "_text_kernel", lambda: None)
        monkeypatch.setattr(convert, "_edge_kernel", lambda: None)
        monkeypatch.setattr(convert, "_direct_tasks", lambda *args: None)
    return request.param


@pytest.mark.parametrize("delimiter", [" ", "\t", " ;; "])
@pytest.mark.parametrize("sparse", [False, True])
def test_bytes_identical_to_line_by_line(tmp_path, delimiter, sparse, formatter):
    for name, G in _graphs():
        if name == "tuple" and delimiter != "\t":
            continue
        kw = dict(target_edges=2_000) if sparse else {}
        kw.update(directed=G.is_directed())
        R = dpgraph.release(G, epsilon=1.0, seed=3, **kw)
        assert R.number_of_released_edges() > 500
        new, old = tmp_path / f"{name}-new.txt", tmp_path / f"{name}-old.txt"
        R.to_edgelist(new, delimiter=delimiter)
        _line_by_line(R, old, delimiter)
        assert new.read_bytes() == old.read_bytes(), name


@pytest.mark.parametrize("path", ["numpy", "long labels"])
def test_other_paths_same_bytes(monkeypatch, path):
    """The numpy formatter (numba off), and line by line for a few very long labels."""
    rng = np.random.default_rng(0)
    labels = ["é" * int(k) for k in rng.integers(0, 30, 500)] + ["z" * 5000]
    rows = np.sort(rng.integers(0, len(labels), 20_000))
    cols = rng.integers(0, len(labels), 20_000)
    want = "".join(f"{labels[i]}|{labels[j]}\n" for i, j in zip(rows.tolist(), cols.tolist())).encode()
    fast = io.BytesIO()
    monkeypatch.setattr(convert, "_COMPILED_LINES", 1)
    write_edge_lines(fast, labels, [(rows[:7_000], cols[:7_000]), (rows[7_000:], cols[7_000:])], "|")
    if path == "numpy":
        monkeypatch.setattr(convert, "_text_kernel", lambda: None)
    else:  # make the label table look too big for its labels
        monkeypatch.setattr(convert, "_TABLE_CAP", -1)
    other = io.BytesIO()
    write_edge_lines(other, labels, [(rows, cols)], "|")
    assert fast.getvalue() == want
    assert other.getvalue() == want


def test_packed_edge_blocks_numpy_path_same_pairs(monkeypatch):
    """The set bits of a dense release listed by the compiled loop and by numpy: the same pairs."""
    R = dpgraph.release(nx.gnp_random_graph(700, 0.02, seed=5), epsilon=1.0, seed=6)
    monkeypatch.setattr(convert, "_COMPILED_BITS", 1)
    fast = [np.concatenate(x) for x in zip(*edge_blocks(R.adjacency, block_pairs=50_000))]
    monkeypatch.setattr(convert, "_edge_kernel", lambda: None)
    slow = [np.concatenate(x) for x in zip(*edge_blocks(R.adjacency, block_pairs=50_000))]
    assert fast[0].size == R.number_of_released_edges()
    assert np.array_equal(fast[0], slow[0]) and np.array_equal(fast[1], slow[1])
    assert np.all(fast[0] < fast[1])


def test_empty_release_writes_only_the_comment(tmp_path):
    R = dpgraph.release(nx.empty_graph(5), epsilon=30.0, seed=0)
    assert R.number_of_released_edges() == 0
    p = tmp_path / "e.txt"
    R.to_edgelist(p)
    assert p.read_text(encoding="utf-8").count("\n") == 1


def test_direct_writer_writes_its_blocks_in_order(monkeypatch):
    """Blocks formatted on two threads, finishing in any order, are written in row order."""
    R = dpgraph.release(nx.gnp_random_graph(400, 0.05, seed=1), epsilon=1.0, seed=2)
    monkeypatch.setattr(convert, "_COMPILED_LINES", 1)
    monkeypatch.setattr(convert, "_DIRECT_PAIRS", 1_000)  # 2 rows a block: 200 blocks
    labels = [f"v{v}" for v in R.nodes]
    fh = io.BytesIO()
    convert.write_edgelist(fh, labels, R.adjacency, " ", R.number_of_released_edges())
    want = io.BytesIO()
    write_edge_lines(want, labels, edge_blocks(R.adjacency), " ")
    assert fh.getvalue() == want.getvalue() and fh.getvalue().count(b"\n") > 1_000


def test_size_check_reads_the_degrees_only_when_the_bound_does_not_fit(tmp_path, monkeypatch):
    """The disk check first bounds the text by the longest label (no pass over the release for
    the degrees); the exact size from the degrees only decides when that bound does not fit."""
    from dpgraph.graph import _memory
    from dpgraph.graph.private import PrivateGraph

    R = dpgraph.release(nx.relabel_nodes(nx.path_graph(300), {0: "x" * 50}), epsilon=1.0, seed=3)
    calls = []
    degrees = PrivateGraph.released_degrees
    monkeypatch.setattr(PrivateGraph, "released_degrees",
                        lambda self: calls.append(1) or degrees(self))
    R.to_edgelist(tmp_path / "a.txt")
    assert calls == []
    exact = (tmp_path / "a.txt").stat().st_size
    monkeypatch.setattr(_memory, "free_disk", lambda folder: exact + 150)  # the bound is larger
    R.to_edgelist(tmp_path / "b.txt")
    assert calls == [1] and (tmp_path / "b.txt").read_bytes() == (tmp_path / "a.txt").read_bytes()
