"""Neighbour audits of dpgraph's releases, and proof that the audit can fail.

Every audit: 10^5 runs a side (plus 10^4 a side to choose the event),
Clopper-Pearson bounds at alpha = 1e-6 per interval.  The library passes when
eps_LB <= eps.  Each deliberately broken mechanism below is run through the
*same* audit and must be caught (eps_LB > eps).  Results are printed (run
with ``-s`` to see the intervals).

Why the audit can detect each bug (exact theory, eps = 1 unless stated):

* eps x 1.1: the true loss is 1.1, the audit's interval half-width about 0.035.
* a seed shared by all pairs: every pair gets the same flip, so two pairs
  that agree in G' disagree in G with probability 1: infinite loss.
* a seed reused across releases: the output is a deterministic function of
  the input: infinite loss (needs one release per run, ``copies=1``).
* keep sampled with the wrong probability (keep w.p. e^eps/(1+e^eps), else
  output a fresh uniform bit): loss ln(1 + 2 e^eps) = 1.86.
* flip probability rounded down to a 4-bit grid: p = 4/16 instead of
  0.2689, loss ln 3 = 1.099.  A rounding error far below the audit's
  resolution (one unit in 2^-64) is caught by the exact certificate instead
  (tests/test_privacy_certified.py); both are checked here.

Fixed seeds make every audit reproducible; alpha = 1e-6 makes a false alarm
on a correct mechanism a one-in-a-million event.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import networkx as nx
import numpy as np
import pytest
from _samplers import flip_mask

import dpgraph
from dpgraph.audit import (
    clopper_pearson,
    graph_pmf,
    graph_sampler,
    histogram_test,
    log_ratio_bounds,
    mechanism_pmf,
    mechanism_sampler,
    neighbour_audit,
    select_event,
)
from dpgraph.core import MechanismE, Universe
from dpgraph.core.probabilities import RRProbabilities, rr_probabilities
from dpgraph.core.randomness import SeededRandom, resolve_random
from dpgraph.core.sampling import rr_sample
from dpgraph.graph.dense import release_packed
from dpgraph.graph.encoding import encode_graph
from dpgraph.graph.packed import PackedAdjacency, words_per_row
from dpgraph.graph.private import PrivateGraph

N_RUNS = 100_000
N_SEARCH = 10_000
COPIES = 100  # copies of G released at once by the fast sampler
EPSILONS = [0.5, 1.0, 2.0, 4.0]


def path_pair():
    """G = path 0-1-2 and G' = G without (0, 1): neighbours in one vertex pair."""
    G = nx.path_graph(3)
    H = G.copy()
    H.remove_edge(0, 1)
    return G, H


# ---------------------------------------------------------------------------
# deliberately broken graph releases: (G, epsilon, seed) -> PrivateGraph
# ---------------------------------------------------------------------------
def _private_from_dense(enc, released: np.ndarray, rr: RRProbabilities) -> PrivateGraph:
    n = enc.n
    upper = np.triu(released, 1)
    packed = np.packbits(upper, axis=1, bitorder="little")
    nw = words_per_row(n)
    buf = np.zeros((n, nw * 8), dtype=np.uint8)
    buf[:, : packed.shape[1]] = packed
    return PrivateGraph(PackedAdjacency(buf.view(np.uint64).copy(), n, False), enc.index, rr)


def _truth(enc) -> np.ndarray:
    x = np.zeros((enc.n, enc.n), dtype=bool)
    x[enc.rows, enc.cols] = True
    return x


def inflated_epsilon(G, epsilon, seed=None):
    """Bug: samples at 1.1 eps while claiming eps."""
    return dpgraph.release(G, 1.1 * epsilon, seed=seed)


def shared_seed_across_pairs(G, epsilon, seed=None):
    """Bug: every pair seeds its own generator with the same seed.

    Each pair then draws the same first word, so all pairs share one flip
    (vectorized equivalent of a per-pair ``SeededRandom(s)``).
    """
    src = resolve_random(seed)
    rr = rr_probabilities(epsilon)
    enc = encode_graph(G)
    s = int(src.uint64(1)[0])
    flip = bool(flip_mask(1, rr.flip_numerator, SeededRandom(s))[0])
    return _private_from_dense(enc, _truth(enc) ^ flip, rr)


