"""Shared helpers of the analytics modules: release checks, the channel's entry
map, the per-release cache, dense blocks and post-processing argument checks.

Nothing here is public; the statistics live in the sibling modules.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from ...core.estimators import Channel, count_estimate
from .._memory import check_fits


def _check_release(R: Any) -> None:
    if not (hasattr(R, "_adj") and hasattr(R, "channel")):
        raise TypeError(f"R must be a dpgraph PrivateGraph, got {type(R).__name__}")


def _undirected(R: Any, what: str) -> None:
    _check_release(R)
    if R.directed:
        raise ValueError(
            f"{what} is defined here for undirected releases only; this release is directed. "
            "Release G.to_undirected() instead (its own epsilon-DP release)."
        )


def _alpha_beta(channel: Channel) -> tuple[float, float]:
    """P(1 | edge), P(1 | non-edge) of a binary channel."""
    if channel.K != 2:
        raise ValueError("graph analytics need a binary channel (K = 2)")
    beta = float(channel.r[1])
    return channel.d + beta, beta


def _entry_map(channel: Channel) -> tuple[float, float]:
    """(z0, z1): the core's debiased value of one released 0 and one released 1."""
    z = count_estimate(np.array([0.0, 1.0]), np.array([1.0, 1.0]), channel).value
    return float(z[0]), float(z[1])


def _entry_variances(channel: Channel) -> tuple[float, float]:
    """(v0, v1): Var Z_ij for a non-edge and for an edge.

    Var Z = Var Y / d^2 with Var Y = beta(1-beta) or alpha(1-alpha); for a
    symmetric channel both equal the core's (exact) per-row variance.
    """
    alpha, beta = _alpha_beta(channel)
    d2 = channel.d**2
    return beta * (1 - beta) / d2, alpha * (1 - alpha) / d2


def _cache(R: Any) -> dict:
    c = R.__dict__.get("_analytics_cache")
    if c is None:
        c = {}
        R.__dict__["_analytics_cache"] = c
    return c


def _observed_degrees(R: Any) -> np.ndarray:
    c = _cache(R)
    if "deg" not in c:
        c["deg"] = np.asarray(R._adj.degrees(), dtype=np.int64)
    return c["deg"]


def _dense_release(R: Any) -> np.ndarray:
    """Symmetric released adjacency as float32 (exact 0/1), refusing what cannot fit."""
    n = R.number_of_nodes()
    check_fits(3 * n * n * 4, f"the dense released adjacency of {n} nodes (float32, n^2 entries)")
    A = R.to_scipy_sparse("csr")
    Y = np.zeros((n, n), dtype=np.float32)
    coo = A.tocoo()
    Y[coo.row, coo.col] = 1.0
    return Y


def _block_rows(n: int) -> int:
    return max(1, min(n, (1 << 21) // max(n, 1)))


def _check_seed(seed: Any) -> int | None:
    """Validate a post-processing ``seed``: None or a non-negative int."""
    import numbers

    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"seed must be None or a non-negative int, got {type(seed).__name__}")
    if int(seed) < 0:
        raise ValueError(f"seed must be None or a non-negative int, got {int(seed)}")
    return int(seed)


def _check_max_communities(max_communities: Any) -> int:
    """Validate ``max_communities``: an int >= 1."""
    import numbers

    if isinstance(max_communities, (bool, np.bool_)) or not isinstance(
        max_communities, numbers.Integral
    ):
        raise TypeError(
            f"max_communities must be an int >= 1, got {type(max_communities).__name__}"
        )
    if int(max_communities) < 1:
        raise ValueError(f"max_communities must be an int >= 1, got {int(max_communities)}")
    return int(max_communities)



def delegate(func: Callable) -> Callable:
    """A method ``R.name(...)`` calling ``func(R, ...)``, with func's docstring and signature.

    The docstring is written once, on the module function; the method shares
    it and shows the function's signature with ``self`` in place of ``R``.
    """

    @functools.wraps(func)
    def method(self, *args, **kwargs):
        return func(self, *args, **kwargs)

    sig = inspect.signature(func)
    params = list(sig.parameters.values())
    params[0] = params[0].replace(name="self", annotation=inspect.Parameter.empty)
    method.__signature__ = sig.replace(parameters=params)
    return method
