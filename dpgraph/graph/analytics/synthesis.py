"""A synthetic graph from one release (post-processing), in bounded memory.

The candidate pairs are chosen in one pass over row blocks of the release,
keeping only the best ``8 m^ + 1000`` of them (a running top-k whose
threshold, once the buffer is full, is turned into a threshold on the prior
so that almost every pair is dismissed by one comparison): memory is the
candidates, one block and the output graph, never the N vertex pairs.
"""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np

from ...validation import Integer, Optional, validate_params
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
from ._shared import _observed_degrees, progress_range
from .counts import _degree_estimate, number_of_edges
from .degree_stats import degree_distribution
from .spectral import _leading_eigen, _noise_edge

_FLOOR = 1e-4  # priors are clipped to [_FLOOR, 1 - _FLOOR]
_PASS_PAIRS = 1 << 21  # vertex pairs per row block of the candidate pass
_MERGE = 1 << 20  # candidates gathered before they are merged into the running best
_STUB_ROUNDS = 4  # rounds of random stub pairing after the greedy pass
_OWN_Z = 4.0  # a node's own degree estimate overrides its quantile target beyond this many sd
_CAND_BYTES = 28  # a candidate: row, column (int32), prior (float32), score, tie-break (float64)
# a pair of a row block that enters the running top-k: the block's prior and mask, its indices
# (int64), and the scoring temporaries (float64); every pair of the first blocks enters, before
# the buffer is full (tracemalloc peak: 83 bytes a block pair at 4,000 nodes)
_BLOCK_PAIR_BYTES = 88