@functools.lru_cache(maxsize=16)
def _fixed_seed_release(G, epsilon):
    return dpgraph.release(G, epsilon, seed=12345)


def reused_seed_across_releases(G, epsilon, seed=None):
    """Bug: a hard-coded seed, so every release of G is the same.

    Memoized: observationally identical to calling the release with the same
    seed each time, and 1000x faster.
    """
    return _fixed_seed_release(G, epsilon)


def wrong_truth_probability(G, epsilon, seed=None):
    """Bug: keep w.p. e^eps/(1+e^eps), otherwise output a fresh uniform bit.

    The total keep probability becomes (1 + q)/2 > q: loss ln(1 + 2 e^eps).
    """
    src = resolve_random(seed)
    rr = rr_probabilities(epsilon)
    enc = encode_graph(G)
    n = enc.n
    randomize = flip_mask(n * n, rr.flip_numerator, src).reshape(n, n)
    coin = flip_mask(n * n, 1 << 63, src).reshape(n, n)
    return _private_from_dense(enc, np.where(randomize, coin, _truth(enc)), rr)


def rounded_down(bits: int):
    """Bug factory: the flip probability rounded DOWN to a ``bits``-bit grid."""

    def release(G, epsilon, seed=None):
        p = Fraction(math.exp(-epsilon) / (1 + math.exp(-epsilon)))
        m = math.floor(p * (1 << bits)) << (64 - bits)
        rr = RRProbabilities(K=2, epsilon=float(epsilon), flip_numerator=m)
        enc = encode_graph(G)
        return PrivateGraph(release_packed(enc, rr, resolve_random(seed)), enc.index, rr)

    return release


BROKEN_GRAPH = {
    "eps x 1.1": (inflated_epsilon, COPIES),
    "seed shared across pairs": (shared_seed_across_pairs, COPIES),
    "seed reused across releases": (reused_seed_across_releases, 1),
    "keep w/ wrong probability": (wrong_truth_probability, COPIES),
    "flip p rounded down (4 bits)": (rounded_down(4), COPIES),
}


# ---------------------------------------------------------------------------
# deliberately broken K-ary releases: (X, epsilon, seed) -> labels
# ---------------------------------------------------------------------------
U3 = Universe([1, 2, 3])
X_KARY, X_KARY_NEIGHBOUR = np.array([1, 2]), np.array([3, 2])


def kary_inflated(X, epsilon, seed=None):
    return MechanismE(U3, 1.1 * epsilon).release(X, seed=seed)


def kary_wrong_keep(X, epsilon, seed=None):
    """Bug: keep w.p. e^eps/(e^eps+K-1), else a uniform value *including* the truth."""
    src = resolve_random(seed)
    rr = rr_probabilities(epsilon, U3.K)
    idx = U3.encode(X)
    randomize = flip_mask(idx.size, (U3.K - 1) * rr.flip_numerator, src)
    uniform = (src.uint64(idx.size) % np.uint64(U3.K)).astype(np.intp)  # bias 2^-62, negligible
    return U3.decode(np.where(randomize, uniform, idx))


def kary_shared_word(X, epsilon, seed=None):
    """Bug: one random word for all rows (a seed shared across rows)."""
    src = resolve_random(seed)
    rr = rr_probabilities(epsilon, U3.K)
    idx = U3.encode(X)
    word = int(src.uint64(1)[0])

    class Repeat:
        def uint64(self, n):
            return np.full(n, word, dtype=np.uint64)

    return U3.decode(rr_sample(idx, rr, Repeat()))


