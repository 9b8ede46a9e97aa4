"""Query-set-size experiment (paper section VI-A2): E + q_u against MWEM as |Q| grows.

2^6 ... 2^20 random linear queries on 50 disjoint databases of 1000-2000
ratings each (unions of whole movies: no MovieLens movie has 1000 ratings);
worst case over queries and databases, averaged over runs.  E releases each
database once (query-set independent); MWEM runs once per database and query
set.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dpgraph.baselines import mwem
from dpgraph.core import MechanismE, unbiased_estimate
from dpgraph.experiments import _harness as harness
from dpgraph.experiments import ratings_data as data
from dpgraph.validation import Integer, check_positive_int, validate_params

__all__ = ["QUERY_CHUNK", "e_answers", "query_set_size", "worst_linear_errors"]

#: Row functions answered at once (memory O(chunk x databases)).
QUERY_CHUNK = 1 << 15


def worst_linear_errors(
    F: np.ndarray, hist_true: np.ndarray, answers: dict[str, Callable[[np.ndarray], np.ndarray]]
) -> dict[str, float]:
    """max over queries and databases of |answer - q(x)| for each answering method.

    ``answers[name](Fc)`` returns normalized answers of shape (Qc, G) for a
    chunk of row functions; chunking keeps memory at O(chunk x G) and the
    truth is computed once per chunk.
    """
    sizes = hist_true.sum(axis=1)
    worst = dict.fromkeys(answers, 0.0)
    for s in range(0, F.shape[0], QUERY_CHUNK):
        Fc = F[s : s + QUERY_CHUNK]
        c = Fc.max(axis=1) - Fc.min(axis=1)
        truth = (Fc @ hist_true.T) / (c[:, None] * sizes[None, :])
        for name, answer in answers.items():
            worst[name] = max(worst[name], float(np.abs(answer(Fc) - truth).max()))
    return worst


def e_answers(M: MechanismE, hist_released: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
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


def _qss_run(r: int, ss: np.random.SeedSequence, **kwargs: Any) -> tuple[list[dict[str, Any]], list[int]]:
    """One run of the query-set-size experiment (picklable for process pools).

    The keyword arguments are those of :func:`_qss_run_body`, run here with the
    seeded-source warning silenced (worker processes do not inherit the filter).
    """
    with harness.quiet_seeded():
        return _qss_run_body(r, ss, **kwargs)


def _qss_run_body(
    r: int,
    ss: np.random.SeedSequence,
    *,
    ratings: Any,
    sizes: Sequence[int],
    n_databases: int,
    rows_range: tuple[int, int],
    epsilon: float,
    T: int,
    mwem_kw: dict[str, Any],
) -> tuple[list[dict[str, Any]], list[int]]:
    U = data.RATING_UNIVERSE
    M = MechanismE(U, epsilon)
    pack_ss, rel_ss, *size_ss = ss.spawn(2 + len(sizes))
    dbs = data.pack_databases(ratings, n_databases, *rows_range, np.random.default_rng(pack_ss))
    rel_rng = np.random.default_rng(rel_ss)
    hist_true = np.stack([np.bincount(U.encode(d), minlength=U.K) for d in dbs]).astype(float)
    # one release per database, reused for every query set: E is query-set independent
    hist_rel = np.stack(
        [np.bincount(U.encode(M.release(d, seed=rel_rng)), minlength=U.K) for d in dbs]
    ).astype(float)
    e_answer = e_answers(M, hist_rel)
    rows = []
    for size, qss in zip(sizes, size_ss):
        rng = np.random.default_rng(qss)
        F = data.random_row_functions(rng, (size,))
        syn = mwem(hist_true, F, epsilon, T, **mwem_kw, seed=rng).histogram

        def mwem_answer(Fc: np.ndarray, syn: np.ndarray = syn) -> np.ndarray:
            c = Fc.max(axis=1) - Fc.min(axis=1)
            return (Fc @ syn.T) / (c[:, None] * syn.sum(axis=1)[None, :])

        worst = worst_linear_errors(F, hist_true, {"E": e_answer, "mwem": mwem_answer})
        rows.append({"run": r, "queries": int(size), "E_worst_abs": worst["E"],
                     "mwem_worst_abs": worst["mwem"]})
    return rows, [int(d.size) for d in dbs]


@harness.deliberately_seeded
@validate_params(**harness.RUN, n_databases=Integer(), jobs=Integer())
def query_set_size(
    ratings: Any,
    *,
    sizes: Sequence[int] = tuple(2**k for k in range(6, 21)),
    n_databases: int = 50,
    rows_range: tuple[int, int] = (1000, 2000),
    runs: int = 20,
    epsilon: float = 1.0,
    mwem: dict[str, Any] | None = None,
    seed: int = 0,
    progress: bool = True,
    jobs: int = 1,
    note: str = data.STAND_IN_NOTE,
) -> harness.ExperimentResult:
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
    epsilon, mwem, seed, progress
        See :func:`dpgraph.experiments.heterogeneity.heterogeneity`.
    jobs : int, default 1
        Worker processes (runs are independent; results do not depend on it).

    Returns
    -------
    ExperimentResult
    """
    T, mwem_kw = harness.mwem_options(mwem)
    sizes = [check_positive_int(int(s), "sizes") for s in sizes]
    if not sizes:
        raise ValueError("sizes is empty; pass e.g. (64, 128)")
    root = np.random.SeedSequence(seed)
    rows: list[dict[str, Any]] = []
    db_sizes: list[int] = []
    bar = harness.progress_bar(runs, "query-set-size (runs)", progress)
    task = {"ratings": ratings, "sizes": sizes, "n_databases": n_databases,
            "rows_range": rows_range, "epsilon": epsilon, "T": T, "mwem_kw": mwem_kw}
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
            entry[key], entry[key + "_sem"] = harness.mean_sem([row[key] for row in sel])
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
        **harness.mwem_meta(T, mwem_kw),
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
    name = "query-set-size"
    if meta["mwem_variant"] != "replay":
        name += "-" + meta["mwem_variant"]
    return harness.ExperimentResult(name, rows, summary, meta, _plot)


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    if x.size < 2:
        return float("nan")
    from scipy.stats import spearmanr

    return float(spearmanr(x, y).statistic)


def _plot(ax: Any, res: harness.ExperimentResult) -> None:
    s = res.summary
    x = [v["queries"] for v in s]
    ax.errorbar(x, [v["E_worst_abs"] for v in s], yerr=[v["E_worst_abs_sem"] for v in s],
                fmt="o-", capsize=3, label="mechanism E + $q_u$")
    ax.errorbar(x, [v["mwem_worst_abs"] for v in s], yerr=[v["mwem_worst_abs_sem"] for v in s],
                fmt="s--", capsize=3, label=f"MWEM ({res.meta['mwem_variant']})")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("query-set size |Q|")
    ax.set_ylabel("worst-case |error| over queries and databases")
