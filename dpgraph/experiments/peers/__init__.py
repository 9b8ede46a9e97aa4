"""``dpgraph experiment peers``: graph analytics from one release vs edge-DP peers.

On ego-Facebook, email-Eu-core (also scored against its departments), MovieLens
co-fans and the generated graphs of :mod:`dpgraph.experiments.zoo`
(``zoo-<name>``), for eps in {0.5, 1, 2, 4} and several releases each, the
metrics of the SoK benchmark of edge-DP graph release are measured for five
ways of answering:

``naive``
    the statistic computed on the raw randomized-response release (what a
    tool that treats the release as the graph would report);
``dpgraph``
    dpgraph's estimators: :meth:`PrivateGraph.transitivity`,
    :meth:`~PrivateGraph.degree_distribution`, :meth:`~PrivateGraph.communities`
    (partition, detectability flag and held-out modularity estimate),
    :meth:`~PrivateGraph.density`, :meth:`~PrivateGraph.degree_assortativity`,
    per-node clustering from :func:`dpgraph.graph.analytics.local_clustering`;
``dpgraph-synth``
    the same metrics computed on :meth:`PrivateGraph.synthesize`;
``TmF`` and ``PrivGraph``
    our re-implementations of two published edge-DP synthetic-graph
    releases (:mod:`dpgraph.baselines.tmf`, :mod:`dpgraph.baselines.privgraph`),
    run on the same graph at the same epsilon.

Metrics ("error" = |true - measured|, never clipped first): transitivity
error, degree distribution (KL(true || est), the estimate mixed with 1e-3 of
the uniform distribution, and the SoK's 1-D Wasserstein distance between the
"count of nodes with degree i" vectors), modularity error (vs Louvain's on the
true graph), NMI and ARI of the partition vs Louvain on the true graph
(scikit-learn), the partition's modularity on the true graph, for dpgraph the
error of its reported modularity against that true value, NMI/ARI against
ground-truth labels where the data set has them, density, assortativity and
clustering-distribution errors, the triangle count's relative error and
whether its 95% interval covers the truth.

The published figures (ego-Facebook only) are package data, read by
:func:`published_figures`; their source and citation are in
``dpgraph/experiments/reference/sok_facebook/README.md``.

Outputs in ``--out``: ``peers_<dataset>_runs.csv`` (every release),
``peers_<dataset>.csv`` (means per method and eps), ``peers_<dataset>_published.csv``,
``peers_<dataset>.png``, ``peers_<dataset>_degrees.png`` and ``peers_<dataset>.json``.
"""

from __future__ import annotations

import argparse
from typing import Any

from . import metrics
from .bench import run, score_method, summarize
from .data import DATASETS, SOK_FILES, load_graph, nx_induced, published_figures
from .metrics import *  # noqa: F403 (re-exported: the metrics are part of this API)
from .metrics import EPSILONS, METHODS
from .report import format_table, replot

__all__ = [
    "DATASETS", "SOK_FILES", "format_table", "load_graph",
    "nx_induced", "published_figures", "register", "replot", "run", "score_method", "summarize",
    *metrics.__all__,
]


def _main(args: argparse.Namespace) -> int:
    import importlib.util

    if importlib.util.find_spec("sklearn") is None:
        raise ValueError("the peers benchmark scores partitions with scikit-learn; "
                         'install it with: pip install -e ".[experiments]"')
    eps = tuple(args.eps) if args.eps else EPSILONS
    for ds in args.dataset:
        run(args.out, dataset=ds, quick=args.quick, epsilons=eps, releases=args.releases,
            seed=args.seed, naive_louvain_releases=args.naive_louvain_releases,
            coverage_releases=args.coverage_releases, progress=not args.no_progress,
            methods=tuple(args.methods) if args.methods else METHODS,
            merge_runs=args.merge_runs)
    return 0


def register(experiment_subparsers: Any) -> None:
    """Add ``peers`` to the ``dpgraph experiment`` sub-commands.

    Examples
    --------
    As wired into ``dpgraph experiment`` by :func:`dpgraph.cli.build_parser`:

    >>> from dpgraph.cli import build_parser
    >>> a = build_parser().parse_args(["experiment", "peers", "--out", "o", "--quick"])
    >>> a.quick, a.dataset, callable(a.func)
    (True, ['facebook'], True)
    """
    text = ("graph analytics from one release (dpgraph estimators, synthesized graph, naive, "
            "TmF, PrivGraph) on real and generated graphs, beside the published SoK figures "
            "on ego-Facebook")
    p = experiment_subparsers.add_parser("peers", help=text, description=text)
    p.add_argument("--out", required=True, help="output directory for CSV, JSON and PNG")
    p.add_argument("--quick", action="store_true",
                   help="smoke test: 1000-node subgraph, eps 1 and 4, 2 releases")
    p.add_argument("--dataset", nargs="+", choices=sorted(DATASETS), default=["facebook"],
                   help="one or more data sets, run one after the other (default facebook)")
    p.add_argument("--eps", type=float, nargs="+", default=None,
                   help="privacy levels (default 0.5 1 2 4)")
    p.add_argument("--releases", type=int, default=None, help="releases per epsilon (default 10)")
    p.add_argument("--naive-louvain-releases", type=int, default=None,
                   help="releases per epsilon on which Louvain runs on the raw release "
                        "(slow: millions of edges; default 2)")
    p.add_argument("--coverage-releases", type=int, default=None,
                   help="extra releases at eps=1 to measure triangle CI coverage (default 100)")
    p.add_argument("--seed", type=int, default=0, help="base seed (experiments only)")
    p.add_argument("--methods", nargs="+", choices=METHODS, default=None,
                   help="compute only these rows (default: all)")
    p.add_argument("--merge-runs", default=None,
                   help="runs CSV of an earlier run (same seeds) supplying the other rows")
    p.add_argument("--no-progress", action="store_true", help="no tqdm bars")
    p.set_defaults(func=_main)
