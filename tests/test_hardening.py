"""Hardening: crafted stores, hand-built inputs, ledgers reached by two names, exceptions that
carry data, non-float epsilons, sizes before work, the command line's promise, documented
exception types and timing.  Each test names the promise of SECURITY.md it checks."""

from __future__ import annotations

import json
import os
import signal
import warnings
from contextlib import contextmanager
from fractions import Fraction

import networkx as nx
import numpy as np
import pytest

import dpgraph

warnings.filterwarnings("ignore", category=dpgraph.SeededReleaseWarning)
zarr = pytest.importorskip("zarr")


@contextmanager
def deadline(seconds: int):
    """Fail instead of hanging when the body runs longer than ``seconds``."""
    def expired(signum, frame):
        raise TimeoutError(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _store(tmp_path, n=300, tile=(64, 256), G=None):
    from dpgraph.graph.blockwise import release_blockwise

    path = tmp_path / "s.zarr"
    release_blockwise(G if G is not None else nx.empty_graph(n), 1.0, path, tile=tile)
    return path


# --------------------------------------------------------------------------- 1. hidden bits
def test_lower_triangle_bits_in_a_straddling_tile_are_refused(tmp_path):
    from dpgraph.graph.blockwise import open_blockwise

    path = _store(tmp_path)
    open_blockwise(path)  # clean
    adj = zarr.open_array(str(path), path="adjacency", mode="r+")
    # rows 128..191 have their diagonal in word 2; tile (2, 0) holds words 0..3, so it
    # straddles the diagonal and words 0 and 1 of those rows lie below it
    adj[130, 0] = np.uint64(1 << 5)  # pair (130, 5): lower triangle
    with pytest.raises(ValueError, match="lower triangle"):
        open_blockwise(path)
    adj[130, 0] = np.uint64(0)
    adj[191, 1] = np.uint64(1 << 63)  # pair (191, 127)
    with pytest.raises(ValueError, match="lower triangle"):
        open_blockwise(path)


# --------------------------------------------------------------------------- 2. memory bombs
def _replace_nodes(path, n, **kwargs):
    g = zarr.open_group(str(path), mode="r+")
    del g["nodes"]
    g.create_array("nodes", shape=(n,), dtype="int64", **kwargs)[:] = np.arange(n)


def test_store_codecs_and_chunks_the_writer_never_produces_are_refused(tmp_path):
    from dpgraph.graph.blockwise import open_blockwise

    path = _store(tmp_path)
    # a compressed nodes array: a small file could declare a gigantic chunk
    _replace_nodes(path, 300, chunks=(300,), compressors=zarr.codecs.GzipCodec())
    with pytest.raises(ValueError, match="codecs or a layout"):
        open_blockwise(path)
    # uncompressed, but a chunk 2^22 labels long for 300 nodes
    _replace_nodes(path, 300, chunks=(1 << 22,), compressors=None)
    with pytest.raises(ValueError, match="chunks"):
        open_blockwise(path)


def test_store_tile_larger_than_the_matrix_is_refused(tmp_path):
    from dpgraph.graph.blockwise import open_blockwise

    path = _store(tmp_path, n=300, tile=(64, 256))
    g = zarr.open_group(str(path), mode="r+")
    tile = [8192, 65536]  # 64 MiB a chunk for a 300-node matrix
    del g["adjacency"]
    g.create_array("adjacency", shape=(300, 5), chunks=(tile[0], tile[1] // 64), dtype="uint64",
                   fill_value=0, compressors=None)
    g.attrs["tile"] = tile
    with pytest.raises(ValueError, match="'tile'"):
        open_blockwise(path)


def test_huge_metadata_file_is_refused_before_parsing(tmp_path):
    from dpgraph.graph.blockwise import open_blockwise

    path = _store(tmp_path)
    meta = json.loads((path / "nodes" / "zarr.json").read_text())
    meta["attributes"] = {"pad": "x" * (2 << 20)}
    (path / "nodes" / "zarr.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="larger than any dpgraph writes"):
        open_blockwise(path)


# --------------------------------------------------------------------------- 3. EdgeKeys
def test_hand_built_edge_keys_are_validated_and_never_printed():
    from dpgraph.graph import blockwise
    from dpgraph.graph.encoding import NodeIndex

    index = NodeIndex.from_integers(np.arange(10))
    Keys = blockwise.EdgeKeys
    ok = Keys(index, np.array([1, 23]), False)  # (0, 1), (2, 3)
    assert "23" not in repr(ok) and "edges=2" in repr(ok)
    with pytest.raises(ValueError):
        ok.keys[0] = 5  # read-only: cannot be edited after the checks
    for bad, why in [([10], "below the diagonal"),   # (1, 0): lower triangle
                     ([11], "diagonal"),              # (1, 1)
                     ([100], "n\\^2"),                # beyond the matrix
                     ([-1], "n\\^2"),
                     ([23, 1], "sorted"), ([1, 1], "sorted")]:
        with pytest.raises(ValueError, match=why):
            Keys(index, np.array(bad), False)
    assert Keys(index, np.array([10]), True).keys.tolist() == [10]  # (1, 0) is a directed pair
    with pytest.raises(ValueError, match="diagonal"):
        Keys(index, np.array([11]), True)


def test_a_lower_triangle_key_never_reaches_the_sampler(tmp_path):
    from dpgraph.graph import blockwise
    from dpgraph.graph.encoding import NodeIndex

    index = NodeIndex.from_integers(np.arange(100))
    with pytest.raises(ValueError):
        bad = blockwise.EdgeKeys(index, np.array([5 * 100 + 3]), False)  # (5, 3)
        blockwise.release_blockwise(bad, 1.0, tmp_path / "x.zarr")
    assert not (tmp_path / "x.zarr").exists()


def test_edge_keys_cannot_be_edited_after_their_checks(tmp_path):
    """index and directed are read-only; keys edited through the private slots are checked
    again where the writer consumes them, before the charge."""
    from dpgraph.graph import blockwise
    from dpgraph.graph.encoding import NodeIndex

    k = blockwise.EdgeKeys(NodeIndex.from_integers(np.arange(100)), np.array([5 * 100 + 3]),
                           True)  # (5, 3): a directed pair, below the diagonal
    with pytest.raises(AttributeError):
        k.directed = False
    with pytest.raises(AttributeError):
        k.index = NodeIndex.from_integers(np.arange(10))
    ledger = dpgraph.PrivacyLedger.open(tmp_path / "b.json", total_epsilon=1.0)
    object.__setattr__(k, "_directed", False)  # forced past the properties
    with pytest.raises(ValueError, match="below the diagonal"):
        blockwise.release_blockwise(k, 1.0, tmp_path / "x.zarr", directed=False, ledger=ledger)
    object.__setattr__(k, "_directed", True)
    object.__setattr__(k, "_index", NodeIndex.from_integers(np.arange(10)))  # 503 >= 10^2
    with pytest.raises(ValueError, match="n\\^2"):
        blockwise.release_blockwise(k, 1.0, tmp_path / "x.zarr", directed=True, ledger=ledger)
    assert not (tmp_path / "x.zarr").exists() and ledger.spent == 0.0


def test_edge_key_checks_hold_across_chunk_boundaries():
    from dpgraph.graph.blockwise.edges import check_keys

    n = 50
    keys = np.arange(1, 40, dtype=np.int64)  # row 0: (0, 1) .. (0, 39)
    check_keys(keys, n, False, chunk=4)
    for bad in (np.r_[keys[:8], keys[7:]], np.r_[keys[:8], keys[6], keys[8:]]):
        with pytest.raises(ValueError, match="sorted"):  # a repeat or a step back at a seam
            check_keys(bad, n, False, chunk=4)


# --------------------------------------------------------------------------- 4. ledger names
def test_a_ledger_reached_through_a_symlink_keeps_one_budget(tmp_path):
    from dpgraph import PrivacyLedger

    real = tmp_path / "budget.json"
    link = tmp_path / "link.json"
    PrivacyLedger.open(real, total_epsilon=1.0)
    link.symlink_to(real)
    A = PrivacyLedger.open(link)
    B = PrivacyLedger.open(real)
    A.charge(0.75)
    assert link.is_symlink()  # the charge replaced the file, not the link
    with pytest.raises(dpgraph.BudgetExceededError):
        B.charge(0.5)  # 0.75 + 0.5 > 1 whichever name it is charged through
    with pytest.raises(dpgraph.BudgetExceededError):
        PrivacyLedger.open(link).charge(0.5)
    assert PrivacyLedger.open(real).spent == 0.75


def test_a_ledger_with_a_hard_link_is_refused(tmp_path):
    from dpgraph import PrivacyLedger
    from dpgraph.exceptions import LedgerFileError

    real = tmp_path / "budget.json"
    L = PrivacyLedger.open(real, total_epsilon=1.0)
    os.link(real, tmp_path / "other.json")
    for name in (real, tmp_path / "other.json"):
        with pytest.raises(LedgerFileError, match="hard links"):
            PrivacyLedger.open(name)
    with pytest.raises(LedgerFileError, match="hard links"):
        L.charge(0.5)  # opened before the link was made: refused at the charge
    assert json.loads(real.read_text())["entries"] == []


@pytest.mark.parametrize("typo", ["Default", " default", "default ", "DEFAULT", "\uff44efault"])
def test_scope_names_are_normalized(typo):
    from dpgraph import PrivacyLedger

    L = PrivacyLedger(total_epsilon=1.0)
    L.charge(0.75)
    with pytest.raises(dpgraph.BudgetExceededError):
        L.with_scope(typo).charge(0.5)  # the same budget, not a fresh one


@pytest.mark.parametrize("bad", ["d\u0435fault", "default\x00", "bud/get", "\u200bdefault"])
def test_scope_names_that_cannot_be_typed_reliably_are_refused(bad):
    from dpgraph import PrivacyLedger

    with pytest.raises(ValueError, match="scope"):
        PrivacyLedger(total_epsilon=1.0, scope=bad)


def test_a_new_scope_is_announced_with_the_existing_ones():
    from dpgraph import PrivacyLedger

    L = PrivacyLedger(total_epsilon=1.0)
    L.charge(0.5)
    with pytest.warns(UserWarning, match="'default'"):
        L.with_scope("survey").charge(0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        L.with_scope("survey").charge(0.25)  # known now: no warning
        PrivacyLedger(total_epsilon=1.0, scope="first").charge(0.1)  # nothing to confuse


def test_a_fifo_is_refused_as_a_ledger_without_blocking(tmp_path):
    from dpgraph import PrivacyLedger
    from dpgraph.exceptions import LedgerFileError

    fifo = tmp_path / "budget.json"
    os.mkfifo(fifo)
    with deadline(10), pytest.raises(LedgerFileError, match="regular file"):
        PrivacyLedger.open(fifo, total_epsilon=1.0)


# --------------------------------------------------------------------------- 5. leaks
SECRET = "s3cr3tlabel"


def _chain(exc):
    seen = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        nxt = exc.__cause__ or exc.__context__
        exc = nxt
    return seen


def _holds_secret(exc) -> list[str]:
    """Every place of an exception (and its chain) that carries the secret label."""
    found = []
    for e in _chain(exc):
        places = {"str": str(e), "repr": repr(e), "args": repr(e.args),
                  "notes": repr(getattr(e, "__notes__", ""))}
        for attr in ("object", "doc", "__cause__", "__context__"):
            value = getattr(e, attr, None)
            if value is not None:
                places[attr] = value if isinstance(value, (bytes, str)) else repr(value)
        for where, value in places.items():
            if (SECRET in value) if isinstance(value, str) else (SECRET.encode() in value):
                found.append(f"{type(e).__name__}.{where}")
    return found


def _bad_edge_lists(tmp_path):
    """(name, path, nodes) of edge lists that every reader must refuse without quoting."""
    import gzip

    cases = []

    def add(name, data, nodes=("a", "b", SECRET)):
        p = tmp_path / name
        p.write_bytes(data)
        cases.append((name, p, list(nodes)))

    s = SECRET.encode()
    add("not-utf8", s + b" \xff\xfe" + s + b"\n")
    add("not-int", s + b" 1\n", nodes=range(5))
    add("one-column", b"a b\n" + s + b"\n")
    add("long-label", b"a " + s * 200 + b"\n")
    add("not-a-node", s + b" zz" + s + b"\n", nodes=("a", "b"))
    add("self-loop", s + b" " + s + b"\n")
    full = gzip.compress((s + b" a\n") * 5000)
    add("gzip-truncated", full[: len(full) // 2])
    broken = bytearray(full)
    broken[len(broken) // 2] ^= 0xFF
    add("gzip-damaged", bytes(broken))
    add("long-line", b"a " * 4000 + s + b"\n")
    return cases


def test_no_reader_error_carries_the_input(tmp_path):
    from dpgraph.graph import blockwise

    checked = 0
    for name, path, nodes in _bad_edge_lists(tmp_path):
        calls = [lambda p=path, v=nodes: dpgraph.release(str(p), 1.0, nodes=v)]
        if all(isinstance(v, int) for v in nodes):
            calls.append(lambda p=path, v=nodes: blockwise.edge_keys(str(p), nodes=v,
                                                                     chunk_bytes=1024))
            calls.append(lambda p=path: dpgraph.datasets.snap_edgelist(p))
        for call in calls:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with pytest.raises(Exception) as info:
                    call()
            assert isinstance(info.value, ValueError), (name, type(info.value))
            assert _holds_secret(info.value) == [], name
            checked += 1
    assert checked >= 9


def _frames_holding_the_secret(exc) -> list[str]:
    """dpgraph's frames in the traceback whose locals hold the secret (what a crash reporter
    that records locals would store)."""
    package = os.path.dirname(dpgraph.__file__)
    found, tb = [], exc.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code.co_filename.startswith(package):
            for name, value in frame.f_locals.items():
                for x in (value, *(value if isinstance(value, (list, tuple)) else ())):
                    data = x.tobytes() if isinstance(x, np.ndarray) else x
                    if (isinstance(data, (bytes, bytearray, memoryview))
                            and SECRET.encode() in bytes(data)) or (
                            isinstance(data, str) and SECRET in data):
                        found.append(f"{frame.f_code.co_name}:{name}")
        tb = tb.tb_next
    return found


def test_no_reader_refusal_keeps_the_input_in_its_frames(tmp_path):
    """The traceback of a refusal starts at the public entry point: the reader's frames, whose
    locals hold the bytes and tokens being parsed, are not kept alive with it."""
    import gzip

    from dpgraph.graph import blockwise

    s = SECRET.encode()
    full = gzip.compress((b"0 1\n" + s + b" 1\n") * 5000)
    broken = bytearray(full)
    broken[len(broken) // 2] ^= 0xFF
    files = {"not-utf8": b"0 1\n" + s + b" \xff\xfe" + s + b"\n", "not-int": b"0 1\n" + s + b" 1\n",
             "long-label": b"0 " + s * 200 + b"\n", "one-column": b"0 1\n" + s + b"\n",
             "gzip-damaged": bytes(broken), "long-line": b"0 1\n" + b"1 " * 4000 + s + b"\n"}
    checked = 0
    for name, data in files.items():
        path = tmp_path / name
        path.write_bytes(data)
        for call in (lambda p=path: dpgraph.release(str(p), 1.0, nodes=5),
                     lambda p=path: dpgraph.release(str(p), 1.0, nodes=5, keep=0.5),
                     lambda p=path: blockwise.edge_keys(str(p), nodes=5, chunk_bytes=1024),
                     lambda p=path: dpgraph.datasets.snap_edgelist(p),
                     lambda p=path: dpgraph.datasets.read_ratings(p)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with pytest.raises(ValueError) as info:
                    call()
            assert _frames_holding_the_secret(info.value) == [], name
            checked += 1
    assert checked == 30


def test_no_file_format_error_carries_the_file(tmp_path):
    """Release files, ledgers and key files: the same promise."""
    from dpgraph import PrivacyLedger
    from dpgraph.exceptions import LedgerFileError

    bad = tmp_path / "r.dpg"
    R = dpgraph.release(nx.path_graph(4), 1.0, seed=0)
    R.save(bad)
    data = bad.read_bytes()
    head = data.index(b'"nodes"')
    bad.write_bytes(data[:head] + b"\xff" + SECRET.encode() + data[head + 1 + len(SECRET):])
    with pytest.raises(ValueError) as info:
        dpgraph.load(bad)
    assert _holds_secret(info.value) == []
    ledger = tmp_path / "l.json"
    ledger.write_bytes(b'{"format": "' + SECRET.encode() + b'\xff"}')
    with pytest.raises(LedgerFileError) as info:
        PrivacyLedger.open(ledger)
    assert _holds_secret(info.value) == []
    ledger.write_bytes(b'{"format": "dpgraph-privacy-ledger", "x": ' + SECRET.encode() + b"}")
    with pytest.raises(LedgerFileError) as info:
        PrivacyLedger.open(ledger)
    assert _holds_secret(info.value) == []


# --------------------------------------------------------------------------- 6. exact epsilon
def test_non_float_epsilons_are_certified_for_at_most_their_exact_value():
    import decimal

    from dpgraph.core import rr_probabilities

    rounded_up = 0
    for k in range(1, 1000):
        exact = Fraction(k, 1000)
        rounded_up += Fraction(float(exact)) > exact
        for eps in (exact, decimal.Decimal(k) / 1000):
            rr = rr_probabilities(eps)
            assert Fraction(rr.epsilon) <= exact  # never certified for more than was asked
    assert rounded_up > 100  # the case exists: float() rounds these up
    eps = np.longdouble(1) / np.longdouble(10)
    if Fraction(*eps.as_integer_ratio()) < Fraction(0.1):  # a real long double
        assert dpgraph.release(nx.path_graph(3), eps, seed=0).epsilon < 0.1


def _blockwise(*args, **kwargs):
    from dpgraph.graph.blockwise import release_blockwise

    return release_blockwise(*args, **kwargs)


@pytest.mark.parametrize("call", [
    lambda p: dpgraph.release(nx.path_graph(3), 10**400),
    lambda p: dpgraph.release(nx.path_graph(3), 1.0, keep=10**400),
    lambda p: dpgraph.PrivacyLedger(total_epsilon=10**400),
    lambda p: dpgraph.plan(100, 10**400),
    lambda p: dpgraph.plan(100, target_std=10**400),
    lambda p: dpgraph.plan(10**400, 1.0),
    lambda p: dpgraph.plan(100, 1.0, keep=10**400),
    lambda p: dpgraph.plan(100, 1.0, edges=10**400),
    lambda p: dpgraph.planner.count_std(10**400, 1.0),
    lambda p: dpgraph.planner.triangle_std(10**400, 1.0, edges=10),
    lambda p: dpgraph.release(str(p), 1.0, nodes=10**200),
    lambda p: dpgraph.release(str(p), 1.0, nodes=10**5000, keep=0.5),
    lambda p: dpgraph.release(str(p), 1.0, nodes=2**63),
    lambda p: _blockwise(str(p), 1.0, p.parent / "s.zarr", nodes=10**200),
])
def test_huge_integers_are_value_errors(call, tmp_path):
    p = tmp_path / "f.txt"
    p.write_text("0 1\n")
    with deadline(20), pytest.raises(ValueError) as info:
        call(p)
    if "nodes" in str(info.value):  # one readable line, not a number of 200 digits
        assert len(str(info.value)) < 200


def test_huge_node_counts_on_the_command_line_are_one_line(tmp_path, capsys):
    edges = _edges(tmp_path)
    for spec in ("9" * 30, "0-" + "9" * 30, "5," + "0-" + "9" * 25):
        code, _, err = _cli(["release", edges, "-e", "1", "--nodes", spec, "-o",
                             tmp_path / "r.dpg"], capsys)
        assert code == 2 and "--nodes" in err and err.count("\n") == 1, spec
        assert "index-sized" not in err
    dpgraph.release(nx.path_graph(5), 1.0, seed=0).save(tmp_path / "r.dpg")
    code, _, err = _cli(["cut", tmp_path / "r.dpg", "--S", "0-" + "9" * 30], capsys)
    assert code == 2 and "--S" in err and err.count("\n") == 1


def test_blockwise_tile_count_is_closed_form():
    """The store size is checked before anything is read: its tile count takes no loop over
    tile rows (n = 2^62 answered at once) and equals the tiles the writer walks."""
    from dpgraph.graph.blockwise.tiles import TilePlan

    for n in (2, 63, 64, 65, 300, 1000, 4097):
        for tr, tw in ((64, 1), (128, 2), (64, 4), (192, 3)):
            for directed in (False, True):
                plan = TilePlan(n, directed, tr, tw)
                assert plan.count_tiles() == len(plan.tiles()), (n, tr, tw, directed)
    with deadline(5):
        assert TilePlan(2**62, False, 4096, 512).count_tiles() > 10**28


# --------------------------------------------------------------------------- 7. sizes first
def test_sparse_release_refuses_its_output_size_before_sampling(tmp_path, monkeypatch):
    from dpgraph.graph import _memory

    ledger = dpgraph.PrivacyLedger.open(tmp_path / "b.json", total_epsilon=1.0)
    monkeypatch.setattr(_memory, "available_memory", lambda: 100 << 20)
    with deadline(10), pytest.raises(MemoryError, match="sparse release of 20,000 nodes"):
        dpgraph.release(nx.empty_graph(20_000), 1.0, keep=1.0, ledger=ledger)
    assert ledger.spent == 0.0  # refused before the charge


def test_load_refuses_a_fifo_without_blocking(tmp_path):
    fifo = tmp_path / "r.dpg"
    os.mkfifo(fifo)
    with deadline(10), pytest.raises(ValueError, match="regular file"):
        dpgraph.load(fifo)
    with deadline(10), pytest.raises(ValueError, match="regular file"):
        dpgraph.release(str(fifo), 1.0, nodes=3)


def test_a_fifo_as_a_key_file_is_refused_without_blocking(tmp_path, capsys):
    fifo = tmp_path / "k.pub"
    os.mkfifo(fifo)
    R = dpgraph.release(nx.path_graph(5), 1.0, seed=0)
    R.save(tmp_path / "r.dpg")
    for call in (lambda: dpgraph.load(tmp_path / "r.dpg", verify_key=fifo),
                 lambda: R.save(tmp_path / "s.dpg", signing_key=str(fifo))):
        with deadline(10), pytest.raises(ValueError, match="regular file"):
            call()
    edges = _edges(tmp_path)
    for argv in (["cut", tmp_path / "r.dpg", "--S", "0", "--verify-key", fifo],
                 ["report", tmp_path / "r.dpg", "-o", tmp_path / "r.html", "--quiet",
                  "--verify-key", fifo],
                 ["release", edges, "-e", "1", "--nodes", "3", "-o", tmp_path / "t.dpg",
                  "--signing-key", fifo]):
        code, _, err = _cli(argv, capsys)
        assert code == 2 and "regular file" in err and err.count("\n") == 1, argv
    assert not (tmp_path / "s.dpg").exists() and not (tmp_path / "t.dpg").exists()


# --------------------------------------------------------------------------- 8. command line
def _cli(argv, capsys):
    from dpgraph import cli

    with deadline(60):
        code = cli.main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def _edges(tmp_path):
    p = tmp_path / "g.txt"
    p.write_text("0 1\n1 2\n")
    return p


def test_cli_corrupt_gzip_is_one_line(tmp_path, capsys):
    import gzip

    p = tmp_path / "g.txt.gz"
    lines = "".join(f"{k % 5} {(k * 7 + 1) % 5} {k * 7919}\n" for k in range(20000))
    full = gzip.compress(lines.encode())
    damaged = bytearray(full)
    damaged[20] ^= 0xFF  # an invalid deflate block: zlib.error, not an OSError
    for data in (full[:2000], bytes(damaged)):  # cut mid-stream; damaged
        p.write_bytes(data)
        code, _, err = _cli(["release", p, "-e", "1", "-o", tmp_path / "r.dpg", "--nodes", "5"],
                            capsys)
        assert code == 2 and err.startswith("dpgraph: error:") and err.count("\n") == 1
        assert "Traceback" not in err


def test_cli_checks_the_output_before_charging(tmp_path, capsys):
    edges, ledger = _edges(tmp_path), tmp_path / "b.json"
    base = ["release", edges, "-e", "1", "--nodes", "3", "--ledger", ledger, "--budget", "2"]
    for out in (tmp_path / "no" / "such" / "r.dpg", tmp_path):
        code, _, err = _cli([*base, "-o", out], capsys)
        assert code == 2 and ".dpgraph-" not in err and err.count("\n") == 1
    assert not ledger.exists() or dpgraph.PrivacyLedger.open(ledger).spent == 0.0
    assert _cli([*base, "-o", tmp_path / "r.dpg"], capsys)[0] == 0
    code, _, err = _cli([*base, "-o", tmp_path / "r.dpg"], capsys)  # exists: --force needed
    assert code == 2 and "--force" in err
    assert dpgraph.PrivacyLedger.open(ledger).spent == 1.0
    assert _cli([*base, "-o", tmp_path / "r.dpg", "--force"], capsys)[0] == 0


def test_cli_checks_what_save_refuses_before_charging(tmp_path, capsys):
    edges, ledger = _edges(tmp_path), tmp_path / "b.json"
    base = ["release", edges, "-e", "1", "-o", tmp_path / "r.dpg", "--ledger", ledger,
            "--budget", "2"]
    ids = tmp_path / "ids.txt"  # 1 KiB labels that JSON escapes to 2 KiB each
    ids.write_text("".join("\u4e00" * 340 + f"{k}\n" for k in range(200)), encoding="utf-8")
    for extra in (["--nodes", "3", "--name", "x" * 300], ["--nodes", "3", "--name", "a\nb"],
                  ["--nodes", f"@{ids}"]):
        code, _, err = _cli([*base, *extra], capsys)
        assert code == 2 and err.count("\n") == 1, extra
        assert ("--name" in err) if "--name" in extra else ("labels" in err)
    assert not ledger.exists() or dpgraph.PrivacyLedger.open(ledger).spent == 0.0
    assert not (tmp_path / "r.dpg").exists()
    assert _cli([*base, "--nodes", "3", "--name", "x" * 200], capsys)[0] == 0
    assert dpgraph.load(tmp_path / "r.dpg").name == "x" * 200


def test_cli_report_never_overwrites_its_input(tmp_path, capsys):
    r = tmp_path / "r.dpg"
    dpgraph.release(nx.path_graph(30), 1.0, seed=0).save(r)
    before = r.read_bytes()
    for extra in ([], ["--force"]):
        code, _, err = _cli(["report", r, "-o", r, "--quiet", *extra], capsys)
        assert code == 2 and "input" in err
    assert r.read_bytes() == before
    html = tmp_path / "r.html"
    html.write_text("keep me")
    code, _, err = _cli(["report", r, "-o", html, "--quiet"], capsys)
    assert code == 2 and "--force" in err and html.read_text() == "keep me"


def test_cli_report_never_overwrites_its_input_through_a_hard_link(tmp_path, capsys):
    r = tmp_path / "r.dpg"
    dpgraph.release(nx.path_graph(30), 1.0, seed=0).save(r)
    before = r.read_bytes()
    os.link(r, tmp_path / "hl.dpg")
    (tmp_path / "sl.dpg").symlink_to(r)
    for out in ("hl.dpg", "sl.dpg"):
        code, _, err = _cli(["report", r, "-o", tmp_path / out, "--quiet", "--force"], capsys)
        assert code == 2 and "input" in err, out
    assert r.read_bytes() == before


def test_cli_report_replaces_its_output_and_never_truncates_it(tmp_path, capsys):
    """--force over an existing name: the new report is renamed into place, so another name
    of the old file keeps its content."""
    r = tmp_path / "r.dpg"
    dpgraph.release(nx.path_graph(30), 1.0, seed=0).save(r)
    html, other = tmp_path / "r.html", tmp_path / "other.txt"
    other.write_text("keep me")
    os.link(other, html)
    assert _cli(["report", r, "-o", html, "--quiet", "--force"], capsys)[0] == 0
    assert other.read_text() == "keep me" and "<html" in html.read_text().lower()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.txt", "r.dpg", "r.html"]


def test_cli_keygen_refuses_a_dangling_symlink(tmp_path, capsys):
    target = tmp_path / "elsewhere.txt"
    (tmp_path / "k.pub").symlink_to(target)
    code, _, err = _cli(["keygen", tmp_path / "k"], capsys)
    assert code == 2 and "exists" in err
    assert not target.exists() and not (tmp_path / "k.key").exists()


def test_a_verify_key_is_never_a_signing_key(tmp_path, capsys):
    sk, vk = dpgraph.generate_signing_key()
    R = dpgraph.release(nx.path_graph(5), 1.0, seed=0)
    with pytest.raises(ValueError, match="verify"):
        R.save(tmp_path / "x.dpg", signing_key=vk)
    with pytest.raises(ValueError, match="signing"):
        dpgraph.load(tmp_path / "x.dpg" if (tmp_path / "x.dpg").exists() else _signed(R, sk,
                                                                                     tmp_path),
                     verify_key=sk)
    assert _cli(["keygen", tmp_path / "k"], capsys)[0] == 0
    edges = _edges(tmp_path)
    code, _, err = _cli(["release", edges, "-e", "1", "--nodes", "3", "-o", tmp_path / "r.dpg",
                         "--signing-key", tmp_path / "k.pub"], capsys)
    assert code == 2 and "verify (public) key" in err and ".key file" in err
    assert not (tmp_path / "r.dpg").exists()
    assert _cli(["release", edges, "-e", "1", "--nodes", "3", "-o", tmp_path / "r.dpg",
                 "--signing-key", tmp_path / "k.key"], capsys)[0] == 0
    code, _, err = _cli(["cut", tmp_path / "r.dpg", "--S", "0", "--verify-key",
                         tmp_path / "k.key"], capsys)
    assert code == 2 and "signing (private) key" in err and ".pub file" in err


def _signed(R, sk, tmp_path):
    path = tmp_path / "s.dpg"
    R.save(path, signing_key=sk)
    return path


def test_a_killed_save_leaves_no_temporary_file_behind(tmp_path):
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    leftover = tmp_path / f".r.dpg.dpgraph-tmp-{dead}-abcd1234"
    leftover.write_bytes(b"\x89DPGRAPH half a release")  # the release format's magic
    running = tmp_path / f".r.dpg.dpgraph-tmp-{os.getpid()}-efgh5678"  # being written now
    running.write_bytes(b"\x89DPGRAPH half a release")
    R = dpgraph.release(nx.path_graph(5), 1.0, seed=0)
    R.save(tmp_path / "r.dpg")
    assert not leftover.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [running.name, "r.dpg"]


# --------------------------------------------------------------------------- 9. documented
def test_crafted_sparse_headers_raise_value_errors(tmp_path):
    S = dpgraph.release(nx.gnp_random_graph(30, 0.2, seed=1), 1.0, seed=0, keep=0.5)
    path = tmp_path / "s.dpg"
    S.save(path)
    data = path.read_bytes()
    hlen = int.from_bytes(data[12:20], "little")
    header = json.loads(data[20 : 20 + hlen])
    import hashlib

    for edit in ({"keep": [0.5]}, {"channel": {"d": [1], "r": [0.1, 0.2]}},
                 {"channel": {"d": None, "r": [0.1, 0.2]}}, {"channel": {"d": 0.5, "r": 5}}):
        h = {**header, **edit}
        head = json.dumps(h, separators=(",", ":")).encode()
        body = (data[:12] + len(head).to_bytes(8, "little") + head
                + data[20 + hlen : len(data) - 32])
        path.write_bytes(body + hashlib.sha256(body).digest())
        with pytest.raises(ValueError):
            dpgraph.load(path)


def test_a_directory_as_an_edge_list_is_a_clear_value_error(tmp_path):
    with pytest.raises(ValueError, match="directory"):
        dpgraph.release(str(tmp_path), 1.0, nodes=3)


def test_plan_refuses_what_it_cannot_mean():
    with pytest.raises(TypeError, match="directed"):
        dpgraph.plan(100, 1.0, directed="no")
    with pytest.raises(ValueError, match="statistic"):
        dpgraph.plan(100, 1.0, statistic="triangels")


def test_a_typed_release_refused_for_an_undeclared_value_charges_nothing():
    """The limit SECURITY.md states: the refusal is free, so it must stay curator-side."""
    G = nx.Graph([(0, 1, {"w": 1}), (1, 2, {"w": 3})])
    ledger = dpgraph.PrivacyLedger(total_epsilon=1.0)
    with pytest.raises(ValueError, match="not among the declared"):
        dpgraph.release(G, 0.5, edge_attr="w", values=[1, 2], ledger=ledger)
    assert ledger.spent == 0.0
    dpgraph.release(G, 0.5, edge_attr="w", values=[1, 2, 3], ledger=ledger)
    assert ledger.spent == 0.5


# --------------------------------------------------------------------------- 10. timing
def test_constant_time_mode_pads_to_the_calibration(monkeypatch):
    """max_edges=M: a calibration on M public uniform edges first, then the real release is
    padded to its time (the durations themselves are measured in benchmarks/bench_timing.py)."""
    import time as time_module

    from dpgraph.graph import timing

    slept = []
    monkeypatch.setattr(timing.time, "sleep", lambda s: slept.append(s))
    calibrations = []
    real_input = timing.calibration_input

    def spy(G, nodes, directed, M, folder):
        H, v = real_input(G, nodes, directed, M, folder)
        calibrations.append((type(H).__name__, M))
        return H, v

    monkeypatch.setattr(timing, "calibration_input", spy)
    monkeypatch.setattr(timing, "MARGIN", 2.0)
    G = nx.empty_graph(300)
    t0 = time_module.perf_counter()
    R = dpgraph.release(G, 1.0, seed=0, max_edges=4000)
    assert R.number_of_nodes() == 300 and calibrations == [("Graph", 4000)]
    assert len(slept) == 1 and 0 < slept[0] < time_module.perf_counter() - t0 + 60
    # same release as without the mode: the calibration draws from its own stream
    assert np.array_equal(R.adjacency.words, dpgraph.release(G, 1.0, seed=0).adjacency.words)


def test_constant_time_mode_refuses_more_edges_than_the_bound(tmp_path):
    ledger = dpgraph.PrivacyLedger.open(tmp_path / "b.json", total_epsilon=1.0)
    G = nx.gnm_random_graph(100, 300, seed=1)
    with pytest.raises(ValueError, match="more edges than max_edges"):
        dpgraph.release(G, 1.0, max_edges=299, ledger=ledger)
    assert ledger.spent == 0.0
    for bad, exc in ((-1, ValueError), (1.5, TypeError), (True, TypeError)):
        with pytest.raises(exc, match="max_edges"):
            dpgraph.release(G, 1.0, max_edges=bad)


def test_constant_time_mode_warns_when_it_cannot_hide(monkeypatch, tmp_path):
    from dpgraph.graph import timing

    monkeypatch.setattr(timing, "MARGIN", -1.0)  # a padded time of zero: always exceeded
    path = tmp_path / "g.txt"
    path.write_text("0 1\n1 2\n")
    with pytest.warns(timing.TimingNotHiddenWarning):
        dpgraph.release(str(path), 1.0, nodes=50, max_edges=100, keep=0.5)


def test_no_node_file_or_key_file_error_carries_the_file(tmp_path, capsys):
    from dpgraph import cli
    from dpgraph.cli_types import parse_node_list

    nodes_file = tmp_path / "ids.txt"
    nodes_file.write_bytes(SECRET.encode() + b"\n\xff\xfe" + SECRET.encode() + b"\n")
    with pytest.raises(ValueError) as info:
        parse_node_list(f"@{nodes_file}", "--nodes", count=True)
    assert _holds_secret(info.value) == []
    edges = tmp_path / "g.txt"
    edges.write_bytes(SECRET.encode() + b" \xff" + SECRET.encode() + b"\n")
    key = tmp_path / "k.key"
    key.write_bytes(SECRET.encode() * 3 + b"\xff")
    for argv in (["release", edges, "-e", "1", "-o", tmp_path / "r.dpg", "--nodes-from-edges"],
                 ["release", edges, "-e", "1", "-o", tmp_path / "r.dpg", "--nodes",
                  f"@{nodes_file}"],
                 ["release", edges, "-e", "1", "-o", tmp_path / "r.dpg", "--nodes", "3",
                  "--signing-key", key]):
        code = cli.main([str(a) for a in argv])
        err = capsys.readouterr().err
        assert code == 2 and SECRET not in err and err.count("\n") == 1
    ratings = tmp_path / "u.data"
    ratings.write_bytes(b"1 2 3 4\n" + SECRET.encode() + b" 2 3 4\n")
    with pytest.raises(ValueError) as info:
        dpgraph.datasets.read_ratings(ratings)
    assert _holds_secret(info.value) == []
