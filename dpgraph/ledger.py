"""A privacy budget ledger: sequential composition of releases of one dataset.

Releasing the same data k times at eps_1, ..., eps_k is (eps_1 + ... +
eps_k)-edge-DP (sequential composition): every extra release spends budget.
A :class:`PrivacyLedger` holds a total budget and refuses, *before any
randomness is drawn*, a release that would exceed it::

    L = PrivacyLedger.open("budget.json", total_epsilon=2.0)
    R1 = dpgraph.release(G, 1.0, ledger=L)
    R2 = dpgraph.release(G, 1.0, ledger=L)
    dpgraph.release(G, 0.5, ledger=L)       # BudgetExceededError

What one budget covers
----------------------
The curator declares it: **one ledger is one dataset**.  Every release
charged to a ledger spends its budget, whatever graph is passed, so adding a
node, removing one or editing edges never resets the budget (the privacy unit
of edge-DP is a vertex pair, and an edited graph shares almost all of its
pairs with the original).  A ledger file may hold several independent
budgets under names the curator chooses: ``PrivacyLedger(total, scope="name")``
or ``L.with_scope("name")`` charges the budget called ``name``.  Use
separate scopes only for datasets that share no private data.

Several processes
-----------------
A ledger kept in a file (:meth:`PrivacyLedger.open`, :meth:`load` or
:meth:`save`) is the authority: each :meth:`charge` takes an exclusive file
lock (``FILE.lock``, via the ``filelock`` package), re-reads the file, checks
the budget against what it holds, writes the new entry atomically (a 0600
temporary file, fsynced, renamed over the ledger) and only then releases the
lock.  Two processes that charge one file at the same time are serialized:
they cannot both spend the same budget.  A temporary file left behind by a
killed save is removed the next time the ledger is opened.  A ledger file
that disappears or is replaced by another ledger (another ``id``) is refused,
so deleting or swapping the file cannot silently reset a process's budget.

Threat model of the ledger file
-------------------------------
The file is meant to be kept by the curator and may be shown to an auditor.
It holds the total budget, a random ledger id, and one entry per release
(epsilon, scope name, optional label, UTC time).  It holds **nothing
computed from the graph**, so a leaked ledger reveals no more about the
private edges than the list of epsilons does.

What the ledger does not do: it cannot see releases made without it, it
trusts the curator (who can delete the file), and it does not account for
advanced composition (it adds epsilons, which is always valid for pure
eps-DP).  A release that fails after being charged (for instance for lack of
memory) stays charged: over-counting is the safe direction.

Examples
--------
>>> L = PrivacyLedger(total_epsilon=1.5)
>>> _ = L.charge(1.0)
>>> L.spent, L.remaining
(1.0, 0.5)
>>> L.charge(1.0)
Traceback (most recent call last):
...
dpgraph.exceptions.BudgetExceededError: epsilon=1 would bring the spending of scope 'default' to 2 > total_epsilon=1.5 (spent 1, remaining 0.5); nothing was released. Use an epsilon of at most 0.5.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import re
import secrets
import threading
import unicodedata
import warnings
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from ._files import LEDGER_FORMAT, remove_leftovers
from ._ledger_file import FILE_START, check_path, file_lock, read_doc, write_doc
from .exceptions import BudgetExceededError, LedgerFileError, NewScopeWarning
from .validation import Constraint, Epsilon, Optional, check_epsilon, validate_params

__all__ = ["BudgetExceededError", "LedgerEntry", "LedgerFileError", "PrivacyLedger"]

FORMAT = LEDGER_FORMAT
VERSION = 2
DEFAULT_SCOPE = "default"
#: Budgets split in decimal steps (10 x 0.1 = 1.0) are not exact in binary
#: floating point; spending within this relative slack of the total is allowed.
_REL_SLACK = Fraction(1, 10**12)


@dataclass(frozen=True)
class LedgerEntry:
    """One charged release: its epsilon, budget scope, label and time."""

    epsilon: float
    scope: str
    label: str | None = None
    time: str | None = None


class _Book:
    """State shared by every scope view of one ledger."""

    def __init__(self, total: float, ledger_id: str) -> None:
        self.total = total
        self.id = ledger_id
        self.entries: list[LedgerEntry] = []
        self.path: Path | None = None
        self.mutex = threading.Lock()
        self.pid = os.getpid()  # a copy made by fork() sees another pid


_SCOPE = re.compile(r"[a-z0-9][a-z0-9 ._-]{0,199}\Z")


def _check_scope(scope: Any) -> str:
    """The normal form of a scope name: NFKC, case-folded, whitespace trimmed and collapsed.

    "Default", " default" and "default" are one scope; a name with letters
    outside a-z, digits and `` ._-`` (a Cyrillic look-alike, a control
    character) is refused, so a typo cannot silently open a fresh budget.
    """
    if not isinstance(scope, str) or not scope:
        raise TypeError(f"scope must be a non-empty str, got {type(scope).__name__}")
    name = " ".join(unicodedata.normalize("NFKC", scope).casefold().split())
    if not _SCOPE.match(name):
        raise ValueError("scope must be 1 to 200 characters of a-z, 0-9, space, '.', '_' or "
                         "'-' (compared without case), starting with a letter or digit")
    return name


class _Scope(Constraint):
    """The name of a budget (see :func:`_check_scope`), returned in its normal form."""

    def __call__(self, value: Any, name: str) -> str:
        return _check_scope(value)

    def describe(self) -> str:
        return "a scope name"

    def invalid_examples(self) -> tuple:
        return ("", "budget/2024", "\u0430", 5, None)  # "\u0430": a Cyrillic look-alike of "a"

    def valid_example(self) -> str:
        return DEFAULT_SCOPE


_SCOPE_NAME = _Scope()


class PrivacyLedger:
    """Total privacy budget of a dataset, charged by every release.

    Parameters
    ----------
    total_epsilon : float
        The budget of each scope, finite and > 0.
    scope : str, default "default"
        The budget this object charges.  One ledger is one dataset; name
        further scopes only for datasets that share no private data.

    Attributes
    ----------
    path : pathlib.Path or None
        When set (by :meth:`open`, :meth:`save` or :meth:`load`), every
        charge is an atomic, locked read-modify-write of this file, done
        before the release samples anything.

    Examples
    --------
    >>> L = PrivacyLedger(total_epsilon=1.0)
    >>> [L.charge(0.1).epsilon for _ in range(10)][-1]
    0.1
    >>> L.remaining
    0.0
    >>> L.with_scope("other dataset").remaining
    1.0
    """

    @validate_params(total_epsilon=Epsilon(), scope=_SCOPE_NAME)
    def __init__(self, total_epsilon: float, *, scope: str = DEFAULT_SCOPE) -> None:
        self.scope = scope
        self._book = _Book(total_epsilon, secrets.token_hex(16))

    # ---- views --------------------------------------------------------------------
    @property
    def total_epsilon(self) -> float:
        """The budget of each scope."""
        return self._book.total

    @property
    def path(self) -> Path | None:
        return self._book.path

    @property
    def id(self) -> str:
        """Random identifier of this ledger (kept in its file)."""
        return self._book.id

    @validate_params(scope=_SCOPE_NAME)
    def with_scope(self, scope: str) -> PrivacyLedger:
        """The same ledger (same file, same entries) charging the budget named ``scope``."""
        view = PrivacyLedger.__new__(PrivacyLedger)
        view.scope = scope
        view._book = self._book
        return view

    #: The note recorded with a charge made without one (see :meth:`with_label`).
    label: str | None = None

    def with_label(self, label: str) -> PrivacyLedger:
        """The same ledger (same scope, file and entries) recording ``label`` with each charge
        made without a label of its own: a release's name and output file, say.  Stored in
        clear, like every label."""
        if not isinstance(label, str):
            raise TypeError(f"label must be a str, got {type(label).__name__}")
        view = self.with_scope(self.scope)
        view.label = label
        return view

    # ---- accounting ---------------------------------------------------------------
    def _refresh(self) -> None:
        """Adopt the entries of this ledger's file, if it has one (writes are atomic)."""
        book = self._book
        if book.path is not None:
            other = PrivacyLedger._from_dict(read_doc(book.path), str(book.path))
            if other.id == book.id:
                with book.mutex:
                    book.entries = list(other._book.entries)

    def _spent_exact(self) -> Fraction:
        return sum((Fraction(e.epsilon) for e in self._book.entries if e.scope == self.scope),
                   Fraction(0))

    @property
    def spent(self) -> float:
        """Epsilon already charged to this scope (read from the file, if any, on every access)."""
        self._refresh()
        return float(self._spent_exact())

    @property
    def remaining(self) -> float:
        """Budget left in this scope (0 when used up; read from the file, if any, on every access)."""
        self._refresh()
        return self._remaining_now()

    def _remaining_now(self) -> float:
        left = Fraction(self.total_epsilon) - self._spent_exact()
        return max(0.0, float(left)) if left > _REL_SLACK * Fraction(self.total_epsilon) else 0.0

    @property
    def entries(self) -> tuple[LedgerEntry, ...]:
        """Every charged release of every scope, oldest first."""
        return tuple(self._book.entries)

    @validate_params(epsilon=Epsilon())
    def charge(self, epsilon: float, *, label: str | None = None) -> LedgerEntry:
        """Charge a release at ``epsilon`` to this scope, or refuse it.

        Call this after validating the release's inputs and before drawing
        any randomness: on refusal nothing is recorded and nothing may be
        released.  When the ledger has a ``path``, the charge is an atomic
        read-modify-write of the file under an exclusive file lock: the
        budget is checked against the file as it is now (other processes'
        charges included) and the entry is on disk before this returns.

        Parameters
        ----------
        epsilon : float
            Privacy parameter of the release.
        label : str, optional
            A note for the record (e.g. "quarterly report").  It is stored in
            the file in clear: do not put private information in it.

        Returns
        -------
        LedgerEntry

        Raises
        ------
        BudgetExceededError
            If the release would exceed ``total_epsilon`` in this scope.
        LedgerFileError
            If the ledger file vanished, was replaced by another ledger, is
            corrupted, or its lock could not be taken.
        RuntimeError
            If this ledger has no file and was copied by ``fork()`` into another
            process (it cannot see its copies' charges).
        """
        return self._charge(epsilon, label)

    def _charge(self, epsilon: float, label: str | None) -> LedgerEntry:
        """:meth:`charge` with an epsilon validated already (the release transaction's path,
        so that one release validates epsilon once)."""
        if label is not None and not isinstance(label, str):
            raise TypeError(f"label must be a str or None, got {type(label).__name__}")
        label = self.label if label is None else label
        book = self._book
        if book.pid != os.getpid():  # copied into a child by fork()
            if book.path is None:
                raise RuntimeError(
                    "this in-memory ledger was copied into another process by fork(); it "
                    "cannot see the charges of its copies, so charging it would spend one "
                    "budget twice. Keep the budget in a file (PrivacyLedger.open(path, ...)), "
                    "which every process charges under its lock")
            book.mutex, book.pid = threading.Lock(), os.getpid()  # the parent's threads are gone
        with book.mutex:
            if book.path is None:
                return self._charge_locked(epsilon, label)
            with file_lock(book.path):
                doc = read_doc(book.path)
                other = PrivacyLedger._from_dict(doc, str(book.path))
                if other.id != book.id:
                    raise LedgerFileError(
                        f"path {str(book.path)!r} now holds another ledger (its id changed); "
                        "refusing to charge: load it again with PrivacyLedger.load")
                book.entries = list(other._book.entries)  # the file is the authority
                entry = self._charge_locked(epsilon, label)
                try:
                    write_doc(book.path, self.to_dict())
                except BaseException:
                    book.entries.pop()  # not recorded durably: refuse the release
                    raise
                return entry

    def _charge_locked(self, epsilon: float, label: str | None) -> LedgerEntry:
        spent = self._spent_exact()
        total = Fraction(self.total_epsilon)
        after = spent + Fraction(epsilon)
        if after > total * (1 + _REL_SLACK):
            left = max(Fraction(0), total - spent)
            raise BudgetExceededError(
                f"epsilon={epsilon:g} would bring the spending of scope {self.scope!r} to "
                f"{float(after):g} > total_epsilon={self.total_epsilon:g} (spent "
                f"{float(spent):g}, remaining {float(left):g}); nothing was released. "
                + (f"Use an epsilon of at most {float(left):g}." if left > _REL_SLACK * total
                   else "The budget is used up: no further release of this dataset is possible.")
            )
        scopes = sorted({e.scope for e in self._book.entries})
        if scopes and self.scope not in scopes:
            warnings.warn(
                f"scope {self.scope!r} is charged for the first time; this ledger holds the "
                f"scopes {', '.join(map(repr, scopes))}. A scope is a separate budget: check "
                "the name is not a typo of one of them", NewScopeWarning, stacklevel=4)
        now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        entry = LedgerEntry(epsilon, self.scope, label, now)
        self._book.entries.append(entry)
        return entry

    # ---- files ------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """The JSON-ready state of the whole ledger (every scope)."""
        return {
            "format": FORMAT,
            "version": VERSION,
            "id": self.id,
            "total_epsilon": self.total_epsilon,
            "entries": [
                {"epsilon": e.epsilon, "scope": e.scope, "label": e.label, "time": e.time}
                for e in self._book.entries
            ],
        }

    def save(self, path: str | os.PathLike) -> None:
        """Write the ledger to ``path`` (atomically, mode 0600) and keep charging it there.

        Refuses to overwrite a file that holds another ledger (that would
        reset its budget); saving again to this ledger's own file adopts the
        entries the file holds.
        """
        path = check_path(path)
        book = self._book
        with book.mutex, file_lock(path):
            remove_leftovers(path, FILE_START)
            if path.exists():
                other = PrivacyLedger._from_dict(read_doc(path), str(path))
                if other.id != book.id:
                    raise LedgerFileError(
                        f"path {str(path)!r} already holds another privacy ledger; overwriting it "
                        "would reset its budget. Use PrivacyLedger.load or another path")
                known = set(other._book.entries)
                book.entries = other._book.entries + [e for e in book.entries if e not in known]
            write_doc(path, self.to_dict())
            book.path = path

    @classmethod
    @validate_params(scope=_SCOPE_NAME)
    def load(cls, path: str | os.PathLike, *, scope: str = DEFAULT_SCOPE) -> PrivacyLedger:
        """Read a ledger written by :meth:`save`; later charges are written back to ``path``.

        Parameters
        ----------
        path : str or os.PathLike
        scope : str, default "default"
            The budget the returned object charges (see :meth:`with_scope`).

        Raises
        ------
        LedgerFileError
            If the file is missing, not a ledger, of another version, or
            corrupted (the message names ``path``).
        """
        path = check_path(path)
        with file_lock(path):
            remove_leftovers(path, FILE_START)
            ledger = cls._from_dict(read_doc(path), str(path))
        ledger._book.path = path
        return ledger.with_scope(scope)

    @classmethod
    @validate_params(total_epsilon=Optional(Epsilon()), scope=_SCOPE_NAME)
    def open(cls, path: str | os.PathLike, total_epsilon: float | None = None, *,
             scope: str = DEFAULT_SCOPE) -> PrivacyLedger:
        """Load the ledger at ``path``, or create it there with ``total_epsilon``.

        Creation is atomic under the file lock, so two processes opening a
        missing ledger at once end up sharing one file.

        Raises
        ------
        LedgerFileError
            If the file exists but is not a valid ledger, if ``total_epsilon``
            is given and differs from the file's, or if the file is missing
            and ``total_epsilon`` is None.

        Examples
        --------
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "budget.json")
        >>> L = PrivacyLedger.open(path, total_epsilon=2.0)
        >>> _ = L.charge(1.5)
        >>> PrivacyLedger.open(path).remaining
        0.5
        """
        path = check_path(path)
        with file_lock(path):
            remove_leftovers(path, FILE_START)
            if path.exists():
                ledger = cls._from_dict(read_doc(path), str(path))
                if total_epsilon is not None and total_epsilon != ledger.total_epsilon:
                    raise LedgerFileError(
                        f"path {str(path)!r} holds a ledger with total_epsilon="
                        f"{ledger.total_epsilon:g}, not {total_epsilon:g}; a budget cannot be "
                        "changed by reopening it")
            elif total_epsilon is None:
                raise LedgerFileError(
                    f"path {str(path)!r}: no such ledger file; pass total_epsilon to create one")
            else:
                ledger = cls(total_epsilon)
                write_doc(path, ledger.to_dict())
        ledger._book.path = path
        return ledger.with_scope(scope)

    @classmethod
    def _from_dict(cls, doc: Any, where: str) -> PrivacyLedger:
        def bad(what: str) -> LedgerFileError:
            return LedgerFileError(f"path {where!r} is not a valid privacy ledger: {what}")

        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise bad("wrong or missing 'format' (is this a dpgraph ledger file?)")
        version = doc.get("version")
        if version == 1:
            return _from_v1(doc, bad)
        if version != VERSION:
            raise bad(f"unsupported version {version!r}; this dpgraph reads {VERSION}")
        expected = {"format", "version", "id", "total_epsilon", "entries"}
        if set(doc) != expected:
            raise bad(f"unexpected fields {sorted(set(doc) ^ expected)}")
        try:
            ledger = cls(_real(doc["total_epsilon"]))
        except (TypeError, ValueError) as exc:
            raise bad(f"total_epsilon: {exc}") from None
        if not (isinstance(doc["id"], str) and _is_hex(doc["id"], 32)):
            raise bad("'id' must be 32 hex digits")
        ledger._book.id = doc["id"]
        entries = doc["entries"]
        if not isinstance(entries, list):
            raise bad("'entries' must be a list")
        for k, e in enumerate(entries):
            if not isinstance(e, dict) or set(e) != {"epsilon", "scope", "label", "time"}:
                raise bad(f"entries[{k}] must have fields epsilon, scope, label, time")
            try:
                eps = check_epsilon(_real(e["epsilon"]), f"entries[{k}].epsilon")
                scope = _check_scope(e["scope"])
            except (TypeError, ValueError) as exc:
                raise bad(str(exc)) from None
            for field in ("label", "time"):
                if e[field] is not None and not isinstance(e[field], str):
                    raise bad(f"entries[{k}].{field} must be a string or null")
            ledger._book.entries.append(LedgerEntry(eps, scope, e["label"], e["time"]))
        return ledger

    def __repr__(self) -> str:  # the names of the properties it shows (no file read)
        return (
            f"PrivacyLedger(total_epsilon={self.total_epsilon:g}, scope={self.scope!r}, "
            f"spent={float(self._spent_exact()):g}, remaining={self._remaining_now():g}, "
            f"releases={len(self._book.entries)})"
        )


def _from_v1(doc: dict, bad: Any) -> PrivacyLedger:
    """A version-1 ledger (budgets per vertex set): every entry is charged to the
    default scope, which over-counts (the safe direction) and never under-counts."""
    try:
        ledger = PrivacyLedger(_real(doc.get("total_epsilon")))
        key = bytes.fromhex(doc["key"])
        entries = doc["entries"]
        for k, e in enumerate(entries):
            eps = check_epsilon(_real(e["epsilon"]), f"entries[{k}].epsilon")
            ledger._book.entries.append(
                LedgerEntry(eps, DEFAULT_SCOPE, e.get("label"), e.get("time")))
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise bad(f"version 1 ledger: {exc}") from None
    ledger._book.id = hashlib.sha256(b"dpgraph-ledger-v1-id" + key).hexdigest()[:32]
    return ledger


def _real(x: Any) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise TypeError(f"expected a number, got {type(x).__name__}")
    return float(x)


def _is_hex(s: str, n: int) -> bool:
    return len(s) == n and all(c in "0123456789abcdef" for c in s)
