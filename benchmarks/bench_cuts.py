"""Cut queries: PrivateGraph.cuts vs networkx.cut_size on the same released graph.

100 random half cuts (S a uniform half of the nodes, T the rest) of one
release of ego-Facebook (or, without the data, of a random graph of the same
size).  networkx is timed on ``R.to_networkx()`` of the same release, so both
sides answer the same raw counts; dpgraph also debiases and attaches stds.
networkx is slow (about a second a query), so it is timed on ``--nx-queries``
queries and its per-query time is scaled; the ratio is per query.

Run:  PYTHONPATH=. DPGRAPH_DATA_DIR=/path/to/data python benchmarks/bench_cuts.py
"""

from __future__ import annotations

import argparse
import time

import networkx as nx
import numpy as np

import dpgraph
from dpgraph.core.estimators import count_estimate

try:
    from _common import facebook_or_none, machine, random_graph, table, timeit
except ImportError:  # pragma: no cover
    from benchmarks._common import facebook_or_none, machine, random_graph, table, timeit


def half_cuts(nodes, q: int, seed: int) -> list:
    rng = np.random.default_rng(seed)
    nodes = np.asarray(nodes)
    n = nodes.size
    out = []
    for _ in range(q):
        perm = rng.permutation(n)
        out.append((nodes[perm[: n // 2]].tolist(), nodes[perm[n // 2 :]].tolist()))
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--nx-queries", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    print(machine())
    G = facebook_or_none()
    name = "ego-Facebook"
    if G is None:
        G, name = random_graph(4039, 44.0), "G(4039, avg deg 44)"
    R = dpgraph.release(G, 1.0, seed=1)
    pairs = half_cuts(R.nodes, args.queries, seed=2)
    t_cuts = timeit(lambda: R.cuts(pairs), repeat=args.repeat)
    t_cut = timeit(lambda: [R.cut(S, T) for S, T in pairs], repeat=max(1, args.repeat // 2))
    # the counting engine alone (positions in, raw counts out): what PrivateGraph.cuts
    # spends beyond this is resolving node labels to positions and the estimator
    index = R._index
    pos = [(index.indices(S, "S"), index.indices(T, "T")) for S, T in pairs]
    t_engine = timeit(lambda: [R._adj.cut_count(s, t) for s, t in pos], repeat=args.repeat)
    t_labels = timeit(lambda: [(index.indices(S, "S"), index.indices(T, "T")) for S, T in pairs],
                      repeat=args.repeat)
    H = R.to_networkx()
    k = min(args.nx_queries, len(pairs))
    t0 = time.perf_counter()
    nx_counts = [nx.cut_size(H, S, T) for S, T in pairs[:k]]
    t_nx = (time.perf_counter() - t0) / k
    # same raw counts: invert the debiasing check through the public estimator
    est = R.cuts(pairs[:k])
    again = count_estimate(np.asarray(nx_counts, float), est.high, R.channel).value
    assert np.allclose(again, est.value), "networkx and dpgraph disagree on the released counts"
    per_q = t_cuts / len(pairs)
    rows = [
        dict(method="networkx.cut_size on to_networkx()", ms_per_query=f"{1e3 * t_nx:.2f}", speedup="1"),
        dict(method="PrivateGraph.cut (one at a time)", ms_per_query=f"{1e3 * t_cut / len(pairs):.3f}",
             speedup=f"{t_nx / (t_cut / len(pairs)):.0f}"),
        dict(method=f"PrivateGraph.cuts ({len(pairs)} at once)", ms_per_query=f"{1e3 * per_q:.3f}",
             speedup=f"{t_nx / per_q:.0f}"),
        dict(method="  of which: node labels -> positions", ms_per_query=f"{1e3 * t_labels / len(pairs):.3f}",
             speedup="-"),
        dict(method="  of which: packed counting engine", ms_per_query=f"{1e3 * t_engine / len(pairs):.3f}",
             speedup=f"{t_nx / (t_engine / len(pairs)):.0f}"),
    ]
    print(f"{name}: {R.number_of_nodes()} nodes, {len(pairs)} random half cuts; "
          f"networkx timed on {k} queries (same counts checked)")
    print(table(rows, ["method", "ms_per_query", "speedup"]))


if __name__ == "__main__":
    main()
