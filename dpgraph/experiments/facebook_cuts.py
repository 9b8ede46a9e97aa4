"""The paper's cut-query experiment on ego-Facebook (section VI-B).

For |V| = 577 k node ids (k = 1..7, the last being all 4039 nodes) we take the
subgraph induced by the first |V| ids (0 .. |V|-1), release it with epsilon = 1
(mechanism E: every vertex pair flipped), and ask 100 random half cuts: S a
uniform random subset of floor(|V|/2) nodes, T = V - S.  Each of 10
independent runs draws a fresh release and a fresh query set.

Reported per |V| (mean over runs, with the std over runs):

* ``worst_abs``: the worst absolute error max_q |q_hat - q| over the 100
  queries of a run, averaged over runs (the paper's figure);
* ``mean_abs``: the mean absolute error over queries and runs;
* ``bound``: the paper's bound on E|q_hat - q| for one half cut,
  (1 + e^-eps) / (1 - e^-eps) sqrt(|S||T|) (:func:`dpgraph.bounds.cut_upper`);
* ``worst_rel``: max_q |q_hat - q| / q over the queries of a run (q the true
  cut size, always > 0 here), averaged over runs;
* ``mean_rel``: the mean of |q_hat - q| / q over queries and runs;
* ``worst_abs_over_mean_cut``: worst_abs divided by the mean true cut size.

The paper reports a "relative error" (10.4 % .. 5.4 %) without defining it;
we print all three relative measures beside it.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from ._harness import experiment_parser

__all__ = ["PAPER_RELATIVE_ERROR", "SIZES", "register", "run"]

#: |V| of the paper's subgraphs and its Table "Relative error for cut queries".
SIZES = [577 * k for k in range(1, 8)]
PAPER_RELATIVE_ERROR = dict(zip(SIZES, [0.104, 0.117, 0.087, 0.053, 0.047, 0.053, 0.054]))


def _load_graph(graph: Any = None) -> Any:
    if graph is not None:
        return graph
    from .. import datasets

    return datasets.facebook()


def _true_cuts(A: Any, members: np.ndarray) -> np.ndarray:
    """True cut sizes of half cuts given as a boolean (Q, n) membership of S.

    cut(S, V-S) = sum over edges of [one end in S] = x^T A (1 - x) per query.
    """
    X = members.T.astype(np.float64)  # (n, Q)
    AX = A @ X
    deg = np.asarray(A.sum(axis=1)).ravel()
    # x^T A (1 - x) = x^T deg - x^T A x
    return np.rint(X.T @ deg - np.einsum("nq,nq->q", X, AX)).astype(np.int64)


def run(
    out: str | os.PathLike | None = None,
    sizes: list[int] | None = None,
    runs: int = 10,
    queries: int = 100,
    epsilon: float = 1.0,
    seed: int | None = 2014,
    graph: Any = None,
    progress: bool = True,
) -> list[dict]:
    """Run the experiment; write ``facebook_cuts.csv`` and ``facebook_cuts.png`` to ``out``.

    Parameters
    ----------
    out : path, optional
        Output directory (created); nothing is written when None.
    sizes : list of int, optional
        Subgraph sizes |V|; default the paper's 577, 1154, ..., 4039.
    runs : int
        Independent releases per size (each with a fresh query set).
    queries : int
        Random half cuts per run.
    epsilon : float
        Privacy parameter.
    seed : int or None
        Master seed for the releases and queries (reproducible); None uses
        fresh secure randomness for the releases.
    graph : networkx.Graph, optional
        The graph (default: :func:`dpgraph.datasets.facebook`); nodes must be
        the integers 0..N-1.
    progress : bool
        Show a tqdm progress bar.

    Returns
    -------
    list of dict
        One row per size with the columns described in the module docstring.

    Examples
    --------
    >>> import networkx as nx
    >>> rows = run(graph=nx.karate_club_graph(), sizes=[20, 34], runs=2, queries=5,
    ...            seed=0, progress=False)
    >>> [r["nodes"] for r in rows], rows[0]["queries"]
    ([20, 34], 5)
    """
    from ..bounds import cut_upper
    from ..graph import release
    from ..validation import check_epsilon, check_positive_int
    from ._harness import quiet_seeded

    epsilon = check_epsilon(epsilon)
    runs = check_positive_int(runs, "runs")
    queries = check_positive_int(queries, "queries")
    G = _load_graph(graph)
    N = G.number_of_nodes()
    sizes = list(SIZES if sizes is None else sizes)
    for s in sizes:
        if not 2 <= int(s) <= N:
            raise ValueError(f"sizes must lie in 2..{N} (the graph's node count), got {s}")
    if set(G.nodes()) != set(range(N)):
        raise ValueError("graph nodes must be the integers 0..N-1 (induced subgraphs take the first ids)")
    import networkx as nx
    from tqdm.auto import tqdm

    master = np.random.SeedSequence(seed)
    size_seeds = master.spawn(len(sizes))
    rows = []
    bar = tqdm(total=len(sizes) * runs, desc="facebook-cuts", disable=not progress, unit="release")
    for nv, ss in zip(sizes, size_seeds):
        nv = int(nv)
        H = nx.Graph(G.subgraph(range(nv)).edges())  # pairs only: no edge data to drop
        H.add_nodes_from(range(nv))
        A = nx.to_scipy_sparse_array(H, nodelist=range(nv), format="csr", dtype=np.float64)
        s_size = nv // 2
        worst_abs, mean_abs, worst_rel, mean_rel, mean_cut = [], [], [], [], []
        for run_seq in ss.spawn(runs):
            rel_seq, q_seq = run_seq.spawn(2)
            rseed = None if seed is None else np.random.default_rng(rel_seq)
            with quiet_seeded():  # seeded on purpose: a reproducible figure
                R = release(H, epsilon, seed=rseed)
            qrng = np.random.default_rng(q_seq)
            perms = np.argsort(qrng.random((queries, nv)), axis=1)
            members = np.zeros((queries, nv), dtype=bool)
            np.put_along_axis(members, perms[:, :s_size], True, axis=1)
            pairs = [(np.flatnonzero(m), np.flatnonzero(~m)) for m in members]
            est = R.cuts(pairs, proper=False)  # the paper's unbiased cut estimator
            truth = _true_cuts(A, members)
            err = np.abs(est.value - truth)
            worst_abs.append(err.max())
            mean_abs.append(err.mean())
            rel = err / np.maximum(truth, 1)
            worst_rel.append(rel.max())
            mean_rel.append(rel.mean())
            mean_cut.append(truth.mean())
            bar.update(1)
        bound = float(cut_upper(s_size, nv - s_size, epsilon))
        rows.append(dict(
            nodes=nv, edges=H.number_of_edges(), runs=runs, queries=queries, epsilon=epsilon,
            mean_true_cut=float(np.mean(mean_cut)),
            worst_abs=float(np.mean(worst_abs)), worst_abs_sd=float(np.std(worst_abs, ddof=1)) if runs > 1 else 0.0,
            mean_abs=float(np.mean(mean_abs)), bound=bound,
            worst_rel=float(np.mean(worst_rel)), mean_rel=float(np.mean(mean_rel)),
            worst_abs_over_mean_cut=float(np.mean(worst_abs) / np.mean(mean_cut)),
            paper_rel=PAPER_RELATIVE_ERROR.get(nv, math.nan),
        ))
    bar.close()
    if out is not None:
        write_outputs(rows, out)
    return rows


def write_outputs(rows: list[dict], out: str | os.PathLike) -> tuple[Path, Path]:
    """Write the CSV and the PNG figure of ``rows`` into directory ``out``."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    csv_path, png_path = out / "facebook_cuts.csv", out / "facebook_cuts.png"
    with open(csv_path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    v = np.array([r["nodes"] for r in rows])
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 3.9), dpi=120)
    ax.errorbar(v, [r["worst_abs"] for r in rows], yerr=[r["worst_abs_sd"] for r in rows],
                marker="o", capsize=3, label="worst |error| of the cuts of a run (mean, sd of runs)")
    ax.plot(v, [r["mean_abs"] for r in rows], marker="s", label="mean |error|")
    ax.plot(v, [r["bound"] for r in rows], "k--",
            label=r"bound on E|error|: $\frac{1+e^{-\epsilon}}{1-e^{-\epsilon}}\sqrt{|S||T|}$")
    ax.set_xlabel("|V| (first node ids)")
    ax.set_ylabel("absolute error of a cut query")
    ax.set_title(f"Random half cuts, eps = {rows[0]['epsilon']:g}", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    bx.plot(v, [100 * r["worst_rel"] for r in rows], marker="o", label="ours: worst-case relative error")
    bx.plot(v, [100 * r["mean_rel"] for r in rows], marker="s", label="ours: mean relative error")
    paper = [(r["nodes"], 100 * r["paper_rel"]) for r in rows if not math.isnan(r["paper_rel"])]
    if paper:
        bx.plot(*zip(*paper), "k^--", label="paper's table (definition not stated)")
    bx.set_xlabel("|V| (first node ids)")
    bx.set_ylabel("relative error (%)")
    bx.set_title("Relative error of cut queries", fontsize=10)
    bx.set_ylim(bottom=0)
    bx.grid(alpha=0.3)
    bx.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(png_path)
    plt.close(fig)
    return csv_path, png_path


def format_table(rows: list[dict]) -> str:
    """The relative-error table, ours beside the paper's."""
    head = ["|V|"] + [str(r["nodes"]) for r in rows]
    lines = [
        ["paper (undefined)"] + [f"{100 * r['paper_rel']:.1f}%" if not math.isnan(r["paper_rel"]) else "-"
                                 for r in rows],
        ["worst rel. error"] + [f"{100 * r['worst_rel']:.1f}%" for r in rows],
        ["mean rel. error"] + [f"{100 * r['mean_rel']:.1f}%" for r in rows],
        ["worst abs / mean cut"] + [f"{100 * r['worst_abs_over_mean_cut']:.1f}%" for r in rows],
        ["worst abs error"] + [f"{r['worst_abs']:.0f}" for r in rows],
        ["mean abs error"] + [f"{r['mean_abs']:.0f}" for r in rows],
        ["bound"] + [f"{r['bound']:.0f}" for r in rows],
        ["mean true cut"] + [f"{r['mean_true_cut']:.0f}" for r in rows],
    ]
    table = [head] + lines
    widths = [max(len(row[k]) for row in table) for k in range(len(head))]
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(row, widths)) for row in table)


