"""Argument types and checks shared by the ``dpgraph`` sub-commands.

The argparse ``type=`` callables' error messages name the option and the
value given, so that a mistyped flag says how to fix it.  The one node-list
grammar (:func:`parse_node_list`: ``N``, ranges ``0-99``, lists, ``@FILE``)
and the output checks every command runs before any work
(:func:`check_output`) live here too.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .validation import check_regular_file, refuse_overwrite, write_atomic

__all__ = [
    "RELEASE_FILE_HELP",
    "NodeList",
    "add_command",
    "add_max_seconds_option",
    "add_output_options",
    "check_output",
    "edge_table",
    "int_option",
    "parse_node_list",
    "select_nodes",
    "write_text_atomic",
]

#: help of a positional argument naming a released graph file
RELEASE_FILE_HELP = "a file written by 'dpgraph release' or PrivateGraph.save"


def int_option(flag: str, minimum: int, kind: str = "an integer",
               bound: str | None = None) -> Callable[[str], int]:
    """An argparse type for integers >= ``minimum``.

    Parameters
    ----------
    flag : str
        The option's name, as the messages show it (``"--seed"``).
    minimum : int
        Smallest accepted value.
    kind : str, default "an integer"
        What the option takes, shown when the text is not an integer.
    bound : str, optional
        What the option takes, shown when the value is below ``minimum``;
        default ``">= minimum"``.

    Returns
    -------
    callable
        Parses one command-line string, raising ``argparse.ArgumentTypeError``.

    Examples
    --------
    >>> parse = int_option("--nodes", 2)
    >>> parse("10")
    10
    >>> parse("1")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: --nodes must be >= 2, got 1
    """
    too_small = f">= {minimum}" if bound is None else bound

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} must be {kind}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{flag} must be {too_small}, got {value}")
        return value

    return parse


# --------------------------------------------------------------------------- node lists
#: longest node file read by ``@FILE`` (a label a line: tens of millions of labels)
MAX_NODE_FILE_BYTES = 1 << 30


@dataclass(frozen=True)
class _Range:
    lo: int
    hi: int  # inclusive
    text: str = ""  # the token as written

    def __len__(self) -> int:
        return max(0, self.hi - self.lo + 1)


class NodeList(Sequence):
    """The labels of a node-list argument, counted before any is built.

    ``len()`` costs nothing, so ``dpgraph.release`` checks the memory a
    vertex set of ``--nodes 0-99999999999`` needs before one label exists;
    iterating yields ints for integer tokens and ranges, text otherwise.
    ``parts`` holds the tokens as parsed (labels, and ranges not yet walked).
    """

    def __init__(self, parts: list[Any], flag: str = "the node list") -> None:
        self.parts = parts
        self._len = sum(max(0, p.hi - p.lo + 1) if isinstance(p, _Range) else 1 for p in parts)
        if self._len > sys.maxsize:  # len() could not even return it
            raise ValueError(f"{flag} names at least 10^{int((self._len.bit_length() - 1) * 0.30103)} nodes, more than "
                             f"any release can hold (at most {sys.maxsize:,})")

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[Any]:
        for p in self.parts:
            if isinstance(p, _Range):
                yield from range(p.lo, p.hi + 1)
            else:
                yield p

    def __getitem__(self, k: Any) -> Any:  # the Sequence protocol; rarely used
        if isinstance(k, slice):
            return list(self)[k]
        if not -self._len <= k < self._len:
            raise IndexError(k)
        k %= self._len
        for p in self.parts:
            size = len(p) if isinstance(p, _Range) else 1
            if k < size:
                return p.lo + k if isinstance(p, _Range) else p
            k -= size
        raise IndexError(k)  # pragma: no cover

    def json_bytes(self) -> int:
        """An upper bound on the bytes of the labels as a JSON list, without walking ranges."""
        total = 1 + self._len  # brackets and commas
        for p in self.parts:
            if isinstance(p, _Range):
                total += len(p) * max(len(str(p.lo)), len(str(p.hi)))
            else:
                total += len(json.dumps(p))
        return total

    def __repr__(self) -> str:  # public by construction, but kept short
        return f"NodeList({self._len} labels)"


_INT = re.compile(r"-?[0-9]+\Z")
_RANGE = re.compile(r"(-?[0-9]+)-(-?[0-9]+)\Z")


def _read_node_file(path: str, flag: str) -> list[str]:
    st = check_regular_file(path, f"{flag}: node file {path}", missing=ValueError)
    if st.st_size > MAX_NODE_FILE_BYTES:
        raise ValueError(f"{flag}: node file {path} is larger than "
                         f"{MAX_NODE_FILE_BYTES >> 20} MiB")
    with open(path, "rb") as fh:
        raw = fh.read()
    text = None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    if text is None:  # outside the handler: the exception would carry the file's bytes
        raise ValueError(f"{flag}: node file {path} is not UTF-8 text")
    return text.replace(",", " ").split()


def parse_node_list(spec: str, flag: str, *, count: bool = False,
                    ints: bool = True) -> NodeList:
    """Parse the node-list grammar of the command line.

    ``spec`` is comma-separated labels (``"1,2,5"``, ``"a,b"``), ranges of
    integer labels (``"0-99"``, both ends included), a mix
    (``"0-9,20,30-39"``) or ``@FILE`` with the same items separated by
    commas, spaces or new lines.  With ``count=True`` (``--nodes``) a lone
    integer ``N`` means the N nodes 0..N-1.  Nothing is built: the result
    knows its length (:class:`NodeList`).  Integer tokens become ints
    unless ``ints=False`` (then they stay text, as other labels do).

    Examples
    --------
    >>> list(parse_node_list("0-2,5,x", "--S"))
    [0, 1, 2, 5, 'x']
    >>> len(parse_node_list("100000000000", "--nodes", count=True))
    100000000000
    """
    if not isinstance(spec, str):
        raise TypeError(f"{flag} must be text")
    from_file = spec.startswith("@")
    tokens = (_read_node_file(spec[1:], flag) if from_file
              else [t.strip() for t in spec.split(",") if t.strip()])
    if not tokens:
        raise ValueError(f"{flag} is empty; give node labels like 1,2,3 or 0-99 or @file")
    if count and not from_file and len(tokens) == 1 and _INT.match(tokens[0]):
        n = int(tokens[0])
        if n < 2:
            raise ValueError(f"{flag} {n}: a vertex set needs at least 2 nodes")
        return NodeList([_Range(0, n - 1, tokens[0])], flag)
    parts: list[Any] = []
    for tok in tokens:
        m = _RANGE.match(tok)
        if m:
            lo, hi = int(m.group(1)), int(m.group(2))
            if hi < lo:
                raise ValueError(f"{flag}: the range {lo}-{hi} is empty (write low-high)")
            parts.append(_Range(lo, hi, tok))
        else:
            parts.append(int(tok) if ints and _INT.match(tok) else tok)
    return NodeList(parts, flag)


def select_nodes(spec: str, nodes: Sequence[Any], flag: str) -> list:
    """The nodes of a release that a node-list argument names, matched by their text.

    A label is matched to a node by ``str(node)``, so integer and string
    labels both work.  A range longer than the release has nodes is refused
    before it is walked (``--S 0-3000000000`` on 4,039 nodes answers at once).

    Raises
    ------
    ValueError
        Naming ``flag`` and how many labels are not nodes of the release.

    Examples
    --------
    >>> select_nodes("0-2,5", list(range(10)), "--S")
    [0, 1, 2, 5]
    >>> select_nodes("b,a", ["a", "b", "c"], "--T")
    ['b', 'a']
    """
    wanted = parse_node_list(spec, flag, ints=False)
    n = len(nodes)
    if len(wanted) > n:
        raise ValueError(f"{flag} names {len(wanted):,} labels but the release has {n:,} nodes; "
                         "use labels from the released graph")
    by_text: dict[str, Any] = {}
    for v in nodes:
        key = str(v)
        if key in by_text:
            raise ValueError(f"{flag}: two nodes print as the same text; node labels are "
                             "ambiguous")
        by_text[key] = v
    out, missing = [], 0
    for part in wanted.parts:
        if isinstance(part, _Range) and part.text in by_text:  # a label that looks like a range
            part = part.text
        labels = range(part.lo, part.hi + 1) if isinstance(part, _Range) else (part,)
        for label in labels:
            v = by_text.get(str(label), by_text)
            if v is by_text:
                missing += 1
            else:
                out.append(v)
    if missing:
        raise ValueError(f"{flag} names {missing} node(s) that are not in the release; "
                         "use labels from the released graph")
    return out


# --------------------------------------------------------------------------- parsers
def add_command(subparsers: Any, name: str, func: Callable[[argparse.Namespace], int], *,
                help: str, description: str) -> argparse.ArgumentParser:
    """The subcommand ``name`` of ``subparsers``, which runs ``func(args)``; add its options."""
    parser = subparsers.add_parser(name, help=help, description=description)
    parser.set_defaults(func=func)
    return parser


def add_output_options(parser: argparse.ArgumentParser, what: str) -> None:
    """``-o/--output FILE`` (required, ``what`` it holds) and ``--force`` (overwrite it).

    The command checks them with :func:`check_output` before any work.
    """
    parser.add_argument("-o", "--output", required=True, help=f"output file ({what})")
    parser.add_argument("--force", action="store_true",
                        help="overwrite the output file if it exists")


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--max-seconds must be a number, got {text!r}") from None
    if not (0 < value < float("inf")):
        raise argparse.ArgumentTypeError(f"--max-seconds must be finite and > 0, got {text!r}")
    return value


def add_max_seconds_option(parser: argparse.ArgumentParser) -> None:
    """``--max-seconds S`` (default None: no limit), for commands that run long analytics.

    The command runs under ``dpgraph.graph.analytics.time_limit(args.max_seconds)``.
    """
    parser.add_argument(
        "--max-seconds", type=_seconds, default=None, metavar="S",
        help="time limit: wall-clock seconds each long computation (triangle pass, community "
             "detection) may take, e.g. --max-seconds 600; one predicted or running over it "
             "is refused with the reason (a report lists it under 'Not computed'). Default: "
             "no limit; only a computation predicted to take hours is refused")


def check_output(path: str, flag: str, *, force: bool = False,
                 inputs: Sequence[Any] = (), ledger: str | None = None) -> str:
    """Refuse an output path before any work (and any privacy spent) is done.

    The folder must exist and be writable; the path must not be a folder, an
    existing file without ``force``, or, never (even with ``force``), any of
    ``inputs`` (paths, or ``(description, path)`` pairs: writing a report
    over its release destroys the release), the ``ledger`` the command
    charges or its lock file, or any existing privacy ledger.  "The same" is
    the same resolved path, whether or not the file exists yet (a ledger the
    command is about to create), or the same file on disk (device and inode):
    the same name, a symbolic link or a hard link.
    """
    if os.path.isdir(path):
        raise ValueError(f"{flag} {path} is a folder; give a file name")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ValueError(f"{flag} {path}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"{flag} {path}: the folder {folder} is not writable")
    protected = [x if isinstance(x, tuple) else ("an input of this command", x) for x in inputs]
    refuse_overwrite(path, f"{flag} {path}", protected,
                     ledger=ledger if ledger is None else os.path.abspath(ledger))
    if os.path.lexists(path) and not force:
        raise ValueError(f"{flag} {path} exists; pass --force to overwrite it")
    return path


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file renamed into place.

    The file at ``path`` is replaced, never truncated: another name of the old
    file (a hard link) keeps its content, and a failed write leaves it whole.
    The new file has the permissions of a newly created one (0666 less the umask).
    """
    try:
        write_atomic(path, [text.encode("utf-8")], fsync=False, private=False)
    except OSError as exc:  # named by the requested path, never the temporary file
        raise OSError(f"cannot write {path}: {exc.strerror or type(exc).__name__}") from None