@analytic
@validate_params(rank=Optional(Integer(minimum=1)), seed=SEED, progress=PROGRESS)
def synthesize(
    R: Release,
    rank: int | None = None,
    seed: int | None = None,
    progress: bool | None = None,
) -> nx.Graph:
    """A sparse networkx graph with about the estimated number of edges.

    Post-processing of the release only (no privacy cost):

    1. a prior edge probability for every pair from the rank-k spectral
       approximation of the debiased adjacency Z (k = eigenvalues above the
       noise edge, or ``rank``); without eigenvalues above the noise edge,
       the degree prior t_i t_j / (2 m^), t the debiased degree estimates
       projected onto [0, n - 1] (:meth:`degree`); either clipped to
       [1e-4, 1 - 1e-4];
    2. the posterior probability that the pair is an edge given its own
       released bit (Bayes with the channel's alpha, beta);
    3. a target degree for every node: the estimated degree distribution
       (:func:`degree_distribution`) as a sequence of n quantiles scaled to
       2 m^ (m^ = round(number_of_edges)), given to the nodes in the order of
       their debiased released degrees; a node whose own degree estimate is
       more than 4 of its standard deviations (and the n-fold 5% normal
       quantile) from its quantile (a hub the distribution estimate smears
       out) gets its own estimate instead; no target exceeds the largest
       degree the distribution's band allows (``n * ccdf_upper[d] >= 1``);
    4. pairs in decreasing posterior order become edges while both ends are
       below their target degree; stubs left over are paired at random
       (configuration model), and the highest remaining pairs whose ends
       are below their target + 1 (and the band's largest degree) top the
       count up to m^ (ties broken by the unclipped prior, then at random
       with ``seed``): no node ends more than one edge above its target.

    No step depends on the order of the nodes: ties are broken at random,
    never by position, so relabelling the input's nodes changes the output's
    distribution only by the same relabelling (a numbering that follows the
    communities, as SNAP's ego-Facebook's does, cannot leak into the
    synthetic graph).

    Cost: only the best 8 m^ + 1000 pairs are ever kept.  A dense release:
    one pass over row blocks of the release, O(n^2 k) arithmetic for a
    rank-k prior, memory for the candidates, one block and the output (the
    progress bar counts the blocks).  A sparse release: the candidates are
    its released pairs only, O(m k) for its m released edges, so time and
    memory follow the release, not n^2 (an unreleased pair of a subsampled
    release is almost no evidence; the stubs pair the rest).  The spectral
    prior's iterations read the released graph each time.  What it needs
    is checked before anything is computed.

    What it preserves: the number of nodes, the estimated edge count, the
    estimated degree sequence (no mass of isolated nodes the input lacks:
    every node gets about its target degree), the community structure the
    spectrum carries (edges concentrate inside the denoised blocks) and
    which nodes are high-degree.  What it does not: triangles and clustering
    are those of a low-rank block model, not of the input (use the
    estimators :meth:`triangles`, :meth:`transitivity` for those numbers);
    individual edges are mostly wrong at small epsilon.

    Parameters
    ----------
    R : PrivateGraph
        Undirected release.
    rank : int or None, default None
        Rank of the spectral prior, in 1..n-2; None: the eigenvalues above the noise edge.
    seed : int or None, default None
        Non-negative seed of the random tie-break.
    progress : bool or None, default None
        Progress bar over the row blocks (tqdm); None shows it for releases of
        5,000 nodes or more when the error stream is a terminal.

    Returns
    -------
    networkx.Graph
        Same nodes as the release, about ``number_of_edges().value`` edges.

    Warns
    -----
    UserWarning
        When the estimated edge count is within two standard deviations of
        0: the synthetic graph's size is not resolved by the release.

    Raises
    ------
    ValueError
        ``rank`` out of range, negative ``seed``, or a directed release; or
        the estimated edge count projects to 0 (nothing to synthesize: the
        message gives the estimate and what resolves it).
    MemoryError
        Before any work, when the synthetic graph, the candidates and the
        spectral prior cannot fit in the memory available (the message gives
        each size).
    TypeError
        ``seed`` not None or an int.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.planted_partition_graph(2, 40, 0.4, 0.02, seed=1)
    >>> R = dpgraph.release(G, epsilon=2.0, seed=0)
    >>> H = R.synthesize(seed=0)
    >>> H.number_of_nodes(), abs(H.number_of_edges() - R.number_of_edges().value) <= 1
    (80, True)
    """
    _undirected(R, "synthesize")
    n, N = R.number_of_nodes(), R.number_of_pairs()
    if rank is not None and not (1 <= int(rank) <= n - 2):
        raise ValueError(f"rank must be in 1..{n - 2}, got {rank!r}")
    alpha, beta = R.channel.alpha, R.channel.beta
    est = number_of_edges(R)
    m_hat = int(np.clip(round(float(est.value)), 0, N))
    budget = int(min(N, 8 * m_hat + 1000))
    _check_synthesis_fits(R, m_hat, budget, 60 if rank is None else int(rank))
    _resolved_edge_count(est, m_hat)
    rng = np.random.default_rng(seed)
    target, cap = _target_degrees(R, m_hat, rng)  # first: the cheap step that may refuse
    if rank is None:
        edge = _noise_edge(R, m_hat) * 1.03
        vals, vecs = _leading_eigen(R, edge, 60)
        keep = vals > edge
    else:
        vals, vecs = _leading_eigen(R, np.inf, int(rank))
        keep = np.ones(vals.size, dtype=bool)
    Vk, lk = vecs[:, keep], vals[keep]
    lo = float(np.log(alpha / beta)) if beta > 0 else 50.0
    hi = float(np.log((1 - alpha) / (1 - beta))) if alpha < 1 else -50.0
    if lk.size:
        # shrink each outlier eigenvalue to its signal value: lambda = theta + n v / theta
        lam = np.abs(lk)
        nv = n * ((alpha * (1 - alpha) + beta * (1 - beta)) / 2) / R.channel.d**2
        theta = 0.5 * (lam + np.sqrt(np.maximum(lam * lam - 4 * nv, 0.0)))
        lk = np.sign(lk) * theta
    else:  # no spectral structure: the degree prior t_i t_j / (2 m^), a rank-one product
        t = np.asarray(_degree_estimate(R, True).value, dtype=float)  # in [0, n - 1]
        Vk, lk = (t / np.sqrt(2.0 * max(m_hat, 1)))[:, None], np.ones(1)
    if release_kind(R) == "sparse":  # only the released pairs: O(released edges), never n^2
        rows, cols = _released_candidates(R, Vk, lk, budget, lo, hi, rng, progress)
    else:
        rows, cols = _prior_candidates(R, Vk, lk, budget, lo, hi, rng, progress)
    er, ec = _degree_constrained(rows, cols, target, cap, m_hat, rng)
    order = np.lexsort((ec, er))
    return blocks_to_networkx(R.nodes, [(er[order], ec[order])], False)


def _resolved_edge_count(est: Any, m_hat: int) -> None:
    """Refuse when m^ = round(number_of_edges) is 0; warn when the estimate is unresolved.

    A synthetic graph rests on the edge count: projected to 0 edges there is
    nothing to synthesize (an empty graph would pass for an answer), and an
    estimate within two standard deviations of 0 is a size the release does
    not pin down.
    """
    import warnings

    value, std = float(est.value), float(est.std)
    if m_hat == 0:
        raise ValueError(
            f"R.synthesize() has nothing to rest on: the estimated edge count is {value:,.0f} "
            f"(std {std:,.0f}), which projects to 0 edges, so the synthetic graph would be empty. "
            "A release at a larger epsilon (or, for a sparse release, a larger target_edges) "
            "resolves the edge count")
    if value < 2.0 * std:
        warnings.warn(
            f"R.synthesize(): the estimated edge count {value:,.0f} is within two standard "
            f"deviations ({std:,.0f}) of 0, so the synthetic graph's size ({m_hat:,} edges) is "
            "not resolved by this release", UserWarning, stacklevel=4)


