"""The input table: one place decides what an input is and its n; one edge-list reader; one
node-list grammar; every consumer (release, blockwise, memory check, command line) uses them."""

from __future__ import annotations

import gzip
import os
import signal
import warnings
from contextlib import contextmanager

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import dpgraph
from dpgraph import cli
from dpgraph.cli_types import parse_node_list, select_nodes
from dpgraph.exceptions import DroppedAttributesWarning
from dpgraph.graph import inputs
from dpgraph.graph.blockwise import edge_keys
from dpgraph.graph.edgelist import read_table_chunks
from dpgraph.graph.inputs import INPUT_KINDS, input_kind, public_n, read_input

warnings.filterwarnings("ignore", category=dpgraph.SeededReleaseWarning)


@contextmanager
def deadline(seconds: int):
    """Fail (instead of hanging) when the body runs longer than ``seconds``."""
    def expired(signum, frame):
        raise TimeoutError(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _graph():
    G = nx.gnp_random_graph(40, 0.15, seed=5)
    G.add_node(40)  # isolated: only the vertex set knows it
    return G


def _words(R):
    return R.adjacency.words


# --------------------------------------------------------------------------- the table
def test_every_kind_of_the_table_gives_the_same_release(tmp_path):
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    G = _graph()
    E = np.array(list(G.edges()))
    path = tmp_path / "g.txt.gz"
    path.write_bytes(gzip.compress("".join(f"{u}\t{v}\r\n" for u, v in E).encode()))
    frame = pd.DataFrame({"target": E[:, 1], "source": E[:, 0]})  # picked by name
    kinds = {
        "networkx": (G, None),
        "matrix": (sp.csr_array(nx.to_scipy_sparse_array(G, nodelist=range(41))), None),
        "file": (str(path), 41),
        "pandas": (frame, range(41)),
        "pyarrow": (pa.table({"u": E[:, 0], "v": E[:, 1]}), 41),  # the first two columns
        "array": (E, 41),
    }
    ref = _words(dpgraph.release(G, 1.0, seed=3))
    seen = set()
    for name, (data, nodes) in kinds.items():
        seen.add(input_kind(data).name)
        assert public_n(data, nodes) == 41, name
        R = dpgraph.release(data, 1.0, seed=3, nodes=nodes)
        assert R.nodes == tuple(range(41)), name
        assert np.array_equal(_words(R), ref), name
    assert seen == {k.name for k in INPUT_KINDS}  # every row of the table is exercised
    # the constant-time mode calibrates on a public input of the same kind (the table's
    # ``like`` column; a table of edges is calibrated on an edge array)
    from dpgraph.graph.timing import calibration_input

    for name, (data, nodes) in kinds.items():
        H, v = calibration_input(data, nodes, False, 30, str(tmp_path))
        want = input_kind(E if name in ("pandas", "pyarrow") else data)
        assert input_kind(H) is want, name
        enc = dpgraph.graph.read_input(H, nodes=v)
        assert enc.index.nodes == tuple(range(41)) and enc.rows.size == 30, name


def test_public_n_reads_nothing(tmp_path):
    missing = tmp_path / "never-created.txt"
    assert public_n(str(missing), nodes=10**11) == 10**11  # the file is not opened
    assert public_n(np.zeros((0, 2)), nodes=range(5)) == 5
    assert public_n(nx.path_graph(4), nodes=None) == 4
    assert public_n(sp.csr_array((7, 7)), None) == 7
    assert public_n(str(missing), nodes=iter([1, 2])) is None  # unknown without reading it
    with pytest.raises(TypeError, match="one of: a networkx"):
        input_kind({1: 2})


def test_a_huge_declared_vertex_set_is_refused_from_its_count(tmp_path):
    path = tmp_path / "g.txt"
    path.write_text("0 1\n")
    with pytest.raises(MemoryError, match="100,000,000,000 nodes"):
        dpgraph.release(str(path), 1.0, nodes=10**11)
    with pytest.raises(MemoryError):
        dpgraph.release(str(path), 1.0, nodes=range(10**11), keep=0.01)


def test_nodes_may_be_n_or_labels():
    E = np.array([[0, 1], [1, 2]])
    assert dpgraph.release(E, 1.0, seed=0, nodes=4).nodes == (0, 1, 2, 3)
    assert dpgraph.release(E, 1.0, seed=0, nodes=np.arange(4)).nodes == (0, 1, 2, 3)
    for bad, exc in ((1, ValueError), (True, TypeError), ("abc", TypeError), ([0, 0, 1], ValueError)):
        with pytest.raises(exc, match="nodes"):
            dpgraph.release(E, 1.0, seed=0, nodes=bad)


def test_dataframe_columns_are_documented_choices():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"a": [0, 1], "b": [1, 2]})
    enc = read_input(df, nodes=3)
    assert (enc.rows.tolist(), enc.cols.tolist()) == ([0, 1], [1, 2])
    # source/target by name, wherever they are; string labels; missing labels refused
    df = pd.DataFrame({"w": [0.5, 0.7], "target": ["y", "z"], "source": ["x", "y"]})
    with pytest.warns(DroppedAttributesWarning):
        enc = read_input(df, nodes=["x", "y", "z"])
    assert enc.rows.tolist() == [0, 1] and enc.cols.tolist() == [1, 2]
    with pytest.raises(ValueError, match="1 edge end"), pytest.warns(DroppedAttributesWarning):
        read_input(df, nodes=["x", "q", "y"])
    with pytest.raises(ValueError, match="two columns"):
        read_input(pd.DataFrame({"only": [0, 1]}), nodes=2)
    with pytest.raises(TypeError, match="nodes="):
        read_input(pd.DataFrame({"a": [0], "b": [1]}))


