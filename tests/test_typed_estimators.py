"""Typed and weighted estimators: unbiased, calibrated (z-scores, coverage), and the any-tie collapse."""

from __future__ import annotations

import math
import warnings

import networkx as nx
import numpy as np
import pytest
from scipy import stats

import dpgraph
from dpgraph.experiments import signed_data
from dpgraph.planner import typed_cut_std

warnings.filterwarnings("ignore", category=dpgraph.SeededReleaseWarning)

VALUES = signed_data.VALUES
WEIGHTS = signed_data.WEIGHTS
ALPHA = 1e-4  # chi-square band: about 1 false alarm in 10,000 runs


def _z_checks(z: np.ndarray) -> None:
    """Mean within 4 standard errors of 0, variance inside the chi-square band of N(0, 1)."""
    N = z.size
    assert abs(z.mean()) < 4 / math.sqrt(N), z.mean()
    lo, hi = stats.chi2.ppf([ALPHA / 2, 1 - ALPHA / 2], N - 1) / (N - 1)
    assert lo < z.var(ddof=1) < hi, (z.var(ddof=1), lo, hi)


def _coverage_band(hits: np.ndarray, what: str) -> None:
    """hits[:, 0]: the proper interval covers; hits[:, 1]: the unbiased normal interval does.

    The normal interval's coverage is in the binomial band around 95%; the proper interval
    (clipped to the feasible range but never narrower than its half-width) covers wherever the
    normal one does, so its rate is at least as high.
    """
    proper, normal = hits[:, 0], hits[:, 1]
    assert 0.93 <= normal.mean() <= 0.97, (what, normal.mean())
    assert np.all(proper >= normal) and proper.mean() >= 0.93, (what, proper.mean())


def _truth(G, S, T):
    nodes = tuple(sorted(G))
    mats = signed_data.value_matrices(G, nodes)
    s = np.isin(nodes, list(S))[None]
    t = np.isin(nodes, list(T))[None]
    return signed_data.true_cuts(mats, s, t)[0]


def _zscores(G, eps, releases, seed, S, T, directed=False):
    truth = _truth(G, S, T)
    w = np.array([WEIGHTS[v] for v in VALUES])
    z = {k: [] for k in (*VALUES, "weighted", "any")}
    hits = {k: [] for k in z}
    for r in range(releases):
        R = dpgraph.release(G, eps, seed=seed + r, directed=directed, edge_attr="kind", values=VALUES)
        ests = {v: (R.cut(S, T, value=v), truth[k]) for k, v in enumerate(VALUES)}
        ests["weighted"] = (R.cut(S, T, weights=WEIGHTS), truth @ w)
        ests["any"] = (R.cut(S, T), truth.sum())
        for k, (e, t) in ests.items():
            z[k].append((e.raw - t) / e.std)
            lo, hi = e.ci()
            half = 1.959963984540054 * e.std
            hits[k].append((lo <= t <= hi, e.raw - half <= t <= e.raw + half))
    return {k: np.array(v) for k, v in z.items()}, {k: np.array(v) for k, v in hits.items()}


def test_typed_and_weighted_cut_zscores_are_standard_normal():
    G = signed_data.signed_sbm(200, seed=1)
    z, _ = _zscores(G, 1.0, 250, 1000, range(100), range(100, 200))
    for _k, v in z.items():
        _z_checks(v)


def test_directed_typed_cut_zscores():
    G = signed_data.bitcoin_alpha_typed(_small_bitcoin_like(150, seed=4))
    z, _ = _zscores(G, 2.0, 200, 50, range(60), range(60, 150), directed=True)
    for _k, v in z.items():
        _z_checks(v)


def _small_bitcoin_like(n: int, seed: int) -> nx.DiGraph:
    """A directed graph with ratings -10..10 shaped like Bitcoin Alpha (mostly 1-2, some negative)."""
    rng = np.random.default_rng(seed)
    G = nx.gnp_random_graph(n, 0.08, seed=seed, directed=True)
    choices = np.array([-10, -1, 1, 1, 1, 2, 2, 3, 5, 10])
    for u, v in G.edges:
        G.edges[u, v]["rating"] = int(rng.choice(choices))
    return G


@pytest.mark.slow
@pytest.mark.parametrize("make", [signed_data.signed_sbm, signed_data.typed_configuration],
                         ids=["signed-sbm", "typed-configuration"])
@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_typed_and_weighted_interval_coverage(make, eps):
    G = make(300, seed=7)
    rng = np.random.default_rng(3)
    hits = {}
    for q in range(4):  # four queries, 400 releases each: 1,600 intervals per kind
        perm = rng.permutation(300)
        S, T = perm[:150] if q % 2 == 0 else perm[:60], perm[150:] if q % 2 == 0 else perm[60:160]
        _, h = _zscores(G, eps, 400, 10_000 * q, S.tolist(), T.tolist())
        for k, v in h.items():
            hits.setdefault(k, []).append(v)
    for k, v in hits.items():
        _coverage_band(np.concatenate(v), k)


