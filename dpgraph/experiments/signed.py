"""Typed releases of a signed trust network: SNAP Bitcoin Alpha on K-ary mechanism E.

Bitcoin Alpha (3,783 users, 24,186 directed ratings -10..+10) is released as a
typed graph with the declared values distrust (rating < 0), trust (1-2) and
strong trust (>= 3), K = 4 values a pair with "no tie", at each epsilon; the
same graph released untyped (K = 2) sits beside it.  Reported:

* coverage of the 95% intervals of typed cut queries (ties of each value from
  S to T), of a weighted cut (net trust: distrust -1, trust +1, strong trust
  +2) and of the any-tie cut, over many releases and random queries (half
  cuts and cuts between two sets of 300 users), with the mean and variance of
  the z-scores; the same on two generated typed graphs (a signed block model
  and a typed configuration model, undirected);
* what typing costs the any-tie queries: the std of the any-tie cut on the
  typed release over its std on the binary release;
* per-value edge counts, the fraction of negative ties, mutual ties and
  reciprocity (directed release), and structural balance (signed triangles
  and the balanced fraction, on a release of the undirected signed graph),
  each with truth, estimate and 95% interval.

Outputs in ``--out``: ``signed_coverage.csv``, ``signed_statistics.csv``,
``signed.json`` and ``signed_eps<eps>.png`` (one figure per epsilon).
"""

from __future__ import annotations

import argparse
import csv
import json
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from ..exceptions import DroppedAttributesWarning
from . import signed_data as data
from ._harness import experiment_parser, progress_bar, quiet_seeded

__all__ = ["EPSILONS", "register", "run"]

EPSILONS = (0.5, 1.0, 2.0, 4.0)
_KINDS = (*data.VALUES, "net trust", "any tie", "any tie (binary)")


