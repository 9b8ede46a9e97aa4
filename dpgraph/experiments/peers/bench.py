"""The peers benchmark: every method on every release, scored without clipping."""

from __future__ import annotations

import csv
import json
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .data import load_graph, nx_induced, published_figures
from .methods import METHODS, run_method
from .metrics import EPSILONS, METRICS, score, truth_stats
from .report import best_table, format_table, plots, runtime_table

__all__ = ["release_seed", "run", "run_graph", "summarize", "write_csv"]

#: summary statistics of every metric over the releases of one (graph, epsilon, method)
SUMMARY_FIELDS = ("n", "mean", "sd", "q25", "median", "q75", "max")


def release_seed(seed: int, eps: float, rep: int) -> int:
    """The seed of release ``rep`` at ``eps``: every method gets this same seed.

    Examples
    --------
    >>> release_seed(0, 0.5, 0), release_seed(0, 4.0, 3)
    (50, 3400)
    """
    return int(seed) + 1000 * int(rep) + round(float(eps) * 100)


def summarize(rows: list[dict]) -> list[dict]:
    """Long-format summary: per (dataset, epsilon, method, metric) the finite values' statistics.

    ``n`` counts the finite values, so a NaN (a statistic undefined for that
    answer, e.g. the harmonic diameter of the naive release) is visible, not
    silently dropped; ``sd`` is the sample standard deviation (ddof 1), q25
    and q75 the quartiles.
    """
    keys = sorted({(r["dataset"], r["epsilon"], r["method"]) for r in rows},
                  key=lambda k: (k[0], k[1], METHODS.index(k[2]) if k[2] in METHODS else 99))
    out = []
    for ds, eps, meth in keys:
        sel = [r for r in rows if (r["dataset"], r["epsilon"], r["method"]) == (ds, eps, meth)]
        for k in METRICS:
            vals = np.array([r.get(k, np.nan) for r in sel], dtype=float)
            v = vals[np.isfinite(vals)]
            s = {"dataset": ds, "epsilon": eps, "method": meth, "metric": k, "n": int(v.size)}
            if v.size:
                q25, med, q75 = np.percentile(v, [25, 50, 75])
                s.update(mean=float(v.mean()), sd=float(v.std(ddof=1)) if v.size > 1 else 0.0,
                         q25=float(q25), median=float(med), q75=float(q75), max=float(v.max()))
            else:
                s.update({f: float("nan") for f in SUMMARY_FIELDS[1:]})
            out.append(s)
    return out


def write_csv(path: Path, rows: list[dict]) -> None:
    """Write dict rows with the union of their keys as header."""
    keys: list[str] = []
    for r in rows:
        for k in r:
            if k not in keys:
                keys.append(k)
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)


def _read_runs(path: str | Path, methods: tuple, epsilons: tuple) -> list[dict]:
    with open(path, newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["method"] not in methods
                and float(r["epsilon"]) in epsilons]
    for r in rows:
        for k, v in r.items():
            if k not in ("dataset", "method"):
                r[k] = float(v) if v not in ("", None) else float("nan")
        r["rep"] = int(r["rep"])
    return rows


def _warm_up(methods: tuple, hd_sources: int | None) -> None:
    """Run every method once on a small graph: imports and compilation are not metered."""
    import warnings

    import networkx as nx

    from dpgraph.exceptions import SeededReleaseWarning

    H = nx.planted_partition_graph(2, 40, 0.3, 0.05, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeededReleaseWarning)
        for meth in methods:
            run_method(meth, H, sorted(H.nodes()), 1.0, 0, hd_sources)


