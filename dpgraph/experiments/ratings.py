"""The paper's statistical-query experiments (section VI-A) on movie ratings.

Wang, Ying & Zhang ran these on Netflix ratings, which are no longer
distributed; here **MovieLens 100K stands in for Netflix** (one rating 1..5 is
one row, K = 5).  Every output says so.  All three experiments use eps = 1,
random row functions phi(1..5) = X_k / (max X - min X) with X_k uniform on
[0, 1] (so every c_i = 1), and mechanism E with the unbiased companion
estimator q_u (:class:`dpgraph.core.MechanismE`), against MWEM
(:mod:`dpgraph.baselines`).

``heterogeneity``
    The 128 most-rated movies; for h = 1, 2, 4, ..., 128 the movies are split
    (randomly, once per run and h) into h equal groups and each of 200
    queries draws one row function per group.  Worst-case |error| over the
    200 queries, averaged over runs.  MWEM is adapted by sub-databases
    (parallel composition): ``mwem_function`` runs it on the h groups (the
    paper's "one sub-database per distinct row function"), ``mwem_unit`` on
    the 128 movies (the finest partition, independent of h).  With
    ``--user-buckets B`` each movie is split into B slices by user id, so h
    can go up to 128 B (beyond the paper's range).
``query-set-size``
    2^6 ... 2^20 random linear queries on 50 disjoint databases of 1000-2000
    ratings each (unions of whole movies: no MovieLens movie has 1000
    ratings); worst case over queries and databases, averaged over runs.
``scaling``
    Nested random subsets of the ratings (6250 ... 100000 rows, 16x), 200
    linear queries, worst-case squared error over the queries averaged over
    runs, against the Lemma 2 bound; the log-log slope is fitted.

Each experiment writes ``<name>.csv`` (summary), ``<name>_runs.csv`` (every
run), ``<name>.png`` and ``<name>.json`` (parameters, targets, timing) to an
output directory.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dpgraph import bounds
from dpgraph.baselines.mwem import DEFAULT_PASSES, DEFAULT_T, mwem, mwem_statistical
from dpgraph.core import MechanismE, StatisticalQuery, Universe, unbiased_estimate
from dpgraph.core._validation import check_epsilon, check_positive_int

__all__ = [
    "RATING_UNIVERSE",
    "STAND_IN_NOTE",
    "ExperimentResult",
    "heterogeneity",
    "load_ratings",
    "pack_databases",
    "query_set_size",
    "random_row_functions",
    "register",
    "scaling",
    "synthetic_ratings",
    "top_movies",
    "write_outputs",
]

#: The ratings universe: one row is one rating 1..5.
RATING_UNIVERSE = Universe([1, 2, 3, 4, 5])
STAND_IN_NOTE = "MovieLens 100K ratings stand in for the paper's Netflix ratings"
_SYNTHETIC_NOTE = (
    "SYNTHETIC ratings (MovieLens 100K not found locally): numbers are illustrative only"
)
_QUERY_CHUNK = 1 << 15


# --------------------------------------------------------------------------- data


def synthetic_ratings(seed: int = 0, n_movies: int = 1682, n_ratings: int = 100_000) -> Any:
    """Ratings shaped like MovieLens 100K, for offline demos and tests.

    Movie popularity follows a Zipf-like law; each movie's rating
    distribution is drawn around MovieLens' overall one.

    Parameters
    ----------
    seed : int
    n_movies, n_ratings : int

    Returns
    -------
    dpgraph.datasets.Ratings

    Examples
    --------
    >>> r = synthetic_ratings(0, n_movies=50, n_ratings=2000)
    >>> len(r), int(r.rating.min()) >= 1, int(r.rating.max()) <= 5
    (2000, True, True)
    """
    from dpgraph.datasets import Ratings

    n_movies = check_positive_int(n_movies, "n_movies")
    n_ratings = check_positive_int(n_ratings, "n_ratings")
    rng = np.random.default_rng(seed)
    pop = 1.0 / np.arange(1, n_movies + 1) ** 0.9
    item = rng.choice(n_movies, size=n_ratings, p=pop / pop.sum()) + 1
    base = np.array([0.061, 0.114, 0.271, 0.342, 0.212])
    probs = rng.dirichlet(base * 20, size=n_movies)
    u = rng.random(n_ratings)
    rating = (u[:, None] > np.cumsum(probs[item - 1], axis=1)).sum(axis=1) + 1
    rating = np.minimum(rating, 5)
    user = rng.integers(1, 944, n_ratings)
    return Ratings(user, item, rating.astype(np.int64), np.zeros(n_ratings, np.int64))


def load_ratings(data: str = "auto") -> tuple[Any, str]:
    """Return ``(ratings, note)`` for the experiments.

    Parameters
    ----------
    data : {"auto", "movielens", "synthetic"}
        ``"movielens"`` requires MovieLens 100K (see ``datasets/README.md``);
        ``"auto"`` uses it when present locally and synthetic ratings otherwise.

    Returns
    -------
    tuple
        The ratings and a note saying what stands for what.

    Examples
    --------
    >>> r, note = load_ratings("synthetic")
    >>> note.startswith("SYNTHETIC")
    True
    """
    from dpgraph import datasets

    if data not in ("auto", "movielens", "synthetic"):
        raise ValueError(f"data must be 'auto', 'movielens' or 'synthetic', got {data!r}")
    if data == "movielens" or (data == "auto" and datasets.available("movielens-100k")):
        return datasets.movielens_100k(), STAND_IN_NOTE
    return synthetic_ratings(0), _SYNTHETIC_NOTE


def top_movies(ratings: Any, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows of the ``m`` most-rated movies.

    Returns
    -------
    values : numpy.ndarray
        Rating labels 1..5 of those rows.
    movie : numpy.ndarray
        Movie index 0..m-1 of each row (0 = most rated; ties by item id).
    user : numpy.ndarray
        User id of each row.

    Examples
    --------
    >>> r = synthetic_ratings(0, n_movies=20, n_ratings=500)
    >>> v, mv, _ = top_movies(r, 4)
    >>> int(mv.max()), bool(np.all(np.bincount(mv)[:-1] >= np.bincount(mv)[1:]))
    (3, True)
    """
    m = check_positive_int(m, "m")
    items, counts = np.unique(ratings.item, return_counts=True)
    if items.size < m:
        raise ValueError(f"m={m} movies requested but the ratings cover only {items.size}")
    order = np.lexsort((items, -counts))[:m]
    rank = np.full(items.max() + 1, -1, dtype=np.int64)
    rank[items[order]] = np.arange(m)
    movie = rank[ratings.item]
    keep = movie >= 0
    return ratings.rating[keep], movie[keep], ratings.user[keep]


