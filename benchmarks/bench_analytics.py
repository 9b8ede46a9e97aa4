"""Analytics against one float32 n x n matrix product + sum, measured side by side.

For ``triangles`` (one release's full triangle statistics: counts, wedges,
variances) and ``degree_distribution`` (family fit with its band), the time
of one call on a fresh release over the time of ``(Y @ Y).sum()`` with Y the
dense float32 released adjacency, both best of ``--repeat`` in the same run.
Targets: <= 1.5 (each).  Graphs: ego-Facebook (when the data is present,
else a 4,000-node power-law cluster graph) and a sparse graph of ``--n``
nodes (default 20,000; ``--quick`` 6,000), released at eps = 1.

    python benchmarks/bench_analytics.py [--quick] [--n 20000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
from _common import report

import dpgraph
from dpgraph.exceptions import SeededReleaseWarning

warnings.simplefilter("ignore", SeededReleaseWarning)


def _best(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _graph(name: str, n: int):
    import networkx as nx

    from dpgraph.experiments import zoo

    if name == "facebook":
        try:
            return "ego-Facebook", dpgraph.datasets.facebook()
        except (OSError, ValueError):  # data absent: a graph of the same size and kind
            return "power-law cluster 4000", nx.powerlaw_cluster_graph(4000, 22, 0.5, seed=1)
    return f"sparse G(n,p) {n}", zoo.generate("gnp", n=n, seed=0)


def _product(R):
    """The baseline: (Y @ Y).sum() with Y the dense float32 released adjacency."""
    nn = R.number_of_nodes()
    r, c = R.released_edges()
    Y = np.zeros((nn, nn), dtype=np.float32)
    Y[r, c] = 1.0
    Y[c, r] = 1.0
    return lambda: float((Y @ Y).sum())


def _calls(releases: list, method: str):
    """One call of ``method`` per timing, each on a fresh release (no cache)."""
    it = iter(releases)
    return lambda: getattr(next(it), method)()


def run(n: int, repeat: int) -> list[tuple]:
    rows = []
    for which in ("facebook", "large"):
        label, G = _graph(which, n)
        nn = G.number_of_nodes()
        releases = [dpgraph.release(G, 1.0, seed=s) for s in range(2 * repeat + 1)]
        base = _best(_product(releases.pop()), repeat)
        t_tri = _best(_calls(releases[:repeat], "triangles"), repeat)
        t_deg = _best(_calls(releases[repeat:], "degree_distribution"), repeat)
        for what, t in (("triangles", t_tri), ("degree_distribution", t_deg)):
            ratio = t / base
            rows.append((label, nn, what, t, base, ratio))
            report(f"R.{what}() on {label} (n={nn}, eps=1) / float32 Y @ Y + sum", ratio, 1.5,
                   higher_is_better=False, baseline="one float32 n x n product + sum, same run",
                   note="" if ratio <= 1.5 else "over target: see docs/analytics.md")
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args(argv)
    quick = a.quick or os.environ.get("DPGRAPH_BENCH_QUICK", "") == "1"
    n = a.n or (6000 if quick else 20000)
    rows = run(n, 1 if quick else a.repeat)
    print(f"\n{'graph':24s} {'n':>6s} {'analytic':20s} {'time s':>8s} {'Y@Y+sum s':>10s} {'ratio':>6s}")
    for label, nn, what, t, base, ratio in rows:
        print(f"{label:24s} {nn:6d} {what:20s} {t:8.2f} {base:10.2f} {ratio:6.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
