"""R.to_edgelist: MB/s of the block formatter against the line-by-line text, same run.

For a dense and a sparse release (``target_edges = 50 n``) at eps = 1 of
``nx.fast_gnp_random_graph(n, 10/n)``: the time to write the edge list with
``R.to_edgelist`` (numpy, a block of lines at a time) and with the previous
formatter (a frozen copy below, ``old_to_edgelist``: one f-string per edge),
the file's size and both rates in MB/s, the files checked byte-identical.
Each side is timed end to end (reading the release's row blocks, formatting,
writing to ``--dir``), best of ``--repeat``, the two interleaved so both see
the same load; ``new_cpu_MBs`` is the new side's rate per CPU second (what
it reaches on an idle core; on a loaded machine wall time is several times
its CPU time).

    python benchmarks/bench_export.py [--n 20000] [--repeat 3] [--dir /tmp] [--quick]
"""

from __future__ import annotations

import argparse
import filecmp
import os
import tempfile
import time

import networkx as nx
from _common import load_average, machine, quick, report, table, timeit_interleaved

import dpgraph
from dpgraph.graph.convert import edge_blocks

TARGET_MBS = 100.0


def old_to_edgelist(R, path, delimiter=" "):
    """The previous formatter: the same header, then one f-string per edge, 2^16 edges a batch."""
    labels = [str(v) for v in R.nodes]
    kind = "directed" if R.directed else "undirected"
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(f"# dpgraph {kind} release: {R.number_of_nodes()} nodes, "
                 f"epsilon={R.epsilon:g}, flip_probability={R.flip_probability:.6g}, "
                 f"keep={R.keep:.6g}; isolated nodes have no line\n")
        for r, c in edge_blocks(R.adjacency):
            for start in range(0, r.size, 1 << 16):
                rows, cols = r[start : start + (1 << 16)], c[start : start + (1 << 16)]
                fh.writelines(f"{labels[i]}{delimiter}{labels[j]}\n"
                              for i, j in zip(rows.tolist(), cols.tolist()))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=5_000 if quick() else 20_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", default=None, help="folder for the files (default: a temporary one)")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    if args.quick:
        args.n = min(args.n, 5_000)
    print(machine())
    G = nx.fast_gnp_random_graph(args.n, 10 / args.n, seed=0)
    rows = []
    with tempfile.TemporaryDirectory(dir=args.dir) as folder:
        for kind, kw in (("dense", {}), ("sparse", dict(target_edges=50 * args.n))):
            t0 = time.perf_counter()
            R = dpgraph.release(G, epsilon=1.0, seed=1, **kw)
            print(f"{kind}: released {R.number_of_released_edges():,} edges in "
                  f"{time.perf_counter() - t0:.1f} s")
            new, old = os.path.join(folder, "new.txt"), os.path.join(folder, "old.txt")
            best = timeit_interleaved({"new": lambda R=R, new=new: R.to_edgelist(new),
                                       "old": lambda R=R, old=old: old_to_edgelist(R, old)},
                                      repeat=args.repeat, warmup=0)
            c0 = time.process_time()
            R.to_edgelist(new)
            cpu = time.process_time() - c0
            same = filecmp.cmp(new, old, shallow=False)
            size = os.path.getsize(new)
            rate = {k: size / v / 1e6 for k, v in best.items()}
            rows.append(dict(release=kind, n=f"{args.n:,}", edges=f"{R.number_of_released_edges():,}",
                             MB=f"{size / 1e6:.1f}", old_s=f"{best['old']:.2f}",
                             new_s=f"{best['new']:.2f}", old_MBs=f"{rate['old']:.1f}",
                             new_MBs=f"{rate['new']:.1f}", new_cpu_MBs=f"{size / cpu / 1e6:.0f}", speedup=f"{best['old'] / best['new']:.1f}x",
                             identical=same, load=load_average()))
            report(f"to_edgelist MB/s, {kind} release at n={args.n:,}", rate["new"], TARGET_MBS,
                   baseline=f"line-by-line text {rate['old']:.1f} MB/s in the same run",
                   note="" if same else "OUTPUT DIFFERS")
    print(table(rows, ["release", "n", "edges", "MB", "old_s", "new_s", "old_MBs", "new_MBs",
                       "new_cpu_MBs", "speedup", "identical", "load"]))


if __name__ == "__main__":
    main()
