"""``dpgraph.release``: the entry point a curator calls."""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

from ..core.probabilities import rr_probabilities
from ..core.randomness import SeedLike, resolve_random, warn_if_seeded
from ..validation import Boolean, Epsilon, validate_params
from .encoding import encode_graph
from .private import PrivateGraph
from .release import release_packed
from .sparse import release_sparse, subsampled_probabilities

__all__ = ["release"]


@validate_params(epsilon=Epsilon(), directed=Boolean())
def release(
    G: Any,
    epsilon: float,
    seed: SeedLike = None,
    *,
    directed: bool = False,
    keep: Real | None = None,
    target_edges: Integral | None = None,
    ledger: Any = None,
) -> PrivateGraph:
    """Release ``G`` as an epsilon-edge-DP synthetic graph (mechanism E).

    Every vertex pair is flipped independently with the certified dyadic
    probability p' >= e^-eps / (1 + e^-eps), so graphs differing in one pair
    give output distributions within a factor e^eps.  The vertex set is
    public; edge and node attributes are dropped.

    Parameters
    ----------
    G : networkx.Graph or networkx.DiGraph
        Simple graph: no self-loops, no parallel edges, at least 2 nodes.
    epsilon : float
        Privacy parameter per vertex pair, finite and > 0.
    seed : None, int or numpy.random.Generator
        ``None`` (default) draws from a cryptographically secure stream keyed
        from OS entropy: use it for every real release.  An int or Generator
        makes the release reproducible, which is for tests and experiments
        only (a statistical generator can be predicted from its output).
    directed : bool, default False
        Opt in to releasing a DiGraph, one row per ordered pair.
    keep : float in (0, 1], optional
        Sparse release: keep each released edge with probability ``keep``
        (rounded to a multiple of 2^-64).  That is post-processing, so the
        privacy guarantee is unchanged; a pair is in the output with
        probability keep (1 - p') if it is an edge and keep p' if not, and the
        estimators use exactly these.  Sampled in O(m + output) time and
        memory, never touching all pairs (see :mod:`dpgraph.graph.sparse`).
    target_edges : int, optional
        Sparse release sized for about ``target_edges`` released edges:
        keep = target_edges / (p' N), chosen from public quantities only.
        At most p' N, what the full release would give.
    ledger : dpgraph.PrivacyLedger, optional
        Charge ``epsilon`` to this privacy budget (see SECURITY.md).  A release
        that would exceed it raises :class:`dpgraph.BudgetExceededError`
        before any randomness is drawn.

    Returns
    -------
    PrivateGraph
        Bit-packed adjacency for the full release, CSR
        (:class:`~dpgraph.graph.sparse.SparseAdjacency`) for a sparse one.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> R = dpgraph.release(nx.karate_club_graph(), epsilon=1.0, seed=0)
    >>> R.number_of_nodes(), R.directed
    (34, False)

    A sparse release with about 30 released non-edges (plus the kept true edges):

    >>> S = dpgraph.release(nx.karate_club_graph(), epsilon=1.0, seed=0, target_edges=30)
    >>> 10 < S.number_of_edges() < 60, round(S.keep, 3)
    (True, 0.199)
    """
    from ..ledger import PrivacyLedger

    if ledger is not None and not isinstance(ledger, PrivacyLedger):
        raise TypeError(
            f"ledger must be a dpgraph.PrivacyLedger or None, got {type(ledger).__name__}"
        )
    rr = rr_probabilities(epsilon, 2)
    enc = encode_graph(G, directed=directed)
    sparse = keep is not None or target_edges is not None
    probs = subsampled_probabilities(rr, enc.n, directed, keep, target_edges) if sparse else None
    # every input is validated above; nothing random has been drawn yet
    source = resolve_random(seed)
    if ledger is not None:
        ledger.charge(epsilon, enc)
    warn_if_seeded(source)
    if probs is not None:
        adjacency = release_sparse(enc, probs, source)
        return PrivateGraph(adjacency, enc.index, rr, channel=probs.channel, keep=probs.keep)
    adjacency = release_packed(enc, rr, source)
    return PrivateGraph(adjacency, enc.index, rr)