def _main(args: argparse.Namespace) -> int:
    sizes = [577, 1154] if args.quick else None
    runs = 2 if args.quick else args.runs
    queries = 10 if args.quick else args.queries
    rows = run(out=args.out, sizes=sizes, runs=runs, queries=queries, epsilon=args.epsilon,
               seed=args.seed, progress=not args.no_progress)
    print(format_table(rows))
    print(f"wrote {Path(args.out) / 'facebook_cuts.csv'} and {Path(args.out) / 'facebook_cuts.png'}")
    return 0


def register(experiment_subparsers: Any) -> argparse.ArgumentParser:
    """Add ``facebook-cuts`` to the ``dpgraph experiment`` subparsers (see
    :func:`~dpgraph.experiments._harness.experiment_parser`)."""
    p = experiment_parser(
        experiment_subparsers, "facebook-cuts", _main, doc=__doc__,
        help="the paper's section VI-B: cut-query error on ego-Facebook subgraphs")
    p.add_argument("--runs", type=int, default=10, help="independent releases per size (default 10)")
    p.add_argument("--queries", type=int, default=100, help="random half cuts per run (default 100)")
    p.add_argument("--epsilon", type=float, default=1.0, help="privacy parameter (default 1)")
    p.add_argument("--seed", type=int, default=2014,
                   help="master seed for releases and queries (default 2014; experiments are "
                        "seeded on purpose, so they do not emit SeededReleaseWarning)")
    p.add_argument("--quick", action="store_true", help="two sizes, 2 runs, 10 queries (for tests)")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    return p


if __name__ == "__main__":  # pragma: no cover
    ap = argparse.ArgumentParser(prog="facebook_cuts")
    sp = ap.add_subparsers(required=True)
    register(sp)
    a = ap.parse_args()
    raise SystemExit(a.func(a))
