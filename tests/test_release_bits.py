"""Seeded releases of every in-memory kind give the same bits as before the kinds table ran them.

The digests were computed from the releases below before the subsampling
channels moved into the core and the table's rows took over the samplers;
any change in the words a release draws, or the order it draws them in,
changes a digest.
"""

from __future__ import annotations

import hashlib
import warnings

import networkx as nx
import pytest

import dpgraph

V = ["+", "-", "0"]


def _signed(directed: bool = False) -> nx.Graph:
    G = nx.gnm_random_graph(60, 200, seed=3, directed=directed)
    for k, (u, v) in enumerate(G.edges()):
        G.edges[u, v]["s"] = "+-0"[k % 3]
    return G


def _digest(R) -> str:
    H = R.to_networkx()
    items = sorted(((u, v) if R.directed else (min(u, v), max(u, v)), repr(sorted(d.items())))
                   for u, v, d in H.edges(data=True))
    h = hashlib.sha256(repr(items).encode())
    if R.degree_channel is not None:
        h.update(R.degree_channel.noisy.tobytes())
    return h.hexdigest()[:16]


G = nx.gnm_random_graph(60, 200, seed=3)
D = nx.gnm_random_graph(60, 300, seed=4, directed=True)
CASES = {
    "dense": (lambda: dpgraph.release(G, 1.0, seed=7), "872cf25d2d7b94c9"),
    "dense directed": (lambda: dpgraph.release(D, 1.0, seed=7, directed=True),
                       "70e53f16efbe2c97"),
    "sparse keep": (lambda: dpgraph.release(G, 1.0, seed=7, keep=0.3), "849f8c406db34294"),
    "sparse target": (lambda: dpgraph.release(D, 1.0, seed=7, directed=True, target_edges=400),
                      "bdbc3956924ffc0b"),
    "typed": (lambda: dpgraph.release(_signed(), 1.0, seed=7, edge_attr="s", values=V),
              "16136b4946f67cc9"),
    "typed sparse": (lambda: dpgraph.release(_signed(), 1.0, seed=7, edge_attr="s", values=V,
                                             keep=0.4), "ba2a7698d6019480"),
    "typed sparse target": (lambda: dpgraph.release(_signed(True), 1.0, seed=7, directed=True,
                                                    edge_attr="s", values=V, target_edges=500),
                            "425cf403a588d977"),
    "dense degree share": (lambda: dpgraph.release(G, 1.0, seed=7, degree_share=0.2),
                           "a67ae5855bbf2a32"),
    "directed degree share": (lambda: dpgraph.release(D, 1.0, seed=7, directed=True,
                                                      degree_share=0.1), "1f159296c0cc54c2"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_seeded_release_keeps_its_bits(name):
    make, expected = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpgraph.SeededReleaseWarning)
        assert _digest(make()) == expected
