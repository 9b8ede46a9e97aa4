"""A synthetic graph from one release (post-processing), in bounded memory and predicted time.

The candidate pairs are chosen in one pass (a dense release: row blocks of
its bits, fused in a numba kernel when numba is present; a sparse one: its
released pairs only), keeping only the best ``8 m + 1000`` of them (a
running top-k whose threshold, once the buffer is full, is turned into a
threshold on the prior so that almost every pair is dismissed by one
comparison): memory is the candidates, one block and the output graph,
never the N vertex pairs.  The edge count and the degree targets are
:mod:`.synthesis_targets`; the cost prediction and the progress bar
:mod:`.synthesis_plan`.
"""

from __future__ import annotations

import numbers
from typing import Any

import networkx as nx
import numpy as np

from ..._numba import load_kernels
from ...core.estimate import Z95
from ...validation import Integer, Interval, Optional, validate_params
from .._memory import (
    Alternative,
    check_call_fits,
    release_kind,
    size_text,
    sparse_release_alternative,
)
from ..answers import PROGRESS, SEED, analytic
from ..answers import require_undirected as _undirected
from ..convert import blocks_to_networkx, networkx_bytes
from ..protocol import Release
from ._shared import progress_range
from .counts import _degree_estimate, number_of_edges
from .degree_stats import degree_distribution
from .spectral import _leading_eigen, _noise_edge
from .synthesis_plan import START_BLOCK, SynthesisProgress, pass_seconds, synthesis_plan
from .synthesis_targets import degree_constrained, synthetic_edge_count, target_degrees

_FLOOR = 1e-4  # priors are clipped to [_FLOOR, 1 - _FLOOR]
_PASS_PAIRS = 1 << 21  # vertex pairs per row block of the candidate pass
_MERGE = 1 << 20  # candidates gathered before they are merged into the running best
_CAND_BYTES = 28  # a candidate: row, column (int32), prior (float32), score, tie-break (float64)
# a pair of a row block that enters the running top-k: the block's prior and mask, its indices
# (int64), and the scoring temporaries (float64); every pair of the first blocks enters, before
# the buffer is full (tracemalloc peak: 83 bytes a block pair at 4,000 nodes)
_BLOCK_PAIR_BYTES = 88


@analytic
@validate_params(rank=Optional(Integer(minimum=1)), seed=SEED, progress=PROGRESS,
                 max_seconds=Optional(Interval(numbers.Real, 0, None, closed="neither",
                                               example="600")))
