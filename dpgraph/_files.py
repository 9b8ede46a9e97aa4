"""Files read and written safely: one check of "a regular file", one atomic write, one
cleanup of what a killed write left behind, one refusal of an output that would overwrite
what a job keeps (its ledger, its key, its input).

Used by the release files (``graph/io.py``), the privacy ledger, the edge-list
reader and the command line's node files.  Messages name the path as the
caller calls it (``what``), never the temporary file.
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["LEDGER_FORMAT", "check_regular_file", "refuse_overwrite", "remove_leftovers",
           "same_file", "write_atomic"]


def check_regular_file(path: Any, what: str, *, error: type[Exception] = ValueError,
                       missing: type[Exception] | None = FileNotFoundError,
                       single_name: bool = False) -> os.stat_result | None:
    """Refuse, before opening it, a path that is not one regular file.

    A directory, a FIFO, socket or device (an open would block on a FIFO) or
    an unreadable path raises ``error``; a missing path raises ``missing``
    (or returns None when ``missing`` is None); with ``single_name`` a file
    with more than one hard link raises ``error`` too (an atomic replace
    would leave the other names holding the old contents).  ``what`` names
    the path in the message (e.g. ``"edge list 'g.txt'"``).
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if missing is None:
            return None
        raise missing(f"{what}: no such file") from None
    except OSError as exc:
        raise error(f"{what} cannot be read: {exc.strerror}") from None
    if stat.S_ISDIR(st.st_mode):
        raise error(f"{what} is a directory, not a file")
    if not stat.S_ISREG(st.st_mode):
        raise error(f"{what} is not a regular file (a FIFO, socket or device)")
    if single_name and st.st_nlink > 1:
        raise error(f"{what} has {st.st_nlink} hard links; it must have one name (a replace "
                    "would leave the other names with the old contents). Remove the other links")
    return st


def same_file(a: Any, b: Any) -> bool:
    """Whether two names reach one file, existing or still to be created.

    Their resolved paths (symbolic links followed, even dangling ones) are
    equal, or both exist and are the same file on disk (device and inode: a
    hard link, a bind mount, a case-insensitive file system).
    """
    try:
        if os.path.normcase(os.path.realpath(a)) == os.path.normcase(os.path.realpath(b)):
            return True
        return os.path.samefile(a, b)
    except (OSError, TypeError, ValueError):  # one does not exist (or is not a path)
        return False


def lock_path(path: Any) -> str:
    """The lock file of the privacy ledger at ``path``: ``<resolved path>.lock``."""
    return os.path.realpath(path) + ".lock"


#: the ``format`` field of a privacy-ledger file (named here, beneath the ledger, so that no
#: output is ever written over a ledger)
LEDGER_FORMAT = "dpgraph-privacy-ledger"
_LEDGER_START = re.compile(rb'\A\s*\{\s*"format"\s*:\s*"' + LEDGER_FORMAT.encode() + rb'"')


def _holds_ledger(path: Any) -> bool:
    """Whether the regular file at ``path`` is a dpgraph privacy ledger (by its first field)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as fh:
            return _LEDGER_START.match(fh.read(256)) is not None
    except OSError:
        return False


def refuse_overwrite(path: Any, what: str, protected: Iterable[tuple[str, Any]] = (), *,
                     ledger: Any = None, error: type[Exception] = ValueError) -> None:
    """Refuse an output that is, or will be, a file the same job reads or keeps.

    ``protected`` holds ``(description, path)`` pairs (an input, a key file);
    ``ledger`` is the privacy ledger the job charges, whose lock file is
    protected too; any existing privacy ledger is never overwritten (that
    would erase the record of the budget it spent).  Compared by resolved
    path and, for existing files, by device and inode (see :func:`same_file`),
    so a symbolic or hard link is caught, and a ledger that does not exist
    yet is caught too.  Call it before anything is charged.
    """
    pairs = [(d, p) for d, p in protected if p is not None and "://" not in str(p)]
    if ledger is not None and "://" not in str(ledger):
        pairs += [("the privacy ledger", ledger), ("the privacy ledger's lock", lock_path(ledger))]
    for description, other in pairs:
        if same_file(path, other):
            raise error(f"{what} is also {description}; refusing to overwrite it. "
                        "Give the output another name")
    if _holds_ledger(path):
        raise error(f"{what} holds a privacy ledger; refusing to overwrite it (that would erase "
                    "the record of the budget it spent). Give the output another name")


def _tmp_prefix(path: Path) -> str:
    return f".{path.name}.dpgraph-tmp-"


def write_atomic(path: str | os.PathLike, parts: Iterable[Any], *, fsync: bool = True,
                 private: bool = True) -> None:
    """Write ``parts`` (bytes-like, in order) to ``path`` at once or not at all.

    They go to a temporary file beside ``path``, named
    ``.NAME.dpgraph-tmp-PID-XXXX``, which is synced (``fsync``) and renamed
    over ``path``: a reader sees the old file or the new one, never half of
    one, and another name of the old file (a hard link) keeps its content.
    The file is private (0600), or with ``private=False`` has the permissions
    of a newly created file (0666 less the umask).  On any error the
    temporary file is removed and the error raised.
    """
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f"{_tmp_prefix(path)}{os.getpid()}-", dir=folder)
    try:
        if not private:
            umask = os.umask(0)
            os.umask(umask)
            os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "wb") as fh:
            for part in parts:
                fh.write(part)
            if fsync:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


#: a temporary file of write_atomic: the target's name, the writer's pid, mkstemp's 8 characters
_TMP_SUFFIX = re.compile(r"(\d+)-[a-z0-9_]{8}")


def remove_leftovers(path: str | os.PathLike, magic: bytes) -> None:
    """Remove the temporary files that killed writes of ``path`` left behind.

    Only what dpgraph itself wrote is ever deleted: a regular file named
    exactly as :func:`write_atomic` names the temporaries of ``path``
    (``.NAME.dpgraph-tmp-PID-XXXXXXXX``), whose process is gone (one whose
    process still runs is a concurrent write, left alone), and whose content
    starts with ``magic``, the first bytes of everything the caller writes
    (or is a prefix of them: a write killed before its first bytes leaves an
    empty file).  Any other file, whatever its name or age, is left alone.
    """
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    prefix = _tmp_prefix(path)
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for f in names:
        match = _TMP_SUFFIX.fullmatch(f[len(prefix):]) if f.startswith(prefix) else None
        if match is None or _alive(int(match.group(1))) or not _starts_with(folder / f, magic):
            continue
        try:
            os.unlink(folder / f)
        except OSError:
            pass


def _starts_with(path: Path, magic: bytes) -> bool:
    """Whether ``path`` is a regular file (not a link) whose content starts with ``magic``, or
    is a prefix of it (a write cut short)."""
    try:
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        fd = os.open(path, flags)
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        head = os.read(fd, len(magic))
    except OSError:
        return False
    finally:
        os.close(fd)
    return magic.startswith(head)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True  # another user's process, or unknown: keep its file
    return True