def split_units(movie: np.ndarray, user: np.ndarray, buckets: int) -> np.ndarray:
    """Unit label of each row: its movie, split into ``buckets`` near-equal parts by user id.

    Within a movie the rows are ranked by user id and cut into ``buckets``
    consecutive slices, so unit ``movie * buckets + j`` holds slice ``j``.
    Only public labels (movie, user id) are used, never the rating, so the
    units are a data-independent partition (parallel composition applies).

    Examples
    --------
    >>> split_units(np.array([0, 0, 0, 0, 1, 1]), np.array([9, 3, 5, 1, 2, 4]), 2).tolist()
    [1, 0, 1, 0, 2, 3]
    """
    buckets = check_positive_int(buckets, "buckets")
    order = np.lexsort((user, movie))
    counts = np.bincount(movie)
    if buckets > 1 and counts[counts > 0].min() < buckets:
        raise ValueError(
            f"a movie has only {int(counts[counts > 0].min())} ratings, fewer than "
            f"buckets={buckets}: some sub-databases would be empty; lower the bucket count"
        )
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    pos = np.empty_like(order)
    pos[order] = np.arange(order.size) - starts[movie[order]]
    return movie * buckets + pos * buckets // counts[movie]


def pack_databases(
    ratings: Any, n_databases: int, low: int, high: int, rng: np.random.Generator
) -> list[np.ndarray]:
    """Disjoint databases of ``low..high`` ratings, each a union of whole movies.

    Movies are visited in random order and packed greedily; a movie with
    more than ``high`` ratings is never used.

    Returns
    -------
    list of numpy.ndarray
        The rating labels of each database.

    Raises
    ------
    ValueError
        When the ratings cannot fill ``n_databases`` databases.

    Examples
    --------
    >>> r = synthetic_ratings(1, n_movies=200, n_ratings=20000)
    >>> dbs = pack_databases(r, 5, 1000, 2000, np.random.default_rng(0))
    >>> all(1000 <= d.size <= 2000 for d in dbs)
    True
    """
    n_databases = check_positive_int(n_databases, "n_databases")
    if not (0 < low <= high):
        raise ValueError(f"need 0 < low <= high for database sizes, got {low}, {high}")
    order = np.argsort(ratings.item, kind="stable")
    items, starts, counts = np.unique(ratings.item[order], return_index=True, return_counts=True)
    chosen: list[list[int]] = []
    current: list[int] = []
    size = 0
    target = int(rng.integers(low, high + 1))
    for j in rng.permutation(items.size):  # a loop over movies, not rows
        c = int(counts[j])
        if c > high:
            continue
        if size + c > high:
            if size >= low:
                chosen.append(current)
                current, size = [], 0
                target = int(rng.integers(low, high + 1))
            else:
                continue
        current.append(j)
        size += c
        if size >= target:
            chosen.append(current)
            current, size = [], 0
            target = int(rng.integers(low, high + 1))
        if len(chosen) == n_databases:
            break
    if len(chosen) < n_databases:
        raise ValueError(
            f"the ratings fill only {len(chosen)} disjoint databases of {low}..{high} rows, "
            f"not n_databases={n_databases}; lower n_databases or the size range"
        )
    out = []
    for movies in chosen:
        idx = np.concatenate([order[starts[j] : starts[j] + counts[j]] for j in movies])
        out.append(ratings.rating[np.sort(idx)])
    return out


