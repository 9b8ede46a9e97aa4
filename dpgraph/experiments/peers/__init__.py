"""``dpgraph experiment peers``: dpgraph against the edge-DP peers on every SoK metric.

On ego-Facebook, email-Eu-core (also scored against its departments),
MovieLens co-fans, the generated graphs of :mod:`dpgraph.experiments.zoo`
(``zoo-<name>``) or any edge-list file (``--graph PATH --nodes ...``), for eps
in {0.5, 1, 2, 4} and 10 releases each (the same seeds for every method),
every metric of the SoK study of edge-DP graph release and of PGB is
measured for eight ways of answering (:data:`METHODS`):

``naive``
    the statistic computed on the raw randomized-response release;
``dpgraph``
    dpgraph's estimators, unclipped, with their 95% intervals and resolved
    flags (:meth:`PrivateGraph.triangles`, ``transitivity``, ``density``,
    ``degree_assortativity``, ``degree_distribution``, ``communities``, and
    per-node clustering from :func:`dpgraph.graph.analytics.local_clustering`,
    unclipped);
``dpgraph-synth``
    Louvain and the other statistics on :meth:`PrivateGraph.synthesize`;
``TmF``, ``PrivGraph``, ``DP-1K-HH``, ``DP-1K-CM``, ``LDPGen``
    our re-implementations of published releases (:mod:`dpgraph.baselines`),
    run on the same graph at the same epsilon.

The metrics and their conventions are in
:mod:`dpgraph.experiments.peers.metrics`; the published ego-Facebook figures
(SoK study, PGB's plots) are package data read by :func:`published_figures`.
Outputs, per graph, in ``--out``: ``peers_<name>_runs.csv``,
``peers_<name>_summary.csv``, one ``peers_<name>_<metric>.png`` per metric,
``peers_<name>.png`` and ``peers_<name>.json``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from . import metrics
from .bench import release_seed, run, run_graph, summarize
from .data import (
    DATASETS,
    DEFAULT_DATASETS,
    SOK_FILES,
    expand_datasets,
    load_edge_list,
    load_graph,
    nx_induced,
    published_figures,
)
from .methods import METHOD_LABELS, METHODS, Meter, run_method
from .metrics import *  # noqa: F403 (re-exported: the metrics are part of this API)
from .metrics import EPSILONS
from .report import best_table, format_table, plots, replot, runtime_table

__all__ = [
    "DATASETS", "DEFAULT_DATASETS", "METHODS", "METHOD_LABELS", "SOK_FILES", "Meter",
    "best_table", "expand_datasets", "format_table", "load_edge_list", "load_graph",
    "nx_induced", "plots", "published_figures", "register", "release_seed",
    "replot", "run", "run_graph", "run_method", "runtime_table", "summarize",
    *metrics.__all__,
]


def _main(args: argparse.Namespace) -> int:
    import importlib.util
    import time

    if importlib.util.find_spec("sklearn") is None:
        raise ValueError("the peers benchmark scores partitions with scikit-learn; "
                         'install it with: pip install -e ".[experiments]"')
    methods = tuple(args.methods) if args.methods else METHODS
    eps = tuple(args.epsilon) if args.epsilon else None
    t0 = time.perf_counter()
    if args.graph is not None:
        if args.nodes is None:
            raise ValueError("--graph needs --nodes: the public vertex set (N for 0..N-1, "
                             "ranges like 0-99, or @FILE); it is never read off the edges")
        from dpgraph.cli_types import parse_node_list

        G = load_edge_list(args.graph, parse_node_list(args.nodes, "--nodes", count=True))
        name = args.name or Path(args.graph).name.split(".")[0]
        run_graph(args.out, G, name, epsilons=eps or ((1.0, 4.0) if args.quick else EPSILONS),
                  releases=args.releases or (2 if args.quick else 10), seed=args.seed,
                  methods=methods, hd_sources=args.hd_sources or (64 if args.quick else 200),
                  progress=not args.no_progress, merge_runs=args.merge_runs, quick=args.quick)
    else:
        if args.nodes is not None:
            raise ValueError("--nodes goes with --graph PATH (the data sets know their nodes)")
        for ds in expand_datasets(args.dataset):
            run(args.out, dataset=ds, quick=args.quick, epsilons=eps, releases=args.releases,
                seed=args.seed, methods=methods, hd_sources=args.hd_sources,
                progress=not args.no_progress, merge_runs=args.merge_runs)
    print(f"\ntotal: {time.perf_counter() - t0:.0f} s")
    return 0


def _positive(kind: type, flag: str) -> Any:
    def parse(text: str) -> Any:
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} must be a positive number, got {text!r}") \
                from None
        if not v > 0:
            raise argparse.ArgumentTypeError(f"{flag} must be > 0, got {text!r}")
        return v

    return parse


def register(experiment_subparsers: Any) -> None:
    """Add ``peers`` to the ``dpgraph experiment`` sub-commands.

    Examples
    --------
    As wired into ``dpgraph experiment`` by :func:`dpgraph.cli.build_parser`:

    >>> from dpgraph.cli import build_parser
    >>> a = build_parser().parse_args(["experiment", "peers", "--out", "o", "--quick"])
    >>> a.quick, a.dataset, a.epsilon, callable(a.func)
    (True, ['real'], None, True)
    """
    text = ("dpgraph (estimators and synthesized graph) against TmF, PrivGraph, DP-1K and "
            "LDPGen on every SoK metric, on real, generated or your own graphs, beside the "
            "published figures on ego-Facebook")
    p = experiment_subparsers.add_parser("peers", help=text, description=text)
    p.add_argument("--out", required=True, help="output directory for CSV, JSON and PNG")
    p.add_argument("--quick", action="store_true",
                   help="smoke test: eps 1 and 4, 2 releases, graphs cut to 1,000 nodes")
    p.add_argument("--dataset", nargs="+", default=["real"],
                   help="data sets, run one after the other: " + ", ".join(sorted(DATASETS))
                        + "; 'real' = " + " ".join(DEFAULT_DATASETS) + " (default); 'zoo' = "
                        "every generated graph")
    p.add_argument("--graph", default=None, metavar="PATH",
                   help="an edge-list file ('u v' a line, '#' comments) to benchmark instead "
                        "of the data sets; needs --nodes")
    p.add_argument("--nodes", default=None,
                   help="with --graph: the PUBLIC vertex set, N (0..N-1), ranges like 0-4038, "
                        "or @FILE of labels")
    p.add_argument("--name", default=None, help="with --graph: name in the output files")
    p.add_argument("--epsilon", type=_positive(float, "--epsilon"), nargs="+", default=None,
                   help="privacy levels (default 0.5 1 2 4; --quick: 1 4)")
    p.add_argument("--releases", type=_positive(int, "--releases"), default=None,
                   help="releases per epsilon and method (default 10; --quick: 2)")
    p.add_argument("--hd-sources", type=_positive(int, "--hd-sources"), default=None,
                   help="BFS roots for the harmonic diameter of a synthetic graph (default 200; "
                        "--quick: 64); the true graph's is exact")
    p.add_argument("--seed", type=int, default=0,
                   help="base seed: release r at eps e uses seed + 1000 r + 100 e for every "
                        "method (experiments only)")
    p.add_argument("--methods", nargs="+", choices=METHODS, default=None,
                   help="compute only these rows (default: all)")
    p.add_argument("--merge-runs", default=None,
                   help="runs CSV of an earlier run (same seeds) supplying the other rows")
    p.add_argument("--no-progress", action="store_true", help="no tqdm bars")
    p.set_defaults(func=_main)
