"""``dpgraph demo``, ``release``, ``cut`` and ``keygen``: the command-line jobs.

:func:`register_commands` adds the subcommands to an argparse
subparsers object; each sets ``func`` to a callable taking the parsed
arguments and returning an exit code.  ``dpgraph.cli`` wires them in.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from .cli_types import (
    RELEASE_FILE_HELP,
    NodeList,
    add_command,
    add_output_options,
    check_output,
    edge_table,
    int_option,
    parse_node_list,
    select_nodes,
)

__all__ = ["demo_graph", "register_commands", "signing_key_file", "verify_key_file"]


# --------------------------------------------------------------------------- helpers
def demo_graph(prefer_facebook: bool = True) -> tuple[Any, str]:
    """The demo's input: ego-Facebook when present locally, else a built-in graph.

    Never downloads.  The fallback is a stochastic block model generated with
    a fixed seed by networkx (4 communities of 150 nodes, p_in = 0.2,
    p_out = 0.01), so the demo works offline from a fresh install.

    Returns
    -------
    (networkx.Graph, str)
        The graph and a one-line description of which graph it is.

    Examples
    --------
    >>> G, name = demo_graph(prefer_facebook=False)
    >>> G.number_of_nodes(), name.startswith("stochastic block model")
    (600, True)
    """
    import networkx as nx

    if prefer_facebook:
        from . import datasets

        try:
            if datasets.available("facebook"):
                return datasets.facebook(), "SNAP ego-Facebook (4039 nodes, 88234 edges; found locally)"
        except Exception as exc:  # a damaged local copy must not break the demo
            print(f"note: ego-Facebook found but not usable ({type(exc).__name__}); "
                  "using the built-in graph", file=sys.stderr)
    sizes, p_in, p_out = [150] * 4, 0.2, 0.01
    probs = [[p_in if i == j else p_out for j in range(4)] for i in range(4)]
    G = nx.stochastic_block_model(sizes, probs, seed=7)
    G = nx.Graph(G)  # drop the block attributes: only pairs are released
    return G, (f"stochastic block model (networkx, seed 7: 4 blocks of 150 nodes, "
               f"p_in={p_in}, p_out={p_out}, {G.number_of_edges()} edges; ego-Facebook not found "
               "locally, set DPGRAPH_DATA_DIR to use it)")


def _fmt(est: Any) -> tuple[str, str, str]:
    lo, hi = est.ci(0.95)
    return f"{est.value:,.1f}", f"{est.std:,.1f}", f"[{lo:,.1f}, {hi:,.1f}]"


# --------------------------------------------------------------------------- demo
def _demo(args: argparse.Namespace) -> int:
    import networkx as nx

    from .graph import release

    G, name = demo_graph(prefer_facebook=not args.builtin)
    print(f"graph: {name}")
    seed = args.seed
    R = release(G, args.epsilon, seed=seed)
    print(f"released: {R!r}")
    print("  (seed given: reproducible stream, not for real data)" if seed is not None
          else "  (secure randomness: AES-CTR keyed from the OS)")
    nodes = np.array(R.nodes, dtype=object)
    rng = np.random.default_rng(0 if seed is None else seed)
    n = len(nodes)
    queries: list[tuple[str, list, list]] = []
    for k in range(args.queries):
        perm = rng.permutation(n)
        if k % 2 == 0:
            S, T = perm[: n // 2], perm[n // 2 :]
            label = f"half cut {k // 2 + 1}"
        else:
            a = int(rng.integers(n // 20, n // 4))
            S, T = perm[:a], perm[a : 2 * a]
            label = f"{a} vs {a} nodes"
        queries.append((label, nodes[S].tolist(), nodes[T].tolist()))
    est = R.cuts([(S, T) for _, S, T in queries])
    truth = [nx.cut_size(G, S, T) for _, S, T in queries]
    raw_pairs = [len(S) * len(T) for _, S, T in queries]
    print(f"\n{'query':<18}{'true':>9}{'estimate':>11}{'std':>8}  {'95% CI':<20}{'|S||T|':>11}")
    for k, (label, _, _) in enumerate(queries):
        v, s, ci = _fmt(est[k])
        print(f"{label:<18}{truth[k]:>9,}{v:>11}{s:>8}  {ci:<20}{raw_pairs[k]:>11,}")
    inside = sum(est.ci(0.95)[0][k] <= truth[k] <= est.ci(0.95)[1][k] for k in range(len(queries)))
    print(f"\n{inside} of {len(queries)} true cuts lie inside their 95% intervals. "
          f"The released graph itself has {R.number_of_released_edges():,} edges vs "
          f"{G.number_of_edges():,} true ones: raw counts are biased; the estimate, "
          f"R.number_of_edges(), is {R.number_of_edges()}.")
    if args.out is None:  # one folder for every run, replaced: nothing piles up in the temp dir
        from .datasets import cache_dir

        out = cache_dir() / "demo"
    else:
        out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    png = out / "dpgraph-demo.png"
    _demo_plot(png, queries, est, truth, name.split(" (")[0], R.epsilon)
    print(f"plot: {png}")
    if args.save:
        R.save(args.save, name=name.split(" (")[0])
        print(f"release saved to {args.save} (read it with dpgraph.load)")
    return 0


def _demo_plot(png: Path, queries: list, est: Any, truth: list, name: str, eps: float) -> None:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    k = np.arange(len(queries))
    lo, hi = est.ci(0.95)
    rel = lambda x: np.asarray(x, float) / np.maximum(np.asarray(truth, float), 1)
    fig, ax = plt.subplots(figsize=(6, 3.6), dpi=110)
    ax.errorbar(k, rel(est.value), yerr=[rel(est.value) - rel(lo), rel(hi) - rel(est.value)],
                fmt="o", capsize=4, label="estimate / truth, 95% CI")
    ax.axhline(1.0, color="k", ls="--", lw=1, label="truth")
    ax.set_xticks(k, [q[0] for q in queries], rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("estimate / true cut size")
    ax.set_title(f"dpgraph demo: {name}, eps = {eps:g}", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(png)
    plt.close(fig)


# --------------------------------------------------------------------------- release
def _release(args: argparse.Namespace) -> int:
    from .exceptions import SeededReleaseWarning
    from .graph import check_savable, release

    src = args.edgelist
    if "://" not in src and not os.path.exists(src):
        raise ValueError(f"EDGELIST: file {src} does not exist")
    if args.nodes is None and not args.nodes_from_edges:
        raise ValueError(
            "--nodes is required: the vertex set of a release is public, and reading it off "
            "the edge list would reveal which nodes have edges (not covered by edge-DP). "
            "Pass the public vertex set (e.g. --nodes 4039, --nodes 0-4038 or --nodes @ids.txt), "
            "or --nodes-from-edges if the set of nodes with edges is itself public"
        )
    if args.nodes is not None and args.nodes_from_edges:
        raise ValueError("give --nodes or --nodes-from-edges, not both")
    if args.budget is not None and args.ledger is None:
        raise ValueError("--budget needs --ledger FILE (the ledger it creates)")
    # everything that can fail is checked before the ledger is charged (inside release)
    check_output(args.output, "-o", force=args.force, ledger=args.ledger,
                 inputs=[("the EDGELIST", src), ("the --signing-key file", args.signing_key),
                         ("the --nodes file", _at_file(args.nodes))])
    signing_key = None if args.signing_key is None else signing_key_file(args.signing_key)
    check_savable(0, args.name, "--name")  # before reading the edges
    table = edge_table(src, args.delimiter, args.header)  # None: a whitespace list, streamed
    nodes = ((_nodes_in_file(src) if table is None else np.unique(table).tolist())
             if args.nodes_from_edges else parse_node_list(args.nodes, "--nodes", count=True))
    check_savable(nodes, args.name, "--name",  # what R.save would refuse after the charge
                  label_bytes=nodes.json_bytes() if isinstance(nodes, NodeList) else None)
    ledger = None
    if args.ledger is not None:  # charged inside release, after validation, before sampling
        ledger = _open_ledger(args.ledger, args.budget).with_label(
            f"{args.name or 'dpgraph release'} -> {args.output}")  # public: a name, a file
    with warnings.catch_warnings():  # said once, below, in the command line's own words
        warnings.simplefilter("ignore", SeededReleaseWarning)
        R = release(src if table is None else table, args.epsilon, seed=args.seed, directed=args.directed,
                            nodes=nodes, keep=args.keep, target_edges=args.target_edges,
                            ledger=ledger)
    R.save(args.output, signing_key=signing_key, name=args.name)
    print(f"released {R.number_of_nodes():,} nodes at epsilon={R.epsilon:g} "
          f"(flip probability {R.flip_probability:.6g}) -> {args.output}")
    if args.seed is not None:
        print("warning: --seed makes the release reproducible and predictable; "
              "never publish a seeded release of real data", file=sys.stderr)
    return 0


def _open_ledger(path: str, budget: float | None) -> Any:
    """``--ledger FILE`` with ``--budget TOTAL``; the errors speak of the flags."""
    from .ledger import PrivacyLedger

    if not Path(path).exists():
        if budget is None:
            raise ValueError(f"--ledger {path}: no such ledger file; create it by adding "
                             "--budget TOTAL (the total epsilon this dataset may ever spend)")
        return PrivacyLedger.open(path, total_epsilon=budget)
    ledger = PrivacyLedger.open(path)
    if budget is not None and budget != ledger.total_epsilon:
        raise ValueError(f"--budget {budget:g}: the ledger {path} already has a total of "
                         f"{ledger.total_epsilon:g}, which cannot be changed; drop --budget to "
                         "charge it")
    return ledger


def _at_file(spec: str | None) -> str | None:
    return spec[1:] if spec is not None and spec.startswith("@") else None


def _nodes_in_file(path: str) -> list:
    """--nodes-from-edges: every label the edge list names (integers when all are)."""
    from .graph import read_table_chunks, source_name

    seen: set[bytes] = set()
    for chunk in read_table_chunks(path):
        for col in chunk.columns:
            seen.update(np.unique(col).tolist())
    labels = []
    for tok in seen:
        text = None
        try:
            text = tok.decode("utf-8")
        except UnicodeDecodeError:
            pass
        if text is None:  # outside the handler: the exception would carry the label
            raise ValueError(f"{source_name(path)}: a label is not valid UTF-8 text")
        labels.append(text)
    try:
        return [int(t) for t in labels]
    except ValueError:
        return labels


# --------------------------------------------------------------------------- cut
def _cut(args: argparse.Namespace) -> int:
    from .graph import load

    R = load(args.file, verify_key=verify_key_file(args.verify_key))
    S = select_nodes(args.S, R.nodes, "--S")
    if args.T is None:
        chosen = set(S)
        T = [v for v in R.nodes if v not in chosen]
        if not T:
            raise ValueError("--S covers every node; give --T or a smaller --S")
    else:
        T = select_nodes(args.T, R.nodes, "--T")
    est = R.cut(S, T, proper=not args.unbiased)
    lo, hi = est.ci(args.level)
    if args.json:
        import json

        print(json.dumps({"estimate": est.value, "raw": est.raw, "std": est.std, "ci_low": lo,
                          "ci_high": hi, "level": args.level, "resolved": est.resolved,
                          "reason": est.reason, "S_size": len(set(S)), "T_size": len(set(T)),
                          "epsilon": R.epsilon, "proper": est.proper}))
    else:
        arrow = "->" if R.directed else "--"
        other = "" if args.level == 0.95 else f"; {100 * args.level:g}% CI [{lo:,.1f}, {hi:,.1f}]"
        print(f"cut |S|={len(set(S))} {arrow} |T|={len(set(T))}: {est}{other}")
    return 0


# --------------------------------------------------------------------------- signing keys
def signing_key_file(path: str) -> Any:
    """The key of ``--signing-key FILE`` (``PREFIX.key`` of keygen); errors name the flag."""
    from .graph import signing_key

    return signing_key(path, "--signing-key")


def verify_key_file(path: str | None) -> Any:
    """The key of ``--verify-key FILE`` (``PREFIX.pub`` of keygen), or None without one."""
    from .graph import verify_key

    return None if path is None else verify_key(path, "--verify-key")


def _keygen(args: argparse.Namespace) -> int:
    from .graph import public_hex, verify_key, write_key_files

    for p in (args.prefix + ".key", args.prefix + ".pub"):
        if os.path.lexists(p):  # a dangling symlink too: never write through it
            raise ValueError(f"{p} exists; not overwriting a key")
    folder = os.path.dirname(os.path.abspath(args.prefix + ".key"))
    if not os.path.isdir(folder):
        raise ValueError(f"keygen: the folder {folder} does not exist")
    secret, public = write_key_files(args.prefix)
    print(f"signing key (keep it secret) -> {secret}\n"
          f"verify key (publish it)      -> {public}  "
          f"(public key {public_hex(verify_key(public))})")
    return 0


# --------------------------------------------------------------------------- registration
def _positive_float(text: str) -> float:
    from .validation import check_epsilon

    try:
        return check_epsilon(float(text), "--epsilon")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


_seed = int_option("--seed", 0, "a non-negative integer", "a non-negative integer")


def _positive_count(name: str) -> Any:
    """An argparse type for integers >= 1 whose errors name the option."""
    return int_option(name, 1, "a positive integer", "at least 1")


def _level(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"--level must lie strictly between 0 and 1, got {text!r}")
    return value


def register_commands(subparsers: Any) -> None:
    """Add ``demo``, ``release``, ``cut`` and ``keygen`` to ``subparsers``; each sets ``func``.

    Examples
    --------
    As wired into the ``dpgraph`` command by :func:`dpgraph.cli.build_parser`:

    >>> from dpgraph.cli import build_parser
    >>> build_parser().parse_args(["cut", "r.dpg", "--S", "1,2"]).T is None
    True
    """
    d = add_command(
        subparsers, "demo", _demo,
        help="release a graph and answer cut queries with error bars (offline)",
        description="Release ego-Facebook (when present locally) or a built-in graph, answer a few "
                    "cut queries with 95% confidence intervals and write a plot.")
    d.add_argument("--epsilon", type=_positive_float, default=1.0, help="privacy parameter (default 1)")
    d.add_argument("--seed", type=_seed, default=None,
                   help="reproducible stream for the demo (default: secure randomness)")
    d.add_argument("--queries", type=_positive_count("--queries"), default=6,
                   help="number of cut queries, at least 1 (default 6)")
    d.add_argument("--out", default=None,
                   help="directory for dpgraph-demo.png (default: dpgraph's cache folder, "
                        "~/.cache/dpgraph/demo, printed)")
    d.add_argument("--save", default=None, help="also save the release to this file")
    d.add_argument("--builtin", action="store_true", help="use the built-in graph even if ego-Facebook is present")

    r = add_command(
        subparsers, "release", _release,
        help="release an edge-list file as an epsilon-edge-DP graph file",
        description="Read an edge list (SNAP style or CSV; '#' comments; .gz ok), release it "
                    "with mechanism E and save it in dpgraph's file format.")
    r.add_argument("edgelist", help="edge list file or URL, one 'u v' pair per line (plain or "
                                    "gzip; '#' comments; further columns ignored)")
    r.add_argument("--epsilon", "-e", type=_positive_float, required=True, help="privacy parameter > 0")
    r.add_argument("--delimiter", default=None, metavar="CHAR",
                   help="column separator besides white space, e.g. ',' (default: ',' for a "
                        ".csv or .csv.gz file, else white space)")
    r.add_argument("--header", action=argparse.BooleanOptionalAction, default=None,
                   help="the first line names the columns and is skipped (default: detected)")
    add_output_options(r, "dpgraph format")
    r.add_argument("--seed", type=_seed, default=None,
                   help="reproducible release (testing only; default: secure randomness)")
    r.add_argument("--directed", action="store_true", help="release ordered pairs (a directed graph)")
    r.add_argument("--nodes", default=None,
                   help="the PUBLIC vertex set (required): N (nodes 0..N-1), labels and ranges "
                        "like 0-4038,5000, or @FILE of labels")
    r.add_argument("--nodes-from-edges", action="store_true",
                   help="use the nodes that appear in EDGELIST as the vertex set; only when that "
                        "set is itself public (it reveals which nodes have edges)")
    r.add_argument("--keep", type=float, default=None,
                   help="sparse release: keep each released edge with this probability "
                        "(post-processing; same epsilon)")
    r.add_argument("--target-edges", type=int, default=None,
                   help="sparse release of about this many edges (keep chosen from the public "
                        "n and epsilon)")
    r.add_argument("--ledger", default=None, metavar="FILE",
                   help="privacy ledger of this dataset: the release is charged to it and refused "
                        "if over budget (see SECURITY.md)")
    r.add_argument("--signing-key", default=None, metavar="FILE",
                   help="sign the file with this key (.key from 'dpgraph keygen')")
    r.add_argument("--name", default=None,
                   help="the data set's public name, kept in the file (e.g. 'SNAP ego-Facebook'); "
                        "the title of 'dpgraph report'")
    r.add_argument("--budget", type=_positive_float, default=None, metavar="TOTAL",
                   help="total epsilon of a new --ledger FILE (needed only to create it)")

    c = add_command(
        subparsers, "cut", _cut, help="estimate a cut query from a released graph file",
        description="Estimate the number of edges between node sets S and T of a released graph, "
                    "with its exact standard deviation and a confidence interval.")
    c.add_argument("file", help=RELEASE_FILE_HELP)
    c.add_argument("--S", required=True, help="nodes of S: '1,2,3', '0-99', a mix, or @FILE")
    c.add_argument("--T", default=None, help="nodes of T (same syntax); default: all nodes not in S")
    c.add_argument("--unbiased", action="store_true",
                   help="print the unbiased estimate (may lie outside 0..|S||T|) instead of the "
                        "proper one, rounded and clipped to an integer in 0..|S||T|")
    c.add_argument("--level", type=_level, default=0.95, help="confidence level (default 0.95)")
    c.add_argument("--json", action="store_true", help="print JSON instead of text")
    c.add_argument("--verify-key", default=None, metavar="FILE",
                   help="the curator's verify key (.pub): refuse the file unless signed by it")

    k = add_command(
        subparsers, "keygen", _keygen, help="make an Ed25519 key pair to sign releases",
        description="Write PREFIX.key (the signing key, mode 0600: keep it secret) and PREFIX.pub "
                    "(the verify key: give it to analysts) as PEM files. Sign with "
                    "'dpgraph release ... --signing-key PREFIX.key'; analysts check with "
                    "--verify-key PREFIX.pub (dpgraph cut, dpgraph report) or "
                    "dpgraph.load(path, verify_key='PREFIX.pub').")
    k.add_argument("prefix", help="path prefix of the two key files")
