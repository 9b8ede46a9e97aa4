"""``dpgraph plan`` and ``dpgraph report``: choosing epsilon, reading a release.

    dpgraph plan --nodes N --epsilon E --sides A,B [--json]    planned errors at E
    dpgraph plan --nodes N --sides A,B --target-std X [--json] smallest eps meeting X
    dpgraph plan --nodes N --epsilon E --target-edges K        a sparse release's cost
    dpgraph plan --nodes N --epsilon E --sides A,B --values a,b,c [--value b | --weights a=-1,b=1]
                                                               a typed (weighted) release's cut
    dpgraph plan --nodes N --epsilon E --workload degree,boundary:10,edges [--shares 0,0.1]
                                                               a degree share's std per query
    dpgraph report FILE.dpg -o report.html [--open]            self-contained HTML report

:func:`register` adds both subcommands to an argparse subparsers object.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from .cli_types import (
    RELEASE_FILE_HELP,
    add_max_seconds_option,
    add_output_options,
    check_output,
    int_option,
    write_text_atomic,
)

__all__ = ["register"]

_STATISTICS = ("cut", "number_of_edges", "degree", "triangles", "transitivity")


def _float(flag: str, allow_zero: bool = False):
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} must be a number, got {text!r}") from None
        if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
            need = ">= 0" if allow_zero else "> 0"
            raise argparse.ArgumentTypeError(f"{flag} must be finite and {need}, got {text!r}")
        return value
    return parse


def _probability(text: str) -> float:
    value = _float("--keep")(text)
    if value > 1:
        raise argparse.ArgumentTypeError(f"--keep must be in (0, 1], got {text!r}")
    return value


def _sides(text: str) -> tuple[int, int]:
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2:
        raise argparse.ArgumentTypeError(f"--sides takes two sizes 'A,B' (|S|,|T|), got {text!r}")
    try:
        a, b = int(parts[0]), int(parts[1])
    except ValueError:
        raise argparse.ArgumentTypeError(f"--sides sizes must be integers, got {text!r}") from None
    if a <= 0 or b <= 0:
        raise argparse.ArgumentTypeError(f"--sides sizes must be > 0, got {text!r}")
    return a, b


def _names(text: str) -> list[str]:
    out = [t.strip() for t in text.split(",")]
    if not out or not all(out):
        raise argparse.ArgumentTypeError(
            f"--values takes the tie values separated by commas, e.g. 'distrust,trust', got {text!r}")
    return out


def _value_map(flag: str, allow_negative: bool):
    def parse(text: str) -> dict[str, float]:
        out = {}
        for part in text.split(","):
            key, sep, num = part.partition("=")
            key = key.strip()
            try:
                x = float(num)
            except ValueError:
                x = math.nan
            if not sep or not key or not math.isfinite(x) or (x < 0 and not allow_negative):
                what = "a finite number" if allow_negative else "a share >= 0"
                raise argparse.ArgumentTypeError(
                    f"{flag} takes value=number pairs separated by commas, each number {what}, "
                    f"e.g. 'distrust=-1,trust=1'; got {text!r}")
            out[key] = x
        return out
    return parse


def _epsilons(text: str) -> list[float]:
    parse = _float("--table")
    out = [parse(t) for t in text.split(",") if t.strip()]
    if not out:
        raise argparse.ArgumentTypeError("--table needs a comma-separated list of epsilons")
    return out


def _shares(text: str) -> list[float]:
    try:
        out = [float(t) for t in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--shares takes numbers in [0, 1) separated by commas, "
                                         f"got {text!r}") from None
    if not out or not all(0 <= x < 1 for x in out):
        raise argparse.ArgumentTypeError(f"--shares must lie in [0, 1), got {text!r}")
    return out


# --------------------------------------------------------------------------- plan
def _degree_share_plan(args: argparse.Namespace) -> int:
    from .planner import degree_share_plan, parse_workload

    if args.epsilon is None:
        raise ValueError("--workload plans a degree share at a given total: give --epsilon")
    p = degree_share_plan(args.nodes, args.epsilon, directed=args.directed,
                          workload=parse_workload(args.workload), shares=args.shares)
    if args.json:
        print(json.dumps(p.to_dict(), indent=2))
        return 0
    kind = "directed" if p.directed else "undirected"
    print(f"{p.nodes} nodes ({kind}), total epsilon {p.epsilon:g}: exact std of each query at "
          "each degree share (release(..., degree_share=s); 0 = the pairs alone)")
    cols = ["share", *p.queries]
    print("  ".join(f"{c:>18}" for c in cols))
    for r in p.table():
        print("  ".join(f"{r[c]:>18.6g}" for c in cols))
    for q, (share, std) in p.best.items():
        if q == "workload":
            print(f"best share for the whole workload (least mean variance relative to share 0): "
                  f"{share:g} (relative std {std:.3g})")
        else:
            print(f"best share for {q}: {share:g} (std {std:.6g})")
    return 0


def _plan(args: argparse.Namespace) -> int:
    from .planner import DEFAULT_EPSILONS, plan

    if args.workload is not None:
        return _degree_share_plan(args)
    if args.sides is not None and sum(args.sides) > args.nodes:
        raise ValueError(f"--sides {args.sides[0]},{args.sides[1]}: |S| + |T| = {sum(args.sides)} "
                         f"exceeds --nodes {args.nodes}; the sides of a cut are disjoint")
    has_target = args.target_std is not None or args.target_relative_error is not None
    if has_target == (args.epsilon is not None):
        raise ValueError("give --epsilon, or one of --target-std / --target-relative-error "
                         "(the smallest epsilon meeting it is computed)")
    if args.target_std is not None and args.target_relative_error is not None:
        raise ValueError("give --target-std or --target-relative-error, not both")
    if args.keep is not None and args.target_edges is not None:
        raise ValueError("give --keep or --target-edges (a sparse release), not both")
    if args.statistic == "cut" and args.sides is None:
        raise ValueError("--statistic cut needs --sides A,B")
    if args.values is None and (args.value is not None or args.weights is not None
                                or args.assumed_mix is not None):
        raise ValueError("--value, --weights and --assumed-mix plan a typed release: declare its "
                         "tie values with --values too, e.g. --values distrust,trust")
    p = plan(
        args.nodes, args.epsilon, directed=args.directed, sides=args.sides,
        target_std=args.target_std, target_relative_error=args.target_relative_error,
        statistic=args.statistic, cut=args.assumed_cut, edges=args.assumed_edges,
        triangles=args.assumed_triangles, transitivity=args.assumed_transitivity,
        wedges=args.assumed_wedges, four_cycles=args.assumed_four_cycles,
        keep=args.keep, target_edges=args.target_edges,
        values=args.values, value=args.value, weights=args.weights, mix=args.assumed_mix,
    )
    epsilons = args.table or list(DEFAULT_EPSILONS)
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        ax = p.plot()
        ax.figure.tight_layout()
        ax.figure.savefig(args.plot, dpi=120)
        plt.close(ax.figure)
    if args.json:
        out = p.to_dict()
        if args.table:
            out["table"] = p.table(epsilons)
        print(json.dumps(out, indent=2))
        return 0
    kind = "directed" if p.directed else "undirected"
    if p.target is not None:
        what = (f"std <= {p.target['target_std']:g}" if "target_std" in p.target else
                f"relative error <= {p.target['target_relative_error']:g} "
                f"at an assumed {p.target['assumed_value']:g}")
        print(f"smallest epsilon with {p.target['statistic'].replace('_', ' ')} {what}: "
              f"{p.epsilon!r}")
    print(f"{p.nodes} nodes ({kind}), epsilon = {p.epsilon:.6g} per vertex pair, "
          f"p' = {p.flip_probability:.6g} (realized epsilon {p.realized_epsilon:.6g})")
    full = p.full_release_stds()
    smallest = p.smallest_resolvable()
    if p.typed is not None:
        t = p.typed
        what = (f"ties of value {t['value']!r}" if t.get("value") is not None else
                "the weighted sum " + ", ".join(f"{k}: {w:g}" for k, w in t["weights"].items())
                if t.get("weights") is not None else "ties of any value")
        how = ("exact under the assumed mix" if t.get("mix") is not None else
               "the worst case over the truth" if p.K > 2 else "exact")
        print(f"typed release: K = {p.K} values a pair (no tie + {p.K - 1} declared); the counts "
              f"below count {what}; stds: {how}")
    if p.subsample is not None:
        print(f"sparse release: keep = {p.keep:.6g}, about {p.expected_released_edges():,.0f} "
              "released edges" + ("" if "edges" in p.assumptions else " (plus the kept true ones)"))
    for name, s in p.stds.items():
        extra = f" (|S|={p.sides[0]}, |T|={p.sides[1]})" if name == "cut" else ""
        cost = (f"  ({s / full[name]:.3g}x the full release's {full[name]:.6g})"
                if p.subsample is not None and full[name] > 0 else "")
        print(f"  std of {name.replace('_', ' ')}{extra}: {s:.6g}{cost}")
    if smallest:
        print("resolved (95% interval excludes 0, half-width <= half the value) only for true "
              "values of at least: " + ", ".join(f"{k.replace('_', ' ')} {v:.3g}"
                                                   for k, v in smallest.items()))
    rows, left_out = _table_rows(p, epsilons, automatic=not args.table)
    cols = list(rows[0])
    print("\n" + "  ".join(f"{c:>18}" for c in cols))
    for r in rows:
        print("  ".join(f"{r[c]:>18.6g}" for c in cols))
    if left_out:
        print(f"(epsilon {', '.join(f'{e:g}' for e in left_out)} left out: no release at that "
              "epsilon meets the requested size)")
    if args.plot:
        print(f"\nplot: {args.plot}")
    return 0


def _table_rows(p: Any, epsilons: list, automatic: bool) -> tuple[list[dict], list[float]]:
    """The table's rows; the automatic table leaves out the epsilons where the plan is impossible
    (a --target-edges the dense release at that epsilon cannot give), an explicit --table does not.
    """
    if not automatic:
        return p.table(epsilons), []
    rows, left_out = [], []
    for eps in epsilons:
        try:
            rows += p.table([eps])
        except ValueError:
            left_out.append(eps)
    return (rows or p.table([p.epsilon])), left_out


# --------------------------------------------------------------------------- report
def _report(args: argparse.Namespace) -> int:
    from .commands import verify_key_file
    from .graph import load
    from .report import build_report

    path = Path(args.file)
    store = path.is_dir()  # a blockwise (Zarr) store is itself the release
    if not store and not path.is_file():
        raise FileNotFoundError(f"{path}: no such release file (write one with 'dpgraph release')")
    if store and args.verify_key:
        raise ValueError("--verify-key checks a signed .dpg file; a blockwise store carries no signature")
    out = Path(check_output(args.output, "-o", force=args.force,
                            inputs=[args.file, args.verify_key]))
    key = verify_key_file(args.verify_key)
    if store:
        from .graph.blockwise import open_blockwise

        R = open_blockwise(path)
    else:
        R = load(path, verify_key=key)

    def progress(step: str, seconds: float | None = None) -> None:  # one line per step
        if args.quiet:
            return
        if seconds is None:
            print(f"  {step} ...", end="", file=sys.stderr, flush=True)
        else:
            print(f" {seconds:.1f} s", file=sys.stderr, flush=True)

    from .graph import public_hex

    signer = None if key is None else public_hex(key)
    html = build_report(R, title=args.title or R.name or path.name, progress=progress,
                        verified_by=signer, max_seconds=args.max_seconds)
    write_text_atomic(out, html)  # replaced, never truncated: a hard link keeps its content
    print(f"wrote {out} ({len(html) // 1024} KiB)")
    if args.open:
        import webbrowser

        webbrowser.open(out.resolve().as_uri())
    return 0


def register(subparsers: Any) -> None:
    """Add ``plan`` and ``report`` to an argparse subparsers object."""
    p = subparsers.add_parser(
        "plan", help="planned error of a release from public quantities, or the epsilon a target needs",
        description="Exact standard deviations of cut, edge-count and degree estimates from public "
                    "quantities only; triangle and transitivity errors under assumed values; the "
                    "smallest epsilon meeting a target.")
    p.add_argument("--nodes", type=int_option("--nodes", 2), required=True,
                   help="number of nodes of the public vertex set")
    p.add_argument("--directed", action="store_true", help="ordered pairs (a directed release)")
    p.add_argument("--epsilon", "-e", type=_float("--epsilon"), default=None,
                   help="privacy parameter per vertex pair")
    p.add_argument("--sides", type=_sides, default=None, help="cut side sizes 'A,B' (|S|,|T|)")
    p.add_argument("--target-std", type=_float("--target-std"), default=None,
                   help="find the smallest epsilon whose std is <= this")
    p.add_argument("--target-relative-error", type=_float("--target-relative-error"), default=None,
                   help="find the smallest epsilon whose std / assumed value is <= this")
    p.add_argument("--statistic", choices=_STATISTICS, default=None,
                   help="what the target is about (default: cut with --sides, else number_of_edges)")
    for name, what in (("cut", "cut size (for a relative error)"),
                       ("edges", "edge count (triangle/transitivity errors need it)"),
                       ("triangles", "triangle count (for a relative error)"),
                       ("transitivity", "transitivity in [0, 1]"),
                       ("wedges", "wedge count (default: that of a regular graph)"),
                       ("four-cycles", "4-cycle count (default: W^2/(4N), the random-graph value)")):
        p.add_argument(f"--assumed-{name}", type=_float(f"--assumed-{name}", allow_zero=True),
                       default=None, help=f"assumed {what}")
    p.add_argument("--keep", type=_probability, default=None,
                   help="plan a sparse release keeping each released edge with this probability")
    p.add_argument("--target-edges", type=int_option("--target-edges", 1), default=None,
                   help="plan a sparse release sized for about this many released edges")
    p.add_argument("--values", type=_names, default=None,
                   help="plan a typed release with these tie values, e.g. distrust,trust,strong "
                        "(K = their number + 1)")
    p.add_argument("--value", default=None,
                   help="with --values: count the ties of this value (default: of any value)")
    p.add_argument("--weights", type=_value_map("--weights", True), default=None,
                   help="with --values: a weighted count, e.g. distrust=-1,trust=1,strong=2")
    p.add_argument("--assumed-mix", type=_value_map("--assumed-mix", False), default=None,
                   help="with --values: assumed share of the pairs per tie value, e.g. "
                        "trust=0.001,distrust=0.0001 (exact stds under it; default: worst case)")
    p.add_argument("--table", type=_epsilons, default=None,
                   help="epsilons of the table, e.g. 0.5,1,2 (default 0.1,...,8)")
    p.add_argument("--plot", default=None, help="write a plot of error against epsilon (PNG/SVG)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--workload", default=None,
                   help="plan a degree share: queries 'degree,edges,boundary:K,cut:AxB'")
    p.add_argument("--shares", type=_shares, default=None,
                   help="degree shares to tabulate with --workload, e.g. '0,0.05,0.1,0.2'")
    p.set_defaults(func=_plan)

    r = subparsers.add_parser(
        "report", help="a self-contained HTML report of a release for the analyst",
        description="Post-processing of the release only: what it protects, every debiased "
                    "statistic with its 95% CI, degrees, communities, cut accuracy, citation.")
    r.add_argument("file", help=RELEASE_FILE_HELP)
    add_output_options(r, "HTML")
    r.add_argument("--title", default=None,
                   help="title of the report (default: the data set's name kept in the file, "
                        "else the file name)")
    r.add_argument("--open", action="store_true", help="open the report in a web browser")
    r.add_argument("--quiet", action="store_true", help="no progress messages")
    add_max_seconds_option(r)
    r.add_argument("--verify-key", default=None, metavar="FILE",
                   help="the curator's verify key (.pub from 'dpgraph keygen'): refuse the file "
                        "unless it is signed by it, and say so in the report")
    r.set_defaults(func=_report)
