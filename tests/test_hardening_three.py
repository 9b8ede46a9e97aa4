"""Hardening, round three: streams copied by fork, outputs that would overwrite the ledger or
an input, temporaries cleanup, the blockwise store lock, where the seeded-release warning
points, and messages that name the argument, the file and the field.  Each test names the
promise of SECURITY.md it checks."""

from __future__ import annotations

import math
import multiprocessing
import os
import pickle
import signal
import warnings
from pathlib import Path

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
            signal.alarm(120)  # a child that hangs dies (SIGALRM), and the parent's test fails
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


# --------------------------------------------------------------------------- 2. outputs
def _cli(args: list[str], capsys) -> tuple[int, str]:
    from dpgraph.cli import main

    code = main([str(a) for a in args])
    return code, capsys.readouterr().err


def _edges(tmp_path):
    path = tmp_path / "g.txt"
    path.write_text("0 1\n1 2\n2 3\n")
    return path


def test_cli_release_refuses_an_output_that_will_be_its_own_new_ledger(tmp_path, capsys):
    """SECURITY.md, outputs never overwrite what a job keeps: -o FILE --ledger FILE for a new
    ledger is refused before the ledger is created or charged."""
    g, out = _edges(tmp_path), tmp_path / "b.json"
    code, err = _cli(["release", g, "-e", "1", "--nodes", "10", "-o", out, "--ledger", out,
                      "--budget", "1"], capsys)
    assert code == 2 and "privacy ledger" in err and "-o" in err
    assert not out.exists()
    link = tmp_path / "link.json"  # a symbolic link to where the new ledger will be
    link.symlink_to(tmp_path / "new.json")
    code, err = _cli(["release", g, "-e", "1", "--nodes", "10", "-o", link,
                      "--ledger", tmp_path / "new.json", "--budget", "1"], capsys)
    assert code == 2 and "privacy ledger" in err
    assert not (tmp_path / "new.json").exists()


def test_cli_release_refuses_to_overwrite_an_existing_ledger_or_its_lock(tmp_path, capsys):
    """SECURITY.md, outputs never overwrite what a job keeps: an existing ledger, reached by its
    name, a symbolic link or as the lock file, is refused even with --force, before any
    charge; any other privacy ledger is never overwritten by a release either."""
    g, ledger = _edges(tmp_path), tmp_path / "budget.json"
    L = dpgraph.PrivacyLedger.open(ledger, total_epsilon=1.0)
    before = ledger.read_bytes()
    link = tmp_path / "alias.json"
    link.symlink_to(ledger)
    for out in (ledger, link, tmp_path / "budget.json.lock"):
        code, err = _cli(["release", g, "-e", "0.5", "--nodes", "10", "-o", out, "--force",
                          "--ledger", ledger], capsys)
        assert code == 2 and "privacy ledger" in err and "refusing to overwrite" in err
    other = tmp_path / "other.json"
    dpgraph.PrivacyLedger.open(other, total_epsilon=3.0)
    code, err = _cli(["release", g, "-e", "0.5", "--nodes", "10", "-o", other, "--force"], capsys)
    assert code == 2 and "holds a privacy ledger" in err
    assert ledger.read_bytes() == before and L.spent == 0
    assert dpgraph.PrivacyLedger.load(other).total_epsilon == 3.0


def test_cli_release_refuses_an_output_that_is_its_key_or_an_input(tmp_path, capsys):
    """SECURITY.md, outputs never overwrite what a job keeps: the signing key file, the edge
    list and the @nodes file (by name, symbolic or hard link) are refused before any charge."""
    g, ledger = _edges(tmp_path), tmp_path / "budget.json"
    assert _cli(["keygen", tmp_path / "curator"], capsys)[0] == 0
    key = tmp_path / "curator.key"
    key_bytes = key.read_bytes()
    ids = tmp_path / "ids.txt"
    ids.write_text("0\n1\n2\n3\n")
    hard = tmp_path / "hard.txt"
    os.link(g, hard)
    cases = [(key, "--signing-key"), (g, "EDGELIST"), (hard, "EDGELIST"), (ids, "--nodes")]
    for out, named in cases:
        code, err = _cli(["release", g, "-e", "0.5", "--nodes", f"@{ids}", "-o", out, "--force",
                          "--signing-key", key, "--ledger", ledger, "--budget", "2"], capsys)
        assert code == 2 and named in err and "refusing to overwrite" in err
    assert key.read_bytes() == key_bytes and not ledger.exists()


