"""Exact discrete Laplace noise: certification, distribution, refusals."""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dpgraph.core import discrete_laplace
from dpgraph.core.randomness import SeededRandom


@pytest.mark.parametrize("epsilon, sensitivity", [(0.05, 2), (0.5, 2), (1.0, 1), (3.0, 2), (30.0, 1)])
def test_certified_and_rounded_up(epsilon, sensitivity):
    lap = discrete_laplace(epsilon, sensitivity)
    assert lap.certify()
    assert lap.realized_epsilon <= epsilon
    # alpha is the smallest certified dyadic value (or the floor 2^-20): one step down fails
    below = Fraction(lap.numerator - 1, 2**64)
    if lap.numerator > 2**44:
        assert below ** -sensitivity > Fraction(math.exp(epsilon)) * (1 - Fraction(1, 10**12))


@pytest.mark.parametrize("epsilon, sensitivity", [(0.3, 2), (1.0, 2), (2.0, 1)])
def test_chi_square_against_the_exact_pmf(epsilon, sensitivity):
    lap = discrete_laplace(epsilon, sensitivity)
    n = 60_000
    x = lap.sample(n, SeededRandom(11))
    assert x.dtype == np.int64
    # cells: every k with expected count >= 20, plus the two tails
    ks = np.arange(-400, 401)
    expected = n * lap.pmf(ks)
    keep = ks[expected >= 20]
    lo, hi = int(keep.min()), int(keep.max())
    observed = [int(np.sum(x < lo))] + [int(np.sum(x == k)) for k in range(lo, hi + 1)] + \
        [int(np.sum(x > hi))]
    probs = [float(lap.cdf(lo - 1))] + list(lap.pmf(np.arange(lo, hi + 1))) + \
        [float(1 - lap.cdf(hi))]
    exp = n * np.asarray(probs)
    chi2 = float(np.sum((np.asarray(observed) - exp) ** 2 / exp))
    assert stats.chi2.sf(chi2, len(observed) - 1) > 1e-3


def test_variance_matches_the_closed_form():
    lap = discrete_laplace(1.0, 2)
    x = lap.sample(200_000, SeededRandom(3)).astype(np.float64)
    # the sample variance's standard error, from the sample's fourth moment (mean 0)
    se = math.sqrt((np.mean(x**4) - x.var() ** 2) / x.size)
    assert abs(x.var() - lap.variance) < 4 * se


def test_refuses_bad_parameters():
    with pytest.raises(ValueError, match="epsilon"):
        discrete_laplace(-1.0)
    with pytest.raises(ValueError, match="sensitivity"):
        discrete_laplace(1.0, 0)
    with pytest.raises(ValueError, match="precision floor"):
        discrete_laplace(1e-14, 2)
