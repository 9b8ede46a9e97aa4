"""The degree distribution on heavy-tailed graphs of many low-degree nodes, old fits vs new.

Share 0 (the paper's mechanism: the histogram from the released pairs alone).
For each graph and epsilon, over ``--reps`` releases, three fits of the same
release in the same run:

* ``older``: the single log-normal on a 28 x 64 grid (``bench_degree.old_degree_distribution``,
  a frozen copy kept in the benchmarks), which forces every degree >= 1;
* ``main``: the fit of ``git show main:dpgraph/graph/analytics/degree_fit.py`` (two families
  and an additive location average), loaded from git into the package for the call only;
* ``new``: ``R.degree_distribution()`` of this tree.

KL is KL(true histogram || fit) (``dpgraph.experiments.peers.degree_kl``: both
normalized, machine-epsilon smoothed): mean and worst over the releases.  "mass 0" is
the fit's fraction of nodes at degree 0 (mean over releases) beside the truth's.
Times are the mean seconds per fit, with the load average beside them (a shared
machine).  Graphs: the held-out heavy-tailed ones (internet AS topology, Barabasi-Albert
m = 1 and 2, Holme-Kim powerlaw_cluster, a configuration model with zipf degrees, its
largest component), and the controls the fit must keep (ego-Facebook, G(n, p), a
planted partition of 10^4 nodes).  Every number is printed, none dropped.

    python benchmarks/bench_degree_heavy_tail.py [--reps R] [--quick] [--graphs a,b] [--eps 1,4]
        [--main REF]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import subprocess
import sys
import time
import warnings

import networkx as nx
import numpy as np
from _common import table

import dpgraph
import dpgraph.graph.analytics.degree_fit  # loaded before main_fit swaps it
from dpgraph.experiments.peers import degree_kl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_degree import old_degree_distribution

warnings.simplefilter("ignore")

_FIT = "dpgraph.graph.analytics.degree_fit"


def _graph(name: str, n: int, seed: int = 1) -> nx.Graph:
    if name == "internet-as":
        G = nx.random_internet_as_graph(n, seed=seed)
    elif name == "ba-1":
        G = nx.barabasi_albert_graph(n, 1, seed=seed)
    elif name == "ba-2":
        G = nx.barabasi_albert_graph(n, 2, seed=seed)
    elif name == "powerlaw-cluster":
        G = nx.powerlaw_cluster_graph(n, 2, 0.3, seed=seed)
    elif name == "config-zipf":
        rng = np.random.default_rng(seed)
        seq = np.minimum(rng.zipf(2.3, size=n), n // 10)
        seq[-1] += int(seq.sum() % 2)
        M = nx.Graph(nx.configuration_model(seq.tolist(), seed=seed))
        M.remove_edges_from(nx.selfloop_edges(M))
        G = M.subgraph(max(nx.connected_components(M), key=len)).copy()
    elif name == "gnp":
        G = nx.fast_gnp_random_graph(n, 10.0 / n, seed=seed)
    elif name == "planted-partition":
        from dpgraph.experiments import zoo

        G = zoo.generate("sbm", n=n, seed=seed)
    elif name == "facebook":
        from dpgraph import datasets

        G = datasets.facebook()
    else:
        raise ValueError(f"unknown graph {name!r}")
    return nx.convert_node_labels_to_integers(G)


@contextlib.contextmanager
def main_fit(ref: str):
    """The package's degree_fit replaced by the one at git ``ref`` for the duration."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    src = subprocess.run(["git", "show", f"{ref}:dpgraph/graph/analytics/degree_fit.py"],
                         cwd=root, check=True, capture_output=True, text=True).stdout
    pkg = sys.modules["dpgraph.graph.analytics"]
    spec = importlib.util.spec_from_loader(_FIT, loader=None)
    mod = importlib.util.module_from_spec(spec)
    mod.__package__ = "dpgraph.graph.analytics"
    current = sys.modules[_FIT]
    sys.modules[_FIT] = mod
    try:
        exec(compile(src, f"{ref}:degree_fit.py", "exec"), mod.__dict__)
        pkg.degree_fit = mod
        yield
    finally:
        sys.modules[_FIT] = current
        pkg.degree_fit = current


def _load() -> str:
    with open("/proc/loadavg") as f:
        return f.read().strip()


def _fresh(R) -> None:
    from dpgraph.graph.analytics._shared import _cache

    c = _cache(R)
    for k in [k for k in c if isinstance(k, tuple) and k[:1] == ("degree_distribution",)]:
        del c[k]


def run(graphs: list[tuple[str, int]], eps_list: list[float], reps: int, ref: str) -> list[dict]:
    rows = []
    for name, n in graphs:
        G = _graph(name, n)
        deg = np.array([d for _, d in G.degree()])
        for eps in eps_list:
            kl = {"older": [], "main": [], "new": []}
            m0 = {"older": [], "main": [], "new": []}
            ts = {"older": [], "main": [], "new": []}
            for r in range(reps):
                R = dpgraph.release(G, eps, seed=1000 + r)
                for which in ("older", "main", "new"):
                    _fresh(R)
                    t0 = time.perf_counter()
                    if which == "older":
                        h = old_degree_distribution(R)[0]
                    elif which == "main":
                        with main_fit(ref):
                            h = np.asarray(R.degree_distribution())
                    else:
                        h = np.asarray(R.degree_distribution())
                    ts[which].append(time.perf_counter() - t0)
                    kl[which].append(degree_kl(deg, h))
                    m0[which].append(float(h[0]))
            row = {"graph": name, "n": G.number_of_nodes(), "eps": eps}
            for w in ("older", "main", "new"):
                row[f"KL {w}"] = f"{np.mean(kl[w]):.3f} ({max(kl[w]):.3f})"
            row["mass 0 truth"] = f"{np.mean(deg == 0):.3f}"
            for w in ("older", "main", "new"):
                row[f"mass 0 {w}"] = f"{np.mean(m0[w]):.3f}"
            for w in ("older", "main", "new"):
                row[f"s {w}"] = f"{np.mean(ts[w]):.1f}"
            row["load"] = _load().split()[0]
            rows.append(row)
            print(row, flush=True)
    return rows


HEAVY = [("internet-as", 1000), ("internet-as", 3000), ("ba-1", 3000), ("ba-2", 3000),
         ("powerlaw-cluster", 3000), ("config-zipf", 3000)]
CONTROLS = [("facebook", 0), ("gnp", 3000), ("planted-partition", 10_000)]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="2 releases, no 10^4-node graph")
    ap.add_argument("--graphs", default=None, help="comma-separated names (default: all)")
    ap.add_argument("--main", default="main", help="git ref of the 'main' fit")
    ap.add_argument("--eps", default="1,4", help="comma-separated epsilons")
    a = ap.parse_args(argv)
    graphs = HEAVY + CONTROLS
    if a.quick:
        graphs = [g for g in graphs if g[1] < 10_000]
    if a.graphs:
        keep = set(a.graphs.split(","))
        graphs = [g for g in graphs if g[0] in keep]
    reps = 2 if a.quick else a.reps
    print(f"load average before: {_load()}")
    rows = run(graphs, [float(e) for e in a.eps.split(",")], reps, a.main)
    cols = list(rows[0]) if rows else []
    print("KL: mean (worst) over", reps, "releases; times in seconds per fit")
    print(table(rows, cols))
    print(f"load average after: {_load()}")


if __name__ == "__main__":
    main()
