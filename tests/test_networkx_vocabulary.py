"""networkx's names on a release mean what they mean in networkx, or are refused.

Each check runs the same expression on the input graph G and on its release R:
the vertex set is public, so ``R.nodes``, ``len(R)``, ``v in R`` and ``iter(R)``
must agree with G exactly; counts under networkx's names are debiased
estimates (within 4 exact standard deviations of G's); ``R[v]`` (the
neighbours) is refused with the alternatives named; an unknown node raises
an error naming it.
"""

from __future__ import annotations

import inspect
import warnings

import networkx as nx
import numpy as np
import pytest

import dpgraph


def _release(G, eps=2.0, seed=3, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # seeded on purpose: a reproducible test
        return dpgraph.release(G, epsilon=eps, seed=seed, **kw)


@pytest.fixture(scope="module", params=["int", "str"])
def pair(request):
    G = nx.gnp_random_graph(50, 0.15, seed=2)
    if request.param == "str":
        G = nx.relabel_nodes(G, {v: f"n{v:02d}" for v in G})
    return G, _release(G)


def test_nodes_is_a_node_view(pair):
    G, R = pair
    assert list(R.nodes) == sorted(G.nodes) and list(R.nodes()) == list(R.nodes)
    assert R.nodes() is not None and len(R.nodes) == len(G.nodes) == R.number_of_nodes()
    for v in G.nodes:
        assert v in R.nodes and (v in R.nodes) == (v in G.nodes)
    assert "absent" not in R.nodes and 10**6 not in R.nodes and [1] not in R.nodes
    assert R.node_index.nodes[0] == sorted(G.nodes)[0]  # positions: canonical order
    assert R.nodes == tuple(sorted(G.nodes)) and R.nodes == _release(G, seed=4).nodes
    assert set(R.nodes) == set(G.nodes)
    with pytest.raises(TypeError, match="no node attributes"):
        R.nodes(data=True)


def test_nodes_are_indexed_by_label_as_in_networkx():
    """G.nodes[v] is v's attribute dict: a release keeps none, so an empty read-only one."""
    G = nx.relabel_nodes(nx.path_graph(41), {i: i + 10 for i in range(41)})  # labels 10..50
    R = _release(G)
    for v in (10, 30, 50):
        assert R.nodes[v] == G.nodes[v] == {} and R.nodes[v].get("club") is None
    with pytest.raises(TypeError):
        R.nodes[10]["club"] = "Mr. Hi"  # read-only: nothing to set
    for unknown in (0, 9, 51, "10"):
        with pytest.raises(KeyError, match=repr(unknown)):
            R.nodes[unknown]
    with pytest.raises(TypeError, match="slicing"):
        R.nodes[0:3]
    assert dict(R.nodes.items()) == dict(G.nodes.items())
    assert R.nodes & {10, 11, 99} == G.nodes & {10, 11, 99} == {10, 11}


def test_degree_is_a_view_as_in_networkx():
    """networkx's G.degree is callable, subscriptable and iterable: so is R.degree."""
    G = nx.relabel_nodes(nx.star_graph(40), {i: i + 10 for i in range(41)})
    R = _release(G)
    d = R.degree[10]  # the hub, by label
    assert abs(d - G.degree[10]) <= 4 * d.std + 1 and float(d) == float(R.degree(10))
    assert [v for v, _ in R.degree] == list(G.nodes) == [v for v, _ in G.degree]
    assert len(R.degree) == len(G.degree) and 10 in R.degree and 5 not in R.degree
    with pytest.raises(KeyError, match="5"):
        R.degree[5]
    raw = R.degree(10, proper=False)  # the call keeps its signature
    assert raw.std == d.std and "proper" in str(inspect.signature(R.degree))
    assert dict(R.degree([10, 11])).keys() == {10, 11}
    assert repr(R.degree) == "DegreeView(41 nodes)"  # a summary: no estimate in the repr


def test_a_release_delegates_its_node_protocol_to_its_view(pair):
    _, R = pair
    assert len(R) == len(R.nodes) and list(R) == list(R.nodes)
    assert all((v in R) == (v in R.nodes) for v in [*list(R.nodes)[:3], 99, "x", [1]])


def test_graph_protocol_len_contains_iter(pair):
    G, R = pair
    assert len(R) == len(G)
    assert list(R) == list(R.nodes) and set(R) == set(G)
    for v in list(G)[:5]:
        assert v in R
    assert (99 in R) == (99 in G) and ({"unhashable"} in R) is False  # like networkx


def test_neighbours_are_refused_with_the_alternatives(pair):
    _, R = pair
    v = R.node_index.nodes[0]
    with pytest.raises(TypeError, match=r"R\.degree\(v\).*R\.to_networkx\(\)\[v\]"):
        R[v]
    H = R.to_networkx()  # the named alternative works and is the raw released graph
    assert set(H[v]) <= set(R.nodes) and H.number_of_edges() == R.number_of_released_edges()


def test_counts_under_networkx_names_are_debiased(pair):
    G, R = pair
    m = R.number_of_edges()
    assert abs(m - G.number_of_edges()) <= 4 * m.std + 1
    assert R.number_of_released_edges() != int(m)
    for v, d in R.degree(list(G)[:4]):  # (node, estimate) pairs, like G.degree(nbunch)
        assert abs(d - G.degree(v)) <= 4 * d.std + 1
    assert set(dict(R.degree())) == set(G)


@pytest.mark.parametrize("ask", [
    lambda R, x: R.degree(x),
    lambda R, x: R.degree([R.node_index.nodes[0], x]),
    lambda R, x: R.cut([x], [R.node_index.nodes[0]]),
    lambda R, x: R.cut([R.node_index.nodes[0]], [x]),
    lambda R, x: R.cut([R.node_index.nodes[0], x]),
    lambda R, x: R.volume([x]),
    lambda R, x: R.density_between([x], [R.node_index.nodes[1]]),
], ids=["degree", "degree-nbunch", "cut-S", "cut-T", "cut-complement", "volume", "density"])
def test_an_unknown_node_is_named(pair, ask):
    _, R = pair
    unknown = 99 if isinstance(R.node_index.nodes[0], int) else "n99"
    with pytest.raises(ValueError, match=repr(unknown)):
        ask(R, unknown)


def test_many_unknown_nodes_are_counted_and_the_first_named():
    R = _release(nx.path_graph(10))
    with pytest.raises(ValueError, match=r"7 node\(s\).*: 10, 11, 12, 13, 14, \.\.\.") as info:
        R.cut(range(5, 17))
    assert "15" not in str(info.value)  # a summary, not the whole list


def test_large_integer_vertex_sets_need_no_dict():
    # a sparse release over 100,000 even labels: membership by binary search
    R = _release(np.array([[0, 2], [4, 6]]), eps=1.0, nodes=range(0, 200_000, 2),
                 target_edges=1000)
    assert len(R) == 100_000 and 4 in R and 5 not in R and 4.0 in R and np.int64(6) in R
    assert "4" not in R and 200_000 not in R
    assert repr(R.nodes) == "NodeView(100000 nodes: 0, 2, 4, 6, 8, ..., 199998)"


def test_community_labels_cover_every_node_by_default():
    G = nx.relabel_nodes(nx.planted_partition_graph(2, 40, 0.5, 0.01, seed=1),
                         {v: f"v{v:03d}" for v in range(80)})
    R = _release(G, eps=3.0)
    comm = R.communities(seed=0)
    labels = comm.labels()  # like .partition, every node: in R.nodes order
    assert labels.shape == (len(R),) and labels.dtype == np.int64
    assert np.array_equal(labels, comm.labels(R.nodes))
    for v, c in zip(R.nodes, labels.tolist()):
        assert v in comm.partition[c]
