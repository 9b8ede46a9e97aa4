"""One release, many workloads: error against the number of workloads under one total eps.

Mechanism E releases the database once, at the full ``eps``; every later
workload (any heterogeneity, any query set, chosen adaptively after seeing
earlier answers) is answered from that release by post-processing, at no
further privacy cost.  MWEM is query-aware: each workload needs its own run,
so answering ``W`` workloads under one total budget ``eps`` leaves ``eps / W``
per workload (sequential composition; this covers adaptively chosen
workloads too).

The setting is the heterogeneity experiment's (the 128 most-rated movies, 200
queries per workload, each workload a fresh random split of the movies into h
groups with fresh row functions), MWEM adapted with one sub-database per row
function.  For each ``W`` the error reported is the worst |error| over a
workload's queries, averaged over the ``W`` workloads (and the maximum over
them), then over runs.  E's ``W`` workloads are the first ``W`` of one list
answered from one release, so its curve is flat in ``W`` up to noise.  The
*crossover* for each h is the number of workloads from which E is the more
accurate (interpolated on the log-log curves; see :func:`crossover`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from dpgraph.core import MechanismE, StatisticalQuery
from dpgraph.experiments import _harness as harness
from dpgraph.experiments import ratings_data as data
from dpgraph.experiments.heterogeneity import check_h_values, draw_workload, mwem_errors
from dpgraph.validation import check_positive_int, validate_params

__all__ = ["DEFAULT_WORKLOADS", "crossover", "total_budget"]

#: Numbers of workloads answered under one total budget.
DEFAULT_WORKLOADS = (1, 2, 4, 8, 16, 32, 64)


def crossover(workloads: Sequence[int], e: Sequence[float], mwem: Sequence[float]) -> dict[str, Any]:
    """Where E's error curve crosses MWEM's, as the number of workloads grows.

    Parameters
    ----------
    workloads : sequence of int
        Increasing numbers of workloads W.
    e, mwem : sequence of float
        Mean errors of E and of MWEM at each W.

    Returns
    -------
    dict
        ``first_W_E_wins``: the smallest measured W with E below MWEM (None
        if none); ``interpolated_W``: the W where log(mwem / e) crosses 0,
        interpolated linearly in log W between the bracketing measured
        points (None when E wins at the first W or never: then ``status``
        says which).

    Examples
    --------
    >>> crossover([1, 4, 16], [1.0, 1.0, 1.0], [0.5, 1.0, 2.0])["interpolated_W"]
    4.0
    >>> crossover([1, 2], [1.0, 1.0], [0.5, 0.6])["status"]
    'MWEM better at every W measured'
    """
    W = np.asarray(workloads, float)
    lr = np.log(np.asarray(mwem, float) / np.asarray(e, float))
    wins = np.flatnonzero(lr > 0)
    if wins.size == 0:
        return {"first_W_E_wins": None, "interpolated_W": None,
                "status": "MWEM better at every W measured"}
    j = int(wins[0])
    if j == 0:
        return {"first_W_E_wins": int(W[0]), "interpolated_W": None,
                "status": "E better already at the smallest W"}
    x0, x1 = math.log(W[j - 1]), math.log(W[j])
    t = -lr[j - 1] / (lr[j] - lr[j - 1])
    w_star = round(math.exp(x0 + t * (x1 - x0)), 6)
    return {"first_W_E_wins": int(W[j]), "interpolated_W": float(w_star),
            "status": "crossover inside the measured range"}


@harness.deliberately_seeded
@validate_params(**harness.RUN, **harness.MOVIES)
def total_budget(
    ratings: Any,
    *,
    workloads: Sequence[int] = DEFAULT_WORKLOADS,
    h_values: Sequence[int] = (1, 16, 128),
    n_movies: int = 128,
    n_queries: int = 200,
    runs: int = 10,
    epsilon: float = 1.0,
    mwem: dict[str, Any] | None = None,
    seed: int = 0,
    progress: bool = True,
    note: str = data.STAND_IN_NOTE,
) -> harness.ExperimentResult:
    """Error of E (one release at eps) and MWEM (eps / W per workload) for W workloads.

    The workloads are the heterogeneity experiment's, and so are the
    arguments but ``workloads`` (:func:`dpgraph.experiments.heterogeneity.heterogeneity`:
    ``ratings``, ``n_movies``, ``n_queries``, ``runs``, ``mwem``, ``seed``,
    ``progress``): ``h_values`` are the heterogeneities of the workloads
    (powers of 2 dividing ``n_movies``), ``epsilon`` the total budget and
    ``workloads`` the numbers of workloads W answered under it.

    Returns
    -------
    ExperimentResult
        ``meta["targets"]["crossover"][h]`` from :func:`crossover`.
    """
    T, mwem_kw = harness.mwem_options(mwem)
    Ws = sorted({check_positive_int(int(w), "workloads") for w in workloads})
    hs = check_h_values(h_values, n_movies)
    labels, unit, _ = data.top_movies(ratings, n_movies)  # one unit per movie
    U = data.RATING_UNIVERSE
    M = MechanismE(U, epsilon)
    values = U.encode(labels)
    root = np.random.SeedSequence(seed)
    rows: list[dict[str, Any]] = []
    bar = harness.progress_bar(runs * len(hs) * sum(Ws), "total budget (MWEM runs)", progress)
    for r, ss in enumerate(root.spawn(runs)):
        rel_ss, *h_ss = ss.spawn(1 + len(hs))
        Y = M.release(labels, seed=np.random.default_rng(rel_ss))  # the one release
        for h, hss in zip(hs, h_ss):
            w_ss, m_ss = hss.spawn(2)
            draws = [draw_workload(np.random.default_rng(s), n_movies, h, n_queries)
                     for s in w_ss.spawn(max(Ws))]
            truths, e_worst = [], []
            for group_of_unit, F in draws:
                q = StatisticalQuery.grouped(F, group_of_unit[unit], U)
                truths.append(q.evaluate_indices(values))
                e_worst.append(float(np.abs(M.estimate(q, Y, proper=False).value - truths[-1]).max()))
            for W, wss in zip(Ws, m_ss.spawn(len(Ws))):
                m_worst = []
                for (group_of_unit, F), truth, s in zip(draws, truths, wss.spawn(W)):
                    err = mwem_errors(values, unit, group_of_unit, F, truth, epsilon / W, T,
                                      mwem_kw, {"function": s})["function"]
                    m_worst.append(float(err.max()))
                    bar.update()
                rows.append({"run": r, "h": h, "workloads": W, "mwem_epsilon": epsilon / W,
                             "E_mean_worst_abs": float(np.mean(e_worst[:W])),
                             "E_max_worst_abs": float(np.max(e_worst[:W])),
                             "mwem_mean_worst_abs": float(np.mean(m_worst)),
                             "mwem_max_worst_abs": float(np.max(m_worst))})
    bar.close()
    summary = []
    for h in hs:
        for W in Ws:
            sel = [row for row in rows if row["h"] == h and row["workloads"] == W]
            entry: dict[str, Any] = {"h": h, "workloads": W, "mwem_epsilon": epsilon / W}
            for key in ("E_mean_worst_abs", "mwem_mean_worst_abs",
                        "E_max_worst_abs", "mwem_max_worst_abs"):
                entry[key], entry[key + "_sem"] = harness.mean_sem([row[key] for row in sel])
            summary.append(entry)
    cross = {}
    for h in hs:
        sel = [s for s in summary if s["h"] == h]
        cross[str(h)] = crossover(Ws, [s["E_mean_worst_abs"] for s in sel],
                                  [s["mwem_mean_worst_abs"] for s in sel])
    meta = {
        "data": note,
        "epsilon": epsilon,
        "budget": "one total eps: E releases once at eps; MWEM spends eps/W on each of W workloads",
        "privacy_unit": "one rating; movie labels, user ids and sub-database sizes are public",
        "n_movies": n_movies,
        "n_queries": n_queries,
        "runs": runs,
        **harness.mwem_meta(T, mwem_kw),
        "mwem_adaptation": "one sub-database per row function",
        "seed": seed,
        "targets": {"crossover": cross},
    }
    name = "total-budget"
    if meta["mwem_variant"] != "replay":
        name += "-" + meta["mwem_variant"]
    return harness.ExperimentResult(name, rows, summary, meta, _plot)


def _plot(ax: Any, res: harness.ExperimentResult) -> None:
    hs = sorted({s["h"] for s in res.summary})
    colors = ["C0", "C1", "C2", "C3", "C4", "C5", "C6", "C7"]
    for i, h in enumerate(hs):
        sel = [s for s in res.summary if s["h"] == h]
        W = [s["workloads"] for s in sel]
        c = colors[i % len(colors)]
        ax.errorbar(W, [s["E_mean_worst_abs"] for s in sel],
                    yerr=[s["E_mean_worst_abs_sem"] for s in sel], fmt="o-", color=c, capsize=3,
                    label=f"E + $q_u$, one release (h = {h})")
        ax.errorbar(W, [s["mwem_mean_worst_abs"] for s in sel],
                    yerr=[s["mwem_mean_worst_abs_sem"] for s in sel], fmt="s--", color=c,
                    capsize=3, label=f"MWEM, eps/W per workload (h = {h})")
        w_star = res.meta["targets"]["crossover"][str(h)]["interpolated_W"]
        if w_star is not None:
            ax.axvline(w_star, color=c, linestyle=":", linewidth=1)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(f"workloads answered under one total eps = {res.meta['epsilon']:g} (W)")
    ax.set_ylabel(f"worst |error| per workload of {res.meta['n_queries']} queries")
    ax.set_title("dotted: crossover (E more accurate to the right)", fontsize=9)