def synthesize(
    R: Release,
    rank: int | None = None,
    seed: int | None = None,
    progress: bool | None = None,
    max_seconds: float | None = None,
) -> nx.Graph:
    """A sparse networkx graph whose size and degrees follow the release's estimates.

    Post-processing of the release only (no privacy cost):

    1. the edge count m: the estimated degree distribution's
       (:func:`degree_distribution`, n x its mean / 2), moved into the
       estimated edge count's 95% interval [m^ - 1.96 sd, m^ + 1.96 sd]
       (:func:`number_of_edges`) when outside it: where
       the release resolves the count the two agree; where it does not
       (m^ = 0 +- millions on a subsampled release at small epsilon) the
       distribution, which knows that degrees are non-negative, sets it;
    2. a target degree for every node: the (i + 1/2) / n quantiles of the
       estimated distribution tilted to mean 2 m / n (the distribution of
       that mean closest to it; itself when no move was needed), so no
       target exceeds the distribution's top quantile -- no hub the
       estimate does not support -- given to the nodes in the order of
       their released degrees; a node whose own degree estimate is more
       than 4 of its standard deviations (and the n-fold 5% normal
       quantile) from its quantile (a hub the distribution estimate smears
       out) gets its own estimate instead; no target exceeds the largest
       degree the distribution's band allows (``n * ccdf_upper[d] >= 1``);
    3. a prior edge probability for every pair from the rank-k spectral
       approximation of the debiased adjacency Z (k = eigenvalues above the
       noise edge, or ``rank``); without eigenvalues above the noise edge,
       the degree prior t_i t_j / (2 m), t the debiased degree estimates
       projected onto [0, n - 1] (:meth:`degree`); either clipped to
       [1e-4, 1 - 1e-4], and the posterior probability that the pair is an
       edge given its own released bit (Bayes with the channel's alpha, beta);
    4. pairs in decreasing posterior order become edges while both ends are
       below their target degree; stubs left over are paired at random
       (configuration model), and the highest remaining pairs whose ends
       are below their target + 1 (and the band's largest degree) top the
       count up to m (ties broken by the unclipped prior, then at random
       with ``seed``): no node ends more than one edge above its target.

    No step depends on the order of the nodes: ties are broken at random,
    never by position, so relabelling the input's nodes changes the output's
    distribution only by the same relabelling (a numbering that follows the
    communities, as SNAP's ego-Facebook's does, cannot leak into the
    synthetic graph).

    Cost: only the best 8 m + 1000 pairs are ever kept.  A dense release:
    one pass over row blocks of the release, O(n^2 k) arithmetic for a
    rank-k prior (a fused numba kernel, a few nanoseconds a pair, with a
    numpy fallback), memory for the candidates, one block and the output.
    A sparse release: the candidates are its released pairs only, O(m' k)
    for its m' released edges, so time and memory follow the release, not
    n^2 (an unreleased pair of a subsampled release is almost no evidence;
    the stubs pair the rest).  The spectral prior costs 31 products of the
    release with a block of 4 vectors (more when structure clears the
    noise).  Before any work the memory is checked and the time predicted
    from operation counts (:mod:`.synthesis_plan`): a prediction over
    ``max_seconds`` (without one: hours) is refused with the prediction.  A
    progress bar shows the predicted seconds done and the time left;
    Ctrl-C (or ``max_seconds`` passing) stops the call between blocks, and
    nothing is kept.

    What it preserves: the number of nodes, the estimated edge count (within
    its 95% interval), the estimated degree distribution (no
    mass of isolated nodes the input lacks, no hub it lacks: every node gets
    about its target degree), the community structure the spectrum carries
    (edges concentrate inside the denoised blocks) and which nodes are
    high-degree.  What it does not: triangles and clustering are those of a
    low-rank block model, not of the input (use the estimators
    :meth:`triangles`, :meth:`transitivity` for those numbers); individual
    edges are mostly wrong at small epsilon.

    Parameters
    ----------
    R : PrivateGraph
        Undirected release.
    rank : int or None, default None
        Rank of the spectral prior, in 1..n-2; None: the eigenvalues above the noise edge.
    seed : int or None, default None
        Non-negative seed of the random tie-break.
    progress : bool or None, default None
        Progress bar (tqdm) in predicted seconds, with the time left; None
        shows it for releases of 5,000 nodes or more when the error stream
        is a terminal.
    max_seconds : float or None, default None
        Wall-clock seconds the call may take: a larger prediction is refused
        before any work, and the call stops once they have passed.  None:
        the enclosing :func:`~dpgraph.graph.analytics.triangle_planning.time_limit`,
        else no limit (only a prediction of hours is refused).

    Returns
    -------
    networkx.Graph
        Same nodes as the release, m edges (see 1.).

    Warns
    -----
    UserWarning
        When the estimated edge count is within two standard deviations of
        0: the release does not resolve the synthetic graph's size (the
        degree distribution's mean sets it).

    Raises
    ------
    ValueError
        ``rank`` out of range, negative ``seed``, ``max_seconds`` not
        positive, or a directed release; or the edge count projects to 0
        (nothing to synthesize: the message gives the estimates and what
        resolves them).
    MemoryError
        When the synthetic graph, the candidates and the spectral prior
        cannot fit in the memory available (the message gives each size):
        before any work when even the low end of the edge count's 95%
        interval does not fit, else once the edge count is chosen from the
        degree distribution, before the prior and the candidate pass.
    CostLimitError
        The predicted seconds exceed ``max_seconds`` (before any work, with
        each stage's prediction and the ``max_seconds`` that allows it), or
        the call ran past it (nothing kept).  A MemoryError.
    TypeError
        ``seed`` not None or an int.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.planted_partition_graph(2, 40, 0.4, 0.02, seed=1)
    >>> R = dpgraph.release(G, epsilon=2.0, seed=0)
    >>> H = R.synthesize(seed=0)
    >>> est = R.number_of_edges()
    >>> H.number_of_nodes(), abs(H.number_of_edges() - est.value) <= 1.96 * est.std + 1
    (80, True)
    """
    _undirected(R, "synthesize")
    n, N = R.number_of_nodes(), R.number_of_pairs()
    if rank is not None and not (1 <= int(rank) <= n - 2):
        raise ValueError(f"rank must be in 1..{n - 2}, got {rank!r}")
    alpha, beta = R.channel.alpha, R.channel.beta
    est = number_of_edges(R, proper=False)  # m <= m^ + 1.96 sd (1.): what is predicted
    m_most = int(np.clip(np.ceil(float(est.value) + Z95 * float(est.std)), 0, N))
    m_least = int(np.clip(np.floor(float(est.value) - Z95 * float(est.std)), 0, N))
    budget = int(min(N, 8 * m_most + 1000))
    eigen_cap = 60 if rank is None else int(rank)
    # the edge count lands in the count's 95% interval: sized at its low end before any
    # work (a refusal then is certain), at the count itself before the prior and the pass
    _check_synthesis_fits(R, m_least, int(min(N, 8 * m_least + 1000)), eigen_cap)
    plan = synthesis_plan(R, m_most, budget, rank, max_seconds)
    bar = SynthesisProgress(plan, progress)
    try:
        h = degree_distribution(R)
        m_out, _ = synthetic_edge_count(R, h)
        budget = int(min(N, 8 * m_out + 1000))
        _check_synthesis_fits(R, m_out, budget, eigen_cap)
        rng = np.random.default_rng(seed)
        target, cap = target_degrees(R, h, m_out, rng)
        if rank is None:
            edge = _noise_edge(R, m_out) * 1.03
            vals, vecs = _leading_eigen(R, edge, 60, start=START_BLOCK, on_product=bar.product)
            keep = vals > edge
        else:
            vals, vecs = _leading_eigen(R, np.inf, int(rank), on_product=bar.product)
            keep = np.ones(vals.size, dtype=bool)
        bar.finish("spectral prior")
        Vk, lk = vecs[:, keep], vals[keep]
        lo = float(np.log(alpha / beta)) if beta > 0 else 50.0
        hi = float(np.log((1 - alpha) / (1 - beta))) if alpha < 1 else -50.0
        if lk.size:
            # shrink each outlier eigenvalue to its signal value: lambda = theta + n v / theta
            lam = np.abs(lk)
            nv = n * ((alpha * (1 - alpha) + beta * (1 - beta)) / 2) / R.channel.d**2
            theta = 0.5 * (lam + np.sqrt(np.maximum(lam * lam - 4 * nv, 0.0)))
            lk = np.sign(lk) * theta
        else:  # no spectral structure: the degree prior t_i t_j / (2 m), a rank-one product
            t = np.asarray(_degree_estimate(R, True).value, dtype=float)  # in [0, n - 1]
            Vk, lk = (t / np.sqrt(2.0 * max(m_out, 1)))[:, None], np.ones(1)
        bar.resize("candidate pass", pass_seconds(R, lk.size))

        def tick(fraction: float) -> None:
            bar.advance("candidate pass", fraction)

        if release_kind(R) == "sparse":  # only the released pairs: O(released edges), never n^2
            rows, cols = _released_candidates(R, Vk, lk, budget, lo, hi, rng, tick)
        else:
            rows, cols = _prior_candidates(R, Vk, lk, budget, lo, hi, rng, False, tick)
        er, ec = degree_constrained(rows, cols, target, cap, m_out, rng)
        del rows, cols
        bar.finish("candidate pass")
        bar.finish("selection")
        order = np.lexsort((ec, er))
        H = blocks_to_networkx(R.nodes, [(er[order], ec[order])], False)
        bar.finish("graph")
        return H
    finally:
        bar.close()


