"""Saving and loading PrivateGraph files: a small, versioned, self-checking format.

Layout (all integers little-endian; see docs/file-format.md)::

    offset  size  field
    0       8     magic  b"\\x89DPGRAPH"  (the high byte catches 7-bit transfers)
    8       4     format version, uint32 (currently 2)
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
can recompute it.  A signed file (``save(path, signing_key=...)``) appends an
Ed25519 signature of the digest (64 bytes, after the digest; the header says
``"signature": "ed25519"`` and names the signer's public key), and
``load(path, verify_key=...)`` accepts only a file signed by that key.

Nothing the estimators use is taken from the header as given: the flip
probability, the channel (d, r) and keep are derived from the certified
integer numerators, and a header whose epsilon, flip_probability, keep or
channel disagree with them is refused.  The header is parsed only after its
size is checked against what the declared n needs, with limits on nesting
depth, number length and what parsing would build (a scan before it, see
:mod:`dpgraph._safejson`).

Node labels are stored as JSON: int, str, float (finite), bool, None and
tuples of those round-trip exactly (tuples are stored as JSON lists and come
back as tuples); other label types are refused at save time with a TypeError.
numpy integer and float labels are saved as Python int and float.

Only public metadata is written: the vertex set, epsilon, the exact flip
numerator, the released bits.  Nothing about the input graph beyond what the
release itself is.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import math
import os
import re
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple, Union

import numpy as np

from .._files import check_regular_file, refuse_overwrite, remove_leftovers, write_atomic
from ..core import kept_response
from . import kinds as _kinds
from .degree_channel import degree_header, degree_read
from .edgelist import may_be_secret, shown_path
from .typed.typed_io import header_tie_values

__all__ = ["FORMAT_VERSION", "MAGIC", "IOMixin", "ReleaseParts", "check_savable", "current_folder",
           "file_folder", "read_release", "release_type"]

PathLike = Union[str, "os.PathLike[str]"]

MAGIC = b"\x89DPGRAPH"
FORMAT_VERSION = 2
_PREFIX = struct.Struct("<8sIQ")  # magic, version, header length
_DIGEST = 32
#: a header is the fixed fields plus the node labels: at most this many bytes plus
#: _LABEL_BYTES per declared node (save refuses labels longer on average)
_FIXED_HEADER = 64 << 10
_LABEL_BYTES = 1024
#: every header starts with these fields in this order (JSON whitespace allowed)
_HEAD_START = re.compile(
    rb'\{\s*"format"\s*:\s*"dpgraph"\s*,\s*"version"\s*:\s*2\s*,\s*"kind"\s*:\s*'
    rb'"([a-z]{1,16})"\s*,\s*"n"\s*:\s*([0-9]{1,12})\s*,')


def header_limit(n: int) -> int:
    """Largest header (bytes) a file of ``n`` nodes may have."""
    return _FIXED_HEADER + _LABEL_BYTES * int(n)


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


# --------------------------------------------------------------------------- kinds
#: the folder of the file being saved or read, while its payload is written or read
_FOLDER: contextvars.ContextVar[Path | None] = contextvars.ContextVar("dpg_folder", default=None)


@contextlib.contextmanager
def file_folder(folder: Path) -> Iterator[None]:
    """While a file in ``folder`` is saved or read (a payload naming a path resolves it here)."""
    token = _FOLDER.set(Path(folder))
    try:
        yield
    finally:
        _FOLDER.reset(token)


def current_folder() -> Path:
    """The folder of the file whose payload is being written or read (else the working one)."""
    folder = _FOLDER.get()
    return Path(".") if folder is None else folder


def release_type(adjacency: Any, default: Any) -> Any:
    """The class a loaded release of this adjacency's kind is (``default`` unless its row says)."""
    row = _kinds.by_file_kind(getattr(adjacency, "file_kind", None))
    return default if row is None or row.release_type is None else row.release_type


def _payload(kind: Any) -> tuple[Any, Any] | None:
    """(writer, reader) of a file kind: its row's payload (None: no row writes this kind)."""
    row = _kinds.by_file_kind(kind)
    return None if row is None else row.payload


def _kind_of(adj: Any) -> str:
    kind = adj.file_kind
    if _payload(kind) is not None:
        return kind
    raise TypeError(f"saving a {type(adj).__name__} adjacency is not supported by this version")


