"""The one reader of edge-list text files (and other whitespace tables of labels).

Every edge-list file dpgraph reads goes through :func:`read_table_chunks`:
``dpgraph.release(path, nodes=...)``, the blockwise release, the command line
and the dataset loaders (:mod:`dpgraph.datasets`).  The grammar:

* one record a line, columns separated by whitespace (spaces, tabs; ``\\r\\n``
  Windows line endings are whitespace too);
* ``#`` starts a comment anywhere on a line; a line whose first byte is ``%``
  is a comment (Matrix Market / KONECT headers); blank lines are skipped;
* an edge list needs at least two columns, ``u v``; further columns (weights,
  timestamps) are ignored and reported (:attr:`TableChunk.extra`);
* plain text or gzip (recognized by its magic bytes, whatever the name);
* a local path or any fsspec URL (``s3://...``, ``memory://...``).

The file is read in chunks of ``chunk_bytes`` and tokenized with numpy, so
memory is bounded by the chunk, whatever the file's size.  Errors give the
file's name and a line number, never a line's content (an edge list is
private), and carry no part of it: no chained exception, no ``.object``.
"""

from __future__ import annotations

import gzip
import os
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

import numpy as np

from .._files import check_regular_file

__all__ = [
    "DEFAULT_CHUNK_BYTES",
    "MAX_LABEL_BYTES",
    "DistinctKeys",
    "TableChunk",
    "int_column",
    "may_be_secret",
    "open_text_source",
    "read_table_chunks",
    "shown_path",
    "source_name",
]

#: bytes read (and tokenized) at a time
DEFAULT_CHUNK_BYTES = 1 << 24
#: longest label (token) accepted; a longer one is refused before any array is built
MAX_LABEL_BYTES = 1024
#: largest token array built at once (rows x columns x longest token)
_TOKEN_ARRAY_BYTES = 1 << 26

_WS = np.zeros(256, dtype=bool)
_WS[[9, 10, 11, 12, 13, 32]] = True  # exactly the bytes that bytes.split() splits on


@dataclass(frozen=True, repr=False)
class TableChunk:
    """The first columns of a run of data lines.

    Attributes
    ----------
    columns : tuple of numpy.ndarray
        One array of byte strings (numpy ``S`` dtype) per column kept.
    lines : numpy.ndarray of int64
        The 1-based line number of every row.
    extra : bool
        Some row of the chunk had more columns than were kept.
    """

    columns: tuple[np.ndarray, ...]
    lines: np.ndarray
    extra: bool

    def __len__(self) -> int:
        return int(self.lines.size)

    def __repr__(self) -> str:  # never the tokens: they are private labels
        return f"TableChunk(rows={len(self)}, columns={len(self.columns)})"


def may_be_secret(path: Any) -> bool:
    """Whether ``path`` is text no message may repeat and no file may be named after.

    A key's PEM text (pasted where its file's path belongs) and anything with
    line breaks or other unprintable characters is no path a user typed: it
    may be a key or a record.

    Examples
    --------
    >>> may_be_secret("data/g.txt"), may_be_secret("-----BEGIN PRIVATE KEY-----\\nMC4C...")
    (False, True)
    """
    text = os.fspath(path)
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    return not text.isprintable() or "-----BEGIN" in text or "PRIVATE KEY" in text


def shown_path(path: Any, *, quote: bool = True) -> str:
    """A path as messages show it (quoted), or its type and length when it may be secret.

    Examples
    --------
    >>> shown_path("data/g.txt"), shown_path("-----BEGIN PRIVATE KEY-----\\nMC4C...")
    ("'data/g.txt'", '(a path not shown: a str of 35 characters)')
    """
    text = os.fspath(path)
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    if may_be_secret(text):
        return f"(a path not shown: a {type(path).__name__} of {len(text)} characters)"
    return repr(text) if quote else text


def source_name(path: Any) -> str:
    """How messages name a source: the file name of a path, the URL as given.

    Text that may be secret (see :func:`shown_path`) is named by its length only.
    """
    text = os.fspath(path)
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    if may_be_secret(text):
        return shown_path(text)
    return text if "://" in text else os.path.basename(text) or text


class open_text_source:
    """Open a local path or fsspec URL for binary reading, un-gzipped when it is gzip.

    A context manager yielding a binary file object.  Gzip is recognized by
    its magic bytes.  Reading a damaged gzip stream raises ValueError (see
    :func:`read_table_chunks`).
    """

    def __init__(self, path: Any, storage_options: dict | None = None) -> None:
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"an edge list must be a path or URL, got {type(path).__name__}")
        self.path = os.fspath(path)
        self.storage_options = dict(storage_options or {})
        self._raw: Any = None

    def __enter__(self) -> BinaryIO:
        if "://" in self.path:
            import fsspec

            self._raw = fsspec.open(self.path, "rb", **self.storage_options).open()
        else:
            # refused before opening: a missing path, a directory, a FIFO or a device
            check_regular_file(self.path, f"edge list {shown_path(self.path)}")
            self._raw = open(self.path, "rb")
        head = self._raw.read(2)
        self._raw.seek(0)
        if head == b"\x1f\x8b":
            return gzip.GzipFile(fileobj=self._raw, mode="rb")  # type: ignore[return-value]
        return self._raw

    def __exit__(self, *exc: object) -> None:
        self._raw.close()


