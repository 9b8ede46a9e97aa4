"""What community detection can resolve, and what it costs, before it runs.

:func:`~.community.communities` spends its time in four places: the pass
that copies the finding part of the pairs (one public draw per vertex
pair), at least ``3 x 10 + 1`` products of the finding adjacency with a
block of 16 vectors (the Chebyshev-filtered eigen iteration of
:mod:`.spectral`), and, when structure is found, a kNN graph of the
embedding (n^2 similarities) with Louvain on its n * knn edges and one
streamed pass over the held-out pairs.  :func:`community_plan` predicts
these seconds from public quantities (n, the channel, the find fraction)
and the release's own cheap counts (released pairs), with the speed of a
product measured now on a corner of the release, and decides, in order:

1. **Not resolvable, at once.**  The debiased adjacency of the finding part
   is the true adjacency X plus noise of spectrum edge 2 sigma, sigma^2 = n
   s^2 (:func:`.spectral.noise_variance`).  A structural eigenvalue theta of
   X moves outside the noise only when theta > sigma (the BBP transition;
   it then appears at theta + sigma^2 / theta), and the second eigenvalue
   of any graph with m edges is at most sqrt(m) (lambda_1 >= lambda_2 and
   lambda_1^2 + lambda_2^2 <= 2 m).  With m at its upper bound m+ = m^ +
   3.72 sd(m^) (one-sided level 1 - 10^-4): when sqrt(m+) <= sigma no graph
   the release is compatible with can show two eigenvalues above the edge,
   so the spectral test would find fewer than two and the answer is the
   trivial, unresolved partition -- given without any pass.
2. **Within budget**: the predicted seconds fit ``budget_seconds``: run.
3. **Refused** (:class:`~.triangle_planning.CostLimitError`) with the
   predicted seconds of each stage and the argument that allows it.

The partition stage is counted whenever structure is possible, so a call
whose spectrum finds none takes less; the prediction can also be low: the
eigen block may double (more than 12 eigenvalues above the edge), and the
merging products are not counted (measured: docs/scaling.md, section 8).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...core.estimators import count_estimate
from ..packed import PackedAdjacency, words_per_row
from .spectral import noise_variance
from .triangle_planning import CALIBRATE_ABOVE, Z_PLAUSIBLE, CostLimitError, _secs

__all__ = ["CommunityPlan", "CostLimitError", "community_plan", "eigen_products"]

#: seconds per unit of work on a 2-core AMD EPYC (numba).  The product's constant was
#: measured at n = 20,000 under a load average of about 5, the others in one profiled
#: call at n = 20,000 under a load average of about 8, with the draw constant beside
#: them: each group is scaled by the speed measured now (:func:`_measure`)
_SEC_BYTE_COL = 1.75e-9  # packed product: one byte of the upper triangle, one column
_SEC_PAIR_COL = 2e-9     # sparse (scipy CSR) product: one stored pair, one column, both ways
_SEC_DRAW = 15e-9        # one public 16-bit draw of the pair split (the numpy reference)
_SEC_SPLIT_PAIR = 22e-9  # the finding copy: one vertex pair
_SEC_COUNT_PAIR = 140e-9  # the held-out pass: one vertex pair, one candidate (counterfactual too)
_SEC_SIM = 65e-9         # the kNN graph: one cosine similarity and its partial sort
_SEC_EDGE = 210e-6       # Louvain (networkx) and building its graph: one kNN edge
_BLOCK = 16              # the first eigen block (spectral.eigen_above)
_CORNER = 16384          # rows of the corner whose product is timed


def eigen_products(passes: int = 3, degree: int = 10) -> int:
    """Products of the first eigen block: ``passes * degree`` filter steps plus Rayleigh-Ritz."""
    return passes * degree + 1


@dataclass(frozen=True)
class CommunityPlan:
    """The decision taken before community detection, with its numbers.

    Attributes
    ----------
    mode : str
        ``"run"``, ``"unresolvable"`` (answered at once: no structure can
        clear the noise) or ``"refused"`` (over ``budget_seconds``).
    n : int
    edges, edges_high : float
        The debiased edge count m^ and its upper bound m+ (level 1 - 10^-4).
    sigma : float
        sqrt(n s^2): half the noise edge of the finding part's spectrum.
    largest_second : float
        sqrt(m+): the largest second eigenvalue a graph the release is
        compatible with can have.
    detect_seconds : float
        Predicted seconds of the finding copy and the eigen products.
    partition_seconds : float
        Predicted seconds of the kNN graph, Louvain and the held-out pass (0
        when no structure is possible).
    budget_seconds : float
    slowdown : float
        Measured over modelled seconds of a product (1 when not measured);
        the other stages are scaled by the measured speed of numpy work.
    reason : str
        One sentence saying what was decided and why.
    """

    mode: str
    n: int
    edges: float
    edges_high: float
    sigma: float
    largest_second: float
    detect_seconds: float
    partition_seconds: float
    budget_seconds: float
    slowdown: float
    reason: str

    @property
    def seconds(self) -> float:
        """Predicted seconds of the whole call."""
        return self.detect_seconds + self.partition_seconds


def _product_model(adj: Any, n: int, cols: int, find: float) -> float:
    """Model seconds of one product of the finding adjacency with ``cols`` vectors."""
    if hasattr(adj, "indptr"):  # CSR rows: the finding part keeps about find * stored pairs
        return find * int(adj.indptr[-1]) * cols * _SEC_PAIR_COL
    return 8 * n * words_per_row(n) / 2 * cols * _SEC_BYTE_COL


def _corner(adj: Any, n: int) -> tuple[Any, int] | None:
    """The first r rows and columns of a packed or CSR release, as the same kind of adjacency."""
    r = min(n, _CORNER)
    words = getattr(adj, "words", None)
    if words is not None:
        if r < n:
            r -= r % 64
        sub = np.ascontiguousarray(words[:r, : words_per_row(r)])
        return PackedAdjacency(sub, r, False), r
    if hasattr(adj, "indptr"):
        from ..sparse import SparseAdjacency

        rows, cols = adj.edge_array()
        keep = (rows < r) & (cols < r)
        return SparseAdjacency.from_pairs(rows[keep], cols[keep], r, False), r
    return None


def _measure(adj: Any, n: int, split: Any) -> tuple[float, float]:
    """Measured over modelled seconds now: (a product, the numpy work), each >= 0.1.

    The product is timed on the corner of the release (its own storage, its
    first rows and columns: public positions; the product is discarded; 1
    when the storage offers no corner), the numpy work on the draws of the
    split's first row block (public randomness).
    """
    t0 = time.perf_counter()
    split.draws(0)
    numpy = (time.perf_counter() - t0) / max(min(64, n) * n * _SEC_DRAW, 1e-9)
    corner = _corner(adj, n)
    if corner is None:
        return 1.0, max(0.1, numpy)
    sub, r = corner
    X = np.random.default_rng(0).standard_normal((r, _BLOCK))
    if hasattr(adj, "words") and r > 64:  # load the compiled kernel before timing it
        _corner(adj, 64)[0].matmat(X[:64])
    t0 = time.perf_counter()
    sub.matmat(X)
    spent = time.perf_counter() - t0
    model = _product_model(sub, r, _BLOCK, 1.0)
    return max(0.1, spent / max(model, 1e-9)), max(0.1, numpy)


def community_plan(R: Any, budget_seconds: float, split: Any, knn: int, candidates: int = 1,
                   calibrate: bool = True) -> CommunityPlan:
    """Predict what :func:`~.community.communities` can resolve and costs, and decide.

    Parameters
    ----------
    R : PrivateGraph
        An undirected release of at least 3 nodes.
    budget_seconds : float
        Wall-clock seconds the call may take (validated by the caller).
    split : PairSplit
        The public split of the pairs (its find fraction; its draws are timed).
    knn : int
        Neighbours per node of the kNN graph.
    candidates : int, default 1
        Candidate partitions scored in the held-out pass (4 for ``"auto"``).
    calibrate : bool, default True
        When the model predicts more than a second, time one product with a
        corner of the release (at most 16,384 rows) and the split's first
        draws, and scale the model by the measured speeds: a loaded machine
        is refused sooner, not late.

    Returns
    -------
    CommunityPlan

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> R = dpgraph.release(nx.karate_club_graph(), epsilon=0.1, seed=0)
    >>> from dpgraph.graph.analytics._pairsplit import PairSplit
    >>> community_plan(R, 60.0, PairSplit(34, 0.1, 0.05, 0), 10).mode
    'unresolvable'
    """
    n = int(R.number_of_nodes())
    pairs = int(R.number_of_pairs())
    e = count_estimate(R.number_of_released_edges(), pairs, R.channel)
    m_hat, m_sd = float(e.value), float(e.std)
    m_hi = min(float(pairs), max(0.0, m_hat + Z_PLAUSIBLE * m_sd))
    rho = float(np.clip(m_hat / pairs, 0.0, 1.0))
    find = split.find_fraction
    sigma = math.sqrt(n * noise_variance(R.channel, rho, find))
    second = math.sqrt(m_hi)
    adj = R.adjacency
    products = eigen_products() * _product_model(adj, n, _BLOCK, find)
    split_pass = pairs * _SEC_SPLIT_PAIR
    partition = float(n) * n * _SEC_SIM + n * knn * _SEC_EDGE + pairs * candidates * _SEC_COUNT_PAIR
    slowdown = 1.0
    base = dict(n=n, edges=m_hat, edges_high=m_hi, sigma=sigma, largest_second=second,
                budget_seconds=float(budget_seconds))
    if second <= sigma:
        reason = (f"a graph with at most {m_hi:,.0f} edges has no second eigenvalue above "
                  f"{second:,.4g}, below the noise scale {sigma:,.4g} of the finding part: no "
                  "community structure can clear the noise at this epsilon, answered without "
                  "computing")
        return CommunityPlan("unresolvable", detect_seconds=0.0, partition_seconds=0.0,
                             slowdown=1.0, reason=reason, **base)
    numpy = 1.0
    if calibrate and products + split_pass + partition > CALIBRATE_ABOVE:
        slowdown, numpy = _measure(adj, n, split)
    detect = products * slowdown + split_pass * numpy
    partition *= numpy
    total = detect + partition
    stages = (f"about {_secs(total)} predicted: {_secs(detect)} to find the spectrum "
              f"({eigen_products()} products of the release with {_BLOCK} vectors), "
              f"{_secs(partition)} to partition and score")
    if total <= budget_seconds:
        return CommunityPlan("run", detect_seconds=detect, partition_seconds=partition,
                             slowdown=slowdown, reason=f"{stages}, within the budget", **base)
    reason = (f"community detection on {n:,} nodes: {stages}; it exceeds "
              f"budget_seconds={budget_seconds:g}. Pass budget_seconds={math.ceil(total * 1.5):d} "
              "(or more) to run it; nothing was computed")
    return CommunityPlan("refused", detect_seconds=detect, partition_seconds=partition,
                         slowdown=slowdown, reason=reason, **base)