def _released_candidates(R: Any, Vk: np.ndarray, lk: np.ndarray, budget: int, lo: float,
                         hi: float, rng: np.random.Generator,
                         tick: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """The best ``budget`` *released* pairs by (score, prior, random key), best first.

    A sparse release: the prior is evaluated at its released pairs only
    (O(released edges x rank)), so time and memory follow the release, not
    n^2.  An unreleased pair of a subsampled release carries almost no
    evidence (its likelihood ratio e^hi is about 1), and its posterior is
    below a released pair's of the same prior; the degree targets that the
    released candidates leave open are filled by random pairing of stubs
    (:func:`.synthesis_targets.degree_constrained`), as for a dense release.
    ``tick(fraction)`` is called after each block with the fraction of the pass it was.
    """
    left = np.ascontiguousarray((Vk * lk).astype(np.float32))
    right = np.ascontiguousarray(Vk.astype(np.float32))
    top = _TopK(budget, lo, hi, rng)
    rows, cols = R.released_edges()  # 16 bytes a released edge: what the release itself holds
    step = max(1 << 12, _PASS_PAIRS // max(1, Vk.shape[1]))  # pairs scored at once
    for a in range(0, rows.size, step):
        r, c = rows[a : a + step], cols[a : a + step]
        prior = np.einsum("ij,ij->i", left[r], right[c])
        _, t_in = top.thresholds()
        keep = prior >= t_in
        top.add(r[keep], c[keep], prior[keep], np.ones(int(keep.sum()), dtype=bool))
        if tick is not None:
            tick(r.size / rows.size)
    return top.result()


def _spectral_bytes(R: Any, cap: int) -> int:
    """Memory of the spectral prior as :mod:`.spectral` computes it: about six blocks of
    n x (cap + 8) floats for the filtered subspace iteration, and for a sparse release the
    float copy of its CSR that each product builds."""
    n = R.number_of_nodes()
    extra = 8 * R.number_of_released_edges() if release_kind(R) == "sparse" else 0
    return 6 * 8 * n * min(n, cap + 8) + extra


def _check_synthesis_fits(R: Any, m_hat: int, budget: int, cap: int) -> None:
    """Refuse, before any work, a synthesis whose pieces cannot fit together."""
    n = R.number_of_nodes()
    graph = networkx_bytes(n, m_hat)
    spectral = _spectral_bytes(R, cap)
    block = _PASS_PAIRS * _BLOCK_PAIR_BYTES + 8 * n * cap
    if release_kind(R) == "sparse":  # its released pairs as int64 positions
        block += 16 * R.number_of_released_edges()
    cands = _CAND_BYTES * 3 * budget + 64 * m_hat
    need = max(spectral, block + cands) + graph
    parts = (f"the synthetic graph of about {m_hat:,} edges {size_text(graph)}, its {budget:,} "
             f"candidate pairs {size_text(cands)}, the spectral prior {size_text(spectral)}")
    alts = []
    if spectral > graph + cands:
        alts.append(sparse_release_alternative(n))  # the prior reads every released edge
    alts.append(Alternative("the estimators (R.number_of_edges(), R.degree_distribution(), "
                            "R.cuts(...)) answer without a synthetic graph"))
    check_call_fits(R, need, f"R.synthesize() ({parts})", alts)


def _prior_candidates(R: Any, Vk: np.ndarray, lk: np.ndarray, budget: int, lo: float,
                      hi: float, rng: np.random.Generator, progress: Any = False,
                      tick: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """The best ``budget`` pairs i < j under the low-rank prior V diag(l) V^T, best first
    (the spectral prior, or the rank-one degree prior t t^T / (2 m^)).

    Order: score = logit(prior) + (lo if released else hi), prior =
    clip((V diag(l) V^T)_ij, 1e-4, 1 - 1e-4); ties (clipped priors) by the
    unclipped prior, then at random.  One pass over row blocks of about
    ``_PASS_PAIRS`` pairs; a running top-``budget`` buffer sets, once full,
    the smallest prior that can still enter for a released and an
    unreleased pair, so a pair costs one k-term product and one comparison
    (fused over the packed bits in a numba kernel, which also skips a row
    whose priors cannot reach the thresholds; otherwise unpacked blocks, one
    matrix product).  ``tick(fraction)`` is called after each block with the
    fraction of the pairs it held (``progress`` is kept for callers that
    want the blocks' own bar).
    """
    n = R.number_of_nodes()
    left = np.ascontiguousarray((Vk * lk).astype(np.float32))
    right = np.ascontiguousarray(Vk.astype(np.float32))
    top = _TopK(budget, lo, hi, rng)
    total = max(1.0, n * (n - 1) / 2.0)
    words = getattr(R.adjacency, "words", None)
    kernel = (load_kernels("dpgraph.graph.analytics._synthkernel", ("score_block",))
              if isinstance(words, np.ndarray) and words.dtype == np.uint64 else None)
    if kernel is not None:
        words = np.ascontiguousarray(words)
        norms = np.linalg.norm(left.astype(np.float64), axis=1)
        bound = norms * float(np.linalg.norm(right.astype(np.float64), axis=1).max())
        bound = (bound * (1 + 1e-5) + 1e-30).astype(np.float64)
        pairs_before = n - 1 - np.arange(n)  # pairs of row i: j = i + 1 .. n - 1
        cum = np.cumsum(pairs_before)
        cuts = np.searchsorted(cum, np.arange(_PASS_PAIRS, cum[-1], _PASS_PAIRS), side="right")
        edges = np.unique(np.concatenate([[0], cuts, [n]]))
        cap = int(np.diff(np.concatenate([[0], cum])[edges]).max())
        buf = (np.empty(cap, np.int32), np.empty(cap, np.int32), np.empty(cap, np.float32),
               np.empty(cap, np.bool_))
        for i0, i1 in zip(edges[:-1].tolist(), edges[1:].tolist()):
            t_out, t_in = top.thresholds()
            cnt = kernel[0](words, i0, i1, n, left, right, bound, np.float32(_f32_floor(t_out)),
                            np.float32(_f32_floor(t_in)), *buf)
            if cnt:
                top.add(*(x[:cnt].copy() for x in buf))
            if tick is not None:
                tick(float(pairs_before[i0:i1].sum()) / total)
        return top.result()
    b = max(1, _PASS_PAIRS // max(n, 1))
    blocks = R.adjacency.row_blocks(b)
    for i0 in progress_range(0, n, b, progress, n, "synthesize"):
        _, bits = next(blocks)
        i1, j0 = min(n, i0 + b), i0 + 1
        if j0 >= n:
            break
        prior = left[i0:i1] @ right[j0:].T  # rows i0..i1-1, columns j0..n-1
        released = bits[:, j0:]
        t_out, t_in = top.thresholds()
        mask = prior >= t_out
        if t_in < t_out:
            mask |= released & (prior >= t_in)
        k = min(i1 - i0, n - j0)  # column j0 + c is a pair of row i0 + a only when c >= a
        mask[:, :k] &= ~np.tri(i1 - i0, k, -1, dtype=bool)
        r, c = np.nonzero(mask)
        top.add(r + i0, c + j0, prior[r, c], released[r, c])
        if tick is not None:
            tick(float((i1 - i0) * (n - j0) - k * (k - 1) // 2) / total)
    return top.result()


def _f32_floor(t: float) -> float:
    """The largest float32 at most ``t`` (a float32 prior p passes ``p >= t`` exactly when it
    passes ``p >= _f32_floor(t)``); -inf stays -inf."""
    if not np.isfinite(t):
        return t
    x = np.float32(t)
    return float(x if float(x) <= t else np.nextafter(x, np.float32(-np.inf)))


class _TopK:
    """The best ``k`` candidates seen so far by (score, prior, random key), merged in batches."""

    def __init__(self, k: int, lo: float, hi: float, rng: np.random.Generator) -> None:
        self.k, self.lo, self.hi, self.rng = k, lo, hi, rng
        self.kept: tuple | None = None
        self.pending: list = []
        self.npending = 0
        self.last: tuple[float, float] | None = None  # (score, prior) of the k-th candidate

    def thresholds(self) -> tuple[float, float]:
        """Smallest prior that can still enter, for an unreleased and a released pair."""
        if self.last is None:
            return -np.inf, -np.inf
        score, prior = self.last
        out = []
        floor = float(np.log(_FLOOR) - np.log1p(-_FLOOR))
        for shift in (self.hi, self.lo):
            x = score - shift
            if x > floor + 1e-9:
                out.append(float(1.0 / (1.0 + np.exp(-x))) * (1 - 1e-6))
            elif x >= floor - 1e-9:  # the k-th is in this class's clipped group: by the raw prior
                out.append(float(np.nextafter(np.float32(prior), np.float32(-np.inf))))
            else:  # below the clip: every pair of the class ties with or beats the k-th
                out.append(-np.inf)
        return out[0], out[1]

    def add(self, rows: np.ndarray, cols: np.ndarray, prior: np.ndarray, released: np.ndarray) -> None:
        if rows.size == 0:
            return
        clipped = np.clip(prior.astype(np.float64), _FLOOR, 1 - _FLOOR)
        score = np.log(clipped) - np.log1p(-clipped) + np.where(released, self.lo, self.hi)
        del clipped
        batch = _best(self.k, rows.astype(np.int32), cols.astype(np.int32), prior.astype(np.float32),
                      score, self.rng.random(rows.size))
        self.pending.append(batch)
        self.npending += batch[0].size
        if self.npending >= max(self.k, _MERGE):
            self._merge()

    def _merge(self, final: bool = False) -> None:
        parts = self.pending + ([self.kept] if self.kept is not None else [])
        self.pending, self.npending = [], 0
        if not parts:
            return
        kept = _best(self.k, *(np.concatenate(x) for x in zip(*parts)))
        score, prior, key = kept[3], kept[2], kept[4]
        if final:  # best first, once: the running merges need only the k-th
            order = np.lexsort((-key, -prior, -score))
            self.kept = tuple(x[order] for x in kept)
            return
        self.kept = kept
        if score.size >= self.k:  # the worst kept by (score, prior, key), in O(k)
            at = np.flatnonzero(score == score.min())
            at = at[prior[at] == prior[at].min()]
            at = at[np.argmin(key[at])]
            self.last = (float(score[at]), float(prior[at]))

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        self._merge(final=True)
        if self.kept is None:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        return self.kept[0].astype(np.int64), self.kept[1].astype(np.int64)


def _best(k: int, rows: np.ndarray, cols: np.ndarray, prior: np.ndarray, score: np.ndarray,
          key: np.ndarray) -> tuple:
    """The best k of the candidates (rows, cols, prior, score, key) by (score, prior, key), unordered."""
    if score.size <= k:
        return rows, cols, prior, score, key
    kth = -np.partition(-score, k - 1)[k - 1]
    sure = np.flatnonzero(score > kth)
    tied = np.flatnonzero(score == kth)
    tied = tied[np.lexsort((-key[tied], -prior[tied]))[: k - sure.size]]
    pick = np.concatenate([sure, tied])
    return rows[pick], cols[pick], prior[pick], score[pick], key[pick]
