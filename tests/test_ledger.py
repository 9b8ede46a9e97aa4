"""The privacy budget ledger: composition, refusal before sampling, files."""

from __future__ import annotations

import json
import os
import stat
import warnings

import networkx as nx
import pytest

import dpgraph
from dpgraph.core.randomness import RandomSource, SecureRandom
from dpgraph.exceptions import BudgetExceededError, LedgerFileError, SeededReleaseWarning
from dpgraph.ledger import PrivacyLedger


class CountingSource(RandomSource):
    """A secure stream that counts the words drawn from it."""

    secure = True

    def __init__(self) -> None:
        self.inner = SecureRandom(key=bytes(16))
        self.drawn = 0

    def uint64(self, n):
        self.drawn += int(n)
        return self.inner.uint64(n)


def graph():
    G = nx.gnp_random_graph(12, 0.3, seed=1)
    return G


# ---- composition ---------------------------------------------------------------
def test_releases_compose_and_the_excess_is_refused():
    L = PrivacyLedger(total_epsilon=2.0)
    L.charge(1.0)
    L.charge(0.5)
    assert L.spent == 1.5 and L.remaining == 0.5
    with pytest.raises(BudgetExceededError, match="total_epsilon=2") as info:
        L.charge(0.6)
    assert "epsilon=0.6" in str(info.value) and "remaining 0.5" in str(info.value)
    assert L.spent == 1.5  # a refused charge records nothing
    L.charge(0.5)  # exactly the rest is fine
    assert L.remaining == 0.0
    assert len(L.entries) == 3


def test_decimal_budget_splits_compose_exactly():
    L = PrivacyLedger(total_epsilon=0.3)
    for _ in range(3):
        L.charge(0.1)  # 0.1 + 0.1 + 0.1 != 0.3 in binary floating point
    with pytest.raises(BudgetExceededError):
        L.charge(1e-9)


@pytest.mark.parametrize("edit", ["add isolated node", "remove node", "flip pair", "relabel"])
def test_no_edit_of_the_graph_resets_the_budget(edit):
    """One ledger is one dataset: releasing G, then an edited G, is charged to one budget."""
    L = PrivacyLedger(total_epsilon=1.0)
    G = graph()
    dpgraph.release(G, 1.0, ledger=L)
    H = G.copy()
    if edit == "add isolated node":
        H.add_node(max(G) + 1)
    elif edit == "remove node":
        H.remove_node(0)
    elif edit == "flip pair":
        H.add_edge(0, 11) if not G.has_edge(0, 11) else H.remove_edge(0, 11)
    else:
        H = nx.relabel_nodes(G, {v: f"v{v}" for v in G})
    with pytest.raises(BudgetExceededError):
        dpgraph.release(H, 0.5, ledger=L)
    assert L.spent == 1.0


def test_named_scopes_have_their_own_budgets_in_one_file(tmp_path):
    path = tmp_path / "budget.json"
    L = PrivacyLedger.open(path, total_epsilon=1.0)
    M = L.with_scope("survey B")
    L.charge(1.0)
    with pytest.warns(dpgraph.exceptions.NewScopeWarning, match="'default'"):
        M.charge(0.75)  # a new scope beside 'default': said, in case it is a typo
    with pytest.raises(BudgetExceededError, match="survey b"):
        M.charge(0.5)
    back = PrivacyLedger.load(path, scope="survey B")
    assert back.spent == 0.75 and PrivacyLedger.load(path).spent == 1.0
    assert {e.scope for e in back.entries} == {"default", "survey b"}  # names are case-folded


@pytest.mark.parametrize(
    "kwargs, exc, name",
    [
        ({"total_epsilon": 0}, ValueError, "total_epsilon"),
        ({"total_epsilon": float("nan")}, ValueError, "total_epsilon"),
        ({"total_epsilon": "1"}, TypeError, "total_epsilon"),
        ({"total_epsilon": True}, TypeError, "total_epsilon"),
        ({"total_epsilon": 1.0, "scope": ""}, TypeError, "scope"),
        ({"total_epsilon": 1.0, "scope": 3}, TypeError, "scope"),
    ],
)
def test_bad_ledger_arguments(kwargs, exc, name):
    with pytest.raises(exc, match=name):
        PrivacyLedger(**kwargs)


def test_bad_charge_arguments():
    L = PrivacyLedger(total_epsilon=1.0)
    with pytest.raises(ValueError, match="epsilon"):
        L.charge(-1)
    with pytest.raises(TypeError, match="label"):
        L.charge(0.5, label=3)
    with pytest.raises(TypeError):
        L.charge(0.5, graph())  # no graph argument: the scope is declared, not inferred
    assert not L.entries


