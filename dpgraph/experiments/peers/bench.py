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
from .metrics import (
    EPSILONS,
    METHODS,
    METRICS,
    ari,
    count_vector,
    degree_kl,
    graph_metrics,
    naive_metrics,
    nmi,
    partition_labels,
    sequence_from_hist,
    wasserstein,
)
from .report import format_table, plots

__all__ = ["run", "score_method", "summarize"]



def _ratio(num: float, den: float) -> float:
    """num / den, NaN (not inf) when the true value is 0: a relative error is undefined there."""
    return num / den if den != 0 else float("nan")


def score_method(G: Any, truth: dict, method: str, m: dict, eps: float, rep: int) -> dict:
    """One row of the benchmark: the SoK metrics of one method's answer, never clipped.

    ``m`` holds the method's statistics (keys as :func:`graph_metrics`
    returns, or ``degree_hist`` for a deconvolved histogram).  The reported
    modularity ``m["modularity"]`` is scored as given: an estimate outside
    [-1/2, 1] shows up as a large error, it is not clipped first.
    """
    import networkx as nx

    nodes = truth["nodes"]
    n = len(nodes)
    row: dict = {"dataset": truth["name"], "epsilon": eps, "rep": rep, "method": method}
    row["transitivity_err"] = abs(m["transitivity"] - truth["transitivity"])
    row["transitivity_rel"] = _ratio(row["transitivity_err"], truth["transitivity"])
    if "degree_hist" in m:
        row["degree_kl"] = degree_kl(truth["degrees"], m["degree_hist"])
        seq = sequence_from_hist(m["degree_hist"], n)
    else:
        hist = np.bincount(m["degrees"], minlength=n)[:n] / n
        row["degree_kl"] = degree_kl(truth["degrees"], hist)
        seq = m["degrees"]
    row["degree_w1"] = wasserstein(truth["count_vector"], count_vector(seq))
    row["modularity_err"] = abs(m["modularity"] - truth["modularity"])
    if m["partition"] is not None:
        lab = partition_labels(m["partition"], nodes)
        row["nmi"], row["ari"] = nmi(truth["labels"], lab), ari(truth["labels"], lab)
        q_true = nx.community.modularity(G, m["partition"])
        row["partition_true_modularity"] = q_true
        if m.get("reported_modularity_of_partition") is not None:
            row["modularity_reported_err"] = abs(m["reported_modularity_of_partition"] - q_true)
        if truth.get("dept") is not None:
            row["nmi_dept"], row["ari_dept"] = nmi(truth["dept"], lab), ari(truth["dept"], lab)
    row["density_err"] = abs(m["density"] - truth["density"])
    row["assortativity_err"] = abs(m["assortativity"] - truth["assortativity"])
    row["clustering_w1"] = wasserstein(truth["clustering"], m["clustering"])
    for k in ("triangles_rel", "triangles_covered", "resolvable", "seconds"):
        row[k] = m.get(k, float("nan"))
    for k in METRICS:
        row.setdefault(k, float("nan"))
    return row


def _rows_for_release(G: Any, truth: dict, R: Any, eps: float, rep: int,
                      naive_louvain: bool, seed: int, methods: tuple = METHODS) -> list[dict]:
    from dpgraph.baselines import privgraph, tmf
    from dpgraph.graph.analytics import local_clustering

    nodes = truth["nodes"]
    rows = []
    if "naive" in methods:
        t0 = time.perf_counter()
        nv = naive_metrics(R, naive_louvain)
        nv["seconds"] = time.perf_counter() - t0
        rows.append(score_method(G, truth, "naive", nv, eps, rep))
    if "dpgraph" in methods:
        t0 = time.perf_counter()
        tri = R.triangles()
        com = R.communities(seed=seed, proper=False)  # scored unclipped
        est = {
            "transitivity": R.transitivity().value,
            "degree_hist": R.degree_distribution(),
            "density": R.density().value,
            "assortativity": R.degree_assortativity().value,
            "clustering": local_clustering(R),
            "partition": com.partition,
            # the held-out estimate of the found partition's modularity, unclipped
            "modularity": com.modularity.value,
            "reported_modularity_of_partition": com.modularity.value,
            "resolvable": float(com.resolvable),
            "triangles_rel": _ratio(abs(tri.value - truth["triangles"]), truth["triangles"]),
        }
        lo, hi = tri.ci(0.95)
        est["triangles_covered"] = float(lo <= truth["triangles"] <= hi)
        est["seconds"] = time.perf_counter() - t0
        rows.append(score_method(G, truth, "dpgraph", est, eps, rep))
    if "dpgraph-synth" in methods:
        t0 = time.perf_counter()
        synth = graph_metrics(R.synthesize(seed=seed), nodes)
        synth["seconds"] = time.perf_counter() - t0
        rows.append(score_method(G, truth, "dpgraph-synth", synth, eps, rep))
    for name, fn, off in (("TmF", tmf, 7919), ("PrivGraph", privgraph, 104729)):
        if name in methods:
            t0 = time.perf_counter()
            res = fn(G, eps, seed=seed + off)
            gm = graph_metrics(res.graph, nodes)
            gm["seconds"] = time.perf_counter() - t0
            rows.append(score_method(G, truth, name, gm, eps, rep))
    return rows


