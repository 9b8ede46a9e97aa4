"""The probabilities actually sampled satisfy the eps-DP ratio exactly.

The check here is independent of the library's own certificate: e^eps is
bounded below by a partial sum of its Taylor series in exact rational
arithmetic, so no floating point enters the comparison.
"""

import math
from fractions import Fraction

import numpy as np
import pytest

from dpgraph.core import rr_probabilities


def exp_taylor_lower(epsilon: float) -> Fraction:
    """sum_{k<=N} eps^k / k!  <=  e^eps for eps >= 0 (all terms positive)."""
    x = Fraction(epsilon)
    total, term, k = Fraction(0), Fraction(1), 0
    while True:
        total += term
        k += 1
        term = term * x / k
        if k > 2 * float(x) + 60 and term < Fraction(1, 10**40) * total:
            return total


EPSILONS = sorted(set(np.logspace(-6, math.log10(50), 40).tolist() + [1e-6, 1.0, 50.0]))


@pytest.mark.parametrize("K", [2, 3, 5, 8, 256])
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_dp_ratio_holds_exactly(K, epsilon):
    rr = rr_probabilities(epsilon, K)
    keep, move = rr.truth_fraction, rr.flip_fraction
    assert move > 0 and keep > move
    assert keep + (K - 1) * move == 1
    assert keep / move <= exp_taylor_lower(epsilon)
    assert rr.realized_epsilon <= epsilon


@pytest.mark.parametrize("epsilon", [1e-6, 0.5, 1.0, 4.0, 20.0])
def test_flip_probability_is_rounded_up_and_tight(epsilon):
    rr = rr_probabilities(epsilon, 2)
    p = math.exp(-epsilon) / (1 + math.exp(-epsilon))
    assert rr.flip_probability < 0.5
    # rounded up by less than a few units of 2^-64 beyond float error of p itself
    assert rr.flip_probability >= p * (1 - 1e-15)
    assert rr.flip_probability - p <= 1e-15 * p + 2.0**-62


def test_too_small_epsilon_is_refused():
    with pytest.raises(ValueError, match="precision floor"):
        rr_probabilities(1e-30, 2)


def test_large_epsilon_still_certified():
    rr = rr_probabilities(1000.0, 2)
    assert rr.flip_numerator >= 1 and rr.certify()
    assert rr.realized_epsilon <= 1000.0