def _blocks(fh: BinaryIO, name: str, chunk_bytes: int) -> Iterator[bytes]:
    """Blocks of whole lines (the last one may lack its newline), read ``chunk_bytes`` at a time."""
    carry = b""
    while True:
        failed = None
        try:
            block = fh.read(chunk_bytes)
        except (OSError, EOFError, zlib.error) as exc:  # a damaged gzip stream
            failed = type(exc).__name__
        if failed is not None:  # raised outside the handler: nothing of the file is chained
            raise ValueError(f"{name}: cannot be read as text or gzip ({failed}); the file is "
                             "damaged or not an edge list")
        if not block:
            if carry:
                yield carry
            return
        data = carry + block
        cut = data.rfind(b"\n")
        if cut < 0:
            if len(data) > chunk_bytes:
                raise ValueError(f"{name}: a line is longer than {chunk_bytes:,} bytes; this is "
                                 "not an edge list")
            carry = data
            continue
        carry = data[cut + 1 :]
        yield data[: cut + 1]


def _blank_comments(arr: np.ndarray, nl: np.ndarray) -> np.ndarray:
    """``arr`` with every comment (``#`` to the end of its line, ``%`` lines) blanked."""
    starts = np.concatenate(([0], nl + 1))
    starts = starts[starts < arr.size]
    marks = np.union1d(np.flatnonzero(arr == 35), starts[arr[starts] == 37])
    if marks.size == 0:
        return arr
    line = np.searchsorted(nl, marks)
    line, first = np.unique(line, return_index=True)
    begin = marks[first]
    end = np.append(nl, arr.size)[line]  # the line's newline (or the end of the data)
    delta = np.zeros(arr.size + 1, dtype=np.int8)
    delta[begin] = 1
    delta[end] -= 1
    out = arr.copy()
    out[np.cumsum(delta[:-1], dtype=np.int8).astype(bool)] = 32
    return out


def _separators(delimiter: str | None) -> tuple[np.ndarray, str]:
    """The byte table of what separates tokens, and its name for messages."""
    if delimiter is None:
        return _WS, "whitespace-separated"
    if not isinstance(delimiter, str) or len(delimiter) != 1 or not delimiter.isascii() \
            or delimiter in "#%\n" or delimiter.isalnum():
        raise ValueError(f"delimiter must be None (whitespace) or one ASCII punctuation "
                         f"character such as ','; got {delimiter!r}")
    table = _WS.copy()
    table[ord(delimiter)] = True
    return table, f"{'comma' if delimiter == ',' else repr(delimiter)}-separated"


