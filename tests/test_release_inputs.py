"""release() inputs beyond networkx, seeds networkx accepts, and the networkx-style surface."""

from __future__ import annotations

import random
import warnings

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import dpgraph
from dpgraph.core import Estimate, project

warnings.filterwarnings("ignore", category=dpgraph.SeededReleaseWarning)


def _graphs():
    yield nx.gnp_random_graph(70, 0.08, seed=1)
    G = nx.relabel_nodes(nx.barabasi_albert_graph(60, 2, seed=2), lambda v: f"n{v:02d}")
    G.add_nodes_from(["iso-a", "iso-b"])
    yield G


@pytest.mark.parametrize("G", list(_graphs()), ids=["ints", "strings"])
def test_every_input_gives_the_same_release(G, tmp_path):
    ref = dpgraph.release(G, 1.0, seed=9)
    words = ref.adjacency.words
    nodes = list(G.nodes())
    edges = np.array(list(G.edges()), dtype=object if isinstance(nodes[0], str) else np.int64)
    path = tmp_path / "edges.txt"
    path.write_text("# a comment\n" + "".join(f"{u} {v} 1.0\n" for u, v in G.edges()) + "\n")
    order = list(reversed(nodes))  # any order of the public vertex set
    A = nx.to_scipy_sparse_array(G, nodelist=order)
    for X, kw in [(edges, {"nodes": order}), (edges[:, ::-1], {"nodes": nodes}),
                  (np.concatenate([edges, edges]), {"nodes": nodes}), (str(path), {"nodes": nodes}),
                  (path, {"nodes": order}), (A, {"nodes": order}), (sp.csr_matrix(A), {"nodes": order})]:
        R = dpgraph.release(X, 1.0, seed=9, **kw)
        assert R.nodes == ref.nodes
        assert np.array_equal(R.adjacency.words, words)


def test_directed_inputs_and_widened_vertex_set():
    D = nx.gnp_random_graph(50, 0.1, seed=3, directed=True)
    ref = dpgraph.release(D, 2.0, seed=4, directed=True)
    E = np.array(list(D.edges()))
    R = dpgraph.release(E, 2.0, seed=4, directed=True, nodes=range(50))
    assert np.array_equal(R.adjacency.words, ref.adjacency.words)
    A = nx.to_scipy_sparse_array(D, nodelist=range(50))
    M = dpgraph.release(A, 2.0, seed=4, directed=True)
    assert np.array_equal(M.adjacency.words, ref.adjacency.words)
    # a networkx graph with extra public nodes equals the graph that has them
    G = nx.path_graph(5)
    H = nx.path_graph(5)
    H.add_nodes_from(range(5, 9))
    W = dpgraph.release(G, 1.0, seed=5, nodes=range(9))
    assert np.array_equal(W.adjacency.words, dpgraph.release(H, 1.0, seed=5).adjacency.words)


def test_vertex_set_is_never_inferred_and_errors_leak_nothing(tmp_path):
    with pytest.raises(TypeError, match="nodes="):
        dpgraph.release(np.array([[0, 1]]), 1.0, seed=0)
    path = tmp_path / "e.txt"
    path.write_text("secret-a secret-b\n")
    with pytest.raises(TypeError, match="nodes="):
        dpgraph.release(path, 1.0, seed=0)
    with pytest.raises(ValueError, match="1 edge end") as exc:
        dpgraph.release(path, 1.0, seed=0, nodes=["secret-a", "x"])
    assert "secret" not in str(exc.value)
    path.write_text("a b\nc\n")
    with pytest.raises(ValueError, match="line 2"):
        dpgraph.release(path, 1.0, seed=0, nodes=["a", "b", "c"])
    with pytest.raises(ValueError, match="self-loops"):
        dpgraph.release(np.array([[1, 1]]), 1.0, seed=0, nodes=range(3))
    with pytest.raises(ValueError, match="outside nodes="):
        dpgraph.release(nx.path_graph(4), 1.0, seed=0, nodes=range(3))
    with pytest.raises(ValueError, match="shape"):
        dpgraph.release(np.ones((3, 3)), 1.0, seed=0, nodes=range(3))
    with pytest.raises(ValueError, match="not symmetric"):
        dpgraph.release(sp.csr_array(np.triu(np.ones((3, 3)), 1)), 1.0, seed=0)
    with pytest.raises(ValueError, match="diagonal"):
        dpgraph.release(sp.eye_array(3, format="csr"), 1.0, seed=0)
    with pytest.raises(ValueError, match="3 labels for a 4 x 4"):
        dpgraph.release(sp.csr_array((4, 4)), 1.0, seed=0, nodes=range(3))
    with pytest.raises(ValueError, match="repeated"):
        dpgraph.release(np.array([[0, 1]]), 1.0, seed=0, nodes=[0, 1, 1])


