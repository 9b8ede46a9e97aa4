"""Mechanism E on 10^7 rows, K = 5: dpgraph against the naive sampler.

The naive sampler is the textbook one: build the (n, K) pmf matrix, draw one
float per row and take the first cumulative probability above it
(``rng.random`` + ``argmax``).  Both run here, side by side, on the same
machine and data; the table reports medians and the ratio.

    python benchmarks/bench_mechanism.py [--rows 10000000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from _common import report, timeit

from dpgraph.core import MechanismE, Universe
from dpgraph.core.randomness import SecureRandom
from dpgraph.core.sampling import rr_sample


def naive_release(x: np.ndarray, K: int, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    g = 1 + (K - 1) * math.exp(-epsilon)
    pmf = np.full((x.size, K), math.exp(-epsilon) / g)
    pmf[np.arange(x.size), x] = 1 / g
    u = rng.random((x.size, 1))
    return np.argmax(np.cumsum(pmf, axis=1) > u, axis=1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    K, eps = 5, 1.0
    rng = np.random.default_rng(0)
    U = Universe([1, 2, 3, 4, 5])
    X = rng.integers(1, 6, size=args.rows)
    idx = U.encode(X)
    M = MechanismE(U, eps)

    rows = [
        (
            "naive rng.random + argmax",
            timeit(lambda: naive_release(idx, K, eps, rng), repeat=args.repeats),
        ),
        ("dpgraph, seeded PCG64", timeit(lambda: M.release(X, seed=1), repeat=args.repeats)),
        ("dpgraph, secure AES-CTR (default)", timeit(lambda: M.release(X), repeat=args.repeats)),
        (
            "dpgraph kernel (indices, no labels)",
            timeit(lambda: rr_sample(idx, M.probabilities, SecureRandom()), repeat=args.repeats),
        ),
    ]
    base = rows[0][1]
    print(f"mechanism E, n = {args.rows:,} rows, K = {K}, eps = {eps}; best of {args.repeats}")
    print("(the naive sampler works on value indices; dpgraph's release maps labels in and out)")
    print(f"{'implementation':<36}{'seconds':>10}{'Mrows/s':>10}{'speed-up':>10}")
    for name, t in rows:
        print(f"{name:<36}{t:>10.3f}{args.rows / t / 1e6:>10.1f}{base / t:>9.1f}x")
    for name, t in rows[1:]:
        report(f"mechanism E, {name} vs naive, {args.rows:,} rows K={K}", base / t, None,
               baseline="naive rng.random + argmax")


if __name__ == "__main__":
    main()
