"""Every public entry point refuses bad input with an error naming the argument.

One table: (entry point, bad input) -> exception type and a regex that must
match the message (the argument's name).  Plus hypothesis fuzzing of
``release`` and ``cut`` on random small graphs checking the invariants every
answer must satisfy.
"""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpgraph
from dpgraph.core import Estimate, MechanismE, StatisticalQuery, Universe
from dpgraph.core.probabilities import rr_probabilities
from dpgraph.core.randomness import SecureRandom
from dpgraph.exceptions import LedgerFileError
from dpgraph.ledger import PrivacyLedger


LOAD = dpgraph.load

KEY = SecureRandom(key=bytes(16))


def small_graph():
    return nx.path_graph(6)


def released():
    return dpgraph.release(small_graph(), 1.0, seed=SecureRandom(key=bytes(16)))


def with_selfloop():
    G = small_graph()
    G.add_edge(2, 2)
    return G


def multigraph():
    G = nx.MultiGraph(small_graph())
    G.add_edge(0, 1)
    return G


def one_node():
    G = nx.Graph()
    G.add_node("only")
    return G


BAD_EPSILONS = [
    ("bool", True, TypeError),
    ("str", "1.0", TypeError),
    ("complex", 1 + 0j, TypeError),
    ("array", np.array([0.5, 1.0]), TypeError),
    ("None", None, TypeError),
    ("nan", float("nan"), ValueError),
    ("+inf", float("inf"), ValueError),
    ("-inf", -float("inf"), ValueError),
    ("zero", 0.0, ValueError),
    ("negative", -1.0, ValueError),
    ("below-precision-floor", 1e-20, ValueError),
]

U5 = Universe([1, 2, 3, 4, 5])

# (id, callable taking the bad value, values, argument-name regex)
EPS_ENTRY_POINTS = [
    ("release", lambda e: dpgraph.release(small_graph(), e, seed=KEY), "epsilon"),
    ("MechanismE", lambda e: MechanismE(U5, e), "epsilon"),
    ("rr_probabilities", lambda e: rr_probabilities(e, 3), "epsilon"),
    ("ledger.charge", lambda e: PrivacyLedger(total_epsilon=1.0).charge(e, small_graph()),
     "epsilon"),
    ("PrivacyLedger", lambda e: PrivacyLedger(total_epsilon=e), "total_epsilon"),
]

EPS_CASES = [
    pytest.param(fn, value, exc, name, id=f"{entry}-eps-{label}")
    for entry, fn, name in EPS_ENTRY_POINTS
    for label, value, exc in BAD_EPSILONS
    # the precision floor is a property of the sampler, not of a ledger budget
    if not (entry == "PrivacyLedger" and label == "below-precision-floor")
    if not (entry == "ledger.charge" and label == "below-precision-floor")
]


