"""The signed experiment and the Bitcoin Alpha loader."""

from __future__ import annotations

import csv
import json

import networkx as nx
import numpy as np
import pytest
from _data import data_missing

from dpgraph import datasets
from dpgraph.cli import build_parser
from dpgraph.experiments import signed, signed_data


def _ratings_graph(n: int = 120, seed: int = 1) -> nx.DiGraph:
    rng = np.random.default_rng(seed)
    G = nx.gnp_random_graph(n, 0.08, seed=seed, directed=True)
    for u, v in G.edges:
        G.edges[u, v]["rating"] = int(rng.choice([-10, -2, 1, 1, 2, 3, 7]))
    return G


def test_run_writes_tables_and_one_figure_per_epsilon(tmp_path):
    result = signed.run(out=tmp_path, epsilons=(1.0, 4.0), releases=3, queries=4, seed=1,
                        graph=_ratings_graph(), generated_nodes=60, progress=False)
    cov = list(csv.DictReader((tmp_path / "signed_coverage.csv").read_text().splitlines()))
    assert {r["graph"] for r in cov} == {"bitcoin-alpha", "signed-sbm", "typed-configuration"}
    assert {r["query"] for r in cov} == set(signed._KINDS)
    assert all(r["intervals"] == "12" and 0 <= float(r["coverage"]) <= 1 for r in cov)
    lines = (tmp_path / "signed_statistics.csv").read_text().splitlines()
    stats = {(r["epsilon"], r["statistic"]) for r in csv.DictReader(lines)}
    for name in ("ties: distrust", "fraction of negative ties", "reciprocity (typed release)",
                 "reciprocity (binary release)", "mutual ties", "triangles +--", "balanced fraction"):
        assert ("4.0", name) in stats
    meta = json.loads((tmp_path / "signed.json").read_text())["meta"]
    assert meta["values"] == list(signed_data.VALUES) and meta["releases"] == 3
    assert (tmp_path / "signed_eps1.png").stat().st_size > 1000
    assert (tmp_path / "signed_eps4.png").stat().st_size > 1000
    # at eps = 4 the truth of the per-value counts is inside the intervals
    rows = [r for r in result["statistics"] if r["epsilon"] == 4.0 and r["statistic"].startswith("ties")]
    assert sum(r["covered"] for r in rows) >= len(rows) - 1


def test_truths_of_the_signed_data():
    G = nx.Graph()
    G.add_edge(0, 1, kind="trust")
    G.add_edge(1, 2, kind="distrust")
    G.add_edge(0, 2, kind="distrust")
    G.add_edge(2, 3, kind="trust")
    b = signed_data.true_balance(G)
    assert b["+--"] == 1 and b["+++"] == 0 and b["balanced_fraction"] == 1.0
    D = nx.DiGraph([(0, 1, {"kind": "trust"}), (1, 0, {"kind": "trust"}), (1, 2, {"kind": "trust"}),
                    (2, 1, {"kind": "distrust"})])
    m = signed_data.true_mutual(D)
    assert m["mutual"] == 2 and m["mutual trust"] == 1 and m["reciprocity"] == 1.0
    U = signed_data.undirected_signed(D)
    assert U.edges[1, 2]["kind"] == "distrust"  # the lower rating decides


def test_cli_registers_signed():
    args = build_parser().parse_args(["experiment", "signed", "--quick", "--out", "x"])
    assert args.experiment == "signed" and args.quick


@pytest.mark.skipif(data_missing("bitcoin-alpha"), reason="Bitcoin Alpha not available")
def test_bitcoin_alpha_loader():
    G = datasets.bitcoin_alpha()
    assert G.is_directed() and G.number_of_nodes() == 3783 and G.number_of_edges() == 24186
    ratings = np.array([r for *_, r in G.edges(data="rating")])
    assert ratings.min() == -10 and ratings.max() == 10 and not np.any(ratings == 0)
    assert int(np.sum(ratings == -10)) == 812
    assert abs(np.mean(ratings > 0) - 0.94) < 0.01
    assert datasets.REGISTRY["bitcoin-alpha"].sha256.startswith("1b2a970f")
