"""A privacy budget ledger: sequential composition of releases of one graph.

Releasing the same graph k times at eps_1, ..., eps_k is (eps_1 + ... +
eps_k)-edge-DP (sequential composition): every extra release spends budget.
A :class:`PrivacyLedger` holds a total budget and refuses, *before any
randomness is drawn*, a release that would exceed it::

    L = PrivacyLedger(total_epsilon=2.0)
    R1 = dpgraph.release(G, 1.0, ledger=L)
    R2 = dpgraph.release(G, 1.0, ledger=L)
    dpgraph.release(G, 0.5, ledger=L)       # BudgetExceededError

What counts as "the same graph"
-------------------------------
The privacy unit of edge-DP is a vertex pair.  Two releases compose on every
pair they both cover, whatever the edges are: releasing G and then G' with
one pair changed costs eps + eps on *every* pair, and repeated small edits
would otherwise release the same data again and again.  The ledger therefore
identifies a graph by its **vertex set** (public in dpgraph's privacy model)
and never by its edges.  Releases on the same vertex set, directed or not,
with or without edge edits, are charged to one budget.  Releases on different
vertex sets are tracked separately; if one vertex set contains part of
another (a subgraph release), pairs are shared and the budgets should be
shared too: create the ledger with ``scope="ledger"``, which charges every
release to one common budget.

Threat model of the ledger file
-------------------------------
The file is meant to be kept by the curator and may be shown to an auditor.
It holds the total budget, one entry per release (epsilon, optional label,
UTC time) and, per entry, a fingerprint of the vertex set: an HMAC-SHA256
under a random 256-bit key generated for this ledger and stored in the file.
It holds **nothing computed from the edges**, so a leaked ledger reveals no
more about the private edges than the list of epsilons does.  Hashing the
edge set instead would be dangerous: whoever holds the file (and so the key)
and knows all pairs but one could test both possibilities against the
fingerprint and learn the last pair with certainty.  The key only keeps the
vertex labels themselves out of plain view; since vertex sets are public in
this model, the fingerprint protects convenience, not privacy.

What the ledger does not do: it cannot see releases made without it, it
trusts the process that holds it (a curator can delete the file), it is not
safe for several processes charging one file at the same time (keep one
ledger per curator process, or serialize the releases), and it does not
account for advanced composition (it adds epsilons, which is always valid
for pure eps-DP).  A release that fails after being charged (for instance
for lack of memory) stays charged: over-counting is the safe direction.

Examples
--------
>>> import networkx as nx
>>> L = PrivacyLedger(total_epsilon=1.5)
>>> G = nx.path_graph(5)
>>> _ = L.charge(1.0, G)
>>> L.spent(G), L.remaining(G)
(1.0, 0.5)
>>> L.charge(1.0, G)
Traceback (most recent call last):
...
dpgraph.exceptions.BudgetExceededError: epsilon=1 would bring this graph's spending to 2 > total_epsilon=1.5 (spent 1, remaining 0.5); nothing was released. Use a smaller epsilon or a new dataset.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import hmac
import json
import math
import numbers
import os
import secrets
import tempfile
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from .core._validation import check_epsilon
from .exceptions import BudgetExceededError, LedgerFileError
from .graph.encoding import canonical_node_order

__all__ = ["BudgetExceededError", "LedgerEntry", "LedgerFileError", "PrivacyLedger"]

FORMAT = "dpgraph-privacy-ledger"
VERSION = 1
_SCOPES = ("graph", "ledger")
#: Budgets split in decimal steps (10 x 0.1 = 1.0) are not exact in binary
#: floating point; spending within this relative slack of the total is allowed.
_REL_SLACK = Fraction(1, 10**12)
_MAX_FILE_BYTES = 64 * 2**20


@dataclass(frozen=True)
class LedgerEntry:
    """One charged release: its epsilon, vertex-set fingerprint, label and time."""

    epsilon: float
    dataset: str
    label: str | None = None
    time: str | None = None


def _node_token(v: Any) -> bytes:
    """Canonical bytes of a node label: labels networkx treats as one node
    (1, 1.0, True, numpy.int64(1)) give the same bytes."""
    if isinstance(v, (numbers.Integral, np.bool_)):
        return b"i" + str(int(v)).encode()
    if isinstance(v, numbers.Real):
        f = float(v)
        if math.isfinite(f) and f == int(f):
            return b"i" + str(int(f)).encode()
        return b"f" + f.hex().encode()
    if isinstance(v, str):
        return b"s" + v.encode("utf-8", "surrogatepass")
    if isinstance(v, bytes):
        return b"y" + v
    if isinstance(v, tuple):
        return b"t" + b"".join(_length_prefixed(_node_token(x)) for x in v)
    return b"r" + f"{type(v).__module__}.{type(v).__qualname__}:{v!r}".encode()


def _length_prefixed(b: bytes) -> bytes:
    return len(b).to_bytes(8, "little") + b


def _nodes_of(graph: Any) -> list:
    """Node labels of a networkx graph, a PrivateGraph, or an EncodedGraph."""
    index = getattr(graph, "index", None)
    if index is not None and hasattr(index, "nodes"):
        return list(index.nodes)  # EncodedGraph: already canonical
    nodes = getattr(graph, "nodes", None)
    if nodes is None:
        raise TypeError(
            "graph must be a networkx graph, a PrivateGraph or an encoded graph, got "
            f"{type(graph).__name__}"
        )
    if callable(nodes):
        nodes = nodes()
    return canonical_node_order(nodes)


class PrivacyLedger:
    """Total privacy budget of a curator, charged by every release.

    Parameters
    ----------
    total_epsilon : float
        The budget per graph (per vertex set), finite and > 0.
    scope : {"graph", "ledger"}, default "graph"
        "graph": each vertex set has its own budget of ``total_epsilon``.
        "ledger": every release charged to this ledger shares one budget
        (use it when releases cover overlapping vertex sets, e.g. subgraphs).

    Attributes
    ----------
    path : pathlib.Path or None
        When set (by :meth:`save` or :meth:`load`), every charge is written to
        this file before the release samples anything.

    Examples
    --------
    >>> import networkx as nx
    >>> L = PrivacyLedger(total_epsilon=1.0)
    >>> [L.charge(0.1, nx.path_graph(3)).epsilon for _ in range(10)][-1]
    0.1
    >>> L.remaining(nx.path_graph(3))
    0.0
    """

    def __init__(self, total_epsilon: float, *, scope: str = "graph") -> None:
        self.total_epsilon = check_epsilon(total_epsilon, "total_epsilon")
        if scope not in _SCOPES:
            raise ValueError(f"scope must be 'graph' or 'ledger', got {scope!r}")
        self.scope = scope
        self._key = secrets.token_bytes(32)
        self._entries: list[LedgerEntry] = []
        self.path: Path | None = None

    # ---- identity ---------------------------------------------------------------
    def fingerprint(self, graph: Any) -> str:
        """Keyed fingerprint of ``graph``'s vertex set (never of its edges).

        With ``scope="ledger"`` every graph has the same fingerprint.
        """
        if self.scope == "ledger":
            return "ledger"
        mac = hmac.new(self._key, b"dpgraph-ledger-vertex-set-v1", hashlib.sha256)
        nodes = _nodes_of(graph)
        mac.update(len(nodes).to_bytes(8, "little"))
        for v in nodes:
            mac.update(_length_prefixed(_node_token(v)))
        return mac.hexdigest()

    # ---- accounting ---------------------------------------------------------------
    def _spent_exact(self, dataset: str) -> Fraction:
        return sum((Fraction(e.epsilon) for e in self._entries if e.dataset == dataset),
                   Fraction(0))

    def spent(self, graph: Any) -> float:
        """Epsilon already charged on ``graph``'s vertex set."""
        return float(self._spent_exact(self.fingerprint(graph)))

    def remaining(self, graph: Any) -> float:
        """Budget left on ``graph``'s vertex set (0 when used up)."""
        left = Fraction(self.total_epsilon) - self._spent_exact(self.fingerprint(graph))
        return max(0.0, float(left)) if left > _REL_SLACK * Fraction(self.total_epsilon) else 0.0

    @property
    def entries(self) -> tuple[LedgerEntry, ...]:
        """Every charged release, oldest first."""
        return tuple(self._entries)

    def charge(self, epsilon: float, graph: Any, *, label: str | None = None) -> LedgerEntry:
        """Charge a release of ``graph`` at ``epsilon``, or refuse it.

        Call this before drawing any randomness: on refusal nothing is
        recorded and nothing may be released.  When the ledger has a
        ``path``, the charge is written to the file before returning, so a
        crash after sampling cannot lose it.

        Parameters
        ----------
        epsilon : float
            Privacy parameter of the release.
        graph : networkx graph, PrivateGraph or EncodedGraph
            What is released; only its vertex set is looked at.
        label : str, optional
            A note for the record (e.g. "quarterly report").  It is stored in
            the file in clear: do not put private information in it.

        Returns
        -------
        LedgerEntry

        Raises
        ------
        BudgetExceededError
            If the release would exceed ``total_epsilon`` on this vertex set.
        """
        epsilon = check_epsilon(epsilon, "epsilon")
        if label is not None and not isinstance(label, str):
            raise TypeError(f"label must be a str or None, got {type(label).__name__}")
        dataset = self.fingerprint(graph)
        spent = self._spent_exact(dataset)
        total = Fraction(self.total_epsilon)
        after = spent + Fraction(epsilon)
        if after > total * (1 + _REL_SLACK):
            left = max(Fraction(0), total - spent)
            raise BudgetExceededError(
                f"epsilon={epsilon:g} would bring this graph's spending to {float(after):g} > "
                f"total_epsilon={self.total_epsilon:g} (spent {float(spent):g}, remaining "
                f"{float(left):g}); nothing was released. Use a smaller epsilon or a new dataset."
            )
        now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        entry = LedgerEntry(epsilon, dataset, label, now)
        self._entries.append(entry)
        if self.path is not None:
            try:
                self.save(self.path)
            except Exception:
                self._entries.pop()  # not recorded durably: refuse the release
                raise
        return entry

    # ---- files ------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """The JSON-ready state, including the secret fingerprint key."""
        return {
            "format": FORMAT,
            "version": VERSION,
            "total_epsilon": self.total_epsilon,
            "scope": self.scope,
            "key": self._key.hex(),
            "entries": [
                {"epsilon": e.epsilon, "dataset": e.dataset, "label": e.label, "time": e.time}
                for e in self._entries
            ],
        }

    def save(self, path: str | os.PathLike) -> None:
        """Write the ledger as JSON (atomically, owner-readable only) and remember ``path``."""
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
        path = Path(path)
        data = json.dumps(self.to_dict(), indent=1, allow_nan=False).encode()
        directory = path.parent if str(path.parent) else Path(".")
        fd, tmp = tempfile.mkstemp(prefix=".ledger-", dir=directory)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, 0o600)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        self.path = path

    @classmethod
    def load(cls, path: str | os.PathLike) -> PrivacyLedger:
        """Read a ledger written by :meth:`save`; later charges are saved back to ``path``.

        Raises
        ------
        LedgerFileError
            If the file is missing, not a ledger, of another version, or
            corrupted (the message names ``path``).
        """
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
        path = Path(path)
        try:
            size = path.stat().st_size
            if size > _MAX_FILE_BYTES:
                raise LedgerFileError(f"path {str(path)!r} is too large to be a privacy ledger")
            raw = path.read_bytes()
        except FileNotFoundError:
            raise LedgerFileError(f"path {str(path)!r}: no such ledger file") from None
        except IsADirectoryError:
            raise LedgerFileError(f"path {str(path)!r} is a directory, not a ledger file") from None
        except OSError as exc:
            raise LedgerFileError(f"path {str(path)!r} cannot be read: {exc.strerror}") from None
        try:
            doc = json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
        except (UnicodeDecodeError, json.JSONDecodeError, ValueError, RecursionError):
            raise LedgerFileError(
                f"path {str(path)!r} is not a dpgraph privacy ledger (not valid JSON)"
            ) from None
        return cls._from_dict(doc, str(path))

    @classmethod
    def _from_dict(cls, doc: Any, where: str) -> PrivacyLedger:
        def bad(what: str) -> LedgerFileError:
            return LedgerFileError(f"path {where!r} is not a valid privacy ledger: {what}")

        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise bad("wrong or missing 'format' (is this a dpgraph ledger file?)")
        if doc.get("version") != VERSION:
            raise bad(f"unsupported version {doc.get('version')!r}; this dpgraph reads {VERSION}")
        expected = {"format", "version", "total_epsilon", "scope", "key", "entries"}
        if set(doc) != expected:
            raise bad(f"unexpected fields {sorted(set(doc) ^ expected)}")
        try:
            ledger = cls(_real(doc["total_epsilon"]), scope=doc["scope"])
        except (TypeError, ValueError) as exc:
            raise bad(f"total_epsilon/scope: {exc}") from None
        key = doc["key"]
        if not (isinstance(key, str) and len(key) == 64):
            raise bad("'key' must be 64 hex digits")
        try:
            ledger._key = bytes.fromhex(key)
        except ValueError:
            raise bad("'key' must be 64 hex digits") from None
        entries = doc["entries"]
        if not isinstance(entries, list):
            raise bad("'entries' must be a list")
        for k, e in enumerate(entries):
            if not isinstance(e, dict) or set(e) != {"epsilon", "dataset", "label", "time"}:
                raise bad(f"entries[{k}] must have fields epsilon, dataset, label, time")
            try:
                eps = check_epsilon(_real(e["epsilon"]), f"entries[{k}].epsilon")
            except (TypeError, ValueError) as exc:
                raise bad(str(exc)) from None
            ds = e["dataset"]
            if not isinstance(ds, str) or not (ds == "ledger" or _is_hex(ds, 64)):
                raise bad(f"entries[{k}].dataset is not a fingerprint")
            for field in ("label", "time"):
                if e[field] is not None and not isinstance(e[field], str):
                    raise bad(f"entries[{k}].{field} must be a string or null")
            ledger._entries.append(LedgerEntry(eps, ds, e["label"], e["time"]))
        ledger.path = Path(where)
        return ledger

    def __repr__(self) -> str:
        datasets = len({e.dataset for e in self._entries})
        return (
            f"PrivacyLedger(total_epsilon={self.total_epsilon:g}, scope={self.scope!r}, "
            f"releases={len(self._entries)}, datasets={datasets})"
        )


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed in a ledger")


def _real(x: Any) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise TypeError(f"expected a number, got {type(x).__name__}")
    return float(x)


def _is_hex(s: str, n: int) -> bool:
    return len(s) == n and all(c in "0123456789abcdef" for c in s)
