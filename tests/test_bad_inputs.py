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
from dpgraph.core.randomness import SecureRandom, SeededRandom
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


def digraph():
    return nx.DiGraph([(0, 1), (1, 2), (2, 0)])


_SCRATCH = []


def _scratch():
    """One temporary directory for the table's file cases (removed at exit)."""
    import atexit
    import shutil
    import tempfile
    from pathlib import Path

    if not _SCRATCH:
        _SCRATCH.append(Path(tempfile.mkdtemp(prefix="dpgraph-bad-inputs-")))
        atexit.register(shutil.rmtree, _SCRATCH[0], True)
    return _SCRATCH[0]


def _saved():
    path = _scratch() / "r.dpg"
    released().save(path)
    return path


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
    ("ledger.charge", lambda e: PrivacyLedger(total_epsilon=1.0).charge(e), "epsilon"),
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
        ("cut-T-str", lambda: R.cut([0], "12"), TypeError, "T must be a collection"),
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
        ("PrivacyLedger-scope-empty", lambda: PrivacyLedger(1.0, scope=""), TypeError, "scope"),
        ("PrivacyLedger-scope-int", lambda: PrivacyLedger(1.0, scope=2), TypeError, "scope"),
        ("ledger.charge-label-int", lambda: PrivacyLedger(1.0).charge(0.5, label=3), TypeError,
         "label"),
        ("PrivacyLedger.load-path-int", lambda: PrivacyLedger.load(5), TypeError, "path"),
        ("PrivacyLedger.open-new-without-total",
         lambda: PrivacyLedger.open(_scratch() / "new.json"), LedgerFileError, "total_epsilon"),
        ("MechanismE.release-ledger-str", lambda: mech.release([1], seed=KEY, ledger="l.json"),
         TypeError, "ledger"),
        ("release-ledger-float", lambda: dpgraph.release(small_graph(), 1.0, ledger=2.0),
         TypeError, "ledger"),
        # parameters that must be bools, not truthy values
        ("release-directed-str", lambda: dpgraph.release(digraph(), 1.0, seed=KEY, directed="yes"),
         TypeError, "directed must be True or False"),
        ("release-directed-int", lambda: dpgraph.release(digraph(), 1.0, seed=KEY, directed=1),
         TypeError, "directed must be True or False"),
        # query sets: dicts, masks, unsigned labels
        ("cut-S-dict", lambda: R.cut({0: "a", 1: "b"}, [3]), TypeError, "S must be a collection"),
        ("cut-S-mask-wrong-length", lambda: R.cut(np.array([True, False]), [3]), ValueError,
         "S: a boolean mask"),
        ("cut-S-mask-2d", lambda: R.cut(np.ones((2, 3), dtype=bool), [3]), ValueError,
         "S: a boolean mask"),
        ("cut-S-mask-empty", lambda: R.cut(np.zeros(6, dtype=bool), [3]), ValueError,
         "S is empty"),
        ("cut-S-uint64-huge", lambda: R.cut(np.array([2**64 - 1], dtype=np.uint64), [3]),
         ValueError, "S contains 1 node"),
        ("Universe.encode-uint64-wraps-to-label",
         lambda: Universe([-1, 0, 1]).encode(np.array([2**64 - 1], dtype=np.uint64)), ValueError,
         "X has 1 value"),
        # random sources
        ("substream-negative", lambda: SecureRandom(key=bytes(16)).substream(-1), ValueError,
         "coordinates"),
        ("substream-float", lambda: SeededRandom(1).substream(1.5), TypeError, "coordinates"),
        ("substream-bool", lambda: SecureRandom(key=bytes(16)).substream(True), TypeError,
         "coordinates"),
        # files
        ("load-directory", lambda: LOAD(_scratch()), ValueError, "directory"),
        ("load-missing", lambda: LOAD(_scratch() / "missing.dpg"), FileNotFoundError,
         "no such file"),
        ("load-verify_key-str", lambda: LOAD(_saved(), verify_key="curator"), ValueError,
         "verify_key"),
        ("load-verify_key-short", lambda: LOAD(_saved(), verify_key=bytes(31)), TypeError,
         "verify_key"),
        ("save-signing_key-str", lambda: R.save(_scratch() / "x.dpg", signing_key="k"), ValueError,
         "signing_key"),
        # keys as text: hex of the wrong kind, armour without a key, a broken PEM
        ("load-verify_key-hex-of-a-signing-key",
         lambda: LOAD(_saved(), verify_key="ab" * 64), ValueError, "verify_key: this is a signing"),
        ("save-signing_key-hex-of-a-verify-key",
         lambda: R.save(_scratch() / "x.dpg", signing_key="ab" * 32), ValueError,
         "signing_key: this is a verify"),
        ("load-verify_key-pem-armour-only",
         lambda: LOAD(_saved(), verify_key="-----BEGIN PUBLIC KEY-----\n-----END PUBLIC KEY-----"),
         ValueError, "verify_key: not a readable PEM key"),
        ("save-signing_key-float", lambda: R.save(_scratch() / "x.dpg", signing_key=1.5),
         TypeError, "signing_key must be"),
        ("load-verify_key-bytes-33", lambda: LOAD(_saved(), verify_key=bytes(33)), TypeError,
         "got a bytes of length 33"),
        # tables whose edge-end column is not one column
        ("release-table-repeated-column",
         lambda: dpgraph.release(_frame([[0, 1, 2], [1, 2, 3]], ["source", "source", "target"]),
                                 1.0, nodes=4, seed=KEY), ValueError,
         "column 'source' is not one column"),
        # typed releases: bins beyond the float range
        ("release-bins-400-digits",
         lambda: dpgraph.release(small_graph(), 1.0, edge_attr="w", bins=[0, 10**400], seed=KEY),
         ValueError, "bins must be finite numbers within the float range"),
    ]
    return [pytest.param(fn, exc, name, id=i) for i, fn, exc, name in rows]


