"""Every memory refusal of a release is decided from public quantities, before the charge.

A refusal is an output: if one graph were released and its neighbour (one
more edge) refused with the same public arguments and the same free memory,
the refusal would tell them apart, outside the DP guarantee.  These tests fix
the free memory (``_memory.available_memory``) and find, by bisection, the
least free memory at which a release goes through: it must be the same for a
graph and its neighbour, for every kind of release.  And a release refused
for memory must not have been charged to its ledger.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

import dpgraph
from dpgraph.graph import _memory
from dpgraph.graph.blockwise import release_blockwise

N_NODES = 300


@pytest.fixture
def free_memory(monkeypatch):
    """Set the memory the checks see; every size counts (no small-size shortcut)."""
    box = {"free": 1 << 50}
    monkeypatch.setattr(_memory, "available_memory", lambda: box["free"])
    monkeypatch.setattr(_memory, "SMALL", 0)
    return box


def _neighbours(typed: bool = False) -> tuple[nx.Graph, nx.Graph]:
    G = nx.gnm_random_graph(N_NODES, 900, seed=3)
    if typed:
        for k, (u, v) in enumerate(G.edges()):
            G.edges[u, v]["sign"] = "+-"[k % 2]
    H = G.copy()
    u, v = next((u, v) for u in range(N_NODES) for v in range(u + 1, N_NODES)
                if not G.has_edge(u, v))
    H.add_edge(u, v, sign="+")
    assert H.number_of_edges() == G.number_of_edges() + 1
    return G, H


def _threshold(free_memory, release) -> int:
    """The least free memory at which ``release()`` is not refused for memory (bisection)."""
    lo, hi = 0, 1 << 40  # refused at lo (nothing is free), released at hi
    free_memory["free"] = lo
    with pytest.raises(MemoryError):
        release()
    while hi - lo > 1:
        mid = (lo + hi) // 2
        free_memory["free"] = mid
        try:
            release()
        except MemoryError:
            lo = mid
        else:
            hi = mid
    return hi


def _kinds(tmp_path):
    store = tmp_path / "store"
    return {
        "dense": (False, lambda G: dpgraph.release(G, 1.0, seed=0)),
        "sparse": (False, lambda G: dpgraph.release(G, 1.0, seed=0, keep=0.5)),
        "sparse, declared bound": (False, lambda G: dpgraph.release(G, 1.0, seed=0, keep=0.5,
                                                                     edge_bound=900)),
        "typed": (True, lambda G: dpgraph.release(G, 1.0, seed=0, edge_attr="sign",
                                                  values=["+", "-"])),
        "typed sparse": (True, lambda G: dpgraph.release(G, 1.0, seed=0, edge_attr="sign",
                                                         values=["+", "-"], keep=0.5)),
        "blockwise": (False, lambda G: release_blockwise(G, 1.0, store, tile=(64, 128),
                                                         overwrite=True)),
    }


@pytest.mark.parametrize("kind", ["dense", "sparse", "sparse, declared bound", "typed",
                                  "typed sparse", "blockwise"])
def test_a_graph_and_its_neighbour_are_refused_alike(free_memory, tmp_path, kind):
    typed, release = _kinds(tmp_path)[kind]
    G, H = _neighbours(typed)
    at_g = _threshold(free_memory, lambda: release(G))
    at_h = _threshold(free_memory, lambda: release(H))
    assert at_g == at_h, f"{kind}: {at_g} bytes release G, {at_h} its neighbour"
    free_memory["free"] = at_g  # exactly at the threshold: both released
    release(G), release(H)
    free_memory["free"] = at_g - 1  # one byte less: both refused
    for graph in (G, H):
        with pytest.raises(MemoryError):
            release(graph)


@pytest.mark.parametrize("kind", ["dense", "sparse", "typed", "typed sparse"])
def test_a_memory_refusal_is_never_charged(free_memory, tmp_path, kind):
    typed, _ = _kinds(tmp_path)[kind]
    G, _ = _neighbours(typed)
    extra = {"dense": {}, "sparse": {"keep": 0.5}, "typed": {"edge_attr": "sign",
                                                             "values": ["+", "-"]},
             "typed sparse": {"edge_attr": "sign", "values": ["+", "-"], "keep": 0.5}}[kind]

    def release(ledger=None):
        return dpgraph.release(G, 1.0, seed=0, ledger=ledger, **extra)

    at = _threshold(free_memory, release)
    for free in (at - 1, at // 2, 1):  # refused: nothing may have been charged
        free_memory["free"] = free
        ledger = dpgraph.PrivacyLedger(10.0)
        with pytest.raises(MemoryError):
            release(ledger)
        assert ledger.spent == 0.0, f"{kind}: charged {ledger.spent} for a refused release"
    ledger = dpgraph.PrivacyLedger(10.0)
    free_memory["free"] = at
    release(ledger)
    assert ledger.spent == 1.0


@pytest.mark.parametrize("keep", [1.0, 0.1])
def test_the_sparse_size_check_bounds_the_samplers_peak(keep):
    """What the sampler allocates after the charge stays within what was checked before it."""
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).parents[1] / "benchmarks" / "bench_release_memory.py"
    spec = importlib.util.spec_from_file_location("bench_release_memory", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    peak, estimate, _ = bench.measure(4_000, 10_000, keep)
    assert peak <= estimate, f"the sampler's peak {peak:,} exceeds the check's {estimate:,} bytes"


def test_the_declared_bound_sizes_a_sparse_release_and_is_not_a_refusal(free_memory):
    """A declared bound shrinks the size check; a graph beyond it is still released."""
    G, _ = _neighbours()
    worst = _threshold(free_memory, lambda: dpgraph.release(G, 1.0, seed=0, keep=0.5))
    bounded = _threshold(free_memory, lambda: dpgraph.release(G, 1.0, seed=0, keep=0.5,
                                                              edge_bound=10))
    assert bounded < worst
    free_memory["free"] = 1 << 50
    R = dpgraph.release(G, 1.0, seed=0, keep=0.5, edge_bound=10)  # 900 edges > 10: released
    assert R.number_of_nodes() == N_NODES
    assert np.isfinite(R.number_of_edges().value)
