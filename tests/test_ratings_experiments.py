"""End-to-end tests of the statistical-query experiments (quick mode) and their pieces."""

from __future__ import annotations

import argparse
import csv
import json

import numpy as np
import pytest

from dpgraph import datasets
from dpgraph.core import MechanismE, StatisticalQuery
from dpgraph.experiments import ratings as R
from dpgraph.experiments._harness import loglog_slope
from dpgraph.experiments.query_set_size import e_answers, worst_linear_errors

HAVE_ML = datasets.available("movielens-100k")
DATA = "movielens" if HAVE_ML else "synthetic"


def _parser():
    p = argparse.ArgumentParser(prog="dpgraph experiment")
    R.register(p.add_subparsers(dest="experiment", required=True))
    return p


def _read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


EXPECTED = {
    "heterogeneity": ("h", ["E_worst_abs", "mwem_function_worst_abs", "mwem_unit_worst_abs"]),
    "query-set-size": ("queries", ["E_worst_abs", "mwem_worst_abs"]),
    "scaling": ("n", ["E_worst_sq", "lemma2_bound"]),
    "continuous": ("n", ["worst_sq", "finite_n_bound", "paper_bound_leading"]),
}


@pytest.mark.parametrize("name", list(EXPECTED))
def test_quick_mode_end_to_end_outputs_parse(name, tmp_path, capsys):
    argv = [name, "--out", str(tmp_path), "--quick", "--no-progress", "--seed", "3"]
    if name != "continuous":
        argv += ["--data", DATA]
    args = _parser().parse_args(argv)
    assert args.func(args) == 0
    x_key, y_keys = EXPECTED[name]
    summary = _read_csv(tmp_path / f"{name}.csv")
    runs = _read_csv(tmp_path / f"{name}_runs.csv")
    assert len(summary) >= 3 and len(runs) >= len(summary)
    for row in summary:
        float(row[x_key])
        for k in y_keys:
            v = float(row[k])
            assert np.isfinite(v) and v > 0
    meta = json.loads((tmp_path / f"{name}.json").read_text())
    assert meta["quick"] is True and meta["elapsed_seconds"] >= 0 and "targets" in meta
    if name != "continuous":
        assert ("Netflix" in meta["data"]) == HAVE_ML
    png = (tmp_path / f"{name}.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    out = capsys.readouterr().out
    assert "targets:" in out and "wrote png" in out


def test_seed_makes_runs_reproducible():
    r = R.synthetic_ratings(0, n_movies=64, n_ratings=8000)
    kw = {"h_values": (1, 4), "n_movies": 16, "n_queries": 10, "runs": 2, "seed": 9,
          "progress": False}
    a = R.heterogeneity(r, **kw)
    b = R.heterogeneity(r, **kw)
    assert a.runs == b.runs


def test_heterogeneity_bad_h():
    r = R.synthetic_ratings(0, n_movies=64, n_ratings=8000)
    with pytest.raises(ValueError, match="powers of 2"):
        R.heterogeneity(r, h_values=(3,), n_movies=16, progress=False)
    with pytest.raises(ValueError, match="exceeds the number of groups"):
        R.heterogeneity(r, h_values=(32,), n_movies=16, progress=False)
    with pytest.raises(ValueError, match="only 64"):
        R.heterogeneity(r, h_values=(1,), n_movies=128, progress=False)


def test_pack_databases_sizes_disjoint_and_errors():
    r = R.synthetic_ratings(2, n_movies=300, n_ratings=30000)
    rng = np.random.default_rng(0)
    dbs = R.pack_databases(r, 10, 1000, 2000, rng)
    assert len(dbs) == 10 and all(1000 <= d.size <= 2000 for d in dbs)
    assert sum(d.size for d in dbs) <= len(r)
    with pytest.raises(ValueError, match="fill only"):
        R.pack_databases(r, 1000, 1000, 2000, rng)


def test_fast_batch_path_equals_core_estimate():
    """The chunked many-database path answers exactly as MechanismE.estimate."""
    rng = np.random.default_rng(4)
    U = R.RATING_UNIVERSE
    M = MechanismE(U, 1.0)
    dbs = [rng.integers(1, 6, n) for n in (300, 451)]
    ys = [M.release(d, seed=rng) for d in dbs]
    F = R.random_row_functions(rng, (40,))
    hist_true = np.stack([np.bincount(U.encode(d), minlength=5) for d in dbs]).astype(float)
    hist_rel = np.stack([np.bincount(U.encode(y), minlength=5) for y in ys]).astype(float)
    fast = e_answers(M, hist_rel)(F)  # (Q, G)
    for g, (d, y) in enumerate(zip(dbs, ys)):
        q = StatisticalQuery.linear(F, n=d.size, universe=U)
        np.testing.assert_allclose(fast[:, g], M.estimate(q, y, proper=False).value, rtol=1e-12, atol=1e-14)
    worst = worst_linear_errors(F, hist_true, {"E": e_answers(M, hist_rel)})["E"]
    want = max(
        np.abs(M.estimate(StatisticalQuery.linear(F, n=d.size, universe=U), y, proper=False).value
               - StatisticalQuery.linear(F, n=d.size, universe=U)(d)).max()
        for d, y in zip(dbs, ys)
    )
    assert worst == pytest.approx(want, rel=1e-12)


def test_scaling_error_matches_exact_variance_theory():
    """Mean squared error of q_u over releases equals its exact variance.

    For one fixed linear query and database, E[(q_u - q)^2] = Var q_u, computed
    exactly from the pmf of every row.  300 releases: the sample mean of the
    squared error is within 4 standard errors of it.
    """
    rng = np.random.default_rng(1)
    U = R.RATING_UNIVERSE
    M = MechanismE(U, 1.0)
    X = rng.integers(1, 6, 3000)
    f = R.random_row_functions(rng, (1,))[0]
    q = StatisticalQuery.linear(f, n=X.size, universe=U)
    sq = np.array([(M.estimate(q, M.release(X, seed=rng), proper=False).value - q(X)) ** 2 for _ in range(300)])
    keep, move = M.truth_probability, M.flip_probability
    idx = U.encode(X)
    pmf = np.full((X.size, 5), move)
    pmf[np.arange(X.size), idx] = keep
    var_rows = pmf @ f**2 - (pmf @ f) ** 2
    d = keep - move
    exact = var_rows.sum() / d**2 / X.size**2
    se = sq.std(ddof=1) / np.sqrt(sq.size)
    assert abs(sq.mean() - exact) < 4 * se


def test_loglog_slope_recovers_power_law():
    x = np.array([1e3, 2e3, 4e3, 8e3])
    slope, se = loglog_slope(x, 5.0 / x)
    assert slope == pytest.approx(-1.0) and se == pytest.approx(0.0, abs=1e-9)


def test_exp_mech_blocked_sampler_across_blocks():
    """The two-level sampler draws P(j) ~ exp(logit_j) even with Q spanning blocks.

    Mass sits on indices 5, 1100 and 2099 (three different 1024-blocks) with
    weights 1:2:3 and a negligible rest; chi-square at p > 1e-4 over 4000 rows.
    """
    import importlib

    from scipy import stats

    m = importlib.import_module("dpgraph.baselines.multiplicative_weights")
    Q, G = 2100, 4000
    logits = np.full((G, Q), -60.0)
    logits[:, 5], logits[:, 1100], logits[:, 2099] = 0.0, np.log(2.0), np.log(3.0)
    idx = m._exp_mech_select(logits, np.random.default_rng(7))
    counts = np.array([(idx == 5).sum(), (idx == 1100).sum(), (idx == 2099).sum()])
    assert counts.sum() == G
    p = np.array([1, 2, 3]) / 6
    chi2 = ((counts - G * p) ** 2 / (G * p)).sum()
    assert stats.chi2.sf(chi2, 2) > 1e-4


def test_load_ratings_rejects_unknown_source():
    with pytest.raises(ValueError, match="data must be"):
        R.load_ratings("netflix")


def test_continuous_truth_by_sorting_matches_direct_sum():
    from dpgraph.experiments.continuous import true_answers

    rng = np.random.default_rng(0)
    x, t = rng.random(777), rng.random(9)
    c = np.maximum(t, 1 - t)
    direct = np.abs(x[None, :] - t[:, None]).sum(axis=1) / (x.size * c)
    np.testing.assert_allclose(true_answers(x, t, c), direct, rtol=1e-12)


def test_continuous_error_falls_and_respects_finite_bound():
    from dpgraph.experiments.continuous import continuous

    res = continuous(sizes=(256, 65536), n_queries=20, runs=3, seed=1, progress=False)
    small, big = (row["worst_sq"] for row in res.summary)
    assert big < small / 4  # 256x more rows; the bound falls 16x
    assert all(row["worst_sq"] < row["finite_n_bound"] for row in res.summary)
