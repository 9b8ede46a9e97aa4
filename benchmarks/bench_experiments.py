"""Speed of the statistical-query experiments' hot paths, each against a simple baseline.

    PYTHONPATH=. python benchmarks/bench_experiments.py [--big]

1. MWEM's exponential-mechanism sampler: the two-level blockwise inverse CDF used by
   dpgraph.baselines.multiplicative_weights against a full cumulative sum over every query.
2. Mechanism E's answers for many databases: the chunked batch path of the query-set-size
   experiment (one call of the core's unbiased_estimate per chunk) against one
   MechanismE.estimate call per database.
3. A whole MWEM run, 50 databases x |Q| linear queries over K = 5 (the query-set-size
   experiment's inner step), to show |Q| = 2^20 is practical.

Prints a table with times and ratios (baseline / dpgraph).  Timings are wall-clock medians of
a few repetitions on whatever machine runs it.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import time
import warnings

import numpy as np

from dpgraph.core import MechanismE, StatisticalQuery
from dpgraph.exceptions import SeededReleaseWarning
from dpgraph.experiments import ratings as R
from dpgraph.experiments.query_set_size import QUERY_CHUNK, e_answers

mw = importlib.import_module("dpgraph.baselines.multiplicative_weights")

# the benchmark releases with seeds on purpose (repeatable inputs), as the experiments do
warnings.simplefilter("ignore", SeededReleaseWarning)


def timeit(fn, reps=3):
    out = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return statistics.median(out)


def full_cumsum_select(logits, rng):
    w = np.exp(logits - logits.max(axis=1, keepdims=True))
    c = np.cumsum(w, axis=1)
    u = rng.random(logits.shape[0]) * c[:, -1]
    return np.minimum((c < u[:, None]).sum(axis=1), logits.shape[1] - 1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--big", action="store_true", help="include |Q| = 2^20 in every row")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    rows = []
    sizes = [2**16, 2**18] + ([2**20] if args.big else [])
    for Q in sizes:
        logits = rng.random((4, Q)) * 10
        base = timeit(lambda lg=logits: full_cumsum_select(lg.copy(), rng))
        ours = timeit(lambda lg=logits: mw._exp_mech_select(lg.copy(), rng))
        rows.append((f"exp-mech sample, 4 x {Q}", base, ours))

    U = R.RATING_UNIVERSE
    M = MechanismE(U, 1.0)
    dbs = [rng.integers(1, 6, int(n)) for n in rng.integers(1000, 2001, 50)]
    ys = [M.release(d, seed=rng) for d in dbs]
    hist_rel = np.stack([np.bincount(U.encode(y), minlength=5) for y in ys]).astype(float)
    for Q in [2**14, 2**16]:
        F = R.random_row_functions(rng, (Q,))

        def per_db(F=F):
            for d, y in zip(dbs, ys):
                M.estimate(StatisticalQuery.linear(F, n=d.size, universe=U), y)

        def batch(F=F, Q=Q):
            ans = e_answers(M, hist_rel)
            for s in range(0, Q, QUERY_CHUNK):
                ans(F[s : s + QUERY_CHUNK])

        rows.append((f"E answers, 50 dbs x {Q}", timeit(per_db, 2), timeit(batch, 2)))

    hist = np.stack([np.bincount(U.encode(d), minlength=5) for d in dbs]).astype(float)
    for Q in [2**16] + ([2**20] if args.big else []):
        F = R.random_row_functions(rng, (Q,))
        t = timeit(lambda F=F: mw.mwem(hist, F, 1.0, seed=1), 1)
        rows.append((f"MWEM T=10, 50 dbs x {Q}", float("nan"), t))

    print(f"{'task':<32}{'baseline s':>12}{'dpgraph s':>12}{'ratio':>8}")
    for name, base, ours in rows:
        ratio = base / ours if not np.isnan(base) else float("nan")
        print(f"{name:<32}{base:>12.4f}{ours:>12.4f}{ratio:>8.2f}")


if __name__ == "__main__":
    main()