def _queries(rng: np.random.Generator, n: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Boolean memberships (count, n) of S and T: half cuts and cuts between two sets of 300."""
    S = np.zeros((count, n), dtype=bool)
    T = np.zeros((count, n), dtype=bool)
    small = min(300, n // 3)
    for q in range(count):
        perm = rng.permutation(n)
        if q % 2 == 0:
            S[q, perm[: n // 2]] = True
            T[q, perm[n // 2 :]] = True
        else:
            S[q, perm[:small]] = True
            T[q, perm[small : 2 * small]] = True
    return S, T


def _coverage_rows(graph_name: str, G: Any, release_kwargs: dict, truth_graph: Any, eps: float,
                   releases: int, queries: int, seed: int, bar: Any) -> list[dict]:
    """Coverage, z-scores and stds of every query kind over ``releases`` releases at ``eps``."""
    from ..graph import release

    rng = np.random.default_rng([seed, int(eps * 1000)])
    directed = truth_graph.is_directed()
    first = None
    stats: dict[str, dict[str, list]] = {k: {"hit": [], "z": [], "std": []} for k in _KINDS}
    for _r in range(releases):
        R = release(G, eps, seed=int(rng.integers(2**62)), directed=directed, **release_kwargs)
        with warnings.catch_warnings():  # the binary release drops the values on purpose
            warnings.simplefilter("ignore", DroppedAttributesWarning)
            B = release(G, eps, seed=int(rng.integers(2**62)), directed=directed)
        if first is None:
            first = data.value_matrices(truth_graph, R.nodes)
        S, T = _queries(rng, R.number_of_nodes(), queries)
        truth = data.true_cuts(first, S, T)  # (Q, 3)
        pairs = [(S[q], T[q]) for q in range(queries)]
        w = np.array([data.WEIGHTS[v] for v in data.VALUES])
        answers = {v: (R.cuts(pairs, value=v), truth[:, k]) for k, v in enumerate(data.VALUES)}
        answers["net trust"] = (R.cuts(pairs, weights=data.WEIGHTS), truth @ w)
        answers["any tie"] = (R.cuts(pairs), truth.sum(axis=1))
        answers["any tie (binary)"] = (B.cuts(pairs), truth.sum(axis=1))
        for kind, (est, t) in answers.items():
            lo, hi = est.ci(0.95)
            stats[kind]["hit"].extend(((lo <= t) & (t <= hi)).tolist())
            stats[kind]["z"].extend(((np.asarray(est.raw) - t) / np.asarray(est.std)).tolist())
            stats[kind]["std"].extend(np.asarray(est.std).tolist())
        bar.update(1)
    rows = []
    binary_std = np.mean(stats["any tie (binary)"]["std"])
    for kind in _KINDS:
        hit, z = np.array(stats[kind]["hit"]), np.array(stats[kind]["z"])
        rows.append({"graph": graph_name, "epsilon": eps, "query": kind, "intervals": hit.size,
                     "coverage": float(hit.mean()), "z_mean": float(z.mean()),
                     "z_var": float(z.var()), "mean_std": float(np.mean(stats[kind]["std"])),
                     "std_over_binary": float(np.mean(stats[kind]["std"]) / binary_std)})
    return rows


def _stat_row(eps: float, name: str, truth: float, est: Any) -> dict:
    lo, hi = est.ci(0.95)
    return {"epsilon": eps, "statistic": name, "truth": float(truth), "estimate": float(est.value),
            "ci_low": float(lo), "ci_high": float(hi), "covered": bool(lo <= truth <= hi),
            "resolved": bool(est.resolved)}


def _statistics(G: Any, typed_G: Any, undirected: Any, eps: float, seed: int,
                balance: bool) -> list[dict]:
    """Per-value counts, negative fraction, mutual ties, reciprocity and balance at ``eps``."""
    from ..graph import release

    rng = np.random.default_rng([seed, int(eps * 1000), 7])
    R = release(G, eps, seed=int(rng.integers(2**62)), directed=True, edge_attr="rating",
                        bins=data.BINS, values=data.VALUES)
    with warnings.catch_warnings():  # the binary release drops the values on purpose
        warnings.simplefilter("ignore", DroppedAttributesWarning)
        B = release(G, eps, seed=int(rng.integers(2**62)), directed=True)
    counts = dict.fromkeys(data.VALUES, 0)
    for _, _, k in typed_G.edges(data=data.ATTR):
        counts[k] += 1
    rows = [_stat_row(eps, f"ties: {v}", counts[v], est) for v, est in R.value_counts().items()]
    m = typed_G.number_of_edges()
    rows.append(_stat_row(eps, "ties: any (typed release)", m, R.number_of_edges()))
    rows.append(_stat_row(eps, "ties: any (binary release)", m, B.number_of_edges()))
    rows.append(_stat_row(eps, "fraction of negative ties", counts["distrust"] / m,
                          R.value_fraction("distrust")))
    mutual = data.true_mutual(typed_G)
    rows.append(_stat_row(eps, "mutual ties", mutual["mutual"], R.mutual_ties()))
    for v in data.VALUES:
        rows.append(_stat_row(eps, f"mutual ties: {v} both ways", mutual[f"mutual {v}"],
                              R.mutual_ties(value=v)))
    rows.append(_stat_row(eps, "reciprocity (typed release)", mutual["reciprocity"], R.reciprocity()))
    rows.append(_stat_row(eps, "reciprocity (binary release)", mutual["reciprocity"],
                          B.reciprocity()))
    if balance:
        U = release(undirected, eps, seed=int(rng.integers(2**62)), edge_attr=data.ATTR,
                            values=data.VALUES)
        truth = data.true_balance(undirected)
        bal = U.balance(signs=data.SIGNS)
        for name, est in bal.triangles.items():
            rows.append(_stat_row(eps, f"triangles {name}", truth[name], est))
        rows.append(_stat_row(eps, "balanced fraction", truth["balanced_fraction"],
                              bal.balanced_fraction))
    return rows


def _figure(eps: float, coverage: list[dict], stats: list[dict], path: Path) -> None:
    """Left: coverage of every query kind per graph; right: per-value counts with intervals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.2))
    graphs = sorted({r["graph"] for r in coverage if r["epsilon"] == eps})
    width = 0.8 / max(1, len(graphs))
    for g, name in enumerate(graphs):
        rows = [r for r in coverage if r["epsilon"] == eps and r["graph"] == name]
        x = np.arange(len(rows)) + g * width
        cov = np.array([r["coverage"] for r in rows])
        nint = np.array([r["intervals"] for r in rows])
        ax1.bar(x, cov, width, label=name, yerr=1.96 * np.sqrt(0.95 * 0.05 / nint), capsize=2)
    ax1.axhspan(0.93, 0.97, color="0.85", zorder=0, label="0.95 +- 0.02")
    ax1.set_xticks(np.arange(len(_KINDS)) + 0.4 - width / 2, _KINDS, rotation=30, ha="right")
    ax1.set_ylim(0.85, 1.0)
    ax1.set_ylabel("coverage of the 95% interval")
    ax1.set_title(f"cut queries, epsilon = {eps:g}")
    ax1.legend(fontsize=7, loc="lower left")
    rows = [r for r in stats if r["epsilon"] == eps and r["statistic"].startswith("ties: ")]
    y = np.arange(len(rows))
    est = np.array([r["estimate"] for r in rows])
    ax2.errorbar(est, y, xerr=[est - [r["ci_low"] for r in rows], [r["ci_high"] for r in rows] - est],
                 fmt="o", capsize=3, label="estimate, 95% interval")
    ax2.plot([r["truth"] for r in rows], y, "kx", label="truth")
    ax2.set_yticks(y, [r["statistic"][6:] for r in rows])
    ax2.set_xscale("symlog", linthresh=100)
    ax2.set_xlim(left=0)
    ax2.set_xlabel("number of ties (Bitcoin Alpha)")
    ax2.set_title("ties by value: typed release vs truth")
    ax2.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run(out: str | Path | None = None, epsilons: tuple = EPSILONS, releases: int = 200,
        queries: int = 10, seed: int = 2016, graph: Any = None, generated_nodes: int = 600,
        balance: bool = True, progress: bool = True) -> dict:
    """Run the experiment; write CSV, JSON and one PNG per epsilon into ``out``.

    Parameters
    ----------
    out : path, optional
        Output folder (created); nothing written when None.
    epsilons : tuple of float
    releases : int
        Releases per graph and epsilon for the coverage of cut intervals.
    queries : int
        Random cut queries per release.
    seed : int
        Master seed (experiments are reproducible; real releases use seed=None).
    graph : networkx.DiGraph, optional
        A directed graph with an int ``rating`` in -10..10 in place of Bitcoin Alpha.
    generated_nodes : int
        Size of the generated typed graphs (0 to skip them).
    balance : bool
        Release the undirected signed graph and estimate balance (O(n^3)).

    Returns
    -------
    dict
        ``{"coverage": [...], "statistics": [...], "meta": {...}}``.
    """
    if graph is None:
        from .. import datasets

        graph = datasets.bitcoin_alpha()
    graph = data.ratings_only(graph)  # the release publishes the rating's value, nothing else
    typed_G = data.bitcoin_alpha_typed(graph)
    undirected = data.undirected_signed(typed_G)
    graphs = [("bitcoin-alpha", graph, {"edge_attr": "rating", "bins": data.BINS,
                                        "values": data.VALUES}, typed_G)]
    if generated_nodes:
        kw = {"edge_attr": data.ATTR, "values": data.VALUES}
        sbm = data.signed_sbm(generated_nodes, seed=seed)
        conf = data.typed_configuration(generated_nodes, seed=seed)
        graphs += [("signed-sbm", sbm, kw, sbm), ("typed-configuration", conf, kw, conf)]
    t0 = time.perf_counter()
    coverage, stats = [], []
    bar = progress_bar(len(epsilons) * len(graphs) * releases, "signed", progress)
    with quiet_seeded():
        for eps in epsilons:
            for name, G, kw, truth_graph in graphs:
                coverage += _coverage_rows(name, G, kw, truth_graph, float(eps), releases, queries,
                                           seed, bar)
            stats += _statistics(graph, typed_G, undirected, float(eps), seed, balance)
    bar.close()
    meta = {"epsilons": list(epsilons), "releases": releases, "queries": queries, "seed": seed,
            "values": list(data.VALUES), "bins": list(data.BINS), "weights": data.WEIGHTS,
            "signs": data.SIGNS, "nodes": graph.number_of_nodes(), "ties": graph.number_of_edges(),
            "generated_nodes": generated_nodes, "seconds": round(time.perf_counter() - t0, 1),
            "target": "coverage of typed and weighted cut intervals in [0.93, 0.97]"}
    result = {"coverage": coverage, "statistics": stats, "meta": meta}
    if out is not None:
        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        for name, rows in (("signed_coverage.csv", coverage), ("signed_statistics.csv", stats)):
            with open(folder / name, "w", newline="") as fh:
                w = csv.DictWriter(fh, fieldnames=list(rows[0]))
                w.writeheader()
                w.writerows(rows)
        with open(folder / "signed.json", "w") as fh:
            json.dump(result, fh, indent=1, default=float)
        for eps in epsilons:
            _figure(float(eps), coverage, stats, folder / f"signed_eps{eps:g}.png")
    return result


