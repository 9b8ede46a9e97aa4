"""Mechanism E releases rows with exactly the pmf of docs/design.md (K-ary randomized response).

Statistical tests use fixed seeds and a stated p-value threshold: a correct
sampler fails a given test with probability 1e-4 (before the fixed seeds make
it deterministic); a wrong pmf at these sample sizes fails it essentially
always.
"""

import math

import numpy as np
import pytest
from scipy import stats

from dpgraph.core import MechanismE, Universe

P_THRESHOLD = 1e-4


def exact_pmf(K: int, epsilon: float, x: int) -> np.ndarray:
    g = 1 + (K - 1) * math.exp(-epsilon)
    pmf = np.full(K, math.exp(-epsilon) / g)
    pmf[x] = 1 / g
    return pmf


@pytest.mark.parametrize("K", [2, 5, 8])
@pytest.mark.parametrize("epsilon", [0.1, 1.0, 3.0])
def test_released_pmf_matches_theory(K, epsilon):
    U = Universe([f"v{k}" for k in range(K)])
    M = MechanismE(U, epsilon)
    n_per_value = 40_000
    X = np.repeat(U.labels, n_per_value)
    Y = U.encode(M.release(X, seed=1000 * K + int(10 * epsilon)))
    x = np.repeat(np.arange(K), n_per_value)
    for v in range(K):
        observed = np.bincount(Y[x == v], minlength=K)
        expected = exact_pmf(K, epsilon, v) * n_per_value
        p = stats.chisquare(observed, expected).pvalue
        assert p > P_THRESHOLD, (K, epsilon, v, observed, expected)


def test_release_keeps_shape_and_labels():
    U = Universe([1, 2, 3, 4, 5])
    X = np.array([[1, 2], [5, 4]])
    Y = MechanismE(U, 2.0).release(X, seed=3)
    assert Y.shape == X.shape
    assert set(np.unique(Y)).issubset({1, 2, 3, 4, 5})


def test_a_wrong_pmf_would_be_caught():
    """The chi-square check has power: a sampler at 1.1 * epsilon is rejected."""
    K, epsilon, n = 5, 1.0, 40_000
    U = Universe(range(K))
    Y = U.encode(MechanismE(U, 1.1 * epsilon).release(np.zeros(n, dtype=int), seed=7))
    observed = np.bincount(Y, minlength=K)
    p = stats.chisquare(observed, exact_pmf(K, epsilon, 0) * n).pvalue
    assert p < P_THRESHOLD


def test_seed_reproducible_and_none_fresh():
    U = Universe(range(5))
    M = MechanismE(U, 1.0)
    X = np.arange(5).repeat(200)
    assert np.array_equal(M.release(X, seed=5), M.release(X, seed=5))
    assert not np.array_equal(M.release(X, seed=5), M.release(X, seed=6))
    assert not np.array_equal(M.release(X), M.release(X))
    gen = np.random.default_rng(9)
    assert np.array_equal(M.release(X, seed=gen), M.release(X, seed=np.random.default_rng(9)))
