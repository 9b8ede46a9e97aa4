"""Community detection from a release, with a detectability test and an honest modularity.

Three problems make community detection on a randomized-response release
different from detection on a graph:

* **Detectability.**  The debiased adjacency Z is the true adjacency plus a
  symmetric noise matrix with independent entries; the eigenvalues of such
  noise fill [-e, e] with e = 2 sqrt(n s^2) (s^2 the mean entry variance).
  Only eigenvalues of Z above e carry structure.  With fewer than two of them
  (the first one is the graph's average degree, not a split of it) the
  release cannot resolve any community at this epsilon, and the result says
  so (``Communities.resolvable`` is False, one community holding every node)
  instead of presenting a giant community and splinters of noise as an answer.
* **Selection bias.**  A partition chosen to have many released edges inside
  its communities also has, by construction, a favourable noise draw there:
  scored on the same pairs its debiased modularity is biased upward (+0.7
  on ego-Facebook at eps = 1).  No function of a pair's released bit is
  unbiased for its true value once the partition depends on that bit, so
  the vertex pairs are split with public randomness (independent of the
  graph and of the release, :mod:`._pairsplit`): communities are found on
  one part and the modularity is estimated only from another (held-out)
  part, whose noise the partition never saw (:func:`.heldout_modularity`).
* **Which clustering.**  At low epsilon most rows of the spectral embedding
  are noise and a method that places every node scatters them; at high
  epsilon the same method is the best one.  With ``method="auto"`` several
  candidate partitions are found on the finding part and the one with the
  highest modularity estimated on a third, *select* part of the pairs is
  kept; the score part stays untouched by both choices.

Nothing is n x n: the finding part is a copy of the release's own storage
restricted to its pairs (packed bits or CSR rows), eigenvectors come from
products with it (:mod:`.spectral`), the neighbour graphs have n * knn edges
and the held-out counts are k x k block sums from one streamed pass.
"""

from __future__ import annotations

import numbers
import secrets
import time
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...core.estimate import Estimate
from ...validation import Integer, Interval, Optional, Options, validate_params
from .._memory import Alternative, check_call_fits, sparse_release_alternative
from ..answers import PROGRESS, PROPER, SEED, analytic, finish
from ..answers import require_undirected as _undirected
from ..encoding import canonical_node_order
from ..protocol import Release
from . import _candidates as cl
from ._pairsplit import PairSplit
from ._shared import _cache, _entry_map
from .community_planning import (
    SCREEN_BLOCK,
    SCREEN_MIN_NODES,
    SCREEN_PASSES,
    CommunityPlan,
    CostLimitError,
    StageProgress,
    check_structure_stage,
    community_plan,
)
from .counts import number_of_edges
from .partition import heldout_modularity
from .spectral import DebiasedOperator, eigen_above, leading_eigenpairs, noise_variance
from .triangle_planning import Deadline

__all__ = ["Communities", "CostLimitError", "communities"]

METHODS = ("auto", "denoised", "spectral")
_BACKGROUND = (2.0, 4.0)  # background thresholds tried by "auto" (squared norm / noise)


