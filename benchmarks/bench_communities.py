"""``R.communities()``: time and peak memory against the dense path it replaced, and at 10^5 nodes.

Two tables, both measured in this run:

1. **Scale** (goal: at 20,000 nodes the same partition quality as the dense
   n x n float32 path of dpgraph 0.2, NMI between the two partitions
   >= 0.9, at <= 1/4 of its peak memory).  A planted partition (10 blocks,
   mean degree 60 inside + 10 across) released at eps = 4; each method runs
   in its own child process, which reports its wall time, the peak of the
   memory it allocated during the call (tracemalloc, numpy arrays included)
   and the child's peak resident memory (the release included).  The dense
   path is :mod:`benchmarks._communities_dense` (the 0.2 code, frozen).
2. **10^5 nodes** (``--large``): a planted partition of 100,000 nodes, mean
   degree about 10, at eps = 1 and 4: the new path only (the dense one would
   need 3 x 37 GiB); resolvable or not, with its time and memory.

A missed goal is printed as measured, with "MISSED".  The dense child
needs about 4.5 GiB at 20,000 nodes; on a shared machine run the script
under a memory limit.  A child that fails or is killed is reported as such,
with no ratio.

Usage::

    PYTHONPATH=$PWD python benchmarks/bench_communities.py [--n 20000] [--large]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from _common import machine, peak_rss_mib, quick, report, table

MEMORY_GOAL = 4.0  # dense peak / new peak
NMI_GOAL = 0.9


def planted(n: int, k: int, d_in: float, d_out: float, seed: int = 0):
    """Planted partition on 0..n-1 (blocks of consecutive nodes), by geometric skipping."""
    from dpgraph.experiments.zoo import _sbm

    return _sbm(n, np.random.default_rng([seed, 7019]), k, d_in, d_out, "planted partition")


def _child(args: argparse.Namespace) -> None:
    """Run one method on one release; print a JSON line; save the labels."""
    import tracemalloc

    import dpgraph

    G = planted(args.n, args.blocks, args.d_in, args.d_out)
    R = dpgraph.release(G, args.eps, seed=1)
    rss0 = peak_rss_mib()
    tracemalloc.start()
    t0 = time.perf_counter()
    if args.child == "dense":
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from _communities_dense import dense_communities

        lab, mod, q = dense_communities(R, seed=0)
        resolvable = q >= 2
    else:
        res = R.communities(seed=0)
        lab, mod, q, resolvable = res.labels(range(args.n)), res.modularity, res.k, res.resolvable
    seconds = time.perf_counter() - t0
    traced = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    np.save(args.labels, np.asarray(lab))
    print(json.dumps(dict(seconds=seconds, traced_mib=traced, rss_mib=peak_rss_mib(),
                          release_rss_mib=rss0, q=int(q), resolvable=bool(resolvable),
                          k=int(np.unique(lab).size), modularity=float(mod.value),
                          std=float(mod.std))))


def _run(method: str, n: int, eps: float, blocks: int, d_in: float, d_out: float) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "labels.npy")
        cmd = [sys.executable, os.path.abspath(__file__), "--child", method, "--n", str(n),
               "--eps", str(eps), "--blocks", str(blocks), "--d-in", str(d_in),
               "--d-out", str(d_out), "--labels", path]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            tail = (proc.stderr or "").strip().splitlines()[-1:] or ["killed"]
            return dict(failed=f"exit {proc.returncode}: {tail[0][:120]}")
        out = json.loads(proc.stdout.strip().splitlines()[-1])
        out["labels"] = np.load(path)
        return out


def _nmi(a: np.ndarray, b: np.ndarray) -> float:
    from sklearn.metrics import normalized_mutual_info_score

    return float(normalized_mutual_info_score(a, b))


def scale_table(n: int) -> None:
    blocks, d_in, d_out, eps = 10, 60.0, 10.0, 4.0
    truth = np.repeat(np.arange(blocks), [n // blocks + (c < n % blocks) for c in range(blocks)])
    rows, res = [], {}
    for method in ("dense", "new"):
        r = _run(method, n, eps, blocks, d_in, d_out)
        res[method] = r
        if "failed" in r:
            rows.append({"path": method, "note": r["failed"]})
            continue
        rows.append({"path": "dense n x n (0.2)" if method == "dense" else "packed products",
                     "seconds": f"{r['seconds']:.1f}", "peak MiB (call)": f"{r['traced_mib']:.0f}",
                     "peak RSS MiB": f"{r['rss_mib']:.0f}",
                     "RSS after release": f"{r['release_rss_mib']:.0f}",
                     "q": r["q"], "k": r["k"], "NMI vs planted": f"{_nmi(truth, r['labels']):.3f}",
                     "modularity": f"{r['modularity']:.3f} +- {r['std']:.3f}"})
    print(f"\nplanted partition, n = {n:,}, {blocks} blocks, degree {d_in:g} + {d_out:g}, eps = {eps:g}")
    print(table(rows, ["path", "seconds", "peak MiB (call)", "peak RSS MiB", "RSS after release",
                       "q", "k", "NMI vs planted", "modularity", "note"]))
    if any("failed" in r for r in res.values()):
        print("a path failed (see note): no ratio")
        return
    agree = _nmi(res["dense"]["labels"], res["new"]["labels"])
    ratio = res["dense"]["traced_mib"] / max(res["new"]["traced_mib"], 1e-9)
    report(f"communities at n={n}: NMI between the dense and the packed partitions", agree,
           NMI_GOAL, baseline="the dense path of 0.2, same release")
    report(f"communities at n={n}: peak memory of the call, dense / packed", ratio, MEMORY_GOAL,
           baseline="the dense path of 0.2, same release")
    report(f"communities at n={n}: time, dense / packed",
           res["dense"]["seconds"] / max(res["new"]["seconds"], 1e-9), None,
           baseline="the dense path of 0.2, same release", note="informative")


def large_table() -> None:
    n, blocks, d_in, d_out = 100_000, 20, 8.0, 2.0
    rows = []
    for eps in (1.0, 4.0):
        r = _run("new", n, eps, blocks, d_in, d_out)
        if "failed" in r:
            rows.append({"eps": eps, "note": r["failed"]})
            continue
        rows.append({"eps": eps, "seconds": f"{r['seconds']:.0f}",
                     "peak MiB (call)": f"{r['traced_mib']:.0f}", "peak RSS MiB": f"{r['rss_mib']:.0f}",
                     "RSS after release": f"{r['release_rss_mib']:.0f}", "q": r["q"],
                     "resolvable": r["resolvable"], "k": r["k"]})
    print(f"\nplanted partition, n = {n:,}, {blocks} blocks, degree {d_in:g} + {d_out:g}")
    print(table(rows, ["eps", "seconds", "peak MiB (call)", "peak RSS MiB", "RSS after release", "q",
                       "resolvable", "k", "note"]))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=None, help="nodes of the scale table (default 20000)")
    p.add_argument("--large", action="store_true", help="also the 10^5-node run (minutes)")
    p.add_argument("--child", choices=("dense", "new"), help=argparse.SUPPRESS)
    p.add_argument("--eps", type=float, default=4.0, help=argparse.SUPPRESS)
    p.add_argument("--blocks", type=int, default=10, help=argparse.SUPPRESS)
    p.add_argument("--d-in", type=float, default=60.0, help=argparse.SUPPRESS)
    p.add_argument("--d-out", type=float, default=10.0, help=argparse.SUPPRESS)
    p.add_argument("--labels", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        _child(args)
        return
    print(machine())
    scale_table(args.n or (4000 if quick() else 20_000))
    if args.large:
        large_table()


if __name__ == "__main__":
    main()
