"""Saving and loading PrivateGraph files: a small, versioned, self-checking format.

Layout (all integers little-endian; see docs/file-format.md)::

    offset  size  field
    0       8     magic  b"\\x89DPGRAPH"  (the high byte catches 7-bit transfers)
    8       4     format version, uint32 (currently 1)
    12      8     header length H, uint64
    20      H     header: UTF-8 JSON object (public metadata only)
    20+H    P     payload: the released bits, laid out as the header's "kind" says
    20+H+P  32    SHA-256 of bytes [0, 20+H+P)

Loading never executes code (no pickle): it parses JSON and copies raw words.
It refuses, with a ValueError that says why, files that are foreign (bad
magic), of another format version, truncated or padded, whose digest does not
match (a flipped bit anywhere), or whose header is inconsistent (sizes, node
count, flip probability not certified for the stated epsilon, bits set outside
the rows of the database).  The digest detects accidents, not forgery: anyone
can recompute it.  Sign or MAC the file if you need authenticity.

Node labels are stored as JSON: int, str, float (finite), bool, None and
tuples of those round-trip exactly (tuples are stored as JSON lists and come
back as tuples); other label types are refused at save time with a TypeError.
numpy integer and float labels are saved as Python int and float.

Only public metadata is written: the vertex set, epsilon, the exact flip
numerator, the released bits.  Nothing about the input graph beyond what the
release itself is.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import struct
import sys
import tempfile
from pathlib import Path
from typing import Any, Union

import numpy as np

__all__ = ["IOMixin", "load", "MAGIC", "FORMAT_VERSION"]

PathLike = Union[str, "os.PathLike[str]"]

MAGIC = b"\x89DPGRAPH"
FORMAT_VERSION = 1
_PREFIX = struct.Struct("<8sIQ")  # magic, version, header length
_DIGEST = 32
_MAX_HEADER = 1 << 31  # a header is JSON metadata; anything larger is not ours


# --------------------------------------------------------------------------- labels
_SCALARS = (bool, int, str, type(None))


def _label_to_json(v: Any) -> Any:
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, _SCALARS):
        return v
    if isinstance(v, float):
        if not math.isfinite(v):
            raise TypeError("nodes: non-finite float labels cannot be saved; relabel the graph")
        return v
    if isinstance(v, tuple):
        return [_label_to_json(x) for x in v]
    raise TypeError(
        f"nodes: labels of type {type(v).__name__} cannot be saved; supported are int, str, "
        "float, bool, None and tuples of those (relabel, e.g. nx.convert_node_labels_to_integers)"
    )


def _label_from_json(v: Any) -> Any:
    if isinstance(v, list):
        return tuple(_label_from_json(x) for x in v)
    if isinstance(v, (dict,)):
        raise ValueError("file header: a node label is a JSON object, which save never writes")
    return v


def _is_number(x: Any) -> bool:
    return type(x) in (int, float)


def _reject_constant(token: str) -> Any:
    raise ValueError(f"file header contains {token}, which save never writes")


# --------------------------------------------------------------------------- kinds
def _packed_payload(adj: Any) -> tuple[dict, np.ndarray]:
    words = np.ascontiguousarray(adj.words)
    if sys.byteorder != "little":  # pragma: no cover - big-endian hosts
        words = words.byteswap()
    meta = {"words_per_row": int(words.shape[1]), "word_bits": 64, "bit_order": "lsb0"}
    return meta, words


def _packed_read(buf: np.ndarray, header: dict, n: int, directed: bool) -> Any:
    from .packed import PackedAdjacency, has_non_pair_bits, words_per_row

    nw = words_per_row(n)
    if header.get("words_per_row") != nw or header.get("word_bits") != 64 \
            or header.get("bit_order") != "lsb0":
        raise ValueError("file header: packed layout fields do not match n; the file is corrupted")
    if buf.nbytes != n * nw * 8:
        raise ValueError("file header: payload size does not match n; the file is corrupted")
    words = buf.view("<u8").reshape(n, nw).astype(np.uint64, copy=False)
    if has_non_pair_bits(words, n, directed):
        raise ValueError("file has bits set outside the vertex pairs of its graph; it is corrupted")
    return PackedAdjacency(words, n, directed)


#: kind -> (writer, reader) of the payload.
KINDS: dict[str, tuple[Any, Any]] = {"packed": (_packed_payload, _packed_read)}

from .sparse_io import sparse_payload, sparse_read  # noqa: E402  (sparse_io uses the helpers above)

KINDS["sparse"] = (sparse_payload, sparse_read)


def _kind_of(adj: Any) -> str:
    kind = adj.file_kind
    if kind in KINDS:
        return kind
    raise TypeError(f"saving a {type(adj).__name__} adjacency is not supported by this version")


# --------------------------------------------------------------------------- save
class IOMixin:
    """PrivateGraph methods for files: ``save``."""

    def save(self, path: PathLike) -> None:
        """Write the release to ``path`` in dpgraph's versioned binary format.

        The file holds public metadata and the released bits only, ends with a
        SHA-256 of everything before it, and is written atomically (a
        temporary file renamed into place).  Read it back with
        :func:`dpgraph.load`.  The format is described in docs/file-format.md.

        Parameters
        ----------
        path : str or os.PathLike
            Destination file; overwritten if it exists.

        Raises
        ------
        TypeError
            If ``path`` is not a path, or a node label has a type the format
            cannot store (see the module docstring).

        Examples
        --------
        >>> import networkx as nx, dpgraph, tempfile, os
        >>> R = dpgraph.release(nx.karate_club_graph(), epsilon=1.0, seed=0)
        >>> path = os.path.join(tempfile.mkdtemp(), "karate.dpg")
        >>> R.save(path)
        >>> from dpgraph.graph.io import load      # exported as dpgraph.load
        >>> R2 = load(path)
        >>> R2.number_of_edges() == R.number_of_edges(), R2.flip_probability == R.flip_probability
        (True, True)
        """
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
        path = Path(path)
        kind = _kind_of(self._adj)
        meta, payload = KINDS[kind][0](self._adj)
        rr = self.probabilities
        plain = type(self.channel).randomized_response(rr)
        default_channel = float(self.channel.d) == float(plain.d) and np.array_equal(
            self.channel.r, plain.r)
        header = {
            "format": "dpgraph",
            "version": FORMAT_VERSION,
            "kind": kind,
            "n": self.number_of_nodes(),
            "directed": bool(self.directed),
            "epsilon": float(self.epsilon),
            "flip_numerator": str(int(rr.move_numerator)),
            "flip_bits": int(rr.bits),
            "flip_probability": float(rr.move_probability),
            "keep": float(self.keep),
            "channel": None if default_channel else {
                "d": float(self.channel.d), "r": [float(x) for x in self.channel.r]},
            "nodes": [_label_to_json(v) for v in self.nodes],
            "payload_bytes": int(payload.nbytes),
            **meta,
        }
        head = json.dumps(header, separators=(",", ":"), allow_nan=False).encode("utf-8")
        prefix = _PREFIX.pack(MAGIC, FORMAT_VERSION, len(head))
        digest = hashlib.sha256()
        fd, tmp = tempfile.mkstemp(prefix=".dpgraph-", dir=path.parent if str(path.parent) else ".")
        try:
            with os.fdopen(fd, "wb") as fh:
                for part in (prefix, head, memoryview(payload).cast("B")):
                    digest.update(part)
                    fh.write(part)
                fh.write(digest.digest())
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise


# --------------------------------------------------------------------------- load
def load(path: PathLike) -> Any:
    """Read a PrivateGraph written by :meth:`PrivateGraph.save`.

    Never executes code from the file.  Checks the magic bytes, the format
    version, the sizes, the SHA-256 digest, the header fields, that the flip
    probability is certified epsilon-DP, and that no bit lies outside the
    vertex pairs of the graph.

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    PrivateGraph

    Raises
    ------
    ValueError
        For a foreign, truncated, corrupted or version-mismatched file; the
        message says which check failed.
    FileNotFoundError
        If ``path`` does not exist.

    Examples
    --------
    >>> import networkx as nx, dpgraph, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "p.dpg")
    >>> dpgraph.release(nx.path_graph(5), epsilon=2.0, seed=1).save(path)
    >>> R = load(path)
    >>> R.nodes, R.epsilon
    ((0, 1, 2, 3, 4), 2.0)
    """
    from ..core.estimators import Channel
    from ..core.probabilities import RRProbabilities
    from .encoding import NodeIndex
    from .private import PrivateGraph

    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
    path = Path(path)
    size = path.stat().st_size
    with open(path, "rb") as fh:
        raw = fh.read(_PREFIX.size)
        if len(raw) < _PREFIX.size or raw[:8] != MAGIC:
            raise ValueError(f"{path.name} is not a dpgraph file (bad magic bytes)")
        _, version, hlen = _PREFIX.unpack(raw)
        if version != FORMAT_VERSION:
            raise ValueError(
                f"{path.name} uses dpgraph file format version {version}; this dpgraph reads "
                f"version {FORMAT_VERSION}. Use a matching dpgraph version"
            )
        if hlen > _MAX_HEADER or _PREFIX.size + hlen + _DIGEST > size:
            raise ValueError(f"{path.name} is truncated or corrupted (header length exceeds file)")
        head = fh.read(hlen)
        try:
            header = json.loads(head.decode("utf-8"), parse_constant=_reject_constant)
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise ValueError(f"{path.name}: header is not valid JSON; the file is corrupted") from None
        if not isinstance(header, dict) or header.get("format") != "dpgraph" \
                or type(header.get("version")) is not int or header.get("version") != FORMAT_VERSION:
            raise ValueError(f"{path.name}: header does not describe a dpgraph v{FORMAT_VERSION} file")
        payload = header.get("payload_bytes")
        if type(payload) is not int or payload < 0 \
                or _PREFIX.size + hlen + payload + _DIGEST != size:
            raise ValueError(f"{path.name} is truncated or padded: its size does not match its header")
        # digest first, over the bytes as stored, before trusting any field
        digest = hashlib.sha256()
        digest.update(raw)
        digest.update(head)
        buf = np.empty(payload, dtype=np.uint8)
        view = memoryview(buf)
        for start in range(0, payload, 1 << 24):
            part = view[start : start + (1 << 24)]
            if fh.readinto(part) != len(part):
                raise ValueError(f"{path.name} is truncated")
            digest.update(part)
        if fh.read(_DIGEST) != digest.digest():
            raise ValueError(
                f"{path.name} failed its SHA-256 integrity check: the file is corrupted"
            )
        kind = header.get("kind")
        if kind not in KINDS:
            raise ValueError(f"{path.name}: unknown payload kind {kind!r}; a newer dpgraph may read it")
        n, directed = header.get("n"), header.get("directed")
        nodes = header.get("nodes")
        if not (type(n) is int and n >= 2 and isinstance(directed, bool)
                and isinstance(nodes, list) and len(nodes) == n):
            raise ValueError(f"{path.name}: header fields n/directed/nodes are inconsistent")
        eps_raw, keep_raw, num_raw = header.get("epsilon"), header.get("keep", 1.0), header.get("flip_numerator")
        if not (_is_number(eps_raw) and _is_number(keep_raw) and isinstance(num_raw, str)
                and num_raw.isdigit()):
            raise ValueError(f"{path.name}: header lacks a valid epsilon, keep or flip numerator")
        numerator, epsilon, keep = int(num_raw), float(eps_raw), float(keep_raw)
        if header.get("flip_bits") != 64 or type(header.get("flip_bits")) is not int \
                or not 0 < numerator < 1 << 63 or not (0 < epsilon < math.inf) or not 0 < keep <= 1:
            raise ValueError(f"{path.name}: epsilon, keep or flip probability out of range")
        rr = RRProbabilities(K=2, epsilon=epsilon, move_numerator=numerator)
        if not rr.certify():
            raise ValueError(
                f"{path.name}: its flip probability is not certified {epsilon}-DP; refusing it"
            )
        ch = header.get("channel")
        channel = None
        if ch is not None:
            try:
                channel = Channel(float(ch["d"]), np.asarray(ch["r"], dtype=float))
            except (KeyError, TypeError, ValueError):
                raise ValueError(f"{path.name}: channel field is malformed") from None
        labels = [_label_from_json(v) for v in nodes]
        try:
            index = NodeIndex(labels)
        except (TypeError, ValueError):
            raise ValueError(f"{path.name}: node labels are not distinct") from None
        adj = KINDS[kind][1](buf, header, n, directed)
    return PrivateGraph(adj, index, rr, channel=channel, keep=keep)
