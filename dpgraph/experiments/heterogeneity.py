"""Heterogeneity experiment (paper section VI-A1): E + q_u against MWEM as h grows.

The 128 most-rated movies; for h = 1, 2, 4, ..., 128 the movies are split
(randomly, once per run and h) into h equal groups and each of 200 queries
draws one row function per group (a *workload*: one query set).  Worst-case
|error| over the 200 queries, averaged over runs.  MWEM is adapted by
sub-databases (parallel composition): ``mwem_function`` runs it on the h
groups (the paper's "one sub-database per distinct row function"),
``mwem_unit`` on the 128 movies (the finest partition, independent of h).
With ``user_buckets = B`` each movie is split into B slices by user id, so h
can go up to 128 B (beyond the paper's range).

MWEM's T is a default fixed before any experiment (10).  With
``heldout_T`` it is instead chosen per h and per adaptation, from a grid,
on held-out movies (ranks 129-256: rows disjoint from the test movies), and
then used on the test movies: :func:`choose_T`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dpgraph.baselines import mwem_statistical
from dpgraph.core import MechanismE, StatisticalQuery
from dpgraph.experiments import _harness as harness
from dpgraph.experiments import ratings_data as data
from dpgraph.validation import Integer, check_positive_int, validate_params

__all__ = ["DEFAULT_T_GRID", "check_h_values", "choose_T", "draw_workload", "heterogeneity",
           "mwem_errors"]

#: Candidate T values for the held-out choice of MWEM's number of rounds.
DEFAULT_T_GRID = (2, 5, 10, 20, 40)
_HELDOUT_KEY = 129  # entropy of the held-out stream: independent of the test runs


def check_h_values(h_values: Sequence[int], n_units: int) -> list[int]:
    """Validate heterogeneities: powers of 2 dividing ``n_units``.

    Examples
    --------
    >>> check_h_values((1, 4), 16)
    [1, 4]
    """
    hs = [int(h) for h in h_values]
    if not hs:
        raise ValueError("h_values is empty; pass e.g. (1, 2, 4)")
    for h in hs:
        if h < 1 or h & (h - 1):
            raise ValueError(f"h_values must be powers of 2 (1, 2, 4, ...), got {h}")
        if h > n_units:
            raise ValueError(
                f"h={h} exceeds the number of groups available ({n_units} = n_movies x "
                "user_buckets); every row function needs at least one unit"
            )
        if n_units % h:
            raise ValueError(f"h={h} must divide the number of units {n_units} (equal groups)")
    return hs


def draw_workload(
    rng: np.random.Generator, n_units: int, h: int, n_queries: int
) -> tuple[np.ndarray, np.ndarray]:
    """One workload: a random split of the units into h equal groups and its row functions.

    Returns
    -------
    group_of_unit : numpy.ndarray
        ``(n_units,)`` group label 0..h-1 of every unit.
    functions : numpy.ndarray
        ``(n_queries, h, 5)`` row function of each query on each group.
    """
    group_of_unit = rng.permutation(np.arange(n_units) % h)
    return group_of_unit, data.random_row_functions(rng, (n_queries, h))


def mwem_errors(
    values: np.ndarray,
    unit: np.ndarray,
    group_of_unit: np.ndarray,
    F: np.ndarray,
    truth: np.ndarray,
    epsilon: float,
    T: int,
    mwem_kw: dict[str, Any],
    seeds: dict[str, np.random.SeedSequence],
) -> dict[str, np.ndarray]:
    """|error| of each query for MWEM per function (h groups) and/or per unit (every unit).

    ``seeds`` maps the adaptations to run (``"function"``, ``"unit"``) to their randomness.
    """
    out = {}
    for name, s in seeds.items():
        if name == "function":
            ans = mwem_statistical(values, group_of_unit[unit], F, epsilon, T, **mwem_kw,
                                   seed=np.random.default_rng(s))
        else:
            ans = mwem_statistical(values, unit, F[:, group_of_unit, :], epsilon, T, **mwem_kw,
                                   seed=np.random.default_rng(s))
        out[name] = np.abs(ans - truth)
    return out


def _units(ratings: Any, n_movies: int, user_buckets: int, offset: int = 0) -> Any:
    labels, movie, user = data.top_movies(ratings, n_movies, offset=offset)
    return labels, data.split_units(movie, user, user_buckets), user


@harness.deliberately_seeded
def choose_T(
    ratings: Any,
    *,
    grid: Sequence[int] = DEFAULT_T_GRID,
    h_values: Sequence[int] = (1, 2, 4, 8, 16, 32, 64, 128),
    n_movies: int = 128,
    user_buckets: int = 1,
    n_queries: int = 200,
    runs: int = 5,
    epsilon: float = 1.0,
    mwem_kw: dict[str, Any] | None = None,
    seed: int = 0,
) -> tuple[dict[int, dict[str, int]], list[dict[str, Any]]]:
    """Choose MWEM's T per h on held-out movies (ranks n_movies+1 .. 2 n_movies).

    The held-out rows are disjoint from the test movies' rows, so the test
    rows' privacy is untouched by the choice (the held-out rows are used
    without privacy, as data set aside for tuning).

    Returns
    -------
    chosen : dict
        ``chosen[h]["function"]`` and ``chosen[h]["unit"]``: the T with the
        lowest mean worst |error| over ``runs`` held-out runs.
    table : list of dict
        The held-out errors of every (h, T).
    """
    mwem_kw = dict(mwem_kw or {})
    grid = [check_positive_int(int(t), "grid") for t in grid]
    labels, unit, _ = _units(ratings, n_movies, user_buckets, offset=n_movies)
    n_units = n_movies * user_buckets
    hs = check_h_values(h_values, n_units)
    U = data.RATING_UNIVERSE
    values = U.encode(labels)
    root = np.random.SeedSequence([seed, _HELDOUT_KEY])
    table = []
    for h, hss in zip(hs, root.spawn(len(hs))):
        worst: dict[tuple[str, int], list[float]] = {}
        for rss in hss.spawn(runs):
            w_ss, *t_ss = rss.spawn(1 + len(grid))
            group_of_unit, F = draw_workload(np.random.default_rng(w_ss), n_units, h, n_queries)
            truth = StatisticalQuery.grouped(F, group_of_unit[unit], U).evaluate_indices(values)
            for T, tss in zip(grid, t_ss):
                errs = mwem_errors(values, unit, group_of_unit, F, truth, epsilon, T, mwem_kw,
                                   dict(zip(("function", "unit"), tss.spawn(2))))
                for name, e in errs.items():
                    worst.setdefault((name, T), []).append(float(e.max()))
        for T in grid:
            table.append({"h": h, "T": T,
                          "heldout_function_worst_abs": float(np.mean(worst[("function", T)])),
                          "heldout_unit_worst_abs": float(np.mean(worst[("unit", T)]))})
    chosen = {}
    for h in hs:
        sel = [row for row in table if row["h"] == h]
        chosen[h] = {name: int(min(sel, key=lambda r, n=name: r[f"heldout_{n}_worst_abs"])["T"])
                     for name in ("function", "unit")}
    return chosen, table


@harness.deliberately_seeded
@validate_params(**harness.RUN, **harness.MOVIES, user_buckets=Integer(), heldout_runs=Integer())
def heterogeneity(
    ratings: Any,
    *,
    h_values: Sequence[int] = (1, 2, 4, 8, 16, 32, 64, 128),
    n_movies: int = 128,
    user_buckets: int = 1,
    n_queries: int = 200,
    runs: int = 20,
    epsilon: float = 1.0,
    mwem: dict[str, Any] | None = None,
    heldout_T: Sequence[int] | None = None,
    heldout_runs: int = 5,
    seed: int = 0,
    progress: bool = True,
    note: str = data.STAND_IN_NOTE,
) -> harness.ExperimentResult:
    """Worst-case |error| of statistical queries with h distinct row functions.

    Parameters
    ----------
    ratings : dpgraph.datasets.Ratings
    h_values : sequence of int
        Heterogeneities; each a power of 2 dividing the number of units
        ``n_movies * user_buckets`` (so every group has as many units).
    n_movies : int, default 128
        The most-rated movies used.
    user_buckets : int, default 1
        Units are movies (1, the paper's protocol) or, to go beyond h = 128,
        each movie's ratings split into this many slices by user id
        (:func:`dpgraph.experiments.ratings_data.split_units`).
    n_queries, runs : int
        200 queries per h, 20 runs in the paper.
    epsilon : float, default 1
    mwem : dict, optional
        MWEM's options, keywords of :func:`dpgraph.baselines.mwem`: ``T``
        (rounds, default 10; ignored when ``heldout_T`` is given),
        ``update`` ("replay" or "plain"), ``passes``, ``average``.
    heldout_T : sequence of int, optional
        A grid of T values: choose T per h (and per adaptation) on held-out
        movies with :func:`choose_T` (``heldout_runs`` runs), then evaluate.
    seed : int
        Reproducibility of data splits, queries and every release (seeded
        releases are deliberate here: no SeededReleaseWarning is emitted).
    progress : bool
        Show a tqdm bar.

    Returns
    -------
    ExperimentResult

    Raises
    ------
    ValueError
        h not a power of 2, or larger than the number of movies.
    """
    T, mwem_kw = harness.mwem_options(mwem)
    n_units = n_movies * user_buckets
    hs = check_h_values(h_values, n_units)
    chosen: dict[int, dict[str, int]] = {h: {"function": T, "unit": T} for h in hs}
    heldout_table = None
    if heldout_T is not None:
        chosen, heldout_table = choose_T(
            ratings, grid=heldout_T, h_values=hs, n_movies=n_movies, user_buckets=user_buckets,
            n_queries=n_queries, runs=heldout_runs,
            epsilon=epsilon, mwem_kw=mwem_kw, seed=seed)
    labels, unit, user = _units(ratings, n_movies, user_buckets)
    span, most_rows = data.user_span(unit, user)
    U = data.RATING_UNIVERSE
    M = MechanismE(U, epsilon)
    values = U.encode(labels)
    n = int(values.size)
    root = np.random.SeedSequence(seed)
    rows: list[dict[str, Any]] = []
    bar = harness.progress_bar(runs * len(hs), "heterogeneity", progress)
    for r, ss in enumerate(root.spawn(runs)):
        rel_ss, *h_ss = ss.spawn(1 + len(hs))
        Y = M.release(labels, seed=np.random.default_rng(rel_ss))
        for h, hss in zip(hs, h_ss):
            q_ss, m1_ss, m2_ss = hss.spawn(3)
            group_of_unit, F = draw_workload(np.random.default_rng(q_ss), n_units, h, n_queries)
            q = StatisticalQuery.grouped(F, group_of_unit[unit], U)
            truth = q.evaluate_indices(values)
            err_e = np.abs(M.estimate(q, Y, proper=False).value - truth)  # q_u
            fn = mwem_errors(values, unit, group_of_unit, F, truth, epsilon, chosen[h]["function"],
                             mwem_kw, {"function": m1_ss})["function"]
            un = mwem_errors(values, unit, group_of_unit, F, truth, epsilon, chosen[h]["unit"],
                             mwem_kw, {"unit": m2_ss})["unit"]
            rows.append({"run": r, "h": h, "n": n,
                         "E_worst_abs": float(err_e.max()),
                         "mwem_function_worst_abs": float(fn.max()),
                         "mwem_unit_worst_abs": float(un.max()),
                         "E_mean_abs": float(err_e.mean()),
                         "mwem_function_mean_abs": float(fn.mean()),
                         "mwem_unit_mean_abs": float(un.mean())})
            bar.update()
    bar.close()
    keys = ("E_worst_abs", "mwem_function_worst_abs", "mwem_unit_worst_abs",
            "E_mean_abs", "mwem_function_mean_abs", "mwem_unit_mean_abs")
    summary = []
    for h in hs:
        sel = [row for row in rows if row["h"] == h]
        entry: dict[str, Any] = {"h": h, "n": n}
        for key in keys:
            entry[key], entry[key + "_sem"] = harness.mean_sem([row[key] for row in sel])
        entry["mwem_function_T"] = chosen[h]["function"]
        entry["mwem_unit_T"] = chosen[h]["unit"]
        summary.append(entry)
    e = np.array([s["E_worst_abs"] for s in summary])
    mf = np.array([s["mwem_function_worst_abs"] for s in summary])
    mm = np.array([s["mwem_unit_worst_abs"] for s in summary])
    big = np.array(hs) >= 2
    meta = {
        "data": note,
        "epsilon": epsilon,
        "privacy_unit": "one rating; movie labels, user ids and sub-database sizes are public",
        "max_sub_databases_per_user": span,
        "max_ratings_per_user": most_rows,
        "n_rows": n,
        "n_movies": n_movies,
        "user_buckets": user_buckets,
        "n_queries": n_queries,
        "runs": runs,
        **harness.mwem_meta(T if heldout_T is None else "chosen per h on held-out movies", mwem_kw),
        "heldout_T_grid": None if heldout_T is None else [int(t) for t in heldout_T],
        "heldout_table": heldout_table,
        "seed": seed,
        "targets": {
            "E_flatness_max_over_min": float(e.max() / e.min()),
            "E_flatness_target": 1.5,
            "E_mean_abs_flatness_max_over_min": float(
                max(x["E_mean_abs"] for x in summary) / min(x["E_mean_abs"] for x in summary)
            ),
            "E_below_mwem_function_at_h_ge_2": bool(np.all(e[big] < mf[big])) if big.any() else None,
            "E_below_mwem_unit_at_h_ge_2": bool(np.all(e[big] < mm[big])) if big.any() else None,
            "mwem_function_growth_max_over_h1": float(mf.max() / mf[0]),
        },
    }
    name = "heterogeneity"
    if meta["mwem_variant"] != "replay":
        name += "-" + meta["mwem_variant"]
    if heldout_T is not None:
        name += "-heldout-T"
    return harness.ExperimentResult(name, rows, summary, meta, _plot)


def _plot(ax: Any, res: harness.ExperimentResult) -> None:
    s = res.summary
    h = [x["h"] for x in s]
    variant = res.meta["mwem_variant"]
    for key, label, style in (
        ("E_worst_abs", "mechanism E + $q_u$", "o-"),
        ("mwem_function_worst_abs", f"MWEM ({variant}), one sub-database per row function", "s--"),
        ("mwem_unit_worst_abs", f"MWEM ({variant}), one sub-database per movie"
         if res.meta["user_buckets"] == 1 else f"MWEM ({variant}), one sub-database per unit",
         "^:"),
    ):
        ax.errorbar(h, [x[key] for x in s], yerr=[x[key + "_sem"] for x in s], fmt=style,
                    capsize=3, label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("heterogeneity h (distinct row functions)")
    ax.set_ylabel(f"worst-case |error| over {res.meta['n_queries']} queries")
