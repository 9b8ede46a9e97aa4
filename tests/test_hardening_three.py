"""Hardening, round three: streams copied by fork, outputs that would overwrite the ledger or
an input, temporaries cleanup, the blockwise store lock, where the seeded-release warning
points, and messages that name the argument, the file and the field.  Each test names the
promise of SECURITY.md it checks."""

from __future__ import annotations

import math
import multiprocessing
import os
import pickle
import warnings

import networkx as nx
import numpy as np
import pytest

import dpgraph
from dpgraph.core.randomness import SecureRandom, SeededRandom

fork_only = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork (POSIX)")


# --------------------------------------------------------------------------- fork helpers
def _in_children(task, count: int = 2) -> list:
    """Run ``task()`` in ``count`` real forked children; return what each returned (pickled
    through a pipe), or the repr of the exception it raised."""
    results = []
    for _ in range(count):
        r, w = os.pipe()
        with warnings.catch_warnings():  # fork() in a process with threads warns on 3.12+
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:  # the child: never return into pytest
            code = 0
            try:
                try:
                    out = ("ok", task())
                except BaseException as exc:  # reported to the parent, not raised here
                    out = ("error", f"{type(exc).__name__}: {exc}")
                with os.fdopen(w, "wb") as fh:
                    pickle.dump(out, fh)
            except BaseException:
                code = 1
            finally:
                os._exit(code)
        os.close(w)
        with os.fdopen(r, "rb") as fh:
            data = fh.read()
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        results.append(pickle.loads(data))
    return results


def _bits(R) -> set:
    rows, cols = R.released_edges()
    return set(zip(rows.tolist(), cols.tolist()))


# --------------------------------------------------------------------------- 0. fork
@fork_only
def test_secure_source_copied_by_fork_gives_independent_releases_of_one_graph():
    """SECURITY.md, streams across processes: two children releasing the same graph with one
    SecureRandom made in the parent do not give the same release."""
    G = nx.gnp_random_graph(120, 0.1, seed=1)
    src = SecureRandom()
    src.uint64(5)  # used in the parent before the fork
    (s1, a), (s2, b) = _in_children(lambda: _bits(dpgraph.release(G, 1.0, seed=src)))
    assert s1 == s2 == "ok"
    pairs = 120 * 119 // 2
    p = float(dpgraph.release(G, 1.0).flip_probability)  # the certified flip probability
    q = 2 * p * (1 - p)  # two independent releases disagree on a pair with probability q
    diff = len(a ^ b)
    assert abs(diff - pairs * q) < 4 * math.sqrt(pairs * q * (1 - q))


@fork_only
def test_neighbouring_graphs_released_in_two_forked_children_differ_in_many_pairs():
    """SECURITY.md, streams across processes: neighbouring graphs (one pair apart) released in
    two children from one copied source are two independent releases, not one release with
    one pair changed (the difference would reveal the changed pair)."""
    n = 150
    G = nx.gnp_random_graph(n, 0.1, seed=2)
    H = G.copy()
    u, v = next((u, v) for u in range(n) for v in range(u + 1, n) if not G.has_edge(u, v))
    H.add_edge(u, v)
    src = SecureRandom()
    out = [_in_children(lambda g=g: _bits(dpgraph.release(g, 1.0, seed=src)), 1)[0]
           for g in (G, H)]
    assert [s for s, _ in out] == ["ok", "ok"]
    diff = out[0][1] ^ out[1][1]
    assert diff != {(u, v)}
    pairs = n * (n - 1) // 2
    p = float(dpgraph.release(G, 1.0).flip_probability)
    q_same, q_changed = 2 * p * (1 - p), p * p + (1 - p) * (1 - p)
    mean = (pairs - 1) * q_same + q_changed
    var = (pairs - 1) * q_same * (1 - q_same) + q_changed * (1 - q_changed)
    assert abs(len(diff) - mean) < 4 * math.sqrt(var)


