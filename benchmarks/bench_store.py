"""The blockwise store as a release: every call on a store, with its passes over the store.

For each ``--n`` (default 10^5, 2 x 10^5 and 5 x 10^5): a planted-partition
graph (blocks of 1,000 nodes, average degree 10, 80% of the edges inside a
block) released at eps = 1 into a Zarr store (default tiles, Dask's threads),
then, each in a fresh process (its own peak RSS, a cold cache of the store's
results): open, number_of_edges, a batch of 10 half cuts, one node's degree,
degree_distribution, triangles, transitivity, communities, save (the ``.dpg``
pointer), load (the pointer) and ``dpgraph report FILE.dpg``.

Passes over the store are counted by reading through an instrumented store:
every read of the ``adjacency`` array adds its bytes, and a pass is the bytes
of the tiles that hold pairs.  Times are wall seconds of the call (the open
before it is not counted, except in the ``open`` row), with the 1-minute load
average beside each.  Each call runs with memory "available" capped at
``--memory-gib`` less what the process holds (the machine is shared: the
calls that copy the matrix are sized against that cap), and is stopped after
``--step-timeout`` seconds (the row then says so; the release is never stopped).  The store is deleted
after its rows unless ``--keep``.

    PYTHONPATH=. python benchmarks/bench_store.py [--n 100000 200000 500000] [--dir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

STEPS = ("open", "number_of_edges", "cuts", "degree", "degree_distribution", "triangles",
         "transitivity", "communities", "save", "load", "report")


def _load() -> str:
    with open("/proc/loadavg") as fh:
        return fh.read().split()[0]


def _peak_rss_gib() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 2**20
    return float("nan")


def planted_partition(n: int, avg_degree: float = 10.0, block: int = 1000, inside: float = 0.8,
                      seed: int = 0) -> np.ndarray:
    """(m, 2) int64 edges: m = n avg_degree / 2, a share ``inside`` within blocks of ``block``."""
    rng = np.random.default_rng(seed)
    m = int(n * avg_degree / 2)
    m_in = int(inside * m)
    b = rng.integers(0, n // block, m_in)
    u = b * block + rng.integers(0, block, m_in)
    v = b * block + rng.integers(0, block, m_in)
    cu, cv = rng.integers(0, n, m - m_in), rng.integers(0, n, m - m_in)
    cross = (cu // block) != (cv // block)
    u, v = np.concatenate([u, cu[cross]]), np.concatenate([v, cv[cross]])
    keep = u != v
    lo, hi = np.minimum(u[keep], v[keep]), np.maximum(u[keep], v[keep])
    keys = np.unique(lo * n + hi)
    return np.c_[keys // n, keys % n].astype(np.int64)


# --------------------------------------------------------------------------- one step (child)
def _instrument(limit_gib: float) -> dict:
    """Count bytes read from the store's adjacency; cap the memory the size checks see."""
    import psutil

    from dpgraph.graph import _memory
    from dpgraph.graph.blockwise import location

    count = {"bytes": 0}
    array = location.StoreLocation.array

    class Counted:
        def __init__(self, arr):
            self._arr = arr

        def __getitem__(self, key):
            out = self._arr[key]
            count["bytes"] += int(getattr(out, "nbytes", 0))
            return out

        def __getattr__(self, name):
            return getattr(self._arr, name)

    def counted(self, path, mode="r"):
        arr = array(self, path, mode)
        return Counted(arr) if path == "adjacency" and mode == "r" else arr

    location.StoreLocation.array = counted
    real = _memory.available_memory
    cap = int(limit_gib * 2**30)
    _memory.available_memory = lambda: max(0, min(real(), cap - psutil.Process().memory_info().rss))
    return count


