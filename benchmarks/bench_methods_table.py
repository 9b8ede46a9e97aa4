"""Every public method of a release at 10^4, 5 x 10^4 and 10^5 nodes, dense and sparse:
time, peak memory and outcome (resolved / unresolvable at this eps / refused, and why).

Input: the planted partition of ``benchmarks/bench_end_to_end.py`` (average
degree ``--avg-degree``, ``--blocks`` communities).  For each size the graph
is released twice -- the full (dense) release and a sparse one with
``--sparse-per-node`` x n released edges (``target_edges``) -- and saved; then
each method runs in a fresh process that loads the file (time excludes the
load; peak = the process's VmHWM, so it includes the loaded release; see
``benchmarks/_steps.py``).  A step over ``--timeout`` seconds is reported as
a timeout.  The Markdown table it writes (``methods_table.md``) is the one in
docs/scaling.md.

Run (from the repository root; about an hour on 2 shared cores)::

    python /path/to/memwatch --limit-gib 10 --timeout 14400 -- \\
        nice -n 10 python benchmarks/bench_methods_table.py --out bench_out/methods
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
from _common import machine, quick
from _steps import planted_partition, release_step, run_step, short, summary, true_values

METHODS = [
    "load", "save", "one pass over the bits", "number_of_edges", "density", "degree",
    "degree (all nodes)", "volume", "density_between", "cut", "cuts (10 pairs)",
    "cuts (100 half cuts)", "edges_within", "released_degrees", "released_edges",
    "degree_distribution", "degree_assortativity", "triangles", "wedges", "transitivity",
    "average_clustering", "communities", "modularity (planted partition)", "synthesize",
    "to_scipy_sparse", "to_networkx", "to_edgelist", "report",
]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000" if quick() else "10000,50000,100000")
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--avg-degree", type=float, default=10.0)
    ap.add_argument("--blocks", type=int, default=10)
    ap.add_argument("--sparse-per-node", type=int, default=20,
                    help="the sparse release keeps about this many released edges per node")
    ap.add_argument("--kinds", default="dense,sparse")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per step")
    ap.add_argument("--step-limit-gib", type=float, default=8.0,
                    help="address space a step may add to the loaded release (0: no limit)")
    ap.add_argument("--tmp", default=None)
    ap.add_argument("--out", default="bench_out/methods")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    sizes = [int(x) for x in args.sizes.split(",")]
    kinds = [k.strip() for k in args.kinds.split(",")]
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    print(machine())
    t_all = time.perf_counter()
    work = tempfile.mkdtemp(prefix="dpgraph_methods_", dir=args.tmp)
    cells: dict = {}  # (kind, method, n) -> result
    try:
        for n in sizes:
            E, labels = planted_partition(n, args.avg_degree, args.blocks, 0.8, seed=0)
            edges_file, labels_file = os.path.join(work, "edges.npy"), os.path.join(work, "labels.npy")
            np.save(edges_file, E)
            np.save(labels_file, labels)
            truth = dict(true_values(E, n), labels_file=labels_file)
            for kind in kinds:
                target = None if kind == "dense" else args.sparse_per_node * n
                path = os.path.join(work, f"{kind}-{n}.dpg")
                rel = release_step(edges_file, n, args.epsilon, path, target, args.timeout)
                if rel["status"] != "ok":
                    cells[(kind, "release", n)] = {"status": rel["status"], "seconds": None,
                                                   "peak_rss": None, "reason": rel.get("reason")}
                    continue
                cells[(kind, "release", n)] = {"status": "ok", "seconds": rel["release"],
                                               "peak_rss": rel["peak_rss"], "out": {}}
                print(f"n={n:,} {kind}: {rel['released_edges']:,} released edges (keep "
                      f"{rel['keep']:.3g}), release {rel['release']:.1f} s", flush=True)
                for name in methods:
                    res = run_step(name, path, truth, work, args.timeout,
                                   int(args.step_limit_gib * 2**30))
                    cells[(kind, name, n)] = res
                    t = "-" if res.get("seconds") is None else f"{res['seconds']:.2f} s"
                    print(f"  {name:32} {t:>10}  {summary(res)[:150]}", flush=True)
                os.remove(path)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    md = _markdown(cells, sizes, kinds, ["release"] + methods, args)
    print("\n" + md)
    print(f"whole run: {(time.perf_counter() - t_all) / 60:.1f} min")
    with open(os.path.join(args.out, "methods_table.md"), "w") as fh:
        fh.write(md)
    with open(os.path.join(args.out, "methods_table.json"), "w") as fh:
        json.dump({f"{k}|{m}|{n}": v for (k, m, n), v in cells.items()}, fh, indent=1, default=str)


def _cell(res: dict | None) -> str:
    if res is None:
        return "not run"
    t = "-" if res.get("seconds") is None else f"{res['seconds']:.1f} s"
    peak = "-" if res.get("peak_rss") is None else f"{res['peak_rss'] / 2**30:.2f} GiB"
    return f"{t}, {peak}, {short(res)}"


def _markdown(cells: dict, sizes: list, kinds: list, methods: list, args) -> str:
    lines = []
    for kind in kinds:
        what = ("full (dense) release" if kind == "dense" else
                f"sparse release (target_edges = {args.sparse_per_node} n)")
        lines.append(f"\n**{what}, epsilon = {args.epsilon:g}**: time (load excluded), peak RSS "
                     "of the step's process (loaded release included), outcome\n")
        lines.append("| method | " + " | ".join(f"n = {n:,}" for n in sizes) + " |")
        lines.append("|---|" + "---|" * len(sizes))
        for m in methods:
            lines.append(f"| {m} | " + " | ".join(_cell(cells.get((kind, m, n))) for n in sizes) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