# --------------------------------------------------------------------------- save
class IOMixin:
    """PrivateGraph methods for files: ``save``."""

    def save(self, path: PathLike, *, signing_key: Any = None, name: str | None = None) -> None:
        """Write the release to ``path`` in dpgraph's versioned binary format.

        The file holds public metadata and the released bits only, ends with a
        SHA-256 of everything before it, and is written atomically (a
        temporary file renamed into place).  Read it back with
        :func:`dpgraph.load`.  The format is described in docs/file-format.md.

        Parameters
        ----------
        path : str or os.PathLike
            Destination file; overwritten if it exists.
        signing_key : Ed25519PrivateKey, bytes, str or os.PathLike, optional
            The curator's Ed25519 key: the object, its raw 64 bytes (see
            :func:`dpgraph.generate_signing_key`), or the path of the
            ``PREFIX.key`` file of ``dpgraph keygen``.  Appends a signature so
            that ``dpgraph.load(path, verify_key=...)`` can check the file is
            the curator's and unaltered.
        name : str, optional
            The data set's public name (e.g. "SNAP ego-Facebook"), kept in the
            file as public metadata: the title of ``dpgraph report``.  Default:
            the release's own ``name``, if any.

        Raises
        ------
        TypeError
            If ``path`` or ``signing_key`` has the wrong type, or a node label
            has a type the format cannot store (see the module docstring).
        ValueError
            If the node labels average more than 1 KiB of JSON each.

        Examples
        --------
        >>> import networkx as nx, dpgraph, tempfile, os
        >>> R = dpgraph.release(nx.karate_club_graph(), epsilon=1.0, seed=0)
        >>> path = os.path.join(tempfile.mkdtemp(), "karate.dpg")
        >>> sk, vk = dpgraph.generate_signing_key()
        >>> R.save(path, signing_key=sk)
        >>> R2 = dpgraph.load(path, verify_key=vk)
        >>> R2.number_of_released_edges() == R.number_of_released_edges(), R2.flip_probability == R.flip_probability
        (True, True)
        """
        from . import signing

        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
        sk = None if signing_key is None else signing.signing_key(signing_key)
        name = check_name(getattr(self, "name", None) if name is None else name, "name")
        path = Path(path)
        kind = _kind_of(self.adjacency)
        with file_folder(path.parent):  # a store pointer's path is relative to it
            meta, payload = _payload(kind)[0](self.adjacency)
        dc = getattr(self, "degree_channel", None)
        degrees = None if dc is None else np.ascontiguousarray(dc.noisy, dtype="<i8")
        rr = self.probabilities
        plain = type(self.channel).randomized_response(rr)
        default_channel = float(self.channel.d) == float(plain.d) and np.array_equal(
            self.channel.r, plain.r)
        n = self.number_of_nodes()
        header = {
            "format": "dpgraph",
            "version": FORMAT_VERSION,
            "kind": kind,
            "n": n,
            "directed": bool(self.directed),
            "epsilon": float(self.epsilon),
            "flip_numerator": str(int(rr.flip_numerator)),
            "flip_bits": int(rr.bits),
            "flip_probability": float(rr.flip_probability),
            "keep": float(self.keep),
            "channel": None if default_channel else {
                "d": float(self.channel.d), "r": [float(x) for x in self.channel.r]},
            "nodes": [_label_to_json(v) for v in self.nodes],
            "payload_bytes": int(payload.nbytes) + (0 if degrees is None else degrees.nbytes),
            **meta,
        }
        if name is not None:
            header["name"] = name
        if dc is not None:  # the noisy degrees follow the kind's payload
            header["degree_channel"] = degree_header(dc)
        ties = getattr(self, "tie_values", None)
        if ties is not None:  # the curator's declaration: public
            header["tie_values"] = {"edge_attr": _label_to_json(ties.edge_attr),
                                    "values": [_label_to_json(v) for v in ties.values],
                                    "bins": None if ties.bins is None else list(ties.bins)}
        if sk is not None:
            header["signature"] = "ed25519"
            header["signer"] = signing.public_hex(sk)
        head = json.dumps(header, separators=(",", ":"), allow_nan=False).encode("utf-8")
        if len(head) > header_limit(n):
            raise ValueError(_too_long(len(head)))
        prefix = _PREFIX.pack(MAGIC, FORMAT_VERSION, len(head))
        digest = hashlib.sha256()
        folder = path.parent if str(path.parent) else Path(".")
        # every refusal names the requested path, never the temporary file, and a "path" that
        # may be key text pasted in the wrong place by its length only
        shown = shown_path(path, quote=False)
        if may_be_secret(path):  # never write a file named after a key
            raise ValueError(f"cannot save to {shown}: it looks like key text or a record, not a "
                             "file name; pass the release file's path (e.g. 'release.dpg')")
        if not folder.is_dir():
            raise FileNotFoundError(f"cannot save to {shown}: its folder does not exist")
        if path.is_dir():
            raise ValueError(f"cannot save to {shown}: it is a folder; give a file name")
        key_file = signing_key if isinstance(signing_key, (str, os.PathLike)) else None
        refuse_overwrite(path, f"cannot save to {shown}: it", [("the signing_key file", key_file)])
        remove_leftovers(path, MAGIC)

        def parts() -> Iterator[Any]:
            tail = () if degrees is None else (memoryview(degrees).cast("B"),)
            for part in (prefix, head, memoryview(payload).cast("B"), *tail):
                digest.update(part)
                yield part
            yield digest.digest()
            if sk is not None:
                yield signing.sign_digest(sk, digest.digest())

        failed = None
        try:
            write_atomic(path, parts())
        except OSError as exc:
            failed = exc.strerror or type(exc).__name__
        if failed is not None:  # raised here: the error names the path, not the temporary file
            raise OSError(f"cannot save to {shown}: {failed}")