@dataclass(frozen=True, repr=False)
class Communities:
    """Communities found from a release.

    Attributes
    ----------
    partition : list of frozenset
        The communities (node labels), largest first.  A single community
        holding every node when ``resolvable`` is False.
    modularity : Estimate
        Estimated modularity of ``partition`` on the true graph, from the
        held-out score part of the pairs only (exactly 0 with std 0 for a
        single community, whose modularity is 0 on every graph).
    resolvable : bool
        False when fewer than two eigenvalues of the debiased adjacency clear
        the noise edge: no community structure can be resolved at this
        epsilon (on this graph), and ``partition`` is the trivial one.
    eigenvalues : numpy.ndarray
        The leading eigenvalues of the debiased adjacency (finding part of
        the split) that were inspected, descending.
    noise_edge : float
        2 sqrt(n s^2), s^2 the mean entry variance of the finding part
        (noise of the channel plus that of a random graph of the estimated
        density): eigenvalues above it carry structure.
    n_above_edge : int
        Number of eigenvalues above the noise edge (times 1 + margin), at
        most ``max_communities``: 0 or 1 when no structure clears the noise.
    n_communities : int
        Number of communities in ``partition`` (1 for the trivial one).
    holdout : float
        Fraction of the vertex pairs held out to score the partition.
    method : str
        The method asked for ("auto", "denoised" or "spectral").
    chosen : str
        The candidate kept: "denoised", "denoised, background c" or
        "spectral" (the same as ``method`` unless it is "auto").
    selection : dict
        Candidate name -> its modularity estimated on the select part (only
        for ``method="auto"``; the score part never enters the choice).
    plan : CommunityPlan or None
        The decision taken before computing (:mod:`.community_planning`):
        predicted seconds, and ``plan.reason``, which says why a result
        answered at once is unresolved.  None below 3 nodes.
    """

    partition: list
    modularity: Estimate
    resolvable: bool
    eigenvalues: np.ndarray = field(default_factory=lambda: np.zeros(0))
    noise_edge: float = float("nan")
    n_above_edge: int = 0
    holdout: float = 0.0
    method: str = "auto"
    chosen: str = ""
    selection: dict = field(default_factory=dict)
    plan: CommunityPlan | None = None

    @property
    def n_communities(self) -> int:
        """Number of communities in ``partition`` (1 for the trivial partition)."""
        return len(self.partition)

    def labels(self, nodes: Iterable[Hashable] | None = None) -> np.ndarray:
        """Community index (order of ``partition``) of each node in ``nodes``.

        ``nodes`` defaults to every node of the release in ``R.nodes`` order
        (the canonical order of the labels), like ``partition`` covers them.
        """
        where = {v: c for c, block in enumerate(self.partition) for v in block}
        if nodes is None:
            nodes = canonical_node_order(where)
        return np.array([where[v] for v in nodes], dtype=np.int64)

    def __repr__(self) -> str:  # a summary: never the partition itself
        sizes = [len(b) for b in self.partition]
        head = ", ".join(str(s) for s in sizes[:5]) + (", ..." if len(sizes) > 5 else "")
        return (f"Communities({len(sizes)} communities, sizes [{head}], "
                f"modularity={self.modularity.value:.4f} +- {self.modularity.std:.4f} "
                f"(held-out {self.holdout:g} of pairs), resolvable={self.resolvable}, "
                f"method={self.method!r}, chosen={self.chosen!r})")


def _memory_needed(R: Any, ell: int, knn: int) -> int:
    """Bytes of the largest working set: the finding copy, the eigen blocks, the neighbour graph."""
    n = R.number_of_nodes()
    adj = R.adjacency
    finding = int(getattr(adj, "nbytes", 0))
    return finding + 8 * n * ell * 6 + 3 * 8 * n * knn + 2 * 4 * 64 * n * 4


def _candidates(method: str, X: np.ndarray, q: int, noise_sq: float, knn: int, op: Any,
                seed: int | None, resolution: float) -> dict:
    """Candidate partitions of the finding step by name: (local rule, labels == rule(X))."""
    def sums(lab, k):
        return op.block_sums(lab, k)

    out = {}
    if method in ("auto", "denoised"):
        fine = cl.knn_louvain(X, knn, seed)
        lab = cl.merge_on_blocks(sums, fine, seed, resolution)
        out["denoised"] = cl.fit_rule(X, lab, True, None)
    if method == "auto":
        for c in _BACKGROUND:
            lab = cl.with_background(X, fine, noise_sq, c)
            if lab is not None:
                lab = cl.merge_on_blocks(sums, lab, seed, resolution)
                out[f"denoised, background {c:g}"] = cl.fit_rule(X, lab, True, c * noise_sq)
    if method in ("auto", "spectral"):
        lab = cl.kmeans_labels(X, int(min(q + 1, X.shape[0])), seed)
        out["spectral"] = cl.fit_rule(X, lab, False, None)
    return out


@analytic
@validate_params(method=Options(*METHODS), max_communities=Integer(minimum=1),
                 holdout=Interval(numbers.Real, 0, 1, closed="neither", example="0.1"),
                 select=Interval(numbers.Real, 0, 1, closed="left", example="0.05"),
                 knn=Integer(minimum=1), seed=SEED,
                 margin=Interval(numbers.Real, 0, None, example="0.03"),
                 resolution=Interval(numbers.Real, 0, None, closed="neither", example="1"),
                 proper=PROPER, progress=PROGRESS,
                 max_seconds=Optional(Interval(numbers.Real, 0, None, closed="neither",
                                               example="600")))
