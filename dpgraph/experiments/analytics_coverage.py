"""Coverage of the analytics' error bars over the graph zoo and the real graphs.

For every graph and epsilon, ``reps`` independent seeded releases; for each
statistic the truth (networkx on the input graph), the reported value, its
95% interval, whether the interval covers the truth and whether the release
resolves the statistic (``Estimate.resolved``).  Statistics:
edge count, degrees (pooled over nodes), triangles, wedges, transitivity,
average clustering, modularity of a given partition (Louvain on the true
graph, chosen without looking at the release), degree assortativity.

Run ``python -m dpgraph.experiments.analytics_coverage --reps 8 --out DIR``;
it prints one table per statistic (rows: graphs, columns: epsilon) and the
pooled coverage, and writes ``analytics_coverage.csv`` into ``DIR``.
"""

from __future__ import annotations

import argparse
import csv
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["EPSILONS", "STATISTICS", "format_tables", "pooled", "run", "run_graph", "truths"]

EPSILONS = (0.5, 1.0, 2.0, 4.0)
STATISTICS = ("edges", "degrees", "triangles", "wedges", "transitivity", "avg_clustering",
              "modularity", "assortativity")


def truths(G: Any, seed: int = 0) -> dict:
    """True values of the statistics on the input graph (and the fixed partition)."""
    import networkx as nx

    part = nx.community.louvain_communities(G, seed=seed)
    tri = sum(nx.triangles(G).values()) / 3
    deg = np.array([d for _, d in G.degree(list(G.nodes()))], dtype=float)
    return {
        "edges": float(G.number_of_edges()),
        "degrees": deg,
        "triangles": float(tri),
        "wedges": float(np.sum(deg * (deg - 1) / 2)),
        "transitivity": float(nx.transitivity(G)),
        "avg_clustering": float(nx.average_clustering(G)),
        "modularity": float(nx.community.modularity(G, part)),
        "assortativity": float(nx.degree_assortativity_coefficient(G)),
        "partition": part,
    }


def _record(name: str, est: Any, truth: float) -> dict:
    lo, hi = est.ci(0.95)
    v = float(est.value)
    return {"stat": name, "truth": truth, "value": v, "lo": float(lo), "hi": float(hi),
            "covered": bool(lo <= truth <= hi), "resolved": bool(est.resolved),
            "finite": bool(np.isfinite([v, lo, hi]).all()),
            "in_range": bool(est.feasible_range[0] <= lo <= v <= hi <= est.feasible_range[1])}


def run_graph(G: Any, graph: str, eps: float, reps: int, seed0: int = 0,
              truth: dict | None = None) -> list[dict]:
    """Rows (one per statistic and release) for one graph at one epsilon."""
    from ..exceptions import SeededReleaseWarning
    from ..graph import release

    truth = truths(G) if truth is None else truth
    rows = []
    nodes = list(G.nodes())
    for r in range(reps):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SeededReleaseWarning)
            R = release(G, eps, seed=seed0 + r)
        t0 = time.perf_counter()
        recs = [
            _record("edges", R.number_of_edges(), truth["edges"]),
            _record("triangles", R.triangles(), truth["triangles"]),
            _record("wedges", R.wedges(), truth["wedges"]),
            _record("transitivity", R.transitivity(), truth["transitivity"]),
            _record("avg_clustering", R.average_clustering(), truth["avg_clustering"]),
            _record("modularity", R.modularity(truth["partition"]), truth["modularity"]),
            _record("assortativity", R.degree_assortativity(), truth["assortativity"]),
        ]
        d = R.degree(nodes)
        lo, hi = d.estimate.ci(0.95)
        td = truth["degrees"]
        hit, ok = (lo <= td) & (td <= hi), np.asarray(d.estimate.resolved, dtype=bool)
        recs.append({"stat": "degrees", "truth": float(td.mean()), "value": float(np.mean(d.estimate.value)),
                     "lo": float(np.mean(lo)), "hi": float(np.mean(hi)),
                     "covered": float(np.mean(hit)),
                     "nodes_resolved": int(ok.sum()), "nodes_resolved_covered": int(hit[ok].sum()),
                     # the share of nodes whose degree the release resolves
                     "resolved": float(np.mean(ok)),
                     "finite": bool(np.isfinite(d.estimate.value).all()),
                     "in_range": bool(np.all((lo <= d.estimate.value) & (d.estimate.value <= hi)))})
        secs = time.perf_counter() - t0
        for rec in recs:
            rec.update(graph=graph, eps=eps, rep=r, seconds=secs)
        rows.extend(recs)
    return rows


