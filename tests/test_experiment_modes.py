"""The statistical-query experiments' modes: total budget, held-out T, textbook MWEM, quiet seeds."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from dpgraph import SeededReleaseWarning, datasets
from dpgraph.core import MechanismE
from dpgraph.datasets import Ratings
from dpgraph.experiments import heterogeneity as H
from dpgraph.experiments import ratings as R
from dpgraph.experiments import total_budget as TB
from dpgraph.experiments._harness import mwem_label
from dpgraph.experiments.continuous import continuous

HAVE_ML = datasets.available("movielens-100k")
ROOT = Path(__file__).resolve().parents[1]
SMALL = {"n_movies": 8, "n_queries": 12, "progress": False}


@pytest.fixture(scope="module")
def ratings():
    return R.synthetic_ratings(0, n_movies=80, n_ratings=12000)


def _cli(argv):
    p = argparse.ArgumentParser(prog="dpgraph experiment")
    R.register(p.add_subparsers(dest="experiment", required=True))
    args = p.parse_args(argv)
    return args.func(args)


# --------------------------------------------------------------------------- total budget


def test_total_budget_spends_eps_over_w_per_workload_and_releases_once(ratings, monkeypatch):
    seen_eps = []
    real_stat = H.mwem_statistical

    def spy(values, groups, F, epsilon, T, **kw):
        seen_eps.append(epsilon)
        return real_stat(values, groups, F, epsilon, T, **kw)

    releases = []
    real_release = MechanismE.release

    def count_release(self, *a, **kw):
        releases.append(1)
        return real_release(self, *a, **kw)

    monkeypatch.setattr(H, "mwem_statistical", spy)
    monkeypatch.setattr(MechanismE, "release", count_release)
    res = TB.total_budget(ratings, workloads=(1, 2, 4), h_values=(1, 2), runs=2, epsilon=0.8,
                          seed=1, **SMALL)
    # per run and h: 1 workload at 0.8, 2 at 0.4, 4 at 0.2; E: one release per run
    per_h = [0.8] + [0.4] * 2 + [0.2] * 4
    assert seen_eps == pytest.approx(per_h * 4)
    assert len(releases) == 2
    for row in res.runs:
        assert row["mwem_epsilon"] == pytest.approx(0.8 / row["workloads"])
        assert row["E_mean_worst_abs"] <= row["E_max_worst_abs"]
        assert row["mwem_mean_worst_abs"] <= row["mwem_max_worst_abs"]
    assert set(res.meta["targets"]["crossover"]) == {"1", "2"}


def test_total_budget_e_answers_nested_workloads_from_one_release(ratings):
    """E's W workloads are the first W of one list: its W = 1 value is the first
    workload's error and the W = 2 mean averages it with the second."""
    res = TB.total_budget(ratings, workloads=(1, 2), h_values=(2,), runs=1, seed=4, **SMALL)
    w1, w2 = res.runs
    assert w1["E_mean_worst_abs"] == w1["E_max_worst_abs"]
    second = 2 * w2["E_mean_worst_abs"] - w1["E_mean_worst_abs"]
    assert w2["E_max_worst_abs"] == pytest.approx(max(w1["E_mean_worst_abs"], second), rel=1e-12)


def test_crossover_cases():
    assert TB.crossover([1, 2, 4], [1.0, 1.0, 1.0], [0.5, 2.0, 4.0]) == {
        "first_W_E_wins": 2, "interpolated_W": pytest.approx(2 ** 0.5),
        "status": "crossover inside the measured range"}
    assert TB.crossover([1, 2], [1.0, 1.0], [3.0, 4.0])["status"] == (
        "E better already at the smallest W")
    assert TB.crossover([1, 2], [1.0, 1.0], [0.3, 0.4])["first_W_E_wins"] is None


# --------------------------------------------------------------------------- held-out T


def test_heldout_choice_of_T_never_reads_the_test_movies(ratings):
    """Changing every rating of the test movies (ranks 1..m) leaves the choice unchanged,
    and changing the held-out movies (ranks m+1..2m) is seen."""
    kw = {"grid": (2, 10), "h_values": (1, 2), "n_movies": 8, "n_queries": 10, "runs": 2,
          "seed": 3}
    chosen, table = H.choose_T(ratings, **kw)
    items, counts = np.unique(ratings.item, return_counts=True)
    order = items[np.lexsort((items, -counts))]

    def with_ratings_of(movies, value):
        r = ratings.rating.copy()
        r[np.isin(ratings.item, movies)] = value
        return Ratings(ratings.user, ratings.item, r, ratings.timestamp)

    same, same_table = H.choose_T(with_ratings_of(order[:8], 1), **kw)
    assert same == chosen and same_table == table
    _, other_table = H.choose_T(with_ratings_of(order[8:16], 5), **kw)
    assert other_table != table
    for h, pick in chosen.items():
        rows = [t for t in table if t["h"] == h]
        best = min(rows, key=lambda t: t["heldout_function_worst_abs"])
        assert pick["function"] == best["T"] and pick["unit"] in (2, 10)


