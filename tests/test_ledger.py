"""The privacy budget ledger: composition, refusal before sampling, files."""

from __future__ import annotations

import json
import os
import stat
import warnings

import networkx as nx
import numpy as np
import pytest

import dpgraph
from dpgraph.core.randomness import RandomSource, SecureRandom
from dpgraph.exceptions import BudgetExceededError, LedgerFileError, SeededReleaseWarning
from dpgraph.ledger import PrivacyLedger

class CountingSource(RandomSource):
    """A secure stream that counts the words drawn from it."""

    secure = True

    def __init__(self) -> None:
        self.inner = SecureRandom(key=bytes(16))
        self.drawn = 0

    def uint64(self, n):
        self.drawn += int(n)
        return self.inner.uint64(n)


def graph():
    G = nx.gnp_random_graph(12, 0.3, seed=1)
    return G


# ---- composition ---------------------------------------------------------------
def test_releases_of_one_graph_compose_and_the_excess_is_refused():
    L = PrivacyLedger(total_epsilon=2.0)
    G = graph()
    L.charge(1.0, G)
    L.charge(0.5, G)
    assert L.spent(G) == 1.5 and L.remaining(G) == 0.5
    with pytest.raises(BudgetExceededError, match="total_epsilon=2") as info:
        L.charge(0.6, G)
    assert "epsilon=0.6" in str(info.value) and "remaining 0.5" in str(info.value)
    assert L.spent(G) == 1.5  # a refused charge records nothing
    L.charge(0.5, G)  # exactly the rest is fine
    assert L.remaining(G) == 0.0
    assert len(L.entries) == 3


def test_decimal_budget_splits_compose_exactly():
    L = PrivacyLedger(total_epsilon=0.3)
    G = graph()
    for _ in range(3):
        L.charge(0.1, G)  # 0.1 + 0.1 + 0.1 != 0.3 in binary floating point
    with pytest.raises(BudgetExceededError):
        L.charge(1e-9, G)


def test_edge_edits_do_not_reset_the_budget():
    """A neighbouring graph (one pair changed) shares every privacy unit."""
    L = PrivacyLedger(total_epsilon=1.0)
    G = graph()
    H = G.copy()
    H.add_edge(0, 11) if not G.has_edge(0, 11) else H.remove_edge(0, 11)
    L.charge(1.0, G)
    with pytest.raises(BudgetExceededError):
        L.charge(0.5, H)
    # same vertex set given as a DiGraph or with other insertion order: same budget
    D = nx.DiGraph()
    D.add_nodes_from(sorted(G.nodes(), reverse=True))
    assert L.fingerprint(D) == L.fingerprint(G)


def test_equal_labels_give_one_fingerprint_and_other_vertex_sets_another():
    L = PrivacyLedger(total_epsilon=1.0)
    a = nx.Graph()
    a.add_nodes_from([1, 2, 3])
    b = nx.Graph()
    b.add_nodes_from([np.int64(1), 2.0, 3])
    c = nx.Graph()
    c.add_nodes_from([1, 2, 4])
    d = nx.Graph()
    d.add_nodes_from(["1", "2", "3"])
    assert L.fingerprint(a) == L.fingerprint(b)
    assert len({L.fingerprint(x) for x in (a, c, d)}) == 3
    L.charge(1.0, a)
    L.charge(1.0, c)  # a different vertex set has its own budget
    # another ledger has another key: fingerprints do not link ledgers
    assert PrivacyLedger(total_epsilon=1.0).fingerprint(a) != L.fingerprint(a)


def test_ledger_scope_shares_one_budget_across_vertex_sets():
    L = PrivacyLedger(total_epsilon=1.0, scope="ledger")
    L.charge(0.7, nx.path_graph(4))
    with pytest.raises(BudgetExceededError):
        L.charge(0.7, nx.path_graph(3))  # a subgraph shares pairs


@pytest.mark.parametrize(
    "kwargs, exc, name",
    [
        ({"total_epsilon": 0}, ValueError, "total_epsilon"),
        ({"total_epsilon": float("nan")}, ValueError, "total_epsilon"),
        ({"total_epsilon": "1"}, TypeError, "total_epsilon"),
        ({"total_epsilon": True}, TypeError, "total_epsilon"),
        ({"total_epsilon": 1.0, "scope": "pair"}, ValueError, "scope"),
    ],
)
def test_bad_ledger_arguments(kwargs, exc, name):
    with pytest.raises(exc, match=name):
        PrivacyLedger(**kwargs)


def test_bad_charge_arguments():
    L = PrivacyLedger(total_epsilon=1.0)
    with pytest.raises(ValueError, match="epsilon"):
        L.charge(-1, graph())
    with pytest.raises(TypeError, match="graph"):
        L.charge(0.5, [1, 2, 3])
    with pytest.raises(TypeError, match="label"):
        L.charge(0.5, graph(), label=3)
    assert not L.entries


