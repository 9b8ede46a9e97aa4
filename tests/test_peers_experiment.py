"""The peers benchmark: metric definitions, published figures, unclipped scoring, seeds, CLI."""

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


def test_pgb_conventions_by_hand():
    # cal_rel: relative to the true value, undefined (NaN) at a true 0
    assert peers.cal_rel(0.5, 0.4) == pytest.approx(0.2)
    assert peers.cal_rel(-0.2, 0.1) == pytest.approx(1.5)
    assert np.isnan(peers.cal_rel(0.0, 1.0))
    # cal_kl: counts normalized, shorter vector padded, p = (1/4, 3/4), q = (1/2, 1/4, 1/4)
    p, q = np.array([0.25, 0.75]), np.array([0.5, 0.25])
    assert peers.cal_kl([1, 3], [2, 1, 1]) == pytest.approx(np.sum(p * np.log(p / q)))
    assert peers.cal_kl([1, 1, 2], [2, 2, 4]) == pytest.approx(0.0, abs=1e-12)
    # a bin of the truth the estimate misses costs p log(p / machine epsilon), finite
    e = np.finfo(float).eps
    assert peers.cal_kl([1, 1], [1, 0]) == pytest.approx(
        0.5 * np.log((0.5 + e) / (1 + e)) + 0.5 * np.log((0.5 + e) / e))


def test_clustering_bins_keep_values_outside_zero_one():
    counts = peers.clustering_counts([-0.2, 0.0, 0.049, 0.05, 0.97, 1.0, 1.3, np.nan])
    assert counts.size == 22 and counts.sum() == 7
    assert counts[0] == 1 and counts[1] == 2 and counts[2] == 1 and counts[-2] == 2
    assert counts[-1] == 1  # 1.3: an estimate above 1 is counted, not clipped


@pytest.mark.parametrize("G", [nx.karate_club_graph(), nx.path_graph(7),
                               nx.disjoint_union(nx.cycle_graph(5), nx.complete_graph(4))],
                         ids=["karate", "path", "disconnected"])
def test_harmonic_diameter_exact_matches_networkx(G):
    hd, se = peers.harmonic_diameter(nx.to_scipy_sparse_array(G))
    assert hd == pytest.approx(nx.harmonic_diameter(G)) and se == 0.0


def test_sampled_harmonic_diameter_interval_covers():
    """30 of 300 roots: the 80% interval HD^ +- 1.2816 se covers the exact value in a binomial
    band around 80% over 300 draws (4 binomial sd), so a standard error off by 2x fails."""
    G = nx.connected_watts_strogatz_graph(300, 6, 0.1, seed=1)
    A = nx.to_scipy_sparse_array(G)
    exact, _ = peers.harmonic_diameter(A)
    rng = np.random.default_rng(2)
    hits = 0
    for _ in range(300):
        hd, se = peers.harmonic_diameter(A, 30, rng)
        hits += abs(hd - exact) <= 1.2816 * se
    sd = np.sqrt(0.8 * 0.2 / 300)
    assert abs(hits / 300 - 0.8) < 4 * sd


def test_labels_modularity_matches_networkx():
    G = nx.planted_partition_graph(3, 20, 0.4, 0.05, seed=3)
    e = np.array(G.edges())
    deg = np.bincount(e.ravel(), minlength=60)
    lab = np.random.default_rng(4).integers(0, 4, 60)
    part = [set(np.flatnonzero(lab == c).tolist()) for c in range(4)]
    assert peers.labels_modularity(e[:, 0], e[:, 1], deg, lab) == pytest.approx(
        nx.community.modularity(G, part))


def test_graph_stats_match_networkx():
    G = nx.les_miserables_graph()
    G = nx.Graph(G.edges())
    nodes = sorted(G.nodes())
    s = peers.graph_stats(G, nodes, seed=0, hd_sources=None)
    assert s["transitivity"] == pytest.approx(nx.transitivity(G))
    assert s["triangles"] == pytest.approx(sum(nx.triangles(G).values()) / 3)
    clus = nx.clustering(G)
    assert s["clustering"] == pytest.approx([clus[v] for v in nodes])
    assert s["assortativity"] == pytest.approx(nx.degree_assortativity_coefficient(G))
    assert s["density"] == pytest.approx(nx.density(G))
    assert s["harmonic_diameter"] == pytest.approx(nx.harmonic_diameter(G))
    assert s["modularity"] == pytest.approx(nx.community.modularity(G, s["partition"]))


