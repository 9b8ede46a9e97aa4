"""DP-1K: a synthetic graph realizing a noisy degree histogram (edge-DP).

The dK-1 series of a graph is its degree histogram h[d] = #{v : deg(v) = d}.
Sala, Zhao, Wilson, Zheng and Zhao ("Sharing graphs using differentially
private graph models", IMC 2011) release dK series with Laplace noise and
build a graph from them; PGB (arXiv 2408.02928) benchmarks the d = 1 case
as "DP-1K" (after Wang and Wu's DP-dK, 2013): Laplace noise of scale 4 / eps
on the histogram, then a Havel-Hakimi graph.  Re-implemented here from that
description:

1. **Mechanism** (the whole budget, one step).  The histogram's domain is
   d = 0 .. n-1, fixed by the public node count n.  Adding or removing one
   edge {u, v} moves u from bin d_u to d_u +- 1 and v from bin d_v to
   d_v +- 1: at most four bins change by one each (when d_u = d_v, one bin by
   two and its neighbour by two), so the L1 sensitivity is 4 and every bin
   gets Lap(4 / eps).  The release is eps-edge-DP; ``budget`` says so.
2. **Post-processing** (no privacy cost).  Most of the n bins are empty on
   a real graph, and Lap(4 / eps) noise on all of them would put many nodes
   at random degrees up to n - 1 (at eps = 0.5 on ego-Facebook, a graph of
   over a million edges instead of 88,234).  So bins whose noisy count is
   below the threshold b ln(10 n) (b = 4 / eps) are set to 0: an empty bin
   passes it with probability 1 / (20 n), so in about one release in twenty
   some empty bin survives.  The surviving counts are scaled to n nodes and
   rounded to integers summing to n (largest remainders); if none survives
   the graph has n isolated nodes.  One degree is lowered by one if the
   degree sum is odd.  The threshold costs the sparse tail of the histogram
   (bins holding fewer nodes than the noise): that loss is DP-1K's, and the
   benchmark scores it.
3. **Construction**, two variants reported separately:

   ``"havel-hakimi"`` (the original): deterministic; the node of largest
   residual degree is joined to the nodes of the next largest residual
   degrees, until every residual is 0.  A noisy sequence may not be graphical;
   the stubs that find no partner are dropped and counted
   (``unmatched_stubs``).  The construction links high-degree nodes to each
   other first, so its structure (triangles, transitivity, assortativity) is
   an artifact of the algorithm, not of the input.

   ``"configuration"``: the erased configuration model: stubs paired
   uniformly at random, self-loops and repeated pairs dropped.

The histogram carries no node identities, so the degrees are given to the
nodes by a uniformly random permutation, and Havel-Hakimi, which breaks ties
by position, runs on a second random order of the nodes (the port behind
PGB's figures gave degrees in label order; either way the node numbering of
the input, often grouped by community, would shape the graph and score as
community agreement).  Two further differences from that port: its histogram
stopped at the true maximum degree (a non-private quantity) and its graph
had as many nodes as the noisy histogram counted, not n.

Like :mod:`dpgraph.baselines.top_m_filter` this is an accuracy baseline: its noise
comes from a numpy Generator derived from the core's random source, not from
a certified sampler.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..validation import Epsilon, Interval, Optional, Options, validate_params
from ._common import SyntheticGraph, graph_of_pairs, read_graph

__all__ = ["CONSTRUCTIONS", "DP1KResult", "dp1k", "normalize_histogram"]

#: the graph constructions of :func:`dp1k`
CONSTRUCTIONS = ("havel-hakimi", "configuration")

#: L1 sensitivity of the degree histogram under edge-DP (one edge moves two nodes one bin)
SENSITIVITY = 4.0


@dataclass(frozen=True, repr=False)
class DP1KResult(SyntheticGraph):
    """Output of :func:`dp1k` (released quantities only): ``graph`` and ``budget``
    ({"histogram": eps}: the whole budget in one Laplace step), and

    Attributes
    ----------
    noisy_histogram : numpy.ndarray
        The mechanism's output: h[d] + Lap(4 / eps) for d = 0 .. n-1.
    histogram : numpy.ndarray
        Integer counts summing to n: the noisy counts above the threshold,
        scaled to n.
    degrees : numpy.ndarray
        The degree sequence handed to the construction, in the node order
        of :func:`dpgraph.graph.encode_graph` (a random permutation
        of the histogram's degrees, degree sum even).
    construction : str
        "havel-hakimi" or "configuration".
    unmatched_stubs : int
        Stubs the construction could not pair (a non-graphical sequence for
        Havel-Hakimi; self-loops and repeated pairs for the configuration model).
    """

    noisy_histogram: np.ndarray
    histogram: np.ndarray
    degrees: np.ndarray
    construction: str
    unmatched_stubs: int

    def _details(self) -> str:
        return f"construction={self.construction!r}"


def normalize_histogram(counts: Any, n: int) -> np.ndarray:
    """Integer counts summing to ``n`` in proportion to nonnegative ``counts``.

    Largest-remainder rounding of n * counts / sum(counts); all zeros (or
    no positive count) gives all zeros.

    Parameters
    ----------
    counts : array_like
        Nonnegative weights (negative entries count as 0).
    n : int
        The total (>= 0).

    Returns
    -------
    numpy.ndarray of int64

    Examples
    --------
    >>> normalize_histogram([3.4, 0.0, 2.2, 0.4], 12).tolist()
    [7, 0, 4, 1]
    >>> int(normalize_histogram(np.arange(50.0), 101).sum())
    101
    """
    h = np.maximum(np.asarray(counts, dtype=float), 0.0)
    n = int(n)
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    tot = float(h.sum())
    if n == 0 or tot <= 0:
        return np.zeros(h.size, dtype=np.int64)
    x = h * (n / tot)
    base = np.floor(x).astype(np.int64)
    short = n - int(base.sum())
    if short > 0:
        base[np.argsort(-(x - base), kind="stable")[:short]] += 1
    return base


def _havel_hakimi(deg: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Edges (positions) of the Havel-Hakimi graph of ``deg``; stubs left unpaired.

    Buckets of nodes by residual degree; the node of largest residual is
    joined to the nodes of the next largest residuals (ties: the highest
    position first).  O(n + m + max degree) bucket operations.
    """
    n = deg.size
    dmax = int(deg.max()) if n else 0
    buckets: list[list[int]] = [[] for _ in range(dmax + 1)]
    for v in np.flatnonzero(deg > 0).tolist():
        buckets[int(deg[v])].append(v)
    rows: list[int] = []
    cols: list[int] = []
    unmatched = 0
    top = dmax
    while True:
        while top > 0 and not buckets[top]:
            top -= 1
        if top == 0:
            break
        v = buckets[top].pop()
        need = top
        moved: list[tuple[int, int]] = []
        d = top
        while need > 0 and d > 0:
            b = buckets[d]
            while need > 0 and b:
                u = b.pop()
                rows.append(v)
                cols.append(u)
                moved.append((u, d - 1))
                need -= 1
            d -= 1
        unmatched += need
        for u, nd in moved:
            if nd > 0:
                buckets[nd].append(u)
    return np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64), unmatched


