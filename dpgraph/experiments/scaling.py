"""Scaling experiment (paper section VI-A3): worst-case squared error of E + q_u against n.

Nested random subsets of the ratings (6250 ... 100000 rows, 16x), 200 linear
queries, worst-case squared error over the queries averaged over runs,
against the Lemma 2 bound; the log-log slope is fitted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dpgraph import bounds
from dpgraph.core import MechanismE, StatisticalQuery
from dpgraph.experiments._harness import (
    ExperimentResult,
    deliberately_seeded,
    loglog_slope,
    mean_sem,
    progress_bar,
)
from dpgraph.experiments.ratings_data import RATING_UNIVERSE, STAND_IN_NOTE, random_row_functions
from dpgraph.validation import check_epsilon, check_positive_int

__all__ = ["finish_slope_plot", "scaling"]


@deliberately_seeded
def scaling(
    ratings: Any,
    *,
    sizes: Sequence[int] | None = None,
    n_queries: int = 200,
    runs: int = 20,
    epsilon: float = 1.0,
    seed: int = 0,
    progress: bool = True,
    note: str = STAND_IN_NOTE,
) -> ExperimentResult:
    """Worst-case squared error of E + q_u against n, with the Lemma 2 bound.

    Databases are nested prefixes of one random ordering of all ratings; each
    (run, n) gets an independent release.  The same 200 random linear queries
    are used for every n (as in the paper).

    Parameters
    ----------
    ratings : dpgraph.datasets.Ratings
    sizes : sequence of int, optional
        Database sizes; default: 9 sizes from N/16 to N in factors of sqrt 2
        (N = number of ratings).
    n_queries, runs, epsilon, seed, progress
        See :func:`dpgraph.experiments.heterogeneity.heterogeneity`.

    Returns
    -------
    ExperimentResult
        ``meta["targets"]`` holds the fitted log-log slope (with its standard
        error) and whether every point lies under the bound.
    """
    epsilon = check_epsilon(epsilon)
    runs = check_positive_int(runs, "runs")
    n_queries = check_positive_int(n_queries, "n_queries")
    N = len(ratings)
    if sizes is None:
        sizes = [round(N / 16 * 2 ** (j / 2)) for j in range(9)]
    sizes = [check_positive_int(int(s), "sizes") for s in sizes]
    if max(sizes) > N:
        raise ValueError(f"sizes must be <= the number of ratings ({N}), got {max(sizes)}")
    U = RATING_UNIVERSE
    M = MechanismE(U, epsilon)
    root = np.random.SeedSequence(seed)
    perm_ss, q_ss, run_ss = root.spawn(3)
    perm = np.random.default_rng(perm_ss).permutation(N)
    labels_all = ratings.rating[perm]
    F = random_row_functions(np.random.default_rng(q_ss), (n_queries,))
    rows: list[dict[str, Any]] = []
    bar = progress_bar(runs * len(sizes), "scaling", progress)
    for r, ss in enumerate(run_ss.spawn(runs)):
        rng = np.random.default_rng(ss)
        for n in sizes:
            X = labels_all[:n]
            q = StatisticalQuery.linear(F, n=n, universe=U)
            truth = q(X)
            Y = M.release(X, seed=rng)
            err2 = np.square(M.estimate(q, Y, proper=False).value - truth)  # q_u
            rows.append({"run": r, "n": n, "E_worst_sq": float(err2.max())})
            bar.update()
    bar.close()
    a = float(F.min(axis=1).min())
    summary = []
    for n in sizes:
        mean, sem = mean_sem([row["E_worst_sq"] for row in rows if row["n"] == n])
        # Lemma 2 for a linear query: a_i = a, b_i = a + 1, c = 1 (same for every query)
        bound = bounds.statistical_upper(n, U.K, epsilon, a=a, b=a + 1.0, c=1.0)
        summary.append({"n": n, "E_worst_sq": mean, "E_worst_sq_sem": sem, "lemma2_bound": bound})
    ns = np.array(sizes, float)
    ys = np.array([s["E_worst_sq"] for s in summary])
    slope, slope_se = loglog_slope(ns, ys)
    meta = {
        "data": note,
        "epsilon": epsilon,
        "n_queries": n_queries,
        "runs": runs,
        "seed": seed,
        "targets": {
            "slope": slope,
            "slope_se": slope_se,
            "slope_target": [-1.1, -0.9],
            "all_under_lemma2_bound": bool(all(s["E_worst_sq"] < s["lemma2_bound"] for s in summary)),
            "max_ratio_to_bound": float(max(s["E_worst_sq"] / s["lemma2_bound"] for s in summary)),
            "n_span": float(ns.max() / ns.min()),
        },
    }
    return ExperimentResult("scaling", rows, summary, meta, _plot)


def finish_slope_plot(ax: Any, res: ExperimentResult, xlabel: str, bound: str = "") -> None:
    """Log-log axes of a worst-case squared error against n, titled with the fitted slope.

    ``res.meta["targets"]`` holds ``slope`` and ``slope_se``; ``bound`` is
    appended to the title (e.g. ``" (bound: -1/2)"``).  Also the axes of
    :mod:`dpgraph.experiments.continuous`.
    """
    t = res.meta["targets"]
    ax.set_title(f"fitted slope {t['slope']:.3f} ± {t['slope_se']:.3f}{bound}", fontsize=9)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("worst-case squared error")


def _plot(ax: Any, res: ExperimentResult) -> None:
    s = res.summary
    n = np.array([v["n"] for v in s], float)
    ax.errorbar(n, [v["E_worst_sq"] for v in s], yerr=[v["E_worst_sq_sem"] for v in s],
                fmt="o-", capsize=3, label="mechanism E + $q_u$ (worst of 200 queries)")
    ax.plot(n, [v["lemma2_bound"] for v in s], "k--", label="Lemma 2 upper bound")
    finish_slope_plot(ax, res, "database size n (ratings)")
