"""Sparse release at scale: time and peak memory against the output size.

Target: a 1,000,000-node graph with about 10^7 true edges at eps = 1,
released with an output of about 5 x 10^7 edges on a 2-core machine; peak
memory proportional to the output, never to the 5 x 10^11 vertex pairs.

The baseline in the same run is the dense bit-packed release, measured at a
size that fits (``--dense-n`` nodes) and extrapolated to n by its per-pair
throughput and its n^2 / 8 bytes.

Usage::

    PYTHONPATH=$PWD python benchmarks/bench_sparse.py --out bench_out/sparse
"""

from __future__ import annotations

import argparse
import csv
import gc
import os
import resource
import time
import tracemalloc

import numpy as np


def _random_edges(n: int, m: int, seed: int):
    from dpgraph.core import pair_count, pair_from_index

    rng = np.random.default_rng(seed)
    keys = np.unique(rng.integers(0, pair_count(n, False), int(m * 1.001) + 100))
    keys = rng.permutation(keys)[:m]
    return pair_from_index(np.sort(keys), n, False)


def _rss_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--m", type=int, default=10_000_000)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--targets", type=float, nargs="+", default=[5e6, 2e7, 5e7])
    ap.add_argument("--dense-n", type=int, default=20_000)
    ap.add_argument("--accuracy-reps", type=int, default=300)
    ap.add_argument("--out", default="bench_out/sparse")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    print("load average at start (other processes share these cores): "
          + ", ".join(f"{x:.1f}" for x in os.getloadavg()))

    from dpgraph.core import SecureRandom, pair_count, rr_probabilities, subsampled_probabilities
    from dpgraph.graph.dense import release_packed
    from dpgraph.graph.encoding import EncodedGraph, NodeIndex
    from dpgraph.graph.sparse import release_sparse

    rr = rr_probabilities(args.epsilon)
    n, N = args.n, pair_count(args.n, False)
    print(f"input: n={n:,} nodes, m={args.m:,} true edges, N={N:.3e} pairs, eps={args.epsilon}")
    t0 = time.perf_counter()
    rows, cols = _random_edges(n, args.m, seed=1)
    enc = EncodedGraph(NodeIndex(range(n)), rows, cols, False)
    print(f"  synthetic input built in {time.perf_counter() - t0:.1f} s, "
          f"process RSS so far {_rss_gib():.2f} GiB")

    # baseline: the dense release where it fits, extrapolated
    dn = args.dense_n
    denc = EncodedGraph(NodeIndex(range(dn)), np.zeros(0, np.int64), np.zeros(0, np.int64), False)
    t0 = time.perf_counter()
    dense = release_packed(denc, rr, SecureRandom())
    dense_t = time.perf_counter() - t0
    dense_rate = pair_count(dn, False) / dense_t
    dense_time_n = N / dense_rate
    dense_bytes_n = n * ((n + 63) // 64) * 8
    del dense
    print(f"  dense baseline at n={dn:,}: {dense_t:.2f} s = {dense_rate / 1e6:.0f} M pairs/s/core; "
          f"extrapolated to n={n:,}: {dense_time_n / 3600:.1f} h, {dense_bytes_n / 2**30:.0f} GiB")

    rows_out = []
    for target in args.targets:
        probs = subsampled_probabilities(rr, n, False, target_edges=int(target))
        gc.collect()
        tracemalloc.start()
        t0 = time.perf_counter()
        A = release_sparse(enc, probs, SecureRandom())
        dt = time.perf_counter() - t0
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        out = A.number_of_edges()
        rows_out.append({
            "target_edges": int(target), "keep": probs.keep, "output_edges": out,
            "seconds": dt, "peak_bytes": peak, "result_bytes": A.nbytes,
            "peak_bytes_per_output_edge": peak / out, "output_edges_per_s": out / dt,
            "speedup_vs_dense": dense_time_n / dt, "memory_ratio_vs_dense": dense_bytes_n / peak,
        })
        del A
    hdr = f"{'target':>10} {'keep':>10} {'output':>11} {'time s':>7} {'peak MiB':>9} " \
          f"{'B/edge':>7} {'Medges/s':>9} {'x dense t':>10} {'x dense mem':>11}"
    print(hdr)
    for r in rows_out:
        print(f"{r['target_edges']:>10.2e} {r['keep']:>10.3e} {r['output_edges']:>11,} "
              f"{r['seconds']:>7.1f} {r['peak_bytes'] / 2**20:>9.0f} "
              f"{r['peak_bytes_per_output_edge']:>7.1f} {r['output_edges_per_s'] / 1e6:>9.2f} "
              f"{r['speedup_vs_dense']:>10.0f} {r['memory_ratio_vs_dense']:>11.0f}")
    print(f"peak RSS of the whole process (input graph included): {_rss_gib():.2f} GiB")
    with open(os.path.join(args.out, "bench_sparse.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows_out[0]))
        w.writeheader()
        w.writerows(rows_out)

    if args.accuracy_reps:
        _accuracy(args.accuracy_reps, args.out)


def _accuracy(reps: int, out: str) -> None:
    """z-scores of sparse cut estimates over many releases of a small graph."""
    import networkx as nx
    from tqdm.auto import tqdm

    import dpgraph

    G = nx.gnp_random_graph(200, 0.05, seed=7)
    S, T = list(range(90)), list(range(90, 200))
    truth = nx.cut_size(G, S, T)
    z_exact, z_bound = [], []
    for _ in tqdm(range(reps), desc="accuracy releases"):
        R = dpgraph.release(G, epsilon=1.0, keep=0.2)
        est = R.cut(S, T)
        alpha, beta, d = 1 - R.channel.r[0], R.channel.r[1], R.channel.d
        var = (truth * alpha * (1 - alpha) + (len(S) * len(T) - truth) * beta * (1 - beta)) / d**2
        z_exact.append((est.raw - truth) / np.sqrt(var))
        z_bound.append((est.raw - truth) / est.std)
    z_exact, z_bound = np.array(z_exact), np.array(z_bound)
    print(f"accuracy over {reps} sparse releases (n=200, keep=0.2, eps=1), cut truth={truth}:")
    print(f"  z with the exact variance:  mean {z_exact.mean():+.3f} (4 SE = {4 / np.sqrt(reps):.3f}), "
          f"variance {z_exact.var(ddof=1):.3f}")
    print(f"  z with the reported bound:  mean {z_bound.mean():+.3f}, variance {z_bound.var(ddof=1):.3f}"
          " (< 1: the reported std is a worst-case bound)")
    np.savetxt(os.path.join(out, "sparse_zscores.csv"), np.c_[z_exact, z_bound], delimiter=",",
               header="z_exact,z_reported_bound", comments="")


if __name__ == "__main__":
    main()