def _too_long(size: int) -> str:
    return (f"nodes: the labels take {size:,} bytes of header, more than {_LABEL_BYTES} bytes a "
            "node on average; relabel the graph with shorter labels")


#: the most the header's fields other than the labels take in a release without declared tie
#: values (a 200-character name escaped to 12 bytes a character, a signer, floats)
_OTHER_FIELDS = 8 << 10


def check_savable(nodes: Any, name: Any, name_flag: str = "name", *,
                  label_bytes: int | None = None) -> None:
    """Refuse, before a release is charged, what :meth:`IOMixin.save` would refuse after it.

    Parameters
    ----------
    nodes : int or sequence
        The public vertex set: a count (labels 0..n-1, which always fit) or the labels.
    name : str or None
        The data set's public name (one printable line of 1 to 200 characters).
    name_flag : str, default "name"
        How the messages name the name (``"--name"`` on the command line).
    label_bytes : int, optional
        An upper bound on the bytes of the labels as a JSON list, when the
        caller knows one without walking the labels (then they are not read).

    Raises
    ------
    TypeError
        A label of a type the format cannot store.
    ValueError
        A bad name, or labels that leave the header no room (checked with a margin for the
        other fields, so a release that passes is saved).
    """
    check_name(name, name_flag)
    if isinstance(nodes, (int, np.integer)):
        return
    if label_bytes is None:
        labels = [_label_to_json(v) for v in nodes]
        label_bytes = len(json.dumps(labels, separators=(",", ":"), allow_nan=False).encode())
    if label_bytes + _OTHER_FIELDS > header_limit(len(nodes)):
        raise ValueError(_too_long(label_bytes + _OTHER_FIELDS))


# --------------------------------------------------------------------------- load
class ReleaseParts(NamedTuple):
    """What a release file holds, checked: the arguments of a PrivateGraph."""

    adjacency: Any
    index: Any
    probabilities: Any
    channel: Any
    keep: float
    name: str | None = None
    tie_values: Any = None
    degree_channel: Any = None


def check_name(name: Any, where: str) -> str | None:
    """A release's public name: None, or one line of printable text up to 200 characters."""
    if name is None:
        return None
    if not isinstance(name, str) or not 0 < len(name) <= 200 or not name.isprintable():
        raise ValueError(f"{where} must be one line of printable text of 1 to 200 characters")
    return name