#: first-line names that say a table has a header (compared lower-case)
_HEADER_NAMES = {"source", "target", "src", "dst", "from", "to", "u", "v", "node1", "node2",
                 "i", "j", "head", "tail"}


def _is_int(token: bytes) -> bool:
    return token.lstrip(b"+-").isdigit()


def edge_table(path: str, delimiter: str | None, header: bool | None) -> Any:
    """``dpgraph release``'s edge list as an (m, 2) array of labels, or None to stream the file.

    A CSV file (``.csv``/``.csv.gz``, or ``--delimiter`` given) or one whose
    first line is a header is read here: ``header`` True skips the first data
    line, False keeps it, None detects it (a first line naming its columns,
    ``source,target`` and the like, or one that is not two integers above
    lines that are).  Labels are integers when every one is, else text.  A
    whitespace edge list without a header returns None: the release streams
    it.  Messages name the file and the line, never its content.
    """
    from .exceptions import DroppedAttributesWarning
    from .graph import read_table_chunks, source_name

    if delimiter is None and path.lower().endswith((".csv", ".csv.gz")):
        delimiter = ","
    chunks = read_table_chunks(path, delimiter=delimiter)
    first = next(chunks, None)
    if first is None or first.lines.size == 0:
        return None if delimiter is None else np.empty((0, 2), dtype=np.int64)
    row = [c[0] for c in first.columns]
    if header is None:
        named = all(t.decode("utf-8", "replace").strip().lower() in _HEADER_NAMES for t in row)
        below = [c[1:] for c in first.columns]
        header = named or (not all(map(_is_int, row)) and below[0].size > 0
                           and all(_is_int(t) for col in below for t in col.tolist()))
    if delimiter is None and not header:
        return None
    parts: list[list[np.ndarray]] = [[], []]
    extra = False
    for k, chunk in enumerate([first, *chunks]):
        extra = extra or chunk.extra
        for side in (0, 1):
            parts[side].append(chunk.columns[side][1:] if k == 0 and header else chunk.columns[side])
    if extra:
        import warnings

        warnings.warn(f"the columns after the first two of {source_name(path)} are dropped: a "
                      "graph release publishes only the presence of each vertex pair",
                      DroppedAttributesWarning, stacklevel=2)
    u, v = (np.concatenate(p) for p in parts)
    tokens = np.stack([u, v], axis=1)
    if all(_is_int(t) for t in tokens.ravel().tolist()):
        return tokens.astype(np.int64)
    try:
        return np.char.decode(tokens, "utf-8").astype(object)
    except UnicodeDecodeError:
        raise ValueError(f"{source_name(path)}: node labels must be UTF-8 text") from None
