"""R.synthesize() at 10^4 - 10^5 nodes, dense and sparse releases, this code beside a baseline.

Input: the planted partition of the large-graph benchmarks (``_steps.planted_partition``:
10 blocks, 80% of the expected degree inside, average degree 10), released at
``--epsilon`` once per size and kind (dense; sparse with ``target_edges = --per-node x n``)
with a fixed seed and saved.  Each synthesis runs in a fresh process that loads the
release (``PYTHONPATH`` = this repository, or ``--baseline``, a checkout of the code to
compare with, e.g. ``git worktree add /tmp/base main``), so both versions see the same
release.  Printed per row: the time of the degree distribution (computed first: the
synthesis reuses it) and of ``R.synthesize(seed=0)`` (load excluded), with the
load average (1 min) at its end, the process's peak RSS (VmHWM, the loaded release
included), the synthetic edge count beside the release's estimate (m^ +- sd) and the
truth, the largest synthetic degree beside the truth's and the estimated degree
distribution's (1 - 1/n) quantile, and the degree KL divergence KL(truth || synthetic)
of the two degree histograms (the synthetic one smoothed by half a count per degree on
the union of the supports, so a degree the synthetic graph lacks costs a finite amount).
The time predicted before any work (this code's operation-count model,
:mod:`dpgraph.graph.analytics.synthesis_plan`; it leaves out the degree distribution) is
printed beside the time.  A run that fails or times out is printed as such, never hidden.

Run (from the repository root)::

    python /path/to/memwatch --limit-gib 8 -- nice -n 5 python benchmarks/bench_synthesis.py \\
        --sizes 10000,50000 --baseline /tmp/base
    python /path/to/memwatch --limit-gib 8 -- nice -n 5 python benchmarks/bench_synthesis.py \\
        --sizes 100000 --kinds sparse --per-node 50
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np
from _common import machine
from _steps import planted_partition

REPO = Path(__file__).resolve().parents[1]

_RUN = textwrap.dedent("""
    import json, os, sys, time, warnings
    warnings.simplefilter("ignore")
    import numpy as np, dpgraph
    R = dpgraph.load(sys.argv[1])
    est = R.number_of_edges(proper=False)
    try:  # the prediction made before any work (codes that make one)
        from dpgraph.graph.analytics.synthesis_plan import synthesis_plan
        m = int(np.clip(np.ceil(est.value + est.std), 0, R.number_of_pairs()))
        predicted = synthesis_plan(R, m, int(min(R.number_of_pairs(), 8 * m + 1000)), None,
                                   None).seconds
    except ImportError:
        predicted = None
    t0 = time.perf_counter()
    h = np.asarray(R.degree_distribution(), dtype=float)  # cached: the synthesis reuses it
    dd_secs = time.perf_counter() - t0
    t0 = time.perf_counter()
    H = R.synthesize(seed=0, progress=False)
    secs = time.perf_counter() - t0
    load = os.getloadavg()[0]
    deg = np.fromiter((d for _, d in H.degree()), dtype=np.int64, count=H.number_of_nodes())
    peak = 0
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            peak = int(line.split()[1]) * 1024
    n = R.number_of_nodes()
    q = int(np.searchsorted(np.cumsum(h), 1 - 1 / n))
    np.save(sys.argv[2], deg)
    print("RESULT " + json.dumps({"seconds": secs, "load": load, "peak": peak,
          "edges": H.number_of_edges(), "m_hat": float(est.value), "m_sd": float(est.std),
          "max_degree": int(deg.max()), "q": q, "predicted": predicted,
          "dd_seconds": dd_secs}))