def _configuration(deg: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, int]:
    """Erased configuration model: random stub matching, loops and repeats dropped."""
    n = deg.size
    stubs = np.repeat(np.arange(n, dtype=np.int64), deg)
    rng.shuffle(stubs)
    a, b = stubs[0::2], stubs[1::2]
    keep = a != b
    lo, hi = np.minimum(a, b)[keep], np.maximum(a, b)[keep]
    codes = np.unique(lo * n + hi)
    r, c = np.divmod(codes, n)
    return r, c, int(stubs.size - 2 * codes.size)


@validate_params(epsilon=Epsilon(), construction=Options(*CONSTRUCTIONS),
                 threshold=Optional(Interval(numbers.Real, 0, None, example="10")))
def dp1k(G: Any, epsilon: float, seed: Any = None,
         construction: str = "havel-hakimi", threshold: float | None = None) -> DP1KResult:
    """Release a synthetic graph from a noisy degree histogram (DP-1K, edge-DP).

    Parameters
    ----------
    G : networkx.Graph
        Undirected simple graph; its node set is public.
    epsilon : float
        Budget (> 0), spent on the histogram: Lap(4 / epsilon) per bin.
    seed : None, int or numpy.random.Generator
        Randomness (``None``: fresh OS entropy).
    construction : {"havel-hakimi", "configuration"}, default "havel-hakimi"
        How the graph is built from the degree sequence (module notes).
    threshold : float, optional
        Noisy counts below it are set to 0; default (4 / epsilon) ln(10 n).

    Returns
    -------
    DP1KResult

    Examples
    --------
    >>> import networkx as nx
    >>> G = nx.barabasi_albert_graph(400, 3, seed=1)
    >>> res = dp1k(G, epsilon=4.0, seed=0)
    >>> res.graph.number_of_nodes(), res.budget, int(res.histogram.sum())
    (400, {'histogram': 4.0}, 400)
    >>> R6 = dp1k(nx.random_regular_graph(6, 400, seed=1), epsilon=4.0, seed=0)
    >>> sorted(set(d for _, d in R6.graph.degree()))  # one bin, far above the noise
    [6]
    """
    enc, rng = read_graph(G, seed)
    n = enc.n
    true_deg = np.bincount(np.concatenate([enc.rows, enc.cols]).astype(np.int64), minlength=n)
    hist = np.bincount(true_deg, minlength=n)[:n].astype(float)
    b = SENSITIVITY / epsilon
    noisy = hist + rng.laplace(0.0, b, size=n)
    if threshold is None:
        threshold = b * np.log(10.0 * max(n, 1))
    counts = normalize_histogram(np.where(noisy >= threshold, noisy, 0.0), n)
    if n and counts.sum() == 0:
        counts[0] = n  # no bin above the noise: n isolated nodes
    deg = np.repeat(np.arange(n, dtype=np.int64), counts)[rng.permutation(n)]
    if deg.sum() % 2:
        deg[int(np.argmax(deg))] -= 1
    if construction == "havel-hakimi":
        # ties are broken by position: run on a random order of the nodes, so that the
        # numbering of the input (often grouped by community) cannot shape the graph
        perm = rng.permutation(n)
        r, c, unmatched = _havel_hakimi(deg[perm])
        r, c = perm[r], perm[c]
    else:
        r, c, unmatched = _configuration(deg, rng)
    return DP1KResult(graph_of_pairs(enc.index.nodes, r, c), {"histogram": epsilon},
                      noisy_histogram=noisy, histogram=counts, degrees=deg,
                      construction=construction, unmatched_stubs=unmatched)