def _frame(rows, columns):
    import pandas as pd
    return pd.DataFrame(rows, columns=columns)


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
     (b'{"format": 1}', "format"), (b"[" * 50_000 + b"]" * 50_000, "nested"),
     (b'{"total_epsilon": 1' + b"0" * 400 + b"}", "digits")],
    ids=["missing", "empty", "corrupted", "foreign", "deep-nesting", "400-digit-number"],
)
def test_bad_ledger_files_are_refused_naming_path(tmp_path, content, match):
    path = tmp_path / "f.json"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(LedgerFileError, match=match) as info:
        PrivacyLedger.load(path)
    assert "path" in str(info.value)


def _dpg(head: bytes) -> bytes:
    import hashlib
    import struct

    body = b"\x89DPGRAPH" + struct.pack("<IQ", 1, len(head)) + head
    return body + hashlib.sha256(body).digest()


_START = b'{"format":"dpgraph","version":2,"kind":"packed","n":3,'


def _released_with(field: bytes) -> bytes:
    """A consistent release file (sizes, digest) whose header has ``field`` as raw JSON."""
    import hashlib
    import re
    import struct

    raw = _saved().read_bytes()
    hlen = struct.unpack("<Q", raw[12:20])[0]
    head = re.sub(field.split(b":")[0] + rb":[^,]*", lambda m: field, raw[20 : 20 + hlen], count=1)
    body = raw[:12] + struct.pack("<Q", len(head)) + head + raw[20 + hlen : -32]
    return body + hashlib.sha256(body).digest()


@pytest.mark.parametrize(
    "content",
    [None, b"", b"\x00\xff corrupted \x13\x37" * 10,
     _dpg(b"\x00" * (40 << 20)),
     _dpg(_START + b'"nodes":' + b"[" * 10_000 + b"]" * 10_000 + b"}"),
     _released_with(b'"epsilon":1' + b"0" * 400),
     _released_with(b'"epsilon":1e999'),
     _released_with(b'"flip_numerator":"\\u00b2"'),
     _released_with(b'"flip_numerator":"\\u0661\\u0662"')],
    ids=["missing", "empty", "corrupted", "40MiB-junk-header", "deep-nesting", "400-digit-number",
         "float-overflow", "superscript-numerator", "other-script-numerator"],
)
def test_bad_release_files_are_refused_naming_path(tmp_path, content):
    path = tmp_path / "f.dpg"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises((ValueError, FileNotFoundError)) as info:
        LOAD(path)
    assert "path" in str(info.value) or path.name in str(info.value)


