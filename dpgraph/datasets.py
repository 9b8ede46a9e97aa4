"""Real datasets: where to find them, how to verify them, how to load them fast.

Data files are never shipped with dpgraph.  :func:`fetch` looks for a file, in
order, in

1. the directory named by the environment variable ``DPGRAPH_DATA_DIR``;
2. the user cache directory, ``$XDG_CACHE_HOME/dpgraph`` or ``~/.cache/dpgraph``;
3. the publisher's address, downloaded into the cache directory.

Every file is checked against its published SHA-256 before use.  When the
download fails (no network, say) the error names the file, the address to get
it from and the directories to put it in.

Registered datasets (see ``datasets/README.md`` for provenance and licences):

``"facebook"``
    SNAP ego-Facebook (McAuley & Leskovec 2012), ``facebook_combined.txt.gz``,
    4039 nodes, 88234 undirected edges.  Loader: :func:`facebook`.
``"movielens-100k"``
    MovieLens 100K ratings (``u.data`` of ``ml-100k.zip``, stored gzipped as
    ``ml-100k-u.data.gz``), 100000 ratings 1..5 by 943 users of 1682 movies.
    Its licence forbids redistribution.  Loader: :func:`movielens_100k`.  In
    dpgraph's experiments it stands in for the Netflix ratings of the paper.
``"email-eu-core"``, ``"email-eu-core-departments"``
    SNAP email-Eu-core (Leskovec, Kleinberg & Faloutsos 2007; Yin et al. 2017),
    1005 nodes, 25571 directed edges, with each node's department (42
    departments).  Loader: :func:`email_eu_core`.

Parsing is vectorized: whole files are tokenized with numpy, and malformed
lines are reported by line number without echoing their content (a data file
may be private).
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import io
import os
import shutil
import tempfile
import urllib.error
import urllib.request
import zipfile
from pathlib import Path
from typing import Any, Union

import numpy as np

__all__ = [
    "REGISTRY",
    "DatasetInfo",
    "DatasetNotFoundError",
    "Ratings",
    "available",
    "cache_dir",
    "email_eu_core",
    "facebook",
    "fetch",
    "locate",
    "movielens_100k",
    "read_ratings",
    "search_dirs",
    "snap_edgelist",
]

PathLike = Union[str, "os.PathLike[str]"]


@dataclasses.dataclass(frozen=True)
class DatasetInfo:
    """Provenance of one registered dataset.

    Attributes
    ----------
    name : str
        Registry key, e.g. ``"facebook"``.
    filename : str
        File name looked for in the data and cache directories.
    url : str
        Publisher's address.
    sha256 : str
        Expected SHA-256 (hex) of the file, or of its decompressed content when
        ``checksum_of == "uncompressed"``.
    checksum_of : str
        ``"file"`` (hash of the stored bytes) or ``"uncompressed"`` (hash after
        gzip decompression).
    archive_member : str or None
        When the publisher serves a zip archive, the member to extract; it is
        stored gzipped under ``filename``.
    description : str
        One line for humans.
    """

    name: str
    filename: str
    url: str
    sha256: str
    checksum_of: str = "file"
    archive_member: str | None = None
    description: str = ""


REGISTRY: dict[str, DatasetInfo] = {
    "facebook": DatasetInfo(
        name="facebook",
        filename="facebook_combined.txt.gz",
        url="https://snap.stanford.edu/data/facebook_combined.txt.gz",
        sha256="125e84db872eeba443d270c70315c256b0af43a502fcfe51f50621166ad035d7",
        checksum_of="file",
        description="SNAP ego-Facebook, 4039 nodes, 88234 edges (McAuley & Leskovec 2012)",
    ),
    "movielens-100k": DatasetInfo(
        name="movielens-100k",
        filename="ml-100k-u.data.gz",
        url="https://files.grouplens.org/datasets/movielens/ml-100k.zip",
        sha256="06416e597f82b7342361e41163890c81036900f418ad91315590814211dca490",
        checksum_of="uncompressed",
        archive_member="ml-100k/u.data",
        description="MovieLens 100K ratings u.data (GroupLens; no redistribution)",
    ),
    "email-eu-core": DatasetInfo(
        name="email-eu-core",
        filename="email-Eu-core.txt.gz",
        url="https://snap.stanford.edu/data/email-Eu-core.txt.gz",
        sha256="b3860350fb09d27183f3e2298ef6348d1796523cc30bed99fc388b193f1820d1",
        checksum_of="file",
        description="SNAP email-Eu-core, 1005 nodes, 25571 directed edges",
    ),
    "email-eu-core-departments": DatasetInfo(
        name="email-eu-core-departments",
        filename="email-Eu-core-department-labels.txt.gz",
        url="https://snap.stanford.edu/data/email-Eu-core-department-labels.txt.gz",
        sha256="02af09ed2003de5fc8a81cdf3b67760e3ed0caab485e51eb8688a69006cfa2f4",
        checksum_of="file",
        description="department (0..41) of each email-Eu-core node",
    ),
}


class DatasetNotFoundError(FileNotFoundError):
    """A dataset is neither present locally nor downloadable."""


# --------------------------------------------------------------------------- locations


def cache_dir() -> Path:
    """Return the user cache directory for dpgraph data (not created here).

    ``$XDG_CACHE_HOME/dpgraph`` when ``XDG_CACHE_HOME`` is set, else
    ``~/.cache/dpgraph``.

    Returns
    -------
    pathlib.Path

    Examples
    --------
    >>> cache_dir().name
    'dpgraph'
    """
    base = os.environ.get("XDG_CACHE_HOME")
    root = Path(base) if base else Path.home() / ".cache"
    return root / "dpgraph"


def search_dirs() -> list[Path]:
    """Return the local directories searched for data files, in order.

    Returns
    -------
    list of pathlib.Path
        ``$DPGRAPH_DATA_DIR`` (if set) then :func:`cache_dir`.

    Examples
    --------
    >>> search_dirs()[-1] == cache_dir()
    True
    """
    dirs = []
    env = os.environ.get("DPGRAPH_DATA_DIR")
    if env:
        dirs.append(Path(env).expanduser())
    dirs.append(cache_dir())
    return dirs


def _info(name: str) -> DatasetInfo:
    if not isinstance(name, str):
        raise TypeError(f"name must be a str naming a dataset, got {type(name).__name__}")
    try:
        return REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(REGISTRY))
        raise ValueError(f"unknown dataset name {name!r}; known datasets: {known}") from None


def locate(name: str) -> Path | None:
    """Return the local path of a registered dataset, or None (no download, no hashing).

    Parameters
    ----------
    name : str
        A key of :data:`REGISTRY`.

    Returns
    -------
    pathlib.Path or None

    Examples
    --------
    >>> locate("facebook") is None or locate("facebook").name == "facebook_combined.txt.gz"
    True
    """
    info = _info(name)
    for d in search_dirs():
        p = d / info.filename
        if p.is_file():
            return p
    return None


def available(name: str) -> bool:
    """Tell whether a registered dataset is present locally (never downloads).

    Parameters
    ----------
    name : str
        A key of :data:`REGISTRY`, e.g. ``"facebook"`` or ``"movielens-100k"``.

    Returns
    -------
    bool

    Examples
    --------
    >>> isinstance(available("movielens-100k"), bool)
    True
    """
    return locate(name) is not None


# --------------------------------------------------------------------------- checksums


def _sha256_of(path: Path, uncompressed: bool) -> str:
    h = hashlib.sha256()
    opener = gzip.open if uncompressed else open
    with opener(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _verify(path: Path, info: DatasetInfo) -> None:
    try:
        digest = _sha256_of(path, info.checksum_of == "uncompressed")
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise ValueError(
            f"dataset file {path} could not be read ({type(exc).__name__}); "
            f"replace it with a fresh copy of {info.url}"
        ) from None
    if digest != info.sha256:
        what = "decompressed content" if info.checksum_of == "uncompressed" else "file"
        raise ValueError(
            f"dataset file {path} does not match the published checksum "
            f"(sha256 of the {what} is {digest}, expected {info.sha256}); "
            f"replace it with a fresh copy of {info.url}"
        )


def _not_found_message(info: DatasetInfo, reason: str) -> str:
    dirs = " or ".join(str(d) for d in search_dirs())
    how = f"the file {info.filename!r}"
    if info.archive_member:
        how += f" (the member {info.archive_member} of {info.url}, gzip-compressed)"
    else:
        how += f" (from {info.url})"
    return (
        f"dataset {info.name!r} is not available locally and could not be downloaded "
        f"({reason}). Put {how} into {dirs}, or set DPGRAPH_DATA_DIR to the folder "
        f"that holds it."
    )


def _download(info: DatasetInfo, url: str, timeout: float) -> Path:
    target_dir = cache_dir()
    try:
        target_dir.mkdir(parents=True, exist_ok=True)
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            payload = resp.read()
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise DatasetNotFoundError(_not_found_message(info, f"download failed: {reason}")) from None
    if info.archive_member:
        try:
            with zipfile.ZipFile(io.BytesIO(payload)) as zf:
                member = zf.read(info.archive_member)
        except (zipfile.BadZipFile, KeyError) as exc:
            raise DatasetNotFoundError(
                _not_found_message(info, f"downloaded archive is unusable: {exc}")
            ) from None
        payload = gzip.compress(member, mtime=0)
    fd, tmp = tempfile.mkstemp(dir=target_dir, prefix=".download-", suffix=info.filename)
    tmp_path = Path(tmp)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
        _verify(tmp_path, info)
        final = target_dir / info.filename
        shutil.move(str(tmp_path), final)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()
    return final


def fetch(name: str, *, download: bool = True, verify: bool = True, timeout: float = 60.0) -> Path:
    """Return the local path of a registered dataset, downloading it if needed.

    Parameters
    ----------
    name : str
        A key of :data:`REGISTRY`.
    download : bool, default True
        Try the publisher's address when the file is not found locally.
    verify : bool, default True
        Check the file against its published SHA-256.
    timeout : float, default 60
        Download timeout in seconds.

    Returns
    -------
    pathlib.Path
        Path of the verified file.

    Raises
    ------
    ValueError
        Unknown ``name``, or a local file that fails its checksum.
    DatasetNotFoundError
        Not present locally and not downloadable; the message says where to put it.

    Examples
    --------
    >>> p = fetch("facebook", download=False) if available("facebook") else None
    >>> p is None or p.name == "facebook_combined.txt.gz"
    True
    """
    info = _info(name)
    path = locate(name)
    if path is None:
        if not download:
            raise DatasetNotFoundError(_not_found_message(info, "download=False"))
        path = _download(info, info.url, timeout)  # _download always verifies
        return path
    if verify:
        _verify(path, info)
    return path


# --------------------------------------------------------------------------- parsing

_WS = np.zeros(256, dtype=bool)
_WS[[9, 10, 11, 12, 13, 32]] = True  # exactly the bytes that bytes.split() splits on


def _read_bytes(path: Path) -> bytes:
    with open(path, "rb") as f:
        head = f.read(2)
    try:
        if head == b"\x1f\x8b":
            with gzip.open(path, "rb") as f:
                return f.read()
        return path.read_bytes()
    except (OSError, EOFError) as exc:
        raise ValueError(f"could not read {path}: {type(exc).__name__}") from None


def _parse_int_table(
    data: bytes, ncols: int | tuple[int, ...], source: str, comments: bytes = b"#%"
) -> tuple[np.ndarray, np.ndarray]:
    """Parse whitespace-separated integer columns, vectorized.

    Comment lines (first byte in ``comments``) and blank lines are skipped.
    Returns ``(table, line_numbers)`` with 1-based line numbers of the rows.
    Errors name the line, never its content.  When ``ncols`` is a tuple, any
    listed count is accepted and only the first ``min(ncols)`` columns are kept.
    """
    allowed = (ncols,) if isinstance(ncols, int) else tuple(ncols)
    keep_cols = min(allowed)
    if not data:
        return np.empty((0, keep_cols), dtype=np.int64), np.empty(0, dtype=np.int64)
    arr = np.frombuffer(data, dtype=np.uint8)
    nl = arr == 10
    line_of = np.cumsum(nl) - nl  # 0-based line index of every byte
    n_lines = int(line_of[-1]) + 1
    line_starts = np.flatnonzero(np.concatenate(([True], nl[:-1])))
    first = arr[line_starts]
    is_comment = np.isin(first, np.frombuffer(comments, dtype=np.uint8))
    ws = _WS[arr]
    tok = ~ws
    starts = np.flatnonzero(tok & ~np.concatenate(([False], tok[:-1])))
    start_line = line_of[starts]
    counts = np.bincount(start_line, minlength=n_lines)
    data_line = (~is_comment) & (counts > 0)
    bad = data_line & ~np.isin(counts, allowed)
    if bad.any():
        ln = int(np.flatnonzero(bad)[0])
        want = " or ".join(str(c) for c in allowed)
        raise ValueError(
            f"{source}, line {ln + 1}: expected {want} whitespace-separated columns, "
            f"found {int(counts[ln])}"
        )
    if is_comment.any():
        keep_byte = ~is_comment[line_of]
        body = arr[keep_byte].tobytes()
        token_lines = start_line[~is_comment[start_line]]
    else:
        body = data
        token_lines = start_line
    tokens = np.array(body.split())
    if tokens.size == 0:
        return np.empty((0, keep_cols), dtype=np.int64), np.empty(0, dtype=np.int64)
    try:
        values = tokens.astype(np.int64)
    except (ValueError, OverflowError):
        stripped = np.char.lstrip(tokens, b"+-")
        ok = np.char.isdigit(stripped) & (np.char.str_len(stripped) <= 18)
        idx = int(np.flatnonzero(~ok)[0]) if (~ok).any() else 0
        raise ValueError(
            f"{source}, line {int(token_lines[idx]) + 1}: expected an integer in every column"
        ) from None
    row_lines = np.flatnonzero(data_line)
    row_counts = counts[row_lines]
    if np.all(row_counts == keep_cols):
        table = values.reshape(-1, keep_cols)
    else:  # ragged but allowed widths: keep the first keep_cols columns of each row
        offsets = np.concatenate(([0], np.cumsum(row_counts)[:-1]))
        table = values[offsets[:, None] + np.arange(keep_cols)]
    return table, row_lines + 1


def _resolve_source(path_or_name: Any, arg: str) -> tuple[Path, str]:
    if isinstance(path_or_name, str) and path_or_name in REGISTRY:
        return fetch(path_or_name), path_or_name
    if not isinstance(path_or_name, (str, os.PathLike)):
        raise TypeError(
            f"{arg} must be a registered dataset name or a file path, "
            f"got {type(path_or_name).__name__}"
        )
    path = Path(path_or_name).expanduser()
    if not path.is_file():
        known = ", ".join(sorted(REGISTRY))
        raise ValueError(
            f"{arg}: no such file {str(path)!r} and not a registered dataset name ({known}); "
            "pass an existing path"
        )
    return path, path.name


# --------------------------------------------------------------------------- graphs


def snap_edgelist(
    path_or_name: PathLike, directed: bool = False, self_loops: str = "error"
) -> Any:
    """Load a SNAP-style edge list (one ``u v`` pair of integer ids per line).

    Lines starting with ``#`` or ``%`` are comments; gzip files are detected by
    their magic bytes.  Extra columns (weights, timestamps) are accepted when
    every data line has 2 or 3 columns and ignored.

    Parameters
    ----------
    path_or_name : str or os.PathLike
        A file path or a registered dataset name (e.g. ``"facebook"``).
    directed : bool, default False
        Return a ``networkx.DiGraph`` instead of a ``networkx.Graph``.
    self_loops : {"error", "drop"}, default "error"
        What to do with ``u u`` lines.  dpgraph's release refuses graphs with
        self-loops, so the default reports them (by line number).

    Returns
    -------
    networkx.Graph or networkx.DiGraph
        Integer node ids; duplicate edges are merged.

    Raises
    ------
    ValueError
        Missing file, a line without 2 (or 3) integer columns, negative ids, or
        a self-loop with ``self_loops="error"``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "g.txt").write_text("# toy\\n0 1\\n1 2\\n")
    >>> G = snap_edgelist(d / "g.txt")
    >>> G.number_of_nodes(), G.number_of_edges()
    (3, 2)
    """
    import networkx as nx

    if self_loops not in ("error", "drop"):
        raise ValueError(f"self_loops must be 'error' or 'drop', got {self_loops!r}")
    if not isinstance(directed, (bool, np.bool_)):
        raise TypeError(f"directed must be a bool, got {type(directed).__name__}")
    path, label = _resolve_source(path_or_name, "path_or_name")
    table, lines = _parse_int_table(_read_bytes(path), (2, 3), label)
    edges = table[:, :2]
    if (edges < 0).any():
        ln = int(lines[np.flatnonzero((edges < 0).any(axis=1))[0]])
        raise ValueError(f"{label}, line {ln}: node ids must be non-negative integers")
    loops = edges[:, 0] == edges[:, 1]
    if loops.any():
        if self_loops == "error":
            ln = int(lines[np.flatnonzero(loops)[0]])
            raise ValueError(
                f"{label}, line {ln}: self-loop; pass self_loops='drop' to discard self-loops"
            )
        edges = edges[~loops]
    G = nx.DiGraph() if directed else nx.Graph()
    G.add_nodes_from(np.unique(edges).tolist())
    G.add_edges_from(edges.tolist())
    return G


def facebook() -> Any:
    """Load SNAP ego-Facebook as an undirected ``networkx.Graph``.

    4039 nodes (ids 0..4038), 88234 edges; the file is checked against its
    published SHA-256.  Cite McAuley & Leskovec, "Learning to Discover Social
    Circles in Ego Networks", NIPS 2012.

    Returns
    -------
    networkx.Graph

    Raises
    ------
    DatasetNotFoundError
        The file is not present and cannot be downloaded.

    Examples
    --------
    >>> G = facebook()  # doctest: +SKIP
    >>> G.number_of_nodes(), G.number_of_edges()  # doctest: +SKIP
    (4039, 88234)
    """
    G = snap_edgelist("facebook")
    G.graph["name"] = "SNAP ego-Facebook"
    return G


def email_eu_core(departments: bool = False) -> Any:
    """Load SNAP email-Eu-core as an undirected ``networkx.Graph``.

    1005 nodes (ids 0..1004, every node of the department file, isolated ones
    included); the directed e-mails become undirected edges and self-loops are
    dropped (16064 edges).  Cite Leskovec, Kleinberg & Faloutsos, "Graph
    evolution: densification and shrinking diameters", TKDD 2007, and Yin,
    Benson, Leskovec & Gleich, "Local higher-order graph clustering", KDD 2017.

    Parameters
    ----------
    departments : bool, default False
        Also return the ground-truth department of every node.

    Returns
    -------
    networkx.Graph, or (networkx.Graph, dict)
        The graph; with ``departments=True`` also ``{node: department}``.

    Raises
    ------
    DatasetNotFoundError
        A file is not present and cannot be downloaded.

    Examples
    --------
    >>> G, dep = email_eu_core(departments=True)  # doctest: +SKIP
    >>> G.number_of_nodes(), len(set(dep.values()))  # doctest: +SKIP
    (1005, 42)
    """
    import networkx as nx

    D = snap_edgelist("email-eu-core", self_loops="drop")
    path, label = _resolve_source("email-eu-core-departments", "departments")
    table, _ = _parse_int_table(_read_bytes(path), (2,), label)
    G = nx.Graph(name="SNAP email-Eu-core (undirected)")
    G.add_nodes_from(sorted(set(table[:, 0].tolist()) | set(D.nodes())))
    G.add_edges_from(D.edges())
    if not departments:
        return G
    return G, {int(u): int(d) for u, d in table.tolist()}


# --------------------------------------------------------------------------- ratings


@dataclasses.dataclass(frozen=True, repr=False)
class Ratings:
    """A table of ratings, one row per rating (column arrays of equal length).

    Attributes
    ----------
    user, item, rating, timestamp : numpy.ndarray
        ``int64`` arrays; ``rating`` takes values in ``1..max_rating``.
    max_rating : int
        Size of the rating scale (5 for MovieLens).
    """

    user: np.ndarray
    item: np.ndarray
    rating: np.ndarray
    timestamp: np.ndarray
    max_rating: int = 5

    def __len__(self) -> int:
        return int(self.rating.shape[0])

    def __repr__(self) -> str:  # summary only, never the rows
        return (
            f"Ratings(n={len(self)}, users={np.unique(self.user).size}, "
            f"items={np.unique(self.item).size}, scale=1..{self.max_rating})"
        )

    def subset(self, mask_or_index: np.ndarray) -> Ratings:
        """Return the rows selected by a boolean mask or an index array.

        Examples
        --------
        >>> r = Ratings(np.array([1, 2]), np.array([5, 6]), np.array([3, 4]), np.array([0, 0]))
        >>> len(r.subset(r.rating > 3))
        1
        """
        return Ratings(
            self.user[mask_or_index],
            self.item[mask_or_index],
            self.rating[mask_or_index],
            self.timestamp[mask_or_index],
            self.max_rating,
        )


def read_ratings(path: PathLike, max_rating: int = 5) -> Ratings:
    """Read a MovieLens-style ratings file: ``user item rating timestamp`` per line.

    Parameters
    ----------
    path : str or os.PathLike
        Plain or gzip-compressed, tab or space separated.
    max_rating : int, default 5
        Ratings must be integers in ``1..max_rating``.

    Returns
    -------
    Ratings

    Raises
    ------
    ValueError
        Missing file, a line without exactly 4 integer columns, or a rating
        outside ``1..max_rating``; the message gives the line number.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "u.data"
    >>> _ = p.write_text("1\\t10\\t5\\t0\\n2\\t10\\t3\\t0\\n")
    >>> r = read_ratings(p)
    >>> r.rating.tolist()
    [5, 3]
    """
    if isinstance(max_rating, (bool, np.bool_)) or not isinstance(max_rating, (int, np.integer)):
        raise TypeError(f"max_rating must be an int, got {type(max_rating).__name__}")
    if max_rating < 2:
        raise ValueError(f"max_rating must be >= 2, got {max_rating}")
    path, label = _resolve_source(path, "path")
    table, lines = _parse_int_table(_read_bytes(path), 4, label)
    if table.shape[0] == 0:
        raise ValueError(f"{label}: no ratings found; expected 'user item rating timestamp' lines")
    rating = table[:, 2]
    bad = (rating < 1) | (rating > max_rating)
    if bad.any():
        ln = int(lines[np.flatnonzero(bad)[0]])
        raise ValueError(
            f"{label}, line {ln}: rating outside the universe 1..{max_rating}"
        )
    return Ratings(
        user=np.ascontiguousarray(table[:, 0]),
        item=np.ascontiguousarray(table[:, 1]),
        rating=np.ascontiguousarray(rating),
        timestamp=np.ascontiguousarray(table[:, 3]),
        max_rating=int(max_rating),
    )


def movielens_100k() -> Ratings:
    """Load the MovieLens 100K ratings (``u.data``), checksum-verified.

    100000 ratings 1..5 by 943 users of 1682 movies.  In dpgraph's
    statistical-query experiments these ratings stand in for the paper's
    Netflix ratings, which are not available.  The MovieLens licence forbids
    redistribution: dpgraph never ships the file.

    Returns
    -------
    Ratings

    Raises
    ------
    DatasetNotFoundError
        The file is not present and cannot be downloaded.

    Examples
    --------
    >>> if available("movielens-100k"):
    ...     r = movielens_100k()
    ...     assert len(r) == 100000 and set(r.rating.tolist()) == {1, 2, 3, 4, 5}
    """
    return read_ratings(fetch("movielens-100k"), max_rating=5)