def format_tables(result: dict) -> str:
    """The coverage and statistics tables as text."""
    lines = [f"{'graph':<20} {'eps':>4} {'query':<18} {'coverage':>8} {'z mean':>7} {'z var':>6} "
             f"{'std/binary':>10}"]
    for r in result["coverage"]:
        lines.append(f"{r['graph']:<20} {r['epsilon']:>4g} {r['query']:<18} {r['coverage']:>8.3f} "
                     f"{r['z_mean']:>7.3f} {r['z_var']:>6.3f} {r['std_over_binary']:>10.2f}")
    lines.append("")
    lines.append(f"{'eps':>4} {'statistic':<34} {'truth':>10} {'estimate':>10} {'95% interval':>24}")
    for r in result["statistics"]:
        ci = f"[{r['ci_low']:.4g}, {r['ci_high']:.4g}]"
        lines.append(f"{r['epsilon']:>4g} {r['statistic']:<34} {r['truth']:>10.4g} "
                     f"{r['estimate']:>10.4g} {ci:>24}")
    return "\n".join(lines)


def _main(args: argparse.Namespace) -> int:
    graph = None
    if args.quick:
        from .. import datasets

        full = datasets.bitcoin_alpha()
        graph = full.subgraph(sorted(full)[:400]).copy()
    result = run(out=args.out, epsilons=(1.0,) if args.quick else tuple(args.epsilon),
                 releases=3 if args.quick else args.releases,
                 queries=4 if args.quick else args.queries, seed=args.seed, graph=graph,
                 generated_nodes=120 if args.quick else args.generated_nodes,
                 balance=not args.no_balance, progress=not args.no_progress)
    print(format_tables(result))
    print(f"wrote signed_coverage.csv, signed_statistics.csv, signed.json and figures to {args.out}")
    return 0


def register(experiment_subparsers: Any) -> argparse.ArgumentParser:
    """Add ``signed`` to the ``dpgraph experiment`` subparsers (see
    :func:`~dpgraph.experiments._harness.experiment_parser`)."""
    p = experiment_parser(
        experiment_subparsers, "signed", _main, doc=__doc__,
        help="typed release of the Bitcoin Alpha trust network (K-ary mechanism E)")
    p.add_argument("--epsilon", type=float, nargs="+", default=list(EPSILONS),
                   help="privacy parameters (default 0.5 1 2 4)")
    p.add_argument("--releases", type=int, default=200,
                   help="releases per graph and epsilon for interval coverage (default 200)")
    p.add_argument("--queries", type=int, default=10, help="random cut queries per release (default 10)")
    p.add_argument("--generated-nodes", type=int, default=600,
                   help="nodes of the generated typed graphs, 0 to skip them (default 600)")
    p.add_argument("--seed", type=int, default=2016, help="master seed (default 2016)")
    p.add_argument("--no-balance", action="store_true",
                   help="skip structural balance (an O(n^3) estimate on the undirected release)")
    p.add_argument("--quick", action="store_true",
                   help="400 users, epsilon 1, 3 releases, 4 queries (for tests)")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    return p
