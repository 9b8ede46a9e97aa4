"""Release speed: dpgraph.release end to end vs the naive dense numpy release; sampler rate; to_networkx.

Baselines, timed in the same process:

* naive dense release end to end: ``nx.to_numpy_array(G)``, ``rng.random((n, n)) < p``,
  XOR, upper triangle (what one writes without dpgraph);
* naive dense sampling alone (``rng.random((n, n)) < p``), for the sampler;
* ``to_networkx`` as it was built before (``Graph.add_edges_from`` over the
  released edges), for ``R.to_networkx()``.

dpgraph is timed end to end (``dpgraph.release(G)``: validating and encoding
the graph, sampling every pair, XORing the edges), with the secure default
(AES-CTR) and with a seed (PCG64); its parts are listed too.  The in-memory
sampler rate is measured at ``--sampler-n`` nodes (default 100,000) writing
into an already-touched matrix, so it counts sampling, not the operating
system's first touch of fresh pages (listed separately).

Run:  DPGRAPH_DATA_DIR=/path/to/data python -m benchmarks --only release
"""

from __future__ import annotations

import argparse
import time

import networkx as nx
import numpy as np
from _common import (
    facebook_or_none,
    machine,
    quick,
    random_graph,
    report,
    table,
    timeit,
    timeit_interleaved,
)

import dpgraph
from dpgraph.core.probabilities import rr_probabilities
from dpgraph.core.randomness import SecureRandom, SeededRandom
from dpgraph.graph.dense import sample_packed_flips
from dpgraph.graph.encoding import encode_graph
from dpgraph.graph.packed import words_per_row


def naive_release(G: nx.Graph, p: float, rng: np.random.Generator) -> np.ndarray:
    n = G.number_of_nodes()
    A = nx.to_numpy_array(G, dtype=bool)
    return np.triu(A ^ (rng.random((n, n)) < p), 1)


def bench_graph(name: str, G: nx.Graph, repeat: int, target: float) -> list[dict]:
    n = G.number_of_nodes()
    p = rr_probabilities(1.0).flip_probability
    pairs = n * (n - 1) // 2
    rng = np.random.default_rng(0)
    big = n > 5000
    nodes = list(G.nodes())
    edges = np.array(list(G.edges()))  # the same graph as an (m, 2) edge array with its public nodes
    # every round times each function once, in turn: all sides see the same load
    t = timeit_interleaved({
        "naive": lambda: naive_release(G, p, rng),
        "secure": lambda: dpgraph.release(G, 1.0),
        "seed": lambda: dpgraph.release(G, 1.0, seed=1),
        "encode": lambda: encode_graph(G),
        "array": lambda: dpgraph.release(edges, 1.0, nodes=nodes),
    }, repeat=repeat, warmup=0 if big else 1)
    t_naive, t_secure, t_seed, t_enc, t_arr = (t[k] for k in ("naive", "secure", "seed", "encode", "array"))
    rows = [dict(graph=name, method="naive dense release end to end", seconds=f"{t_naive:.4f}",
                 mpairs_s=f"{pairs / t_naive / 1e6:.0f}", speedup="1")]
    for label, tt in [("dpgraph.release(G), secure (default)", t_secure), ("dpgraph.release(G), seed", t_seed)]:
        rows.append(dict(graph=name, method=label, seconds=f"{tt:.4f}", mpairs_s=f"{pairs / tt / 1e6:.0f}",
                         speedup=f"{t_naive / tt:.1f}"))
    rows.append(dict(graph=name, method="  part: encode_graph(G) (validate, read edges)",
                     seconds=f"{t_enc:.4f}", mpairs_s="-", speedup="-"))
    rows.append(dict(graph=name, method="dpgraph.release(edge array, nodes=...), secure", seconds=f"{t_arr:.4f}",
                     mpairs_s=f"{pairs / t_arr / 1e6:.0f}", speedup=f"{t_naive / t_arr:.1f}"))
    report(f"dpgraph.release((m, 2) edge array) secure vs naive dense release from G, {name}", t_naive / t_arr,
           None, baseline="naive dense release end to end (from the networkx graph)",
           note="the same graph handed over as an edge array: no networkx dicts to read")
    report(f"dpgraph.release(G) secure vs naive dense release, {name}", t_naive / t_secure, target,
           baseline="naive dense release end to end",
           note=f"encode_graph {1e3 * t_enc:.1f} ms of {1e3 * t_secure:.1f} ms")
    report(f"dpgraph.release(G, seed) vs naive dense release, {name}", t_naive / t_seed, None,
           baseline="naive dense release end to end")
    return rows