def random_row_functions(rng: np.random.Generator, shape: Sequence[int], K: int = 5) -> np.ndarray:
    """The paper's random row functions: K uniforms divided by their range.

    Parameters
    ----------
    rng : numpy.random.Generator
    shape : sequence of int
        Leading shape; the result is ``(*shape, K)``.
    K : int

    Returns
    -------
    numpy.ndarray
        Every row function has max - min = 1 (so c_i = 1).

    Examples
    --------
    >>> f = random_row_functions(np.random.default_rng(0), (3,))
    >>> np.allclose(f.max(axis=1) - f.min(axis=1), 1.0)
    True
    """
    X = rng.random((*tuple(shape), K))
    return X / (X.max(axis=-1, keepdims=True) - X.min(axis=-1, keepdims=True))


# --------------------------------------------------------------------------- results


@dataclasses.dataclass
class ExperimentResult:
    """Rows and summary of one experiment (written by :func:`write_outputs`)."""

    name: str
    runs: list[dict[str, Any]]
    summary: list[dict[str, Any]]
    meta: dict[str, Any]
    plot: Callable[[Any, ExperimentResult], None]


def _progress(total: int, desc: str, enabled: bool) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, disable=not enabled, leave=False)


def _mean_sem(x: Sequence[float]) -> tuple[float, float]:
    a = np.asarray(x, dtype=float)
    sem = float(a.std(ddof=1) / math.sqrt(a.size)) if a.size > 1 else float("nan")
    return float(a.mean()), sem


def _check_common(epsilon: float, runs: int, T: int) -> tuple[float, int, int]:
    return (
        check_epsilon(epsilon),
        check_positive_int(runs, "runs"),
        check_positive_int(T, "T"),
    )


# --------------------------------------------------------------------------- heterogeneity