def kary_rounded_down(X, epsilon, seed=None):
    """Bug: the move probability e^-eps/g rounded down to a 4-bit grid."""
    g = 1 + (U3.K - 1) * math.exp(-epsilon)
    m = math.floor(Fraction(math.exp(-epsilon) / g) * 16) << 60
    rr = RRProbabilities(K=U3.K, epsilon=float(epsilon), flip_numerator=m)
    return U3.decode(rr_sample(U3.encode(X), rr, resolve_random(seed)))


BROKEN_KARY = {
    "eps x 1.1": kary_inflated,
    "seed shared across rows": kary_shared_word,
    "keep w/ wrong probability": kary_wrong_keep,
    "move p rounded down (4 bits)": kary_rounded_down,
}


def _exact_log_ratio(res, pmf1, pmf2) -> float:
    p1 = float(pmf1[list(res.event)].sum())
    p2 = float(pmf2[list(res.event)].sum())
    if res.reversed:
        p1, p2 = p2, p1
    return math.log(p1 / p2)


# ---------------------------------------------------------------------------
# the confidence machinery itself
# ---------------------------------------------------------------------------
def test_clopper_pearson_matches_binomial_tails():
    """The CP bounds are the exact binomial tail inversions."""
    from scipy import stats

    k, n, alpha = 37, 200, 1e-3
    lo, hi = clopper_pearson(k, n, alpha)
    assert stats.binom.sf(k - 1, n, lo) == pytest.approx(alpha / 2, rel=1e-6)
    assert stats.binom.cdf(k, n, hi) == pytest.approx(alpha / 2, rel=1e-6)
    with pytest.raises(ValueError, match="k <= n"):
        clopper_pearson(5, 4)


def test_interval_width_at_eps_one_is_as_advertised():
    """At eps = 1 with 10^5 runs a side, [eps_LB, eps_UB] is about 1 +- 0.035."""
    p = math.exp(1) / (1 + math.exp(1))
    lb, _, ub = log_ratio_bounds(round(p * N_RUNS), N_RUNS, round((1 - p) * N_RUNS), N_RUNS)
    assert 0.03 < (ub - lb) / 2 < 0.04


def test_event_search_finds_the_revealing_outcome():
    a = np.array([3] * 60 + [0] * 40)
    b = np.array([3] * 10 + [0] * 90)
    assert select_event(a, b, alpha=0.01) == ((3,), False)
    assert select_event(b, a, alpha=0.01) == ((3,), True)


# ---------------------------------------------------------------------------
# the library passes
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_graph_release_passes_neighbour_audit(epsilon):
    G, H = path_pair()
    res = neighbour_audit(graph_sampler(copies=COPIES), G, H, epsilon, n=N_RUNS,
                          n_search=N_SEARCH, seed=1)
    print(f"\n[graph release, copies={COPIES}] {res}  half-width={res.half_width:.4f}")
    assert res.passed, str(res)
    # the interval covers the event's exact log-ratio (fails w.p. <= 2 alpha)
    rr = rr_probabilities(epsilon)
    truth = _exact_log_ratio(res, graph_pmf(G, rr), graph_pmf(H, rr))
    assert res.eps_lower <= truth <= res.eps_upper, (truth, str(res))
    # and the audit was sharp: it found an event whose loss is the full epsilon
    assert truth == pytest.approx(rr.realized_epsilon, abs=1e-9)


def test_directed_release_passes_neighbour_audit_and_histogram():
    """Ordered pairs: G has 0 -> 1, its neighbour does not (1 -> 0 is kept)."""
    G = nx.DiGraph([(0, 1), (1, 0), (1, 2)])
    G.add_node(2)
    H = G.copy()
    H.remove_edge(0, 1)
    sampler = graph_sampler(copies=COPIES)
    res = neighbour_audit(sampler, G, H, 1.0, n=N_RUNS, n_search=N_SEARCH, seed=13)
    print(f"\n[directed graph release] {res}")
    assert res.passed, str(res)
    rr = rr_probabilities(1.0)
    truth = _exact_log_ratio(res, graph_pmf(G, rr), graph_pmf(H, rr))
    assert res.eps_lower <= truth <= res.eps_upper
    codes = sampler(G, 1.0, 50_000, resolve_random(14))
    stat, pvalue = histogram_test(codes, graph_pmf(G, rr))  # 64 outcomes
    assert pvalue >= 1e-4, (stat, pvalue)


