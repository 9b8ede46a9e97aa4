"""Tests for the MWEM baseline and the paper's sub-database adaptation."""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest
from scipy import stats

from dpgraph.baselines import mwem, mwem_statistical
from dpgraph.core import StatisticalQuery


def reference_mwem(B, Q, epsilon, T, passes, rng, update="replay"):
    """Brute-force MWEM written from the pseudocode, one scalar at a time.

    Draw order matches the vectorized implementation for a single database:
    per round one uniform (selection, inverse CDF) then one Laplace variate.
    ``update="plain"`` applies the newest measurement once per round (the
    analysed algorithm); ``"replay"`` sweeps ``passes`` times over all of them.
    """
    K = len(B)
    n = float(sum(B))
    delta = max(max(q) - min(q) for q in Q)
    eps_t = epsilon / (2 * T)
    A = [n / K] * K
    meas = []
    for _t in range(T):
        scores = []
        for q in Q:
            qa = sum(A[x] * q[x] for x in range(K))
            qb = sum(B[x] * q[x] for x in range(K))
            scores.append(eps_t * abs(qa - qb) / (2 * delta))
        top = max(scores)
        weights = [math.exp(s - top) for s in scores]
        total = sum(weights)
        u = rng.random(1)[0] * total
        acc, pick = 0.0, len(Q) - 1
        for j, w in enumerate(weights):
            acc += w
            if acc >= u:
                pick = j
                break
        true = sum(B[x] * Q[pick][x] for x in range(K))
        meas.append((Q[pick], true + rng.laplace(0.0, delta / eps_t, size=1)[0]))
        todo = meas if update == "replay" else meas[-1:]
        for _ in range(passes):
            for q, m in todo:
                qa = sum(A[x] * q[x] for x in range(K))
                A = [A[x] * math.exp(q[x] * (m - qa) / (2 * n)) for x in range(K)]
                s = sum(A)
                A = [a * n / s for a in A]
    return np.array(A)


@pytest.mark.parametrize("passes", [1, 3])
def test_matches_brute_force_reference_on_tiny_universe(passes):
    B = np.array([7.0, 0.0, 12.0])
    Q = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 1.0], [0.5, 0.0, 1.0], [0.2, 0.9, 0.0]])
    got = mwem(B, Q, epsilon=2.0, T=4, passes=passes, seed=np.random.default_rng(11))
    want = reference_mwem(B, Q.tolist(), 2.0, 4, passes, np.random.default_rng(11))
    np.testing.assert_allclose(got.histogram, want, rtol=1e-12)
    assert got.histogram.sum() == pytest.approx(B.sum())


def test_plain_update_matches_scalar_transcription():
    """The plain update (newest measurement only, once per round), last histogram."""
    B = np.array([7.0, 0.0, 12.0, 3.0])
    Q = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 1.0, 0.0], [0.5, 0.0, 1.0, 0.2],
                  [0.2, 0.9, 0.0, 1.0], [0.0, 0.0, 0.0, 1.0]])
    got = mwem(B, Q, epsilon=2.0, T=6, update="plain", seed=np.random.default_rng(5))
    want = reference_mwem(B, Q.tolist(), 2.0, 6, 1, np.random.default_rng(5), update="plain")
    np.testing.assert_allclose(got.histogram, want, rtol=1e-12, atol=1e-12)


def test_plain_average_matches_scalar_transcription():
    """Textbook MWEM (plain update, averaged rounds) against a scalar loop."""
    B = [30.0, 2.0, 0.0, 9.0, 14.0]
    Q = [[1.0, 0.0, 0.0, 0.0, 0.0], [0.0, 1.0, 1.0, 0.0, 0.5], [0.3, 0.0, 1.0, 0.2, 0.0],
         [0.2, 0.9, 0.0, 1.0, 0.1]]
    epsilon, T = 1.5, 7
    got = mwem(np.array(B), np.array(Q), epsilon=epsilon, T=T, update="plain", average=True,
               seed=np.random.default_rng(21))
    rng = np.random.default_rng(21)
    K, n = len(B), sum(B)
    delta = max(max(q) - min(q) for q in Q)
    eps_t = epsilon / (2 * T)
    A = [n / K] * K
    total = [0.0] * K
    for _t in range(T):
        scores = [eps_t * abs(sum((A[x] - B[x]) * q[x] for x in range(K))) / (2 * delta)
                  for q in Q]
        w = [math.exp(s - max(scores)) for s in scores]
        u = rng.random(1)[0] * sum(w)
        acc, pick = 0.0, len(Q) - 1
        for j, wj in enumerate(w):
            acc += wj
            if acc >= u:
                pick = j
                break
        q = Q[pick]
        m = sum(B[x] * q[x] for x in range(K)) + rng.laplace(0.0, delta / eps_t, size=1)[0]
        qa = sum(A[x] * q[x] for x in range(K))
        A = [A[x] * math.exp(q[x] * (m - qa) / (2 * n)) for x in range(K)]
        A = [a * n / sum(A) for a in A]
        total = [total[x] + A[x] for x in range(K)]
    np.testing.assert_allclose(got.histogram, [v / T for v in total], rtol=1e-12, atol=1e-12)