def heterogeneity(
    ratings: Any,
    *,
    h_values: Sequence[int] = (1, 2, 4, 8, 16, 32, 64, 128),
    n_movies: int = 128,
    user_buckets: int = 1,
    n_queries: int = 200,
    runs: int = 20,
    epsilon: float = 1.0,
    T: int = DEFAULT_T,
    passes: int = DEFAULT_PASSES,
    average: bool = False,
    seed: int = 0,
    progress: bool = True,
    note: str = STAND_IN_NOTE,
) -> ExperimentResult:
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
        (:func:`split_units`).  ``mwem_unit`` runs MWEM once per unit.
    n_queries, runs : int
        200 queries per h, 20 runs in the paper.
    epsilon : float, default 1
    T, passes, average
        MWEM parameters (:func:`dpgraph.baselines.mwem`).
    seed : int
        Reproducibility of data splits, queries and every release.
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
    epsilon, runs, T = _check_common(epsilon, runs, T)
    n_movies = check_positive_int(n_movies, "n_movies")
    user_buckets = check_positive_int(user_buckets, "user_buckets")
    n_queries = check_positive_int(n_queries, "n_queries")
    n_units = n_movies * user_buckets
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
    labels, movie_of_row, user = top_movies(ratings, n_movies)
    unit = split_units(movie_of_row, user, user_buckets)
    U = RATING_UNIVERSE
    M = MechanismE(U, epsilon)
    values = U.encode(labels)
    n = int(values.size)
    root = np.random.SeedSequence(seed)
    rows: list[dict[str, Any]] = []
    bar = _progress(runs * len(hs), "heterogeneity", progress)
    for r, ss in enumerate(root.spawn(runs)):
        rel_ss, *h_ss = ss.spawn(1 + len(hs))
        Y = M.release(labels, seed=np.random.default_rng(rel_ss))
        for h, hss in zip(hs, h_ss):
            q_ss, m1_ss, m2_ss = hss.spawn(3)
            rng = np.random.default_rng(q_ss)
            group_of_unit = rng.permutation(np.arange(n_units) % h)
            groups = group_of_unit[unit]
            F = random_row_functions(rng, (n_queries, h))
            q = StatisticalQuery.grouped(F, groups, U)
            truth = q.evaluate_indices(values)
            err_e = np.abs(M.estimate(q, Y).value - truth)
            ans_fn = mwem_statistical(
                values, groups, F, epsilon, T, passes=passes, average=average,
                seed=np.random.default_rng(m1_ss),
            )
            ans_mv = mwem_statistical(
                values, unit, F[:, group_of_unit, :], epsilon, T, passes=passes, average=average,
                seed=np.random.default_rng(m2_ss),
            )
            rows.append(
                {
                    "run": r,
                    "h": h,
                    "n": n,
                    "E_worst_abs": float(err_e.max()),
                    "mwem_function_worst_abs": float(np.abs(ans_fn - truth).max()),
                    "mwem_unit_worst_abs": float(np.abs(ans_mv - truth).max()),
                    "E_mean_abs": float(err_e.mean()),
                    "mwem_function_mean_abs": float(np.abs(ans_fn - truth).mean()),
                    "mwem_unit_mean_abs": float(np.abs(ans_mv - truth).mean()),
                }
            )
            bar.update()
    bar.close()
    summary = []
    for h in hs:
        sel = [row for row in rows if row["h"] == h]
        entry: dict[str, Any] = {"h": h, "n": n}
        for key in ("E_worst_abs", "mwem_function_worst_abs", "mwem_unit_worst_abs",
                    "E_mean_abs", "mwem_function_mean_abs", "mwem_unit_mean_abs"):
            entry[key], entry[key + "_sem"] = _mean_sem([row[key] for row in sel])
        summary.append(entry)
    e = np.array([s["E_worst_abs"] for s in summary])
    mf = np.array([s["mwem_function_worst_abs"] for s in summary])
    mm = np.array([s["mwem_unit_worst_abs"] for s in summary])
    big = np.array(hs) >= 2
    meta = {
        "data": note,
        "epsilon": epsilon,
        "n_rows": n,
        "n_movies": n_movies,
        "user_buckets": user_buckets,
        "n_queries": n_queries,
        "runs": runs,
        "mwem_T": T,
        "mwem_passes": passes,
        "mwem_average": average,
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
    return ExperimentResult("heterogeneity", rows, summary, meta, _plot_heterogeneity)


def _plot_heterogeneity(ax: Any, res: ExperimentResult) -> None:
    s = res.summary
    h = [x["h"] for x in s]
    for key, label, style in (
        ("E_worst_abs", "mechanism E + $q_u$", "o-"),
        ("mwem_function_worst_abs", "MWEM, one sub-database per row function", "s--"),
        ("mwem_unit_worst_abs", "MWEM, one sub-database per movie" if res.meta["user_buckets"] == 1
                                 else "MWEM, one sub-database per unit (movie slice)", "^:"),
    ):
        ax.errorbar(h, [x[key] for x in s], yerr=[x[key + "_sem"] for x in s], fmt=style,
                    capsize=3, label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("heterogeneity h (distinct row functions)")
    ax.set_ylabel("worst-case |error| over 200 queries")


# --------------------------------------------------------------------------- query-set size


def _worst_linear_errors(
    F: np.ndarray, hist_true: np.ndarray, answers: dict[str, Callable[[np.ndarray], np.ndarray]]
) -> dict[str, float]:
    """max over queries and databases of |answer - q(x)| for each answering method.

    ``answers[name](Fc)`` returns normalized answers of shape (Qc, G) for a
    chunk of row functions; chunking keeps memory at O(chunk x G) and the
    truth is computed once per chunk.
    """
    sizes = hist_true.sum(axis=1)
    worst = {name: 0.0 for name in answers}
    for s in range(0, F.shape[0], _QUERY_CHUNK):
        Fc = F[s : s + _QUERY_CHUNK]
        c = Fc.max(axis=1) - Fc.min(axis=1)
        truth = (Fc @ hist_true.T) / (c[:, None] * sizes[None, :])
        for name, answer in answers.items():
            worst[name] = max(worst[name], float(np.abs(answer(Fc) - truth).max()))
    return worst


def _e_answers(M: MechanismE, hist_released: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """Batch q_u answers for many databases via the core's estimator (one formula)."""
    sizes = hist_released.sum(axis=1)

    def answer(Fc: np.ndarray) -> np.ndarray:
        c = Fc.max(axis=1) - Fc.min(axis=1)
        observed = Fc @ hist_released.T  # (Qc, G): sum_i phi(Y_i) per database
        est = unbiased_estimate(
            observed,
            Fc[:, None, None, :],  # (Qc, 1, h=1, K)
            sizes[:, None],  # (G, h=1)
            M.channel,
            normalizer=c[:, None] * sizes[None, :],
        )
        return np.asarray(est.value)

    return answer


def _qss_run(
    r: int,
    ss: np.random.SeedSequence,
    *,
    ratings: Any,
    sizes: Sequence[int],
    n_databases: int,
    rows_range: tuple[int, int],
    epsilon: float,
    T: int,
    passes: int,
    average: bool,
) -> tuple[list[dict[str, Any]], list[int]]:
    """One run of the query-set-size experiment (picklable for process pools)."""
    U = RATING_UNIVERSE
    M = MechanismE(U, epsilon)
    pack_ss, rel_ss, *size_ss = ss.spawn(2 + len(sizes))
    dbs = pack_databases(ratings, n_databases, *rows_range, np.random.default_rng(pack_ss))
    rel_rng = np.random.default_rng(rel_ss)
    hist_true = np.stack([np.bincount(U.encode(d), minlength=U.K) for d in dbs]).astype(float)
    # one release per database, reused for every query set: E is query-set independent
    hist_rel = np.stack(
        [np.bincount(U.encode(M.release(d, seed=rel_rng)), minlength=U.K) for d in dbs]
    ).astype(float)
    e_answer = _e_answers(M, hist_rel)
    rows = []
    for size, qss in zip(sizes, size_ss):
        rng = np.random.default_rng(qss)
        F = random_row_functions(rng, (size,))
        syn = mwem(hist_true, F, epsilon, T, passes=passes, average=average, seed=rng).histogram

        def mwem_answer(Fc: np.ndarray, syn: np.ndarray = syn) -> np.ndarray:
            c = Fc.max(axis=1) - Fc.min(axis=1)
            return (Fc @ syn.T) / (c[:, None] * syn.sum(axis=1)[None, :])

        worst = _worst_linear_errors(F, hist_true, {"E": e_answer, "mwem": mwem_answer})
        rows.append({"run": r, "queries": int(size), "E_worst_abs": worst["E"],
                     "mwem_worst_abs": worst["mwem"]})
    return rows, [int(d.size) for d in dbs]


def query_set_size(
    ratings: Any,
    *,
    sizes: Sequence[int] = tuple(2**k for k in range(6, 21)),
    n_databases: int = 50,
    rows_range: tuple[int, int] = (1000, 2000),
    runs: int = 20,
    epsilon: float = 1.0,
    T: int = DEFAULT_T,
    passes: int = DEFAULT_PASSES,
    average: bool = False,
    seed: int = 0,
    progress: bool = True,
    jobs: int = 1,
    note: str = STAND_IN_NOTE,
) -> ExperimentResult:
    """Worst-case |error| over a random linear query set of growing size.

    Each run packs ``n_databases`` disjoint databases of ``rows_range``
    ratings, releases each once with mechanism E (query-set independent) and,
    for every size, draws a fresh query set, answers it with E + q_u and with
    MWEM run on each database with that query set.

    Parameters
    ----------
    ratings : dpgraph.datasets.Ratings
    sizes : sequence of int
        Query-set sizes (2^6 .. 2^20 in the paper).
    n_databases : int, default 50
    rows_range : (int, int), default (1000, 2000)
    runs : int, default 20
    epsilon, T, passes, average, seed, progress : see :func:`heterogeneity`
    jobs : int, default 1
        Worker processes (runs are independent; results do not depend on it).

    Returns
    -------
    ExperimentResult
    """
    epsilon, runs, T = _check_common(epsilon, runs, T)
    sizes = [check_positive_int(int(s), "sizes") for s in sizes]
    if not sizes:
        raise ValueError("sizes is empty; pass e.g. (64, 128)")
    jobs = check_positive_int(jobs, "jobs")
    root = np.random.SeedSequence(seed)
    rows: list[dict[str, Any]] = []
    db_sizes: list[int] = []
    bar = _progress(runs, "query-set-size (runs)", progress)
    task = {"ratings": ratings, "sizes": sizes, "n_databases": n_databases,
            "rows_range": rows_range, "epsilon": epsilon, "T": T, "passes": passes,
            "average": average}
    if jobs == 1:
        for r, ss in enumerate(root.spawn(runs)):
            run_rows, db_sizes = _qss_run(r, ss, **task)
            rows.extend(run_rows)
            bar.update()
    else:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(_qss_run, r, ss, **task) for r, ss in enumerate(root.spawn(runs))]
            for fut in futures:
                run_rows, db_sizes = fut.result()
                rows.extend(run_rows)
                bar.update()
    bar.close()
    summary = []
    for size in sizes:
        sel = [row for row in rows if row["queries"] == size]
        entry: dict[str, Any] = {"queries": size}
        for key in ("E_worst_abs", "mwem_worst_abs"):
            entry[key], entry[key + "_sem"] = _mean_sem([row[key] for row in sel])
        summary.append(entry)
    e = np.array([s["E_worst_abs"] for s in summary])
    m = np.array([s["mwem_worst_abs"] for s in summary])
    meta = {
        "data": note,
        "epsilon": epsilon,
        "n_databases": n_databases,
        "rows_range": list(rows_range),
        "database_sizes_last_run": db_sizes,
        "runs": runs,
        "mwem_T": T,
        "mwem_passes": passes,
        "mwem_average": average,
        "jobs": jobs,
        "seed": seed,
        "targets": {
            "E_flatness_max_over_min": float(e.max() / e.min()),
            "E_flatness_target": 1.3,
            "mwem_last_over_first": float(m[-1] / m[0]),
            "mwem_spearman_with_size": _spearman(np.array(sizes, float), m),
            "E_below_mwem_all_sizes": bool(np.all(e < m)),
        },
    }
    return ExperimentResult("query-set-size", rows, summary, meta, _plot_query_set_size)


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    if x.size < 2:
        return float("nan")
    from scipy.stats import spearmanr

    return float(spearmanr(x, y).statistic)


def _plot_query_set_size(ax: Any, res: ExperimentResult) -> None:
    s = res.summary
    x = [v["queries"] for v in s]
    ax.errorbar(x, [v["E_worst_abs"] for v in s], yerr=[v["E_worst_abs_sem"] for v in s],
                fmt="o-", capsize=3, label="mechanism E + $q_u$")
    ax.errorbar(x, [v["mwem_worst_abs"] for v in s], yerr=[v["mwem_worst_abs_sem"] for v in s],
                fmt="s--", capsize=3, label="MWEM")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("query-set size |Q|")
    ax.set_ylabel("worst-case |error| over queries and databases")


# --------------------------------------------------------------------------- scaling


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
    n_queries, runs, epsilon, seed, progress : see :func:`heterogeneity`

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
    bar = _progress(runs * len(sizes), "scaling", progress)
    for r, ss in enumerate(run_ss.spawn(runs)):
        rng = np.random.default_rng(ss)
        for n in sizes:
            X = labels_all[:n]
            q = StatisticalQuery.linear(F, n=n, universe=U)
            truth = q(X)
            Y = M.release(X, seed=rng)
            err2 = np.square(M.estimate(q, Y).value - truth)
            rows.append({"run": r, "n": n, "E_worst_sq": float(err2.max())})
            bar.update()
    bar.close()
    a = float(F.min(axis=1).min())
    summary = []
    for n in sizes:
        mean, sem = _mean_sem([row["E_worst_sq"] for row in rows if row["n"] == n])
        # Lemma 2 for a linear query: a_i = a, b_i = a + 1, c = 1 (same for every query)
        bound = bounds.statistical_upper(n, U.K, epsilon, a=a, b=a + 1.0, c=1.0)
        summary.append({"n": n, "E_worst_sq": mean, "E_worst_sq_sem": sem, "lemma2_bound": bound})
    ns = np.array(sizes, float)
    ys = np.array([s["E_worst_sq"] for s in summary])
    slope, slope_se = _loglog_slope(ns, ys)
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
    return ExperimentResult("scaling", rows, summary, meta, _plot_scaling)


def _loglog_slope(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Least-squares slope of log y on log x and its standard error."""
    lx, ly = np.log(x), np.log(y)
    if lx.size < 2:
        return float("nan"), float("nan")
    A = np.vstack([lx, np.ones_like(lx)]).T
    coef, *_ = np.linalg.lstsq(A, ly, rcond=None)
    if lx.size > 2:
        resid = ly - A @ coef
        s2 = float(resid @ resid) / (lx.size - 2)
        se = math.sqrt(s2 / float(np.sum((lx - lx.mean()) ** 2)))
    else:
        se = float("nan")
    return float(coef[0]), se


def _plot_scaling(ax: Any, res: ExperimentResult) -> None:
    s = res.summary
    n = np.array([v["n"] for v in s], float)
    ax.errorbar(n, [v["E_worst_sq"] for v in s], yerr=[v["E_worst_sq_sem"] for v in s],
                fmt="o-", capsize=3, label="mechanism E + $q_u$ (worst of 200 queries)")
    ax.plot(n, [v["lemma2_bound"] for v in s], "k--", label="Lemma 2 upper bound")
    t = res.meta["targets"]
    ax.set_title(f"fitted slope {t['slope']:.3f} ± {t['slope_se']:.3f}", fontsize=9)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("database size n (ratings)")
    ax.set_ylabel("worst-case squared error")


# --------------------------------------------------------------------------- output


def write_outputs(res: ExperimentResult, out_dir: str | Path) -> dict[str, Path]:
    """Write ``<name>.csv``, ``<name>_runs.csv``, ``<name>.json`` and ``<name>.png``.

    Parameters
    ----------
    res : ExperimentResult
    out_dir : str or pathlib.Path
        Created if missing.

    Returns
    -------
    dict
        Paths by kind (``"csv"``, ``"runs"``, ``"json"``, ``"png"``).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "csv": out / f"{res.name}.csv",
        "runs": out / f"{res.name}_runs.csv",
        "json": out / f"{res.name}.json",
        "png": out / f"{res.name}.png",
    }
    for key, table in (("csv", res.summary), ("runs", res.runs)):
        with open(paths[key], "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(table[0].keys()))
            w.writeheader()
            w.writerows(table)
    with open(paths["json"], "w") as f:
        json.dump(res.meta, f, indent=2)
    fig, ax = plt.subplots(figsize=(6.4, 4.4), dpi=100)
    res.plot(ax, res)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.suptitle(f"{res.name} (eps = {res.meta.get('epsilon', 1.0):g}); {res.meta['data']}",
                 fontsize=8)
    fig.tight_layout()
    fig.savefig(paths["png"])
    plt.close(fig)
    return paths


def _print_summary(res: ExperimentResult, paths: dict[str, Path]) -> None:
    print(f"# {res.name}: {res.meta['data']}")
    keys = list(res.summary[0].keys())
    print("  ".join(f"{k:>14}" for k in keys))
    for row in res.summary:
        print("  ".join(f"{v:>14.6g}" if isinstance(v, float) else f"{v:>14}" for v in row.values()))
    print("targets:", json.dumps(res.meta["targets"]))
    print(f"elapsed: {res.meta.get('elapsed_seconds', float('nan')):.1f} s")
    for kind, p in paths.items():
        print(f"wrote {kind}: {p}")


# --------------------------------------------------------------------------- CLI

_QUICK = {
    "heterogeneity": {"h_values": (1, 2, 4), "n_movies": 16, "n_queries": 50, "runs": 2},
    "query-set-size": {"sizes": (64, 256, 1024), "n_databases": 8, "runs": 2},
    "scaling": {"n_queries": 50, "runs": 3},
}


def run_experiment(name: str, args: argparse.Namespace) -> int:
    """Run one experiment from parsed CLI arguments; return an exit code."""
    ratings, note = load_ratings(args.data)
    kw: dict[str, Any] = {"seed": args.seed, "note": note, "progress": not args.no_progress}
    if args.quick:
        kw.update(_QUICK[name])
        if name == "scaling":
            N = len(ratings)
            kw["sizes"] = [N // 16, N // 4, N]
    if args.runs is not None:
        kw["runs"] = args.runs
    if name != "scaling":
        if args.T is not None:
            kw["T"] = args.T
        if args.passes is not None:
            kw["passes"] = args.passes
        kw["average"] = bool(args.average)
    if name == "query-set-size":
        kw["jobs"] = args.jobs
    if name == "heterogeneity" and args.user_buckets != 1:
        kw["user_buckets"] = args.user_buckets
        n_units = kw.get("n_movies", 128) * args.user_buckets
        kw["h_values"] = tuple(2**j for j in range(int(math.log2(n_units)) + 1))
    fn = {"heterogeneity": heterogeneity, "query-set-size": query_set_size, "scaling": scaling}[name]
    t0 = time.perf_counter()
    res = fn(ratings, **kw)
    res.meta["elapsed_seconds"] = time.perf_counter() - t0
    res.meta["quick"] = bool(args.quick)
    paths = write_outputs(res, args.out)
    _print_summary(res, paths)
    return 0


def _add_common(p: argparse.ArgumentParser, mwem_params: bool = True) -> None:
    p.add_argument("--out", required=True, help="output directory for CSV, JSON and PNG")
    p.add_argument("--quick", action="store_true", help="small, fast version (seconds)")
    p.add_argument("--runs", type=int, default=None, help="independent runs (paper: 20)")
    p.add_argument("--seed", type=int, default=0, help="seed for splits, queries and releases")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def register(subparsers: Any) -> None:
    """Add ``heterogeneity``, ``query-set-size``, ``scaling`` and ``continuous``.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The sub-command set of ``dpgraph experiment``.  Each parser stores
        its handler in ``func`` (call ``args.func(args)``; it returns an exit
        code).

    Examples
    --------
    >>> import argparse
    >>> p = argparse.ArgumentParser(prog="dpgraph experiment")
    >>> register(p.add_subparsers(dest="experiment"))
    >>> a = p.parse_args(["scaling", "--out", "o", "--quick"])
    >>> a.quick, callable(a.func)
    (True, True)
    """
    helps = {
        "heterogeneity": "E + q_u vs adapted MWEM as query heterogeneity h grows (paper VI-A1)",
        "query-set-size": "E + q_u vs MWEM as the linear query set grows to 2^20 (paper VI-A2)",
        "scaling": "worst-case squared error vs n against the Lemma 2 bound (paper VI-A3)",
    }
    for name, text in helps.items():
        p = subparsers.add_parser(name, help=text, description=text + ". " + STAND_IN_NOTE + ".")
        _add_common(p)
        p.add_argument(
            "--data", choices=("auto", "movielens", "synthetic"), default="auto",
            help="ratings source: MovieLens 100K (stands in for Netflix) or a synthetic look-alike",
        )
        if name != "scaling":
            p.add_argument("--T", type=int, default=None, help=f"MWEM rounds (default {DEFAULT_T})")
            p.add_argument("--passes", type=int, default=None,
                           help=f"MWEM update sweeps per round (default {DEFAULT_PASSES}; 1 = plain)")
            p.add_argument("--average", action="store_true",
                           help="MWEM releases the average round histogram (textbook variant)")
        if name == "heterogeneity":
            p.add_argument("--user-buckets", type=int, default=1,
                           help="split each movie into B slices by user id; h runs up to 128 B")
        if name == "query-set-size":
            p.add_argument("--jobs", type=int, default=1, help="worker processes (runs in parallel)")
        p.set_defaults(func=lambda a, _n=name: run_experiment(_n, a))
    from dpgraph.experiments import continuous

    continuous.add_parser(subparsers, _add_common)
