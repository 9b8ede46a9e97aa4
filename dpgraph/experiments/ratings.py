"""The paper's statistical-query experiments (section VI-A) on movie ratings, and their CLI.

**MovieLens 100K stands in for the paper's Netflix ratings** (one rating 1..5
is one row, K = 5); every output says so.  All experiments use eps = 1,
random row functions phi(1..5) = X_k / (max X - min X) with X_k uniform on
[0, 1] (so every c_i = 1), and mechanism E with the unbiased companion
estimator q_u (:class:`dpgraph.core.MechanismE`), against MWEM
(:mod:`dpgraph.baselines`).  The privacy unit is one rating (see
:mod:`dpgraph.experiments.ratings_data`).

The experiments live in their own modules and are re-exported here:

``heterogeneity`` (:mod:`~dpgraph.experiments.heterogeneity`)
    E against sub-database MWEM as the number h of distinct row functions
    grows; ``--heldout-T`` chooses MWEM's T on held-out movies first;
    ``--total-budget`` switches to :mod:`~dpgraph.experiments.total_budget`
    (W workloads under one total eps).
``query-set-size`` (:mod:`~dpgraph.experiments.query_set_size`)
    2^6 ... 2^20 random linear queries on 50 disjoint databases.
``scaling`` (:mod:`~dpgraph.experiments.scaling`)
    Worst-case squared error against n, with the Lemma 2 bound.
``continuous`` (:mod:`~dpgraph.experiments.continuous`)
    The continuous universe [0, 1] (section V).

Each experiment writes ``<name>.csv`` (summary), ``<name>_runs.csv`` (every
run), ``<name>.png`` and ``<name>.json`` (parameters, targets, timing).
MWEM variants: the default replays every measurement each round
(``update="replay"``, 10 sweeps, last histogram); ``--textbook`` is the
plain update with the averaged histogram.  T and the number of sweeps are
defaults fixed before any experiment.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from typing import Any

from dpgraph.baselines import DEFAULT_PASSES, DEFAULT_T
from dpgraph.experiments import continuous as _continuous
from dpgraph.experiments._harness import (
    ExperimentResult,
    add_common_options,
    run_and_report,
    write_outputs,
)
from dpgraph.experiments.heterogeneity import DEFAULT_T_GRID, choose_T, heterogeneity
from dpgraph.experiments.query_set_size import query_set_size
from dpgraph.experiments.ratings_data import (
    RATING_UNIVERSE,
    STAND_IN_NOTE,
    load_ratings,
    pack_databases,
    random_row_functions,
    split_units,
    synthetic_ratings,
    top_movies,
    user_span,
)
from dpgraph.experiments.scaling import scaling
from dpgraph.experiments.total_budget import DEFAULT_WORKLOADS, total_budget

__all__ = [
    "RATING_UNIVERSE",
    "STAND_IN_NOTE",
    "ExperimentResult",
    "choose_T",
    "heterogeneity",
    "load_ratings",
    "pack_databases",
    "query_set_size",
    "random_row_functions",
    "register",
    "run_experiment",
    "scaling",
    "split_units",
    "synthetic_ratings",
    "top_movies",
    "total_budget",
    "user_span",
    "write_outputs",
]

_QUICK = {
    "heterogeneity": {"h_values": (1, 2, 4), "n_movies": 16, "n_queries": 50, "runs": 2},
    "total-budget": {"h_values": (1, 4), "workloads": (1, 2, 4), "n_movies": 16,
                     "n_queries": 50, "runs": 2},
    "query-set-size": {"sizes": (64, 256, 1024), "n_databases": 8, "runs": 2},
    "scaling": {"n_queries": 50, "runs": 3},
}


def _int_list(text: str) -> tuple[int, ...]:
    try:
        out = tuple(int(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers such as 1,8,64, got {text!r}"
        ) from None
    if not out or min(out) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers such as 1,8,64, got {text!r}")
    return out


def _listed(values: Sequence[int]) -> str:
    """``values`` as :func:`_int_list` reads them (``1,8,64``), for help texts."""
    return ",".join(map(str, values))


def run_experiment(name: str, args: argparse.Namespace) -> int:
    """Run one experiment from parsed CLI arguments; return an exit code."""
    if name == "heterogeneity":
        if args.total_budget and (args.heldout_T or args.user_buckets != 1):
            raise SystemExit("--total-budget uses T as given and whole movies: drop --heldout-T "
                             "and --user-buckets")
        if not args.total_budget and (args.workloads is not None or args.h_values is not None):
            raise SystemExit("--workloads and --h-values apply to --total-budget only")
        if args.total_budget:
            name = "total-budget"
    ratings, note = load_ratings(args.data)
    kw: dict[str, Any] = {"seed": args.seed, "note": note, "progress": not args.no_progress}
    if args.quick:
        kw.update(_QUICK[name])
        if name == "scaling":
            N = len(ratings)
            kw["sizes"] = [N // 16, N // 4, N]
    if args.runs is not None:
        kw["runs"] = args.runs
    if name != "scaling":
        update = "plain" if args.textbook else args.update
        if update == "plain" and args.passes is not None:
            raise SystemExit("--passes applies to the replay update only (not with --textbook "
                             "or --update plain)")
        kw["mwem"] = {"update": update, "passes": args.passes,
                      "average": bool(args.average or args.textbook)}
        if args.T is not None:
            kw["mwem"]["T"] = args.T
    if name == "query-set-size":
        kw["jobs"] = args.jobs
    if name == "heterogeneity":
        if args.user_buckets != 1:
            kw["user_buckets"] = args.user_buckets
            n_units = kw.get("n_movies", 128) * args.user_buckets
            kw["h_values"] = tuple(2**j for j in range(int(math.log2(n_units)) + 1))
        if args.heldout_T:
            kw["heldout_T"] = args.T_grid
            if args.quick:
                kw["heldout_runs"] = 2
    if name == "total-budget":
        if args.workloads is not None:
            kw["workloads"] = args.workloads
        if args.h_values is not None:
            kw["h_values"] = args.h_values
    fn = {"heterogeneity": heterogeneity, "query-set-size": query_set_size, "scaling": scaling,
          "total-budget": total_budget}[name]
    return run_and_report(fn, args, ratings, **kw)


def register(subparsers: Any) -> None:
    """Add ``heterogeneity``, ``query-set-size``, ``scaling`` and ``continuous``.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The sub-command set of ``dpgraph experiment``.  Each parser stores
        its handler in ``func`` (call ``args.func(args)``; it returns an exit
        code).

    Examples
    --------
    As wired into ``dpgraph experiment`` by :func:`dpgraph.cli.build_parser`:

    >>> from dpgraph.cli import build_parser
    >>> a = build_parser().parse_args(["experiment", "scaling", "--out", "o", "--quick"])
    >>> a.quick, callable(a.func)
    (True, True)
    """
    helps = {
        "heterogeneity": "E + q_u vs adapted MWEM as query heterogeneity h grows (paper VI-A1)",
        "query-set-size": "E + q_u vs MWEM as the linear query set grows to 2^20 (paper VI-A2)",
        "scaling": "worst-case squared error vs n against the Lemma 2 bound (paper VI-A3)",
    }
    for name, text in helps.items():
        p = subparsers.add_parser(name, help=text, description=text + ". " + STAND_IN_NOTE + ".")
        add_common_options(p)
        p.add_argument(
            "--data", choices=("auto", "movielens", "synthetic"), default="auto",
            help="ratings source: MovieLens 100K (stands in for Netflix) or a synthetic look-alike",
        )
        if name != "scaling":
            _add_mwem_options(p)
        if name == "heterogeneity":
            _add_heterogeneity_options(p)
        if name == "query-set-size":
            p.add_argument("--jobs", type=int, default=1, help="worker processes (runs in parallel)")
        p.set_defaults(func=lambda a, _n=name: run_experiment(_n, a))
    _continuous.add_parser(subparsers, add_common_options)


def _add_mwem_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("MWEM (defaults fixed before any experiment)")
    g.add_argument("--T", type=int, default=None, help=f"MWEM rounds (default {DEFAULT_T})")
    g.add_argument("--update", choices=("replay", "plain"), default="replay",
                   help="MW update: replay every past measurement each round (default) or "
                        "plain (the newest measurement once)")
    g.add_argument("--passes", type=int, default=None,
                   help=f"replay sweeps per round (default {DEFAULT_PASSES})")
    g.add_argument("--average", action="store_true",
                   help="release the average round histogram instead of the last")
    g.add_argument("--textbook", action="store_true",
                   help="textbook MWEM: the plain update and the averaged histogram")


def _add_heterogeneity_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--user-buckets", type=int, default=1,
                   help="split each movie into B slices by user id; h runs up to 128 B")
    p.add_argument("--heldout-T", action="store_true",
                   help="choose MWEM's T per h on held-out movies (ranks 129-256), then "
                        "evaluate on the test movies (ranks 1-128)")
    p.add_argument("--T-grid", type=_int_list, default=DEFAULT_T_GRID,
                   help=f"candidate T values for --heldout-T (default {_listed(DEFAULT_T_GRID)})")
    g = p.add_argument_group("one release, many workloads")
    g.add_argument("--total-budget", action="store_true",
                   help="answer W workloads under one total eps: E from one release, MWEM "
                        "with eps/W each; writes total-budget.*")
    g.add_argument("--workloads", type=_int_list, default=None,
                   help=f"numbers of workloads W (default {_listed(DEFAULT_WORKLOADS)})")
    g.add_argument("--h-values", type=_int_list, default=None,
                   help="heterogeneities of the workloads with --total-budget (default 1,16,128)")
