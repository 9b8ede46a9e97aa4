"""The plainest sampler, as the tests' reference: one comparison of a uniform word a draw."""

from __future__ import annotations

import numpy as np


def flip_mask(n: int, numerator: int, source) -> np.ndarray:
    """n independent Bernoulli(numerator / 2^64) draws: a uniform 64-bit word u, drawn from
    ``source`` (a dpgraph RandomSource), gives 1 iff u < numerator."""
    if not 0 <= int(numerator) < 1 << 64:
        raise ValueError("numerator must lie in [0, 2^64)")
    return source.uint64(n) < np.uint64(numerator)
