"""The companion estimators: unbiased, with the variance the theory predicts."""

import math

import numpy as np
import pytest
from scipy import stats

from dpgraph.core import (
    Channel,
    Estimate,
    MechanismE,
    StatisticalQuery,
    Universe,
    count_estimate,
    project,
)

RUNS = 3000


def exact_variance_of_qu(M: MechanismE, q: StatisticalQuery, idx: np.ndarray) -> float:
    """Var q_u computed row by row from the pmf of each row (independent of the library)."""
    K = M.universe.K
    keep, move = M.truth_probability, M.flip_probability
    phi = q.functions[q.groups]  # (n, K) table of each row's function
    pmf = np.full((idx.size, K), move)
    pmf[np.arange(idx.size), idx] = keep
    mean = (pmf * phi).sum(axis=1)
    var_rows = (pmf * phi**2).sum(axis=1) - mean**2
    scale = (1 - K * move) * q.normalizer  # d * sum c_i
    return float(var_rows.sum() / scale**2)


@pytest.fixture(scope="module")
def heterogeneous_setup():
    rng = np.random.default_rng(2024)
    U = Universe([1, 2, 3, 4, 5])
    n, h = 600, 4
    functions = rng.uniform(0, 1, size=(h, 5))
    groups = rng.integers(0, h, size=n)
    q = StatisticalQuery.grouped(functions, groups, universe=U)
    X = rng.integers(1, 6, size=n)
    M = MechanismE(U, epsilon=1.0)
    Ys = M.release(np.tile(X, RUNS), seed=11).reshape(RUNS, n)
    values = np.array([M.estimate(q, Y, proper=False).value for Y in Ys])
    return M, q, X, values


def test_unbiased_for_heterogeneous_query(heterogeneous_setup):
    M, q, X, values = heterogeneous_setup
    sd = math.sqrt(exact_variance_of_qu(M, q, M.universe.encode(X)))
    se = sd / math.sqrt(RUNS)
    assert abs(values.mean() - q(X)) < 4 * se


def test_empirical_variance_matches_exact(heterogeneous_setup):
    M, q, X, values = heterogeneous_setup
    exact = exact_variance_of_qu(M, q, M.universe.encode(X))
    # s^2 / sigma^2 ~ chi2(R-1) for a (near-)normal estimator; two-sided 1e-4 band
    statistic = (RUNS - 1) * values.var(ddof=1) / exact
    lo, hi = stats.chi2.ppf([0.5e-4, 1 - 0.5e-4], RUNS - 1)
    assert lo < statistic < hi


def test_reported_std_bounds_exact_std_when_k_gt_2(heterogeneous_setup):
    M, q, X, _ = heterogeneous_setup
    est = M.estimate(q, X)  # any Y: the reported std does not depend on Y
    exact = math.sqrt(exact_variance_of_qu(M, q, M.universe.encode(X)))
    assert not est.exact_std
    assert est.std >= exact * (1 - 1e-12)


def test_binary_std_is_exact_and_graph_independent():
    U = Universe([0, 1])
    M = MechanismE(U, epsilon=0.7)
    q = StatisticalQuery.linear([0, 1], n=1000, universe=U)
    p = M.flip_probability
    expected = math.sqrt(1000 * p * (1 - p)) / (1 - 2 * p) / q.normalizer
    for X in (np.zeros(1000, int), np.ones(1000, int)):
        est = M.estimate(q, X)
        assert est.exact_std
        assert est.std == pytest.approx(expected, rel=1e-12)
        assert est.std == pytest.approx(exact_variance_of_qu(M, q, X) ** 0.5, rel=1e-12)


def test_qu_matches_paper_formula():
    """q_u = g/(1-e^-eps) q(Y) - e^-eps/(1-e^-eps) C_phi with the dyadic probabilities."""
    rng = np.random.default_rng(5)
    U = Universe(range(5))
    M = MechanismE(U, epsilon=1.3)
    table = rng.normal(size=(50, 5))
    q = StatisticalQuery(table, universe=U)
    Y = rng.integers(0, 5, size=50)
    keep, move = M.probabilities.truth_fraction, M.probabilities.flip_fraction
    ratio = float(move / keep)  # the e^-eps the sampler really uses
    g = float(1 / keep)
    paper = g / (1 - ratio) * q(Y) - ratio / (1 - ratio) * q.C_phi
    assert M.estimate(q, Y, proper=False).value == pytest.approx(paper, rel=1e-9)


def test_batch_equals_single_queries():
    rng = np.random.default_rng(6)
    U = Universe(range(5))
    M = MechanismE(U, 1.0)
    groups = rng.integers(0, 3, size=400)
    funcs = rng.uniform(size=(7, 3, 5))
    Y = rng.integers(0, 5, size=400)
    batch = M.estimate(StatisticalQuery.grouped(funcs, groups, universe=U), Y)
    assert len(batch) == 7
    for k in range(7):
        single = M.estimate(StatisticalQuery.grouped(funcs[k], groups, universe=U), Y)
        assert batch[k].value == pytest.approx(single.value)
        assert batch[k].std == pytest.approx(single.std)


def test_proper_estimate_is_achievable():
    U = Universe([0, 1])
    M = MechanismE(U, 0.2)
    q = StatisticalQuery.linear([0, 1], n=20, universe=U)
    values = []
    for seed in range(200):
        est = M.estimate(q, M.release(np.zeros(20, int), seed=seed), proper=True)
        assert 0 <= est.value <= 1
        assert est.value * 20 == pytest.approx(round(est.value * 20))
        values.append(est.value)
    assert min(values) == 0.0  # clipping happened at least once at this low epsilon


def test_proper_error_not_worse_than_bound():
    """Lemma 3: proper estimator's MSE <= 4 times Lemma 2's bound (checked empirically)."""
    from dpgraph import bounds

    U = Universe(range(5))
    M = MechanismE(U, 1.0)
    rng = np.random.default_rng(8)
    n = 300
    q = StatisticalQuery.linear(rng.uniform(size=5), n=n, universe=U)
    X = rng.integers(0, 5, n)
    errs = [
        (M.estimate(q, M.release(X, seed=s), proper=True).value - q(X)) ** 2 for s in range(300)
    ]
    c = float(q.c[0])
    bound = bounds.statistical_upper(n, 5, 1.0, a=float(q.a[0]), b=float(q.b[0]), c=c, proper=True)
    assert np.mean(errs) <= bound


def test_estimate_interface():
    e = Estimate(5.0, 1.0, feasible_range=(0.0, 6.0))
    lo, hi = e.ci(0.95)  # unbiased: the interval is not clipped, the value lies in it
    assert lo == pytest.approx(5 - 1.959963984540054) and hi == pytest.approx(5 + 1.959963984540054)
    p = project(e, 0.0, 6.0)  # proper: value and interval both clipped
    assert p.proper and p.ci(0.95) == (pytest.approx(5 - 1.959963984540054), 6.0)
    assert float(e) == 5.0
    with pytest.raises(ValueError, match="level"):
        e.ci(1.5)
    b = count_estimate(np.array([3.0, 4.0]), np.array([10.0, 10.0]), Channel.binary(0.8, 0.2))
    with pytest.raises(TypeError, match="single"):
        float(b)
    assert [x.value for x in b] == pytest.approx([(3 - 2) / 0.6, (4 - 2) / 0.6])
    p = project(b, 0, 10, step=1)
    assert p.value.tolist() == [2.0, 3.0]