def test_published_figures_are_package_data():
    pub = peers.published_figures()
    assert set(pub) == set(peers.SOK_FILES)
    assert pub["transitivity_err"][1.0]["PrivGraph"] == pytest.approx(0.23542728832718754)
    assert pub["nmi"][2.0]["DER"] == pytest.approx(0.536, abs=5e-4)
    assert pub["harmonic_diameter_rel"][1.0]["TmF"] == pytest.approx(0.2387, abs=1e-4)
    for metric in pub.values():
        assert {0.5, 1.0, 2.0}.issubset(metric)
    pgb = peers.published_figures("pgb")
    assert pgb["nmi"][1.0] == {"PrivGraph": 0.17}
    assert pgb["degree_kl"][0.5]["LDPGen"] == 0.38
    assert set(pgb) <= set(peers.SOK_METRICS)
    with pytest.raises(ValueError, match="source"):
        peers.published_figures("nope")


def _karate_truth():
    G = peers.load_graph("karate")
    return G, peers.truth_stats(G, "karate")


def test_score_never_clips_the_reported_modularity():
    """A reported modularity of 3.0 (outside [-1/2, 1]) is scored as 3.0: the error is
    3.0 - truth, not 1.0 - truth as it would be after clipping."""
    G, truth = _karate_truth()
    m = peers.graph_stats(G, truth["nodes"])
    m.update(modularity=3.0, reported_modularity=3.0, modularity_ci=(2.9, 3.1))
    row = peers.score(truth, m)
    assert row["modularity_err"] == pytest.approx(3.0 - truth["modularity"])
    q_true = nx.community.modularity(G, m["partition"])
    assert row["partition_true_modularity"] == pytest.approx(q_true)
    assert row["modularity_reported_err"] == pytest.approx(3.0 - q_true)
    assert row["modularity_covered"] == 0.0
    m["modularity"] = m["reported_modularity"] = -4.0
    row = peers.score(truth, m)
    assert row["modularity_err"] == pytest.approx(4.0 + truth["modularity"])


def test_harness_scores_the_estimators_unclipped(tmp_path, monkeypatch):
    """End to end through run(): whatever R.communities() reports reaches the table as is."""
    from dpgraph.core.estimators import Estimate
    from dpgraph.graph.analytics import Communities
    from dpgraph.graph.private import PrivateGraph

    def fake(self, *args, **kwargs):
        return Communities([frozenset(self.nodes)], Estimate(2.5, 0.1), True)

    monkeypatch.setattr(PrivateGraph, "communities", fake)
    res = peers.run(tmp_path, dataset="karate", epsilons=(2.0,), releases=1, progress=False,
                    print_fn=lambda s: None, methods=("dpgraph",))
    row = res["rows"][0]
    truth_q = res["meta"]["true"]["modularity"]
    assert row["modularity_err"] == pytest.approx(2.5 - truth_q)
    # one community: true modularity 0, so the reported error is 2.5
    assert row["modularity_reported_err"] == pytest.approx(2.5)


def test_every_method_gets_the_same_seeds_and_summaries_count_releases(tmp_path):
    res = peers.run(tmp_path, dataset="karate", epsilons=(1.0, 4.0), releases=3, progress=False,
                    print_fn=lambda s: None)
    rows = res["rows"]
    for eps in (1.0, 4.0):
        for rep in range(3):
            seeds = {r["seed"] for r in rows if r["epsilon"] == eps and r["rep"] == rep}
            assert seeds == {peers.release_seed(0, eps, rep)}
    assert {r["method"] for r in rows} == set(peers.METHODS)
    s = {(x["epsilon"], x["method"], x["metric"]): x for x in res["summary"]}
    assert s[(1.0, "TmF", "degree_kl")]["n"] == 3
    vals = [r["degree_kl"] for r in rows if r["method"] == "TmF" and r["epsilon"] == 1.0]
    assert s[(1.0, "TmF", "degree_kl")]["mean"] == pytest.approx(np.mean(vals))
    assert s[(1.0, "TmF", "degree_kl")]["sd"] == pytest.approx(np.std(vals, ddof=1))
    # the naive release has no harmonic diameter: counted as 0 finite values, not averaged away
    assert s[(1.0, "naive", "harmonic_diameter_rel")]["n"] == 0
    # the dpgraph rows are metered alone on the first release only
    secs = [r["seconds"] for r in rows if r["method"] == "dpgraph" and r["epsilon"] == 1.0]
    assert np.isfinite(secs[0]) and np.isnan(secs[1:]).all()
    for metric in ("nmi", "degree_kl", "harmonic_diameter_rel", "clustering_kl"):
        assert (tmp_path / f"peers_karate_{metric}.png").stat().st_size > 0
    with open(tmp_path / "peers_karate_summary.csv") as fh:
        assert {"n", "mean", "sd", "q25", "median", "q75"} <= set(next(csv.reader(fh)))
    assert "best method" not in res["meta"]["best_table"]  # a table, not a sentence
    assert res["meta"]["best_table"].count("\n") == len(peers.SOK_METRICS) + 1