# ---- files ---------------------------------------------------------------------
def test_save_load_round_trip_and_autosave(tmp_path):
    path = tmp_path / "budget.json"
    L = PrivacyLedger(total_epsilon=3.0)
    G = graph()
    L.charge(1.0, G, label="first")
    L.save(path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600  # the file holds the key
    M = PrivacyLedger.load(path)
    assert M.entries == L.entries and M.total_epsilon == 3.0
    assert M.fingerprint(G) == L.fingerprint(G)
    M.charge(1.5, G)  # autosaved before returning
    N = PrivacyLedger.load(path)
    assert N.spent(G) == 2.5
    with pytest.raises(BudgetExceededError):
        N.charge(1.0, G)


def test_file_holds_nothing_computed_from_edges(tmp_path):
    """Two ledgers with the same key, charged with graphs that differ in edges
    only, write byte-identical files (timestamps aside)."""
    G = graph()
    H = nx.empty_graph(G.nodes())
    files = []
    for k, g in enumerate((G, H)):
        L = PrivacyLedger(total_epsilon=1.0)
        L._key = bytes(32)
        L.charge(0.5, g)
        doc = L.to_dict()
        for e in doc["entries"]:
            e["time"] = None
        files.append(json.dumps(doc))
    assert files[0] == files[1]


@pytest.mark.parametrize(
    "content, match",
    [
        (None, "no such ledger"),
        (b"", "not valid JSON"),
        (b"\x80\x81garbage", "not valid JSON"),
        (b'{"format": "something-else"}', "format"),
        (b"[1, 2]", "format"),
        (b'{"format": "dpgraph-privacy-ledger", "version": 99}', "version"),
        (b"NaN", "not valid JSON"),
    ],
)
def test_load_refuses_bad_files(tmp_path, content, match):
    path = tmp_path / "ledger.json"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(LedgerFileError, match=match) as info:
        PrivacyLedger.load(path)
    assert "path" in str(info.value)


def test_load_refuses_tampered_fields(tmp_path):
    L = PrivacyLedger(total_epsilon=1.0)
    L.charge(0.5, graph())
    good = L.to_dict()
    variants = []
    for field, value in [("total_epsilon", -1), ("total_epsilon", "1"), ("key", "zz"),
                         ("scope", "x"), ("entries", {}), ("extra", 1)]:
        d = json.loads(json.dumps(good))
        d[field] = value
        variants.append(d)
    d = json.loads(json.dumps(good))
    d["entries"][0]["epsilon"] = 0
    variants.append(d)
    d = json.loads(json.dumps(good))
    d["entries"][0]["dataset"] = "not-hex"
    variants.append(d)
    for k, d in enumerate(variants):
        path = tmp_path / f"v{k}.json"
        path.write_text(json.dumps(d))
        with pytest.raises(LedgerFileError, match="path"):
            PrivacyLedger.load(path)
    with pytest.raises(LedgerFileError, match="directory"):
        PrivacyLedger.load(tmp_path)
    with pytest.raises(TypeError, match="path"):
        PrivacyLedger.load(3)


def test_failed_autosave_refuses_the_charge(tmp_path):
    L = PrivacyLedger(total_epsilon=2.0)
    L.save(tmp_path / "l.json")
    L.path = tmp_path / "missing-dir" / "l.json"
    with pytest.raises(OSError):
        L.charge(0.5, graph())
    assert not L.entries


# ---- integration with dpgraph.release (needs the api.py snippet) ---------------------
def test_release_charges_the_ledger_and_refuses_before_sampling():
    L = PrivacyLedger(total_epsilon=1.5)
    G = graph()
    src = CountingSource()
    dpgraph.release(G, 1.0, seed=src, ledger=L)
    assert src.drawn > 0 and L.spent(G) == 1.0
    src.drawn = 0
    with pytest.raises(BudgetExceededError):
        dpgraph.release(G, 1.0, seed=src, ledger=L)
    assert src.drawn == 0, "randomness was drawn for a refused release"
    assert L.spent(G) == 1.0
    with pytest.raises(TypeError, match="ledger"):
        dpgraph.release(G, 0.1, ledger="budget.json")


def test_invalid_release_is_not_charged():
    L = PrivacyLedger(total_epsilon=1.0)
    G = graph()
    G.add_edge(0, 0)  # self-loop: refused by validation
    with pytest.raises(ValueError, match="self-loop"):
        dpgraph.release(G, 0.5, ledger=L)
    assert not L.entries


def test_seeded_release_warns_and_secure_release_does_not():
    G = graph()
    with pytest.warns(SeededReleaseWarning, match="seed"):
        dpgraph.release(G, 1.0, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SeededReleaseWarning)
        dpgraph.release(G, 1.0)
        dpgraph.release(G, 1.0, seed=SecureRandom(key=bytes(16)))