def test_save_refuses_to_overwrite_a_ledger_or_its_own_key_file(tmp_path):
    """SECURITY.md, outputs never overwrite what a job keeps: PrivateGraph.save never replaces
    a privacy ledger, nor the key file it signs with."""
    from dpgraph.graph.signing import write_key_files

    R = dpgraph.release(nx.path_graph(6), 1.0, seed=0)
    ledger = tmp_path / "budget.json"
    dpgraph.PrivacyLedger.open(ledger, total_epsilon=1.0).charge(0.5)
    before = ledger.read_bytes()
    with pytest.raises(ValueError, match="holds a privacy ledger"):
        R.save(ledger)
    assert ledger.read_bytes() == before
    secret, _ = write_key_files(str(tmp_path / "curator"))
    key_bytes = Path(secret).read_bytes()
    for key in (secret, tmp_path / "curator.key"):
        with pytest.raises(ValueError, match="signing_key file"):
            R.save(key, signing_key=key)
    assert Path(secret).read_bytes() == key_bytes
    R.save(tmp_path / "r.dpg", signing_key=secret)  # an ordinary save still works


# --------------------------------------------------------------------------- 4. temporaries
def _dead_pid() -> int:
    import subprocess
    import sys

    return int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True).stdout)


def test_save_and_ledger_writes_never_delete_a_users_files(tmp_path):
    """SECURITY.md, temporaries: only what dpgraph wrote is deleted.  A user's
    `.dpgraph-settings` (an hour old, the name of earlier temporaries), a file named like a
    temporary of ours but holding the user's content, and a symbolic link named like one all
    survive a save and every ledger write."""
    dead = _dead_pid()
    users = {
        ".dpgraph-settings": b"theme = dark\n",
        ".dpgraph-profile1": b"\x89DPGRAPH a copy the user keeps",
        f".r.dpg.dpgraph-tmp-{dead}-abcd1234": b"the user's notes",
        f".budget.json.dpgraph-tmp-{dead}-abcd1234": b'{"mine": true}',
    }
    for name, content in users.items():
        (tmp_path / name).write_bytes(content)
        hours_ago = os.stat(tmp_path / name).st_mtime - 2 * 3600
        os.utime(tmp_path / name, (hours_ago, hours_ago))
    target = tmp_path / "precious.txt"
    target.write_bytes(b"keep me")
    (tmp_path / f".r.dpg.dpgraph-tmp-{dead}-linklink").symlink_to(target)
    R = dpgraph.release(nx.path_graph(5), 1.0, seed=0)
    R.save(tmp_path / "r.dpg")
    L = dpgraph.PrivacyLedger.open(tmp_path / "budget.json", total_epsilon=2.0)
    L.charge(0.5)
    L.save(tmp_path / "budget.json")
    dpgraph.PrivacyLedger.load(tmp_path / "budget.json")
    for name, content in users.items():
        assert (tmp_path / name).read_bytes() == content, name
    assert (tmp_path / f".r.dpg.dpgraph-tmp-{dead}-linklink").is_symlink()
    assert target.read_bytes() == b"keep me"