def pooled(rows: list[dict]) -> dict:
    """Per statistic: pooled coverage, number of releases, fraction resolved."""
    out = {}
    for s in STATISTICS:
        rs = [r for r in rows if r["stat"] == s]
        if rs:
            cov = float(np.mean([float(r["covered"]) for r in rs]))
            if s == "degrees":  # pooled over the nodes whose degree is resolved
                k = sum(r["nodes_resolved"] for r in rs)
                cov_res = sum(r["nodes_resolved_covered"] for r in rs) / k if k else float("nan")
            else:
                res = [r for r in rs if r["resolved"] is True]
                cov_res = float(np.mean([float(r["covered"]) for r in res])) if res else float("nan")
            share = float(np.mean([float(r["resolved"]) for r in rs]))
            out[s] = {"coverage": cov, "n": len(rs), "resolved": share,
                      "coverage_resolved": cov_res,
                      "valid": all(r["finite"] and r["in_range"] for r in rs)}
    return out


def _graphs(names: list[str], n: int | None) -> list[tuple[str, Any]]:
    from dpgraph.datasets import DatasetNotFoundError
    from dpgraph.experiments import zoo

    out = []
    for name in names:
        if name in zoo.ZOO:
            out.append((name, zoo.generate(name, n=n, seed=0)))
        else:
            try:
                out.append((name, zoo.real(name)))
            except DatasetNotFoundError as exc:
                print(f"skipping {name}: {exc}")
    return out


def run(names: list[str] | None = None, epsilons: tuple = EPSILONS, reps: int = 8,
        n: int | None = None, progress: bool = True) -> list[dict]:
    """All rows for the named graphs (default: the zoo and the three real graphs)."""
    from dpgraph.experiments import zoo

    names = names or (zoo.names() + list(zoo.REAL))
    everything = zoo.names() + list(zoo.REAL)
    rows: list[dict] = []
    for graph, G in _graphs(names, n):
        truth = truths(G)
        # distinct seeds per graph: graphs of equal size would otherwise get the same flips
        g = everything.index(graph) if graph in everything else len(everything)
        for k, eps in enumerate(epsilons):
            rows.extend(run_graph(G, graph, eps, reps, seed0=100_000 * g + 1000 * k, truth=truth))
            if progress:
                print(f"  {graph} eps={eps} done", flush=True)
    return rows


def _cell(rs: list[dict]) -> str:
    cov = np.mean([float(r["covered"]) for r in rs])
    res = np.mean([r["resolved"] for r in rs])
    val = np.mean([r["value"] for r in rs])
    return f"{val:.4g} ({cov:.2f}{'' if res == 1 else f', {res:.0%} res'})"


def format_tables(rows: list[dict]) -> str:
    """Markdown tables: per statistic, graphs x epsilon, cells 'mean value (coverage)'."""
    graphs = list(dict.fromkeys(r["graph"] for r in rows))
    epss = sorted({r["eps"] for r in rows})
    out = []
    for s in STATISTICS:
        out.append(f"\n#### {s}\n")
        out.append("| graph | truth | " + " | ".join(f"eps={e:g}" for e in epss) + " |")
        out.append("|---" * (len(epss) + 2) + "|")
        for g in graphs:
            rs = [r for r in rows if r["graph"] == g and r["stat"] == s]
            if not rs:
                continue
            cells = [_cell([r for r in rs if r["eps"] == e]) for e in epss]
            out.append(f"| {g} | {rs[0]['truth']:.4g} | " + " | ".join(cells) + " |")
    out.append("\n#### pooled 95% coverage\n")
    out.append("| statistic | releases | coverage | resolved | coverage when resolved |")
    out.append("|---|---|---|---|---|")
    for s, p in pooled(rows).items():
        out.append(f"| {s} | {p['n']} | {p['coverage']:.3f} | {p['resolved']:.2f} | "
                   f"{p['coverage_resolved']:.3f} |")
    out.append("\n#### releases in which the statistic is resolved (degrees: share of nodes)\n")
    out.append("| statistic | " + " | ".join(f"eps={e:g}" for e in epss) + " |")
    out.append("|---" * (len(epss) + 1) + "|")
    for s in STATISTICS:
        cells = []
        for e in epss:
            rs = [r for r in rows if r["stat"] == s and r["eps"] == e]
            if s == "degrees":
                cells.append(f"{np.mean([r['resolved'] for r in rs]):.2f}" if rs else "-")
            else:
                cells.append(f"{sum(r['resolved'] is True for r in rs)}/{len(rs)}")
        out.append(f"| {s} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=8)
    ap.add_argument("--n", type=int, default=None, help="nodes of the zoo graphs (default theirs)")
    ap.add_argument("--graphs", nargs="*", default=None)
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args(argv)
    rows = run(a.graphs, reps=a.reps, n=a.n)
    print(format_tables(rows))
    if a.out is not None:
        a.out.mkdir(parents=True, exist_ok=True)
        keys = ["graph", "eps", "rep", "stat", "truth", "value", "lo", "hi", "covered",
                "resolved", "finite", "in_range", "seconds"]
        with open(a.out / "analytics_coverage.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=keys, extrasaction="ignore")
            w.writeheader()
            w.writerows(rows)
    return 0 if all(p["valid"] for p in pooled(rows).values()) else 1


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
