"""Typed release speed: K-ary mechanism E (K = 4) against the binary release, per pair, side by side.

Each row times, interleaved in the same process (so both sides see the same
load), the best wall time and the best CPU time of the process (the CPU
time moves less with the load of a shared machine; everything timed runs in
one thread):

* the sampler alone: the shift planes of a K = 4 release
  (``sample_shift_planes``) against the binary flips (``sample_packed_flips``),
  the per-pair cost of randomized response itself;
* the release end to end: ``dpgraph.release(G, eps, edge_attr=..., values=...)``
  against ``dpgraph.release(G, eps)``, validation and encoding of the input
  included (the typed encoding reads every tie's attribute: O(m), which weighs
  on small graphs with few pairs per tie);

on Bitcoin Alpha (3,783 users, 14.3 M ordered pairs, K = 4 values: distrust,
trust, strong trust) when available, and on a random undirected graph of
``--n`` nodes with four random tie values.  The target: the typed release
within 2x the binary release's time per pair (ratio typed / binary <= 2).

Run:  DPGRAPH_DATA_DIR=/path/to/data python -m benchmarks --only typed
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Callable

import numpy as np
from _common import load_average, machine, quick, random_graph, report, table

import dpgraph
from dpgraph.core.probabilities import rr_probabilities
from dpgraph.core.randomness import SeededRandom
from dpgraph.exceptions import DroppedAttributesWarning
from dpgraph.graph.dense import sample_packed_flips
from dpgraph.graph.typed.sampler import sample_shift_planes

VALUES = ["distrust", "trust", "strong trust"]


def _interleaved(fns: dict[str, Callable[[], object]], repeat: int) -> dict[str, tuple]:
    """Best (wall, CPU) seconds of each function, the functions timed in turn every round."""
    for fn in fns.values():  # warm-up: numba kernels, caches
        fn()
    best = {name: (float("inf"), float("inf")) for name in fns}
    for _ in range(max(1, repeat)):
        for name, fn in fns.items():
            w0, c0 = time.perf_counter(), time.process_time()
            fn()
            w, c = time.perf_counter() - w0, time.process_time() - c0
            best[name] = (min(best[name][0], w), min(best[name][1], c))
    return best


def _rows(name: str, G, directed: bool, kw: dict, eps: float, repeat: int) -> list[dict]:
    n = G.number_of_nodes()
    pairs = n * (n - 1) // (1 if directed else 2)
    rr2, rr4 = rr_probabilities(eps), rr_probabilities(eps, 4)
    src = SeededRandom(0)
    t = _interleaved({
        "binary sampler": lambda: sample_packed_flips(n, directed, rr2.flip_numerator, src),
        "typed sampler": lambda: sample_shift_planes(n, directed, rr4, src),
        "binary release": lambda: dpgraph.release(G, eps, seed=src, directed=directed),
        "typed release": lambda: dpgraph.release(G, eps, seed=src, directed=directed, **kw),
    }, repeat=repeat)
    rows = []
    for what in ("sampler", "release"):
        (tb, cb), (tt, ct) = t[f"binary {what}"], t[f"typed {what}"]
        ratio = tt / tb
        report(f"typed (K=4) / binary {what} time per pair, {name}, eps={eps:g}", ratio, 2.0,
               higher_is_better=False, baseline=f"binary {what}, same pairs, interleaved",
               note=f"CPU-time ratio {ct / cb:.2f}" + (
                   "" if ratio <= 2 or what == "sampler" else
                   "; the typed release also reads every tie's attribute dict (O(m) Python work)"))
        for kind, sec, cpu in (("binary", tb, cb), ("typed K=4", tt, ct)):
            rows.append(dict(graph=name, eps=f"{eps:g}", step=what, release=kind,
                             seconds=f"{sec:.3f}", ns_per_pair=f"{1e9 * sec / pairs:.2f}",
                             ratio="1" if kind == "binary" else f"{ratio:.2f}",
                             cpu_seconds=f"{cpu:.3f}",
                             cpu_ratio="1" if kind == "binary" else f"{ct / cb:.2f}"))
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=6000 if quick() else 12_000,
                    help="nodes of the random typed graph (default 12000)")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    print(machine())
    print(f"load average before: {load_average()}")
    rows = []
    from dpgraph import datasets

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpgraph.SeededReleaseWarning)
        warnings.simplefilter("ignore", DroppedAttributesWarning)  # the binary side drops them
        if datasets.available("bitcoin-alpha"):
            G = datasets.bitcoin_alpha()
            kw = {"edge_attr": "rating", "bins": [-10, 0, 3, 10], "values": VALUES}
            for eps in (1.0, 4.0):
                rows += _rows("Bitcoin Alpha (directed)", G, True, kw, eps, args.repeat)
        else:
            print("Bitcoin Alpha not found locally (set DPGRAPH_DATA_DIR); skipping it")
        G = random_graph(args.n, 30.0)
        rng = np.random.default_rng(0)
        kinds = rng.integers(0, 3, G.number_of_edges())
        for (u, v), k in zip(G.edges, kinds.tolist()):
            G.edges[u, v]["kind"] = VALUES[k]
        kw = {"edge_attr": "kind", "values": VALUES}
        rows += _rows(f"G(n={args.n:,}, avg deg 30)", G, False, kw, 1.0, args.repeat)
    print(table(rows, ["graph", "eps", "step", "release", "seconds", "ns_per_pair", "ratio",
                       "cpu_seconds", "cpu_ratio"]))
    print(f"load average after: {load_average()}")


if __name__ == "__main__":
    main()