def test_a_killed_writes_temporaries_are_still_removed(tmp_path):
    """SECURITY.md, temporaries: a temporary of a killed save or ledger write (dpgraph's name,
    a process that is gone, dpgraph's magic or a write cut before its first byte) is
    removed; one of a running process is kept."""
    dead = _dead_pid()
    ours = [f".r.dpg.dpgraph-tmp-{dead}-abcd1234", f".r.dpg.dpgraph-tmp-{dead}-empty000",
            f".budget.json.dpgraph-tmp-{dead}-abcd1234"]
    (tmp_path / ours[0]).write_bytes(b"\x89DPGRAPH\x01\x00")
    (tmp_path / ours[1]).write_bytes(b"")
    (tmp_path / ours[2]).write_bytes(b'{\n "format": "dpgraph-privacy-ledger",\n "vers')
    running = tmp_path / f".r.dpg.dpgraph-tmp-{os.getpid()}-abcd1234"
    running.write_bytes(b"\x89DPGRAPH")
    dpgraph.release(nx.path_graph(5), 1.0, seed=0).save(tmp_path / "r.dpg")
    dpgraph.PrivacyLedger.open(tmp_path / "budget.json", total_epsilon=1.0)
    assert not any((tmp_path / name).exists() for name in ours)
    assert running.exists()


# --------------------------------------------------------------------------- 5b. store lock
def test_a_second_blockwise_writer_through_a_symlink_is_refused_before_its_charge(tmp_path):
    """SECURITY.md, one writer per store: the lock is taken on the store's resolved path, so a
    writer reaching a store being written through a symbolic link fails with StoreBusyError
    before its ledger is charged."""
    pytest.importorskip("zarr")
    from filelock import FileLock

    from dpgraph.graph.blockwise import StoreBusyError, release_blockwise

    real = tmp_path / "real.zarr"
    release_blockwise(nx.path_graph(80), 1.0, real, tile=(64, 64))
    link = tmp_path / "link.zarr"
    link.symlink_to(real)
    L = dpgraph.PrivacyLedger.open(tmp_path / "budget.json", total_epsilon=5.0)
    held = FileLock(str(real) + ".lock", timeout=0)  # the first writer, still writing
    held.acquire()
    try:
        with pytest.raises(StoreBusyError, match="another process"):
            release_blockwise(nx.path_graph(80), 1.0, link, tile=(64, 64), overwrite=True,
                              ledger=L)
    finally:
        held.release()
    assert L.spent == 0
    release_blockwise(nx.path_graph(80), 1.0, link, tile=(64, 64), overwrite=True, ledger=L)
    assert L.spent == 1.0  # once the first writer is done, the link writes and is charged


def test_a_blockwise_store_or_its_lock_cannot_be_the_ledger(tmp_path):
    """SECURITY.md, one writer per store: a store whose path or lock file is the ledger it
    charges (or the ledger's lock) is refused before the charge."""
    pytest.importorskip("zarr")
    from dpgraph.graph.blockwise import release_blockwise

    L = dpgraph.PrivacyLedger.open(tmp_path / "x.lock", total_epsilon=5.0)
    before = (tmp_path / "x.lock").read_bytes()
    for store in (tmp_path / "x", tmp_path / "x.lock.lock"):
        with pytest.raises(ValueError, match="privacy ledger"):
            release_blockwise(nx.path_graph(80), 1.0, store, tile=(64, 64), ledger=L)
    assert L.spent == 0 and (tmp_path / "x.lock").read_bytes() == before


# --------------------------------------------------------------------------- 10. warnings
def _seeded_paths():
    from dpgraph.core import MechanismE, Universe

    G = nx.path_graph(8)
    T = nx.Graph([(0, 1, {"sign": "+"}), (1, 2, {"sign": "-"}), (2, 3, {"sign": "+"})])
    M = MechanismE(Universe([1, 2, 3]), 1.0)
    return {
        "dpgraph.release": lambda: dpgraph.release(G, 1.0, seed=0),
        "sparse": lambda: dpgraph.release(G, 1.0, seed=0, keep=0.5),
        "typed": lambda: dpgraph.release(T, 1.0, seed=0, edge_attr="sign", values=["+", "-"]),
        "sparse typed": lambda: dpgraph.release(T, 1.0, seed=0, edge_attr="sign",
                                                values=["+", "-"], keep=0.5),
        "MechanismE.release": lambda: M.release([1, 2, 3, 3], seed=0),
        "dpgraph.graph.release": lambda: dpgraph.graph.release(G, 1.0, seed=0),
    }