# ---- files ---------------------------------------------------------------------
def test_save_load_round_trip_and_autosave(tmp_path):
    path = tmp_path / "budget.json"
    L = PrivacyLedger(total_epsilon=3.0)
    L.charge(1.0, label="first")
    L.save(path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    M = PrivacyLedger.load(path)
    assert M.entries == L.entries and M.total_epsilon == 3.0 and M.id == L.id
    M.charge(1.5)  # written before returning
    N = PrivacyLedger.load(path)
    assert N.spent == 2.5
    with pytest.raises(BudgetExceededError):
        N.charge(1.0)


def test_two_objects_on_one_file_share_the_budget(tmp_path):
    """Each charge re-reads the file under the lock: a stale object cannot overspend."""
    path = tmp_path / "budget.json"
    PrivacyLedger(total_epsilon=1.0).save(path)
    a, b = PrivacyLedger.load(path), PrivacyLedger.load(path)
    a.charge(1.0)
    with pytest.raises(BudgetExceededError):
        b.charge(1.0)
    assert len(PrivacyLedger.load(path).entries) == 1


def _charge_whole_budget(path, barrier, results):
    L = PrivacyLedger.load(path)
    barrier.wait()  # both processes have loaded the same state
    try:
        L.charge(1.0)
        results.put("ok")
    except BudgetExceededError:
        results.put("refused")


def test_two_processes_cannot_both_spend_the_budget(tmp_path):
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    path = tmp_path / "budget.json"
    PrivacyLedger(total_epsilon=1.0).save(path)
    barrier, results = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_charge_whole_budget, args=(path, barrier, results))
             for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert all(p.exitcode == 0 for p in procs)
    outcomes = sorted(results.get(timeout=5) for _ in procs)
    assert outcomes == ["ok", "refused"]
    assert len(PrivacyLedger.load(path).entries) == 1


def test_save_never_overwrites_another_ledger(tmp_path):
    path = tmp_path / "budget.json"
    L = PrivacyLedger.open(path, total_epsilon=1.0)
    L.charge(1.0)
    with pytest.raises(LedgerFileError, match="another privacy ledger"):
        PrivacyLedger(total_epsilon=1.0).save(path)  # would reset the budget
    with pytest.raises(LedgerFileError, match="total_epsilon"):
        PrivacyLedger.open(path, total_epsilon=5.0)
    assert PrivacyLedger.open(path).remaining == 0.0


def test_a_deleted_or_replaced_file_refuses_charges(tmp_path):
    path = tmp_path / "budget.json"
    L = PrivacyLedger.open(path, total_epsilon=1.0)
    L.charge(0.5)
    os.unlink(path)
    with pytest.raises(LedgerFileError, match="no such ledger"):
        L.charge(0.5)
    PrivacyLedger(total_epsilon=1.0).save(path)
    with pytest.raises(LedgerFileError, match="another ledger"):
        L.charge(0.5)


def test_temporary_files_are_private_and_leftovers_removed(tmp_path, monkeypatch):
    import subprocess
    import sys

    path = tmp_path / "budget.json"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    leftover = tmp_path / f".budget.json.dpgraph-tmp-{dead}-abcd1234"  # its process is gone
    leftover.write_text('{\n "format": "dpgraph-privacy-ledger", "ver')  # a write cut short
    L = PrivacyLedger.open(path, total_epsilon=1.0)
    assert not leftover.exists(), "a killed save's temporary file was kept"
    modes = []
    real_replace = os.replace

    def spy(src, dst):
        modes.append(stat.S_IMODE(os.stat(src).st_mode))
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    L.charge(0.25)
    assert modes == [0o600]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["budget.json", "budget.json.lock"]


def test_file_holds_nothing_computed_from_the_graph(tmp_path):
    """Releases of graphs that differ in edges write identical ledgers (times aside)."""
    G = graph()
    H = nx.empty_graph(G.nodes())
    files = []
    for g in (G, H):
        L = PrivacyLedger(total_epsilon=1.0)
        L._book.id = "0" * 32
        dpgraph.release(g, 0.5, ledger=L)
        doc = L.to_dict()
        for e in doc["entries"]:
            e["time"] = None
        files.append(json.dumps(doc))
    assert files[0] == files[1]


def test_version_1_files_are_read_and_over_count(tmp_path):
    path = tmp_path / "old.json"
    path.write_text(json.dumps({
        "format": "dpgraph-privacy-ledger", "version": 1, "total_epsilon": 2.0, "scope": "graph",
        "key": "11" * 32, "entries": [
            {"epsilon": 1.0, "dataset": "a" * 64, "label": None, "time": None},
            {"epsilon": 0.5, "dataset": "b" * 64, "label": "x", "time": None}]}))
    L = PrivacyLedger.load(path)
    assert L.spent == 1.5  # two vertex sets, now one budget: the safe direction
    L.charge(0.5)
    assert json.loads(path.read_text())["version"] == 2
    with pytest.raises(BudgetExceededError):
        PrivacyLedger.load(path).charge(0.1)


@pytest.mark.parametrize(
    "content, match",
    [
        (None, "no such ledger"),
        (b"", "not valid JSON"),
        (b"\x80\x81garbage", "not valid JSON"),
        (b'{"format": "something-else"}', "format"),
        (b"[1, 2]", "format"),
        (b'{"format": "dpgraph-privacy-ledger", "version": 99}', "version"),
        (b"NaN", "not valid"),
        (b"[" * 100000 + b"]" * 100000, "nested"),
        (b'{"format": "dpgraph-privacy-ledger", "version": 2, "total_epsilon": 1'
         + b"0" * 400 + b"}", "digits"),
    ],
)
def test_load_refuses_bad_files(tmp_path, content, match):
    path = tmp_path / "ledger.json"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(LedgerFileError, match=match) as info:
        PrivacyLedger.load(path)
    assert "path" in str(info.value)