def _step(args: argparse.Namespace) -> dict:
    import warnings

    warnings.simplefilter("ignore")
    count = _instrument(args.memory_gib)
    from dpgraph.graph.blockwise import open_blockwise, release_blockwise

    out: dict = {"note": ""}
    if args.step == "release":
        t0 = time.perf_counter()
        edges = planted_partition(args.n)
        out["input_s"] = round(time.perf_counter() - t0, 1)
        t0 = time.perf_counter()
        B = release_blockwise(edges, 1.0, args.store, nodes=args.n, overwrite=True)
        out["seconds"] = time.perf_counter() - t0
        out["note"] = (f"{edges.shape[0]:,} true edges ({out['input_s']} s to make); store "
                       f"{B.adjacency.nbytes / 2**30:.2f} GiB")
        out["passes"] = 0.0
        out["rss"] = _peak_rss_gib()
        return out
    pointer = os.path.join(os.path.dirname(args.store), "release.dpg")
    t0 = time.perf_counter()
    if args.step in ("load", "report"):
        R = None
    else:
        R = open_blockwise(args.store)
    opened = time.perf_counter() - t0
    stored = None if R is None else R.adjacency.nbytes
    if args.step != "open":
        count["bytes"] = 0
    t0 = time.perf_counter()
    try:
        if args.step == "open":
            out["seconds"] = opened
        elif args.step == "number_of_edges":
            out["note"] = str(R.number_of_edges())
        elif args.step == "cuts":
            rng = np.random.default_rng(0)
            batch = []
            for _ in range(10):
                p = rng.permutation(args.n)
                batch.append((p[: args.n // 2], p[args.n // 2 :]))
            R.cuts(batch)
            out["note"] = "10 half cuts"
        elif args.step == "degree":
            out["note"] = f"node 0: {R.degree(0)}"
        elif args.step == "degree_distribution":
            h = R.degree_distribution()
            out["note"] = f"{len(h)} bins"
        elif args.step in ("triangles", "transitivity", "communities"):
            out["note"] = str(getattr(R, args.step)())[:120]
        elif args.step == "save":
            if os.path.exists(pointer):
                os.remove(pointer)
            R.save(pointer)
            out["note"] = f"{os.path.getsize(pointer) / 1e6:.2f} MB file"
        elif args.step == "load":
            import dpgraph

            R = dpgraph.load(pointer)
            stored = R.adjacency.nbytes
            out["note"] = R.release_id
        elif args.step == "report":
            from dpgraph.cli import main

            html = os.path.join(os.path.dirname(args.store), "report.html")
            code = main(["report", pointer, "-o", html, "--quiet", "--force"])
            read = count["bytes"]
            import dpgraph

            stored = dpgraph.load(pointer).adjacency.nbytes
            count["bytes"] = read  # this load's own bit check is not the report's
            out["note"] = f"exit {code}; " + _skipped(html)
    except (MemoryError, ValueError, TypeError) as exc:
        out["note"] = f"refused: {type(exc).__name__}: {str(exc)[:300]}"
    if args.step != "open":
        out["seconds"] = time.perf_counter() - t0
    out["passes"] = count["bytes"] / stored if stored else float("nan")
    out["rss"] = _peak_rss_gib()
    return out


def _skipped(html_path: str) -> str:
    """What the report says it could not compute, and why (its own words)."""
    import html as htmllib
    import re

    with open(html_path, encoding="utf-8") as fh:
        text = fh.read()
    found = re.findall(r'(?s)<div class="callout" id="not-computed">(.*?)</div>', text)
    lines = [" ".join(htmllib.unescape(re.sub(r"<[^>]+>", " ", x)).split()) for x in found]
    return " | ".join(x[:400] for x in lines) or "nothing left out"


# --------------------------------------------------------------------------- driver
def _run_step(step: str, n: int, store: str, args: argparse.Namespace) -> dict:
    cmd = [sys.executable, __file__, "--child", step, "--n", str(n), "--store", store,
           "--memory-gib", str(args.memory_gib)]
    t0 = time.perf_counter()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True,
                              timeout=None if step == "release" else args.step_timeout)
    except subprocess.TimeoutExpired:
        return {"seconds": time.perf_counter() - t0, "passes": float("nan"), "rss": float("nan"),
                "note": f"stopped after {args.step_timeout:.0f} s (no answer yet)"}
    lines = [x for x in done.stdout.splitlines() if x.startswith("{")]
    if done.returncode != 0 or not lines:
        tail = (done.stderr.strip().splitlines() or ["?"])[-1][:200]
        return {"seconds": time.perf_counter() - t0, "passes": float("nan"), "rss": float("nan"),
                "note": f"exit {done.returncode}: {tail}"}
    return json.loads(lines[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[100_000, 200_000, 500_000])
    ap.add_argument("--dir", default=None, help="folder for the stores (default: a temporary one)")
    ap.add_argument("--memory-gib", type=float, default=5.5)
    ap.add_argument("--step-timeout", type=float, default=600.0)
    ap.add_argument("--steps", nargs="+", default=list(STEPS))
    ap.add_argument("--keep", action="store_true", help="keep the stores")
    ap.add_argument("--reuse", default=None,
                    help="a store of the first --n written before (its release row is not repeated)")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--store", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        args.step = args.child
        args.n = args.n[0]
        print(json.dumps(_step(args)), flush=True)
        return
    print(f"# bench_store: eps 1, planted partition, average degree 10, memory cap "
          f"{args.memory_gib} GiB, step timeout {args.step_timeout:.0f} s", flush=True)
    print("| nodes | call | seconds | load | peak RSS GiB | passes | note |")
    print("|---|---|---|---|---|---|---|", flush=True)
    for k, n in enumerate(args.n):
        reuse = args.reuse if k == 0 else None
        folder = os.path.dirname(os.path.abspath(reuse)) if reuse else tempfile.mkdtemp(
            prefix=f"store{n}-", dir=args.dir)
        store = os.path.abspath(reuse) if reuse else os.path.join(folder, "release.zarr")
        try:
            for step in (() if reuse else ("release",)) + tuple(args.steps):
                r = _run_step(step, n, store, args)
                print(f"| {n:,} | {step} | {r['seconds']:.1f} | {_load()} | {r['rss']:.2f} | "
                      f"{r['passes']:.3g} | {r['note']} |", flush=True)
                if step == "release" and not os.path.exists(store):
                    break
        finally:
            if not args.keep:
                shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