@pytest.mark.parametrize("make", [
    lambda: np.random.RandomState(11),
    lambda: random.Random(11),
])
def test_seed_accepts_what_networkx_accepts(make):
    G = nx.karate_club_graph()
    a = dpgraph.release(G, 1.0, seed=make())
    b = dpgraph.release(G, 1.0, seed=make())
    assert np.array_equal(a.adjacency.words, b.adjacency.words)  # deterministic in the state
    g = make()
    first = dpgraph.release(G, 1.0, seed=g)
    second = dpgraph.release(G, 1.0, seed=g)  # the generator advanced
    assert not np.array_equal(first.adjacency.words, second.adjacency.words)
    with warnings.catch_warnings():
        warnings.simplefilter("always", dpgraph.SeededReleaseWarning)
        with pytest.warns(dpgraph.SeededReleaseWarning):
            dpgraph.release(G, 1.0, seed=make())
    for module in (np.random, random):
        assert not dpgraph.release(G, 1.0, seed=module).adjacency.words.flags.writeable


def test_cut_complement_like_networkx():
    G = nx.gnp_random_graph(40, 0.2, seed=6)
    R = dpgraph.release(G, 1.5, seed=7)
    S = [0, 3, 5, 9]
    T = [v for v in G if v not in S]
    assert R.cut(S).raw == R.cut(S, T).raw
    assert R.cuts([(S, None), (S, T)]).raw.tolist() == [R.cut(S, T).raw] * 2
    with pytest.raises(ValueError, match="complement T is empty"):
        R.cut(range(40))


def test_number_of_pairs_is_a_method_that_still_reads_as_a_number():
    R = dpgraph.release(nx.path_graph(6), 1.0, seed=0)
    assert R.number_of_pairs() == 15 and type(R.number_of_pairs()) is int
    assert R.number_of_pairs() == 15 and R.number_of_pairs() + 1 == 16
    D = dpgraph.release(nx.DiGraph([(0, 1), (2, 3)]), 1.0, seed=0, directed=True)
    assert D.number_of_pairs() == 12
    assert D.is_directed() and not R.is_directed()


@pytest.mark.parametrize("directed", [False, True])
def test_to_edgelist_round_trips(directed, tmp_path):
    G = nx.gnp_random_graph(30, 0.2, seed=8, directed=directed)
    R = dpgraph.release(G, 1.0, seed=1, directed=directed)
    path = tmp_path / "out.txt"
    R.to_edgelist(path)
    H = nx.read_edgelist(path, nodetype=int, create_using=nx.DiGraph if directed else nx.Graph)
    ref = R.to_networkx()
    key = tuple if directed else frozenset
    assert set(map(key, H.edges())) == set(map(key, ref.edges()))
    assert H.number_of_edges() == R.number_of_released_edges()
    text = path.read_text()
    assert text.startswith("# dpgraph") and f"epsilon={R.epsilon:g}" in text
    # released again from its own file, with the public vertex set: the same graph
    again = dpgraph.release(path, 1.0, seed=1, directed=directed, nodes=R.nodes)
    assert again.number_of_nodes() == R.number_of_nodes()
    with pytest.raises(FileNotFoundError, match="nodir"):
        R.to_edgelist(tmp_path / "nodir" / "x.txt")
    S = dpgraph.release(nx.relabel_nodes(nx.path_graph(3), {0: "a b"}), 1.0, seed=0)
    with pytest.raises(ValueError, match="delimiter"):
        S.to_edgelist(tmp_path / "y.txt")


def test_save_to_a_missing_folder_names_the_path(tmp_path):
    R = dpgraph.release(nx.path_graph(4), 1.0, seed=0)
    target = tmp_path / "nodir" / "x.dpg"
    with pytest.raises(FileNotFoundError) as exc:
        R.save(target)
    assert str(target) in str(exc.value) and ".dpgraph-" not in str(exc.value)


# ----------------------------------------------------------------------------- estimates
def test_value_always_lies_in_its_interval():
    rng = np.random.default_rng(0)
    for _ in range(200):
        c, s = rng.normal(0, 5), rng.exponential(2) + 1e-9
        hi = rng.integers(0, 10)
        e = Estimate(c, s, feasible_range=(0.0, float(hi)))
        lo, up = e.ci(0.9)
        assert lo <= e.value <= up
        p = project(e, 0.0, float(hi), step=1.0)
        lo, up = p.ci(0.9)
        assert 0.0 <= lo <= p.value <= up <= hi and p.proper


def test_cli_style_small_cut_reads_right():
    G = nx.gnp_random_graph(30, 0.05, seed=1)
    R = dpgraph.release(G, 0.5, seed=3)
    for k in range(10):
        S, T = [k], [k + 10, k + 11]
        e = R.cut(S, T)
        lo, hi = e.ci(0.95)
        assert lo <= e.value <= hi
        p = R.cut(S, T, proper=True)
        lo, hi = p.ci(0.95)
        assert 0 <= lo <= p.value <= hi <= 2


def test_feasible_range_is_the_known_range():
    e = dpgraph.release(nx.path_graph(5), 1.0, seed=0).cut([0, 1], [2, 3])
    assert e.feasible_range == (0.0, 4.0)
    for old in ("low", "high", "center"):
        assert not hasattr(e, old)
    with pytest.raises(TypeError):
        Estimate(1.0, 1.0, 0.0, 2.0)  # the range is keyword-only: feasible_range=(0, 2)
