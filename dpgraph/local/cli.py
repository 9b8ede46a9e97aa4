"""``dpgraph collect``: issue tokens, serve the collector, close a collection into a release.

    dpgraph collect tokens DIR --nodes N --epsilon E --tokens-out FILE [--protocol one|both]
    dpgraph collect serve DIR [--host 127.0.0.1] [--port 8000]
    dpgraph collect close DIR -o release.dpg [--name NAME] [--signing-key PREFIX.key]
"""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["register"]


def _nodes(args: argparse.Namespace) -> Any:
    if (args.nodes is None) == (args.nodes_file is None):
        raise ValueError("give --nodes N (labels 0..N-1) or --nodes-file FILE (one label a line)")
    if args.nodes is not None:
        return args.nodes
    with open(args.nodes_file, encoding="utf-8") as fh:
        labels = [line.strip() for line in fh if line.strip()]
    return labels


def _tokens(args: argparse.Namespace) -> int:
    from . import issue_tokens

    tokens = issue_tokens(args.directory, _nodes(args), args.epsilon, args.protocol,
                          args.degree_share, tokens_path=args.tokens_out)
    print(f"collection created in {args.directory}: {len(tokens)} tokens written to "
          f"{args.tokens_out} (give each user only their own line)")
    return 0


def _serve(args: argparse.Namespace) -> int:
    from .service import serve

    serve(args.directory, host=args.host, port=args.port)
    return 0


def _close(args: argparse.Namespace) -> int:
    from . import close_collection

    R = close_collection(args.directory, args.output, name=args.name,
                         signing_key=args.signing_key)
    print(f"{R!r} saved to {args.output}")
    return 0


def register(subparsers: Any) -> None:
    """Add ``dpgraph collect`` and its sub-commands."""
    collect = subparsers.add_parser(
        "collect", help="collect a graph from users' own randomized reports (edge LDP)")
    sub = collect.add_subparsers(dest="collect_command", required=True, metavar="STEP")
    t = sub.add_parser("tokens", help="create a collection folder and its per-user tokens")
    t.add_argument("directory")
    t.add_argument("--nodes", type=int, help="the vertex set 0..N-1")
    t.add_argument("--nodes-file", help="the vertex set, one label a line")
    t.add_argument("--epsilon", type=float, required=True, help="each user's budget")
    t.add_argument("--protocol", choices=("one", "both"), default="one")
    t.add_argument("--degree-share", type=float, default=0.0,
                   help="part of epsilon spent on a noisy degree (default 0: none)")
    t.add_argument("--tokens-out", required=True, help="CSV file of position,label,token")
    t.set_defaults(func=_tokens)
    s = sub.add_parser("serve", help="run the HTTP collector of a collection folder")
    s.add_argument("directory")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=8000)
    s.set_defaults(func=_serve)
    c = sub.add_parser("close", help="turn the stored reports into a release file (.dpg)")
    c.add_argument("directory")
    c.add_argument("-o", "--output", required=True)
    c.add_argument("--name", help="the data set's public name")
    c.add_argument("--signing-key", help="PREFIX.key of dpgraph keygen, to sign the release")
    c.set_defaults(func=_close)
