"""TmF, the Top-m Filter (Nguyen, Imine & Rusinowitch, 2015), in O(m).

A published edge-DP synthetic-graph baseline ("Differentially private
publication of social graphs at linear cost", ASONAM 2015; journal version
"Network structure release under differential privacy", Transactions on
Data Privacy 9(3), 2016).  Re-implemented here from its description:

1. Spend ``eps2`` on the edge count: m~ = m + Lap(1 / eps2) (sensitivity 1),
   rounded and clipped to 0..N, N = n(n-1)/2.
2. Spend ``eps1 = eps - eps2`` on the cells: conceptually every cell A_ij of
   the upper triangle gets Lap(1 / eps1) noise (sensitivity 1 per cell under
   edge-DP) and the output keeps the m~ largest noisy cells, restricted to
   those above the threshold

       eps_t = ln(N / m~ - 1)
       theta = ln(N / m~ - 1) / (2 eps1)                     if eps1 < eps_t
       theta = ln(N / (2 m~) + (e^eps1 - 1) / 2) / eps1      otherwise,

   chosen so that about m~ cells pass.
3. Linear cost (the N - m zero cells are never materialized), two variants:

   ``variant="paper"`` (default), the published algorithm, which the SoK
   figures were produced with: every true edge whose noisy value 1 + Lap
   passes theta is kept (n1 of them; the m~ largest if more pass), then
   m~ - n1 non-edges are drawn uniformly at random.  Its privacy rests on
   the paper's argument that this approximates the thresholded top-m~.

   ``variant="exact-topm"``: the thresholded top-m~ selection on the fully
   noised matrix, simulated exactly.  How many zero cells pass is
   k0 ~ Binomial(N - m, P(Lap > theta)); by the memorylessness of the
   Laplace tail their noisy values are theta plus iid Exp(eps1).  Only the
   j = min(k0, m~) largest can reach the output: their values are drawn
   directly (the (k0-j)-th order statistic from a Beta law, then j
   memoryless excesses) and they are placed uniformly among the non-edges;
   the top m~ of the passing cells form the output.  This is
   (eps1 + eps2)-edge-DP by construction (Laplace mechanism +
   post-processing), in O(m + m~) (k0 itself can be ~ sqrt(N m~)).

The default split gives half of the budget to the count, as in the port the
published SoK figures were produced with (``count_fraction=0.5``); the
count's noise Lap(2/eps) is negligible for m ~ 1e5 either way.  It is a
baseline for accuracy comparisons: its noise uses a numpy Generator derived
from the core's random source, not a certified sampler.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.stats

from ..validation import Epsilon, Interval, Options, validate_params
from ._common import graph_of_pairs, read_graph

__all__ = ["TmFResult", "tmf", "tmf_threshold"]


@dataclass(frozen=True)
class TmFResult:
    """Output of :func:`tmf`.

    Attributes
    ----------
    graph : networkx.Graph
        The synthetic graph on the input's node set: the pairs whose noisy
        cell passes ``threshold``, about ``noisy_edge_count`` edges.
    noisy_edge_count : int
        m~, the released edge count (the target size).
    threshold : float
        theta.
    eps_cells, eps_count : float
        The privacy split (eps1 for the cells, eps2 for the count).

    Only released quantities: how many true edges passed the threshold is
    never exposed (it is a non-private function of the input).
    """

    graph: Any
    noisy_edge_count: int
    threshold: float
    eps_cells: float
    eps_count: float


def tmf_threshold(n_pairs: float, m_tilde: float, eps_cells: float) -> float:
    """The TmF threshold theta for N pairs, target m~ and cell budget eps1.

    Examples
    --------
    >>> round(tmf_threshold(8_000_000, 90_000, 0.5), 4)
    4.4761
    """
    if m_tilde <= 0:
        return float("inf")
    ratio = n_pairs / m_tilde
    eps_t = np.log(max(ratio - 1.0, 1e-300))
    if eps_cells < eps_t:
        return float(np.log(ratio - 1.0) / (2.0 * eps_cells))
    return float(np.log(ratio / 2.0 + (np.exp(eps_cells) - 1.0) / 2.0) / eps_cells)


@validate_params(epsilon=Epsilon(), variant=Options("paper", "exact-topm"),
                 count_fraction=Interval(numbers.Real, 0, 1, closed="neither", example="0.5"))
def tmf(G: Any, epsilon: float, seed: Any = None, count_fraction: float = 0.5,
        variant: str = "paper") -> TmFResult:
    """Release a synthetic graph with TmF at privacy level epsilon (edge-DP).

    Parameters
    ----------
    G : networkx.Graph
        Undirected simple graph.
    epsilon : float
        Total budget, > 0, shared between the cells and the edge count.
    seed : None, int or numpy.random.Generator
        Randomness (``None``: fresh OS entropy).
    count_fraction : float, default 0.5
        Share of epsilon spent on the edge count (eps2 = count_fraction * eps).
    variant : {"paper", "exact-topm"}, default "paper"
        "paper": the published algorithm (and the port behind the SoK
        figures): keep every true edge whose noisy value passes theta, then
        fill up to m~ with non-edges drawn uniformly.  "exact-topm": the
        m~ largest of all noisy cells above theta, simulated exactly in
        O(m + m~) (step 3 of the module notes); it drops more true edges.

    Returns
    -------
    TmFResult

    Examples
    --------
    >>> import networkx as nx
    >>> G = nx.gnm_random_graph(300, 2000, seed=1)
    >>> res = tmf(G, epsilon=2.0, seed=0)
    >>> res.graph.number_of_nodes(), abs(res.graph.number_of_edges() - 2000) < 100
    (300, True)
    """
    return _tmf_traced(G, epsilon, seed, count_fraction, variant)[0]


def _tmf_traced(G: Any, epsilon: float, seed: Any, count_fraction: float,
                variant: str) -> tuple[TmFResult, dict]:
    """:func:`tmf` and the non-private counts of its run (for the module's own tests).

    The counts (true edges passing the threshold, non-edges passing or
    filled) depend on the input graph: they are never part of a release.
    The arguments are declared by :func:`tmf`.
    """
    from ..core import pair_count

    enc, rng = read_graph(G, seed)
    n = enc.n
    N = pair_count(n, False)
    m = int(enc.rows.size)
    eps2 = float(count_fraction) * epsilon
    eps1 = epsilon - eps2
    m_tilde = int(np.clip(np.rint(m + rng.laplace(0.0, 1.0 / eps2)), 0, N))
    theta = tmf_threshold(N, m_tilde, eps1)
    # true edges: explicit noise
    noisy = 1.0 + rng.laplace(0.0, 1.0 / eps1, size=m)
    keep_e = noisy > theta
    e_codes = enc.rows.astype(np.int64) * n + enc.cols.astype(np.int64)
    cand_codes = [e_codes[keep_e]]
    cand_vals = [noisy[keep_e]]
    if variant == "paper":
        # the published algorithm: every passing edge (the m~ largest if more
        # pass), then m~ - n1 non-edges drawn uniformly at random
        codes = e_codes[keep_e]
        if codes.size > m_tilde:
            top = np.argpartition(-noisy[keep_e], m_tilde - 1)[:m_tilde] if m_tilde else []
            codes = codes[np.asarray(top, dtype=np.int64)]
        n0 = min(m_tilde - codes.size, N - m)
        if n0 > 0:
            codes = np.concatenate([codes, _sample_non_edges(n, np.sort(e_codes), n0, rng)])
        trace = {"passing_edges": int(keep_e.sum()), "filled_non_edges": int(max(n0, 0))}
        return TmFResult(_to_graph(enc, codes), m_tilde, float(theta), eps1, eps2), trace
    # non-edges: how many pass, where, and their (memoryless) noisy values
    q0 = float(scipy.stats.laplace.sf(theta, scale=1.0 / eps1)) if np.isfinite(theta) else 0.0
    k0 = int(rng.binomial(N - m, q0)) if m < N else 0
    k0 = min(k0, N - m)
    # only the j = min(k0, m~) largest passing non-edges can reach the output
    j = min(k0, m_tilde)
    if j:
        chosen = _sample_non_edges(n, np.sort(e_codes), j, rng)
        if theta >= 0:
            # Renyi: the (k0-j)-th of k0 Exp(eps1) excesses over theta is
            # -ln(1-U)/eps1 with U ~ Beta(k0-j, j+1); the j above it are that
            # plus iid Exp(eps1) (memoryless)
            base = -np.log1p(-rng.beta(k0 - j, j + 1)) / eps1 if k0 > j else 0.0
            vals = theta + base + rng.exponential(1.0 / eps1, size=j)
        else:  # theta < 0 (tiny graphs, huge eps): the conditional law by inversion
            u = rng.uniform(1.0 - q0, 1.0, size=k0)
            allv = np.where(u < 0.5, np.log(2 * u) / eps1, -np.log(2 * (1 - u)) / eps1)
            vals = np.sort(allv)[::-1][:j]
        cand_codes.append(chosen)
        cand_vals.append(vals)
    codes = np.concatenate(cand_codes)
    vals = np.concatenate(cand_vals)
    if codes.size > m_tilde:
        top = np.argpartition(-vals, m_tilde - 1)[:m_tilde] if m_tilde > 0 else np.array([], int)
        codes = codes[top]
    H = _to_graph(enc, codes)
    trace = {"passing_edges": int(keep_e.sum()), "passing_non_edges": int(k0)}
    return TmFResult(H, m_tilde, float(theta), eps1, eps2), trace


def _to_graph(enc: Any, codes: np.ndarray) -> Any:
    return graph_of_pairs(enc.index.nodes, *np.divmod(np.asarray(codes, dtype=np.int64), enc.n))


def _sample_non_edges(n: int, edge_codes_sorted: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """k distinct uniform pairs i < j (codes i*n+j) that are not edges, by vectorized rejection."""
    got = np.empty(0, dtype=np.int64)
    while got.size < k:
        need = k - got.size
        batch = int(need * 1.2) + 64
        i = rng.integers(0, n, size=batch)
        j = rng.integers(0, n, size=batch)
        ok = i != j
        lo, hi = np.minimum(i, j)[ok], np.maximum(i, j)[ok]
        codes = lo.astype(np.int64) * n + hi
        if edge_codes_sorted.size:
            pos = np.minimum(np.searchsorted(edge_codes_sorted, codes), edge_codes_sorted.size - 1)
            codes = codes[edge_codes_sorted[pos] != codes]
        got = np.unique(np.concatenate([got, codes]))
    if got.size > k:  # drop a uniformly random surplus, keeping uniformity
        got = rng.choice(got, size=k, replace=False)
    return got