def bench_sampler(n: int, repeat: int) -> list[dict]:
    m = rr_probabilities(1.0).flip_numerator
    pairs = n * (n - 1) // 2
    t0 = time.perf_counter()
    out = np.zeros((n, words_per_row(n)), dtype=np.uint64)
    out[...] = 1  # first touch of every page, outside the timings below
    t_touch = time.perf_counter() - t0

    def sample(source):
        out[...] = 0
        sample_packed_flips(n, False, m, source, out=out)

    clear = timeit(lambda: out.__setitem__(Ellipsis, 0), repeat=repeat)
    t_sec = max(timeit(lambda: sample(SecureRandom()), repeat=repeat) - clear, 1e-9)
    t_seed = max(timeit(lambda: sample(SeededRandom(1)), repeat=repeat) - clear, 1e-9)
    # the naive sampler's rate, at a size whose float matrix fits in memory
    k = min(n, 10_000)
    gen = np.random.default_rng(0)
    t_naive = timeit(lambda: gen.random((k, k)) < 0.2689, repeat=2, warmup=0)
    naive_rate = k * (k - 1) / 2 / t_naive
    report(f"in-memory sampler, secure, n={n:,}: billion pairs/s", pairs / t_sec / 1e9, 1.5,
           baseline="absolute rate (target 1.5)",
           note=f"{pairs / t_sec / naive_rate:.0f}x the naive sampler's rate; first touch of the "
                f"{out.nbytes / 2**30:.2f} GiB matrix {t_touch:.1f} s (OS page faults), not included")
    report(f"in-memory sampler, seed (PCG64), n={n:,}: billion pairs/s", pairs / t_seed / 1e9, None,
           baseline="absolute rate")
    return [dict(graph=f"n={n:,}", method=label, seconds=f"{t:.3f}", mpairs_s=f"{pairs / t / 1e6:,.0f}",
                 speedup=f"{pairs / t / naive_rate:.0f}")
            for label, t in [("sampler, secure (AES-CTR), into a touched matrix", t_sec),
                             ("sampler, seed (PCG64), into a touched matrix", t_seed),
                             ("  first touch of the matrix's pages (not included)", t_touch)]] + [
        dict(graph=f"n={k:,}", method="naive rng.random((n,n)) < p (rate baseline)", seconds=f"{t_naive:.3f}",
             mpairs_s=f"{naive_rate / 1e6:,.0f}", speedup="1")]


def bench_to_networkx(name: str, G: nx.Graph, repeat: int) -> list[dict]:
    R = dpgraph.release(G, 1.0, seed=1)
    r, c = R.released_edges()
    labels = R.nodes

    def before():  # Graph.add_edges_from over the released edges
        H = nx.Graph()
        H.add_nodes_from(labels)
        H.add_edges_from(zip(map(labels.__getitem__, r.tolist()), map(labels.__getitem__, c.tolist())))
        return H

    assert nx.utils.graphs_equal(before(), R.to_networkx())
    t = timeit_interleaved({"before": before, "now": R.to_networkx}, repeat=repeat, warmup=0)
    t_old, t_new = t["before"], t["now"]
    report(f"R.to_networkx() vs add_edges_from, {name} ({r.size:,} edges)", t_old / t_new, 3.0,
           baseline="Graph.add_edges_from over the released edges")
    return [dict(graph=name, method="to_networkx via add_edges_from (before)", seconds=f"{t_old:.2f}",
                 mpairs_s="-", speedup="1"),
            dict(graph=name, method="R.to_networkx()", seconds=f"{t_new:.2f}", mpairs_s="-",
                 speedup=f"{t_old / t_new:.1f}")]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000 if quick() else 20_000,
                    help="nodes of the random graph (default 20000)")
    ap.add_argument("--sampler-n", type=int, default=50_000 if quick() else 100_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    print(machine())
    rows = []
    G = facebook_or_none()
    if G is not None:
        rows += bench_graph("ego-Facebook (4039)", G, args.repeat, 25.0)
    rows += bench_graph(f"G(n={args.n}, avg deg 44)", random_graph(args.n, 44.0), args.repeat, 50.0)
    rows += bench_sampler(args.sampler_n, args.repeat)
    rows += bench_to_networkx("ego-Facebook" if G is not None else "G(4039, avg deg 44)",
                              G if G is not None else random_graph(4039, 44.0), 2)
    print(table(rows, ["graph", "method", "seconds", "mpairs_s", "speedup"]))


if __name__ == "__main__":
    main()