def run_graph(out: str | Path, G: Any, name: str, dept: dict | None = None,
              epsilons: tuple = EPSILONS, releases: int = 10, seed: int = 0,
              methods: tuple = METHODS, hd_sources: int | None = 200, progress: bool = True,
              print_fn: Callable[[str], None] = print, merge_runs: str | Path | None = None,
              published: bool = False, quick: bool = False) -> dict:
    """Score every method on ``releases`` releases of ``G`` per epsilon; write CSV/PNG/JSON.

    Outputs in ``out``: ``peers_<name>_runs.csv`` (one row per release and
    method), ``peers_<name>_summary.csv`` (mean, sd, quartiles of every
    metric), ``peers_<name>_<metric>.png`` (one figure per metric: the
    methods side by side across epsilon), ``peers_<name>.json`` (the run's
    settings, true statistics, tables and time).  ``published`` prints the
    published ego-Facebook figures beside the rows.
    """
    import warnings

    from tqdm.auto import tqdm

    from dpgraph.exceptions import SeededReleaseWarning
    from dpgraph.graph import release

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise ValueError(f"methods must be among {METHODS}, got {unknown}")
    t_start = time.perf_counter()
    _warm_up(methods, hd_sources)
    truth = truth_stats(G, name, dept)
    nodes = truth["nodes"]
    rows: list[dict] = []
    bar = tqdm(total=len(epsilons) * releases * len(methods), desc=f"peers {name}",
               disable=not progress)
    with warnings.catch_warnings():  # the seeds here are deliberate (an experiment)
        warnings.simplefilter("ignore", SeededReleaseWarning)
        for eps in epsilons:
            for rep in range(releases):
                s = release_seed(seed, eps, rep)
                shared = None
                if rep > 0 and {"naive", "dpgraph", "dpgraph-synth"} & set(methods):
                    shared = release(G, eps, seed=s)  # metered alone on rep 0 only
                for meth in methods:
                    stats = run_method(meth, G, nodes, eps, s, hd_sources, shared)
                    row = {"dataset": name, "epsilon": float(eps), "rep": rep, "method": meth,
                           "seed": s}
                    row.update(score(truth, stats))
                    row.update(seconds=stats["seconds"], peak_mib=stats["peak_mib"],
                               score_seconds=stats["score_seconds"])
                    rows.append(row)
                    bar.update(1)
    bar.close()
    if merge_runs is not None:
        rows = _read_runs(merge_runs, methods, tuple(float(e) for e in epsilons)) + rows
    summary = summarize(rows)
    pubs = {"sok": published_figures("sok"), "pgb": published_figures("pgb")} if published else {}
    write_csv(out / f"peers_{name}_runs.csv", rows)
    write_csv(out / f"peers_{name}_summary.csv", summary)
    figures = plots(out, name, summary, pubs)
    tables = {}
    for eps in epsilons:
        t = format_table(summary, pubs, float(eps), name)
        tables[f"{float(eps):g}"] = t
        print_fn(f"\n### {name}, epsilon = {float(eps):g} (mean +- sd over {releases} releases)")
        print_fn(t)
    rt = runtime_table(summary, name)
    best = best_table(summary, name, pubs)
    print_fn(f"\n### {name}: runtime and peak memory per method\n{rt}")
    print_fn(f"\n### {name}: best method per metric (mean +- sd)\n{best}")
    seconds = time.perf_counter() - t_start
    print_fn(f"\n{name}: {seconds:.0f} s for {len(epsilons)} epsilons x {releases} releases x "
             f"{len(methods)} methods")
    meta = {
        "dataset": name, "graph": G.graph.get("name", name), "nodes": G.number_of_nodes(),
        "edges": G.number_of_edges(), "epsilons": [float(e) for e in epsilons],
        "releases": releases, "seed": seed, "quick": quick, "methods_run": list(methods),
        "hd_sources": hd_sources, "merged_from": str(merge_runs) if merge_runs else None,
        "true": {k: float(truth[k]) for k in ("transitivity", "density", "assortativity",
                                                 "modularity", "triangles", "harmonic_diameter")},
        "seconds": seconds, "figures": figures, "tables": tables, "runtime_table": rt,
        "best_table": best,
    }
    with open(out / f"peers_{name}.json", "w") as fh:
        json.dump(meta, fh, indent=2, default=lambda x: None if isinstance(x, float)
                  and not math.isfinite(x) else float(x))
    return {"summary": summary, "rows": rows, "meta": meta}


def run(out: str | Path, dataset: str = "facebook", quick: bool = False,
        epsilons: tuple | None = None, releases: int | None = None, seed: int = 0,
        methods: tuple = METHODS, hd_sources: int | None = None, progress: bool = True,
        print_fn: Callable[[str], None] = print, merge_runs: str | Path | None = None) -> dict:
    """Run the benchmark on one data set of :data:`~dpgraph.experiments.peers.DATASETS`.

    ``quick`` is a smoke test: eps in {1, 4}, 2 releases, 64 BFS roots for
    the harmonic diameter, and on graphs of more than 1,000 nodes the
    induced subgraph of the 1,000 lowest-numbered nodes (``<dataset>-quick``).
    Otherwise 10 releases per epsilon, eps in {0.5, 1, 2, 4}, 200 BFS roots.
    """
    G, dept = load_graph(dataset, labels=True)
    name = dataset
    if quick and G.number_of_nodes() > 1000:
        keep = sorted(G.nodes())[:1000]
        G = nx_induced(G, keep)
        dept = {v: dept[v] for v in keep} if dept is not None else None
        name = f"{dataset}-quick"
    if epsilons is None:
        epsilons = (1.0, 4.0) if quick else EPSILONS
    if releases is None:
        releases = 2 if quick else 10
    if hd_sources is None:
        hd_sources = 64 if quick else 200
    return run_graph(out, G, name, dept, tuple(epsilons), releases, seed, tuple(methods),
                     hd_sources, progress, print_fn, merge_runs,
                     published=dataset == "facebook" and not quick, quick=quick)