def test_load_refuses_tampered_fields(tmp_path):
    L = PrivacyLedger(total_epsilon=1.0)
    L.charge(0.5)
    good = L.to_dict()
    variants = []
    for field, value in [("total_epsilon", -1), ("total_epsilon", "1"), ("id", "zz"),
                         ("entries", {}), ("extra", 1)]:
        d = json.loads(json.dumps(good))
        d[field] = value
        variants.append(d)
    d = json.loads(json.dumps(good))
    d["entries"][0]["epsilon"] = 0
    variants.append(d)
    d = json.loads(json.dumps(good))
    d["entries"][0]["scope"] = 7
    variants.append(d)
    for k, d in enumerate(variants):
        path = tmp_path / f"v{k}.json"
        path.write_text(json.dumps(d))
        with pytest.raises(LedgerFileError, match="path"):
            PrivacyLedger.load(path)
    with pytest.raises(LedgerFileError, match="directory"):
        PrivacyLedger.load(tmp_path)
    with pytest.raises(TypeError, match="path"):
        PrivacyLedger.load(3)


def test_failed_write_refuses_the_charge(tmp_path, monkeypatch):
    path = tmp_path / "l.json"
    L = PrivacyLedger.open(path, total_epsilon=2.0)

    def broken(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError):
        L.charge(0.5)
    monkeypatch.undo()
    assert not L.entries and PrivacyLedger.load(path).spent == 0.0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["l.json", "l.json.lock"]


# ---- integration with dpgraph.release (needs the api.py snippet) ---------------------
def test_release_charges_the_ledger_and_refuses_before_sampling():
    L = PrivacyLedger(total_epsilon=1.5)
    G = graph()
    src = CountingSource()
    dpgraph.release(G, 1.0, seed=src, ledger=L)
    assert src.drawn > 0 and L.spent == 1.0
    src.drawn = 0
    with pytest.raises(BudgetExceededError):
        dpgraph.release(G, 1.0, seed=src, ledger=L)
    assert src.drawn == 0, "randomness was drawn for a refused release"
    assert L.spent == 1.0
    with pytest.raises(TypeError, match="ledger"):
        dpgraph.release(G, 0.1, ledger="budget.json")


def test_invalid_release_is_not_charged():
    L = PrivacyLedger(total_epsilon=1.0)
    G = graph()
    G.add_edge(0, 0)  # self-loop: refused by validation
    with pytest.raises(ValueError, match="self-loop"):
        dpgraph.release(G, 0.5, ledger=L)
    assert not L.entries


def test_seeded_release_warns_and_secure_release_does_not():
    G = graph()
    with pytest.warns(SeededReleaseWarning, match="seed"):
        dpgraph.release(G, 1.0, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SeededReleaseWarning)
        dpgraph.release(G, 1.0)
        dpgraph.release(G, 1.0, seed=SecureRandom(key=bytes(16)))


def test_mechanism_release_takes_a_ledger():
    from dpgraph.core import MechanismE, Universe

    L = PrivacyLedger(total_epsilon=1.0)
    M = MechanismE(Universe([0, 1, 2]), epsilon=0.75)
    src = CountingSource()
    M.release([0, 1, 2, 1], seed=src, ledger=L)
    assert L.spent == 0.75 and src.drawn > 0
    src.drawn = 0
    with pytest.raises(BudgetExceededError):
        M.release([0, 1], seed=src, ledger=L)
    assert src.drawn == 0
    with pytest.raises(ValueError):
        M.release([7], ledger=L)  # invalid rows: refused before charging
    assert L.spent == 0.75
    with pytest.raises(TypeError, match="ledger"):
        M.release([0], ledger=2.0)


def test_cli_release_charges_a_ledger_file(tmp_path, capsys):
    from dpgraph.cli import main

    edges = tmp_path / "g.txt"
    edges.write_text("0 1\n1 2\n2 3\n")
    ledger = tmp_path / "budget.json"
    args = ["release", str(edges), "--nodes", "5", "-e", "1.0", "--ledger", str(ledger)]
    assert main(args + ["-o", str(tmp_path / "a.dpg"), "--budget", "1.5"]) == 0
    assert main(args + ["-o", str(tmp_path / "b.dpg")]) == 2
    err = capsys.readouterr().err
    assert "error:" in err and "total_epsilon" in err and "Traceback" not in err
    assert not (tmp_path / "b.dpg").exists()
    assert PrivacyLedger.load(ledger).spent == 1.0
    assert main(["release", str(edges), "--nodes", "5", "-e", "1.0", "-o", str(tmp_path / "c.dpg"),
                 "--ledger", str(tmp_path / "missing.json")]) == 2
    assert "--budget TOTAL" in capsys.readouterr().err
