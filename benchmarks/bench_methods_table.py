"""Every public method of a release at 10^4, 5 x 10^4 and 10^5 nodes, dense and sparse:
time, peak memory and outcome (resolved / unresolvable at this eps / refused, and why).

Input: the planted partition of ``benchmarks/bench_end_to_end.py`` (average
degree ``--avg-degree``, ``--blocks`` communities).  For each size the graph
is released twice -- the full (dense) release and a sparse one with
``--sparse-per-node`` x n released edges (``target_edges``) -- and saved; then
each method runs in a fresh process that loads the file (time excludes the
load; peak = the process's VmHWM, so it includes the loaded release; see
``benchmarks/_steps.py``), with the 1-minute load average at its start and
end beside its time.

``--max-seconds S`` is a user's time limit, passed as ``max_seconds=S`` to the
calls that take one (and ``--max-seconds`` to ``dpgraph report``): a call
predicted beyond it refuses at once with its prediction ("refused: predicted
X > max_seconds"), one that passes it while running stops itself; both are
answers.  ``--timeout`` is only the benchmark's safety net (default 3 h, far
above any call that completes); ``--stop-at HH:MM`` (UTC) is the run's own
end: a step that would run past it is stopped and reported as "not measured"
with that reason, and the steps after it are not started.  Within each size
the sparse release runs first (it is fast), and the calls whose rows are
re-measured most often (synthesize, to_edgelist) run last.  The Markdown
table it writes (``methods_table.md``) is the one in docs/scaling.md.

Run (from the repository root; about an hour on 2 shared cores)::

    python /path/to/memwatch --limit-gib 10 --timeout 6000 -- \\
        nice -n 5 python benchmarks/bench_methods_table.py --out bench_out/methods \\
        --max-seconds 900
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import tempfile
import time

import numpy as np
from _common import machine, quick
from _steps import (
    load_text,
    loadavg,
    planted_partition,
    release_step,
    run_step,
    short,
    summary,
    true_values,
)

METHODS = [
    "load", "save", "one pass over the bits", "number_of_edges", "density", "degree",
    "degree (all nodes)", "volume", "density_between", "cut", "cuts (10 pairs)",
    "cuts (100 half cuts)", "edges_within", "released_degrees", "released_edges",
    "degree_distribution", "degree_assortativity", "triangles", "wedges", "transitivity",
    "average_clustering", "communities", "modularity (planted partition)", "to_scipy_sparse",
    "to_networkx", "report", "synthesize", "to_edgelist",
]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000" if quick() else "10000,50000,100000")
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--avg-degree", type=float, default=10.0)
    ap.add_argument("--blocks", type=int, default=10)
    ap.add_argument("--sparse-per-node", type=int, default=20,
                    help="the sparse release keeps about this many released edges per node")
    ap.add_argument("--kinds", default="sparse,dense", help="in the order they run")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--max-seconds", type=float, default=None,
                    help="the user's time limit, passed as max_seconds= (default: none)")
    ap.add_argument("--timeout", type=float, default=10800.0,
                    help="the benchmark's safety net per step, in seconds")
    ap.add_argument("--stop-at", default=None, metavar="HH:MM",
                    help="UTC time the run must end by: later steps are not measured (said so)")
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
    stop = _stop_time(args.stop_at)
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
                left = _left(stop)
                if left <= 0:
                    for name in ["release"] + methods:
                        cells[(kind, name, n)] = _not_run(stop)
                    continue
                rel = release_step(edges_file, n, args.epsilon, path, target,
                                   min(args.timeout, left))
                if rel["status"] != "ok":
                    cells[(kind, "release", n)] = {"status": rel["status"], "seconds": None,
                                                   "peak_rss": None, "reason": rel.get("reason"),
                                                   "load": rel.get("load")}
                    continue
                cells[(kind, "release", n)] = {"status": "ok", "seconds": rel["release"],
                                               "peak_rss": rel["peak_rss"], "out": {},
                                               "load": rel.get("load")}
                print(f"n={n:,} {kind}: {rel['released_edges']:,} released edges (keep "
                      f"{rel['keep']:.3g}), release {rel['release']:.1f} s", flush=True)
                for name in methods:
                    left = _left(stop)
                    if left <= 0:
                        cells[(kind, name, n)] = _not_run(stop)
                        continue
                    res = run_step(name, path, truth, work, min(args.timeout, left),
                                   int(args.step_limit_gib * 2**30), args.max_seconds)
                    if res["status"] == "timeout" and left < args.timeout:  # the run's end, not ours
                        res = dict(res, status="not run",
                                   reason=f"stopped after {res['seconds']:.0f} s at the run's end "
                                          f"{args.stop_at} UTC, not finished")
                    cells[(kind, name, n)] = res
                    t = "-" if res.get("seconds") is None else f"{res['seconds']:.2f} s"
                    print(f"  {name:32} {t:>10}  {summary(res)[:150]}", flush=True)
                os.remove(path)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    md = _markdown(cells, sizes, kinds, ["release"] + methods, args)
    peaks = [(r.get("peak_rss") or 0, k) for k, r in cells.items()]
    loads = [x for r in cells.values() for x in (r.get("load") or [])]
    peak, where = max(peaks) if peaks else (0, None)
    md += (f"\nWhole run {(time.perf_counter() - t_all) / 60:.1f} min (load {min(loads, default=0):.1f}-"
           f"{max(loads, default=0):.1f}, now {loadavg():.1f}); largest process {peak / 2**30:.2f} GiB "
           f"({where}); max_seconds={args.max_seconds}, step timeout {args.timeout:.0f} s.\n")
    print("\n" + md)
    with open(os.path.join(args.out, "methods_table.md"), "w") as fh:
        fh.write(md)
    with open(os.path.join(args.out, "methods_table.json"), "w") as fh:
        json.dump({f"{k}|{m}|{n}": v for (k, m, n), v in cells.items()}, fh, indent=1, default=str)


def _stop_time(text: str | None) -> float | None:
    """The epoch seconds of the next HH:MM UTC (None: no end)."""
    if not text:
        return None
    h, m = (int(x) for x in text.split(":"))
    now = dt.datetime.now(dt.timezone.utc)
    end = now.replace(hour=h, minute=m, second=0, microsecond=0)
    if end <= now - dt.timedelta(hours=12):
        end += dt.timedelta(days=1)
    return end.timestamp()


def _left(stop: float | None) -> float:
    return float("inf") if stop is None else stop - time.time()


def _not_run(stop: float | None) -> dict:
    end = dt.datetime.fromtimestamp(stop, dt.timezone.utc).strftime("%H:%M") if stop else "?"
    return {"status": "not run", "reason": f"not started: the run had to end by {end} UTC",
            "seconds": None, "peak_rss": None, "out": {}}


def _cell(res: dict | None) -> str:
    if res is None:
        return "not run"
    t = "-" if res.get("seconds") is None else f"{res['seconds']:.1f} s"
    if res.get("load"):
        t += f" ({load_text(res)})"
    peak = "-" if res.get("peak_rss") is None else f"{res['peak_rss'] / 2**30:.2f} GiB"
    return f"{t}, {peak}, {short(res)}"


def _markdown(cells: dict, sizes: list, kinds: list, methods: list, args) -> str:
    lines = []
    for kind in sorted(kinds):  # dense first, whatever order they ran in
        what = ("full (dense) release" if kind == "dense" else
                f"sparse release (target_edges = {args.sparse_per_node} n)")
        lines.append(f"\n**{what}, epsilon = {args.epsilon:g}**: time (release load excluded; "
                     "1-min load average at start-end), peak RSS of the step's process (loaded "
                     "release included), outcome\n")
        lines.append("| method | " + " | ".join(f"n = {n:,}" for n in sizes) + " |")
        lines.append("|---|" + "---|" * len(sizes))
        for m in methods:
            lines.append(f"| {m} | " + " | ".join(_cell(cells.get((kind, m, n))) for n in sizes) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