def communities(
    R: Release,
    method: str = "auto",
    max_communities: int = 60,
    holdout: float = 0.10,
    select: float = 0.05,
    knn: int = 10,
    seed: int | None = 0,
    margin: float = 0.03,
    resolution: float = 1.0,
    proper: bool = True,
    progress: bool | None = None,
    max_seconds: float | None = None,
) -> Communities:
    """Community detection from a release, with a detectability test and an honest modularity.

    1. The vertex pairs are split at random (public randomness from ``seed``,
       independent of the graph): a fraction ``holdout`` to score the
       partition, ``select`` (``method="auto"`` only) to choose among the
       candidate partitions, the rest to find them.
    2. On the finding part, Z (debiased adjacency, rescaled) has noise with
       spectrum edge e = 2 sqrt(n s^2), s^2 the mean entry variance (the
       channel's plus that of a random graph of the estimated density).  Its
       eigenvalues above e (1 + ``margin``) carry structure.  Fewer than two:
       **no structure is resolvable** at this epsilon; the result has
       ``resolvable=False``, one community, modularity exactly 0.
    3. The q structural eigenvectors, scaled by the shrunk eigenvalues theta
       (lambda = theta + e^2 / (4 theta)), embed the nodes.
       ``method="denoised"``: a cosine ``knn``-nearest-neighbour graph of
       the embedding is partitioned by Louvain (networkx, ``seed``), and
       those communities are merged by Louvain on the graph of communities
       weighted by their debiased edge counts (finding part).
       ``method="spectral"``: k-means of the embedding into q + 1
       communities.  ``method="auto"``: both, and "denoised" restricted to
       the nodes whose embedding clears the noise (squared norm above 2 and
       4 times that of a row of pure noise; the rest form one background
       community); the candidate with the highest modularity estimated on
       the select part is kept (``Communities.selection``).
    4. The modularity of the partition on the true graph is estimated from
       the score part only (:func:`~.partition.heldout_modularity`), so
       choosing the partition on the same release does not bias it upward.

    Post-processing of the release only: no privacy budget is spent, and the
    randomness (split, Louvain, k-means, the start of the eigen iteration) is
    public.  **The seed** fixes all of it: the same release and seed give the
    same partition and estimate, on every machine.  The default (0) makes a
    release's communities reproducible; ``None`` draws a fresh split each
    call.  Do not re-run with other seeds and keep the best-looking result:
    choosing among splits by their held-out score makes it optimistic again.

    Memory: the finding part is a copy of the release's storage (n^2 / 16
    bytes for a full release), plus O(n (q + knn)) floats; never an n x n
    float matrix.  Time: a pass over the pairs, then a *screen* of 41
    products of the release with a block of 4 vectors which tells whether
    two eigenvalues clear the noise (when they do not, the unresolved
    result is returned there: the common case at low epsilon, about a third
    of the products of the eigenvectors); only then at least 31 products
    with a block of 16-64 vectors, a kNN graph (n^2 similarities), Louvain
    on its n * knn edges and a pass over the held-out pairs.  **Before any
    of it** :func:`~.community_planning.community_plan` predicts these
    seconds from operation counts (nothing is timed: the decision does not
    depend on the machine's load) and decides: when no graph with the
    plausible number of edges can have a second eigenvalue above the noise,
    the unresolved result is returned at once (``plan.reason`` says why);
    when the split and the screen alone exceed ``max_seconds`` (without
    one: hours) the call is refused; when the screen finds structure and
    the rest cannot finish within the limit, the call stops there with
    what it found and the ``max_seconds`` that allows it.  A long call
    shows a progress bar with the time left; Ctrl-C stops it and keeps
    nothing.

    Parameters
    ----------
    R : PrivateGraph
        Undirected release.
    method : {"auto", "denoised", "spectral"}, default "auto"
    max_communities : int, default 60
        Upper bound (>= 1) on the structural eigenvectors used (and on the
        k-means clusters); 1 always returns the trivial partition.
    holdout : float, default 0.10
        Fraction of vertex pairs, in (0, 1), held out to score the partition.
        Larger: a more precise modularity estimate, a less accurate partition.
    select : float, default 0.05
        Fraction of vertex pairs, in [0, 1 - holdout), used to choose among
        the candidates of ``method="auto"`` (ignored by the other methods,
        which find on 1 - holdout of the pairs).
    knn : int, default 10
        Neighbours per node in the denoised similarity graph (>= 1).
    seed : int or None, default 0
        Non-negative seed of the public randomness (see above); None for
        fresh randomness.
    margin : float, default 0.03
        Relative margin (>= 0) above the noise edge for an eigenvalue to count.
    resolution : float, default 1.0
        Louvain's resolution (> 0) when merging communities (larger: more,
        smaller communities).
    proper : bool, default True
        Clip the modularity estimate to [-1/2, 1] (its interval too, centred
        on the unclipped value); False returns the unclipped, unbiased-given-
        the-split estimate.
    progress : bool or None, default None
        Show a progress bar (tqdm) over the stages, with the time left; None
        shows it for releases of 5,000 nodes or more when the error stream
        is a terminal.
    max_seconds : float or None, default None
        Wall-clock seconds (> 0) the call may take: refused before it starts
        when the prediction exceeds it, stopped (nothing kept) between
        stages once it has run that long.  None: no limit (that of an
        enclosing :func:`~.triangle_planning.time_limit`, if any); only a
        prediction of hours (:data:`~.triangle_planning.UNLIMITED_CEILING`)
        is refused, with the ``max_seconds`` that runs it anyway.

    Returns
    -------
    Communities
        The partition, its held-out modularity estimate, the detectability
        flag ``resolvable``, the inspected eigenvalues and (``"auto"``) the
        candidates' select-part scores.  Its repr is a summary (sizes,
        modularity), never the partition.  With a ``seed`` the result is a
        function of the release and the arguments, so it is computed once
        per release and returned again for the same arguments.

    Raises
    ------
    ValueError
        Unknown ``method``; ``max_communities`` or ``knn`` < 1; ``holdout``
        outside (0, 1) or ``select`` outside [0, 1 - holdout); negative
        ``margin`` or ``seed``; ``resolution`` <= 0; a directed release.
    TypeError
        ``max_communities``, ``knn`` or ``seed`` not an int; ``proper`` not a bool.
    MemoryError
        The finding copy and working blocks do not fit in memory (raised
        before allocating them, with the sizes).
    CostLimitError
        The predicted seconds of the split and the screen exceed
        ``max_seconds``, or hours without one (raised before any pass, with
        the prediction and the ``max_seconds`` that allows it); the screen
        found structure and the rest is predicted past the limit (raised
        before the rest starts); or the call ran past ``max_seconds`` (a
        MemoryError subclass).

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.planted_partition_graph(2, 150, 0.3, 0.01, seed=1)
    >>> res = dpgraph.release(G, epsilon=3.0, seed=0).communities()
    >>> res.resolvable, len(res.partition) >= 2
    (True, True)
    >>> q_true = nx.community.modularity(G, res.partition)
    >>> abs(res.modularity.value - q_true) < 4 * res.modularity.std
    True
    """
    _undirected(R, "community detection")
    # a seeded call is a function of the release and its arguments: computed once per release
    memo = None if seed is None else ("communities", method, max_communities, holdout, select,
                                      knn, seed, margin, resolution, proper)
    if memo is not None and memo in _cache(R):
        return _cache(R)[memo]
    if not select < 1 - holdout:  # the one joint constraint; each alone is declared
        raise ValueError(f"select must be below 1 - holdout = {1 - holdout:g}, got {select!r}; "
                         "lower select or holdout")
    n = R.number_of_nodes()
    nodes = R.node_index.nodes  # by position
    trivial = [frozenset(nodes)]
    zero = Estimate(0.0, 0.0, feasible_range=(-0.5, 1.0))
    if method != "auto":
        select = 0.0
    if n < 3:
        return Communities(trivial, zero, False, holdout=holdout, method=method,
                           chosen=method if method != "auto" else "")
    ell_cap = int(min(max_communities + 8, n - 1))
    check_call_fits(R, _memory_needed(R, min(ell_cap, 64), knn),
                    f"community detection on {n:,} nodes (a copy of the release's storage, "
                    "the eigen blocks and the neighbour graph)",
                    [sparse_release_alternative(n), Alternative(
                        "a smaller max_communities= or knn= (the eigen blocks hold n x "
                        "(max_communities + 8) floats, the neighbour graph n x knn edges)")])
    key = seed if seed is not None else secrets.randbits(63)
    split = PairSplit(n, holdout, select, key)
    plan = community_plan(R, max_seconds, split, knn,
                          len(_BACKGROUND) + 2 if method == "auto" else 1)
    if plan.mode == "refused":
        raise CostLimitError(plan.reason)
    if plan.mode == "unresolvable":
        return Communities(trivial, zero, False, noise_edge=2.0 * plan.sigma,
                           holdout=split.score_fraction, method=method, plan=plan)
    limit = plan.max_seconds
    bar = StageProgress(plan, progress, Deadline(f"community detection on {n:,} nodes",
                                                 limit or 0.0, limit is not None, plan.seconds))
    try:
        found = _detect(R, plan, split, bar, method=method, max_communities=max_communities,
                        knn=knn, seed=seed, key=key, margin=margin, resolution=resolution,
                        proper=proper, trivial=trivial, zero=zero)
    finally:
        bar.close()
    if memo is not None:
        _cache(R)[memo] = found
    return found