def _cases():
    R = released()
    mech = MechanismE(U5, 1.0)
    q = StatisticalQuery.linear([0, 0, 0, 1, 1], n=3, universe=U5)
    rows = [
        # graphs
        ("release-G-multigraph", lambda: dpgraph.release(multigraph(), 1.0, seed=KEY),
         ValueError, "G is a multigraph"),
        ("release-G-selfloop", lambda: dpgraph.release(with_selfloop(), 1.0, seed=KEY),
         ValueError, "G has self-loops"),
        ("release-G-directed-no-opt-in",
         lambda: dpgraph.release(nx.DiGraph(small_graph()), 1.0, seed=KEY), ValueError,
         "G is directed"),
        ("release-directed-on-undirected",
         lambda: dpgraph.release(small_graph(), 1.0, seed=KEY, directed=True), ValueError,
         "directed"),
        ("release-G-one-node", lambda: dpgraph.release(one_node(), 1.0, seed=KEY), ValueError,
         "G must have at least 2 nodes"),
        ("release-G-empty", lambda: dpgraph.release(nx.Graph(), 1.0, seed=KEY), ValueError,
         "G must have at least 2 nodes"),
        ("release-G-not-a-graph", lambda: dpgraph.release([(0, 1)], 1.0, seed=KEY), TypeError,
         "G must be a networkx"),
        ("release-G-adjacency-matrix",
         lambda: dpgraph.release(np.ones((3, 3)), 1.0, seed=KEY), TypeError, "G must be"),
        ("release-seed-str", lambda: dpgraph.release(small_graph(), 1.0, seed="abc"),
         TypeError, "seed"),
        ("release-seed-negative", lambda: dpgraph.release(small_graph(), 1.0, seed=-1),
         ValueError, "seed"),
        ("release-seed-bool", lambda: dpgraph.release(small_graph(), 1.0, seed=True),
         TypeError, "seed"),
        ("release-seed-float", lambda: dpgraph.release(small_graph(), 1.0, seed=1.5),
         TypeError, "seed"),
        # universes and databases
        ("Universe-unhashable-labels", lambda: Universe([[1], [2]]), TypeError,
         "labels must be hashable"),
        ("Universe-duplicate-labels", lambda: Universe([1, 2, 2]), ValueError,
         "labels must be distinct"),
        ("Universe-one-label", lambda: Universe([7]), ValueError, "K >= 2"),
        ("Universe-string", lambda: Universe("abc"), TypeError, "labels"),
        ("MechanismE-universe-list", lambda: MechanismE([1, 2, 3], 1.0), TypeError,
         "universe"),
        ("MechanismE.release-X-unknown-label", lambda: mech.release(np.array([1, 9]), seed=KEY),
         ValueError, "X has 1 value"),
        ("MechanismE.release-X-empty", lambda: mech.release(np.array([]), seed=KEY),
         ValueError, "X is empty"),
        ("MechanismE.estimate-query-type", lambda: mech.estimate("q", np.array([1, 2, 3])),
         TypeError, "query"),
        ("MechanismE.estimate-Y-unknown", lambda: mech.estimate(q, np.array([1, 2, 0])),
         ValueError, "Y has 1 value"),
        ("MechanismE.estimate-Y-wrong-length", lambda: mech.estimate(q, np.array([1, 2])),
         ValueError, "rows"),
        # queries on a release
        ("cut-S-T-overlap", lambda: R.cut([0, 1, 2], [2, 3]), ValueError, "S and T share"),
        ("cut-S-empty", lambda: R.cut([], [1, 2]), ValueError, "S is empty"),
        ("cut-T-empty", lambda: R.cut([1, 2], set()), ValueError, "T is empty"),
        ("cut-S-unknown-node", lambda: R.cut([0, 99], [1]), ValueError, "S contains 1 node"),
        ("cut-T-unknown-node", lambda: R.cut([0], ["x"]), ValueError, "T contains 1 node"),
        ("cut-S-int", lambda: R.cut(3, [1]), TypeError, "S must be a collection"),
        ("cut-T-int", lambda: R.cut([0], 5), TypeError, "T must be a collection"),
        ("cut-S-str", lambda: R.cut("01", [2]), TypeError, "S must be a collection"),
        ("cut-S-unhashable", lambda: R.cut([[0]], [2]), TypeError, "S contains unhashable"),
        ("cuts-pairs-not-tuples", lambda: R.cuts([[0, 1, 2]]), TypeError, r"pairs\[0\]"),
        ("cuts-pairs-empty", lambda: R.cuts([]), ValueError, "pairs is empty"),
        ("cuts-pairs-int", lambda: R.cuts(5), TypeError, "pairs must be"),
        ("cuts-overlap", lambda: R.cuts([([0], [1]), ([2], [2])]), ValueError, "S and T share"),
        ("edges_within-one-node", lambda: R.edges_within([3]), ValueError, "S needs at least 2"),
        ("edges_within-unknown", lambda: R.edges_within([0, "z"]), ValueError, "S contains"),
        ("Estimate.ci-level-1.5", lambda: Estimate(1.0, 1.0).ci(1.5), ValueError, "level"),
        ("Estimate.ci-level-str", lambda: Estimate(1.0, 1.0).ci("95%"), TypeError, "level"),
        # ledgers
        ("PrivacyLedger-scope", lambda: PrivacyLedger(1.0, scope="pairs"), ValueError, "scope"),
        ("ledger.charge-graph-list", lambda: PrivacyLedger(1.0).charge(0.5, [1, 2]), TypeError,
         "graph"),
        ("PrivacyLedger.load-path-int", lambda: PrivacyLedger.load(5), TypeError, "path"),
    ]
    return [pytest.param(fn, exc, name, id=i) for i, fn, exc, name in rows]


