"""One analyst's session at scale: release, save, load and every analysis, in one process.

The sequence a curator and an analyst run on one release, in order, in one
Python process (what is computed once per release is reused, as in a real
session): release, save, load (the analysis runs on the loaded copy), 100
half cuts, the edge count, the degree distribution, triangles,
transitivity, communities, synthesize, to_edgelist and the HTML report.
Every call runs with its defaults (no time limit unless ``--max-seconds``
is given, then passed to every call through ``time_limit``).  For each
step: wall seconds, CPU seconds (both cores count), the 1-minute load
average at its start and end, the process's resident peak so far (VmHWM,
an upper bound of the step's own) and what it answered; then the total,
against the 30 minutes a whole session should take at 10^5 nodes.

Input: the methods table's planted partition (10 blocks, 80% of each node's
expected degree inside, average degree 10), eps = 1, the full (dense)
release.

    python benchmarks/bench_sequence.py [--n 100000] [--max-seconds S] [--out DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import tempfile
import time

import numpy as np
from _common import machine
from _steps import loadavg, planted_partition


def _peak_gib() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 2**20
    return float("nan")


def _said(x) -> str:
    """A short answer: an estimate's value and std, a count, or what came back."""
    value = getattr(x, "value", None)
    if value is not None and np.ndim(value) == 0:
        extra = "" if getattr(x, "resolved", True) else ", unresolved"
        return f"{float(value):,.4g} ± {float(x.std):,.3g}{extra}"
    if hasattr(x, "n_communities"):
        return f"{x.n_communities} communities, resolvable={x.resolvable}"
    if hasattr(x, "number_of_edges"):
        return f"{x.number_of_edges():,} edges"
    if isinstance(x, np.ndarray):
        return f"array {x.shape}"
    return str(x)[:60]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--max-seconds", type=float, default=None,
                    help="a time limit for every call (default: none, the library's defaults)")
    ap.add_argument("--tmp", default=None)
    ap.add_argument("--out", default=None, help="write the table here as sequence.md")
    args = ap.parse_args()
    import warnings

    import dpgraph
    from dpgraph.graph.analytics import time_limit
    from dpgraph.report import build_report

    warnings.simplefilter("ignore")
    print(machine())
    n = args.n
    E, _ = planted_partition(n, 10.0, 10, 0.8, seed=0)
    work = tempfile.mkdtemp(prefix="dpgraph_sequence_", dir=args.tmp)
    path = os.path.join(work, "release.dpg")
    rows: list[str] = []
    state: dict = {}
    t_all = time.perf_counter()

    def step(name, fn):
        load0, t0, c0 = loadavg(), time.perf_counter(), time.process_time()
        try:
            with time_limit(args.max_seconds):
                out = _said(fn())
        except MemoryError as exc:  # a refusal or a stop: an answer, printed as it is
            out = f"{type(exc).__name__}: {str(exc)[:160]}"
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        row = (f"| {name} | {wall:,.1f} | {cpu:,.1f} | {load0:.1f}-{loadavg():.1f} "
               f"| {_peak_gib():.2f} | {out} |")
        rows.append(row)
        print(row, flush=True)

    def release():
        state["R"] = dpgraph.release(E, args.epsilon, nodes=range(n))
        return f"{state['R'].number_of_released_edges():,} released pairs"

    def load():
        del state["R"]
        state["R"] = dpgraph.load(path)
        return "loaded"

    def cuts():
        rng = np.random.default_rng(1)
        half = np.where(np.arange(n) < n // 2, 1, -1).astype(np.int8)
        est = state["R"].cut_batch(np.stack([rng.permutation(half) for _ in range(100)]))
        return f"{int(np.sum(est.resolved))} of 100 resolved"

    def edgelist():
        out = os.path.join(work, "edges.txt")
        state["R"].to_edgelist(out)
        size = os.path.getsize(out)
        os.remove(out)
        return f"{size / 1e9:.2f} GB"

    def report():
        html = build_report(state["R"])
        with open(os.path.join(work, "report.html"), "w") as fh:
            fh.write(html)
        return f"{len(html) / 1e6:.1f} MB of HTML"

    print("| step | wall s | CPU s | load | peak GiB | answer |")
    print("|---|---|---|---|---|---|")
    try:
        step("release", release)
        step("save", lambda: state["R"].save(path) or f"{os.path.getsize(path) / 1e9:.2f} GB")
        step("load", load)
        step("cuts (100 half cuts)", cuts)
        step("number_of_edges", lambda: state["R"].number_of_edges())
        step("degree_distribution", lambda: "mean degree "
             f"{float(np.asarray(state['R'].degree_distribution()) @ np.arange(n)):.3f}")
        step("triangles", lambda: state["R"].triangles())
        step("transitivity", lambda: state["R"].transitivity())
        step("communities", lambda: state["R"].communities())
        step("synthesize", lambda: state["R"].synthesize())
        step("to_edgelist", edgelist)
        step("report", report)
    finally:
        with contextlib.suppress(OSError):
            shutil.rmtree(work)
    total = time.perf_counter() - t_all
    head = ["| step | wall s | CPU s | load | peak GiB | answer |", "|---|---|---|---|---|---|"]
    tail = (f"\nWhole session {total / 60:.1f} min (the input's generation included) against "
            f"30 min; largest resident set {_peak_gib():.2f} GiB; n = {n:,}, eps = "
            f"{args.epsilon:g}, max_seconds = {args.max_seconds}.")
    print(tail)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "sequence.md"), "w") as fh:
            fh.write("\n".join(head + rows) + "\n" + tail + "\n")


if __name__ == "__main__":
    main()