def read_release(path: PathLike, *, verify_key: Any = None) -> ReleaseParts:
    """Read and check a release file; :func:`dpgraph.load` builds the PrivateGraph.

    Every check of :func:`dpgraph.load` happens here (see its docstring; ``path``
    is declared there); the result holds nothing that the file did not certify.
    """
    from .. import _safejson
    from ..core.probabilities import rr_probabilities
    from . import signing
    from .edgelist import shown_path
    from .encoding import NodeIndex

    vk = None if verify_key is None else signing.verify_key(verify_key)
    path = Path(path)
    # a FIFO would block the open forever; a key's text given as the path is not repeated
    size = check_regular_file(path, shown_path(path, quote=False)).st_size
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
        if _PREFIX.size + hlen + _DIGEST > size:
            raise ValueError(f"{path.name} is truncated or corrupted (header length exceeds file)")
        # bound the header by what its declared n needs before reading or parsing it
        start = fh.read(min(hlen, 256))
        m = _HEAD_START.match(start)
        if m is None:
            raise ValueError(f"{path.name}: header does not describe a dpgraph v{FORMAT_VERSION} "
                             "file (it must start with format, version, kind and n)")
        if hlen > header_limit(int(m.group(2))):
            raise ValueError(
                f"{path.name}: header of {hlen:,} bytes is larger than {int(m.group(2)):,} nodes "
                f"need (at most {header_limit(int(m.group(2))):,}); the file is corrupted")
        head = start + fh.read(hlen - len(start))
        header = _safejson.loads(head, f"{path.name}: file header")
        if not isinstance(header, dict) or header.get("format") != "dpgraph" \
                or type(header.get("version")) is not int or header.get("version") != FORMAT_VERSION:
            raise ValueError(f"{path.name}: header does not describe a dpgraph v{FORMAT_VERSION} file")
        signed = header.get("signature", None)
        if signed not in (None, "ed25519"):
            raise ValueError(f"{path.name}: unknown signature scheme {signed!r}")
        trailer = _DIGEST + (signing.SIGNATURE_BYTES if signed else 0)
        payload = header.get("payload_bytes")
        if type(payload) is not int or payload < 0 \
                or _PREFIX.size + hlen + payload + trailer != size:
            raise ValueError(f"{path.name} is truncated or padded: its size does not match its header")
        # digest first, over the bytes as stored, before trusting any field
        digest = hashlib.sha256()
        digest.update(raw)
        digest.update(head)
        buf = np.empty(payload, dtype=np.uint8)
        view = memoryview(buf)
        for start_at in range(0, payload, 1 << 24):
            part = view[start_at : start_at + (1 << 24)]
            if fh.readinto(part) != len(part):
                raise ValueError(f"{path.name} is truncated")
            digest.update(part)
        if fh.read(_DIGEST) != digest.digest():
            raise ValueError(
                f"{path.name} failed its SHA-256 integrity check: the file is corrupted"
            )
        signature = fh.read(signing.SIGNATURE_BYTES) if signed else None
        if vk is not None:
            if signature is None:
                raise ValueError(f"{path.name} is not signed, but verify_key requires a signature")
            if header.get("signer") != signing.public_hex(vk) \
                    or not signing.check_signature(vk, digest.digest(), signature):
                raise ValueError(
                    f"{path.name}: signature check failed: the file was altered or signed by "
                    "another key than verify_key")
        kind = header.get("kind")
        row = _kinds.by_file_kind(kind)
        if row is None or row.payload is None:
            raise ValueError(f"{path.name}: unknown payload kind {kind!r}; a newer dpgraph may read it")
        n, directed = header.get("n"), header.get("directed")
        nodes = header.get("nodes")
        if not (type(n) is int and n >= 2 and isinstance(directed, bool)
                and isinstance(nodes, list) and len(nodes) == n):
            raise ValueError(f"{path.name}: header fields n/directed/nodes are inconsistent")
        eps_raw, num_raw = header.get("epsilon"), header.get("flip_numerator")
        if not _is_number(eps_raw):
            raise ValueError(f"{path.name}: header field epsilon must be a number; the file is "
                             "corrupted")
        if not (isinstance(num_raw, str) and num_raw.isascii() and num_raw.isdigit()
                and len(num_raw) <= 20):  # isdigit alone admits superscripts int() refuses
            raise ValueError(f"{path.name}: header field flip_numerator must be a decimal integer "
                             "of at most 20 digits 0-9 in a string; the file is corrupted")
        numerator, epsilon = int(num_raw), float(eps_raw)
        if header.get("flip_bits") != 64 or type(header.get("flip_bits")) is not int \
                or not 0 < numerator < 1 << 63 or not (0 < epsilon < math.inf):
            raise ValueError(f"{path.name}: epsilon or flip probability out of range")
        ties = header_tie_values(header, _label_from_json) if "typed" in row.capabilities else None
        if ties is None and "tie_values" in header:
            raise ValueError(f"{path.name}: tie_values in a file of kind {kind!r}; it is corrupted")
        K = 2 if ties is None else ties.K
        header["K"] = K
        # everything the estimators use derives from the certified numerators
        rr = rr_probabilities(epsilon, K)
        if rr.flip_numerator != numerator or not rr.certify():
            raise ValueError(
                f"{path.name}: its flip numerator is not the certified one of epsilon={epsilon}; "
                "refusing it"
            )
        if header.get("flip_probability") != float(rr.flip_probability):
            raise ValueError(f"{path.name}: header flip_probability disagrees with flip_numerator; "
                             "the file is corrupted")
        labels = [_label_from_json(v) for v in nodes]
        try:
            index = NodeIndex(labels)
        except (TypeError, ValueError):
            raise ValueError(f"{path.name}: node labels are not distinct") from None
        dc = None
        if "degree_channel" in header:
            try:
                dc, buf = degree_read(header, buf, kind, n, directed, epsilon)
            except ValueError as exc:
                raise ValueError(f"{path.name}: {exc}") from None
        try:
            with file_folder(path.parent):  # a store pointer's path is relative to it
                adj = row.payload[1](buf, header, n, directed)
        except ValueError as exc:
            raise ValueError(f"{path.name}: {exc}") from None
    channel, keep = _derived_channel(adj, rr)
    _check_claims(header, channel, keep, path.name)
    name = check_name(header.get("name"), f"{path.name}: header name")
    if ties is not None:  # PrivateGraph derives the same any-tie channel from the K-ary one
        return ReleaseParts(adj, index, rr, _typed_channel(adj, rr), keep, name, ties)
    return ReleaseParts(adj, index, rr, channel, keep, name, None, dc)


