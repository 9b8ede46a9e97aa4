"""Saving and loading PrivateGraph files (filled in by the file-format work)."""

from __future__ import annotations

__all__ = ["IOMixin"]


class IOMixin:
    """PrivateGraph methods for files: ``save``."""
