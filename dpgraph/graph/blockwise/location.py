"""Where a blockwise release lives: a local directory or any fsspec URL, opened with Zarr.

Every open of the store goes through :class:`StoreLocation`, which carries the
location and its fsspec ``storage_options`` together (they are never passed
separately).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

__all__ = ["StoreLocation", "fsspec_kwargs"]


def fsspec_kwargs(storage_options: dict | None) -> dict:
    """``storage_options`` as keyword arguments (empty for a local store)."""
    return dict(storage_options) if storage_options else {}


@dataclass(frozen=True)
class StoreLocation:
    """A Zarr store location and its fsspec options (picklable, shipped to workers)."""

    store: Any
    storage_options: dict | None = field(default=None, hash=False, compare=False)

    @property
    def target(self) -> Any:
        """The store as Zarr takes it (a path-like becomes a string)."""
        return os.fspath(self.store) if isinstance(self.store, os.PathLike) else self.store

    @property
    def local_path(self) -> str | None:
        """The local directory, or None for a URL or a store object."""
        t = self.target
        return t if isinstance(t, str) and "://" not in t else None

    def __str__(self) -> str:
        return str(self.target)

    def _kwargs(self) -> dict:
        opts = fsspec_kwargs(self.storage_options)
        return {"storage_options": opts} if opts else {}

    def group(self, mode: str):
        """The Zarr group in ``mode`` ("r", "r+", "w").

        Consolidated metadata (a copy of the arrays' metadata in the group's
        ``zarr.json``) is never used: every read of an array goes through
        :meth:`array` and its own ``zarr.json``, so the group's arrays are
        described by the same file that their reads follow.
        """
        import zarr

        return zarr.open_group(store=self.target, mode=mode, use_consolidated=False,
                               **self._kwargs())

    def array(self, path: str, mode: str = "r"):
        """The Zarr array ``path`` of the group."""
        import zarr

        return zarr.open_array(store=self.target, path=path, mode=mode, **self._kwargs())

    def exists(self) -> bool:
        """True when a Zarr group is stored here."""
        local = self.local_path
        if local is not None:
            return os.path.exists(os.path.join(local, "zarr.json"))
        try:
            self.group("r")
            return True
        except Exception:
            return False
