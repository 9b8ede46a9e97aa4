"""Time of ``R.communities()`` against one float32 n x n matrix product + sum.

Goal: the community detection of a release costs at most 3 times one dense
float32 n x n product (plus the sum of its result), measured side by side in
the same run, on ego-Facebook (when available locally) and on a generated
graph of the same size.  The table prints the median times and their ratio;
a ratio above the goal is printed as measured, with "MISSED".

Usage::

    PYTHONPATH=$PWD python benchmarks/bench_communities.py [--repeat 3]
"""

from __future__ import annotations

import argparse

import numpy as np
from _common import facebook_or_none, machine, random_graph, table, timeit

import dpgraph

GOAL = 3.0


def _baseline(n: int) -> float:
    A = np.random.default_rng(0).random((n, n), dtype=np.float32)
    return timeit(lambda: float((A @ A).sum()), repeat=3, warmup=1)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    print(machine())
    graphs = []
    G = facebook_or_none()
    if G is not None:
        graphs.append(("ego-Facebook", G))
    graphs.append(("G(n, p), n 4039, degree 44", random_graph(4039, 44.0)))
    rows = []
    for name, G in graphs:
        for eps in (1.0, 4.0):
            R = dpgraph.release(G, eps, seed=0)
            base = _baseline(R.number_of_nodes())
            t = timeit(lambda R=R: R.communities(), repeat=args.repeat, warmup=0)
            ratio = t / base
            rows.append({"graph": name, "eps": eps, "product+sum s": f"{base:.2f}",
                         "communities s": f"{t:.2f}", "ratio": f"{ratio:.2f}",
                         f"goal <= {GOAL:g}": "met" if ratio <= GOAL else "MISSED"})
    print(table(rows, list(rows[0])))


if __name__ == "__main__":
    main()