def test_counts_degrees_volume_and_fraction_are_unbiased():
    G = signed_data.typed_configuration(200, seed=2)
    truth = {v: sum(1 for *_, k in G.edges(data="kind") if k == v) for v in VALUES}
    deg5 = sum(1 for u in G[5] if G.edges[5, u]["kind"] == "trust")
    vol = sum(WEIGHTS[G.edges[u, v]["kind"]] * ((u < 50) + (v < 50)) for u, v in G.edges)
    frac = truth["distrust"] / G.number_of_edges()
    z = {k: [] for k in ("count", "degree", "volume", "fraction")}
    for r in range(200):
        R = dpgraph.release(G, 1.0, seed=r, edge_attr="kind", values=VALUES)
        c = R.value_counts(proper=False)["trust"]
        z["count"].append((c.value - truth["trust"]) / c.std)
        d = R.value_degree(5, value="trust", proper=False)
        z["degree"].append((d.value - deg5) / d.std)
        V = R.value_volume(range(50), weights=WEIGHTS, proper=False)
        z["volume"].append((V.value - vol) / V.std)
        f = R.value_fraction("distrust")
        lo, hi = f.ci()
        z["fraction"].append(lo <= frac <= hi)
    for k in ("count", "degree", "volume"):
        _z_checks(np.array(z[k]))
    assert np.mean(z["fraction"]) > 0.9


def test_any_tie_collapse_serves_the_binary_analytics():
    G = signed_data.signed_sbm(200, seed=5)
    R = dpgraph.release(G, 1.5, seed=1, edge_attr="kind", values=VALUES)
    rr = R.probabilities
    # the binary channel of [Y != no tie]: alpha = 1 - m', beta = (K - 1) m'
    assert math.isclose(R.channel.alpha, 1 - rr.flip_probability, rel_tol=1e-12)
    assert math.isclose(R.channel.beta, 3 * rr.flip_probability, rel_tol=1e-12)
    # binary analytics run unchanged and agree with the typed any-tie estimators
    e = R.number_of_edges(proper=False)
    assert math.isclose(e.value, sum(R.value_counts(proper=False)[v].value for v in VALUES), rel_tol=1e-9)
    assert math.isclose(R.cut(range(100), range(100, 200), proper=False).value,
                        R.cuts([(range(100), range(100, 200))], proper=False).value[0], rel_tol=1e-12)
    for analytic in (R.triangles, R.transitivity, R.density, R.degree_distribution):
        analytic()


@pytest.mark.slow
def test_any_tie_collapse_keeps_triangle_coverage():
    G = signed_data.signed_sbm(150, p_in=0.2, p_out=0.05, seed=8)
    truth = sum(nx.triangles(G).values()) / 3
    hits, z = [], []
    for r in range(300):
        R = dpgraph.release(G, 2.0, seed=r, edge_attr="kind", values=VALUES)
        t = R.triangles()
        lo, hi = t.ci()
        hits.append(lo <= truth <= hi)
        z.append((t.raw - truth) / t.std)
    assert 0.92 <= np.mean(hits) <= 0.98  # binomial band at 300 releases
    assert abs(np.mean(z)) < 4 / math.sqrt(300)


def test_balance_reduces_to_the_triangle_estimator_for_one_sign():
    G = nx.gnp_random_graph(60, 0.2, seed=3)
    nx.set_edge_attributes(G, "+", "s")
    R = dpgraph.release(G, 1.5, seed=1, edge_attr="s", values=["+"])
    b = R.balance(proper=False)
    t = R.triangles(proper=False)
    assert math.isclose(b.triangles["+++"].value, t.value, rel_tol=1e-9)
    assert math.isclose(b.triangles["+++"].std, t.std, rel_tol=1e-9)  # an independent derivation


@pytest.mark.slow
def test_balance_counts_and_fraction_are_calibrated():
    rng = np.random.default_rng(0)
    G = nx.gnp_random_graph(70, 0.25, seed=4)
    for u, v in G.edges:
        G.edges[u, v]["kind"] = "distrust" if rng.random() < 0.3 else "trust"
    truth = signed_data.true_balance(G)
    z = {k: [] for k in ("+++", "++-", "+--")}
    hits = []
    for r in range(300):
        R = dpgraph.release(G, 2.0, seed=r, edge_attr="kind", values=VALUES)
        b = R.balance(signs=signed_data.SIGNS, proper=False)
        for k in z:
            z[k].append((b.triangles[k].value - truth[k]) / b.triangles[k].std)
        lo, hi = b.balanced_fraction.ci()
        hits.append(lo <= truth["balanced_fraction"] <= hi)
    for k, v in z.items():
        v = np.array(v)
        assert abs(v.mean()) < 4 / math.sqrt(v.size), k
        assert 0.7 < v.var() < 1.4, k  # estimated std: looser than the chi-square band
    assert 0.92 <= np.mean(hits) <= 0.99


