"""The smallest epsilon meeting an error target: exact bisection over the floats.

Every standard deviation the planner computes is non-increasing in epsilon,
so the smallest epsilon meeting a target is found by bisection over the
ordered bit patterns of positive floats: exact, not approximate.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

from .stds import POSITIVE

__all__ = ["EPS_HIGH", "smallest_epsilon"]

#: Above this the certified p' is at its floor of 2^-64.
EPS_HIGH = 200.0


def _float_to_key(x: float) -> int:
    return struct.unpack("<q", struct.pack("<d", x))[0]


def _key_to_float(k: int) -> float:
    return struct.unpack("<d", struct.pack("<q", k))[0]


def smallest_epsilon(std_at: Callable[[float], float], target: float,
                     name: str = "target_std") -> float:
    """The smallest float epsilon with ``std_at(epsilon) <= target``.

    ``std_at`` must be non-increasing in epsilon, as every std here is: the
    certified p' never grows with epsilon and every variance grows with p'
    below 1/2.  Bisection over the ordered bit patterns of positive floats,
    so the answer is exact: the next smaller float misses the target.
    Epsilons too small for 64-bit dyadic sampling count as missing it.

    Raises
    ------
    ValueError
        If even epsilon = 200 (p' at its floor 2^-64) misses the target.

    Examples
    --------
    >>> import numpy as np
    >>> from dpgraph.planner import count_std
    >>> e = smallest_epsilon(lambda eps: count_std(10000, eps), 50.0)
    >>> count_std(10000, e) <= 50.0 < count_std(10000, float(np.nextafter(e, 0)))
    True
    """
    target = POSITIVE(target, name)

    def ok(eps: float) -> bool:
        try:
            return std_at(eps) <= target
        except ValueError:  # below the precision floor of dyadic sampling
            return False

    if not ok(EPS_HIGH):
        raise ValueError(
            f"{name}={target:g} cannot be met at any epsilon (std {std_at(EPS_HIGH):.3g} even at "
            f"epsilon={EPS_HIGH:g}); ask for a larger {name}"
        )
    lo, hi = _float_to_key(5e-324), _float_to_key(EPS_HIGH)  # ok(hi) holds, ok(lo) does not
    if ok(_key_to_float(lo)):  # pragma: no cover - the precision floor forbids it
        return _key_to_float(lo)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(_key_to_float(mid)):
            hi = mid
        else:
            lo = mid
    return _key_to_float(hi)