def _truth(G: Any, name: str, dept: dict | None) -> dict:
    import networkx as nx

    from dpgraph.graph.encoding import canonical_node_order

    nodes = canonical_node_order(G.nodes())
    m = graph_metrics(G, nodes)
    m["name"] = name
    m["nodes"] = nodes
    m["labels"] = partition_labels(m["partition"], nodes)
    m["count_vector"] = count_vector(m["degrees"])
    m["triangles"] = sum(nx.triangles(G).values()) / 3
    m["dept"] = np.array([dept[v] for v in nodes]) if dept is not None else None
    return m


def summarize(rows: list[dict]) -> list[dict]:
    """Mean of every metric per (dataset, epsilon, method) over the finite values.

    ``<metric>_n`` counts the finite values, so a NaN (a statistic undefined
    for that answer, e.g. assortativity of a graph whose degrees are all
    equal) is visible in the summary rather than silently dropped.
    """
    keys = sorted({(r["dataset"], r["epsilon"], r["method"]) for r in rows},
                  key=lambda k: (k[0], k[1], METHODS.index(k[2])))
    out = []
    for ds, eps, meth in keys:
        sel = [r for r in rows if (r["dataset"], r["epsilon"], r["method"]) == (ds, eps, meth)]
        s = {"dataset": ds, "epsilon": eps, "method": meth, "releases": len(sel)}
        for k in METRICS + ("seconds",):
            vals = np.array([r.get(k, np.nan) for r in sel], dtype=float)
            ok = np.isfinite(vals)
            s[k] = float(vals[ok].mean()) if ok.any() else float("nan")
            s[k + "_n"] = int(ok.sum())
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


def _coverage(G: Any, eps: float, reps: int, seed: int, truth_t: float, progress: bool) -> dict:
    """Coverage of the triangle count's 95% interval over many releases."""
    from tqdm.auto import tqdm

    import dpgraph

    hits, rel = [], []
    for r in tqdm(range(reps), desc=f"triangle CI coverage eps={eps:g}", disable=not progress,
                  leave=False):
        R = dpgraph.release(G, eps, seed=seed + 100_000 + r)
        t = R.triangles()
        lo, hi = t.ci(0.95)
        hits.append(lo <= truth_t <= hi)
        rel.append(_ratio(abs(t.value - truth_t), truth_t))
    k = int(np.sum(hits))
    return {"epsilon": eps, "releases": reps, "covered": k, "coverage": k / reps,
            "coverage_se": math.sqrt(0.95 * 0.05 / reps), "mean_rel_error": float(np.mean(rel))}


