"""What community detection can resolve, and what it costs, before it runs.

:func:`~.community.communities` spends its time in five places: the pass
that copies the finding part of the pairs (one public draw per vertex
pair); the *screen*, ``4 x 10 + 1`` products of the finding adjacency with a
block of 4 vectors that decides whether two eigenvalues clear the noise
(:data:`SCREEN_BLOCK`, :data:`SCREEN_PASSES`); and, only when they do, at
least ``3 x 10 + 1`` products with a block of 16 vectors (the eigenvectors
of :mod:`.spectral`), a kNN graph of the embedding (n^2 similarities) with
Louvain on its n * knn edges, and one streamed pass over the held-out
pairs.  :func:`community_plan` predicts these seconds from public
quantities (n, the channel, the find fraction) and the release's own cheap
counts (released pairs): operation counts times fixed per-operation
constants, never a speed measured at call time, so the decision is the
same on a quiet and on a loaded machine.  It decides, in order:

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
   **No bound from n, epsilon and the edge count alone can do better**:
   sqrt(m) is attained (two disjoint cliques of about sqrt(m) nodes have
   lambda_2 about sqrt(m)), and such a graph *is* resolvable once sqrt(m)
   > sigma.  At 10^5 nodes, average degree 10 and eps = 1 (m+ about 7.5 x
   10^5, sigma about 340) the bound cannot fire: sqrt(m+) is about 870.
   There the screen answers instead, from the release itself.
2. **Within the limit**: the predicted seconds of the pair split and the
   screen fit ``max_seconds`` (the caller's choice), or, when the caller
   set none, are below :data:`~.triangle_planning.UNLIMITED_CEILING`
   (hours): run.  When the screen finds structure, the rest (the
   eigenvectors, the partition and the held-out pass) is checked against
   the time left before it starts (:func:`check_structure_stage`): a call
   that cannot finish within the limit stops there, saying what the screen
   found and which ``max_seconds`` allows the rest.
3. **Refused** (:class:`~.triangle_planning.CostLimitError`) when even the
   split and the screen exceed the limit, with the predicted seconds of
   each stage and the ``max_seconds`` that allows the whole call.

The prediction of a call whose screen finds no structure is the split and
the screen (:attr:`CommunityPlan.detect_seconds`); with structure, the
eigen block may double (more than 12 eigenvalues above the edge) and the
merging products are not counted (measured: docs/scaling.md, section 8).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...core.estimators import count_estimate
from ..kinds import offers
from ..packed import words_per_row
from .spectral import noise_variance
from .triangle_planning import (
    UNLIMITED_CEILING,
    Z_PLAUSIBLE,
    CostLimitError,
    _secs,
    how_to_allow,
    limit_seconds,
)

__all__ = ["SCREEN_BLOCK", "SCREEN_PASSES", "CommunityPlan", "CostLimitError", "StageProgress",
           "check_structure_stage", "community_plan", "eigen_products"]

#: seconds per unit of work on a 2-core AMD EPYC (numba).  The product's constant was
#: measured at n = 20,000 under a load average of about 5, the others in one profiled
#: call at n = 20,000 under a load average of about 8: fixed, so that a prediction (and
#: the decision) does not move with the load of the machine it is made on
_SEC_BYTE_COL = 1.75e-9  # packed product: one byte of the upper triangle, one column
_SEC_PAIR_COL = 2e-9     # sparse (scipy CSR) product: one stored pair, one column, both ways
_SEC_SPLIT_PAIR = 22e-9  # the finding copy: one vertex pair
_SEC_COUNT_PAIR = 140e-9  # the held-out pass: one vertex pair, one candidate (counterfactual too)
_SEC_SIM = 65e-9         # the kNN graph: one cosine similarity and its partial sort
_SEC_EDGE = 210e-6       # Louvain (networkx) and building its graph: one kNN edge
_BLOCK = 16              # the first eigen block (spectral.eigen_above)
#: vectors of the screen's block: two eigenvalues to find, two spare
SCREEN_BLOCK = 4
#: filter passes of the screen, one more than the eigen block's three: a random block of 4
#: starts further from the top two eigenvectors than one of 16 (the smallest singular value
#: of a 2 x 4 Gaussian matrix is about 2 - sqrt(2) = 0.59, of a 2 x 16 one about 4 - sqrt(2)
#: = 2.59: 4.4 x further), and one more degree-10 Chebyshev pass multiplies an eigenvalue
#: 3% above the threshold by T_10(1.03) = 5.8 against the bulk, so the screen's top two Ritz
#: values are at least as converged as those of the block of 16 for every eigenvalue the
#: test counts; at 4 / 16 of the columns its 41 products cost about 1/3 of the 31
#: (measured: 0.79 s against 2.7 s a product at 2 x 10^4 nodes)
SCREEN_PASSES = 4
#: below this many nodes the eigen iteration is an exact dense eigendecomposition: no screen
SCREEN_MIN_NODES = 400


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
        clear the noise) or ``"refused"`` (over ``max_seconds``, or hours
        without one).
    n : int
    edges, edges_high : float
        The debiased edge count m^ and its upper bound m+ (level 1 - 10^-4).
    sigma : float
        sqrt(n s^2): half the noise edge of the finding part's spectrum.
    largest_second : float
        sqrt(m+): the largest second eigenvalue a graph the release is
        compatible with can have.
    detect_seconds : float
        Predicted seconds of the finding copy and the screen's products: the
        whole call when the screen finds no structure.
    partition_seconds : float
        Predicted seconds of what runs only when the screen finds structure:
        the eigen products, the kNN graph, Louvain and the held-out pass (0
        when no structure is possible).
    max_seconds : float or None
        The caller's time limit (None: none set; only a prediction above
        :data:`~.triangle_planning.UNLIMITED_CEILING` is refused).
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
    max_seconds: float | None
    reason: str
    #: (stage, predicted seconds) in the order they run, for the progress bar
    stages: tuple = ()

    @property
    def seconds(self) -> float:
        """Predicted seconds of the whole call."""
        return self.detect_seconds + self.partition_seconds


def _product_model(R: Any, n: int, cols: int, find: float) -> float:
    """Model seconds of one product of the finding adjacency with ``cols`` vectors."""
    if "csr" in offers(R):  # CSR rows: the finding part keeps about find * stored pairs
        return find * int(R.adjacency.indptr[-1]) * cols * _SEC_PAIR_COL
    return 8 * n * words_per_row(n) / 2 * cols * _SEC_BYTE_COL


def community_plan(R: Any, max_seconds: float | None, split: Any, knn: int,
                   candidates: int = 1) -> CommunityPlan:
    """Predict what :func:`~.community.communities` can resolve and costs, and decide.

    Parameters
    ----------
    R : PrivateGraph
        An undirected release of at least 3 nodes.
    max_seconds : float or None
        Wall-clock seconds the call may take; None: the enclosing
        :func:`~.triangle_planning.time_limit`, else no limit (only a
        prediction above :data:`~.triangle_planning.UNLIMITED_CEILING` is
        refused).
    split : PairSplit
        The public split of the pairs (its find fraction).
    knn : int
        Neighbours per node of the kNN graph.
    candidates : int, default 1
        Candidate partitions scored in the held-out pass (4 for ``"auto"``).

    Returns
    -------
    CommunityPlan

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> R = dpgraph.release(nx.karate_club_graph(), epsilon=0.1, seed=0)
    >>> from dpgraph.graph.analytics._pairsplit import PairSplit
    >>> community_plan(R, None, PairSplit(34, 0.1, 0.05, 0), 10).mode
    'unresolvable'
    """
    limit, given = limit_seconds(max_seconds)
    n = int(R.number_of_nodes())
    pairs = int(R.number_of_pairs())
    e = count_estimate(R.number_of_released_edges(), pairs, R.channel)
    m_hat, m_sd = float(e.value), float(e.std)
    m_hi = min(float(pairs), max(0.0, m_hat + Z_PLAUSIBLE * m_sd))
    rho = float(np.clip(m_hat / pairs, 0.0, 1.0))
    find = split.find_fraction
    sigma = math.sqrt(n * noise_variance(R.channel, rho, find))
    second = math.sqrt(m_hi)
    products = eigen_products() * _product_model(R, n, _BLOCK, find)
    screen = (eigen_products(SCREEN_PASSES) * _product_model(R, n, SCREEN_BLOCK, find)
              if n > SCREEN_MIN_NODES else 0.0)
    split_pass = pairs * _SEC_SPLIT_PAIR
    partition = float(n) * n * _SEC_SIM + n * knn * _SEC_EDGE + pairs * candidates * _SEC_COUNT_PAIR
    base = dict(n=n, edges=m_hat, edges_high=m_hi, sigma=sigma, largest_second=second,
                max_seconds=limit if given else None)
    if second <= sigma:
        reason = (f"a graph with at most {m_hi:,.0f} edges has no second eigenvalue above "
                  f"{second:,.4g}, below the noise scale {sigma:,.4g} of the finding part: no "
                  "community structure can clear the noise at this epsilon, answered without "
                  "computing")
        return CommunityPlan("unresolvable", detect_seconds=0.0, partition_seconds=0.0,
                             reason=reason, **base)
    detect = split_pass + screen
    partition += products
    total = detect + partition
    base["stages"] = (("pair split", split_pass), ("screen", screen), ("spectrum", products),
                      ("partition", float(n) * n * _SEC_SIM + n * knn * _SEC_EDGE),
                      ("held-out scoring", pairs * candidates * _SEC_COUNT_PAIR))
    stages = (f"about {_secs(detect)} predicted to test for structure (the pair split and "
              f"{eigen_products(SCREEN_PASSES)} products of the release with {SCREEN_BLOCK} "
              f"vectors), {_secs(partition)} more only if it is found (the eigenvectors, the "
              f"partition and the held-out score), {_secs(total)} in all")
    if detect <= limit:
        within = ("no limit set" if not given else f"within max_seconds={limit:g}"
                  if total <= limit else f"the test within max_seconds={limit:g}, the rest "
                  "checked against the time left if structure is found")
        return CommunityPlan("run", detect_seconds=detect, partition_seconds=partition,
                             reason=f"{stages} (operation-count model), {within}", **base)
    reason = (f"community detection on {n:,} nodes: {stages} (operation-count model); "
              f"{how_to_allow(total, given, limit)}; nothing was computed")
    return CommunityPlan("refused", detect_seconds=detect, partition_seconds=partition,
                         reason=reason, **base)


def check_structure_stage(plan: CommunityPlan, spent: float, above: int) -> None:
    """Before the stages that run only on structure: raise if they cannot finish within the limit.

    ``spent`` is the seconds the call has run, ``above`` the eigenvalues the
    screen found above the threshold.  The limit is the caller's
    ``max_seconds``, else :data:`~.triangle_planning.UNLIMITED_CEILING`.

    Raises
    ------
    CostLimitError
        ``spent`` plus the predicted seconds of the rest exceed the limit;
        the message says what the screen found and the ``max_seconds`` that
        allows the whole call.
    """
    given = plan.max_seconds is not None
    limit = plan.max_seconds if given else UNLIMITED_CEILING
    if spent + plan.partition_seconds <= limit:
        return
    raise CostLimitError(
        f"community detection on {plan.n:,} nodes: the screen found {above} eigenvalues above "
        f"the noise in {_secs(spent)}, so communities are resolvable; the eigenvectors, the "
        f"partition and the held-out score are predicted to take {_secs(plan.partition_seconds)} "
        f"more (operation-count model); {how_to_allow(spent + plan.partition_seconds, given, limit)}"
        "; nothing was kept")


class StageProgress:
    """A tqdm bar over the stages of a plan, each advancing by its predicted seconds.

    The bar's unit is a predicted second, so its rate is the speed of this
    machine now against the model and its estimated time left adapts to the
    load.  ``deadline`` (a :class:`~.triangle_planning.Deadline`) is checked
    at each stage boundary.  ``show=None`` shows the bar for 5,000 nodes or
    more when the error stream is a terminal; tqdm missing means no bar.
    """

    def __init__(self, plan: CommunityPlan, show: bool | None, deadline: Any) -> None:
        import sys

        self.stages = dict(plan.stages)
        self.deadline = deadline
        self.bar = None
        on = (plan.n >= 5000 and sys.stderr.isatty()) if show is None else bool(show)
        if on and self.stages:
            try:
                from tqdm.auto import tqdm
            except ImportError:  # pragma: no cover - optional
                return
            self.bar = tqdm(total=sum(self.stages.values()), desc="communities",
                            unit="s predicted", leave=False)

    def done(self, stage: str) -> None:
        """``stage`` finished: advance the bar, and stop if the caller's limit has passed."""
        if self.bar is not None:
            self.bar.set_postfix_str(stage, refresh=False)
            self.bar.update(self.stages.get(stage, 0.0))
        self.deadline.check()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