""")


def degree_kl(true_deg: np.ndarray, synth_deg: np.ndarray) -> float:
    """KL(truth || synthetic) of the degree histograms (synthetic: + 1/2 count a degree)."""
    top = int(max(true_deg.max(), synth_deg.max())) + 1
    p = np.bincount(true_deg, minlength=top).astype(float)
    q = np.bincount(synth_deg, minlength=top).astype(float) + 0.5
    p /= p.sum()
    q /= q.sum()
    keep = p > 0
    return float(np.sum(p[keep] * np.log(p[keep] / q[keep])))


def run(code_root: Path, release: str, deg_file: str, timeout: float) -> dict:
    env = dict(os.environ, PYTHONPATH=str(code_root))
    try:
        proc = subprocess.run([sys.executable, "-c", _RUN, release, deg_file], capture_output=True,
                              text=True, timeout=timeout, env=env, cwd=str(code_root))
    except subprocess.TimeoutExpired:
        return {"status": f"timeout ({timeout:.0f} s)"}
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return {"status": "ok", **json.loads(line[len("RESULT "):])}
    return {"status": "error: " + (proc.stderr or "").strip().splitlines()[-1][:200]
            if proc.stderr.strip() else "error"}


def main(argv: list[str] | None = None) -> None:
    import dpgraph

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,50000")
    ap.add_argument("--kinds", default="dense,sparse")
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--per-node", type=int, default=50, help="sparse: target_edges = this x n")
    ap.add_argument("--seed", type=int, default=0, help="seed of the releases")
    ap.add_argument("--baseline", default=None, help="a checkout of the code to compare with")
    ap.add_argument("--timeout", type=float, default=3600.0)
    ap.add_argument("--tmp", default=None)
    args = ap.parse_args(argv)
    print(machine())
    print(f"load average at start: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    versions = [("new", REPO)] + ([("old", Path(args.baseline))] if args.baseline else [])
    work = tempfile.mkdtemp(prefix="dpgraph_synth_", dir=args.tmp)
    rows = []
    try:
        for n in [int(x) for x in args.sizes.split(",")]:
            E, _ = planted_partition(n, 10.0, 10, 0.8, seed=0)
            true_deg = np.bincount(E.ravel(), minlength=n)
            for kind in args.kinds.split(","):
                kw = {"target_edges": args.per_node * n} if kind == "sparse" else {}
                path = os.path.join(work, f"r{n}{kind}.dpg")
                R = dpgraph.release(E, args.epsilon, nodes=range(n), seed=args.seed, **kw)
                R.save(path)
                del R
                for name, root in versions:
                    deg_file = os.path.join(work, f"d{n}{kind}{name}.npy")
                    res = run(root, path, deg_file, args.timeout)
                    if res["status"] == "ok":
                        res["kl"] = degree_kl(true_deg, np.load(deg_file))
                    res.update(n=n, kind=kind, code=name, truth_m=len(E),
                               truth_max=int(true_deg.max()))
                    rows.append(res)
                    print(_line(res), flush=True)
                os.remove(path)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("\n| n | kind | code | degree distribution (s) | synthesize (s) (predicted) | load | peak RSS (GiB) | synthetic edges | "
          "estimate m^ +- sd | truth | max degree synthetic / truth / est. q(1-1/n) | "
          "degree KL |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(_line(r))
    print(f"load average at end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")


def _line(r: dict) -> str:
    head = f"| {r['n']:,} | {r['kind']} | {r['code']} |"
    if r["status"] != "ok":
        return head + f" {r['status']} | | | | | | | | |"
    p = r.get("predicted")
    pred = "" if p is None else f" ({p:.0f})" if p >= 10 else f" ({p:.1f})"
    return (head + f" {r['dd_seconds']:.1f} | {r['seconds']:.1f}{pred} | {r['load']:.1f} | {r['peak'] / 2**30:.2f} | "
            f"{r['edges']:,} | {r['m_hat']:,.0f} +- {r['m_sd']:,.0f} | {r['truth_m']:,} | "
            f"{r['max_degree']} / {r['truth_max']} / {r['q']} | {r['kl']:.3f} |")


if __name__ == "__main__":
    main()
