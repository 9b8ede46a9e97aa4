"""The probabilities dpgraph samples with are eps-DP in exact arithmetic.

For every epsilon the library accepts (>= 20,000 values log-spaced over the
accepted range, plus its extremes), binary and K-ary:

* keep / move <= e^eps, checked with integers only, against a lower bound on
  e^eps computed here independently of the library (Taylor series with
  floored integer arithmetic at 2^-320 resolution, then repeated squaring;
  every rounding is downwards, so the result is a rigorous lower bound);
* move < keep, i.e. the binary flip probability is < 1/2;
* realized_epsilon <= epsilon, and it is ln(keep/move) to float accuracy;
* the numerators handed to the samplers by ``dpgraph.release`` and
  ``MechanismE.release`` are exactly the certified ones (spied on).
"""

from __future__ import annotations

import importlib
import math
from fractions import Fraction

import networkx as nx
import numpy as np
import pytest

import dpgraph
import dpgraph.core.mechanism as mechanism_module
from dpgraph.core import MechanismE, Universe
from dpgraph.core.probabilities import rr_probabilities

release_module = importlib.import_module("dpgraph.graph.dense")

P = 320  # bits of the fixed-point lower bound of e^eps
ONE = 1 << P
N_EPS = 20_000


def exp_lower_fixed(x: Fraction) -> int:
    """An integer L with L / 2^P <= e^x for rational x >= 0 (rigorous)."""
    if x < 0:
        raise ValueError("x must be >= 0")
    k = max(0, x.numerator.bit_length() - x.denominator.bit_length() + 10)  # x / 2^k < 2^-9
    num, den = x.numerator, x.denominator << k
    term = total = ONE
    j = 1
    while term:
        term = term * num // (den * j)  # floor: each term is a lower bound
        total += term
        j += 1
    for _ in range(k):  # (e^(x/2^k))^(2^k), floored: still a lower bound
        total = total * total >> P
    return total


# e^45 > 2^64: above 45 every dyadic ratio (< 2^64) is trivially below e^eps.
assert exp_lower_fixed(Fraction(45)) > (1 << 64) * ONE


def certified_exactly(rr) -> bool:
    """keep / move <= e^eps and move < keep, in integers only."""
    m, K, den = rr.flip_numerator, rr.K, 1 << rr.bits
    keep_num = den - (K - 1) * m
    if not (0 < m < keep_num):
        return False
    eps = Fraction(rr.epsilon)
    if eps >= 45:
        return keep_num <= (1 << 64) * m  # ratio <= 2^64 < e^45 <= e^eps
    return keep_num * ONE <= exp_lower_fixed(eps) * m


def precision_floor(K: int) -> float:
    """The smallest float epsilon the library accepts for K values (bisection)."""
    lo, hi = 1e-30, 1.0
    while True:
        mid = math.sqrt(lo * hi) if hi / lo > 1.001 else (lo + hi) / 2
        if mid in (lo, hi):
            return hi
        try:
            rr_probabilities(mid, K)
            hi = mid
        except ValueError:
            lo = mid


def test_exp_lower_bound_helper_is_tight_and_below():
    for x in [Fraction(0), Fraction(1, 10**12), Fraction(1), Fraction(7, 3), Fraction(44)]:
        L = Fraction(exp_lower_fixed(x), ONE)
        assert Fraction(math.exp(float(x))) * (1 + Fraction(1, 10**15)) >= L
        assert abs(float(L) - math.exp(float(x))) <= 1e-14 * math.exp(float(x))
    # against a tight upper bound of e: e < 2.7182818284590453 (Taylor remainder)
    assert Fraction(exp_lower_fixed(Fraction(1)), ONE) < Fraction("2.7182818284590453")


@pytest.mark.parametrize("K", [2, 5])
def test_every_accepted_epsilon_is_certified(K):
    floor = precision_floor(K)
    sweep = np.geomspace(floor, 1e4, N_EPS)
    extremes = [
        floor, math.nextafter(floor, math.inf), 1e-12, 1e-6, 0.5, 1.0, 2.0, 4.0,
        math.log(2) * 64 - 1e-9, 44.3614195558365, 45.0, 199.999, 200.0, 200.001,
        700.0, 710.0, 1e10, 1e300, np.finfo(float).max,
    ]
    failures, worst = [], -math.inf
    for eps in list(sweep.tolist()) + extremes:
        rr = rr_probabilities(eps, K)
        if not certified_exactly(rr):
            failures.append(eps)
        real = rr.realized_epsilon
        assert real <= rr.epsilon, eps
        ratio = rr.truth_fraction / rr.flip_fraction
        assert ratio > 1
        # realized_epsilon is ln(ratio), rounded down, to float accuracy
        ln_ratio = math.log1p(float(ratio - 1))
        assert real <= ln_ratio + 1e-15 * max(1.0, ln_ratio) + 1e-30
        assert real >= ln_ratio - 1e-12 * max(1.0, ln_ratio) - 1e-30
        worst = max(worst, real / rr.epsilon)
    assert not failures, f"{len(failures)} eps values not certified, e.g. {failures[:5]}"
    assert worst <= 1.0


