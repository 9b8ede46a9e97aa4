"""The ``dpgraph`` command line.

    dpgraph demo                                  release a graph, answer cut queries, plot
    dpgraph release EDGELIST --epsilon E -o FILE  release an edge list to a .dpg file
    dpgraph cut FILE --S ... --T ...              answer a cut query from a release
    dpgraph keygen PREFIX                         a key pair to sign releases (PREFIX.key, .pub)
    dpgraph experiment NAME --out DIR             the paper's experiments and benchmarks
    dpgraph plan --nodes N --epsilon E ...        planned errors, or the epsilon a target needs
    dpgraph report FILE -o report.html            a self-contained HTML report of a release
    dpgraph fetch NAME --to DIR                   a registered data set, checksum checked, copied
    dpgraph collect tokens|serve|close DIR        collection from users' own reports (edge LDP)

Each command module registers its own sub-commands; this file only wires them.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import warnings
from typing import Any

__all__ = ["RENAMED_OPTIONS", "build_parser", "main"]

#: modules of dpgraph.experiments that add ``dpgraph experiment NAME`` commands
EXPERIMENT_MODULES = ("facebook_cuts", "ratings", "peers", "signed")

#: spellings that are not options of dpgraph, with the hint given instead of an alias
RENAMED_OPTIONS = {
    "--eps": "use --epsilon",
    "--proper": "the proper estimate is the default; --unbiased gives the unbiased one",
}


class _Parser(argparse.ArgumentParser):
    """An argument parser with one spelling per option.

    Options are not abbreviated (``--eps`` is not ``--epsilon``: a prefix
    would silently become an alias), and an unknown option that is another
    option's case, a prefix of one or an old spelling is refused with the
    option to use.
    """

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args=None, namespace=None):
        if args is not None and self._subparsers is None:  # a command that takes options
            for word in args:
                if word == "--":
                    break
                if word.startswith("--") and len(word) > 2:
                    hint = self._hint(word.split("=", 1)[0])
                    if hint:
                        self.error(f"unrecognized option {word.split('=', 1)[0]}: {hint}")
        return super().parse_known_args(args, namespace)

    def _hint(self, option: str) -> str | None:
        known = self._option_string_actions
        if option in known:
            return None
        same_case = [k for k in known if k.lower() == option.lower()]
        if same_case:
            return f"did you mean {same_case[0]}? (options are case-sensitive)"
        if option in RENAMED_OPTIONS:
            return RENAMED_OPTIONS[option]
        longer = sorted(k for k in known if k.startswith(option))
        if longer:
            return f"did you mean {' or '.join(longer)}? (options are not abbreviated)"
        return None


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``dpgraph`` command.

    Examples
    --------
    >>> build_parser().parse_args(["experiment", "facebook-cuts", "--out", "x"]).experiment
    'facebook-cuts'
    """
    from . import commands, planning_cli
    from ._version import __version__
    from .cli_types import add_max_seconds_option
    from .local import cli as local_cli

    ap = _Parser(
        prog="dpgraph", description="Differentially private graph release (mechanism E)."
    )
    ap.add_argument("--version", action="version", version=f"dpgraph {__version__}")
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands.register_commands(sub)
    planning_cli.register(sub)  # dpgraph plan, dpgraph report
    _register_fetch(sub)
    local_cli.register(sub)  # dpgraph collect tokens | serve | close
    exp = sub.add_parser(
        "experiment", help="run one of the paper's experiments or the peer benchmark"
    ).add_subparsers(dest="experiment", required=True, metavar="NAME")
    for name in EXPERIMENT_MODULES:
        importlib.import_module(f"dpgraph.experiments.{name}").register(exp)
    for parser in exp.choices.values():  # every experiment takes a time limit, none by default
        add_max_seconds_option(parser)
    return ap


def _register_fetch(sub: Any) -> None:
    from .datasets import REGISTRY

    f = sub.add_parser("fetch", help="download a registered data set (checksum checked) and "
                                     "copy it into a folder",
                       description="Fetch a data set of datasets/README.md into dpgraph's cache "
                                   "(downloaded once, its published checksum checked) and copy it "
                                   "into --to DIR; offline, say where to put the file instead.")
    f.add_argument("name", choices=sorted(REGISTRY), help="the data set")
    f.add_argument("--to", default=".", metavar="DIR", help="folder to copy it into (default .)")
    f.set_defaults(func=_fetch)


def _fetch(args: argparse.Namespace) -> int:
    import filecmp
    import shutil
    from pathlib import Path

    from .datasets import fetch

    path = fetch(args.name)  # offline: a DatasetNotFoundError saying where to put the file
    target = Path(args.to) / path.name
    if not (target.exists() and filecmp.cmp(path, target, shallow=False)):
        shutil.copyfile(path, target)
    print(target)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code (2 for bad input).

    Bad input (a malformed or foreign file, a missing path, a directory, an
    over-budget release, too little memory) is reported on one line
    ``dpgraph: error: ...``, never as a traceback; an unexpected failure is
    reported the same way by its type alone (its message might quote input).
    Warnings are one line ``dpgraph: warning: ...`` each.  Ctrl-C ends it with
    ``dpgraph: interrupted`` (exit code 130).  ``--max-seconds`` (report,
    experiments) is the time limit of every analytic the command runs.
    """
    args = build_parser().parse_args(argv)
    previous = warnings.showwarning
    warnings.showwarning = _one_line_warning
    from .graph.analytics import time_limit

    try:
        with time_limit(getattr(args, "max_seconds", None)):
            return int(args.func(args) or 0)
    except (ValueError, TypeError, MemoryError, OSError, RecursionError, OverflowError) as exc:
        message = str(exc)
        if isinstance(exc, OSError) and exc.strerror:  # e.g. IsADirectoryError, PermissionError
            message = f"{exc.filename or ''}: {exc.strerror}".lstrip(": ")
        print(f"dpgraph: error: {message or type(exc).__name__}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: one line, no traceback
        print("dpgraph: interrupted", file=sys.stderr)
        return 130
    except ImportError as exc:  # an optional dependency; its message says what to install
        print(f"dpgraph: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # never a traceback; the message of a foreign error may quote data
        print(f"dpgraph: error: unexpected {type(exc).__name__}; please report it",
              file=sys.stderr)
        return 2
    finally:
        warnings.showwarning = previous


def _one_line_warning(message: Warning | str, category: type[Warning], filename: str,
                      lineno: int, file: Any = None, line: str | None = None) -> None:
    print(f"dpgraph: warning: {message}", file=sys.stderr if file is None else file)


if __name__ == "__main__":
    raise SystemExit(main())