def test_a_polars_dataframe_is_read_like_a_pandas_one():
    pl = pytest.importorskip("polars")
    G = _graph()
    E = np.array(list(G.edges()))
    ref = _words(dpgraph.release(G, 1.0, seed=3))
    frame = pl.DataFrame({"target": E[:, 1], "source": E[:, 0]})  # picked by name
    assert input_kind(frame).name == "a DataFrame of edges (pandas, polars) or a pyarrow Table"
    assert public_n(frame, 41) == 41
    assert np.array_equal(_words(dpgraph.release(frame, 1.0, seed=3, nodes=41)), ref)
    first_two = pl.DataFrame({"u": E[:, 0], "v": E[:, 1]})
    assert np.array_equal(_words(dpgraph.release(first_two, 1.0, seed=3, nodes=41)), ref)
    # string labels, an extra column dropped with a warning, a missing label refused
    df = pl.DataFrame({"w": [0.5, 0.7], "target": ["y", "z"], "source": ["x", "y"]})
    with pytest.warns(DroppedAttributesWarning):
        enc = read_input(df, nodes=["x", "y", "z"])
    assert enc.rows.tolist() == [0, 1] and enc.cols.tolist() == [1, 2]
    with pytest.raises(ValueError, match="1 edge end"), pytest.warns(DroppedAttributesWarning):
        read_input(df, nodes=["x", "q", "y"])


