"""The Facebook cut experiment: correct truths, sane errors, CSV + PNG, CLI."""

from __future__ import annotations

import csv

import networkx as nx
import numpy as np
import pytest
from _data import data_missing

from dpgraph.bounds import cut_upper
from dpgraph.experiments import facebook_cuts as fc


def small_graph():
    return nx.convert_node_labels_to_integers(nx.gnp_random_graph(120, 0.15, seed=2))


def test_true_cuts_match_networkx():
    G = small_graph()
    A = nx.to_scipy_sparse_array(G, nodelist=range(120), format="csr", dtype=float)
    rng = np.random.default_rng(0)
    members = rng.random((8, 120)) < 0.5
    got = fc._true_cuts(A, members)
    for k in range(8):
        S = np.flatnonzero(members[k]).tolist()
        T = np.flatnonzero(~members[k]).tolist()
        assert got[k] == nx.cut_size(G, S, T)


def test_negligible_noise_gives_exact_answers():
    """At epsilon = 40 the flip probability is ~4e-18: every error must be ~0."""
    rows = fc.run(graph=small_graph(), sizes=[60, 120], runs=2, queries=5, epsilon=40.0,
                  seed=1, progress=False)
    for r in rows:
        assert r["worst_abs"] < 1e-6 and r["worst_rel"] < 1e-9


def test_rows_and_bound(tmp_path):
    rows = fc.run(out=tmp_path, graph=small_graph(), sizes=[60, 120], runs=3, queries=20,
                  seed=3, progress=False)
    assert [r["nodes"] for r in rows] == [60, 120]
    for r in rows:
        s = r["nodes"] // 2
        assert r["bound"] == pytest.approx(cut_upper(s, r["nodes"] - s, 1.0))
        assert 0 < r["mean_abs"] <= r["worst_abs"]
        assert r["mean_rel"] <= r["worst_rel"]
        # E|error| ~ sqrt(2/pi) std, and the paper's bound on E|error| exceeds std itself
        assert r["mean_abs"] < r["bound"]
    with open(tmp_path / "facebook_cuts.csv") as fh:
        got = list(csv.DictReader(fh))
    assert [int(g["nodes"]) for g in got] == [60, 120]
    assert (tmp_path / "facebook_cuts.png").stat().st_size > 1000
    table = fc.format_table(rows)
    assert "worst rel. error" in table and "mean rel. error" in table


def test_reproducible_with_seed():
    a = fc.run(graph=small_graph(), sizes=[80], runs=2, queries=4, seed=9, progress=False)
    b = fc.run(graph=small_graph(), sizes=[80], runs=2, queries=4, seed=9, progress=False)
    assert a == b


@pytest.mark.parametrize("kwargs, msg", [
    (dict(sizes=[1]), "sizes"), (dict(sizes=[500]), "sizes"), (dict(epsilon=0), "epsilon"),
    (dict(runs=0), "runs"), (dict(queries=0), "queries"),
])
def test_bad_arguments(kwargs, msg):
    with pytest.raises(ValueError, match=msg):
        fc.run(graph=small_graph(), progress=False, **kwargs)


def test_graph_must_have_integer_ids():
    G = nx.relabel_nodes(nx.path_graph(5), {i: str(i) for i in range(5)})
    with pytest.raises(ValueError, match="integers"):
        fc.run(graph=G, sizes=[4], progress=False)


@pytest.mark.skipif(data_missing("facebook"), reason="ego-Facebook not available locally")
def test_quick_mode_on_facebook(tmp_path, capsys):
    import argparse

    ap = argparse.ArgumentParser()
    fc.register(ap.add_subparsers())
    args = ap.parse_args(["facebook-cuts", "--quick", "--out", str(tmp_path), "--no-progress"])
    assert args.func(args) == 0
    assert (tmp_path / "facebook_cuts.png").read_bytes()[:4] == b"\x89PNG"
    import csv

    with open(tmp_path / "facebook_cuts.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert [int(r["nodes"]) for r in rows] == sorted(int(r["nodes"]) for r in rows)
    for r in rows:  # measured quantities are consistent with each other and the theory
        worst, mean = float(r["worst_abs"]), float(r["mean_abs"])
        assert 0 < mean <= worst
        # the mean |error| estimates sqrt(2/pi) std, and the bound is 2.2x that std
        assert mean < float(r["bound"])
        assert float(r["paper_rel"]) > 0  # the paper's figure sits beside ours
