"""Continuous data in [0, 1]: discretize, release with mechanism E, answer Lipschitz queries.

The paper (section V) handles rows x_i in [0, 1] by rounding each to a k-bit cell with
2^(2k) = sqrt(n) and running mechanism E on the 2^k cells.  This script shows one release
in detail, then the error against n next to the Proposition's bound.

    PYTHONPATH=. python examples/continuous.py                 # quick (a few seconds)
    PYTHONPATH=. python examples/continuous.py --full          # 20 runs, n up to 4^10
    PYTHONPATH=. python examples/continuous.py --out results/  # keep the files there

Writes continuous.csv / .png / .json to --out DIR, or, without --out, to a fresh temporary
folder whose path is printed (nothing is written to the current folder unless asked).
The releases here are seeded so the printed numbers are reproducible; seeded releases are
for demonstrations and experiments only, so the example silences SeededReleaseWarning
(publish releases made with seed=None).
"""

from __future__ import annotations

import argparse
import tempfile
import warnings

import numpy as np

from dpgraph import SeededReleaseWarning, bounds
from dpgraph.core import MechanismE, StatisticalQuery, Universe
from dpgraph.experiments.continuous import continuous
from dpgraph.experiments.ratings import write_outputs


def one_release(n: int = 100_000, epsilon: float = 1.0, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    x = rng.beta(2.0, 5.0, size=n)                 # the private rows, in [0, 1]
    k = bounds.discretization_bits(n)               # 2^(2k) ~ sqrt(n)
    cells = bounds.discretize(x, k)                 # cell index of each row
    U = Universe(range(1 << k))
    M = MechanismE(U, epsilon)
    with warnings.catch_warnings():                 # seeded on purpose: a reproducible demo
        warnings.simplefilter("ignore", SeededReleaseWarning)
        Y = M.release(cells, seed=seed)             # the eps-DP synthetic database
    grid = np.arange(1 << k) / (1 << k)             # cell representatives x^ = cell / 2^k
    # query: mean of the 1-Lipschitz row function phi(u) = |u - 0.3|, normalized by its
    # range over [0, 1] (c = 0.7), as in the paper's definition
    phi = np.abs(grid - 0.3)
    q = StatisticalQuery.linear(phi, n=n, universe=U)
    est = M.estimate(q, Y)
    scale = q.normalizer / (n * 0.7)                # renormalize by the continuous range
    truth = np.abs(x - 0.3).mean() / 0.7
    lo, hi = (v * scale for v in est.ci(0.95))
    print(f"n = {n}, k = {k} bits ({1 << k} cells), epsilon = {epsilon}")
    print(f"true q(x)          = {truth:.5f}")
    print(f"discretized q(x^)  = {q(cells) * scale:.5f}   (what E estimates without bias)")
    print(f"estimate from Y    = {est.value * scale:.5f}   95% CI [{lo:.5f}, {hi:.5f}]"
          f"; covers q(x^): {lo <= q(cells) * scale <= hi}")
    print(f"the discretization bias q(x^) - q(x) is at most L/(c 2^k) = {1 / (0.7 * (1 << k)):.4f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--full", action="store_true", help="full curve: 20 runs, n = 4^4 .. 4^10")
    ap.add_argument("--out", default=None,
                    help="output folder (default: a new temporary folder, printed)")
    args = ap.parse_args()
    out = args.out if args.out is not None else tempfile.mkdtemp(prefix="dpgraph-continuous-")
    one_release()
    kw = {} if args.full else {"sizes": (256, 4096, 65536), "n_queries": 50, "runs": 3}
    res = continuous(**kw, progress=False)
    paths = write_outputs(res, out)
    t = res.meta["targets"]
    print(f"\nworst-case squared error vs n: fitted slope {t['slope']:.3f} "
          f"(Proposition: -1/2); under the finite-n bound: {t['all_under_finite_n_bound']}")
    for row in res.summary:
        print(f"  n = {row['n']:>8}  k = {row['k']}  error = {row['worst_sq']:.3g}"
              f"  bound = {row['finite_n_bound']:.3g}")
    print(f"output folder: {out}")
    print(f"plot: {paths['png']}")


if __name__ == "__main__":
    main()
