"""The curator's side of a collection: its folder, per-user tokens and durable report store.

A collection lives in one folder::

    collection.json   the public description (vertex set, epsilon, protocol, degree share)
    secret.key        32 random bytes (mode 0600): the key of the users' tokens
    reports.sqlite    the accepted reports (SQLite, WAL, synchronous=FULL)

A user's token is ``"<position>.<hex HMAC-SHA256(secret, b'dpgraph-local/1' + position)>"``:
the collector recomputes it, so a forged or altered token is refused, and a
token names the only user whose report it may carry.  A report is accepted
once: its row is committed (and the write-ahead log synced to disk) before
the sender is told it was accepted, so a crash loses nothing accepted, and
the user's position is the table's key, so nothing is counted twice.
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import json
import os
import secrets
import sqlite3
import struct
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .collection import Collection, ReportRefused
from .estimates import CollectedGraph

__all__ = ["ReportStore", "close_collection", "issue_tokens", "open_store"]

_CONFIG, _SECRET, _DB = "collection.json", "secret.key", "reports.sqlite"
_TAG = b"dpgraph-local/1"


def _token(secret: bytes, user: int) -> str:
    mac = hmac.new(secret, _TAG + struct.pack("<I", user), hashlib.sha256).hexdigest()
    return f"{user}.{mac}"


def issue_tokens(directory: str | os.PathLike, nodes: Any, epsilon: float, protocol: str = "one",
                 degree_share: float = 0.0, tokens_path: str | os.PathLike | None = None) -> list[str]:
    """Create a collection folder and the tokens of its users (by position in the public order).

    Parameters
    ----------
    directory : path
        A new (or empty) folder for the collection.
    nodes, epsilon, protocol, degree_share
        As for :class:`~dpgraph.local.Collection`; node labels must be
        int or str (they are stored in collection.json).
    tokens_path : path, optional
        Also write ``position,label,token`` lines (CSV with a header) there,
        for the curator to hand each token to its user only.

    Returns
    -------
    list of str
        The token of each position.

    Raises
    ------
    FileExistsError
        If the folder already holds a collection (its tokens are never re-keyed).
    """
    C = Collection(nodes, epsilon, protocol, degree_share)  # validates everything first
    labels = list(C.index.nodes)
    if not all(type(v) in (int, str) for v in labels):
        raise TypeError("nodes: a collection folder stores int or str labels; relabel the graph")
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    if (folder / _CONFIG).exists() or (folder / _SECRET).exists():
        raise FileExistsError(f"{folder} already holds a collection; use a new folder")
    secret = secrets.token_bytes(32)
    fd = os.open(folder / _SECRET, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(secret)
        fh.flush()
        os.fsync(fh.fileno())
    config = {"format": "dpgraph-collection", "version": 1, "nodes": labels,
              "epsilon": C.epsilon, "protocol": C.protocol, "degree_share": C.degree_share}
    (folder / _CONFIG).write_text(json.dumps(config))
    tokens = [_token(secret, k) for k in range(C.n)]
    if tokens_path is not None:
        fd = os.open(tokens_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["position", "label", "token"])
            w.writerows([k, labels[k], tokens[k]] for k in range(C.n))
    open_store(folder).close()  # the empty store, so that serve and close find it
    return tokens


class ReportStore:
    """The durable store of one collection folder (see the module docstring).

    Use :func:`open_store`.  Thread-safe: one connection behind a lock.
    """

    def __init__(self, folder: Path) -> None:
        config = json.loads((folder / _CONFIG).read_text())
        if config.get("format") != "dpgraph-collection" or config.get("version") != 1:
            raise ValueError(f"{folder}: not a dpgraph collection folder")
        self.folder = folder
        self.collection = Collection(config["nodes"], config["epsilon"], config["protocol"],
                                     config["degree_share"])
        self._secret = (folder / _SECRET).read_bytes()
        self._lock = threading.Lock()
        self._db = sqlite3.connect(folder / _DB, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute("CREATE TABLE IF NOT EXISTS reports (user INTEGER PRIMARY KEY, "
                         "body BLOB NOT NULL)")

    def authenticate(self, token: Any) -> int:
        """The position a token was issued to; :class:`ReportRefused` (401) for any other token."""
        if not isinstance(token, str) or token.count(".") != 1 or len(token) > 80:
            raise ReportRefused("token: missing or malformed", 401)
        head = token.split(".", 1)[0]
        if not head.isdigit() or int(head) >= self.collection.n \
                or not hmac.compare_digest(_token(self._secret, int(head)), token):
            raise ReportRefused("token: not issued by this collection's curator", 401)
        return int(head)

    def validate(self, token: Any, body: bytes) -> int:
        """The user of a well-formed report from its token holder (no store access)."""
        user = self.authenticate(token)
        self.collection.check(body, user)
        return user

    def commit(self, items: list[tuple[int, bytes]]) -> list[bool]:
        """Store validated reports in one durable transaction; False for a second report."""
        with self._lock:
            cur = self._db.cursor()
            cur.execute("BEGIN IMMEDIATE")
            try:
                fresh = []
                for user, body in items:
                    cur.execute("INSERT OR IGNORE INTO reports (user, body) VALUES (?, ?)",
                                (user, bytes(body)))
                    fresh.append(cur.rowcount == 1)
                cur.execute("COMMIT")
            except BaseException:
                cur.execute("ROLLBACK")
                raise
        return fresh

    def submit(self, token: Any, body: bytes) -> int:
        """Validate and store one report; :class:`ReportRefused` says why one is refused."""
        user = self.validate(token, body)
        if not self.commit([(user, body)])[0]:
            raise ReportRefused(f"report: user {user} has already reported", 409)
        return user

    def count(self) -> int:
        """How many reports are stored."""
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM reports").fetchone()[0])

    def bodies(self) -> Iterator[bytes]:
        """Every stored report, by user."""
        with self._lock:
            rows = self._db.execute("SELECT body FROM reports ORDER BY user").fetchall()
        for (body,) in rows:
            yield bytes(body)

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._db.close()

    def __repr__(self) -> str:
        return f"ReportStore({self.collection!r})"


def open_store(directory: str | os.PathLike) -> ReportStore:
    """Open the report store of a collection folder made by :func:`issue_tokens`."""
    folder = Path(directory)
    if not (folder / _CONFIG).is_file():
        raise FileNotFoundError(f"{folder} holds no collection; create it with "
                                "dpgraph collect tokens")
    return ReportStore(folder)


def close_collection(directory: str | os.PathLike, out: str | os.PathLike | None = None, *,
                     name: str | None = None, signing_key: Any = None) -> CollectedGraph:
    """Turn a folder's stored reports into a release (and save it to ``out`` if given).

    Every stored report is checked again; the release's header names the
    protocol, the epsilons and the users who did not report.
    """
    store = open_store(directory)
    try:
        C = Collection(store.collection.index.nodes, store.collection.epsilon,
                       store.collection.protocol, store.collection.degree_share)
        for body in store.bodies():
            C.add(body)
    finally:
        store.close()
    R = C.close(name=name)
    if out is not None:
        R.save(out, signing_key=signing_key)
    return R
