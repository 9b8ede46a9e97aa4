"""Release speed: dpgraph's packed release vs the naive dense numpy release.

Baseline ("naive dense"): ``rng.random((n, n)) < p`` with numpy's default
generator, i.e. only the sampling of a dense boolean flip matrix (it does not
even convert the graph or XOR the edges in, which favours the baseline).

dpgraph, measured three ways in the same run:

* ``sample``: the flips of all pairs, packed (``sample_packed_flips``), with
  the reproducible PCG64 stream (seed) and the secure AES-CTR stream (None);
  this is the like-for-like comparison with the baseline;
* ``release_packed``: sample plus XOR of the true edges, from the encoded graph;
* ``dpgraph.release``: end to end from a networkx graph, including validating
  and encoding the graph (a Python pass over its edges), also compared with a
  naive dense release end to end (``nx.to_numpy_array``, XOR, upper triangle).

Memory is the size of the packed result per unordered pair.

Run:  PYTHONPATH=. DPGRAPH_DATA_DIR=/path/to/data python benchmarks/bench_release.py
"""

from __future__ import annotations

import argparse

import numpy as np

import dpgraph
from dpgraph.core.probabilities import rr_probabilities
from dpgraph.core.randomness import SecureRandom, SeededRandom
from dpgraph.graph.encoding import encode_graph
from dpgraph.graph.release import release_packed, sample_packed_flips

try:  # run as a script or as a module
    from _common import facebook_or_none, machine, random_graph, table, timeit
except ImportError:  # pragma: no cover
    from benchmarks._common import facebook_or_none, machine, random_graph, table, timeit


def bench_graph(name: str, G, repeat: int) -> list[dict]:
    n = G.number_of_nodes()
    rr = rr_probabilities(1.0)
    p = rr.flip_probability
    pairs = n * (n - 1) // 2
    rng = np.random.default_rng(0)
    naive_repeat = max(1, repeat if n <= 5000 else 2)
    t_naive = timeit(lambda: rng.random((n, n)) < p, repeat=naive_repeat, warmup=0 if n > 5000 else 1)
    import networkx as nx

    def naive_end_to_end():
        A = nx.to_numpy_array(G, dtype=bool)
        return np.triu(A ^ (rng.random((n, n)) < p), 1)

    t_naive_e2e = timeit(naive_end_to_end, repeat=naive_repeat, warmup=0 if n > 5000 else 1)
    enc = encode_graph(G)
    rows = [dict(graph=name, method="naive dense rng.random((n,n)) < p", seconds=f"{t_naive:.4f}",
                 mpairs_s=f"{pairs / t_naive / 1e6:.0f}", speedup="1.0",
                 bits_per_pair=f"{8 * n * n / pairs:.1f}"),
            dict(graph=name, method="naive dense end to end (to_numpy_array, XOR, triu)",
                 seconds=f"{t_naive_e2e:.4f}", mpairs_s=f"{pairs / t_naive_e2e / 1e6:.0f}",
                 speedup=f"{t_naive / t_naive_e2e:.1f}", bits_per_pair=f"{8 * n * n / pairs:.1f}")]
    cases = [
        ("sample flips, seed (PCG64)", lambda: sample_packed_flips(n, False, rr.flip_numerator, SeededRandom(1))),
        ("sample flips, secure (AES-CTR)", lambda: sample_packed_flips(n, False, rr.flip_numerator, SecureRandom())),
        ("release_packed, secure", lambda: release_packed(enc, rr, SecureRandom())),
        ("  encode_graph(G) alone (validation + edge list)", lambda: encode_graph(G)),
        ("dpgraph.release(G), seed", lambda: dpgraph.release(G, 1.0, seed=1)),
        ("dpgraph.release(G), secure", lambda: dpgraph.release(G, 1.0)),
    ]
    R = dpgraph.release(G, 1.0, seed=1)
    bits = R._adj.nbytes * 8 / pairs
    for label, fn in cases:
        t = timeit(fn, repeat=repeat)
        part = label.startswith("  ")  # a component, not a release: no rate or ratio
        rows.append(dict(graph=name, method=label, seconds=f"{t:.4f}",
                         mpairs_s="-" if part else f"{pairs / t / 1e6:.0f}",
                         speedup="-" if part else f"{t_naive / t:.1f}",
                         e2e_speedup=f"{t_naive_e2e / t:.1f}" if label.startswith("dpgraph.release") else "",
                         bits_per_pair="-" if part else f"{bits:.2f}"))
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20_000, help="nodes of the random graph (default 20000)")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    print(machine())
    rows = []
    G = facebook_or_none()
    if G is not None:
        rows += bench_graph("ego-Facebook (4039)", G, args.repeat)
    rows += bench_graph(f"G(n={args.n}, avg deg 44)", random_graph(args.n, 44.0), args.repeat)
    print(table(rows, ["graph", "method", "seconds", "mpairs_s", "speedup", "e2e_speedup", "bits_per_pair"]))
    print("speedup: against the bare naive sampling; e2e_speedup: dpgraph.release(G) against the naive "
          "dense release end to end (graph to dense matrix, flips XORed, upper triangle)")
    print("bits_per_pair of the naive release: a 1-byte bool per ordered pair = 16 bits per unordered pair "
          "(plus 64-bit floats while sampling)")


if __name__ == "__main__":
    main()
