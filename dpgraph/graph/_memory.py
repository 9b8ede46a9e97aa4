"""Refuse allocations that cannot fit, before making them."""

from __future__ import annotations

import os

__all__ = ["available_memory", "check_fits"]

_SMALL = 64 << 20


def available_memory() -> int:
    """Bytes of memory available to this process (MemAvailable), or total RAM."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - exotic platforms
        return 1 << 62


def check_fits(nbytes: int, what: str) -> None:
    """Raise MemoryError naming ``what`` and its size if ``nbytes`` exceeds available memory."""
    if nbytes < _SMALL:  # not worth reading /proc for
        return
    avail = available_memory()
    if nbytes > avail:
        raise MemoryError(
            f"{what} needs {nbytes / 2**30:.2f} GiB but only {avail / 2**30:.2f} GiB is "
            "available; use a machine with more memory or a sparse/blockwise release"
        )
