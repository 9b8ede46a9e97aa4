"""Standard deviations of counts (cuts, the edge count, a degree) from public quantities.

Exact for a full release; for a sparse release (``keep`` or
``target_edges``) the std the release reports (the worst case over the
truth), from the same channel the release builds.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

from ..core import Channel, count_estimate, pair_count, rr_probabilities
from ..validation import Boolean, Integer, Interval, Optional, Probability, validate_params

__all__ = [
    "count_std",
    "cut_std",
    "degree_std",
    "keep_probability",
    "number_of_edges_std",
]


# ----------------------------------------------------------------------------- validation
#: The largest vertex set planned: every count of pairs (and its cube) is then a finite float.
MAX_NODES = 2**53
#: Declared constraints of the planner's arguments (see dpgraph.validation.validate_params).
NODES = Integer(minimum=2, maximum=MAX_NODES)
ROWS = Integer(minimum=1, maximum=MAX_NODES * (MAX_NODES - 1))
KEEP = Optional(Probability(example="0.1"))
TARGET_EDGES = Optional(Integer(minimum=1))
ASSUMED = Interval(numbers.Real, 0, None, example="1000")  # an assumed count: finite, >= 0
POSITIVE = Interval(numbers.Real, 0, None, closed="neither", example="100")
SUBSAMPLE = dict(directed=Boolean(), keep=KEEP, target_edges=TARGET_EDGES)


def _check_sides(sides: Any, nodes: int) -> tuple[int, int]:
    try:
        a, b = sides
    except (TypeError, ValueError):
        raise TypeError("sides must be a pair (|S|, |T|) of side sizes, e.g. sides=(100, 200)") from None
    a = Integer(minimum=1)(a, "sides[0] (|S|)")
    b = Integer(minimum=1)(b, "sides[1] (|T|)")
    if a + b > nodes:
        raise ValueError(
            f"sides: |S| + |T| = {a + b} exceeds nodes={nodes}; the sides of a cut are disjoint"
        )
    return a, b


# ----------------------------------------------------------------------------- exact stds
def _check_subsample(keep: Any, target_edges: Any) -> None:
    """Refuse both; each is declared (``KEEP``, ``TARGET_EDGES``) by the public function."""
    if keep is not None and target_edges is not None:
        raise ValueError("give keep or target_edges (a sparse release), not both")


def _channel(epsilon: float, nodes: int = 2, directed: bool = False, keep: Any = None,
             target_edges: Any = None) -> Channel:
    """The channel of a release at ``epsilon``: randomized response, subsampled if asked.

    A sparse release's channel comes from
    :func:`dpgraph.core.subsampled_probabilities`, the function the
    release itself calls, so the plan is exact for the release made.
    """
    _check_subsample(keep, target_edges)
    rr = rr_probabilities(epsilon)
    if keep is None and target_edges is None:
        return Channel.randomized_response(rr)
    from ..core import subsampled_probabilities

    return subsampled_probabilities(rr, nodes, directed, keep, target_edges).channel


@validate_params(nodes=NODES, **SUBSAMPLE)
def keep_probability(nodes: int, epsilon: float, directed: bool = False, *,
                     keep: float | None = None, target_edges: int | None = None) -> float:
    """The keep probability s of a sparse release (1.0 for a full release).

    ``target_edges`` gives s = target_edges / (p' N) from public quantities,
    rounded to a multiple of 2^-64 as the release rounds it.

    Examples
    --------
    >>> round(keep_probability(50_000, 1.0, target_edges=200_000), 7)
    0.0005949
    """
    _check_subsample(keep, target_edges)
    if keep is None and target_edges is None:
        return 1.0
    from ..core import subsampled_probabilities

    return subsampled_probabilities(rr_probabilities(epsilon), nodes, directed, keep,
                                    target_edges).keep


def _count_std(rows: int, channel: Channel) -> float:
    """The std ``count_estimate`` reports for ``rows`` pairs: exact for randomized response,
    the worst case over the truth for a subsampled channel (what the release reports)."""
    return float(count_estimate(0.0, float(rows), channel).std)


@validate_params(rows=ROWS)
def count_std(rows: int, epsilon: float) -> float:
    """Exact std of the debiased count over ``rows`` vertex pairs at ``epsilon``.

    The core's :func:`~dpgraph.core.count_estimate` standard deviation with
    the certified channel: sqrt(rows p'(1-p')) / (1 - 2p'), graph-free.

    Examples
    --------
    >>> p = rr_probabilities(1.0).flip_probability
    >>> abs(count_std(100, 1.0) - (100 * p * (1 - p)) ** 0.5 / (1 - 2 * p)) < 1e-12
    True
    """
    return _count_std(rows, _channel(epsilon))


def _entry_variances(channel: Channel) -> tuple[float, float]:
    """(v0, v1): variance of one debiased entry truly 0 and truly 1 (equal for randomized response)."""
    v0, v1 = channel.entry_variances()
    return float(v0), float(v1)


@validate_params(nodes=NODES, **SUBSAMPLE)
def cut_std(nodes: int, epsilon: float, sides: Sequence[int], directed: bool = False, *,
            keep: float | None = None, target_edges: int | None = None) -> float:
    """Exact std of a cut estimate between disjoint sides of the given sizes.

    With ``keep`` or ``target_edges`` (a sparse release, as
    :func:`dpgraph.release` takes them), the std the sparse release reports:
    the worst case over the truth.  The same holds for every std below.

    Parameters
    ----------
    nodes : int
        Number of nodes (>= 2); bounds |S| + |T|.
    epsilon : float
        Privacy parameter per vertex pair.
    sides : (int, int)
        |S| and |T|, each >= 1.
    directed : bool, default False
        For a directed release the cut counts edges from S to T: the same
        |S||T| rows.
    keep, target_edges : optional
        A sparse release's subsampling (one of them).

    Examples
    --------
    >>> round(cut_std(4039, 1.0, (100, 200)), 3)
    135.696
    """
    a, b = _check_sides(sides, nodes)
    return _count_std(a * b, _channel(epsilon, nodes, directed, keep, target_edges))


@validate_params(nodes=NODES, **SUBSAMPLE)
def number_of_edges_std(nodes: int, epsilon: float, directed: bool = False, *,
                        keep: float | None = None, target_edges: int | None = None) -> float:
    """Exact std of the debiased edge count (all N vertex pairs).

    Parameters
    ----------
    nodes : int
        Number of nodes (>= 2).
    directed : bool, default False
        N = n(n-1) ordered pairs if True, n(n-1)/2 otherwise.
    epsilon, keep, target_edges
        As in :func:`cut_std`.

    Examples
    --------
    >>> number_of_edges_std(4039, 1.0) == count_std(4039 * 4038 // 2, 1.0)
    True

    A sparse release of 200,000 released edges at 50,000 nodes:

    >>> f"{number_of_edges_std(50_000, 1.0, target_edges=200_000):.3g}"
    '2.68e+06'
    """
    return _count_std(pair_count(nodes, directed),
                      _channel(epsilon, nodes, directed, keep, target_edges))


@validate_params(nodes=NODES, **SUBSAMPLE)
def degree_std(nodes: int, epsilon: float, directed: bool = False, *,
               keep: float | None = None, target_edges: int | None = None) -> float:
    """Exact std of one node's debiased degree (out-degree if directed).

    Parameters
    ----------
    nodes : int
        Number of nodes n (>= 2); a degree counts n - 1 rows.
    directed : bool, default False
        Out-degrees of a directed release cover the same n - 1 rows.
    epsilon, keep, target_edges
        As in :func:`cut_std`.

    Examples
    --------
    >>> degree_std(100, 2.0) == count_std(99, 2.0)
    True
    """
    return _count_std(nodes - 1, _channel(epsilon, nodes, directed, keep, target_edges))