def test_plain_update_is_not_a_single_replay():
    """From round 2 on, one replay sweep re-applies old measurements: the results differ."""
    B = np.array([50.0, 1.0, 0.0, 20.0])
    Q = np.eye(4)
    plain = mwem(B, Q, 1.0, T=5, update="plain", seed=np.random.default_rng(2)).histogram
    replay = mwem(B, Q, 1.0, T=5, update="replay", passes=1,
                  seed=np.random.default_rng(2)).histogram
    assert np.abs(plain - replay).max() > 1e-6


def test_update_validation():
    with pytest.raises(ValueError, match="update must be one of 'plain', 'replay'"):
        mwem(np.ones(3), np.eye(3), 1.0, update="textbook")
    with pytest.raises(ValueError, match="applies to update='replay' only"):
        mwem(np.ones(3), np.eye(3), 1.0, update="plain", passes=3)
    with pytest.raises(ValueError, match="passes must be >= 1"):
        mwem(np.ones(3), np.eye(3), 1.0, passes=0)


def test_batch_equals_independent_runs_in_distribution_shape():
    B = np.array([[5.0, 5.0], [1.0, 9.0], [3.0, 0.0]])
    Q = np.array([[1.0, 0.0], [0.0, 1.0]])
    res = mwem(B, Q, epsilon=1.0, T=2, seed=0)
    assert res.histogram.shape == (3, 2) and res.selected.shape == (3, 2)
    np.testing.assert_allclose(res.histogram.sum(axis=1), B.sum(axis=1))
    # per-database query sets
    Qg = np.stack([Q, Q[::-1], Q])
    assert mwem(B, Qg, epsilon=1.0, T=2, seed=0).histogram.shape == (3, 2)


def test_selection_follows_the_exponential_mechanism():
    """T = 1: the first pick is drawn with P(j) ~ exp(eps/(2T) |q_j(A0) - q_j(B)| / (2 Delta)).

    Chi-square goodness of fit over 20000 independent databases, rejection at
    p < 1e-4 (a correct sampler fails this with probability 1e-4).
    """
    K = 4
    B = np.array([40.0, 0.0, 0.0, 0.0])
    Q = np.eye(K)
    G = 20000
    res = mwem(np.tile(B, (G, 1)), Q, epsilon=4.0, T=1, seed=5)
    A0 = np.full(K, B.sum() / K)
    score = np.abs(Q @ A0 - Q @ B)
    p = np.exp(4.0 / 2 * score / 2)
    p /= p.sum()
    counts = np.bincount(res.selected[:, 0], minlength=K)
    chi2 = ((counts - G * p) ** 2 / (G * p)).sum()
    assert stats.chi2.sf(chi2, K - 1) > 1e-4


def test_error_falls_with_n_and_with_budget():
    """Normalized worst-case error over the query set shrinks as n grows 100x."""
    rng = np.random.default_rng(3)
    Q = rng.random((64, 5))
    p = np.array([0.05, 0.1, 0.3, 0.35, 0.2])

    def worst(n, seeds=20):
        errs = []
        for s in range(seeds):
            B = np.random.default_rng(100 + s).multinomial(n, p).astype(float)
            res = mwem(B, Q, epsilon=1.0, T=5, seed=s)
            errs.append(np.abs(res.answer(Q) - Q @ B).max() / n)
        return np.mean(errs)

    small, big = worst(200), worst(20000)
    assert big < small / 3


