"""The release transaction: every release path validates, then charges, then samples."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

import dpgraph
from dpgraph import BudgetExceededError, PrivacyLedger, SeededReleaseWarning
from dpgraph.core import MechanismE, Universe
from dpgraph.core.transaction import ReleaseTransaction

PACKAGE = Path(dpgraph.__file__).parent


def _calls(name: str) -> set[str]:
    """Modules of dpgraph that call ``<anything>.name(...)`` or ``name(...)``."""
    found = set()
    for f in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.Call):
                fn = node.func
                called = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", None)
                if called == name:
                    found.add(str(f.relative_to(PACKAGE)))
    return found


def test_one_place_charges_a_ledger_and_warns_about_seeds():
    # PrivacyLedger.charge (for users) validates epsilon and calls _charge, which the
    # transaction calls with the epsilon it validated when it opened
    assert (_calls("charge") | _calls("_charge")) - {"ledger.py"} == {"core/transaction.py"}
    assert _calls("warn_if_seeded") == {"core/transaction.py"}


@pytest.fixture
def commits(monkeypatch):
    seen = []
    real = ReleaseTransaction.commit

    def spy(self, **kw):
        seen.append(self.epsilon)
        return real(self, **kw)

    monkeypatch.setattr(ReleaseTransaction, "commit", spy)
    return seen


def test_every_release_path_commits_once(commits, tmp_path):
    G = nx.path_graph(6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeededReleaseWarning)
        dpgraph.release(G, 1.0, seed=0)
        dpgraph.release(G, 1.5, seed=0, keep=0.5)
        MechanismE(Universe([1, 2, 3]), 2.0).release(np.array([1, 2, 3]), seed=0)
    pytest.importorskip("zarr")
    from dpgraph.graph.blockwise import release_blockwise

    release_blockwise(G, 3.0, tmp_path / "b.zarr", tile=(64, 64))
    assert commits == [1.0, 1.5, 2.0, 3.0]


def test_epsilon_is_validated_once_per_release_with_a_ledger(monkeypatch, tmp_path):
    import sys

    from dpgraph import validation

    ledger = PrivacyLedger(100.0)
    mechanism = MechanismE(Universe([1, 2, 3]), 2.0)
    real = validation.check_epsilon
    calls = []

    def counting(*args, **kw):
        calls.append(args[0])
        return real(*args, **kw)

    for mod in list(sys.modules.values()):
        if (getattr(mod, "__name__", "") or "").startswith("dpgraph") and \
                getattr(mod, "check_epsilon", None) is real:
            monkeypatch.setattr(mod, "check_epsilon", counting)
    G = nx.path_graph(6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeededReleaseWarning)
        dpgraph.release(G, 1.25, seed=0, ledger=ledger)
        assert calls == [1.25]
        dpgraph.release(G, 1.5, seed=0, keep=0.5, ledger=ledger)
        mechanism.release(np.array([1, 2, 3]), seed=0, ledger=ledger)
    assert calls == [1.25, 1.5, 2.0]
    ledger.charge(0.5)  # a user's own charge is validated by the ledger
    assert calls == [1.25, 1.5, 2.0, 0.5] and ledger.spent == 5.25
    pytest.importorskip("zarr")
    from dpgraph.graph.blockwise import release_blockwise

    release_blockwise(G, 3.0, tmp_path / "b.zarr", tile=(64, 64), ledger=ledger)
    assert calls == [1.25, 1.5, 2.0, 0.5, 3.0]


def test_a_failed_check_charges_nothing(tmp_path):
    ledger = PrivacyLedger(2.0)
    bad_inputs = [
        lambda: dpgraph.release(np.array([[0, 1], [1, 9]]), 1.0, nodes=range(5), ledger=ledger),
        lambda: dpgraph.release(nx.path_graph(5), 1.0, keep=2.0, ledger=ledger),
        lambda: dpgraph.release(nx.path_graph(5), 1.0, nodes=["x"], ledger=ledger),
        lambda: MechanismE(Universe([1, 2]), 1.0).release(np.array([1, 7]), ledger=ledger),
    ]
    for call in bad_inputs:
        with pytest.raises((TypeError, ValueError)):
            call()
    assert ledger.spent == 0.0


def test_a_refused_charge_draws_nothing(monkeypatch):
    ledger = PrivacyLedger(1.0)
    drawn = []
    from dpgraph.core import randomness

    real = randomness.SecureRandom.uint64

    def counting(self, n):
        drawn.append(n)
        return real(self, n)

    monkeypatch.setattr(randomness.SecureRandom, "uint64", counting)
    with pytest.raises(BudgetExceededError):
        dpgraph.release(nx.path_graph(5), 1.5, ledger=ledger)
    assert drawn == [] and ledger.spent == 0.0


def test_commit_is_once_and_warns_once_for_a_seed():
    tx = ReleaseTransaction(1.0, seed=3)
    assert not tx.secure and "seeded" in repr(tx)
    with pytest.warns(SeededReleaseWarning) as record:
        tx.commit()
    assert len(record) == 1
    with pytest.raises(RuntimeError, match="commits once"):
        tx.commit()


def test_bad_arguments_are_refused_when_the_transaction_opens():
    with pytest.raises(ValueError, match="epsilon"):
        ReleaseTransaction(0.0)
    with pytest.raises(TypeError, match="ledger"):
        ReleaseTransaction(1.0, ledger="budget.json")
    with pytest.raises(TypeError):
        ReleaseTransaction(1.0, seed="42")
