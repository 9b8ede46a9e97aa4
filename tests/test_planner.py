"""The accuracy planner: exact formulas, exact enumeration, simulated releases, the eps search."""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction

import networkx as nx
import numpy as np
import pytest
from scipy.stats import chi2

import dpgraph
from dpgraph import planner
from dpgraph.cli import main
from dpgraph.core import rr_probabilities


def _exact_count_std(rows: int, eps: float) -> float:
    """sqrt(rows p'(1-p')) / (1 - 2p') in exact rationals, p' the certified flip probability."""
    p = rr_probabilities(eps).flip_fraction
    var = Fraction(rows) * p * (1 - p) / (1 - 2 * p) ** 2
    return math.sqrt(var)


def _chi2_band_ok(samples: np.ndarray, sigma: float, alpha: float = 1e-3) -> bool:
    """Sample variance consistent with sigma^2 at level alpha (two-sided chi-square band)."""
    k = samples.size - 1
    stat = k * samples.var(ddof=1) / sigma**2
    return chi2.ppf(alpha / 2, k) <= stat <= chi2.ppf(1 - alpha / 2, k)


def _graph_counts(G: nx.Graph) -> dict:
    """m, W, C4, T and B = sum over edges of d_i d_j of a graph, exactly."""
    A = nx.to_numpy_array(G, dtype=np.int64)
    C = A @ A
    iu = np.triu_indices(len(A), 1)
    c = C[iu]
    deg = A.sum(1)
    W = int(np.sum(deg * (deg - 1) // 2))
    return {
        "m": G.number_of_edges(),
        "W": W,
        "C4": int(np.sum(c * (c - 1) // 2)) // 2,  # each 4-cycle has two diagonals
        "T": sum(nx.triangles(G).values()) // 3,
        "B": int(sum(deg[u] * deg[v] for u, v in G.edges())),
    }


# ----------------------------------------------------------------------------- exact formulas
@pytest.mark.parametrize("eps", [0.05, 0.5, 1.0, 3.0, 12.0])
@pytest.mark.parametrize("sides", [(1, 1), (3, 7), (100, 200), (2000, 2039)])
def test_cut_std_matches_exact_formula(eps, sides):
    got = planner.cut_std(4039, eps, sides)
    assert got == pytest.approx(_exact_count_std(sides[0] * sides[1], eps), rel=1e-12)


@pytest.mark.parametrize("directed", [False, True])
def test_planned_stds_equal_the_release_error_bars(directed):
    G = nx.gnp_random_graph(40, 0.2, seed=5, directed=directed)
    R = dpgraph.release(G, epsilon=0.7, seed=1, directed=directed)
    p = planner.plan(40, 0.7, directed=directed, sides=(5, 9))
    assert p.stds["cut"] == pytest.approx(R.cut(range(5), range(5, 14)).std, rel=1e-12)
    assert p.stds["number_of_edges"] == pytest.approx(R.number_of_edges().std, rel=1e-12)
    others = [v for v in range(40) if v != 3]
    assert p.stds["degree"] == pytest.approx(R.cut([3], others).std, rel=1e-12)  # 3's out-degree
    N = 40 * 39 if directed else 40 * 39 // 2
    assert p.stds["number_of_edges"] == pytest.approx(_exact_count_std(N, 0.7), rel=1e-12)
    assert p.flip_probability == R.flip_probability


def _enumerated_variances(G: nx.Graph, eps: float) -> tuple[float, float, float]:
    """Exact Var T^, Var W^, Cov(T^, W^) by enumerating every release of a small graph."""
    n = G.number_of_nodes()
    pairs = list(itertools.combinations(range(n), 2))
    x = np.array([1 if G.has_edge(i, j) else 0 for i, j in pairs])
    p = float(rr_probabilities(eps).flip_fraction)
    ys = np.array(list(itertools.product([0, 1], repeat=len(pairs))), dtype=float)
    flips = ys != x
    prob = np.prod(np.where(flips, p, 1 - p), axis=1)
    Zv = (ys - p) / (1 - 2 * p)  # the debiased entry, E Z = x
    Z = np.zeros((len(ys), n, n))
    for k, (i, j) in enumerate(pairs):
        Z[:, i, j] = Z[:, j, i] = Zv[:, k]
    T = np.einsum("bij,bjk,bki->b", Z, Z, Z) / 6
    rows = Z.sum(2)
    W = 0.5 * (rows**2 - (Z**2).sum(2)).sum(1)
    mT, mW = prob @ T, prob @ W
    return prob @ (T - mT) ** 2, prob @ (W - mW) ** 2, prob @ ((T - mT) * (W - mW))


@pytest.mark.parametrize("graph", ["path", "triangle_plus", "k4_minus", "cycle"])
@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_triangle_and_transitivity_variance_by_exact_enumeration(graph, eps):
    G = {
        "path": nx.path_graph(6),
        "triangle_plus": nx.Graph([(0, 1), (1, 2), (0, 2), (2, 3), (3, 4), (4, 5), (3, 5)]),
        "k4_minus": nx.Graph([(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 4), (4, 5), (3, 5)]),
        "cycle": nx.cycle_graph(6),
    }[graph]
    G.add_nodes_from(range(6))
    k = _graph_counts(G)
    var_t, var_w, cov = _enumerated_variances(G, eps)
    planned = planner.triangle_std(6, eps, k["m"], wedges=k["W"], four_cycles=k["C4"])
    assert planned**2 == pytest.approx(var_t, rel=1e-9)
    tau = 3 * k["T"] / k["W"]
    c1, c2 = 3 / k["W"], -tau / k["W"]  # the linearisation of 3 T / W
    lin = c1 * c1 * var_t + c2 * c2 * var_w + 2 * c1 * c2 * cov
    planned_tau = planner.transitivity_std(6, eps, k["m"], tau, wedges=k["W"], four_cycles=k["C4"],
                                           edge_degree_products=k["B"])
    assert planned_tau**2 == pytest.approx(lin, rel=1e-9)


# ----------------------------------------------------------------------------- simulation
def _raw(est) -> float:
    """The unprojected estimate (``raw`` when the estimate was clipped to its range)."""
    raw = getattr(est, "raw", None)
    return float(est.value if raw is None else raw)


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_cut_edge_and_degree_std_against_simulated_releases(eps):
    G = nx.barabasi_albert_graph(60, 3, seed=2)
    S, T = list(range(20)), list(range(20, 50))
    p = dpgraph.plan(60, eps, sides=(20, 30))  # the top-level name
    sims = np.array([
        (R.cut(S, T).value, _raw(R.number_of_edges()), R.cut([0], range(1, 60)).value)
        for R in (dpgraph.release(G, epsilon=eps, seed=7000 + s) for s in range(400))
    ])
    for col, name in enumerate(("cut", "number_of_edges", "degree")):
        assert _chi2_band_ok(sims[:, col], p.stds[name]), name


@pytest.mark.slow
@pytest.mark.parametrize("eps", [1.0, 3.0])
def test_triangle_and_transitivity_std_against_simulated_releases(eps):
    G = nx.powerlaw_cluster_graph(50, 4, 0.6, seed=1)  # clustered: the linear term matters
    k = _graph_counts(G)
    tau = 3 * k["T"] / k["W"]
    sims = np.array([(_raw(R.triangles()), _raw(R.transitivity()))
                     for R in (dpgraph.release(G, epsilon=eps, seed=9000 + s) for s in range(600))])
    s_t = planner.triangle_std(50, eps, k["m"], wedges=k["W"], four_cycles=k["C4"])
    assert _chi2_band_ok(sims[:, 0], s_t)
    if eps >= 3.0:  # the delta method is a large-signal approximation
        s_tau = planner.transitivity_std(50, eps, k["m"], tau, wedges=k["W"], four_cycles=k["C4"],
                                         edge_degree_products=k["B"])
        assert _chi2_band_ok(sims[:, 1], s_tau)


# ----------------------------------------------------------------------------- eps search
@pytest.mark.parametrize("target", [1.0, 37.5, 135.0, 4000.0])
def test_smallest_epsilon_is_minimal(target):
    e = planner.smallest_epsilon(lambda eps: planner.cut_std(4039, eps, (100, 200)), target)
    assert planner.cut_std(4039, e, (100, 200)) <= target
    below = float(np.nextafter(e, 0))
    assert planner.cut_std(4039, below, (100, 200)) > target


def test_relative_error_target_and_triangle_target():
    p = planner.plan(1000, sides=(50, 60), target_relative_error=0.05, cut=400)
    assert p.stds["cut"] <= 0.05 * 400 < planner.cut_std(1000, float(np.nextafter(p.epsilon, 0)),
                                                          (50, 60))
    q = planner.plan(300, target_std=500.0, statistic="triangles", edges=3000)
    assert q.stds["triangles"] <= 500.0
    assert planner.triangle_std(300, float(np.nextafter(q.epsilon, 0)), 3000) > 500.0


def test_unreachable_target_is_refused():
    with pytest.raises(ValueError, match="target_std"):
        planner.plan(4039, sides=(100, 200), target_std=1e-30)


def test_table_is_monotone_and_plot_draws():
    import matplotlib

    matplotlib.use("Agg")
    p = planner.plan(500, 1.0, sides=(10, 20), edges=2000, transitivity=0.2, cut=50)
    rows = p.table([0.25, 0.5, 1, 2, 4])
    for key in ("cut_std", "number_of_edges_std", "degree_std", "triangles_std", "transitivity_std"):
        vals = [r[key] for r in rows]
        assert all(a > b for a, b in itertools.pairwise(vals)), key
    ax = p.plot()
    assert len(ax.get_lines()) == 1 + 5  # the epsilon marker and one line per statistic


# ----------------------------------------------------------------------------- validation and CLI
@pytest.mark.parametrize("kwargs, match", [
    (dict(nodes=10, epsilon=1.0, sides=(6, 5)), "sides"),
    (dict(nodes=10, epsilon=1.0, sides=(0, 5)), r"sides\[0\]"),
    (dict(nodes=1, epsilon=1.0), "nodes"),
    (dict(nodes=10, epsilon=-1.0), "epsilon"),
    (dict(nodes=10), "epsilon"),
    (dict(nodes=10, epsilon=1.0, target_std=2.0), "not both"),
    (dict(nodes=10, target_std=-2.0), "target_std"),
    (dict(nodes=10, target_relative_error=0.1), "assumed"),
    (dict(nodes=10, epsilon=1.0, edges=100), "edges"),
    (dict(nodes=10, epsilon=1.0, directed=True, edges=5, statistic="triangles",
          target_std=None), None),
])
def test_plan_validates_inputs(kwargs, match):
    if match is None:  # directed: triangles silently not planned, the rest is
        assert "triangles" not in planner.plan(**kwargs).stds
        return
    with pytest.raises((ValueError, TypeError), match=match):
        planner.plan(**kwargs)


def test_cli_json_fields(capsys):
    assert main(["plan", "--nodes", "4039", "--epsilon", "1", "--sides", "100,200", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["cut_std"] == pytest.approx(_exact_count_std(20000, 1.0), rel=1e-12)
    assert main(["plan", "--nodes", "4039", "--sides", "100,200", "--target-std", "100",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    e = out["epsilon"]
    assert planner.cut_std(4039, e, (100, 200)) <= 100 < planner.cut_std(
        4039, float(np.nextafter(e, 0)), (100, 200))


def test_cli_text_plot_and_errors(tmp_path, capsys):
    png = tmp_path / "err.png"
    assert main(["plan", "--nodes", "300", "--epsilon", "2", "--assumed-edges", "900",
                 "--assumed-transitivity", "0.1", "--table", "1,2", "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert "std of triangles" in out and png.stat().st_size > 1000
    assert main(["plan", "--nodes", "10", "--epsilon", "1", "--sides", "6,5"]) == 2
    assert "--sides" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["plan", "--nodes", "10", "--epsilon", "1", "--sides", "0,5"])
    assert "--sides" in capsys.readouterr().err
    assert main(["plan", "--nodes", "10"]) == 2
    assert "--epsilon" in capsys.readouterr().err


# ----------------------------------------------------------------------------- sparse releases
@pytest.mark.parametrize("sub", [{"keep": 0.3}, {"target_edges": 400}])
def test_sparse_plan_is_what_the_sparse_release_reports(sub):
    G = nx.gnp_random_graph(80, 0.1, seed=1)
    R = dpgraph.release(G, 1.0, seed=2, **sub)
    p = planner.plan(80, 1.0, sides=(10, 30), **sub)
    assert p.keep == R.keep
    assert p.stds["number_of_edges"] == pytest.approx(R.number_of_edges().std, rel=1e-12)
    assert p.stds["cut"] == pytest.approx(R.cut(range(10), range(10, 40)).std, rel=1e-12)
    assert p.stds["degree"] == pytest.approx(R.degree(0).std, rel=1e-12)
    full = p.full_release_stds()
    assert full == pytest.approx(planner.plan(80, 1.0, sides=(10, 30)).stds, rel=1e-12)
    assert all(p.stds[k] > full[k] for k in full)  # subsampling only costs accuracy


def test_sparse_plan_of_a_large_release_says_its_cost_before_releasing(capsys):
    p = planner.plan(50_000, 1.0, target_edges=200_000)
    assert p.stds["number_of_edges"] == pytest.approx(2.6813e6, rel=1e-4)
    assert p.expected_released_edges() == pytest.approx(200_000, rel=1e-9)
    assert main(["plan", "--nodes", "50000", "--epsilon", "1", "--target-edges", "200000"]) == 0
    out = capsys.readouterr().out
    assert "2.6813e+06" in out and "79x the full release" in out and "1.05e+07" in out
    assert main(["plan", "--nodes", "50000", "--epsilon", "1", "--keep", "0.001", "--json"]) == 0
    js = json.loads(capsys.readouterr().out)
    assert js["keep"] == pytest.approx(0.001) and js["subsample"] == {"keep": 0.001}
    assert js["number_of_edges_std"] > js["full_release"]["number_of_edges_std"]
    assert main(["plan", "--nodes", "50", "--epsilon", "1", "--keep", "0.5",
                 "--target-edges", "9"]) == 2
    assert "not both" in capsys.readouterr().err
    with pytest.raises(ValueError, match="keep"):
        planner.plan(50, 1.0, keep=1.5)
    with pytest.raises(ValueError, match="larger than the dense release"):
        planner.plan(50, 1.0, target_edges=10**6)


def test_smallest_resolvable_is_the_resolution_rule():
    from dpgraph.core import Estimate

    p = planner.plan(2000, 1.0, target_edges=5000)
    for name, smallest in p.smallest_resolvable().items():
        std = p.stds[name]
        assert Estimate(smallest * (1 + 1e-9), std).resolved, name
        assert not Estimate(smallest * (1 - 1e-6), std).resolved, name


def test_sparse_edge_count_std_bounds_simulated_releases():
    # the reported std of a sparse release is the worst case over the truth: an upper bound
    G = nx.barabasi_albert_graph(60, 3, seed=2)
    bound = planner.number_of_edges_std(60, 1.0, keep=0.4)
    sims = np.array([_raw(dpgraph.release(G, 1.0, seed=500 + s, keep=0.4).number_of_edges())
                     for s in range(400)])
    k = sims.size - 1
    assert k * sims.var(ddof=1) / bound**2 <= chi2.ppf(1 - 1e-3, k)
    assert abs(sims.mean() - G.number_of_edges()) <= 4 * bound / np.sqrt(sims.size)


@pytest.mark.slow
def test_sparse_triangle_std_bounds_simulated_releases():
    G = nx.powerlaw_cluster_graph(50, 4, 0.6, seed=1)
    k = _graph_counts(G)
    bound = planner.triangle_std(50, 2.0, k["m"], wedges=k["W"], four_cycles=k["C4"], keep=0.5)
    sims = np.array([_raw(dpgraph.release(G, 2.0, seed=800 + s, keep=0.5).triangles())
                     for s in range(600)])
    dof = sims.size - 1
    assert dof * sims.var(ddof=1) / bound**2 <= chi2.ppf(1 - 1e-3, dof)
    exact = planner.triangle_std(50, 2.0, k["m"], wedges=k["W"], four_cycles=k["C4"])
    assert bound > exact  # a sparse release costs accuracy here too


# ----------------------------------------------------------------------------- typed releases
VALUES = ["distrust", "trust", "strong"]
NET = {"distrust": -1, "trust": 1, "strong": 2}


@pytest.mark.parametrize("directed", [False, True])
def test_typed_plan_uses_the_typed_count_std(directed):
    """plan(values=...) gives typed_count_std over the pairs of the cut, of all pairs, of a node."""
    p = planner.plan(500, 1.0, directed=directed, sides=(40, 60), values=VALUES, weights=NET)
    kw = {"weights": NET}
    N = 500 * 499 // (1 if directed else 2)
    assert p.stds == {"cut": planner.typed_cut_std(500, 1.0, VALUES, (40, 60), **kw),
                      "number_of_edges": planner.typed_count_std(N, 1.0, VALUES, **kw),
                      "degree": planner.typed_count_std(499, 1.0, VALUES, **kw)}
    rr = rr_probabilities(1.0, 4)
    assert (p.K, p.flip_probability, p.realized_epsilon) == (4, rr.flip_probability,
                                                             rr.realized_epsilon)
    assert p.table([2.0])[0]["flip_probability"] == rr_probabilities(2.0, 4).flip_probability
    assert p.to_dict()["typed"] == {"K": 4, "values": VALUES, "weights": NET}


def test_typed_plan_with_one_value_is_the_binary_plan():
    """K = 2: the typed count of the one tie value is the binary count, exactly."""
    typed = planner.plan(300, 0.8, sides=(20, 30), values=["tie"], value="tie").stds
    binary = planner.plan(300, 0.8, sides=(20, 30)).stds
    assert typed == pytest.approx(binary, rel=1e-12)


def test_typed_plan_bounds_the_reported_std_and_is_exact_under_the_true_mix():
    """Worst case >= the std a release reports; with the true mix the planned std is the
    spread of the estimates over 400 releases (chi-square band)."""
    n, S, T = 40, range(10), range(10, 30)
    rng = np.random.default_rng(3)
    G = nx.gnp_random_graph(n, 0.4, seed=3, directed=True)
    for u, v in G.edges:
        G.edges[u, v]["kind"] = VALUES[int(rng.integers(0, 3))]
    H = G.subgraph(list(S) + list(T))
    cut_ties = [d["kind"] for u, v, d in H.edges(data=True) if u in S and v in T]
    mix = {k: cut_ties.count(k) / 200 for k in VALUES}
    worst = planner.plan(n, 1.0, directed=True, sides=(10, 20), values=VALUES, weights=NET)
    exact = planner.plan(n, 1.0, directed=True, sides=(10, 20), values=VALUES, weights=NET,
                         mix=mix)
    assert exact.stds["cut"] < worst.stds["cut"]
    est = []
    for seed in range(400):
        R = dpgraph.release(G, 1.0, seed=seed, directed=True, edge_attr="kind", values=VALUES)
        e = R.cut(S, T, weights=NET, proper=False)
        assert e.std <= worst.stds["cut"] * (1 + 1e-12)
        est.append(e.value)
    assert _chi2_band_ok(np.array(est), exact.stds["cut"])
    assert not _chi2_band_ok(np.array(est), worst.stds["cut"])  # the worst case is not exact here


@pytest.mark.parametrize("sub", [{"keep": 0.25}, {"target_edges": 900}])
def test_sparse_typed_plan_is_what_the_sparse_typed_release_reports(sub):
    """keep / target_edges with values: the release's keep, and a worst case that bounds what it
    reports (the plug-in std) and exceeds the dense typed plan."""
    G = nx.gnp_random_graph(80, 0.1, seed=1)
    rng = np.random.default_rng(1)
    for u, v in G.edges:
        G.edges[u, v]["kind"] = VALUES[int(rng.integers(0, 3))]
    R = dpgraph.release(G, 1.0, seed=2, edge_attr="kind", values=VALUES, **sub)
    p = planner.plan(80, 1.0, sides=(10, 30), values=VALUES, weights=NET, **sub)
    assert p.keep == R.keep and p.to_dict()["keep"] == R.keep
    assert p.stds["cut"] == planner.typed_count_std(300, 1.0, VALUES, weights=NET, nodes=80, **sub)
    assert R.cut(range(10), range(10, 40), weights=NET).std <= p.stds["cut"] * (1 + 1e-12)
    full = p.full_release_stds()
    assert full == planner.plan(80, 1.0, sides=(10, 30), values=VALUES, weights=NET).stds
    assert all(p.stds[k] > full[k] for k in full)
    N = 80 * 79 // 2
    m = 1.0 * G.number_of_edges()
    q = planner.plan(80, 1.0, values=VALUES, edges=m, **sub)
    mp = rr_probabilities(1.0, 4).flip_probability
    assert q.expected_released_edges() == pytest.approx(R.keep * (3 * mp * N + (1 - 4 * mp) * m))


def test_typed_plan_finds_the_epsilon_of_a_target():
    p = planner.plan(3783, directed=True, sides=(300, 300), values=VALUES, value="trust",
                     target_std=500.0)
    assert p.stds["cut"] <= 500.0 < planner.typed_cut_std(
        3783, float(np.nextafter(p.epsilon, 0)), VALUES, (300, 300), value="trust")


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(value="trust"), ValueError, "declare its tie values"),
    (dict(weights=NET), ValueError, "declare its tie values"),
    (dict(values=VALUES, value="secret"), ValueError, "value is not one of the 3 declared"),
    (dict(values=VALUES, weights={"trust": "5"}), TypeError, "weights must map"),
    (dict(values=VALUES, weights={"trust": True}), TypeError, "weights must map"),
    (dict(values=VALUES, value="trust", weights=NET), TypeError, "not both"),
    (dict(values=VALUES, mix={"trust": 2.0}), ValueError, "mix"),
    (dict(values=VALUES + ["trust"]), ValueError, "duplicates"),
    (dict(values=VALUES, target_edges=10**9), ValueError, "larger than the dense release"),
    (dict(values=VALUES, edges=100, statistic="triangles", target_std=5.0), ValueError,
     "untyped releases only"),
])
def test_typed_plan_refuses_bad_input(kwargs, exc, match):
    kwargs = {"epsilon": 1.0, **kwargs} if "target_std" not in kwargs else kwargs
    with pytest.raises(exc, match=match) as info:
        planner.plan(100, **kwargs)
    assert "secret" not in str(info.value)


def test_cli_plans_a_typed_release(capsys):
    args = ["plan", "--nodes", "3783", "--directed", "--epsilon", "1", "--sides", "300,300",
            "--values", "distrust,trust,strong"]
    assert main(args + ["--weights", "distrust=-1,trust=1,strong=2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["cut_std"] == planner.typed_cut_std(3783, 1.0, VALUES, (300, 300), weights=NET)
    assert out["typed"]["K"] == 4
    assert main(args + ["--value", "trust", "--assumed-mix", "trust=0.01"]) == 0
    text = capsys.readouterr().out
    want = planner.typed_cut_std(3783, 1.0, VALUES, (300, 300), value="trust",
                                 mix={"trust": 0.01})
    assert "K = 4" in text and "exact under the assumed mix" in text and f"{want:.6g}" in text
    assert main(["plan", "--nodes", "100", "--epsilon", "1", "--value", "trust"]) == 2
    assert "--values" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(args + ["--weights", "trust=lots"])
    assert "--weights" in capsys.readouterr().err
