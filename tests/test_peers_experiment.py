"""The peers benchmark: metric helpers, published figures, unclipped scoring, the --quick run."""

from __future__ import annotations

import argparse
import csv
import json

import networkx as nx
import numpy as np
import pytest

from dpgraph.experiments import peers


def test_nmi_ari_known_values():
    a = [0, 0, 0, 1, 1, 1]
    assert peers.nmi(a, [5, 5, 5, 7, 7, 7]) == pytest.approx(1.0)
    assert peers.ari(a, [5, 5, 5, 7, 7, 7]) == pytest.approx(1.0)
    # by hand: I = (2/3) ln 2, H(a) = ln 2, H(b) = ln 3; ARI = (2 - 6*3/15) / (4.5 - 6*3/15)
    b = [0, 0, 1, 1, 2, 2]
    assert peers.nmi(a, b) == pytest.approx((2 / 3) * np.log(2) / ((np.log(2) + np.log(3)) / 2))
    assert peers.ari(a, b) == pytest.approx((2 - 1.2) / (4.5 - 1.2))


def test_degree_kl_and_sequence():
    deg = np.array([1, 1, 2, 3])
    h = np.bincount(deg, minlength=4) / 4
    assert peers.degree_kl(deg, h) < 5e-3
    assert peers.degree_kl(deg, np.array([1.0, 0, 0, 0])) > 2.0
    seq = peers.sequence_from_hist(h, 4)
    assert sorted(seq.tolist()) == [1, 1, 2, 3]


def test_published_figures_are_package_data():
    pub = peers.published_figures()
    assert set(pub) == set(peers.SOK_FILES)
    assert pub["transitivity_err"][1.0]["PrivGraph"] == pytest.approx(0.23542728832718754)
    assert pub["nmi"][2.0]["DER"] == pytest.approx(0.536, abs=5e-4)
    for metric in pub.values():
        assert {0.5, 1.0, 2.0}.issubset(metric)


def _karate_truth():
    G = peers.load_graph("karate")
    from dpgraph.experiments.peers.bench import _truth

    return G, _truth(G, "karate", None)


def test_score_method_never_clips_the_reported_modularity():
    """A reported modularity of 3.0 (outside [-1/2, 1]) is scored as 3.0: the error is
    3.0 - truth, not 1.0 - truth as it would be after clipping."""
    G, truth = _karate_truth()
    m = peers.graph_metrics(G, truth["nodes"])
    m["modularity"] = 3.0
    m["reported_modularity_of_partition"] = 3.0
    row = peers.score_method(G, truth, "dpgraph", m, 1.0, 0)
    assert row["modularity_err"] == pytest.approx(3.0 - truth["modularity"])
    q_true = nx.community.modularity(G, m["partition"])
    assert row["partition_true_modularity"] == pytest.approx(q_true)
    assert row["modularity_reported_err"] == pytest.approx(3.0 - q_true)
    m["modularity"] = m["reported_modularity_of_partition"] = -4.0
    row = peers.score_method(G, truth, "dpgraph", m, 1.0, 0)
    assert row["modularity_err"] == pytest.approx(4.0 + truth["modularity"])


def test_harness_scores_the_estimators_unclipped(tmp_path, monkeypatch):
    """End to end through run(): whatever R.communities() reports reaches the table as is."""
    from dpgraph.core.estimators import Estimate
    from dpgraph.graph.analytics import Communities
    from dpgraph.graph.private import PrivateGraph

    def fake(self, *args, **kwargs):
        return Communities([frozenset(self.nodes)], Estimate(2.5, 0.1), True)

    monkeypatch.setattr(PrivateGraph, "communities", fake)
    res = peers.run(tmp_path, dataset="karate", epsilons=(2.0,), releases=1,
                    coverage_releases=0, progress=False, print_fn=lambda s: None,
                    methods=("dpgraph",))
    row = res["rows"][0]
    truth_q = res["meta"]["true"]["modularity"]
    assert row["modularity_err"] == pytest.approx(2.5 - truth_q)
    # one community: true modularity 0, so the reported error is 2.5
    assert row["modularity_reported_err"] == pytest.approx(2.5)


def test_datasets_cover_real_and_zoo_graphs():
    assert {"facebook", "email-eu-core", "zoo-sbm", "zoo-powerlaw", "zoo-tree"} <= set(peers.DATASETS)
    with pytest.raises(ValueError, match="dataset"):
        peers.load_graph("nope")


@pytest.mark.slow
def test_quick_end_to_end(tmp_path):
    p = argparse.ArgumentParser(prog="dpgraph experiment")
    peers.register(p.add_subparsers(dest="experiment"))
    args = p.parse_args(["peers", "--out", str(tmp_path), "--quick", "--no-progress"])
    assert args.func(args) == 0
    name = "facebook-quick"
    for suffix in ("_runs.csv", ".csv", ".png", "_degrees.png", ".json"):
        assert (tmp_path / f"peers_{name}{suffix}").stat().st_size > 0
    with open(tmp_path / f"peers_{name}.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert {r["method"] for r in rows} == set(peers.METHODS)
    meta = json.loads((tmp_path / f"peers_{name}.json").read_text())
    assert meta["quick"] and meta["nodes"] == 1000
    est = next(r for r in rows if r["method"] == "dpgraph" and float(r["epsilon"]) == 4.0)
    naive = next(r for r in rows if r["method"] == "naive" and float(r["epsilon"]) == 4.0)
    # the estimators beat the raw release on transitivity and density
    assert float(est["transitivity_err"]) < float(naive["transitivity_err"])
    assert float(est["density_err"]) < float(naive["density_err"])
