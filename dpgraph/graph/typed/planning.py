"""Planning a typed release: the std of a typed or weighted count from public quantities.

Re-exported by :mod:`dpgraph.planner` (which also asks it for
:func:`dpgraph.plan`'s typed plans); it never touches a graph.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ...core import typed_subsampling
from ...core.estimators import Channel
from ...core.probabilities import rr_probabilities
from ...validation import check_positive_int
from .encoding import tie_values

__all__ = ["typed_count_std", "typed_cut_std"]


def typed_count_std(pairs: int, epsilon: float, values: Sequence, *, value: Any = None,
                    weights: Mapping | None = None, mix: Mapping | None = None,
                    keep: float | None = None, target_edges: int | None = None,
                    nodes: int | None = None, directed: bool = False) -> float:
    """Std of a typed or weighted count over ``pairs`` vertex pairs of a typed release.

    A typed release (``dpgraph.release(G, eps, edge_attr=..., values=values)``)
    has K = len(values) + 1 values a pair; the variance of one pair's
    debiased row function depends on its true value when K > 2, so without
    an assumption this is the worst case over the truth (an upper bound, the
    core's :func:`~dpgraph.core.unbiased_estimate`): every pair holding the
    value whose debiased row function varies most.  With ``mix`` (the
    assumed share of the pairs holding each tie value) it is the exact std
    under that assumption.  A cut covers |S||T| pairs, a degree n - 1, the
    count of all ties every pair.

    Parameters
    ----------
    pairs : int
        Number of vertex pairs the count covers (>= 1).
    epsilon : float
    values : sequence
        The declared tie values.
    value : a tie value, optional
        Ties of this value; default: ties of any value.
    weights : mapping {tie value: weight}, optional
        A weighted count.
    mix : mapping {tie value: share of the pairs}, optional
        Assumed truth; shares sum to at most 1 (the rest: no tie).
    keep, target_edges : optional
        A sparse typed release (``dpgraph.release(..., keep=s)`` or
        ``target_edges=k``): its subsampled channel, exactly as the release
        builds it (``target_edges`` needs ``nodes`` and ``directed``).
    nodes : int, optional
    directed : bool, default False

    Examples
    --------
    >>> v = ["distrust", "trust", "strong"]
    >>> typed_count_std(300 * 300, 1.0, v, value="trust") == typed_cut_std(3783, 1.0, v, (300, 300),
    ...                                                                     value="trust")
    True
    """
    pairs = check_positive_int(pairs, "pairs", minimum=1)
    ties = tie_values("value", values)
    phi = ties.row_function(value, weights)
    rr = rr_probabilities(epsilon, ties.K)
    if keep is None and target_edges is None:
        channel = Channel.randomized_response(rr)
    else:
        if target_edges is not None and nodes is None:
            raise TypeError("target_edges needs nodes= (the number of nodes of the release)")
        n = 2 if nodes is None else check_positive_int(nodes, "nodes", minimum=2)
        channel = typed_subsampling(rr, n, bool(directed), keep, target_edges).channel
    per_value = channel.value_variances(phi)
    if mix is None:
        return float(math.sqrt(pairs * per_value.max()))
    if not isinstance(mix, Mapping):
        raise TypeError("mix must be a mapping {tie value: share of the pairs}, e.g. {'trust': 0.002}")
    share = np.zeros(ties.K)
    for key, f in mix.items():
        if isinstance(f, (bool, np.bool_, str, bytes)):
            raise TypeError("mix must map tie values to shares (real numbers in [0, 1])")
        f = float(f)
        if not (math.isfinite(f) and f >= 0):
            raise ValueError("mix: shares must be finite and >= 0")
        share[ties.index_of(key, "mix has a key that")] = f
    if share.sum() > 1 + 1e-12:
        raise ValueError("mix: the shares of the tie values sum to more than 1")
    share[0] = max(0.0, 1.0 - share[1:].sum())
    return float(math.sqrt(pairs * float(share @ per_value)))


def typed_cut_std(nodes: int, epsilon: float, values: Sequence, sides: Sequence[int], *,
                  value: Any = None, weights: Mapping | None = None,
                  mix: Mapping | None = None) -> float:
    """Std of a typed or weighted cut of a typed release, before the release.

    :func:`typed_count_std` over the |S||T| pairs of the cut (the worst case
    over the truth, or the exact std under an assumed ``mix``).

    Parameters
    ----------
    nodes : int
    epsilon : float
    values : sequence
        The declared tie values.
    sides : (int, int)
        |S| and |T|.
    value, weights, mix : optional
        As for :func:`typed_count_std`.

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
    return typed_count_std(a * b, epsilon, values, value=value, weights=weights, mix=mix)
