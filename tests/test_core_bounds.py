"""The bound functions reproduce hand-computed values of the paper's formulas.

Values are chosen so the arithmetic is exact on paper: eps = ln 2 gives
e^-eps = 1/2, eps = ln 3 gives e^eps = 3.
"""

import math

import numpy as np
import pytest

from dpgraph import bounds

LN2, LN3 = math.log(2), math.log(3)
TAIL = 0.15865525393145707  # 1 - Phi(1)


def test_lemma2_upper_binary():
    # g = 1.5, 1 - e^-eps = 0.5: g^2 / 0.25 = 9
    assert bounds.statistical_upper(100, 2, LN2) == pytest.approx(0.09)


def test_lemma2_upper_with_range():
    # (b - a)^2 / c^2 = 4 / 1, K = 5: g = 1 + 4 * 0.5 = 3, 9 / 0.25 = 36
    assert bounds.statistical_upper(36, 5, LN2, a=-1, b=1, c=1) == pytest.approx(4.0)


def test_lemma3_is_four_times_and_absolute_is_sqrt():
    sq = bounds.statistical_upper(100, 2, LN2)
    assert bounds.statistical_upper(100, 2, LN2, proper=True) == pytest.approx(4 * sq)
    assert bounds.statistical_upper(100, 2, LN2, absolute=True) == pytest.approx(0.3)
    assert bounds.statistical_upper(100, 2, LN2, proper=True, absolute=True) == pytest.approx(0.6)


def test_theorem1_lower():
    # l = 1, e^eps = 3: (1 + 3/1)^3 = 64, 2^(l+4) = 32
    assert bounds.statistical_lower(10, 1, LN3) == pytest.approx(TAIL**2 / (32 * 64) / 10)
    # l = 2, e^eps = 3: (1 + 3/3)^3 = 8, 2^6 = 64
    assert bounds.statistical_lower(1, 2, LN3) == pytest.approx(TAIL**2 / (64 * 8))


def test_lower_below_upper():
    n = np.array([10.0, 1e3, 1e6])
    for eps in (0.1, 1.0, 5.0):
        assert np.all(bounds.statistical_lower(n, 3, eps) < bounds.statistical_upper(n, 8, eps))


def test_continuous_proposition():
    # L = 2, (b-a) = c = 1, e^-eps = 1/2: (2 + 2 * 0.5 / 0.5)^2 = 16, over sqrt(64) = 8
    assert bounds.continuous_upper(64, LN2, L=2.0) == pytest.approx(2.0)
    assert bounds.continuous_lower(10, LN3) == pytest.approx(bounds.statistical_lower(10, 1, LN3))


def test_discretization_rule():
    assert bounds.discretization_bits(2**16) == 4  # 2^(2k) = sqrt(n) = 2^8
    assert bounds.discretization_bits(10**6) == 5
    assert [bounds.discretization_bits(2**e) for e in (10, 14, 18)] == [3, 4, 5]  # halves up
    cells = bounds.discretize(np.array([0.0, 0.2499, 0.25, 0.999, 1.0]), 2)
    assert cells.tolist() == [0, 0, 1, 3, 3]
    with pytest.raises(ValueError, match="\\[0, 1\\]"):
        bounds.discretize([1.5], 2)


def test_cut_bound():
    # e^-eps = 1/3: (4/3) / (2/3) = 2, sqrt(4 * 9) = 6
    assert bounds.cut_upper(4, 9, LN3) == pytest.approx(12.0)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(n=0, K=2, epsilon=1.0), "n must be"),
        (dict(n=10, K=1, epsilon=1.0), "K must be"),
        (dict(n=10, K=2, epsilon=-1.0), "epsilon must be > 0"),
        (dict(n=10, K=2, epsilon=1.0, c=0.0), "c must be > 0"),
        (dict(n=10, K=2, epsilon=1.0, a=0, b=1, c=2), "b - a >= c"),
    ],
)
def test_bad_bound_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        bounds.statistical_upper(**kwargs)