def _tokenize(data: bytes, line0: int, name: str, ncols: int, exact: bool,
              separators: tuple[np.ndarray, str]) -> Iterator[TableChunk]:
    """The first ``ncols`` tokens of every data line of ``data`` (whose first line is line0 + 1)."""
    arr = np.frombuffer(data, dtype=np.uint8)
    nl = np.flatnonzero(arr == 10)
    arr = _blank_comments(arr, nl)
    ws = separators[0][arr]
    tok = ~ws
    starts = np.flatnonzero(tok & np.concatenate(([True], ws[:-1])))
    if starts.size == 0:
        return
    ends = np.flatnonzero(tok & np.concatenate((ws[1:], [True]))) + 1
    lengths = ends - starts
    tline = np.searchsorted(nl, starts)  # line (within data) of every token
    long = lengths > MAX_LABEL_BYTES
    if long.any():
        ln = line0 + int(tline[np.argmax(long)]) + 1
        raise ValueError(f"{name}, line {ln}: a label longer than {MAX_LABEL_BYTES} bytes; "
                         "this is not an edge list")
    first_tok = np.flatnonzero(np.diff(tline, prepend=-1))  # tline is sorted: runs are rows
    row_line = tline[first_tok]
    counts = np.diff(np.append(first_tok, tline.size))
    bad = counts != ncols if exact else counts < ncols
    if bad.any():
        k = int(np.argmax(bad))
        want = f"exactly {ncols}" if exact else f"at least {ncols}"
        raise ValueError(f"{name}, line {line0 + int(row_line[k]) + 1}: expected {want} "
                         f"{separators[1]} columns, found {int(counts[k])}")
    extra = bool((counts > ncols).any())
    widest = int(lengths.max())
    step = max(1, _TOKEN_ARRAY_BYTES // (ncols * widest))
    for r0 in range(0, row_line.size, step):
        sel = first_tok[r0 : r0 + step]
        cols = []
        for c in range(ncols):
            s, ln = starts[sel + c], lengths[sel + c]
            w = int(ln.max())
            idx = s[:, None] + np.arange(w)
            grid = np.where(np.arange(w) < ln[:, None], arr[np.minimum(idx, arr.size - 1)], 0)
            cols.append(np.ascontiguousarray(grid.astype(np.uint8)).view(f"S{w}").ravel())
        yield TableChunk(tuple(cols), line0 + row_line[r0 : r0 + step].astype(np.int64) + 1,
                         extra)


def read_table_chunks(path: Any, *, columns: int = 2, exact: bool = False,
                      delimiter: str | None = None, chunk_bytes: int = DEFAULT_CHUNK_BYTES,
                      storage_options: dict | None = None) -> Iterator[TableChunk]:
    """Stream the first ``columns`` columns of a table, one chunk at a time.

    Parameters
    ----------
    path : str, os.PathLike or fsspec URL
        Plain text or gzip.
    columns : int, default 2
        Columns kept (an edge list: 2).
    exact : bool, default False
        Require exactly ``columns`` columns on every data line (a ratings
        table); by default more are allowed and ignored.
    delimiter : str, optional
        What separates columns besides white space: None (white space only,
        an edge list) or one punctuation character (``","`` for a CSV file
        of numbers; an empty field is then a missing column, refused).
    chunk_bytes : int, default 16 MiB
        Bytes read at a time: the memory the reader needs is a small
        multiple of it.
    storage_options : dict, optional
        fsspec options for a URL.

    Yields
    ------
    TableChunk

    Raises
    ------
    FileNotFoundError
        The local path does not exist.
    ValueError
        A directory, a FIFO or device, a damaged gzip stream, a line with too
        few columns, a label longer than 1 KiB, or a line longer than
        ``chunk_bytes``; the message names the file and the line, never its
        content.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "g.txt")
    >>> _ = open(p, "w").write("# u v w\\n0 1 0.5\\r\\n1 2 # a comment\\n")
    >>> [(c.columns[0].tolist(), c.columns[1].tolist(), c.lines.tolist(), c.extra)
    ...  for c in read_table_chunks(p)]
    [([b'0', b'1'], [b'1', b'2'], [2, 3], True)]
    """
    chunk_bytes = int(chunk_bytes)
    if chunk_bytes < 1024:
        raise ValueError(f"chunk_bytes must be >= 1024, got {chunk_bytes}")
    separators = _separators(delimiter)
    name = source_name(path)
    line0 = 0
    with open_text_source(path, storage_options) as fh:
        for data in _blocks(fh, name, chunk_bytes):
            yield from _tokenize(data, line0, name, columns, exact, separators)
            line0 += data.count(b"\n")


def int_column(tokens: np.ndarray, lines: np.ndarray, name: str) -> np.ndarray:
    """Byte-string tokens as int64, or a ValueError naming the first bad line (never the token).

    Examples
    --------
    >>> int_column(np.array([b"3", b"-1"]), np.array([1, 2]), "g.txt").tolist()
    [3, -1]
    """
    values = None
    try:
        values = tokens.astype(np.int64)
    except (ValueError, OverflowError):
        pass
    if values is None:  # raised outside the handler: numpy's message quotes the token
        stripped = np.char.lstrip(tokens, b"+-")
        ok = np.char.isdigit(stripped) & (np.char.str_len(stripped) <= 18)
        k = int(np.argmin(ok)) if not ok.all() else 0
        raise ValueError(f"{name}, line {int(lines[k])}: expected an integer label")
    return values


class DistinctKeys:
    """The distinct keys of a stream of key blocks, in the order they were first seen.

    Each block is collapsed (``np.unique``) as it arrives and kept with the
    stream position of each key's first occurrence; the blocks held are
    merged into one sorted run whenever they outgrow twice the run, so memory
    is a small multiple of (distinct keys + one block), whatever the number of
    repeats: an edge list of 40 million ``0 1`` lines holds one key, not 40
    million.  The total work is O(N log N) for N keys read.

    Examples
    --------
    >>> d = DistinctKeys()
    >>> d.add(np.array([5, 3, 5], dtype=np.uint64)); d.add(np.array([3, 9, 5], dtype=np.uint64))
    >>> d.keys().tolist()
    [5, 3, 9]
    """

    def __init__(self) -> None:
        self._keys: list[np.ndarray] = []
        self._first: list[np.ndarray] = []
        self._held = self._run = self._seen = 0

    def add(self, keys: np.ndarray) -> None:
        """Add a block of keys (in stream order)."""
        uniq, first = np.unique(keys, return_index=True)  # stable: each key's first position
        self._keys.append(uniq)
        self._first.append(first.astype(np.int64) + self._seen)
        self._seen += int(keys.size)
        self._held += int(uniq.size)
        if len(self._keys) > 1 and self._held > 2 * max(self._run, 1 << 16):
            self._merge()

    def _merge(self) -> None:
        # older blocks come first, so the first occurrence in the concatenation is the earliest
        keys, at = np.unique(np.concatenate(self._keys), return_index=True)
        first = np.concatenate(self._first)[at]
        self._keys, self._first = [keys], [first]
        self._held = self._run = int(keys.size)

    def keys(self) -> np.ndarray:
        """The distinct keys in order of first occurrence."""
        if not self._keys:
            return np.zeros(0, dtype=np.uint64)
        self._merge()
        return self._keys[0][np.argsort(self._first[0], kind="stable")]
