"""R.to_edgelist: MB/s of the direct writer against the previous block formatter, same run.

For a dense and a sparse release (``target_edges = 250 n``) at eps = 1 of
``nx.fast_gnp_random_graph(n, 10/n)``: the time to write the edge list with
``R.to_edgelist`` (with numba: one compiled loop lists a row block's pairs and
writes their lines, two threads, blocks written in order) and with the
previous ``to_edgelist`` (a frozen copy below, ``prev_to_edgelist``: the
degrees for the exact size, then pairs listed by ``edge_blocks`` and formatted
by ``write_edge_lines``, one thread); with ``--fstring`` also the first
formatter (one f-string per edge, ``old_to_edgelist``).  The file's size and
the rates in MB/s, the files checked byte-identical.  Each side is timed end
to end (formatting and writing to ``--dir``), best of ``--repeat``, the sides
interleaved so they see the same load; ``first_s`` is the new side's first
call on a fresh release (which pays what the release computes once, e.g. the
previous writer's degree pass), and ``new_cpu_MBs`` its rate per CPU second.

    python benchmarks/bench_export.py [--n 20000] [--repeat 3] [--dir /tmp] [--quick] [--fstring]
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
from dpgraph.graph.convert import edge_blocks, edgelist_bytes, write_edge_lines

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


def prev_to_edgelist(R, path, delimiter=" "):
    """The previous to_edgelist: the exact size from the degrees, then edge_blocks + write_edge_lines."""
    labels = [str(v) for v in R.nodes]
    m = R.number_of_released_edges()
    edgelist_bytes(labels, R.released_degrees() if not R.directed else None, m, delimiter, R.directed)
    kind = "directed" if R.directed else "undirected"
    with open(path, "wb") as fh:
        fh.write(f"# dpgraph {kind} release: {R.number_of_nodes()} nodes, "
                 f"epsilon={R.epsilon:g}, flip_probability={R.flip_probability:.6g}, "
                 f"keep={R.keep:.6g}; isolated nodes have no line\n".encode())
        write_edge_lines(fh, labels, edge_blocks(R.adjacency), delimiter)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=5_000 if quick() else 20_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", default=None, help="folder for the files (default: a temporary one)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--fstring", action="store_true", help="also time the f-string formatter")
    args = ap.parse_args()
    if args.quick:
        args.n = min(args.n, 5_000)
    print(machine())
    G = nx.fast_gnp_random_graph(args.n, 10 / args.n, seed=0)
    rows = []
    with tempfile.TemporaryDirectory(dir=args.dir) as folder:
        for kind, kw in (("dense", {}), ("sparse", dict(target_edges=250 * args.n))):
            t0 = time.perf_counter()
            R = dpgraph.release(G, epsilon=1.0, seed=1, **kw)
            print(f"{kind}: released {R.number_of_released_edges():,} edges in "
                  f"{time.perf_counter() - t0:.1f} s")
            new, prev, old = (os.path.join(folder, f"{x}.txt") for x in ("new", "prev", "old"))
            first = {}
            for side, fn in (("new", lambda R, p=new: R.to_edgelist(p)),
                             ("prev", lambda R, p=prev: prev_to_edgelist(R, p))):
                fresh = dpgraph.release(G, epsilon=1.0, seed=1, **kw)  # nothing computed yet
                t0 = time.perf_counter()
                fn(fresh)
                first[side] = time.perf_counter() - t0
                del fresh
            sides = {"new": lambda R=R, p=new: R.to_edgelist(p),
                     "prev": lambda R=R, p=prev: prev_to_edgelist(R, p)}
            if args.fstring:
                sides["old"] = lambda R=R, p=old: old_to_edgelist(R, p)
            best = timeit_interleaved(sides, repeat=args.repeat, warmup=0)
            c0 = time.process_time()
            R.to_edgelist(new)
            cpu = time.process_time() - c0
            same = filecmp.cmp(new, prev, shallow=False) and (
                not args.fstring or filecmp.cmp(new, old, shallow=False))
            size = os.path.getsize(new)
            rate = {k: size / v / 1e6 for k, v in best.items()}
            row = dict(release=kind, n=f"{args.n:,}", edges=f"{R.number_of_released_edges():,}",
                       MB=f"{size / 1e6:.1f}", prev_first_s=f"{first['prev']:.2f}",
                       new_first_s=f"{first['new']:.2f}", prev_s=f"{best['prev']:.2f}",
                       new_s=f"{best['new']:.2f}", prev_MBs=f"{rate['prev']:.1f}",
                       new_MBs=f"{rate['new']:.1f}", new_cpu_MBs=f"{size / cpu / 1e6:.0f}",
                       speedup=f"{best['prev'] / best['new']:.2f}x",
                       old_MBs=f"{rate['old']:.1f}" if args.fstring else "-",
                       identical=same, load=load_average())
            rows.append(row)
            report(f"to_edgelist MB/s, {kind} release at n={args.n:,}", rate["new"], TARGET_MBS,
                   baseline=f"previous block formatter {rate['prev']:.1f} MB/s in the same run",
                   note="" if same else "OUTPUT DIFFERS")
    print(table(rows, list(rows[0])))


if __name__ == "__main__":
    main()