def test_release_files_with_bad_input_never_print_a_traceback(tmp_path, capsys):
    from dpgraph.cli import main

    (tmp_path / "deep.dpg").write_bytes(
        _dpg(_START + b'"nodes":' + b"[" * 10_000 + b"]" * 10_000 + b"}"))
    (tmp_path / "big.dpg").write_bytes(_released_with(b'"epsilon":1' + b"0" * 400))
    for target in (tmp_path, tmp_path / "deep.dpg", tmp_path / "big.dpg", tmp_path / "none.dpg"):
        assert main(["cut", str(target), "--S", "0", "--T", "1"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("dpgraph: error: ") and "Traceback" not in err, err


# ---- inputs that used to be misread --------------------------------------------------
def test_a_boolean_array_is_a_mask_over_the_nodes():
    G = nx.relabel_nodes(nx.gnp_random_graph(40, 0.2, seed=1), {v: f"n{v}" for v in range(40)})
    R = dpgraph.release(G, 1.0, seed=KEY)
    mask = np.zeros(40, dtype=bool)
    mask[[3, 5, 30]] = True
    S = [R.node_index.nodes[i] for i in (3, 5, 30)]  # by position, as the mask is
    T = [v for v in R.nodes if v not in S]
    assert R.cut(mask, ~mask).raw == R.cut(S, T).raw
    # on integer labels a mask is not the labels {0, 1}
    H = dpgraph.release(nx.path_graph(6), 1.0, seed=KEY)
    m = np.array([False, False, False, True, True, False])
    assert H.cut(m, [0]).raw == H.cut([3, 4], [0]).raw != H.cut([0, 1], [5]).raw


def test_unsigned_labels_work_like_signed_ones():
    big = 2**60 + 4  # 2**60 is the same float64: a float comparison cannot tell them apart
    G = nx.Graph([(0, big), (big, 7), (7, 9), (9, 2**60)])
    R = dpgraph.release(G, 1.0, seed=KEY)
    u, i = np.array([big, 9], dtype=np.uint64), np.array([big, 9], dtype=np.int64)
    assert R.cut(u, [0, 7]).raw == R.cut(i, [0, 7]).raw == R.cut([big, 9], [0, 7]).raw
    U = Universe([-1, 0, 1, 2**60, big])
    assert U.encode(np.array([1, big], dtype=np.uint64)).tolist() == [2, 4]


@pytest.mark.parametrize("make", [lambda: SeededRandom(7), lambda: SecureRandom(key=bytes(16))],
                         ids=["seeded", "secure"])
def test_substreams_differ_by_path_and_accept_any_index(make):
    def w(src):
        return src.uint64(8).tobytes()

    words = {
        "root": w(make()),
        "empty": w(make().substream()),
        "one": w(make().substream(1)),
        "nested": w(make().substream(1).substream(2)),
        "list": w(make().substream(1, 2)),
        "nested-empty": w(make().substream(1).substream()),
        "0,1": w(make().substream(0, 1)),
        "2^32": w(make().substream(2**32)),
        "2^63": w(make().substream(2**63)),
        "2^64": w(make().substream(2**64)),
        "10^40": w(make().substream(10**40)),
    }
    assert len(set(words.values())) == len(words)
    assert w(make().substream(2**63, 5)) == w(make().substream(2**63, 5))  # deterministic


def test_substreams_of_one_call_keep_their_pinned_streams():
    """Streams whose path was already distinct did not move (recorded before the change)."""
    import hashlib

    def h(src):
        return hashlib.sha256(src.uint64(64).astype("<u8").tobytes()).hexdigest()[:32]

    assert h(SecureRandom(key=bytes(range(16))).substream(3, 4)) == "fae681ea1876cf8ba14840754f090885"
    assert h(SecureRandom(key=bytes(16)).substream(0, 0)) == "4e9d9bdfae7a4827b97b2889a212354a"
    assert h(SecureRandom(key=bytes(16)).substream(5)) == "b298ce6e8f5f9df5e1d34bb24ca87677"
    assert h(SeededRandom(7).substream(1)) == "009548c4bfdad33746de5c4c1b85f185"
    assert h(SeededRandom(7).substream(1, 2)) == "ec073179d594ebb42a7afa111a3b8845"


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


# ---- size checks before work ---------------------------------------------------------
class _ClaimsManyNodes(nx.Graph):
    """A graph whose public node count is huge (only the count is ever needed to refuse)."""

    def number_of_nodes(self):
        return 10**9


@pytest.mark.parametrize("kwargs", [{}, {"keep": 0.001}], ids=["dense", "sparse"])
def test_a_billion_node_release_is_refused_before_allocating(kwargs):
    import tracemalloc

    G = _ClaimsManyNodes([(0, 1), (1, 2)])
    tracemalloc.start()
    try:
        with pytest.raises(MemoryError, match=r"1,000,000,000 nodes needs [\d,.]+ GiB of memory "
                                              r"but only [\d,.]+ GiB is available"):
            dpgraph.release(G, 1.0, seed=KEY, **kwargs)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20


def test_free_memory_comes_from_psutil(monkeypatch):
    import collections

    import psutil

    from dpgraph.graph import _memory

    Mem = collections.namedtuple("Mem", "available")
    monkeypatch.setattr(psutil, "virtual_memory", lambda: Mem(1 << 20))
    assert _memory.available_memory() == 1 << 20
    # 30,000 nodes need 112 MB: above the size below which the OS is not asked (_memory.SMALL)
    with pytest.raises(MemoryError, match="only 1.00 MiB is available"):
        dpgraph.release(nx.empty_graph(30_000), 1.0, seed=KEY)
    monkeypatch.setattr(psutil, "virtual_memory", lambda: Mem(1 << 40))
    assert dpgraph.release(nx.empty_graph(3000), 1.0, seed=KEY).number_of_nodes() == 3000
