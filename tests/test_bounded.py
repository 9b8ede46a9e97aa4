"""Every call that materializes something sizes it first and refuses cleanly, never gets killed.

A method on a release too big for the memory it may use either completes or
raises MemoryError *before allocating*, saying what it needs, what is free,
what the release is and what to do instead -- only alternatives that apply to
this release.  Checked two ways: with ``available_memory`` patched (fast,
in-process, with tracemalloc showing nothing big was allocated) and in a
subprocess under a real address-space limit (``resource.setrlimit``), where
an unsized allocation would fail inside numpy instead.
"""

from __future__ import annotations

import errno
import json
import os
import re
import subprocess
import sys
import textwrap
import tracemalloc
import warnings

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import dpgraph
from dpgraph.graph import _memory, convert
from dpgraph.graph.analytics import synthesis

warnings.filterwarnings("ignore", category=dpgraph.SeededReleaseWarning)

SPARSE_HINT = "release a sparse sample"


def _dense(n=3000, eps=1.0):
    return dpgraph.release(nx.empty_graph(n), eps, seed=1)


def _sparse(n=3000, eps=1.0):
    return dpgraph.release(nx.empty_graph(n), eps, seed=1, target_edges=min(400_000, n * n // 10))


def _refusal(call, monkeypatch, avail=16 << 20):
    """The MemoryError ``call`` raises with ``avail`` bytes free, and the bytes it traced."""
    monkeypatch.setattr(_memory, "available_memory", lambda: avail)
    tracemalloc.start()
    try:
        with pytest.raises(MemoryError) as info:
            call()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return str(info.value), peak


# ----------------------------------------------------------------------------- the helper
def test_check_call_fits_offers_only_what_applies_to_this_release(monkeypatch):
    A = _memory.Alternative
    alts = [A("ALWAYS"), A("DENSE ONLY", kinds=("dense",)), A("TOO BIG", nbytes=1 << 40),
            _memory.sparse_release_alternative(3000)]
    monkeypatch.setattr(_memory, "available_memory", lambda: 100 << 20)
    for R, kind in ((_dense(), "dense"), (_sparse(), "sparse")):
        with pytest.raises(MemoryError) as info:
            _memory.check_call_fits(R, 2 << 30, "a big thing", alts)
        msg = str(info.value)
        assert "a big thing needs 2.00 GiB of memory but only 100.00 MiB is available" in msg
        assert f"this release: {kind}, 3,000 nodes" in msg and "nothing was allocated" in msg
        assert "ALWAYS" in msg and "TOO BIG" not in msg
        assert ("DENSE ONLY" in msg) == (kind == "dense")
        assert (SPARSE_HINT in msg) == (kind == "dense")  # never what the release already is
        assert msg.rstrip().endswith("run it where 2.00 GiB is free")
    _memory.check_call_fits(_dense(), 50 << 20, "a small thing", alts)  # fits: no error


def test_release_kind():
    assert _memory.release_kind(_dense(200)) == "dense"
    assert _memory.release_kind(_sparse(200)) == "sparse"


def test_available_memory_honours_the_address_space_limit():
    code = textwrap.dedent("""
        import resource, psutil
        from dpgraph.graph import _memory
        vms = psutil.Process().memory_info().vms
        resource.setrlimit(resource.RLIMIT_AS, (vms + (300 << 20), resource.RLIM_INFINITY))
        print(_memory.available_memory())
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert 0 <= int(out.stdout) <= 300 << 20


# ----------------------------------------------------------------------------- the exports
@pytest.mark.parametrize("make", [_dense, _sparse], ids=["dense", "sparse"])
@pytest.mark.parametrize("method", ["to_networkx", "to_scipy_sparse", "synthesize"])
def test_methods_refuse_before_allocating(make, method, monkeypatch):
    R = make()
    msg, peak = _refusal(getattr(R, method), monkeypatch)
    assert "needs" in msg and "MiB is available" in msg and "nothing was allocated" in msg
    if R.keep != 1.0:  # never what the release already is
        assert SPARSE_HINT not in msg
    elif method != "synthesize":  # the exports of a dense release: a sparse one is smaller
        assert SPARSE_HINT in msg
    assert "Instead:" in msg
    assert peak < 8 << 20  # it sized the call; it did not start it


_SIZE = r"[\d,.]+ (?:MiB|GiB)"


@pytest.mark.parametrize("make", [_dense, _sparse], ids=["dense", "sparse"])
@pytest.mark.parametrize("method", ["triangles", "transitivity", "degree_distribution",
                                    "communities"])
@pytest.mark.parametrize("avail", [1 << 18, 1 << 20])
def test_analytics_refuse_with_both_sizes(make, method, avail, monkeypatch):
    """With little memory free (every size checked, however small), each analytic refuses
    before its pass: a MemoryError giving what it needs and what it may use, in MiB below a
    GiB (never "0.00 GiB"), and never suggesting the kind of release it already is."""
    from dpgraph.graph.analytics import _pairsplit, community, triangle_counting

    def boom(*a, **k):
        raise AssertionError("the pass ran")

    R = make()
    monkeypatch.setattr(_memory, "SMALL", 0)
    monkeypatch.setattr(triangle_counting.TriangleCounter, "reductions", boom)
    monkeypatch.setattr(_pairsplit.PairSplit, "find_adjacency", boom)
    monkeypatch.setattr(community, "eigen_above", boom)
    msg, _ = _refusal(getattr(R, method), monkeypatch, avail=avail)
    sizes = re.findall(_SIZE, msg)
    assert len(sizes) >= 2, msg
    assert "0.00 GiB" not in msg and "0.00 MiB" not in msg, msg
    assert ("needs" in msg and "available" in msg) or \
        re.search(r"it exceeds max_memory=" + _SIZE, msg), msg
    if make is _sparse:  # never what the release already is
        assert SPARSE_HINT not in msg and "sparse (keep=)" not in msg, msg


def test_to_networkx_offers_the_exports_that_fit(monkeypatch):
    R = _dense()
    m = R.number_of_released_edges()
    need_sp = convert.csr_bytes(3000, m, False)
    msg, _ = _refusal(R.to_networkx, monkeypatch, avail=need_sp + (1 << 20))
    assert "R.to_scipy_sparse()" in msg and "R.to_edgelist(path)" in msg
    msg, _ = _refusal(R.to_networkx, monkeypatch, avail=need_sp - (1 << 20))
    assert "R.to_scipy_sparse()" not in msg and "R.to_edgelist(path)" in msg


def test_to_edgelist_streams_and_checks_the_disk(tmp_path, monkeypatch):
    R = _dense(1500)
    m = R.number_of_released_edges()
    path = tmp_path / "e.txt"
    monkeypatch.setattr(_memory, "free_disk", lambda p: 1000)
    with pytest.raises(OSError) as info:
        R.to_edgelist(path)
    assert info.value.errno == errno.ENOSPC and "nothing was written" in str(info.value)
    assert not path.exists()
    monkeypatch.undo()
    monkeypatch.setattr(convert, "BLOCK_PAIRS", 5000)  # many row blocks
    tracemalloc.start()
    try:
        R.to_edgelist(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * 16 * m  # never every edge at once (16 bytes an edge as positions)
    size = path.stat().st_size
    labels = np.array([len(str(v)) for v in R.nodes])
    header = len(path.read_text().splitlines()[0]) + 1
    # the size it checked against the disk is the size it wrote, to the comment line
    assert size - header == convert.edgelist_bytes([str(v) for v in R.nodes], R.released_degrees(),
                                                   m, " ", False) - 200
    assert labels.size == 1500
    H = nx.read_edgelist(path, nodetype=int)
    assert H.number_of_edges() == m


@pytest.mark.parametrize("kind", ["dense", "sparse", "dense-di", "sparse-di"])
def test_to_scipy_sparse_in_blocks_is_the_adjacency(kind, monkeypatch):
    directed = kind.endswith("di")
    G = nx.gnp_random_graph(257, 0.05, seed=3, directed=directed)
    kw = {"keep": 0.3} if kind.startswith("sparse") else {}
    R = dpgraph.release(G, 2.0, seed=4, directed=directed, **kw)
    monkeypatch.setattr(convert, "BLOCK_PAIRS", 700)  # a few rows a block
    r, c = R.released_edges()
    if not directed:
        r, c = np.concatenate([r, c]), np.concatenate([c, r])
    ref = sp.coo_array((np.ones(r.size, np.int8), (r, c)), shape=(257, 257)).tocsr()
    ref.sort_indices()
    for fmt in ("csr", "coo", "csc"):
        A = R.to_scipy_sparse(fmt)
        assert A.format == fmt and A.dtype == np.int8
        assert (A.tocsr() != ref).nnz == 0
    A = R.to_scipy_sparse()
    assert np.array_equal(A.indptr, ref.indptr) and np.array_equal(A.indices, ref.indices)
    H = R.to_networkx()
    assert H.number_of_edges() == R.number_of_released_edges()
    assert sorted(H.edges()) == sorted(zip(*(x.tolist() for x in R.released_edges())))


# ----------------------------------------------------------------------------- synthesis
def test_synthesis_candidates_are_the_best_pairs(monkeypatch):
    """The one-pass running top-k (with its prior thresholds) picks exactly the pairs the full
    score matrix ranks first."""
    from dpgraph.graph.analytics.spectral import _leading_eigen

    G = nx.planted_partition_graph(3, 100, 0.2, 0.01, seed=2)
    R = dpgraph.release(G, 3.0, seed=5)
    n = 300
    vals, vecs = _leading_eigen(R, np.inf, 3)
    a, b = R.channel.alpha, R.channel.beta
    lo, hi = np.log(a / b), np.log((1 - a) / (1 - b))
    monkeypatch.setattr(synthesis, "_PASS_PAIRS", 900)  # 3 rows a block
    monkeypatch.setattr(synthesis, "_MERGE", 64)  # merge often: the thresholds prune
    P32 = (vecs * vals).astype(np.float32) @ vecs.astype(np.float32).T
    P = np.clip(P32.astype(np.float64), 1e-4, 1 - 1e-4)
    Y = R.to_scipy_sparse().toarray() > 0
    S = np.log(P) - np.log1p(-P) + np.where(Y, lo, hi)
    iu = np.triu_indices(n, 1)
    order = np.lexsort((-P32[iu], -S[iu]))  # score, then the raw prior (clipped ties)
    # a budget inside the unclipped priors, and one reaching into the clipped tie at 1e-4
    for k in (2500, int(np.sum(P[iu] > 1e-4)) + 3000):
        r, c = synthesis._prior_candidates(R, vecs, vals, k, lo, hi, np.random.default_rng(0),
                                           False)
        assert r.size == k and np.all(r < c) and len(set(zip(r.tolist(), c.tolist()))) == k
        kth = order[k - 1]
        s_k, p_k = S[iu][kth], P32[iu][kth]
        s, p = S[r, c], P32[r, c]
        beats = (s > s_k + 1e-6) | ((np.abs(s - s_k) <= 1e-6) & (p >= p_k - 1e-6))
        assert beats.all()  # every chosen pair is among the best k by (score, raw prior)
        assert np.all(np.diff(s) <= 1e-6)  # best first


# ----------------------------------------------------------------------------- the report
def test_report_refuses_a_shared_computation_once(monkeypatch):
    from dpgraph.graph.private import PrivateGraph
    from dpgraph.report.builder import report_context

    calls = []

    def refuse(self, *a, **k):
        calls.append("triangles")
        raise MemoryError("the triangle counts need 28.00 GiB of memory but only 1.00 GiB is available")

    def never(name):
        def f(self, *a, **k):
            calls.append(name)
            raise AssertionError(f"{name} ran after triangles was refused")
        return f

    monkeypatch.setattr(PrivateGraph, "triangles", refuse)
    for name in ("wedges", "transitivity", "average_clustering"):
        monkeypatch.setattr(PrivateGraph, name, never(name))
    R = dpgraph.release(nx.karate_club_graph(), 2.0, seed=0)
    ctx = report_context(R)
    rows = {r["name"]: r for r in ctx["statistics"]}
    assert calls == ["triangles"]  # the others were not tried again
    said = [x for x in ctx["not_computed"] if "28.00 GiB" in x["detail"]]
    assert len(said) == 1  # one entry, its sizes behind it, for every statistic it stopped
    assert "memory" in said[0]["message"] and "GiB" not in said[0]["message"]  # for people
    for name in ("triangles", "wedges", "transitivity", "average clustering"):
        assert rows[name]["error"] and name in said[0]["what"]


def test_report_states_what_subsampling_costs():
    from dpgraph.report.builder import report_context

    R = dpgraph.release(nx.karate_club_graph(), 1.0, seed=0, keep=0.2)
    text = report_context(R)["subsample_cost"]
    std = R.number_of_edges().std
    assert f"{std:.4g}" in text and "times the full release" in text
    assert report_context(dpgraph.release(nx.karate_club_graph(), 1.0, seed=0))["subsample_cost"] == ""


# ----------------------------------------------------------------------------- a real limit
_UNDER_LIMIT = textwrap.dedent("""
    import json, os, resource, sys, tempfile, warnings
    warnings.simplefilter("ignore")
    import psutil, networkx as nx, dpgraph
    from dpgraph.report import build_report
    import jinja2, matplotlib.figure, matplotlib.backends.backend_svg  # code is loaded before the limit
    import numpy as np, scipy.linalg  # and BLAS/LAPACK's buffers, allocated once on first use
    np.linalg.qr(np.ones((512, 64))); np.linalg.eigh(np.eye(64)); scipy.linalg.qr(np.ones((64, 8)))
    kind = sys.argv[1]
    kw = {} if kind == "dense" else {"target_edges": 150_000}
    R = dpgraph.release(nx.gnp_random_graph(4000, 0.005, seed=1), 1.0, seed=2, **kw)
    out = {}
    tmp = tempfile.mkdtemp()
    calls = {
        "to_networkx": R.to_networkx, "to_scipy_sparse": R.to_scipy_sparse,
        "to_edgelist": lambda: R.to_edgelist(os.path.join(tmp, "e.txt")),
        "synthesize": R.synthesize, "triangles": R.triangles, "transitivity": R.transitivity,
        "degree_distribution": R.degree_distribution,
        "communities": R.communities,
        "report": lambda: build_report(R),
    }
    for name, call in calls.items():  # each call gets 160 MiB of address space beyond the process's
        vms = psutil.Process().memory_info().vms
        resource.setrlimit(resource.RLIMIT_AS, (vms + (160 << 20), resource.RLIM_INFINITY))
        try:
            call()
            out[name] = ["ok", ""]
        except MemoryError as exc:
            out[name] = ["refused", str(exc)]
        except ValueError as exc:  # an empty graph's edge count projects to 0: nothing to synthesize
            if name != "synthesize" or "projects to 0" not in str(exc):
                raise
            out[name] = ["unresolved", str(exc)]
    print(json.dumps(out))
""")


@pytest.mark.parametrize("kind", ["dense", "sparse"])
def test_every_method_under_an_address_space_limit(kind):
    # numba's kernels load their compiled code on first call, which would happen inside the
    # limit (and fail there, as a SystemError, when the machine is slow to map it): the numpy
    # paths, which give identical results, keep the test about dpgraph's own allocations
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", NUMBA_NUM_THREADS="1",
               MALLOC_ARENA_MAX="2", MPLBACKEND="Agg", DPGRAPH_DISABLE_NUMBA="1")
    proc = subprocess.run([sys.executable, "-c", _UNDER_LIMIT, kind], capture_output=True,
                          text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]  # never killed, never an unhandled error
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    for name in ("to_networkx", "to_scipy_sparse", "to_edgelist", "synthesize", "report",
                 "triangles", "transitivity", "degree_distribution", "communities"):
        status, msg = out[name]
        if status == "refused":  # sized first: a message with sizes, not "Unable to allocate"
            assert len(re.findall(_SIZE, msg)) >= 2 and "0.00 GiB" not in msg, msg
            if name in ("triangles", "transitivity"):  # the plan's refusal: cost and the limit
                assert re.search(r"it exceeds max_memory=" + _SIZE, msg), msg
                assert "max_seconds" not in msg, msg  # the time fits: only memory is said
                continue
            assert "needs" in msg and "available" in msg, msg
            if name == "synthesize" and not msg.startswith("R.synthesize()"):
                continue  # a step it calls (the degree distribution) refused with its own check
            assert "nothing was allocated" in msg, msg
            if kind == "sparse":  # never "use a sparse release" on a sparse release
                assert SPARSE_HINT not in msg and "sparse (keep=)" not in msg, msg
    # a networkx graph of 2 million released edges cannot fit in 160 MiB: said so; the sparse
    # release's 150,000 fit
    assert out["to_networkx"][0] == ("refused" if kind == "dense" else "ok"), out["to_networkx"]
    assert out["to_edgelist"][0] == "ok" and out["report"][0] == "ok"


def test_sizes_below_a_gib_are_said_in_mib():
    """One formatter for every size in a message: never "0.00 GiB" for a size that is not 0."""
    t = _memory.size_text
    assert t(16 << 20) == "16.00 MiB" and t(100 << 20) == "100.00 MiB"
    assert t(2**30 - 2**20) == "1,023.00 MiB" and t(2**30) == "1.00 GiB"
    assert t(30 * 2**30) == "30.00 GiB" and t(10**400) == "9.31e390 GiB"
    assert t(0) == "0.00 MiB" and t(123 * 2**30 + 0.0) == "123.00 GiB"


@pytest.mark.parametrize("directed", [False, True])
def test_to_scipy_sparse_keeps_int32_indices_within_its_size_check(directed):
    """scipy upcasts int32 indices to int64 when the row pointers are int64: 8 bytes an entry
    that csr_bytes does not count (a failed 5 GiB allocation at 5 x 10^4 nodes)."""
    import tracemalloc

    R = dpgraph.release(nx.gnp_random_graph(1500, 0.01, seed=5, directed=directed), 1.0, seed=6,
                        directed=directed)
    n, m = R.number_of_nodes(), R.number_of_released_edges()
    tracemalloc.start()
    try:
        A = R.to_scipy_sparse()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert A.indices.dtype == np.int32 and A.indptr.dtype == np.int32
    assert A.nnz == (m if directed else 2 * m)
    assert peak <= convert.csr_bytes(n, m, directed)


@pytest.mark.filterwarnings("ignore::UserWarning")  # an unresolved count warns, by design
def test_synthesis_is_sized_on_the_count_it_builds_not_the_intervals_top(monkeypatch):
    """An unresolved sparse release's edge count interval reaches far above what the degree
    distribution gives: synthesis refuses at once only when the interval's low end does not
    fit, and otherwise sizes the count it builds (so memory between the two suffices)."""
    from dpgraph.graph import _memory
    from dpgraph.graph.analytics.counts import number_of_edges

    R = dpgraph.release(nx.gnp_random_graph(3000, 0.003, seed=1), 1.0, seed=2, target_edges=20_000)
    est = number_of_edges(R, proper=False)
    top = int(np.ceil(est.value + 1.96 * est.std))
    need = {}

    def sized(R_, nbytes, what, alternatives=()):
        need[what.split("about ")[1].split(" edges")[0]] = nbytes
    monkeypatch.setattr(synthesis, "check_call_fits", sized)
    synthesis._check_synthesis_fits(R, top, 8 * top + 1000, 60)
    H = R.synthesize(seed=0)
    monkeypatch.undo()
    built = H.number_of_edges()
    assert built < top
    top_need, built_need = need[f"{top:,}"], need[f"{built:,}"]
    assert built_need < top_need
    between = (top_need + built_need) // 2
    monkeypatch.setattr(_memory, "available_memory", lambda: between)
    assert R.synthesize(seed=0).number_of_edges() == built
    monkeypatch.setattr(_memory, "available_memory", lambda: built_need // 2)
    with pytest.raises(MemoryError, match="nothing was allocated"):
        R.synthesize(seed=0)