def _row_capabilities(adj: Any) -> frozenset[str]:
    """The capabilities of the adjacency's row."""
    row = _kinds.by_file_kind(adj.file_kind)
    return frozenset() if row is None else row.capabilities


def _derived_channel(adj: Any, rr: Any) -> tuple[Any, float]:
    """(channel, keep) of an adjacency, from its numerators alone (its row says which)."""
    from ..core.estimators import Channel

    caps = _row_capabilities(adj)
    if "typed" in caps:  # the any-tie collapse of K-ary randomized response, kept or not
        if "csr" not in caps:
            return Channel.randomized_response(rr).collapse(np.arange(rr.K) > 0), 1.0
        sub = kept_response(rr, int(adj.keep_numerator), typed=True)
        return sub.channel.collapse(np.arange(rr.K) > 0), sub.keep
    if "csr" not in caps or int(adj.keep_numerator) == 1 << 64:
        return Channel.randomized_response(rr), 1.0
    probs = kept_response(rr, int(adj.keep_numerator), typed=False)
    return probs.channel, float(probs.keep)


def _typed_channel(adj: Any, rr: Any) -> Any:
    """The K-ary channel of a sparse typed release (None for a dense one: plain K-ary)."""
    if {"typed", "csr"} - _row_capabilities(adj):
        return None
    return kept_response(rr, int(adj.keep_numerator), typed=True).channel


def _check_claims(header: dict, channel: Any, keep: float, name: str) -> None:
    """Refuse a header whose keep or channel is not exactly the derived one."""
    keep_raw = header.get("keep", 1.0)
    if not _is_number(keep_raw) or float(keep_raw) != keep:
        raise ValueError(f"{name}: header keep disagrees with the certified numerators; "
                         "the file is corrupted")
    ch = header.get("channel")
    plain = keep == 1.0
    if ch is None and plain:
        return
    ok = isinstance(ch, dict) and set(ch) == {"d", "r"} and _is_number(ch["d"]) \
        and isinstance(ch["r"], list) and all(_is_number(x) for x in ch["r"]) \
        and float(ch["d"]) == float(channel.d) \
        and [float(x) for x in ch["r"]] == [float(x) for x in channel.r]
    if not ok:
        raise ValueError(f"{name}: header channel disagrees with the certified numerators; "
                         "the file is corrupted")
