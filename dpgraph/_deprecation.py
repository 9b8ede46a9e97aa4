"""Deprecation aliases for renamed public names (one warning format for all)."""

from __future__ import annotations

import warnings
from typing import Any

__all__ = ["renamed_property", "warn_renamed"]


def warn_renamed(old: str, new: str, stacklevel: int = 3) -> None:
    """Warn that ``old`` is deprecated in favour of ``new`` (a DeprecationWarning)."""
    warnings.warn(f"{old} is deprecated; use {new} instead", DeprecationWarning,
                  stacklevel=stacklevel)


def renamed_property(old: str, new: str) -> property:
    """A read-only property ``old`` that warns and returns attribute ``new``.

    Examples
    --------
    >>> class A:
    ...     size = 3
    ...     length = renamed_property("length", "size")
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     A().length, str(w[0].message)
    (3, 'A.length is deprecated; use A.size instead')
    """

    def getter(self: Any) -> Any:
        cls = type(self).__name__
        warn_renamed(f"{cls}.{old}", f"{cls}.{new}")
        return getattr(self, new)

    getter.__name__ = old
    getter.__doc__ = f"Deprecated alias of :attr:`{new}`."
    return property(getter)
