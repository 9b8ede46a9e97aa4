"""The packed triangle pass: every pair ANDed against the released edges and probed columns.

The pass's fourth-moment sum A2 (sum over j of c_ij^2, which enters only the
variance estimates) is the one reduction that needs c_ij off the released
edges.  Counted exactly it needs every pair ANDed, n (n - 1) / 2 x ceil(n/64)
word operations; estimated from ``PROBE_COLUMNS`` probed columns (above
4 ``PROBE_COLUMNS`` nodes, the library's default) only the released edges and
the probed pairs are ANDed.  Both run here side by side on the same release
(the exact pass is the probe with every column), in one process, each after
the symmetric words are built (timed apart): seconds, the model's
prediction, their ratio, and the triangle estimate and its std from either
(the estimate must be the same; the std differs by the probe's noise).
At 10^5 nodes the exact pass is predicted at about a quarter of an hour and
is run only with ``--exact-at-largest``.

Input: the methods table's planted partition (10 blocks, average degree 10),
eps = 1, the full (dense) release.  The 1-minute load average is printed
beside every time.

    python benchmarks/bench_triangle_pass.py [--sizes 20000,50000,100000] [--exact-at-largest]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _common import machine
from _steps import loadavg, planted_partition


def _pass(R, probe_all: bool) -> dict:
    import dpgraph.graph.analytics.triangle_counting as tc
    from dpgraph.graph.analytics import motifs

    before = tc.PROBE_PER_ROW
    if probe_all:
        tc.PROBE_PER_ROW = R.number_of_nodes()  # every column: the exact pass
    try:
        counter = tc.TriangleCounter(R)
        predicted = counter.cost("packed").seconds
        t0, load0 = time.perf_counter(), loadavg()
        counter.symmetric_words()
        counter.neighbour_sums()
        t1 = time.perf_counter()
        red = counter.reductions("packed", None, seed=0)
        t2 = time.perf_counter()
        st = motifs._statistics(counter, red, None, red[:, 6:], motifs._constants(R), "packed",
                                counter.probe_seed)
        counter.release_inputs()
    finally:
        tc.PROBE_PER_ROW = before
    return {"build": t1 - t0, "pass": t2 - t1, "predicted": predicted,
            "T": st.triangles, "std": float(np.sqrt(st.var_triangles)),
            "load": f"{load0:.1f}-{loadavg():.1f}"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="20000,50000,100000")
    ap.add_argument("--exact-at-largest", action="store_true",
                    help="also run the exact pass at the largest size (about 15 min at 10^5)")
    args = ap.parse_args()
    import warnings

    import dpgraph

    warnings.simplefilter("ignore")
    print(machine())
    sizes = [int(x) for x in args.sizes.split(",")]
    print("| n | pass | build s | pass s | predicted s (build + pass) | measured / predicted "
          "| T^ | std | load |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in sizes:
        E, _ = planted_partition(n, 10.0, 10, 0.8, seed=0)
        R = dpgraph.release(E, 1.0, nodes=range(n), seed=1)
        modes = [False, True] if (n != max(sizes) or args.exact_at_largest) else [False]
        for probe_all in modes:
            r = _pass(R, probe_all)
            name = "exact (every column)" if probe_all else "probed columns"
            print(f"| {n:,} | {name} | {r['build']:.1f} | {r['pass']:.1f} | {r['predicted']:.1f} "
                  f"| {(r['build'] + r['pass']) / r['predicted']:.2f} | {r['T']:,.0f} "
                  f"| {r['std']:,.4g} | {r['load']} |", flush=True)
        del R


if __name__ == "__main__":
    main()
