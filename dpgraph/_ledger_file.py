"""A privacy ledger's file: its real path, its cross-process lock, reading and atomic writing.

The budget logic lives in :mod:`dpgraph.ledger`; this module is the plumbing
under it.  A ledger is one regular file with one name (a folder, a FIFO or a
device would block while the lock is held; a hard link would keep a second
budget), locked through ``PATH.lock`` beside it for every read-modify-write,
and replaced atomically so a killed write leaves the old budget intact.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import filelock

from . import _safejson
from ._files import LEDGER_FORMAT, check_regular_file, write_atomic
from .exceptions import LedgerFileError

__all__ = ["FILE_START", "check_file", "check_path", "file_lock", "read_doc", "write_doc"]

_MAX_FILE_BYTES = 64 * 2**20
_LOCK_TIMEOUT = 120.0  # seconds to wait for another process's charge


def check_path(path: Any) -> Path:
    """The ledger's real path: symlinks resolved, so the lock and the atomic replace act on
    the one file every name of it reaches (replacing a symlink would fork the budget)."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
    real = Path(os.path.realpath(path))
    if os.path.lexists(real):
        check_file(real, str(path))
    return real


class file_lock:
    """Exclusive lock on ``PATH.lock`` (cross-process), as a context manager."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = filelock.FileLock(str(path) + ".lock", timeout=_LOCK_TIMEOUT)

    def __enter__(self) -> None:
        try:
            self.lock.acquire()
        except filelock.Timeout:
            raise LedgerFileError(
                f"path {str(self.path)!r}: another process has held the ledger lock for "
                f"{_LOCK_TIMEOUT:g} s; try again") from None
        except OSError as exc:
            raise LedgerFileError(
                f"path {str(self.path)!r}: cannot create its lock file: {exc.strerror}") from None

    def __exit__(self, *exc: object) -> None:
        self.lock.release()


def read_doc(path: Path) -> Any:
    check_file(path)
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
        return _safejson.loads(raw, "ledger")
    except ValueError as exc:
        raise LedgerFileError(
            f"path {str(path)!r} is not a dpgraph privacy ledger ({exc})") from None


def check_file(path: Path, name: str | None = None) -> None:
    """A ledger is a regular file with one name: not a folder, a FIFO or device (which would
    block while the lock is held), nor a file with hard links (each name would keep its own
    budget after a charge)."""
    name = str(path) if name is None else name
    check_regular_file(path, f"path {name!r}", error=LedgerFileError, missing=None,
                       single_name=True)


#: how every ledger file starts (the first field of the JSON write_doc writes): the magic
#: by which a killed write's temporary file is known to be dpgraph's
FILE_START = b'{\n "format": "' + LEDGER_FORMAT.encode() + b'"'


def write_doc(path: Path, doc: dict) -> None:
    write_atomic(path, [json.dumps(doc, indent=1, allow_nan=False).encode()])