@fork_only
def test_forked_secure_source_draws_differ_from_the_parents_continuation():
    """SECURITY.md, streams across processes: the child's words are not the parent's next
    words, and a substream derived in the child is not the parent's substream."""
    src = SecureRandom()
    src.uint64(3)
    kids = _in_children(lambda: src.uint64(64).tolist())
    [(status, child_sub)] = _in_children(lambda: src.substream(4).uint64(64).tolist(), 1)
    assert [s for s, _ in kids] == ["ok", "ok"] and status == "ok"
    assert kids[0][1] != kids[1][1]  # the two children differ from each other ...
    sub_before = src.substream(4).uint64(64).tolist()
    parent_next = src.uint64(64).tolist()
    assert parent_next not in (kids[0][1], kids[1][1])  # ... and from the parent
    assert child_sub != sub_before


@fork_only
def test_substream_made_before_a_fork_is_rekeyed_in_the_child():
    """SECURITY.md, streams across processes: a substream of an OS-keyed source, derived
    before the fork, is unknown too, and rekeyed in each child."""
    sub = SecureRandom().substream(1, 2)
    (s1, a), (s2, b) = _in_children(lambda: sub.uint64(32).tolist())
    assert s1 == s2 == "ok" and a != b


@fork_only
def test_multiprocessing_fork_workers_draw_independent_words():
    """SECURITY.md, streams across processes: multiprocessing's fork start method (a pool's
    workers) gives each worker its own stream."""
    ctx = multiprocessing.get_context("fork")
    src = SecureRandom()
    queue = ctx.Queue()

    def work():
        queue.put(src.uint64(16).tolist())

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        procs = [ctx.Process(target=work) for _ in range(2)]
        for proc in procs:
            proc.start()
    words = [queue.get(timeout=60) for _ in procs]
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    assert words[0] != words[1]
    assert src.uint64(16).tolist() not in words


@fork_only
def test_caller_keyed_source_refuses_to_draw_in_a_forked_child():
    """SECURITY.md, streams across processes: a caller-chosen key cannot be rekeyed silently
    (it promises reproducibility) and must not repeat the parent's stream: a draw is refused,
    while substreams (which depend on the key only) stay available and reproducible."""
    src = SecureRandom(key=bytes(range(16)))
    [(status, message)] = _in_children(lambda: src.uint64(4).tolist(), 1)
    assert status == "error" and message.startswith("RuntimeError") and "fork" in message
    [(status, sub)] = _in_children(lambda: src.substream(7).uint64(4).tolist(), 1)
    assert status == "ok" and sub == SecureRandom(key=bytes(range(16))).substream(7).uint64(
        4).tolist()
    G = nx.path_graph(10)
    [(status, message)] = _in_children(lambda: dpgraph.release(G, 1.0, seed=src), 1)
    assert status == "error" and "RuntimeError" in message
    assert src.uint64(2).dtype == np.uint64  # the parent keeps its stream


@fork_only
def test_seeded_source_copied_by_fork_is_reproducible_by_design():
    """SECURITY.md, streams across processes: a SeededRandom continues the same stream in
    every child (a seed promises reproducibility; such releases warn and are not for
    publication)."""
    src = SeededRandom(11)
    (s1, a), (s2, b) = _in_children(lambda: src.uint64(8).tolist())
    assert s1 == s2 == "ok" and a == b == SeededRandom(11).uint64(8).tolist()


def test_secure_source_cannot_be_pickled():
    """SECURITY.md, streams across processes: a pickled copy (spawn workers, dask processes)
    would repeat the keystream; pickling is refused with a message that says what to do."""
    with pytest.raises(TypeError, match="create one in each process"):
        pickle.dumps(SecureRandom())
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(SecureRandom(key=bytes(16)).substream(1))


@fork_only
def test_in_memory_ledger_copied_by_fork_refuses_to_charge_in_the_child(tmp_path):
    """SECURITY.md, streams across processes: a ledger held only in memory cannot see the
    charges of its copies in other processes, so it refuses to charge after a fork; a ledger
    kept in a file is the authority and is shared correctly."""
    L = dpgraph.PrivacyLedger(1.0)
    [(status, message)] = _in_children(lambda: L.charge(1.0), 1)
    assert status == "error" and "fork" in message and "PrivacyLedger.open" in message
    F = dpgraph.PrivacyLedger.open(tmp_path / "budget.json", total_epsilon=1.0)
    out = _in_children(lambda: F.charge(0.75).epsilon)
    assert sorted(s for s, _ in out) == ["error", "ok"]  # the second child sees the first
    assert F.spent == 0.75