def test_heterogeneity_uses_heldout_T(ratings):
    res = H.heterogeneity(ratings, h_values=(1, 2), runs=1, heldout_T=(3, 7), heldout_runs=1,
                          **SMALL)
    assert res.name == "heterogeneity-heldout-T"
    assert res.meta["heldout_T_grid"] == [3, 7] and len(res.meta["heldout_table"]) == 4
    for row in res.summary:
        assert row["mwem_function_T"] in (3, 7) and row["mwem_unit_T"] in (3, 7)


def test_top_movies_offset_gives_disjoint_rows(ratings):
    _, test_movie, _ = R.top_movies(ratings, 8)
    v, _, _ = R.top_movies(ratings, 8, offset=8)
    items, counts = np.unique(ratings.item, return_counts=True)
    order = items[np.lexsort((items, -counts))]
    assert v.size == np.isin(ratings.item, order[8:16]).sum()
    assert test_movie.size + v.size == np.isin(ratings.item, order[:16]).sum()
    with pytest.raises(ValueError, match="offset must be >= 0"):
        R.top_movies(ratings, 8, offset=-1)


@pytest.mark.skipif(not HAVE_ML, reason="MovieLens 100K not available")
def test_privacy_unit_figure_on_movielens():
    """A user spans up to 116 of the 128 most-rated movies (stated in the docs)."""
    ratings, _ = R.load_ratings("movielens")
    _, movie, user = R.top_movies(ratings, 128)
    assert R.user_span(movie, user)[0] == 116


# --------------------------------------------------------------------------- variants, CLI


def test_textbook_variant_is_plain_update_with_average(ratings, monkeypatch):
    seen = []
    real = H.mwem_statistical

    def spy(*a, **kw):
        seen.append((kw["update"], kw["passes"], kw["average"]))
        return real(*a, **kw)

    monkeypatch.setattr(H, "mwem_statistical", spy)
    res = H.heterogeneity(ratings, h_values=(1,), runs=1,
                          mwem={"update": "plain", "average": True}, **SMALL)
    assert set(seen) == {("plain", None, True)}
    assert res.name == "heterogeneity-textbook" and res.meta["mwem_variant"] == "textbook"
    assert mwem_label("replay", 1, False) == "replay-1-pass"


@pytest.mark.parametrize("extra, stem", [
    (["--total-budget"], "total-budget"),
    (["--heldout-T", "--T-grid", "2,5"], "heterogeneity-heldout-T"),
    (["--textbook"], "heterogeneity-textbook"),
])
def test_cli_modes_quick(extra, stem, tmp_path, capsys):
    argv = ["heterogeneity", "--out", str(tmp_path), "--quick", "--no-progress", "--data",
            "synthetic", "--runs", "1", *extra]
    assert _cli(argv) == 0
    meta = json.loads((tmp_path / f"{stem}.json").read_text())
    assert meta["quick"] is True and "SYNTHETIC" in meta["data"]
    assert (tmp_path / f"{stem}.png").read_bytes()[:4] == b"\x89PNG"
    assert "targets:" in capsys.readouterr().out


@pytest.mark.parametrize("extra, message", [
    (["--textbook", "--passes", "3"], "replay update only"),
    (["--workloads", "1,8"], "apply to --total-budget only"),
    (["--total-budget", "--heldout-T"], "drop --heldout-T"),
])
def test_cli_rejects_options_that_would_be_ignored(extra, message, tmp_path):
    with pytest.raises(SystemExit, match=message):
        _cli(["heterogeneity", "--out", str(tmp_path), "--quick", "--data", "synthetic", *extra])
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- seeds


def test_experiments_do_not_emit_seeded_release_warning_but_releases_still_do(ratings):
    with warnings.catch_warnings():
        warnings.simplefilter("error", SeededReleaseWarning)
        H.heterogeneity(ratings, h_values=(1,), runs=1, **SMALL)
        TB.total_budget(ratings, workloads=(1,), h_values=(1,), runs=1, **SMALL)
        R.query_set_size(ratings, sizes=(16,), n_databases=2, rows_range=(100, 400), runs=1,
                         progress=False)
        R.scaling(ratings, sizes=(500,), n_queries=5, runs=1, progress=False)
        continuous(sizes=(256,), n_queries=3, runs=1, progress=False)
    with pytest.warns(SeededReleaseWarning):  # the filter does not leak out of experiments
        MechanismE(R.RATING_UNIVERSE, 1.0).release(np.array([1, 2, 3]), seed=0)


@pytest.mark.slow
def test_continuous_example_writes_nothing_in_the_current_folder(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-W", "error::UserWarning", str(ROOT / "examples" / "continuous.py")],
        check=False, cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env={"PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg", "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 0, proc.stderr
    assert list(tmp_path.iterdir()) == []
    folder = next(line for line in proc.stdout.splitlines() if line.startswith("output folder:"))
    out = Path(folder.split(":", 1)[1].strip())
    assert (out / "continuous.png").is_file()