@pytest.mark.slow
def test_graph_release_passes_audit_one_release_per_run():
    """The literal audit: 10^5 separate calls of dpgraph.release a side, eps = 1."""
    G, H = path_pair()
    event = [c for c in range(8) if c & 1]  # pair (0, 1) released as an edge
    res = neighbour_audit(graph_sampler(copies=1), G, H, 1.0, n=N_RUNS, event=event, seed=2)
    print(f"\n[graph release, one call per run] {res}  half-width={res.half_width:.4f}")
    assert res.passed, str(res)
    assert res.eps_lower <= rr_probabilities(1.0).realized_epsilon <= res.eps_upper


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_mechanism_e_passes_neighbour_audit(epsilon):
    res = neighbour_audit(mechanism_sampler(U3, copies=1000), X_KARY, X_KARY_NEIGHBOUR,
                          epsilon, n=N_RUNS, n_search=N_SEARCH, seed=3)
    print(f"\n[MechanismE K=3] {res}  half-width={res.half_width:.4f}")
    assert res.passed, str(res)
    rr = rr_probabilities(epsilon, 3)
    truth = _exact_log_ratio(res, mechanism_pmf(X_KARY, U3, rr),
                             mechanism_pmf(X_KARY_NEIGHBOUR, U3, rr))
    assert res.eps_lower <= truth <= res.eps_upper
    assert truth == pytest.approx(rr.realized_epsilon, abs=1e-9)


def test_mechanism_e_passes_audit_one_release_per_run():
    event = [c for c in range(9) if c % 3 == 0]  # row 0 released as label 1
    res = neighbour_audit(mechanism_sampler(U3), X_KARY, X_KARY_NEIGHBOUR, 1.0,
                          n=30_000, event=event, seed=4)
    print(f"\n[MechanismE K=3, one call per run] {res}")
    assert res.passed, str(res)


# ---------------------------------------------------------------------------
# full-output histograms against the exact pmf (chi-square, p-value >= 1e-4)
# ---------------------------------------------------------------------------
ALL_3_NODE_GRAPHS = [
    nx.Graph([e for k, e in enumerate([(0, 1), (0, 2), (1, 2)]) if code >> k & 1])
    for code in range(8)
]
for _g in ALL_3_NODE_GRAPHS:
    _g.add_nodes_from(range(3))


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_histograms_of_all_3_node_graphs_match_exact_pmf(epsilon):
    rr = rr_probabilities(epsilon)
    sampler = graph_sampler(copies=COPIES)
    for code, G in enumerate(ALL_3_NODE_GRAPHS):
        src = resolve_random(np.random.default_rng([5, code, int(epsilon * 10)]))
        codes = sampler(G, epsilon, 20_000, src)
        stat, pvalue = histogram_test(codes, graph_pmf(G, rr))
        assert pvalue >= 1e-4, (code, stat, pvalue)
        assert np.bincount(codes).argmax() == code  # the truth is the likeliest output


def test_histogram_one_release_per_run_matches_exact_pmf():
    G, _ = path_pair()
    codes = graph_sampler(copies=1)(G, 1.0, 5_000, resolve_random(6))
    stat, pvalue = histogram_test(codes, graph_pmf(G, rr_probabilities(1.0)))
    print(f"\n[histogram, one call per run] chi2={stat:.2f} p={pvalue:.3f}")
    assert pvalue >= 1e-4


@pytest.mark.parametrize("K", [3, 5])
def test_mechanism_e_histogram_matches_exact_pmf(K):
    U = Universe(list(range(10, 10 + K)))
    X = np.array([10, 10 + K - 1])
    rr = rr_probabilities(1.0, K)
    codes = mechanism_sampler(U, copies=1000)(X, 1.0, 50_000, resolve_random(7))
    stat, pvalue = histogram_test(codes, mechanism_pmf(X, U, rr))
    assert pvalue >= 1e-4, (stat, pvalue)