@pytest.mark.parametrize("fn, value, exc, name", EPS_CASES)
def test_bad_epsilon_is_refused_naming_it(fn, value, exc, name):
    with pytest.raises(exc, match=name):
        fn(value)


@pytest.mark.parametrize("fn, exc, name", _cases())
def test_bad_input_is_refused_naming_the_argument(fn, exc, name):
    with pytest.raises(exc, match=name):
        fn()


@pytest.mark.parametrize(
    "content, match",
    [(None, "no such"), (b"", "not valid JSON"), (b"\x00\xffcorrupt", "not valid JSON"),
     (b'{"format": 1}', "format")],
    ids=["missing", "empty", "corrupted", "foreign"],
)
def test_bad_ledger_files_are_refused_naming_path(tmp_path, content, match):
    path = tmp_path / "f.json"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(LedgerFileError, match=match) as info:
        PrivacyLedger.load(path)
    assert "path" in str(info.value)


@pytest.mark.parametrize(
    "content", [None, b"", b"\x00\xff corrupted \x13\x37" * 10], ids=["missing", "empty", "corrupted"]
)
def test_bad_release_files_are_refused_naming_path(tmp_path, content):
    path = tmp_path / "f.dpg"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises((ValueError, OSError)) as info:
        LOAD(path)
    assert "path" in str(info.value) or path.name in str(info.value)


def test_the_matrix_is_large():
    assert len(EPS_CASES) + len(_cases()) >= 25


# ---- fuzzing -----------------------------------------------------------------------
@st.composite
def graph_and_query(draw):
    n = draw(st.integers(2, 14))
    directed = draw(st.booleans())
    pairs = [(i, j) for i in range(n) for j in range(n) if i != j and (directed or i < j)]
    mask = draw(st.lists(st.booleans(), min_size=len(pairs), max_size=len(pairs)))
    G = nx.DiGraph() if directed else nx.Graph()
    G.add_nodes_from(range(n))
    G.add_edges_from(p for p, m in zip(pairs, mask) if m)
    side = draw(st.lists(st.sampled_from([0, 1, 2]), min_size=n, max_size=n))
    S = [v for v in range(n) if side[v] == 1]
    T = [v for v in range(n) if side[v] == 2]
    if not S:
        S = [0]
        T = [v for v in T if v != 0]
    if not T:
        T = [next(v for v in range(n) if v not in S)] if len(S) < n else []
        if not T:
            S, T = S[:-1], S[-1:]
    eps = draw(st.floats(0.01, 40.0, allow_nan=False))
    key = draw(st.binary(min_size=16, max_size=16))
    return G, directed, S, T, eps, key


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graph_and_query())
def test_fuzz_release_and_cut_invariants(case):
    G, directed, S, T, eps, key = case
    R = dpgraph.release(G, eps, seed=SecureRandom(key=key), directed=directed)
    assert R.number_of_nodes() == G.number_of_nodes()
    assert R.realized_epsilon <= eps
    assert 0 < R.flip_probability < 0.5
    est = R.cut(S, T)
    rows = len(S) * len(T)
    assert math.isfinite(est.value) and math.isfinite(est.std) and est.std > 0
    lo, hi = est.ci(0.95)
    assert lo <= est.value <= hi  # an error bar around its own value
    proper = R.cut(S, T, proper=True)
    assert 0 <= proper.value <= rows and proper.value == round(proper.value)
    lo, hi = proper.ci(0.95)
    assert 0 <= lo <= proper.value <= hi <= rows
    # the unbiased estimate is (observed - p' rows) / (1 - 2p') with 0 <= observed <= rows
    p = R.flip_probability
    assert -p * rows / (1 - 2 * p) - 1e-6 <= est.value <= (1 - p) * rows / (1 - 2 * p) + 1e-6
    batch = R.cuts([(S, T), (T, S)])
    assert batch[0].value == pytest.approx(est.value)
    if not directed:
        assert batch[1].value == pytest.approx(est.value)