def test_flip_probability_below_one_half_and_close_to_exact():
    """p' in [e^-eps/(1+e^-eps), 1/2): more noise than the formula, never a coin flip."""
    half = Fraction(1, 2)
    for eps in np.geomspace(precision_floor(2), 60, 5_000).tolist():
        rr = rr_probabilities(eps, 2)
        p = rr.flip_fraction
        assert p < half
        # p' rounded up onto the 2^-64 grid from the true p: at most ~2^-64 above it
        target = 1 / (1 + math.exp(eps)) if eps < 700 else 0.0
        assert float(p) >= target * (1 - 1e-12)
        assert float(p) - target <= 2.0**-63 + 1e-15 * target


def test_precision_floor_is_refused_with_a_clear_error():
    for K in (2, 3, 5):
        floor = precision_floor(K)
        below = math.nextafter(floor, 0.0)
        with pytest.raises(ValueError, match="epsilon"):
            rr_probabilities(below, K)
        with pytest.raises(ValueError, match="epsilon"):
            rr_probabilities(5e-324, K)


def test_large_k_is_certified():
    for K in (3, 17, 256, 10_000):
        for eps in (precision_floor(K), 0.01, 1.0, 10.0, 100.0):
            assert certified_exactly(rr_probabilities(eps, K)), (K, eps)


def test_graph_release_samples_with_the_certified_numerator(monkeypatch):
    seen = []
    real = release_module.bernoulli_words

    def spy(n_words, numerator, source, **kwargs):
        seen.append(int(numerator))
        return real(n_words, numerator, source, **kwargs)

    monkeypatch.setattr(release_module, "bernoulli_words", spy)
    G = nx.gnp_random_graph(70, 0.2, seed=1)  # > 64 nodes: several words a row
    for eps in (1e-9, 0.3, 1.0, 3.0, 50.0):
        seen.clear()
        R = dpgraph.release(G, eps, seed=0)
        rr = rr_probabilities(eps, 2)
        assert seen and set(seen) == {rr.flip_numerator}
        assert certified_exactly(R.probabilities)
        assert R.flip_probability == float(rr.flip_fraction)
        assert R.realized_epsilon == rr.realized_epsilon <= eps
        # the estimators use the same public probability
        assert R.channel.d == pytest.approx(float(1 - 2 * rr.flip_fraction), rel=1e-15)


def test_mechanism_e_samples_with_the_certified_numerator(monkeypatch):
    seen = []
    real = mechanism_module.rr_sample

    def spy(indices, rr, source):
        seen.append((rr.K, rr.flip_numerator))
        return real(indices, rr, source)

    monkeypatch.setattr(mechanism_module, "rr_sample", spy)
    U = Universe(["a", "b", "c", "d"])
    for eps in (1e-6, 0.5, 2.0, 20.0):
        seen.clear()
        M = MechanismE(U, eps)
        M.release(np.array(["a", "d", "c"]), seed=1)
        assert seen == [(4, rr_probabilities(eps, 4).flip_numerator)]
        assert certified_exactly(M.probabilities)
        assert M.probabilities.realized_epsilon <= eps


def test_realized_epsilon_never_exceeds_the_exact_log_ratio():
    """realized_epsilon <= ln(keep/move), checked at 120 significant digits
    (mpmath), including tiny eps where ln(keep) and ln(move) nearly cancel."""
    import mpmath  # in the test extra: a broken install must fail, not skip
    with mpmath.workdps(120):
        for K in (2, 5):
            for eps in np.geomspace(precision_floor(K), 60, 1_500).tolist():
                rr = rr_probabilities(eps, K)
                r = rr.ratio
                exact = mpmath.log(mpmath.mpf(r.numerator) / mpmath.mpf(r.denominator))
                assert mpmath.mpf(rr.realized_epsilon) <= exact, (K, eps)
                assert rr.realized_epsilon >= float(exact) * (1 - 1e-12)