def test_more_rounds_help_when_data_far_from_uniform():
    """Ten rounds (with repeated updates) beat one round on a skewed histogram."""
    B = np.array([5000.0, 0.0, 0.0, 0.0, 0.0])
    Q = np.eye(5)
    e1 = [np.abs(mwem(B, Q, 1.0, T=1, seed=s).histogram - B).max() for s in range(10)]
    e10 = [np.abs(mwem(B, Q, 1.0, T=10, seed=s).histogram - B).max() for s in range(10)]
    assert np.mean(e10) < np.mean(e1) / 2


def test_mwem_validation():
    Q = np.eye(3)
    with pytest.raises(ValueError, match="epsilon"):
        mwem(np.ones(3), Q, epsilon=0.0)
    with pytest.raises(ValueError, match="queries must have shape"):
        mwem(np.ones(3), np.eye(4), epsilon=1.0)
    with pytest.raises(ValueError, match="non-negative"):
        mwem(np.array([1.0, -1.0, 0.0]), Q, epsilon=1.0)
    with pytest.raises(ValueError, match="empty database"):
        mwem(np.zeros(3), Q, epsilon=1.0)
    with pytest.raises(ValueError, match="T must be >= 1"):
        mwem(np.ones(3), Q, epsilon=1.0, T=0)


# --------------------------------------------------------------------------- sub-databases


def test_subdatabase_answer_is_exactly_the_sum_of_its_parts(monkeypatch):
    """With MWEM replaced by the identity (synthetic = true histogram), the
    combined answer equals the statistical query evaluated by the core."""
    m = importlib.import_module("dpgraph.baselines.multiplicative_weights")

    def exact(B, Q, epsilon, T, **kw):
        return m.MWEMResult(np.asarray(B, float), np.zeros(1, int), np.zeros(1))

    monkeypatch.setattr(m, "mwem", exact)
    rng = np.random.default_rng(0)
    h, K, n, Qn = 4, 5, 300, 7
    vals = rng.integers(0, K, n)
    groups = rng.integers(0, h, n)
    F = rng.random((Qn, h, K)) * 3 - 1
    got = m.mwem_statistical(vals, groups, F, epsilon=1.0)
    want = StatisticalQuery.grouped(F, groups).evaluate_indices(vals)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_subdatabase_runs_each_part_with_full_epsilon(monkeypatch):
    m = importlib.import_module("dpgraph.baselines.multiplicative_weights")

    seen = {}
    real = m.mwem

    def spy(B, Q, epsilon, T, **kw):
        seen["eps"], seen["B"], seen["Q"] = epsilon, np.asarray(B), np.asarray(Q)
        return real(B, Q, epsilon, T, **kw)

    monkeypatch.setattr(m, "mwem", spy)
    vals = np.array([0, 1, 1, 2, 0, 0])
    grp = np.array([0, 0, 0, 1, 1, 1])
    F = np.random.default_rng(1).random((3, 2, 3))
    m.mwem_statistical(vals, grp, F, epsilon=0.7, T=2, seed=0)
    assert seen["eps"] == 0.7
    np.testing.assert_array_equal(seen["B"], [[1, 2, 0], [2, 0, 1]])
    assert seen["Q"].shape == (2, 3, 3)  # one query set per sub-database


def test_subdatabase_errors():
    F = np.ones((1, 3, 2))
    F[..., 0] = 0.0
    with pytest.raises(ValueError, match="sub-database 1 is empty"):
        mwem_statistical(np.array([0, 1]), np.array([0, 2]), F, epsilon=1.0)
    with pytest.raises(ValueError, match="groups must be labels in 0..2"):
        mwem_statistical(np.array([0, 1]), np.array([0, 3]), F, epsilon=1.0)
    with pytest.raises(ValueError, match="value indices"):
        mwem_statistical(np.array([0, 2]), np.array([0, 1]), F, epsilon=1.0)
    with pytest.raises(ValueError, match="same length"):
        mwem_statistical(np.array([0, 1, 1]), np.array([0, 1]), F, epsilon=1.0)
    with pytest.raises(ValueError, match="non-constant"):
        mwem_statistical(np.array([0, 1, 1]), np.array([0, 1, 2]), np.ones((1, 3, 2)), epsilon=1.0)
