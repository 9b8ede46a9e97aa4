"""Cut queries and edges within a set: the mission's queries, answered from the release.

A cut query counts the edges between disjoint node sets S and T: it is the
core's :class:`~dpgraph.core.CountingQuery` with phi(v) = v on the |S||T|
pairs of S x T, answered without bias and with the exact, graph-independent
standard deviation sqrt(|S||T| p'(1 - p')) / (1 - 2 p').  The adjacency
evaluates it: it counts the released pairs in one pass over the rows it
needs (one pass for a whole batch).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ...core.estimate import Estimate
from ...core.estimators import CountingQuery
from ...core.pairs import pair_count
from ...validation import validate_params
from ..answers import PROPER, analytic
from ..degree_channel import channel_of, fused_cut, fused_cuts
from ..protocol import Release

__all__ = ["cut", "cut_batch", "cuts", "edges_within"]


def _count(R: Release, observed: object, pairs: object, proper: bool) -> Estimate:
    """The edge count over ``pairs`` vertex pairs (array: a batch) from its released count."""
    rows = np.asarray(pairs, dtype=float)
    return CountingQuery([[0.0, 1.0]], rows[..., None]).answer(
        np.asarray(observed, dtype=float), R.channel, proper)


def _is_typed(R: Release, value: Any, weights: Any) -> bool:
    """Whether a cut goes through the typed estimators (a typed release, or value=/weights=)."""
    if value is None and weights is None:
        return getattr(R, "tie_values", None) is not None
    if getattr(R, "tie_values", None) is None:
        raise TypeError("value= and weights= count ties by value: they need a typed release, "
                        "dpgraph.release(G, eps, edge_attr=..., values=[...]); this release is "
                        "untyped")
    return True


def _typed_cut(R: Release, sides: list, value: Any, weights: Any, proper: bool,
               batch: bool) -> Estimate:
    """Typed or weighted counts of cut queries from their released value histograms."""
    from ..typed.estimators import row_function, typed_count

    phi = row_function(R, value, weights)
    counts = np.array([R.adjacency.value_cut_counts(s, t) for s, t in sides], dtype=float)
    return typed_count(R, counts if batch else counts[0], phi, proper)


@analytic
@validate_params(proper=PROPER)
def cut(R: Release, S: Iterable[Hashable], T: Iterable[Hashable] | None = None,
        proper: bool = True, *, value: Any = None, weights: Mapping | None = None) -> Estimate:
    """Estimate the number of edges between disjoint node sets S and T.

    The core's unbiased count over the |S||T| pairs, with the exact
    graph-independent standard deviation sqrt(|S||T| p'(1-p')) / (1 - 2p')
    (docs/design.md), proper by default.  For a directed release, edges
    from S to T.

    Parameters
    ----------
    S : collection of nodes
        Non-empty; duplicates are ignored.
    T : collection of nodes, optional
        Disjoint from S, non-empty.  Default: every node not in S (the
        complement), as in ``networkx.cut_size``.
    proper : bool, default True
        Round and clip the estimate to an integer in 0..|S||T| (``raw`` keeps
        the unbiased estimate); False returns the unbiased estimate itself.
    value : a declared tie value, optional
        Typed release only: count the S-T ties of this value.  Without
        ``value`` or ``weights`` a typed release counts ties of any value.
    weights : mapping {tie value: weight}, optional
        Typed release only: the sum over S x T of a declared weight per value
        (e.g. ``{"trust": 1, "distrust": -1}``: net trust); "no tie" weighs 0.

    Returns
    -------
    Estimate
        The number of S-T edges (``raw``: unbiased); ``std`` is exact and
        graph-independent.  On a typed release (K > 2 values) ``std`` is the
        plug-in estimate of the exact, truth-dependent standard deviation
        (``exact_std`` False; see :mod:`dpgraph.graph.typed.estimators`).

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.karate_club_graph()
    >>> R = dpgraph.release(G, epsilon=2.0, seed=1)      # seed: reproducible, not for production
    >>> S, T = range(0, 17), range(17, 34)
    >>> est = R.cut(S, T)
    >>> truth = nx.cut_size(G, S, T)
    >>> abs(est.value - truth) < 5 * est.std
    True
    >>> R.cut(S).value == est.value     # T defaults to the complement of S
    True
    """
    s, t = R.cut_positions(S, T)
    if _is_typed(R, value, weights):
        return _typed_cut(R, [(s, t)], value, weights, proper, batch=False)
    if channel_of(R) is not None:  # fused with the noisy degrees
        return fused_cut(R, s, t, proper)
    observed = R.adjacency.cut_count(s, t)
    return _count(R, observed, s.size * t.size, proper)


@analytic
@validate_params(proper=PROPER)
def cuts(R: Release, pairs: Sequence[tuple[Iterable[Hashable], Iterable[Hashable]]],
         proper: bool = True, *, value: Any = None, weights: Mapping | None = None) -> Estimate:
    """Estimate many cut queries at once; a batch :class:`Estimate`.

    ``cuts(pairs)[k]`` equals ``cut(*pairs[k])``; the released counts of
    all queries are computed in one pass over the packed rows.

    Parameters
    ----------
    pairs : sequence of (S, T)
        Each S and T a non-empty collection of nodes, disjoint; T may be
        None for the complement of S.
    proper : bool, default True
        Round and clip every estimate to an integer in 0..|S||T| (``raw``
        keeps the unbiased ones).
    value, weights : optional
        Typed release only, as for :func:`cut`.

    Returns
    -------
    Estimate
        A batch: ``.value`` and ``.std`` are arrays, one entry per pair.

    Raises
    ------
    TypeError, ValueError
        For a malformed pair, an empty or overlapping side, or unknown
        nodes; the message names the pair (``pairs[k]``).

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> R = dpgraph.release(nx.path_graph(6), epsilon=1.0, seed=0)
    >>> est = R.cuts([([0, 1], [2, 3]), ([4], [5])])
    >>> len(est), est.value.shape
    (2, (2,))
    """
    if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Iterable):
        raise TypeError("pairs must be a sequence of (S, T) tuples")
    sides, rows = [], []
    for k, pair in enumerate(pairs):
        try:
            S, T = pair
        except (TypeError, ValueError):
            raise TypeError(f"pairs[{k}] must be an (S, T) tuple of node collections") from None
        try:
            s, t = R.cut_positions(S, T)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"pairs[{k}]: {exc}") from None
        sides.append((s, t))
        rows.append(s.size * t.size)
    if not rows:
        raise ValueError("pairs is empty; pass at least one (S, T) query")
    if _is_typed(R, value, weights):
        return _typed_cut(R, sides, value, weights, proper, batch=True)
    if channel_of(R) is not None:
        return fused_cuts(R, sides, proper)
    observed = R.adjacency.cut_counts(sides)  # one pass over the rows where it can
    return _count(R, observed, rows, proper)


@analytic
@validate_params(proper=PROPER)
def cut_batch(R: Release, membership: np.ndarray, proper: bool = True) -> Estimate:
    """Estimate Q cut queries given as one (Q x n) membership matrix, in one pass.

    Row q describes query q over ``nodes`` (column i is ``nodes[i]``).  A
    boolean matrix puts node i in S_q where True and in T_q where False
    (T_q the complement of S_q); an integer matrix uses 1 for S_q, -1 for
    T_q and 0 for nodes in neither.  ``cut_batch(M)[q]`` equals
    ``cut(S_q, T_q)``.  Complement cuts of an undirected release read
    only the rows of the smaller side, for all queries in one pass.

    Parameters
    ----------
    membership : numpy.ndarray of bool or int, shape (Q, n)
        Every row needs at least one node on each side.
    proper : bool, default True
        Round and clip every estimate to an integer in 0..|S_q||T_q| (``raw``
        keeps the unbiased ones).

    Returns
    -------
    Estimate
        A batch: ``.value`` and ``.std`` have shape (Q,).

    Raises
    ------
    TypeError, ValueError
        If ``membership`` is not a 2-D bool or integer array with n
        columns, holds values other than -1, 0, 1, or a row has an empty
        side (the message names the row).

    Examples
    --------
    >>> import networkx as nx, numpy as np, dpgraph
    >>> R = dpgraph.release(nx.path_graph(6), epsilon=1.0, seed=0)
    >>> M = np.array([[1, 1, 1, -1, -1, -1], [1, -1, 0, 0, 0, 0]])
    >>> est = R.cut_batch(M == 1)                   # halves: {0, 1, 2} vs {3, 4, 5}
    >>> bool(est.value[0] == R.cut([0, 1, 2], [3, 4, 5]).value)
    True
    >>> R.cut_batch(M).value.shape                   # signed: query 1 is {0} vs {1}
    (2,)
    """
    n = R.number_of_nodes()
    if not isinstance(membership, np.ndarray):
        raise TypeError(
            f"membership must be a numpy array of shape (Q, {n}), got {type(membership).__name__}; "
            "e.g. np.asarray(rows, dtype=bool)"
        )
    if membership.ndim != 2 or membership.shape[1] != n or membership.shape[0] == 0:
        raise ValueError(
            f"membership must have shape (Q, {n}) with Q >= 1 (one column per node, in "
            f"PrivateGraph.nodes order), got {membership.shape}"
        )
    if membership.dtype == np.bool_:
        member = np.where(membership, np.int8(1), np.int8(-1))
    elif membership.dtype.kind in "iu":
        if np.any((membership < -1) | (membership > 1)):
            raise ValueError("membership must hold 1 (node in S), -1 (in T) or 0 (in neither)")
        member = membership.astype(np.int8)
    else:
        raise TypeError(f"membership must be a bool or integer array, got dtype {membership.dtype}")
    size_s = np.count_nonzero(member == 1, axis=1)
    size_t = np.count_nonzero(member == -1, axis=1)
    empty = np.flatnonzero((size_s == 0) | (size_t == 0))
    if empty.size:
        raise ValueError(
            f"membership row {int(empty[0])} has an empty side; a cut needs at least one node in "
            "S (1 or True) and one in T (-1 or False)"
        )
    typed = _is_typed(R, None, None)
    if typed or channel_of(R) is not None:
        sides = [(np.flatnonzero(row == 1), np.flatnonzero(row == -1)) for row in member]
        if not typed:  # fused with the noisy degrees
            return fused_cuts(R, sides, proper)
        return _typed_cut(R, sides, None, None, proper, batch=True)  # ties of any value
    observed = R.adjacency.membership_cut_counts(member)
    rows = size_s.astype(float) * size_t.astype(float)
    return _count(R, observed, rows, proper)


@analytic
@validate_params(proper=PROPER)
def edges_within(R: Release, S: Iterable[Hashable], proper: bool = True) -> Estimate:
    """Estimate the number of edges with both ends in S.

    Parameters
    ----------
    S : collection of nodes
        At least 2 distinct nodes.
    proper : bool, default True
        Round and clip to an integer in 0..(number of pairs in S) (``raw``
        keeps the unbiased estimate).

    Returns
    -------
    Estimate
        Proper by default (``raw``: unbiased), with the exact std for a full
        release.

    Raises
    ------
    ValueError
        If S has fewer than 2 nodes or nodes not in the graph.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> R = dpgraph.release(nx.complete_graph(8), epsilon=3.0, seed=0)
    >>> e = R.edges_within(range(8))
    >>> abs(e.value - 28) < 5 * e.std
    True
    """
    s = R.positions(S, "S")
    pairs = pair_count(s.size, R.directed)
    if pairs == 0:
        raise ValueError("S needs at least 2 nodes to contain a vertex pair")
    return _count(R, R.adjacency.within_count(s), pairs, proper)