def test_histogram_test_rejects_a_wrong_distribution():
    """The chi-square check has power: the eps-x-1.1 mechanism fails it."""
    G, _ = path_pair()
    codes = graph_sampler(inflated_epsilon, copies=COPIES)(G, 1.0, 100_000, resolve_random(8))
    stat, pvalue = histogram_test(codes, graph_pmf(G, rr_probabilities(1.0)))
    assert pvalue < 1e-4, (stat, pvalue)


# ---------------------------------------------------------------------------
# the audit catches every broken variant
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(BROKEN_GRAPH))
def test_audit_catches_broken_graph_release(name):
    release, copies = BROKEN_GRAPH[name]
    G, H = path_pair()
    res = neighbour_audit(graph_sampler(release, copies=copies), G, H, 1.0, n=N_RUNS,
                          n_search=N_SEARCH, seed=9)
    print(f"\n[broken graph: {name}] {res}")
    assert not res.passed, f"audit missed '{name}': {res}"


@pytest.mark.parametrize("name", list(BROKEN_KARY))
def test_audit_catches_broken_kary_release(name):
    res = neighbour_audit(mechanism_sampler(U3, BROKEN_KARY[name], copies=1000), X_KARY,
                          X_KARY_NEIGHBOUR, 1.0, n=N_RUNS, n_search=N_SEARCH, seed=10)
    print(f"\n[broken K-ary: {name}] {res}")
    assert not res.passed, f"audit missed '{name}': {res}"


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_audit_catches_inflated_epsilon_at_every_level(epsilon):
    G, H = path_pair()
    res = neighbour_audit(graph_sampler(inflated_epsilon, copies=COPIES), G, H, epsilon,
                          n=N_RUNS, n_search=N_SEARCH, seed=11)
    print(f"\n[broken graph: eps x 1.1 at eps={epsilon}] {res}")
    assert not res.passed, str(res)


def test_reused_seed_needs_one_release_per_run():
    """Why the literal one-call-per-run sampler exists.

    Batching copies into one release observes randomness within a release; a
    seed reused *across* releases shows up there only indirectly (the same
    chunk repeated, so the runs are not independent and the interval is
    wrong).  One call per run sees it directly: the output never changes.
    """
    G, H = path_pair()
    batched = neighbour_audit(graph_sampler(reused_seed_across_releases, copies=COPIES), G, H,
                              1.0, n=20_000, n_search=2_000, seed=12)
    literal = neighbour_audit(graph_sampler(reused_seed_across_releases, copies=1), G, H,
                              1.0, n=20_000, n_search=2_000, seed=12)
    print(f"\n[reused seed, copies={COPIES}] {batched}\n[reused seed, copies=1] {literal}")
    assert literal.k1 == literal.n1 and literal.k2 == 0  # a deterministic output
    assert not literal.passed
    assert literal.eps_lower > batched.eps_lower


def test_certificate_catches_rounding_below_audit_resolution():
    """Rounding p' down by one unit of 2^-64 is invisible to any audit but not to
    the exact certificate; the float formula p = e^-eps/(1+e^-eps) fails it for
    many eps too."""
    float_failures = 0
    for eps in np.geomspace(1e-3, 30, 2000):
        rr = rr_probabilities(float(eps))
        assert rr.certify()
        bad = RRProbabilities(K=2, epsilon=rr.epsilon, flip_numerator=rr.flip_numerator - 1)
        assert not bad.certify()
        p = Fraction(math.exp(-eps) / (1 + math.exp(-eps)))
        m = math.floor(p * (1 << 64))  # the float's value, truncated onto the 2^-64 grid
        float_failures += not RRProbabilities(2, float(eps), m).certify()
    print(f"\nnaive float flip probability fails the exact certificate for "
          f"{float_failures}/2000 eps values")
    assert float_failures > 0
