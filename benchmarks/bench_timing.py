"""Timing side channel: how much does a dense release's time say about the edge count?

Whoever can time the curator's release learns ``a + b * m`` for the edge count
m unless b is ~0.  This script releases graphs on n nodes with 0 edges and
with about ``--edges`` edges (same n, same epsilon, secure randomness) side by
side in one run and prints the median time of each stage, the difference
(the part that depends on m) and the ratio full / empty:

* ``encode``: validating and reading the networkx graph (a pass over its
  adjacency dicts, inherently linear in m);
* ``sample``: the flips of every pair (depends on n only);
* ``xor``: adding the true edges into the packed flips, both the sort-based
  XOR dpgraph used before (``xor sorted``, the baseline) and the current one;
* ``release``: ``dpgraph.release`` end to end.

Then, at one m: uniform against concentrated edges on two input paths (does the
time reveal more than m?), and the constant-time mode ``max_edges=M``.

Run:  PYTHONPATH=. python benchmarks/bench_timing.py [--n 2000] [--edges 1000000]
"""

from __future__ import annotations

import argparse

import networkx as nx
import numpy as np
from _common import machine, table, timeit

import dpgraph
from dpgraph.core.probabilities import rr_probabilities
from dpgraph.core.randomness import SecureRandom
from dpgraph.graph.dense import sample_packed_flips
from dpgraph.graph.encoding import encode_graph
from dpgraph.graph.packed import words_per_row, xor_edges


def xor_sorted(words: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> None:
    """The previous XOR: sort the word positions, OR-reduce runs, XOR once per word."""
    if rows.size == 0:
        return
    nw = words.shape[1]
    flat = rows.astype(np.int64) * nw + (cols >> 6)
    bit = np.left_shift(np.uint64(1), (cols & 63).astype(np.uint64))
    order = np.argsort(flat, kind="stable")
    flat, bit = flat[order], bit[order]
    starts = np.flatnonzero(np.r_[True, flat[1:] != flat[:-1]])
    words.reshape(-1)[flat[starts]] ^= np.bitwise_or.reduceat(bit, starts)


def measure(G: nx.Graph, n: int, numerator: int, repeat: int) -> dict[str, float]:
    """Median seconds of each stage of a release of ``G``."""
    enc = encode_graph(G)
    scratch = np.zeros((n, words_per_row(n)), dtype=np.uint64)
    return {
        "encode": timeit(lambda: encode_graph(G), repeat),
        "sample": timeit(lambda: sample_packed_flips(n, False, numerator, SecureRandom()), repeat),
        "xor sorted (before)": timeit(lambda: xor_sorted(scratch, enc.rows, enc.cols), repeat),
        "xor (now)": timeit(lambda: xor_edges(scratch, enc.rows, enc.cols), repeat),
        "release": timeit(lambda: dpgraph.release(G, 1.0), repeat),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--edges", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    n, m = args.n, min(args.edges, args.n * (args.n - 1) // 2)
    rr = rr_probabilities(1.0)
    graphs = {"empty": nx.empty_graph(n), f"{m:,} edges": nx.gnm_random_graph(n, m, seed=1)}
    stages = {}
    for name, G in graphs.items():
        stages[name] = measure(G, n, rr.flip_numerator, args.repeat)
    empty, full = stages.values()
    rows = []
    for stage in empty:
        a, b = empty[stage], full[stage]
        rows.append({"stage": stage, "empty ms": f"{1e3 * a:.1f}", f"{m:,} edges ms": f"{1e3 * b:.1f}",
                     "difference ms": f"{1e3 * (b - a):.1f}",
                     "ns per edge": f"{1e9 * (b - a) / m:.0f}",
                     "ratio full/empty": f"{b / a:.1f}" if a > 0 else "inf"})
    print(f"dense release timing, n={n:,}, median of {args.repeat} ({machine()})")
    print(table(rows, list(rows[0])))
    print("The release time still grows with m through 'encode' (reading the networkx graph);"
          " see SECURITY.md for what that reveals and how to hide it.")
    structure(n, min(300_000, m), args.repeat)
    constant_time(n, min(300_000, m), args.repeat)


def structure(n: int, m: int, repeat: int) -> None:
    """Same n and m, edges spread uniformly or concentrated (a dense block): does the
    release time depend on where the edges are?  One row per input path."""
    rng = np.random.default_rng(0)
    pairs = np.array(np.triu_indices(n, 1)).T
    uniform = pairs[rng.choice(len(pairs), m, replace=False)]
    side = int(np.ceil((1 + np.sqrt(1 + 8 * m)) / 2))  # a block of side^2/2 >= m pairs
    block = np.array(np.triu_indices(side, 1)).T[:m]
    rows = []
    for name, make in (("edge array", lambda E: E),
                       ("networkx", lambda E: nx.Graph(E.tolist()) if E.size else E)):
        times = {}
        for kind, E in (("uniform", uniform), ("concentrated", block)):
            G = make(E)
            if isinstance(G, nx.Graph):
                G.add_nodes_from(range(n))
                times[kind] = timeit(lambda G=G: dpgraph.release(G, 1.0), repeat)
            else:
                times[kind] = timeit(lambda G=G: dpgraph.release(G, 1.0, nodes=n), repeat)
        u, c = times["uniform"], times["concentrated"]
        rows.append({"input": name, "uniform ms": f"{1e3 * u:.1f}",
                     "concentrated ms": f"{1e3 * c:.1f}", "ratio": f"{u / c:.2f}"})
    print(f"\nstructure at the same m = {m:,}, n = {n:,} (median of {repeat})")
    print(table(rows, list(rows[0])))
    print("A ratio away from 1 means the time reveals more than m (SECURITY.md, Timing).")


def constant_time(n: int, m: int, repeat: int) -> None:
    """``release(..., max_edges=M)``: the same time for no edges, m uniform and m concentrated
    edges (M = m), against the plain release of the same inputs."""
    rng = np.random.default_rng(1)
    pairs = np.array(np.triu_indices(n, 1)).T
    side = int(np.ceil((1 + np.sqrt(1 + 8 * m)) / 2))
    inputs = {"empty": nx.empty_graph(n),
              "uniform": nx.Graph(pairs[rng.choice(len(pairs), m, replace=False)].tolist()),
              "concentrated": nx.Graph(np.array(np.triu_indices(side, 1)).T[:m].tolist())}
    rows = []
    for name, G in inputs.items():
        G.add_nodes_from(range(n))
        plain = timeit(lambda G=G: dpgraph.release(G, 1.0), repeat)
        padded = timeit(lambda G=G: dpgraph.release(G, 1.0, max_edges=m), repeat)
        rows.append({"networkx input": name, "edges": f"{G.number_of_edges():,}",
                     "plain ms": f"{1e3 * plain:.1f}", f"max_edges={m:,} ms": f"{1e3 * padded:.1f}"})
    print(f"\nconstant-time mode, n = {n:,} (median of {repeat})")
    print(table(rows, list(rows[0])))
    spread = [float(r[f"max_edges={m:,} ms"]) for r in rows]
    print(f"padded times differ by {100 * (max(spread) / min(spread) - 1):.1f}% across the inputs "
          "(the plain ones by the edge work); the rest is the machine's noise.")


if __name__ == "__main__":
    main()