@pytest.mark.slow
def test_reciprocity_and_mutual_ties_are_calibrated():
    G = signed_data.bitcoin_alpha_typed(_small_bitcoin_like(150, seed=9))
    for u, v in list(G.edges):
        if (u + v) % 3 == 0 and not G.has_edge(v, u):
            G.add_edge(v, u, kind=G.edges[u, v]["kind"])
    truth = signed_data.true_mutual(G)
    z, zt, hits = [], [], []
    for r in range(300):
        R = dpgraph.release(G, 2.0, seed=r, directed=True, edge_attr="kind", values=VALUES)
        m = R.mutual_ties(proper=False)
        z.append((m.value - truth["mutual"]) / m.std)
        mt = R.mutual_ties(value="trust", proper=False)
        zt.append((mt.value - truth["mutual trust"]) / mt.std)
        lo, hi = R.reciprocity().ci()
        hits.append(lo <= truth["reciprocity"] <= hi)
    for v in (np.array(z), np.array(zt)):
        assert abs(v.mean()) < 4 / math.sqrt(v.size)
        assert 0.75 < v.var() < 1.3
    assert 0.92 <= np.mean(hits) <= 0.99


def test_planner_typed_cut_std_bounds_and_predicts():
    G = signed_data.signed_sbm(200, seed=6)
    S, T = range(100), range(100, 200)
    truth = _truth(G, S, T)
    values = []
    for r in range(300):
        R = dpgraph.release(G, 1.0, seed=r, edge_attr="kind", values=VALUES)
        values.append(R.cut(S, T, value="trust", proper=False).value)
    sd = np.std(values, ddof=1)
    worst = typed_cut_std(200, 1.0, VALUES, (100, 100), value="trust")
    mix = {v: truth[k] / 10_000 for k, v in enumerate(VALUES)}
    planned = typed_cut_std(200, 1.0, VALUES, (100, 100), value="trust", mix=mix)
    lo, hi = stats.chi2.ppf([ALPHA / 2, 1 - ALPHA / 2], 299) / 299
    assert lo < (sd / planned) ** 2 < hi
    assert worst >= planned


@pytest.mark.filterwarnings("ignore::dpgraph.exceptions.DroppedAttributesWarning")  # untyped on purpose
def test_typed_query_errors_name_the_argument():
    G = signed_data.signed_sbm(60, seed=1)
    R = dpgraph.release(G, 1.0, seed=0, edge_attr="kind", values=VALUES)
    B = dpgraph.release(G, 1.0, seed=0)
    with pytest.raises(ValueError, match="weights must be finite"):
        R.cut(range(10), range(10, 20), weights={"trust": float("nan")})
    with pytest.raises(ValueError, match="weights must be finite"):
        R.cut(range(10), range(10, 20), weights={"trust": float("inf")})
    with pytest.raises(ValueError, match="value is not one of the 3 declared"):
        R.cut(range(10), range(10, 20), value="friend")
    with pytest.raises(ValueError, match="weights has a key"):
        R.cut(range(10), range(10, 20), weights={"friend": 1})
    with pytest.raises(TypeError, match="not both"):
        R.cut(range(10), range(10, 20), value="trust", weights={"trust": 1})
    with pytest.raises(TypeError, match="need a typed release"):
        B.cut(range(10), range(10, 20), weights={"trust": 1})
    with pytest.raises(TypeError, match="needs a typed release"):
        B.value_counts()
    with pytest.raises(TypeError, match="directed release"):  # refused by its declaration
        R.reciprocity()
    with pytest.raises(ValueError, match="signs"):
        R.balance()


def test_report_lists_ties_by_value_and_uses_the_any_tie_channel():
    from dpgraph.planner import cut_std
    from dpgraph.report.builder import report_context

    G = signed_data.signed_sbm(120, seed=3)
    R = dpgraph.release(G, 2.0, seed=0, edge_attr="kind", values=VALUES)
    ctx = report_context(R)
    names = [r["name"] for r in ctx["statistics"]]
    assert [f"edges: {v}" for v in VALUES] == [n for n in names if n.startswith("edges: ")]
    # the cut table's std is the typed release's (larger than a binary release's)
    first = ctx["cut_table"][0]
    assert float(first["std"]) > cut_std(120, 2.0, (1, 1))


def test_cut_cuts_and_cut_batch_agree_on_a_typed_release():
    G = signed_data.signed_sbm(100, seed=4)
    R = dpgraph.release(G, 1.0, seed=0, edge_attr="kind", values=VALUES)
    M = np.zeros((2, 100), dtype=np.int8)
    M[0, :50], M[0, 50:] = 1, -1
    M[1, :10], M[1, 10:30] = 1, -1
    batch = R.cut_batch(M)
    pairs = [(range(50), range(50, 100)), (range(10), range(10, 30))]
    many = R.cuts(pairs)
    for q, (S, T) in enumerate(pairs):
        one = R.cut(S, T)
        assert one.value == many.value[q] == batch.value[q]
        assert one.std == many.std[q] == batch.std[q]