def _parser():
    p = argparse.ArgumentParser(prog="dpgraph experiment")
    peers.register(p.add_subparsers(dest="experiment"))
    return p


def test_cli_refuses_the_old_eps_spelling(capsys):
    from dpgraph.cli import build_parser

    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["experiment", "peers", "--out", "o", "--eps", "1", "2"])
    assert exc.value.code == 2
    assert "--epsilon" in capsys.readouterr().err
    a = _parser().parse_args(["peers", "--out", "o", "--epsilon", "1", "2"])
    assert a.epsilon == [1.0, 2.0] and a.out == "o"
    with pytest.raises(SystemExit):
        _parser().parse_args(["peers", "--out", "o", "--epsilon", "0"])
    with pytest.raises(SystemExit):  # --out is required, as in every experiment
        _parser().parse_args(["peers", "--epsilon", "1"])


def test_cli_runs_an_edge_list_file_read_by_the_release_reader(tmp_path, capsys):
    G = nx.planted_partition_graph(2, 15, 0.4, 0.05, seed=1)
    path = tmp_path / "g.txt"
    path.write_text("# an edge list\n" + "".join(f"{u} {v}\n" for u, v in G.edges()))
    args = _parser().parse_args(["peers", "--graph", str(path), "--out", str(tmp_path / "o"),
                                 "--epsilon", "2", "--releases", "1", "--no-progress",
                                 "--methods", "dpgraph", "TmF"])
    with pytest.raises(ValueError, match="--nodes"):
        args.func(args)
    args = _parser().parse_args(["peers", "--graph", str(path), "--nodes", "32", "--out",
                                 str(tmp_path / "o"), "--epsilon", "2", "--releases", "1",
                                 "--no-progress", "--methods", "dpgraph", "TmF"])
    assert args.func(args) == 0
    meta = json.loads((tmp_path / "o" / "peers_g.json").read_text())
    assert meta["nodes"] == 32 and meta["edges"] == G.number_of_edges()  # 2 isolated nodes
    # an edge at a node outside --nodes is refused by the reader, naming no label
    with pytest.raises(ValueError):
        peers.load_edge_list(path, list(range(10)))


def test_dataset_expansion():
    assert peers.expand_datasets(["real"]) == list(peers.DEFAULT_DATASETS)
    assert {"zoo-sbm", "zoo-powerlaw", "zoo-tree"} <= set(peers.expand_datasets(["zoo"]))
    with pytest.raises(ValueError, match="dataset"):
        peers.expand_datasets(["nope"])


def test_meter_sees_an_allocation():
    with peers.Meter() as m:
        x = np.ones(40_000_000)  # 305 MiB, touched
        x[::512] = 2.0
    del x
    assert m.seconds >= 0
    if np.isfinite(m.peak_mib):  # Linux only
        assert 250 < m.peak_mib < 1000


@pytest.mark.slow
def test_quick_end_to_end(tmp_path):
    args = _parser().parse_args(["peers", "--out", str(tmp_path), "--quick", "--no-progress",
                                 "--dataset", "facebook"])
    assert args.func(args) == 0
    name = "facebook-quick"
    for suffix in ("_runs.csv", "_summary.csv", ".png", "_nmi.png", ".json"):
        assert (tmp_path / f"peers_{name}{suffix}").stat().st_size > 0
    meta = json.loads((tmp_path / f"peers_{name}.json").read_text())
    assert meta["quick"] and meta["nodes"] == 1000
    with open(tmp_path / f"peers_{name}_summary.csv") as fh:
        s = {(r["method"], float(r["epsilon"]), r["metric"]): r for r in csv.DictReader(fh)}
    assert {k[0] for k in s} == set(peers.METHODS)
    est = float(s[("dpgraph", 4.0, "transitivity_err")]["mean"])
    naive = float(s[("naive", 4.0, "transitivity_err")]["mean"])
    # the estimators beat the raw release on transitivity and density
    assert est < naive
    assert float(s[("dpgraph", 4.0, "density_err")]["mean"]) < float(
        s[("naive", 4.0, "density_err")]["mean"])


def test_estimator_row_scores_the_raw_clustering_ratios():
    # the benchmark never clips: the dpgraph row's per-node clustering is the raw t^/w^
    import dpgraph
    from dpgraph.experiments.peers.methods import _estimates
    from dpgraph.graph.analytics import local_clustering

    R = dpgraph.release(nx.karate_club_graph(), 1.0, seed=3)
    got = _estimates(R, 0)["clustering"]
    assert np.array_equal(got, local_clustering(R, proper=False))
    assert ((got < 0) | (got > 1)).any()
