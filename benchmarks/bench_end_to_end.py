"""10^5 nodes end to end: release, save, load, cuts, counts, degrees, communities, triangles,
synthesis and the report, each step's time and peak memory beside one pass over the bits.

The input is a planted partition (``--blocks`` equal communities, a fraction
``--inside`` of each node's expected degree inside its own) with average
degree ``--avg-degree``, generated in O(m) with numpy.  For each epsilon the
graph is released (``dpgraph.release`` of the edge array with its public
vertex set) and saved by one process; every later step then runs in a *fresh*
process that loads the file (see ``benchmarks/_steps.py``): its wall time
excludes the load, its peak memory is the process's peak RSS (VmHWM:
interpreter, loaded release and the step).  "one pass over the bits" is the
physical floor: a popcount of every packed word (or a pass over a sparse
release's column indices).

Every outcome is printed as it is: ``ok`` (with the estimate), ``unresolved``
(the release cannot resolve it at this epsilon, and why), ``refused`` (a
MemoryError before allocating, with its sizes), ``error``, ``timeout`` or
``killed``.  Targets: every step <= 8 GiB peak and the whole run <= 15 min,
checked at the end (missed targets are reported, never hidden).

Run (from the repository root)::

    python /path/to/memwatch --limit-gib 10 --timeout 3600 -- \\
        nice -n 10 python benchmarks/bench_end_to_end.py --n 100000 --epsilons 1,4 --out bench_out/e2e
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import tempfile
import time

import numpy as np
from _common import machine, quick
from _steps import gib, planted_partition, release_step, run_step, summary, true_values

STEPS = ["load", "one pass over the bits", "cuts (100 half cuts)", "number_of_edges",
         "degree_distribution", "communities", "transitivity", "synthesize", "report"]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20_000 if quick() else 100_000)
    ap.add_argument("--avg-degree", type=float, default=10.0)
    ap.add_argument("--blocks", type=int, default=10)
    ap.add_argument("--inside", type=float, default=0.8)
    ap.add_argument("--epsilons", default="1,4")
    ap.add_argument("--target-edges", type=int, default=None,
                    help="release a sparse sample of about this many edges instead")
    ap.add_argument("--steps", default=",".join(STEPS), help="comma-separated subset of the steps")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per step")
    ap.add_argument("--step-limit-gib", type=float, default=8.0,
                    help="address space a step may add to the loaded release (0: no limit)")
    ap.add_argument("--tmp", default=None, help="folder for the release files")
    ap.add_argument("--out", default="bench_out/end_to_end")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    steps = [s.strip() for s in args.steps.split(",") if s.strip()]
    print(machine())
    print(f"load average at start: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    t_all = time.perf_counter()
    work = tempfile.mkdtemp(prefix="dpgraph_e2e_", dir=args.tmp)
    rows = []
    try:
        t0 = time.perf_counter()
        E, labels = planted_partition(args.n, args.avg_degree, args.blocks, args.inside, seed=0)
        edges_file, labels_file = os.path.join(work, "edges.npy"), os.path.join(work, "labels.npy")
        np.save(edges_file, E)
        np.save(labels_file, labels)
        truth = true_values(E, args.n)
        truth["labels_file"] = labels_file
        print(f"input: planted partition, n={args.n:,}, {truth['m']:,} edges, {args.blocks} blocks, "
              f"{args.inside:.0%} of the degree inside; {truth['triangles']:,.0f} triangles, "
              f"transitivity {truth['transitivity']:.4g} ({time.perf_counter() - t0:.1f} s to make)")
        del E
        for eps in [float(x) for x in args.epsilons.split(",")]:
            path = os.path.join(work, f"release-{eps:g}.dpg")
            rel = release_step(edges_file, args.n, eps, path, args.target_edges, args.timeout)
            kind = "dense" if args.target_edges is None else f"sparse ({args.target_edges:,})"
            if rel["status"] != "ok":
                rows.append({"epsilon": eps, "kind": kind, "step": "release", "status": rel["status"],
                             "seconds": None, "peak_gib": None, "x_floor": None,
                             "result": rel.get("reason", "")[-300:]})
                print(f"eps={eps:g}: release {rel['status']}: {rel.get('reason', '')[-300:]}")
                continue
            size = os.path.getsize(path)
            print(f"\neps={eps:g}: released {rel['released_edges']:,} edges (keep {rel['keep']:.3g}) "
                  f"in {rel['release']:.1f} s, saved {size / 2**30:.2f} GiB in {rel['save']:.1f} s, "
                  f"peak {gib(rel['peak_rss'])} GiB")
            for name, secs, what in (("release", rel["release"], f"{rel['released_edges']:,} edges"),
                                     ("save", rel["save"], f"{size / 2**30:.2f} GiB file")):
                rows.append({"epsilon": eps, "kind": kind, "step": name, "status": "ok",
                             "seconds": secs, "peak_gib": rel["peak_rss"] / 2**30, "x_floor": None,
                             "result": f"ok: {what} (release and save: one process)"})
            floor = None
            for name in steps:
                res = run_step(name, path, truth, work, args.timeout,
                               int(args.step_limit_gib * 2**30))
                if name == "one pass over the bits" and res["status"] == "ok":
                    floor = res["seconds"]
                x = (res["seconds"] / floor if floor and res.get("seconds") is not None
                     and name != "one pass over the bits" else None)
                row = {"epsilon": eps, "kind": kind, "step": name, "status": res["status"],
                       "seconds": res.get("seconds"),
                       "peak_gib": None if res.get("peak_rss") is None else res["peak_rss"] / 2**30,
                       "x_floor": x, "result": summary(res)}
                rows.append(row)
                print(f"  {name:24} {_num(row['seconds']):>8} s  {_num(row['peak_gib']):>6} GiB  "
                      f"{row['result'][:160]}", flush=True)
            os.remove(path)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    total = time.perf_counter() - t_all
    _print_table(rows)
    worst = max((r["peak_gib"] or 0.0) for r in rows) if rows else 0.0
    print(f"\nwhole run: {total / 60:.1f} min (target <= 15 min: {'met' if total <= 900 else 'MISSED'}); "
          f"largest step peak {worst:.2f} GiB (target <= 8 GiB: {'met' if worst <= 8 else 'MISSED'})")
    bad = [r for r in rows if r["status"] in ("error", "timeout", "killed")]
    for r in bad:
        print(f"  not completed: eps={r['epsilon']:g} {r['step']}: {r['result']}")
    print(f"load average at end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    with open(os.path.join(args.out, "end_to_end.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]) if rows else ["step"])
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(args.out, "end_to_end.json"), "w") as fh:
        json.dump({"args": vars(args), "total_seconds": total, "rows": rows}, fh, indent=1)


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def _print_table(rows: list[dict]) -> None:
    print("\n| eps | release | step | time (s) | x one pass | peak RSS (GiB) | outcome |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        x = "-" if r["x_floor"] is None else f"{r['x_floor']:.0f}x"
        print(f"| {r['epsilon']:g} | {r['kind']} | {r['step']} | {_num(r['seconds'])} | {x} | "
              f"{_num(r['peak_gib'])} | {r['result'][:220].replace('|', '/')} |")


if __name__ == "__main__":
    main()