def _released_candidates(R: Any, Vk: np.ndarray, lk: np.ndarray, budget: int, lo: float,
                         hi: float, rng: np.random.Generator,
                         progress: Any) -> tuple[np.ndarray, np.ndarray]:
    """The best ``budget`` *released* pairs by (score, prior, random key), best first.

    A sparse release: the prior is evaluated at its released pairs only
    (O(released edges x rank)), so time and memory follow the release, not
    n^2.  An unreleased pair of a subsampled release carries almost no
    evidence (its likelihood ratio e^hi is about 1), and its posterior is
    below a released pair's of the same prior; the degree targets that the
    released candidates leave open are filled by random pairing of stubs
    (:func:`_degree_constrained`), as for a dense release.
    """
    n = R.number_of_nodes()
    left = np.ascontiguousarray((Vk * lk).astype(np.float32))
    right = np.ascontiguousarray(Vk.astype(np.float32))
    top = _TopK(budget, lo, hi, rng)
    rows, cols = R.released_edges()  # 16 bytes a released edge: what the release itself holds
    step = max(1 << 12, _PASS_PAIRS // max(1, Vk.shape[1]))  # pairs scored at once
    for a in progress_range(0, rows.size, step, progress, n, "synthesize"):
        r, c = rows[a : a + step], cols[a : a + step]
        prior = np.einsum("ij,ij->i", left[r], right[c])
        _, t_in = top.thresholds()
        keep = prior >= t_in
        top.add(r[keep], c[keep], prior[keep], np.ones(int(keep.sum()), dtype=bool))
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
                      hi: float, rng: np.random.Generator,
                      progress: Any) -> tuple[np.ndarray, np.ndarray]:
    """The best ``budget`` pairs i < j under the low-rank prior V diag(l) V^T, best first
    (the spectral prior, or the rank-one degree prior t t^T / (2 m^)).

    Order: score = logit(prior) + (lo if released else hi), prior =
    clip((V diag(l) V^T)_ij, 1e-4, 1 - 1e-4); ties (clipped priors) by the
    unclipped prior, then at random.  One pass over row blocks; a running
    top-``budget`` buffer sets, once full, the smallest prior that can still
    enter for a released and an unreleased pair, so a block costs one
    matrix product and two comparisons per pair.
    """
    n = R.number_of_nodes()
    left = np.ascontiguousarray((Vk * lk).astype(np.float32))
    right = np.ascontiguousarray(Vk.astype(np.float32))
    top = _TopK(budget, lo, hi, rng)
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
    return top.result()


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

    def _merge(self) -> None:
        parts = self.pending + ([self.kept] if self.kept is not None else [])
        self.pending, self.npending = [], 0
        if not parts:
            return
        kept = _best(self.k, *(np.concatenate(x) for x in zip(*parts)))
        score, prior, key = kept[3], kept[2], kept[4]
        order = np.lexsort((-key, -prior, -score))
        self.kept = tuple(x[order] for x in kept)
        if score.size >= self.k:
            self.last = (float(score[order[-1]]), float(prior[order[-1]]))

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        self._merge()
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


def _band_cap(h: Any, n: int) -> int:
    """The largest degree the distribution's band allows a node: the largest d with
    n * ccdf_upper[d] >= 1 (at least one node of degree d or more within the band)."""
    upper = np.asarray(getattr(h, "ccdf_upper", np.cumsum(np.asarray(h)[::-1])[::-1]), dtype=float)
    allowed = np.flatnonzero(n * upper >= 1.0 - 1e-9)
    return int(min(n - 1, allowed[-1])) if allowed.size else n - 1