def test_a_table_without_pandas_says_how_to_install_it(monkeypatch):
    class Interchange:  # speaks only the dataframe interchange protocol
        def __dataframe__(self, nan_as_null=False, allow_copy=True):
            raise AssertionError("not reached")

    import builtins

    real_import = builtins.__import__

    def no_pandas(name, *args, **kwargs):
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError("No module named 'pandas'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pandas)
    with pytest.raises(ImportError, match=r"dpgraph\[dataframe\]"):
        dpgraph.release(Interchange(), 1.0, nodes=3)


# --------------------------------------------------------------------------- dropped attributes
SECRET = 987654.125


def _dropped(make):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        make()
    found = [w for w in caught if issubclass(w.category, DroppedAttributesWarning)]
    assert len(found) == 1  # once per call, not per edge
    text = str(found[0].message)
    assert "987654" not in text and "secret_weight" not in text
    assert "edge_attr=" in text  # says typed releases exist
    assert found[0].filename == __file__  # points at the caller's line
    return text


def test_dropped_edge_attributes_warn_once_without_values(tmp_path):
    G = _graph()
    nx.set_edge_attributes(G, SECRET, "secret_weight")
    _dropped(lambda: dpgraph.release(G, 1.0, seed=0))
    A = nx.to_scipy_sparse_array(G, weight="secret_weight")
    _dropped(lambda: dpgraph.release(A, 1.0, seed=0))
    path = tmp_path / "w.txt"
    path.write_text("".join(f"{u} {v} {SECRET}\n" for u, v in G.edges()))
    _dropped(lambda: dpgraph.release(str(path), 1.0, seed=0, nodes=41))
    _dropped(lambda: edge_keys(str(path), nodes=41))
    with warnings.catch_warnings():  # no attributes: no warning
        warnings.simplefilter("error", DroppedAttributesWarning)
        dpgraph.release(_graph(), 1.0, seed=0)
        dpgraph.release(nx.to_scipy_sparse_array(_graph()), 1.0, seed=0)


# --------------------------------------------------------------------------- the one reader
def test_one_reader_grammar(tmp_path):
    text = "% header\n# comment\n0 1 0.5 t\r\n\n1\t2 # inline\n  2 3\n3 0"  # no final newline
    plain = tmp_path / "a.txt"
    plain.write_text(text)
    packed = tmp_path / "a.bin"  # gzip recognized by its bytes, not its name
    packed.write_bytes(gzip.compress(text.encode()))
    for p in (plain, packed):
        for chunk_bytes in (1024, 1 << 20):
            chunks = list(read_table_chunks(p, chunk_bytes=chunk_bytes))
            u, v, lines = ([x for c in chunks for x in part(c).tolist()] for part in
                           (lambda c: c.columns[0], lambda c: c.columns[1], lambda c: c.lines))
            assert (u, v, lines) == ([b"0", b"1", b"2", b"3"], [b"1", b"2", b"3", b"0"],
                                     [3, 5, 6, 7])
            assert chunks[0].extra is True  # the weight and tag columns


def test_one_reader_reads_comma_separated_tables(tmp_path):
    """The dataset loaders' CSV files (Bitcoin Alpha: source,target,rating,time) go through
    the same reader, plain or gzip, with line numbers in its errors."""
    text = "7,9,-3,1289\n9,7,10,1290\r\n\n# note\n"
    for p, data in ((tmp_path / "t.csv", text.encode()), (tmp_path / "t.gz", gzip.compress(
            text.encode()))):
        p.write_bytes(data)
        (chunk,) = read_table_chunks(p, columns=4, exact=True, delimiter=",")
        assert [c.tolist() for c in chunk.columns] == [[b"7", b"9"], [b"9", b"7"],
                                                       [b"-3", b"10"], [b"1289", b"1290"]]
        assert chunk.lines.tolist() == [1, 2]
    bad = tmp_path / "bad.csv"
    bad.write_text("1,2,3,4\n5,,6,7\n")
    with pytest.raises(ValueError, match=r"bad.csv, line 2: expected exactly 4 comma-separated"):
        list(read_table_chunks(bad, columns=4, exact=True, delimiter=","))
    with pytest.raises(ValueError, match="delimiter"):
        list(read_table_chunks(bad, delimiter="ab"))


def test_streaming_in_small_chunks_gives_the_same_edges(tmp_path):
    G = nx.gnm_random_graph(3000, 20000, seed=1)
    path = tmp_path / "big.txt"
    path.write_text("".join(f"{u} {v}\n" for u, v in G.edges()))
    small = edge_keys(str(path), nodes=3000, chunk_bytes=4096)
    assert np.array_equal(small.keys, edge_keys(G).keys)
    lines = np.concatenate([c.lines for c in read_table_chunks(path, chunk_bytes=4096)])
    assert np.array_equal(lines, np.arange(1, G.number_of_edges() + 1))


def test_fsspec_urls_read_through_the_same_reader():
    fsspec = pytest.importorskip("fsspec")
    with fsspec.open("memory://dpgraph-test/g.txt", "wb") as fh:
        fh.write(gzip.compress(b"0 1\n1 2\n"))
    e = edge_keys("memory://dpgraph-test/g.txt", nodes=3)
    assert e.keys.tolist() == [1, 5]
    R = dpgraph.release("memory://dpgraph-test/g.txt", 1.0, seed=0, nodes=3)
    assert R.number_of_nodes() == 3


def test_the_dataset_loader_reads_through_the_one_reader(tmp_path, monkeypatch):
    from dpgraph.datasets import loaders

    calls = []
    real = loaders.read_table_chunks

    def spy(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(loaders, "read_table_chunks", spy)
    p = tmp_path / "e.txt"
    p.write_text("0 1 7\n1 2 9\n")
    assert dpgraph.datasets.snap_edgelist(p).number_of_edges() == 2
    assert calls == [p]


# --------------------------------------------------------------------------- node lists
def test_node_list_grammar_counts_before_building():
    assert list(parse_node_list("0-2,7,x", "--S")) == [0, 1, 2, 7, "x"]
    assert list(parse_node_list("5", "--nodes", count=True)) == [0, 1, 2, 3, 4]
    assert list(parse_node_list("5", "--S")) == [5]
    with deadline(5):
        big = parse_node_list("100000000000", "--nodes", count=True)
        assert len(big) == 10**11 and big[-1] == 10**11 - 1
        assert len(parse_node_list("0-3000000000,7", "--S")) == 3_000_000_002
    with pytest.raises(ValueError, match="empty"):
        parse_node_list("5-1", "--S")


def test_a_range_longer_than_the_release_is_refused_at_once():
    with deadline(5), pytest.raises(ValueError, match="3,000,000,001 labels but the release has 10"):
        select_nodes("0-3000000000", list(range(10)), "--S")
    assert select_nodes("1-2,a", [1, 2, "a"], "--S") == [1, 2, "a"]


def test_cli_release_calls_dpgraph_release_with_the_path(tmp_path, monkeypatch, capsys):
    path = tmp_path / "g.txt"
    path.write_text("0 1\n1 2\n")
    seen = {}
    real = dpgraph.release
    assert dpgraph.graph.release is real  # the command line takes it from the graph face

    def spy(G, epsilon, seed=None, **kwargs):
        seen.update(G=G, nodes=kwargs["nodes"])
        return real(G, epsilon, seed=seed, **kwargs)

    monkeypatch.setattr(dpgraph.graph, "release", spy)
    out = tmp_path / "r.dpg"
    assert cli.main(["release", str(path), "-e", "1", "-o", str(out), "--nodes", "0-4"]) == 0
    assert seen["G"] == str(path) and len(seen["nodes"]) == 5
    assert dpgraph.load(out).nodes == (0, 1, 2, 3, 4)


def test_cli_huge_vertex_set_refused_before_building(tmp_path, capsys):
    path = tmp_path / "g.txt"
    path.write_text("0 1\n")
    with deadline(20):
        code = cli.main(["release", str(path), "-e", "1", "-o", str(tmp_path / "r.dpg"),
                         "--nodes", "100000000000"])
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("dpgraph: error:") and "memory" in err and err.count("\n") == 1


def test_cli_cut_range_answers_at_once(tmp_path, capsys):
    out = tmp_path / "r.dpg"
    dpgraph.release(nx.path_graph(10), 1.0, seed=0).save(out)
    with deadline(10):
        code = cli.main(["cut", str(out), "--S", "0-3000000000"])
    assert code == 2 and "the release has 10 nodes" in capsys.readouterr().err


def test_module_names_say_one_thing():
    # the table (inputs), the blockwise keys (blockwise.edges), the reader (edgelist);
    # encode_graph encodes a networkx graph, read_input reads any input of the table
    assert not hasattr(inputs, "encode_input")
    assert "encode_graph" not in inputs.__all__ and "read_input" in inputs.__all__
    import dpgraph.graph.blockwise as bw

    assert not os.path.exists(os.path.join(os.path.dirname(bw.__file__), "input.py"))
