"""Bad input to the core is refused with an error that names the argument."""

import numpy as np
import pytest

from dpgraph.core import MechanismE, StatisticalQuery, Universe
from dpgraph.core.randomness import SecureRandom, SeededRandom, resolve_random

U5 = Universe([1, 2, 3, 4, 5])


@pytest.mark.parametrize(
    "epsilon, exc, match",
    [
        (True, TypeError, "epsilon must be a real number, not a bool"),
        ("1.0", TypeError, "epsilon must be a real number"),
        (1 + 0j, TypeError, "epsilon must be a real number"),
        (np.array([1.0, 2.0]), TypeError, "epsilon must be a real number"),
        (float("nan"), ValueError, "epsilon is NaN"),
        (float("inf"), ValueError, "epsilon must be finite"),
        (-float("inf"), ValueError, "epsilon must be finite"),
        (0, ValueError, "epsilon must be > 0"),
        (-0.5, ValueError, "epsilon must be > 0"),
        (1e-300, ValueError, "precision floor"),
    ],
)
def test_bad_epsilon(epsilon, exc, match):
    with pytest.raises(exc, match=match):
        MechanismE(U5, epsilon)


def test_numpy_scalar_epsilon_accepted():
    assert MechanismE(U5, np.float32(0.5)).epsilon == 0.5


@pytest.mark.parametrize(
    "labels, exc, match",
    [
        ([1], ValueError, "K >= 2"),
        ([], ValueError, "K >= 2"),
        ([1, 1, 2], ValueError, "distinct"),
        ([[1], [2]], TypeError, "hashable"),
        ("abc", TypeError, "not a string"),
    ],
)
def test_bad_universe(labels, exc, match):
    with pytest.raises(exc, match=match):
        Universe(labels)


def test_labels_not_in_universe_are_refused_without_echoing_them():
    M = MechanismE(U5, 1.0)
    with pytest.raises(ValueError, match="X has 2 value") as info:
        M.release(np.array([1, 2, 987654, 123456]))
    assert "987654" not in str(info.value) and "123456" not in str(info.value)
    with pytest.raises(ValueError, match="not labels"):
        Universe(["a", "b"]).encode(["a", "zz"])


def test_empty_database_refused():
    with pytest.raises(ValueError, match="n >= 1"):
        MechanismE(U5, 1.0).release(np.array([], dtype=int))
    with pytest.raises(ValueError, match="n must be >= 1"):
        StatisticalQuery.linear([0, 1, 0, 0, 1], n=0)


@pytest.mark.parametrize(
    "table, match",
    [
        (np.zeros(5), "shape \\(n, K\\)"),
        (np.zeros((3, 1)), "K >= 2"),
        (np.ones((3, 5)), "non-constant"),
        (np.array([[0, 1, np.nan, 0, 0]] * 2), "finite"),
    ],
)
def test_bad_tables(table, match):
    with pytest.raises(ValueError, match=match):
        StatisticalQuery(table)


def test_table_universe_mismatch():
    with pytest.raises(ValueError, match="universe has 5 values"):
        StatisticalQuery(np.eye(3), universe=U5)
    q = StatisticalQuery(np.eye(4)[:, :4][:2], universe=None)
    with pytest.raises(ValueError, match="K=4"):
        MechanismE(U5, 1.0).estimate(q, np.array([1, 2]))


def test_wrong_number_of_rows():
    q = StatisticalQuery.linear([0, 0, 0, 1, 1], n=3, universe=U5)
    with pytest.raises(ValueError, match="the query has n=3"):
        q(np.array([1, 2]))


def test_groups_validated():
    with pytest.raises(ValueError, match="groups must lie in 0..1"):
        StatisticalQuery.grouped(np.eye(2), np.array([0, 2]))
    with pytest.raises(TypeError, match="integer"):
        StatisticalQuery.grouped(np.eye(2), np.array([0.0, 1.0]))


def test_query_without_universe_needs_indices():
    q = StatisticalQuery.linear([0, 1], n=2)
    assert q(np.array([1, 1])) == 1.0
    with pytest.raises(TypeError, match="universe"):
        q(np.array([0.5, 1.0]))


def test_bad_seed_and_universe_types():
    with pytest.raises(TypeError, match="seed"):
        resolve_random("42")
    with pytest.raises(TypeError, match="seed"):
        resolve_random(True)
    with pytest.raises(ValueError, match="non-negative"):
        resolve_random(-1)
    with pytest.raises(TypeError, match="universe must be"):
        MechanismE([1, 2, 3], 1.0)


def test_universe_roundtrip_and_binary():
    U = Universe(["low", ("mid", 1), 3.5])
    X = np.empty(3, dtype=object)
    X[:] = [3.5, "low", ("mid", 1)]
    assert U.encode(X).tolist() == [2, 0, 1]
    B = Universe.binary(3)
    assert B.K == 8 and B.bits()[5].tolist() == [1, 0, 1]
    assert U5.decode(U5.encode([5, 3])).tolist() == [5, 3]


@pytest.mark.parametrize("labels, X, want", [
    ([1, 2, 3, 4, 5], np.array([5, 9, -3, 1]), [4, -1, -1, 0]),  # small ints: look-up table
    ([0, 7, 10**9], np.array([7, 8, 10**9]), [1, -1, 2]),  # sparse ints: sorted search
    ([0.5, 1.5], np.array([1.5, np.nan, 2.5]), [1, -1, -1]),  # floats: sorted search
    ([1, 2], np.array([2**64 - 1, 1], dtype=np.uint64), [-1, 0]),  # not wrapped to -1
    (["a", "b"], np.array(["b", "zz"]), [1, -1]),  # strings
    ([None, "a", ("t", 1)], None, [2, -1, 0, -1]),  # objects, tuples, an unhashable entry
])
def test_lookup_marks_non_labels_and_agrees_with_encode(labels, X, want):
    U = Universe(labels)
    if X is None:
        X = np.empty(4, dtype=object)
        for k, v in enumerate([("t", 1), "zz", None, ["a"]]):
            X[k] = v
    got = U.lookup(X)
    assert got.tolist() == want
    assert U.lookup(list(X)).tolist() == want  # a list: Python objects, one dict look-up each
    ok = got >= 0
    assert U.encode(X[ok]).tolist() == got[ok].tolist()
    with pytest.raises(ValueError, match=f"X has {int((~ok).sum())} value"):
        U.encode(X)


def test_random_sources():
    a = SeededRandom(1).uint64(4)
    assert np.array_equal(a, SeededRandom(1).uint64(4))
    assert not np.array_equal(SecureRandom().uint64(4), SecureRandom().uint64(4))
    key = bytes(range(16))
    s1, s2 = SecureRandom(key=key), SecureRandom(key=key)
    assert np.array_equal(s1.substream(3, 4).uint64(8), s2.substream(3, 4).uint64(8))
    assert not np.array_equal(s1.substream(3, 4).uint64(8), s1.substream(4, 3).uint64(8))
    assert "key hidden" in repr(SecureRandom(key=key)) and key.hex() not in repr(s1)
    sr = SeededRandom(5)
    assert np.array_equal(sr.substream(1).uint64(3), SeededRandom(5).substream(1).uint64(3))
