"""Planning a typed release: the std of a typed or weighted cut from public quantities.

Re-exported by :mod:`dpgraph.planner`; it never touches a graph.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...core.estimators import Channel
from ...core.probabilities import rr_probabilities
from ...validation import check_positive_int
from .encoding import tie_values

__all__ = ["typed_cut_std"]


def typed_cut_std(nodes: int, epsilon: float, values: Sequence, sides: Sequence[int], *,
                  value: Any = None, weights: Any = None, mix: Any = None) -> float:
    """Std of a typed or weighted cut of a typed release, before the release.

    A typed release (``dpgraph.release(G, eps, edge_attr=..., values=values)``)
    has K = len(values) + 1 values a pair; the variance of one pair's
    debiased row function depends on its true value when K > 2, so without
    an assumption this is the worst case over the truth (an upper bound, the
    core's :func:`~dpgraph.core.unbiased_estimate`).  With ``mix`` (the
    assumed share of the |S||T| pairs holding each tie value) it is the exact
    std under that assumption.

    Parameters
    ----------
    nodes : int
    epsilon : float
    values : sequence
        The declared tie values.
    sides : (int, int)
        |S| and |T|.
    value : a tie value, optional
        Ties of this value; default: ties of any value.
    weights : mapping {tie value: weight}, optional
        A weighted cut.
    mix : mapping {tie value: share of the pairs}, optional
        Assumed truth; shares sum to at most 1 (the rest: no tie).

    Examples
    --------
    >>> v = ["distrust", "trust", "strong"]
    >>> worst = typed_cut_std(3783, 1.0, v, (300, 300), value="trust")
    >>> sparse = typed_cut_std(3783, 1.0, v, (300, 300), value="trust", mix={"trust": 0.002})
    >>> sparse < worst
    True
    """
    nodes = check_positive_int(nodes, "nodes", minimum=2)
    try:
        a, b = (check_positive_int(x, f"sides[{k}]", minimum=1) for k, x in enumerate(sides))
    except (TypeError, ValueError) as exc:
        if isinstance(exc, ValueError) and "sides[" in str(exc):
            raise
        raise TypeError("sides must be a pair (|S|, |T|) of side sizes, e.g. sides=(100, 200)") from None
    if a + b > nodes:
        raise ValueError(f"sides: |S| + |T| = {a + b} exceeds nodes={nodes}; the sides of a cut "
                         "are disjoint")
    ties = tie_values("value", values)
    phi = np.zeros(ties.K)
    if value is not None and weights is not None:
        raise TypeError("pass value= or weights=, not both")
    if weights is not None:
        for key, w in dict(weights).items():
            w = float(w)
            if not math.isfinite(w):
                raise ValueError("weights must be finite (no NaN or infinite weight)")
            phi[ties.index_of(key, "weights has a key that")] = w
    elif value is not None:
        phi[ties.index_of(value, "value")] = 1.0
    else:
        phi[1:] = 1.0
    channel = Channel.randomized_response(rr_probabilities(epsilon, ties.K))
    per_value = channel.value_variances(phi)
    if mix is None:
        return float(math.sqrt(a * b * per_value.max()))
    share = np.zeros(ties.K)
    for key, f in dict(mix).items():
        f = float(f)
        if not (math.isfinite(f) and f >= 0):
            raise ValueError("mix: shares must be finite and >= 0")
        share[ties.index_of(key, "mix has a key that")] = f
    if share.sum() > 1 + 1e-12:
        raise ValueError("mix: the shares of the tie values sum to more than 1")
    share[0] = max(0.0, 1.0 - share[1:].sum())
    return float(math.sqrt(a * b * float(share @ per_value)))