def _detect(R: Any, plan: CommunityPlan, split: PairSplit, bar: StageProgress, *, method: str,
            max_communities: int, knn: int, seed: Any, key: int, margin: float,
            resolution: float, proper: bool, trivial: list, zero: Estimate) -> Communities:
    """Steps 2-4 of :func:`communities`, advancing ``bar`` after each stage."""
    n = R.number_of_nodes()
    nodes = R.node_index.nodes
    holdout, f = split.score_fraction, split.find_fraction
    m = number_of_edges(R, proper=False)
    z0, z1 = _entry_map(R.channel)
    op = DebiasedOperator(split.find_adjacency(R.adjacency), z0, (z1 - z0) / f)
    bar.done("pair split")
    rho = float(np.clip(float(m.value) / R.number_of_pairs(), 0.0, 1.0))
    s2 = noise_variance(R.channel, rho, f)
    edge = float(2.0 * np.sqrt(n * s2))
    thr = edge * (1.0 + float(margin))
    result = dict(noise_edge=edge, holdout=holdout, method=method, plan=plan)
    if n > SCREEN_MIN_NODES:  # the screen: do two eigenvalues clear the noise at all?
        vals, _ = leading_eigenpairs(op, SCREEN_BLOCK, thr, key, passes=SCREEN_PASSES)
        above = int(np.sum(vals > thr))
        bar.done("screen")
        if above < 2 or max_communities < 2:
            return Communities(trivial, zero, False, chosen="", eigenvalues=np.asarray(vals),
                               n_above_edge=min(above, max_communities), **result)
        check_structure_stage(plan, time.perf_counter() - bar.deadline.start, above)
    vals, vecs = eigen_above(op, thr, max_communities, key)
    bar.done("spectrum")
    q = int(min(np.sum(vals > thr), max_communities))
    result.update(eigenvalues=np.asarray(vals), n_above_edge=q)
    if q < 2:
        return Communities(trivial, zero, False, chosen="", **result)
    lam = vals[:q]
    theta = (lam + np.sqrt(np.maximum(lam * lam - edge * edge, 0.0))) / 2.0
    X = vecs[:, :q] * theta
    # a row of X without structure: each coordinate's noise has variance
    # s2_noise (theta / lambda)^2 (the eigenvector's entry is (Z v)_i / lambda)
    noise_sq = float(np.sum((s2 - rho * (1.0 - rho)) * (theta / lam) ** 2))
    cands = _candidates(method, X, q, noise_sq, knn, op, seed, float(resolution))
    bar.done("partition")
    # the counterfactual of a held-out pair: had it been a released edge of the finding
    # part, Z' would gain (z1 - z0) / f there, and row i of V would move by that times
    # R_ii V_j, R the resolvent of the noise bulk at lambda, whose diagonal is 1 / theta
    # (the semicircle's Stieltjes transform at lambda = theta + e^2 / (4 theta)): row i of
    # X = V theta moves by X[j] (z1 - z0) / (f theta)
    shift = (z1 - z0) / f / theta
    size = np.linalg.norm(X * shift, axis=1)
    names = list(cands)
    cf = [(rule, X, shift, (size, rule.reach(X))) for rule, _ in cands.values()]
    labels = [lab for _, lab in cands.values()]
    del op, vecs
    counts = split.block_counts(R.adjacency, labels, cf, f * float(R.channel.alpha),
                                tick=bar.deadline.check)
    bar.done("held-out scoring")
    selection = {}
    if method == "auto":
        for name, (E, P) in zip(names, counts["select"]):
            selection[name] = heldout_modularity(E, P, R.channel, m, split.select_fraction).value
        best = max(names, key=lambda c: selection[c])
    else:
        best = names[0]
    lab = np.unique(cands[best][1], return_inverse=True)[1]
    if lab.max() == 0:
        return Communities(trivial, zero, True, chosen=best, selection=selection, **result)
    E, P = counts["score"][names.index(best)]
    mod = finish(heldout_modularity(E, P, R.channel, m, holdout), proper, -0.5, 1.0)
    blocks = [frozenset(nodes[i] for i in np.flatnonzero(lab == c)) for c in range(lab.max() + 1)]
    blocks.sort(key=len, reverse=True)
    return Communities(blocks, mod, True, chosen=best, selection=selection, **result)
