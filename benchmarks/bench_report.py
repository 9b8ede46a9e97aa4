"""Time ``dpgraph report`` step by step, against one float32 n x n product in the same run.

    python benchmarks/bench_report.py [--eps 1.0] [--nodes 4039]

Releases ego-Facebook (or, without it, a G(n, p) graph of the same size and
density) once, saves it, then builds the report from the file as the command
does, printing each step's time and its ratio to one float32 n x n matrix
product plus a sum measured just before (the machine's speed in the same run).
The goal is a whole report within 30 s on ego-Facebook.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np
from _common import facebook_or_none, random_graph, table

import dpgraph
from dpgraph.report import render_report, report_context


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--nodes", type=int, default=4039, help="size of the fallback graph")
    args = ap.parse_args()
    G = facebook_or_none()
    name = "ego-Facebook"
    if G is None:
        G, name = random_graph(args.nodes, 43.7, seed=0), f"G(n, p), n={args.nodes}"
    R = dpgraph.release(G, epsilon=args.eps, seed=0)
    n = R.number_of_nodes()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "g.dpg")
        R.save(path)
        Y = np.random.default_rng(0).random((n, n), dtype=np.float32)
        t0 = time.perf_counter()
        float((Y @ Y).sum())
        base = time.perf_counter() - t0
        del Y
        t0 = time.perf_counter()
        R2 = dpgraph.load(path)
        t_load = time.perf_counter() - t0
        t0 = time.perf_counter()
        ctx = report_context(R2, title=name)
        page = render_report(ctx)
        total = time.perf_counter() - t0 + t_load
    rows = [{"step": "load the release file", "seconds": f"{t_load:.2f}", "x product": f"{t_load / base:.2f}"}]
    for label, sec in ctx["timings"]:
        rows.append({"step": label, "seconds": sec, "x product": f"{float(sec) / base:.2f}"})
    rows.append({"step": "whole report (load + compute + render)", "seconds": f"{total:.2f}",
                 "x product": f"{total / base:.2f}"})
    print(f"{name}: {n} nodes, eps={args.eps}; one float32 n x n product + sum: {base:.2f} s; "
          f"page {len(page) // 1024} KiB")
    print(table(rows, ["step", "seconds", "x product"]))
    print(f"goal: whole report <= 30 s -> {'met' if total <= 30 else 'NOT met'} ({total:.1f} s)")


if __name__ == "__main__":
    main()
