"""The sparse release's size check against the sampler's real peak (tracemalloc).

A sparse release checks its memory before the ledger is charged, from public
quantities only (:func:`dpgraph.graph.sparse.sparse_release_bytes`); if the
sampler then needed more than the check said, a release could pass the
check, be charged and die with MemoryError.  This measures, for each case,
the peak tracemalloc sees while the sampler runs (after the charge: the
input's sorted edges and mask, allocated before it by
:func:`~dpgraph.graph.sparse.sparse_input`, are not counted) against the
estimate with the true edge count declared as the bound, and against the
estimate of the previous version (the output twice, 17 bytes an edge, no
candidate batch, no margin).  Every peak / estimate must be below 1.

Usage::

    PYTHONPATH=$PWD python benchmarks/bench_release_memory.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import tracemalloc

import numpy as np


def _edges(n: int, m: int, seed: int) -> np.ndarray:
    from dpgraph.core import pair_count, pair_from_index

    rng = np.random.default_rng(seed)
    keys = np.unique(rng.integers(0, pair_count(n, False), int(m * 1.001) + 100))[:m]
    r, c = pair_from_index(keys, n, False)
    return np.stack([r, c], axis=1)


def _previous_estimate(probs, n: int, m: int) -> int:
    """The check before this version: output twice plus six deviations, 17 bytes an edge."""
    from dpgraph.core import pair_count

    N = pair_count(n, False)
    a, b = float(probs.alpha), float(probs.beta)
    mean = a * m + b * (N - m)
    std = (a * (1 - a) * m + b * (1 - b) * (N - m)) ** 0.5
    return int(2 * 4 * (mean + 6 * std + 1)) + 17 * m + 16 * (n + 1)


def measure(n: int, m: int, keep: float, seed: int = 0) -> tuple[int, int, int]:
    """(peak, estimate, previous estimate) in bytes for one sparse release at epsilon 1."""
    from dpgraph.core import SeededRandom, rr_probabilities, subsampled_probabilities
    from dpgraph.graph.inputs import read_input
    from dpgraph.graph.sparse import release_sparse, sparse_input, sparse_release_bytes

    enc = read_input(_edges(n, m, seed), nodes=n)
    probs = subsampled_probabilities(rr_probabilities(1.0), n, False, keep=keep)
    data = sparse_input(enc)
    tracemalloc.start()
    try:
        release_sparse(data, probs, SeededRandom(seed + 1))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    m = int(enc.rows.size)
    return peak, sparse_release_bytes(probs, n, False, m), _previous_estimate(probs, n, m)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the two smallest cases only")
    args = ap.parse_args()
    cases = [(20_000, 0, 1.0), (20_000, 3_000_000, 1.0), (30_000, 10, 1.0),
             (20_000, 1_000_000, 0.1), (20_000, 0, 0.01), (200_000, 1_000_000, 0.001)]
    if args.quick:
        cases = [(4_000, 10_000, 1.0), (4_000, 10_000, 0.1)]
    print(f"load average: {os.getloadavg()[0]:.2f}")
    print(f"{'n':>8} {'m':>10} {'keep':>6} {'peak MiB':>9} {'est. MiB':>9} {'peak/est':>9} "
          f"{'previous':>9} {'peak/prev':>9}")
    worst = 0.0
    for n, m, keep in cases:
        peak, est, prev = measure(n, m, keep)
        worst = max(worst, peak / est)
        print(f"{n:>8,} {m:>10,} {keep:>6g} {peak / 2**20:>9.1f} {est / 2**20:>9.1f} "
              f"{peak / est:>9.3f} {prev / 2**20:>9.1f} {peak / prev:>9.3f}")
    print(f"worst peak / estimate: {worst:.3f} ({'within' if worst <= 1 else 'BEYOND'} the check)")


if __name__ == "__main__":
    main()