def run(out: str | Path, dataset: str = "facebook", quick: bool = False,
        epsilons: tuple = EPSILONS, releases: int | None = None, seed: int = 0,
        naive_louvain_releases: int | None = None, coverage_releases: int | None = None,
        progress: bool = True, print_fn: Callable[[str], None] = print,
        methods: tuple = METHODS, merge_runs: str | Path | None = None) -> dict:
    """Run the benchmark on one dataset and write CSV/PNG/JSON to ``out``; returns the summary.

    ``methods`` restricts which rows are computed; ``merge_runs`` (a
    ``peers_<dataset>_runs.csv`` of an earlier run with the same seeds) supplies
    the rows of the other methods, so one method can be re-run alone.

    ``quick`` uses 2 releases per epsilon, eps in {1, 4}, and on graphs of
    more than 1,000 nodes the 1,000 lowest-numbered nodes' induced subgraph;
    its numbers are a smoke test, not the benchmark.
    """
    import warnings

    from tqdm.auto import tqdm

    import dpgraph
    from dpgraph.exceptions import SeededReleaseWarning


    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    G, dept = load_graph(dataset, labels=True)
    name = dataset
    if quick:
        epsilons = (1.0, 4.0)
        if G.number_of_nodes() > 1000:
            G = nx_induced(G, sorted(G.nodes())[:1000])
            name = f"{dataset}-quick"
    releases = releases if releases is not None else (2 if quick else 10)
    naive_louvain_releases = (naive_louvain_releases if naive_louvain_releases is not None
                              else (1 if quick else 2))
    coverage_releases = coverage_releases if coverage_releases is not None else (0 if quick else 100)
    t_start = time.perf_counter()
    truth = _truth(G, name, dept)
    published = published_figures() if dataset == "facebook" and not quick else {}
    rows: list[dict] = []
    deg_example = None
    bar = tqdm(total=len(epsilons) * releases, desc=f"peers {name}", disable=not progress)
    with warnings.catch_warnings():  # the seeds here are deliberate (an experiment)
        warnings.simplefilter("ignore", SeededReleaseWarning)
        for eps in epsilons:
            for rep in range(releases):
                R = dpgraph.release(G, eps, seed=seed + 1000 * rep + int(eps * 100))
                rows.extend(_rows_for_release(G, truth, R, eps, rep, rep < naive_louvain_releases,
                                              seed + rep, methods))
                if deg_example is None and eps == 1.0:
                    deg_example = (truth["degrees"], R.released_degrees(),
                                   R.degree_distribution(), eps)
                bar.update(1)
        bar.close()
        coverage = []
        if coverage_releases:
            coverage.append(_coverage(G, 1.0, coverage_releases, seed, truth["triangles"],
                                      progress))
    if merge_runs is not None:
        with open(merge_runs, newline="") as fh:
            old_rows = [r for r in csv.DictReader(fh) if r["method"] not in methods
                        and float(r["epsilon"]) in epsilons]
        for r in old_rows:
            for k, v in r.items():
                if k not in ("dataset", "method"):
                    r[k] = float(v) if v not in ("", None) else float("nan")
            r["rep"] = int(r["rep"])
        rows = old_rows + rows
    summary = summarize(rows)
    write_csv(out / f"peers_{name}_runs.csv", rows)
    write_csv(out / f"peers_{name}.csv", summary)
    if published:
        prow = [{"metric": k, "epsilon": e, **v} for k, d in published.items()
                for e, v in sorted(d.items())]
        write_csv(out / f"peers_{name}_published.csv", prow)
    plots(out, name, summary, published, deg_example)
    tables = {}
    for eps in epsilons:
        t = format_table(summary, published, eps, name)
        tables[str(eps)] = t
        print_fn(f"\n### {name}, epsilon = {eps:g}"
                 + ("" if eps in published.get("transitivity_err", {}) or not published
                    else "  (no published figure at this epsilon; the SoK grid has 3 and 4.5)"))
        print_fn(t)
    if published:
        print_fn("\nPublished rows: figures of the SoK study of edge-DP graph release "
                 "(ndsi6382/SoK-PAoRDPG, Facebook_<Metric>.csv), means over 10 trials; "
                 "DER is flagged there as not private.")
    for c in coverage:
        print_fn(f"\nTriangle 95% CI coverage at eps={c['epsilon']:g}: {c['covered']}/"
                 f"{c['releases']} = {c['coverage']:.3f} (binomial se {c['coverage_se']:.3f}); "
                 f"mean relative error {c['mean_rel_error']:.4f}")
    meta = {
        "dataset": name, "graph": G.graph.get("name", name), "nodes": G.number_of_nodes(),
        "edges": G.number_of_edges(), "epsilons": list(epsilons), "releases": releases,
        "naive_louvain_releases": naive_louvain_releases, "seed": seed, "quick": quick,
        "methods_run": list(methods), "merged_from": str(merge_runs) if merge_runs else None,
        "true": {k: float(truth[k]) for k in ("transitivity", "density", "assortativity",
                                                 "modularity", "triangles")},
        "coverage": coverage, "seconds": time.perf_counter() - t_start,
        "published_source": "ndsi6382/SoK-PAoRDPG@82be3ba Edge-DP/Evaluation_Utility/Results/"
                            "Errors/csvs (package data dpgraph/experiments/reference/sok_facebook)"
        if published else None,
        "tables": tables,
    }
    with open(out / f"peers_{name}.json", "w") as fh:
        json.dump(meta, fh, indent=2, default=float)
    return {"summary": summary, "rows": rows, "meta": meta}