@pytest.mark.parametrize("path", list(_seeded_paths()))
def test_seeded_release_warning_names_the_callers_line(path):
    """SECURITY.md, seeds: SeededReleaseWarning points at the user's line (this file), for
    every public release path, so a filter by module matches it."""
    call = _seeded_paths()[path]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    seeded = [w for w in caught if issubclass(w.category, dpgraph.SeededReleaseWarning)]
    assert len(seeded) == 1
    assert os.path.samefile(seeded[0].filename, __file__), seeded[0].filename
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.filterwarnings("error", category=dpgraph.SeededReleaseWarning,
                                module=__name__.replace(".", r"\.") + r"\Z")
        with pytest.raises(dpgraph.SeededReleaseWarning):
            call()


def test_seeded_release_warning_is_shown_once_per_call_site():
    """SECURITY.md, seeds: under the default once-per-location action, two call sites give two
    warnings (a location inside dpgraph would show one for all call sites)."""
    G = nx.path_graph(5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        for _ in range(2):
            dpgraph.release(G, 1.0, seed=0)  # first call site, twice: shown once
        dpgraph.release(G, 1.0, seed=1)  # second call site
    lines = [w.lineno for w in caught if issubclass(w.category, dpgraph.SeededReleaseWarning)]
    assert len(lines) == 2 and lines[0] != lines[1]


# --------------------------------------------------------------------------- 11. messages
def test_a_folder_as_a_key_file_names_the_argument_and_the_folder(tmp_path, capsys):
    """SECURITY.md, messages: a folder given as a key file is refused naming the argument and
    the path (not a file descriptor), from Python and from the command line."""
    folder = tmp_path / "keys"
    folder.mkdir()
    R = dpgraph.release(nx.path_graph(5), 1.0, seed=0)
    with pytest.raises(ValueError, match=r"signing_key: '.*keys' is a directory"):
        R.save(tmp_path / "r.dpg", signing_key=folder)
    R.save(tmp_path / "r.dpg")
    with pytest.raises(ValueError, match=r"verify_key: '.*keys' is a directory"):
        dpgraph.load(tmp_path / "r.dpg", verify_key=str(folder))
    g = _edges(tmp_path)
    for args in (["release", g, "-e", "1", "--nodes", "5", "-o", tmp_path / "s.dpg",
                  "--signing-key", folder],
                 ["cut", tmp_path / "r.dpg", "--S", "1", "--verify-key", folder]):
        code, err = _cli(args, capsys)
        flag = args[-2]
        assert code == 2 and f"{flag}: '{folder}' is a directory" in err, err
        assert err.count("\n") == 1 and "3:" not in err
    assert not (tmp_path / "s.dpg").exists()


def _with_header(path, **fields):
    import hashlib
    import json

    data = path.read_bytes()
    hlen = int.from_bytes(data[12:20], "little")
    header = {**json.loads(data[20 : 20 + hlen]), **fields}
    head = json.dumps(header, separators=(",", ":")).encode()
    body = data[:12] + len(head).to_bytes(8, "little") + head + data[20 + hlen : len(data) - 32]
    path.write_bytes(body + hashlib.sha256(body).digest())


@pytest.mark.parametrize("numerator", ["\u00b2", "1\u00b9", "\u0661\u0662", "12 ", 7])
def test_a_non_decimal_flip_numerator_names_the_file_and_the_field(tmp_path, capsys, numerator):
    """SECURITY.md, messages: a .dpg whose flip_numerator is a superscript digit, another
    script's digits, padded or not a string is refused naming the file and the field."""
    path = tmp_path / "r.dpg"
    dpgraph.release(nx.path_graph(5), 1.0, seed=0).save(path)
    _with_header(path, flip_numerator=numerator)
    with pytest.raises(ValueError, match=r"r\.dpg: header field flip_numerator must be"):
        dpgraph.load(path)
    code, err = _cli(["cut", path, "--S", "1"], capsys)
    assert code == 2 and "r.dpg: header field flip_numerator" in err and err.count("\n") == 1
