"""Triangles at scale: the sparse and packed passes against the dense n x n pass, side by side.

For a sparse graph with triangles (Holme-Kim power-law cluster graph, mean
degree 10, about 2 triangles per node) at n in {2,000, 10^4, 5 x 10^4, 10^5},
released at eps in {1, 4}, dense (every pair) and sparse (``target_edges``
= 10 n, so about 20 released edges per node), one
``R.triangles(max_seconds=30)`` call (the limit a user who wants an answer
in half a minute sets; without one the full pass runs: about 13 min at eps = 1 and 10^5 nodes) on a
fresh release in its own process: wall time (the release's degree pass
included), extra peak memory (resident set sampled every 10 ms, minus
before the call), the plan (path, mode, rows), the result (resolved,
unresolved, unresolvable at once, sampled, refused) and, where 3 n^2 float32
fit in memory, the dense reference pass (the method the passes replaced)
timed the same way.  At n = 2,000 both passes are run explicitly and their
statistics compared with the reference.  Every row is printed, whatever it
shows.

Ratios: dense reference time / ``R.triangles()`` time at n = 10^4, eps = 1
(target >= 1: never slower where both run); ``R.triangles(max_seconds=30)``
seconds at n = 10^5, eps = 1 (target <= 60: the limit is kept).

``--clustering`` prints instead the average clustering table: over the
generated zoo graphs (1,000 nodes) at eps in {1, 2, 4}, the coverage of the
95% interval, its mean width, the width of the per-node bound alone (the
interval before the identified set was added) and the fraction resolved.

    python benchmarks/bench_motifs.py [--quick] [--sizes 2000,10000] [--clustering --reps 10]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
from _common import machine, report, table

# the dense n x n pass, the oracle of tests/test_motifs.py, is the baseline here
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

HERE = Path(__file__).resolve().parent
MEAN_DEGREE = 10


def _graph_file(n: int, folder: Path) -> Path:
    """Edges of the benchmark graph of n nodes, written once (npy) for the child processes."""
    import networkx as nx

    path = folder / f"graph_{n}.npy"
    if not path.exists():
        G = nx.powerlaw_cluster_graph(n, MEAN_DEGREE // 2, 0.5, seed=1)
        np.save(path, np.array(G.edges(), dtype=np.int64))
    return path


class _Peak:
    """Peak resident memory of this process above its level at start (sampled every 10 ms)."""

    def __enter__(self) -> _Peak:
        import psutil

        self.proc = psutil.Process()
        self.base = self.peak = self.proc.memory_info().rss
        self.stop = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        return self

    def _run(self) -> None:
        while not self.stop:
            self.peak = max(self.peak, self.proc.memory_info().rss)
            time.sleep(0.01)

    def __exit__(self, *exc) -> None:
        self.stop = True
        self.thread.join()
        self.peak = max(self.peak, self.proc.memory_info().rss)

    @property
    def mib(self) -> float:
        return (self.peak - self.base) / 2**20


#: the time limit of each R.triangles() call (seconds)
LIMIT = 30.0


def run_case(n: int, eps: float, kind: str, graph: Path) -> dict:
    """One row: a fresh release, one R.triangles() call, then the dense reference if it fits."""
    import warnings

    import networkx as nx
    from _triangle_reference import dense_triangle_statistics  # the tests' oracle

    import dpgraph
    from dpgraph.exceptions import SeededReleaseWarning
    from dpgraph.graph.analytics._shared import _cache
    from dpgraph.graph.analytics.triangle_planning import triangle_plan

    warnings.simplefilter("ignore", SeededReleaseWarning)
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_edges_from(np.load(graph).tolist())
    kw = {"target_edges": 10 * n} if kind == "sparse" else {}
    R = dpgraph.release(G, eps, seed=1, **kw)
    del G
    row = {"n": n, "eps": eps, "release": kind, "released edges": R.number_of_released_edges()}
    with _Peak() as peak:
        t0 = time.perf_counter()
        try:
            t = R.triangles(max_seconds=LIMIT)
            secs = time.perf_counter() - t0
            plan = t.plan
            lo, hi = t.ci()
            if not plan.resolvable:
                result = "unresolvable (at once)"
            elif plan.mode == "sampled":
                result = f"sampled {plan.rows} rows, " + ("resolved" if t.resolved else "unresolved")
            else:
                result = "resolved" if t.resolved else "unresolved"
            row.update(value=f"{t.value:.4g}", ci=f"[{lo:.3g}, {hi:.3g}]")
        except MemoryError as exc:  # a refusal (CostLimitError is one)
            secs = time.perf_counter() - t0
            plan = triangle_plan(R, LIMIT)
            result = f"refused: {str(exc)[:60]}"
    row.update(path=plan.cost.path if plan.cost else plan.full.path, mode=plan.mode, result=result,
               seconds=round(secs, 2), **{"peak MiB": round(peak.mib)},
               **{"full (predicted s)": round(plan.full.seconds, 1)})
    from dpgraph.graph._memory import available_memory

    need = 3 * n * n * 4
    if need < 0.5 * available_memory():
        _cache(R).clear()
        R.released_degrees()  # the reference reads the dense matrix; time its pass only
        with _Peak() as peak:
            t0 = time.perf_counter()
            dense_triangle_statistics(R)
            row["dense s"] = round(time.perf_counter() - t0, 2)
        row["dense MiB"] = round(peak.mib)
    else:
        row["dense s"] = f"no fit ({need / 2**30:.0f} GiB)"
    return row


def both_paths(n: int, graph: Path) -> list[dict]:
    """n = 2,000: each pass forced, timed and compared with the reference."""
    import warnings

    import networkx as nx
    from _triangle_reference import dense_triangle_statistics  # the tests' oracle

    import dpgraph
    from dpgraph.exceptions import SeededReleaseWarning
    from dpgraph.graph.analytics import motifs
    from dpgraph.graph.analytics.triangle_counting import TriangleCounter

    warnings.simplefilter("ignore", SeededReleaseWarning)
    G = nx.Graph(np.load(graph).tolist())
    rows = []
    for eps in (1.0, 4.0):
        R = dpgraph.release(G, eps, seed=2)
        R.released_degrees()
        t0 = time.perf_counter()
        ref = dense_triangle_statistics(R)
        dense = time.perf_counter() - t0
        for path in ("sparse", "packed"):
            counter = TriangleCounter(R)
            counter.reductions(path, np.arange(8))  # load the compiled kernels outside the timing
            counter = TriangleCounter(R)
            t0 = time.perf_counter()
            red = counter.reductions(path)
            st = motifs._statistics(counter, red, None, red[:, 6:], motifs._constants(R), path, None)
            secs = time.perf_counter() - t0
            err = max(abs(getattr(st, f) - getattr(ref, f)) / max(abs(getattr(ref, f)),
                                                                   np.sqrt(ref.var_triangles))
                      for f in ("triangles", "wedges", "var_triangles", "var_wedges", "cov"))
            rows.append({"n": n, "eps": eps, "path": path, "seconds": round(secs, 3),
                         "predicted s": round(counter.cost(path).seconds, 3),
                         "dense s": round(dense, 3), "max rel. difference": f"{err:.1e}"})
    return rows


def clustering_table(reps: int) -> list[dict]:
    """Coverage and width of the average clustering interval on the zoo (1,000 nodes)."""
    import warnings

    import networkx as nx

    import dpgraph
    from dpgraph.exceptions import SeededReleaseWarning
    from dpgraph.experiments import zoo
    from dpgraph.graph.analytics._shared import _cache

    warnings.simplefilter("ignore", SeededReleaseWarning)
    rows = []
    for g, name in enumerate(zoo.names()):
        G = zoo.generate(name, n=1000, seed=1)
        truth = nx.average_clustering(G)
        for k, eps in enumerate((1.0, 2.0, 4.0)):
            cov, width, old, res = 0, [], [], 0
            for r in range(reps):
                R = dpgraph.release(G, eps, seed=50_000 + 1000 * g + 100 * k + r)
                a = R.average_clustering()
                lo, hi = a.ci()
                cov += lo <= truth <= hi
                width.append(hi - lo)
                blo, bhi = _cache(R)["clustering"].bound(0.95)
                old.append(bhi - blo)
                res += bool(a.resolved)
            rows.append({"graph": name, "eps": eps, "truth": f"{truth:.3f}",
                         "coverage": f"{cov}/{reps}", "mean width": f"{np.mean(width):.3f}",
                         "max width": f"{np.max(width):.3f}", "bound alone": f"{np.mean(old):.3f}",
                         "resolved": f"{res}/{reps}"})
            print(rows[-1], flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="sizes 2,000 and 10^4 only")
    ap.add_argument("--sizes", default=None, help="comma-separated node counts")
    ap.add_argument("--clustering", action="store_true", help="the average clustering table")
    ap.add_argument("--reps", type=int, default=10, help="releases per cell of the clustering table")
    ap.add_argument("--case", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.case:
        n, eps, kind, graph = args.case
        print(json.dumps(run_case(int(n), float(eps), kind, Path(graph))))
        return
    print(machine())
    if args.clustering:
        rows = clustering_table(args.reps)
        print(table(rows, list(rows[0])))
        return
    quick = args.quick or os.environ.get("DPGRAPH_BENCH_QUICK") == "1"
    sizes = ([2000, 10_000] if quick else [2000, 10_000, 50_000, 100_000]) if args.sizes is None \
        else [int(s) for s in args.sizes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if 2000 in sizes:
            pr = both_paths(2000, _graph_file(2000, folder))
            print(table(pr, list(pr[0])), flush=True)
        for n in sizes:
            graph = _graph_file(n, folder)
            for eps in (1.0, 4.0):
                for kind in ("dense", "sparse"):
                    cmd = [sys.executable, __file__, "--case", str(n), str(eps), kind, str(graph)]
                    out = subprocess.run(cmd, capture_output=True, text=True)
                    if out.returncode != 0:
                        row = {"n": n, "eps": eps, "release": kind,
                               "result": f"FAILED ({out.returncode}): {out.stderr.strip()[-80:]}"}
                    else:
                        row = json.loads(out.stdout.strip().splitlines()[-1])
                    rows.append(row)
                    print(row, flush=True)
    cols = ["n", "eps", "release", "released edges", "path", "mode", "result", "seconds", "peak MiB",
            "full (predicted s)", "dense s", "dense MiB"]
    print(table(rows, cols))
    for r in rows:
        if r["n"] == 10_000 and r["eps"] == 1.0 and r["release"] == "dense" and \
                isinstance(r.get("dense s"), float) and "seconds" in r:
            report("triangles at 10^4 nodes, eps 1: dense reference time / R.triangles() time",
                   r["dense s"] / max(r["seconds"], 1e-9), 1.0, baseline="the dense n x n pass")
        if r["n"] == 100_000 and r["eps"] == 1.0 and r["release"] == "dense" and "seconds" in r:
            report("R.triangles(max_seconds=30) seconds at 10^5 nodes, eps 1 (fresh release)",
                   r["seconds"], 60.0,
                   higher_is_better=False, note=r.get("result", ""))


if __name__ == "__main__":
    main()
