"""An answer behaves like the number it estimates: Python's numeric protocol and numpy's.

Every operation a newcomer tries first on ``R.cut(S, T)``: formatting, ``int``,
``round``, arithmetic, ordering, and ``numpy.asarray`` of a batch (``R.cuts``),
of the node-keyed degrees and of a list of single answers.  Each result is
compared with the same operation on the plain float ``est.value``.
"""

from __future__ import annotations

import math
import operator
import warnings

import networkx as nx
import numpy as np
import pytest

import dpgraph


@pytest.fixture(scope="module")
def release():
    G = nx.Graph(nx.stochastic_block_model([60, 60], [[0.3, 0.02], [0.02, 0.3]], seed=1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # seeded on purpose: a reproducible test
        R = dpgraph.release(G, epsilon=2.0, seed=5)
    return G, R


@pytest.fixture(scope="module")
def est(release):
    _, R = release
    return R.cut(range(60), range(60, 120))


def test_format_uses_the_value(est):
    v = float(est.value)
    assert f"{est:.1f}" == f"{v:.1f}"
    assert f"{est:,.0f}" == f"{v:,.0f}"
    assert format(est, "e") == format(v, "e")
    assert f"{est}" == str(est)  # an empty spec is the estimate with its error bar


def test_int_round_and_index(est):
    v = float(est.value)
    assert int(est) == int(v) and isinstance(int(est), int)
    assert round(est) == round(v) and isinstance(round(est), int)
    assert round(est, 1) == round(v, 1)
    assert math.floor(est) == math.floor(v) and math.ceil(est) == math.ceil(v)
    assert operator.index(est) == int(v)  # a proper cut is an integer count
    assert [0, 1, 2][: operator.index(est) % 3] == [0, 1, 2][: int(v) % 3]


def test_arithmetic_returns_plain_floats(est):
    v = float(est.value)
    for got, want in ((est + 1, v + 1), (1 + est, 1 + v), (est - 2, v - 2), (2 - est, 2 - v),
                      (est * 3, v * 3), (3 * est, 3 * v), (est / 4, v / 4), (4 / est, 4 / v),
                      (est ** 2, v ** 2), (-est, -v), (abs(est), abs(v)), (est + est, 2 * v),
                      (est // 2, v // 2), (1000 // est, 1000 // v), (est % 7, v % 7),
                      (1000 % est, 1000 % v), (0.5 ** est, 0.5 ** v)):
        assert type(got) is float and got == pytest.approx(want)
    assert divmod(est, 7) == divmod(v, 7) and divmod(1000, est) == divmod(1000, v)
    assert all(type(x) is float for x in (*divmod(est, 7), *divmod(1000, est)))
    assert sum([est, est]) == pytest.approx(2 * v)


def test_an_estimate_is_not_hashable(est):
    """It equals its value (est == v), so it cannot hash apart from it: refused, documented."""
    assert est == float(est.value)
    with pytest.raises(TypeError, match="unhashable"):
        hash(est)
    doc = " ".join(type(est).__doc__.split())
    assert "is not hashable" in doc and "Use ``float(est)`` as a key" in doc


def test_ordering_compares_the_value(est):
    v = float(est.value)
    assert (est > 0) is True and (est < v + 1) is True
    assert (est >= v) is True and (est <= v) is True and (est > v) is False
    assert est == v and est != v + 1
    assert max(est, v - 1) is est and sorted([v + 1, est])[0] is est
    assert bool(est) is (v != 0)


def test_numpy_converts_single_answers_and_batches(release, est):
    G, R = release
    a = np.asarray(est)
    assert a.dtype == np.float64 and a.shape == () and float(a) == float(est.value)
    pairs = [(range(60), range(60, 120)), (range(30), range(30, 60)), ([0, 1, 2], [5, 6])]
    batch = R.cuts(pairs)
    arr = np.asarray(batch)
    assert arr.dtype == np.float64 and arr.shape == (3,)
    assert np.array_equal(arr, [float(R.cut(S, T).value) for S, T in pairs])
    listed = np.asarray([R.cut(S, T) for S, T in pairs])  # a list of single answers
    assert listed.dtype == np.float64 and np.array_equal(listed, arr)
    truth = np.array([nx.cut_size(G, S, T) for S, T in pairs], dtype=float)
    assert np.all(np.abs(arr - truth) <= 4 * np.asarray(batch.std) + 1)  # exact std: 4 sd
    assert float(np.mean(batch)) == pytest.approx(arr.mean())


def test_degree_view_iterates_pairs_and_converts(release):
    G, R = release
    deg = R.degree([0, 1, 2])
    pairs = list(deg)
    assert [v for v, _ in pairs] == [0, 1, 2]
    for v, d in deg:  # like networkx's DegreeView: (node, degree) pairs
        assert f"{d:.0f}" == f"{float(d.value):.0f}" and abs(d - G.degree(v)) <= 4 * d.std + 1
    values = np.asarray(R.degree())
    assert values.dtype == np.float64 and values.shape == (R.number_of_nodes(),)
    assert dict(R.degree())[0] == float(R.degree(0).value)
    m = R.number_of_edges()  # the debiased count, networkx's name
    assert abs(m - G.number_of_edges()) <= 4 * m.std + 1
    # the raw count of the released graph is biased far beyond the estimate's error bar
    assert R.number_of_released_edges() - G.number_of_edges() > 4 * m.std


def test_a_batch_is_not_a_scalar(release):
    _, R = release
    batch = R.cuts([(range(10), range(10, 20)), (range(5), range(5, 9))])
    with pytest.raises(TypeError, match="index the batch"):
        float(batch)
    with pytest.raises(TypeError, match="index the batch"):
        f"{batch:.1f}"
    assert np.asarray(batch + 1).shape == (2,)
