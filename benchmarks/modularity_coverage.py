"""How often the 95% interval of ``R.communities()``'s modularity covers the partition's TRUE modularity.

``R.communities()`` reports, beside its partition, an estimate of that
partition's modularity on the true graph with a 95% interval (held-out score
part of the pairs).  This script measures the interval's coverage: for every
graph and epsilon, ``--releases`` releases (seeds 0, 1, ...), each scored by
whether the interval contains ``networkx.community.modularity(G, partition)``
on the true graph.

Graphs: the zoo's generated kinds (planted partitions sparse and dense, a
power-law configuration model, Holme-Kim, Watts-Strogatz, a random geometric
graph) at their default sizes, and email-Eu-core and ego-Facebook when they
are available locally (``DPGRAPH_DATA_DIR``).  A release with no resolvable
structure reports one community with modularity exactly 0 and std 0, which
covers the truth (0) by construction: those are counted apart ("trivial"),
and the rates are given over every release and over the resolved ones.

The table: per cell the count covered / releases, and the pooled rate with
an exact two-sided binomial p-value against 0.95 (``scipy.stats.binomtest``);
the target is a coverage within 95% +- 3%.  Nothing is clipped or dropped: a
cell that fails is printed as such.

Usage::

    PYTHONPATH=$PWD python benchmarks/modularity_coverage.py [--releases 20] [--quick]
        [--epsilon 1 2] [--graphs sbm powerlaw ...] [--markdown]
"""

from __future__ import annotations

import argparse
import time

import networkx as nx
import numpy as np
from _common import machine, table

LEVEL = 0.95
TOLERANCE = 0.03  # the target: coverage within LEVEL +- TOLERANCE
ZOO_KINDS = ("sbm", "dense-sbm", "powerlaw", "holme-kim", "watts-strogatz", "geometric")
REAL = ("email-eu-core", "facebook")


def load(name: str) -> nx.Graph | None:
    """A zoo graph (seed 0) or a real one (None when it is not available locally)."""
    from dpgraph import datasets
    from dpgraph.experiments import zoo

    if name in zoo.names():
        return zoo.generate(name, seed=0)
    if not datasets.available(name):
        print(f"{name} not found locally (set DPGRAPH_DATA_DIR); skipping it")
        return None
    return {"email-eu-core": datasets.email_eu_core, "facebook": datasets.facebook}[name]()


def cell(G: nx.Graph, eps: float, releases: int) -> dict:
    """Coverage of one (graph, eps) cell over ``releases`` releases."""
    import dpgraph

    covered = trivial = trivial_covered = 0
    widths, misses = [], []
    for s in range(releases):
        R = dpgraph.release(G, eps, seed=s)
        com = R.communities(seed=s)
        lo, hi = com.modularity.ci(LEVEL)
        q = nx.community.modularity(G, com.partition)
        inside = bool(lo - 1e-12 <= q <= hi + 1e-12)  # one community: Q = 1 - 1, within rounding
        covered += inside
        if not com.resolvable:
            trivial += 1
            trivial_covered += inside
        else:
            widths.append(hi - lo)
            if not inside:
                misses.append(f"{q:.3f} not in [{lo:.3f}, {hi:.3f}]")
    return dict(releases=releases, covered=covered, trivial=trivial,
                trivial_covered=trivial_covered, width=float(np.mean(widths)) if widths else
                float("nan"), misses=misses)


def binom_p(k: int, n: int) -> float:
    """Exact two-sided binomial p-value of k successes in n against LEVEL."""
    from scipy.stats import binomtest

    return float(binomtest(k, n, LEVEL).pvalue) if n else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--releases", type=int, default=None, help="releases a cell (default 20; "
                    "--quick: 5)")
    ap.add_argument("--quick", action="store_true", help="5 releases a cell")
    ap.add_argument("--epsilon", type=float, nargs="+", default=[1.0, 2.0])
    ap.add_argument("--graphs", nargs="+", default=[*ZOO_KINDS, *REAL],
                    help="zoo kinds and/or email-eu-core, facebook")
    ap.add_argument("--markdown", action="store_true", help="also print a markdown table")
    a = ap.parse_args()
    releases = a.releases or (5 if a.quick else 20)
    print(machine())
    t0 = time.perf_counter()
    rows, k_all, n_all, k_res, n_res = [], 0, 0, 0, 0
    for name in a.graphs:
        G = load(name)
        if G is None:
            continue
        for eps in a.epsilon:
            t1 = time.perf_counter()
            c = cell(G, eps, releases)
            res_n = c["releases"] - c["trivial"]
            res_k = c["covered"] - c["trivial_covered"]
            k_all, n_all = k_all + c["covered"], n_all + c["releases"]
            k_res, n_res = k_res + res_k, n_res + res_n
            rows.append({"graph": f"{name} ({G.number_of_nodes():,} nodes)", "eps": eps,
                         "covered": f"{c['covered']}/{c['releases']}",
                         "resolved covered": f"{res_k}/{res_n}",
                         "trivial": c["trivial"],
                         "mean width": "-" if not res_n else f"{c['width']:.3f}",
                         "p (all)": f"{binom_p(c['covered'], c['releases']):.3g}",
                         "seconds": f"{time.perf_counter() - t1:.0f}"})
            print(rows[-1], *c["misses"], sep="\n    ", flush=True)
    cols = ["graph", "eps", "covered", "resolved covered", "trivial", "mean width", "p (all)",
            "seconds"]
    print()
    print(table(rows, cols))
    verdict = []
    for label, k, n in (("every release", k_all, n_all), ("resolved releases", k_res, n_res)):
        rate = k / n if n else float("nan")
        met = abs(rate - LEVEL) <= TOLERANCE
        verdict.append(f"pooled over {label}: {k}/{n} = {rate:.3f}, exact two-sided binomial "
                       f"p = {binom_p(k, n):.3g} against {LEVEL}; target {LEVEL} +- {TOLERANCE}: "
                       f"{'met' if met else 'MISSED'}")
    print("\n".join(verdict))
    print(f"total {time.perf_counter() - t0:.0f} s; {machine()}")
    if a.markdown:
        print("\n| " + " | ".join(cols) + " |\n|" + "---|" * len(cols))
        for r in rows:
            print("| " + " | ".join(str(r[c]) for c in cols) + " |")


if __name__ == "__main__":
    main()
