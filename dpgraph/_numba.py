"""Optional numba kernels: one switch, cached compilation, silent numpy fallback.

numba is an optional dependency.  Kernels live in small modules that import
numba at the top and are imported only through :func:`load_kernels`, on first
use, so ``import dpgraph`` never pays for numba.  They are compiled with
``cache=True``: the first process compiles and writes the machine code next to
the module (or in numba's user-wide cache directory when the package directory
is read-only, or in ``NUMBA_CACHE_DIR``), later processes load it in
milliseconds.  If numba is missing, disabled with ``DPGRAPH_DISABLE_NUMBA=1``,
or cannot compile or cache, :func:`load_kernels` returns None and callers use
their numpy path, which gives identical results.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import warnings

__all__ = ["load_kernels", "numba_enabled", "threads"]


def numba_enabled() -> bool:
    """True when numba is installed and not disabled by ``DPGRAPH_DISABLE_NUMBA``."""
    return not os.environ.get("DPGRAPH_DISABLE_NUMBA") and importlib.util.find_spec("numba") is not None


def load_kernels(module: str, names: tuple[str, ...]) -> tuple | None:
    """Import ``module`` and return its functions ``names``, or None to use numpy.

    Any failure (numba missing or broken, no writable cache location, which
    numba reports when the module is imported) gives None silently: the numpy
    path is always correct, only slower.
    """
    if not numba_enabled():
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. numba's cache warnings: we fall back instead
            mod = importlib.import_module(module)
        return tuple(getattr(mod, name) for name in names)
    except Exception:
        return None


def threads() -> int:
    """The threads numba's parallel kernels run on (1 when numba cannot be imported)."""
    try:
        import numba
    except ImportError:  # pragma: no cover - numba is optional
        return 1
    return max(1, int(numba.get_num_threads()))