def _target_degrees(R: Any, m_hat: int, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """Target degree of every node, and the band's largest degree ``cap`` (:func:`_band_cap`).

    Targets: the estimated distribution's quantiles, summing to 2 m^, assigned
    by the rank of the debiased released degree (random tie-break); a node
    whose own degree estimate is further from that quantile than ``_OWN_Z``
    of its exact standard deviations, and than the n-fold two-sided 5% normal
    quantile (so that chance alone moves about 0.05 node of n), gets its own
    estimate instead; every target is at most ``cap``.

    The quantiles of a distribution estimate place the few nodes of a heavy tail badly (a
    hub of degree 250 among 1,000 nodes is 0.1% of the mass, which the estimate spreads over
    a wide range); a hub's own estimate is exact to a few standard deviations.  At 10^4
    nodes and more a fixed 4 sd would let the noise of a few ordinary nodes make hubs."""
    from scipy.stats import norm

    n = R.number_of_nodes()
    h = degree_distribution(R)
    cap = _band_cap(h, n)
    h = np.asarray(h, dtype=float)
    cdf = np.cumsum(h / h.sum())
    seq = np.minimum(np.searchsorted(cdf, (np.arange(n) + 0.5) / n), n - 1).astype(float)
    if seq.sum() > 0:
        seq *= 2.0 * m_hat / seq.sum()
    # stochastic rounding keeps the sum's expectation
    seq = np.floor(seq + rng.random(n)).astype(np.int64)
    seq = np.clip(seq, 0, cap)
    order = np.lexsort((rng.random(n), _observed_degrees(R)))
    target = np.empty(n, dtype=np.int64)
    target[order] = np.sort(seq)
    est = _degree_estimate(R, True)
    value, std = np.asarray(est.value, dtype=float), np.asarray(est.std, dtype=float)
    z = max(_OWN_Z, float(norm.isf(0.025 / n)))
    own = np.abs(value - target) > z * std
    target[own] = np.clip(np.rint(value[own]), 0, cap).astype(np.int64)
    return target, cap


def _degree_constrained(rows: np.ndarray, cols: np.ndarray, target: np.ndarray, cap: int, m_hat: int,
                        rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The chosen pairs: the candidates (best first) taken greedily under the degree targets,
    then random pairing of the left-over stubs (a few rounds), then the best remaining
    candidates up to m^ whose two ends are below their target + 1 and below ``cap`` (the
    band's largest degree): no node ends more than one edge above its target, so the
    synthetic degrees follow the targets and no hub appears that they lack."""
    n = target.size
    if m_hat <= 0:
        return np.array([], dtype=np.int64), np.array([], dtype=np.int64)
    chosen = np.zeros(rows.size, dtype=bool)
    r_c, c_c = rows.tolist(), cols.tolist()
    left_l = target.tolist()
    count = 0
    for t in range(rows.size):
        a, b = r_c[t], c_c[t]
        if left_l[a] > 0 and left_l[b] > 0:
            left_l[a] -= 1
            left_l[b] -= 1
            chosen[t] = True
            count += 1
            if count >= m_hat:
                break
    picked = np.flatnonzero(chosen)
    taken = set((rows[picked].astype(np.int64) * n + cols[picked]).tolist())
    extra_r, extra_c = [], []
    for _ in range(_STUB_ROUNDS):  # a round's rejects (self-pairs, repeats) pair again
        left = np.maximum(np.asarray(left_l), 0)
        if count >= m_hat or left.sum() < 2:
            break
        stubs = rng.permutation(np.repeat(np.arange(n), left))
        u, v = stubs[0::2][: stubs.size // 2], stubs[1::2][: stubs.size // 2]
        for a, b in zip(np.minimum(u, v).tolist(), np.maximum(u, v).tolist()):
            if a != b and a * n + b not in taken and count < m_hat:
                taken.add(a * n + b)
                extra_r.append(a)
                extra_c.append(b)
                left_l[a] -= 1
                left_l[b] -= 1
                count += 1
    out_r = np.concatenate([rows[picked].astype(np.int64), np.array(extra_r, dtype=np.int64)])
    out_c = np.concatenate([cols[picked].astype(np.int64), np.array(extra_c, dtype=np.int64)])
    if count < m_hat and rows.size:  # top up with the best pairs not yet taken, within the band
        deg = np.bincount(np.concatenate([out_r, out_c]), minlength=n).tolist()
        limit = np.minimum(target + 1, cap).tolist()  # a node ends at most one edge above its target
        key = rows.astype(np.int64) * n + cols
        free = np.flatnonzero(~np.isin(key, np.fromiter(taken, dtype=np.int64, count=len(taken))))
        more = []
        for t, a, b in zip(free.tolist(), rows[free].tolist(), cols[free].tolist()):
            if count >= m_hat:
                break
            if deg[a] < limit[a] and deg[b] < limit[b]:
                deg[a] += 1
                deg[b] += 1
                more.append(t)
                count += 1
        more = np.asarray(more, dtype=np.int64)
        out_r = np.concatenate([out_r, rows[more].astype(np.int64)])
        out_c = np.concatenate([out_c, cols[more].astype(np.int64)])
    return out_r, out_c
