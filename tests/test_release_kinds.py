"""The table of release kinds, the analytics' declared needs, and the methods type checkers see."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import networkx as nx
import pytest

import dpgraph
import dpgraph.local
from dpgraph.graph import _memory
from dpgraph.graph.blockwise import release_blockwise
from dpgraph.graph.kinds import ANALYTIC_NEEDS, KINDS, capabilities, kind_of

ROOT = pathlib.Path(__file__).parents[1]


def _signed(directed: bool = False) -> nx.Graph:
    G = nx.gnm_random_graph(40, 120, seed=1, directed=directed)
    for k, (u, v) in enumerate(G.edges()):
        G.edges[u, v]["s"] = "+-"[k % 2]
    return G


def _releases(tmp_path):
    G = nx.gnm_random_graph(40, 120, seed=1)
    return {
        "dense": dpgraph.release(G, 1.0, seed=0),
        "sparse": dpgraph.release(G, 1.0, seed=0, keep=0.5),
        "typed": dpgraph.release(_signed(), 1.0, seed=0, edge_attr="s", values=["+", "-"]),
        "typed sparse": dpgraph.release(_signed(), 1.0, seed=0, edge_attr="s", values=["+", "-"],
                                        keep=0.5),
        "blockwise": release_blockwise(G, 1.0, tmp_path / "b", tile=(64, 64)),
        "collected": dpgraph.local.simulate_collection(G, 1.0, seed=0),
    }


def test_every_release_has_its_row(tmp_path):
    releases = _releases(tmp_path)
    assert set(releases) == set(KINDS)
    for name, R in releases.items():
        assert kind_of(R) is KINDS[name], name
    assert releases["dense"].kind.capabilities == {"packed words"}
    assert capabilities(releases["typed sparse"]) == {"typed", "csr", "undirected"}


def test_a_sparse_typed_release_is_sparse_for_its_memory(tmp_path):
    """Its memory refusals and estimates are those of a sparse release, not a dense one."""
    storage = {name: _memory.release_kind(R) for name, R in _releases(tmp_path).items()}
    assert storage == {"dense": "dense", "sparse": "sparse", "typed": "dense",
                       "typed sparse": "sparse", "blockwise": "blockwise", "collected": "dense"}


def test_an_analytic_that_does_not_apply_is_refused_by_its_declaration():
    binary = dpgraph.release(nx.path_graph(30), 1.0, seed=0)
    with pytest.raises(TypeError, match=r"balance\(\) needs a typed release.*this release is "
                                        r"dense and undirected"):
        binary.balance()
    with pytest.raises(TypeError, match=r"reciprocity\(\) needs a directed release"):
        binary.reciprocity()
    with pytest.raises(TypeError, match=r"value_counts\(\) needs a typed release"):
        binary.value_counts()
    directed_typed = dpgraph.release(_signed(directed=True), 2.0, seed=0, directed=True,
                                     edge_attr="s", values=["+", "-"])
    with pytest.raises(TypeError, match=r"balance\(\) needs an undirected release"):
        directed_typed.balance()
    assert directed_typed.reciprocity().value == directed_typed.reciprocity().value  # applies
    assert dpgraph.release(_signed(), 2.0, seed=0, edge_attr="s", values=["+", "-"]).balance() \
        is not None


def test_the_declared_methods_keep_their_docstrings():
    for name in ANALYTIC_NEEDS:
        method = getattr(dpgraph.PrivateGraph, name)
        assert method.__doc__ and method.__name__ == name


@pytest.mark.skipif(shutil.which("mypy") is None and not os.path.exists(
    os.path.join(os.path.dirname(sys.executable), "mypy")), reason="mypy is not installed")
def test_type_checkers_see_the_bound_analytics(tmp_path):
    script = tmp_path / "use.py"
    body = textwrap.dedent("""\
        import networkx as nx

        import dpgraph

        R = dpgraph.release(nx.karate_club_graph(), 1.0)
        c = R.cut([0, 1], [2, 3])
        t = R.triangles()
        k = R.communities()
        """)

    def mypy(text: str) -> subprocess.CompletedProcess:
        script.write_text(text)
        env = dict(os.environ, MYPYPATH=str(ROOT))  # this checkout's dpgraph, not an installed one
        return subprocess.run([sys.executable, "-m", "mypy", "--ignore-missing-imports",
                               "--follow-imports=silent", "--no-incremental",
                               "--cache-dir", str(tmp_path / "cache"), str(script)],
                              capture_output=True, text=True, env=env, timeout=600)

    ok = mypy(body)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    bad = mypy(body + "x = R.triangle()\n")
    assert bad.returncode == 1 and 'has no attribute "triangle"' in bad.stdout, bad.stdout


def test_the_methods_type_checkers_see_are_the_registered_analytics():
    """PrivateGraph's TYPE_CHECKING block lists every registered analytic, and nothing else."""
    import ast

    from dpgraph.graph.answers import ANALYTICS

    tree = ast.parse((ROOT / "dpgraph" / "graph" / "private.py").read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "PrivateGraph")
    block = next(n for n in cls.body if isinstance(n, ast.If)
                 and isinstance(n.test, ast.Name) and n.test.id == "TYPE_CHECKING")
    listed = [t.id for n in block.body if isinstance(n, ast.Assign) for t in n.targets]
    assert sorted(listed) == sorted(ANALYTICS)
    for n in block.body:  # each name bound to the function of the same name
        assert n.value.attr == n.targets[0].id


def test_no_release_path_bypasses_the_transaction_on_the_public_surface():
    """The in-memory tiled reference charges no ledger: it is not on the blockwise face."""
    from dpgraph.graph import blockwise

    assert "release_tiled" not in blockwise.__all__
    assert not hasattr(blockwise, "release_tiled")


def test_every_in_memory_kind_runs_size_then_charge_then_sample(monkeypatch):
    """One sequence for every row (kinds.run): the row's size check, tx.commit(), its sampler."""
    from dpgraph.core.transaction import ReleaseTransaction
    from dpgraph.graph import kinds

    order: list[str] = []

    def record(what, fn):
        def wrapped(*args, **kwargs):
            order.append(what)
            return fn(*args, **kwargs)
        return wrapped

    commit = ReleaseTransaction.commit
    monkeypatch.setattr(ReleaseTransaction, "commit", record("commit", commit))
    for name in ("dense", "sparse", "typed", "typed sparse"):
        mech = KINDS[name].mechanics
        for step in ("size", "sample"):
            monkeypatch.setattr(mech, step, staticmethod(record(f"{name} {step}",
                                                                getattr(mech, step))))
    G = nx.gnm_random_graph(40, 120, seed=1)
    typed = {"edge_attr": "s", "values": ["+", "-"]}
    made = {"dense": lambda: dpgraph.release(G, 1.0, seed=0),
            "sparse": lambda: dpgraph.release(G, 1.0, seed=0, keep=0.5),
            "typed": lambda: dpgraph.release(_signed(), 1.0, seed=0, **typed),
            "typed sparse": lambda: dpgraph.release(_signed(), 1.0, seed=0, keep=0.5, **typed)}
    for name, make in made.items():
        order.clear()
        R = make()
        assert order == [f"{name} size", "commit", f"{name} sample"], name
        assert kind_of(R) is KINDS[name] is kinds.row_for(name.startswith("typed"),
                                                         name.endswith("sparse"))
    assert KINDS["blockwise"].mechanics is None  # it writes tiles to a store (blockwise/)


def test_the_file_format_reads_each_payload_from_its_row(tmp_path):
    from dpgraph.graph import io
    from dpgraph.graph.blockwise import pointer

    for row in KINDS.values():
        assert io._payload(row.file_kind) == row.payload, row.name
    # the blockwise row's payload (a pointer to its store) is completed by its package: the
    # table cannot import it (a store's release is a PrivateGraph, whose files read the table)
    assert KINDS["blockwise"].file_kind == "store"
    assert KINDS["blockwise"].payload == (pointer.store_payload, pointer.store_read)
    for name, R in _releases(tmp_path).items():
        R.save(tmp_path / f"{name}.dpg")
        assert kind_of(dpgraph.load(tmp_path / f"{name}.dpg")) is KINDS[name]


def test_kind_decisions_read_the_row_not_the_adjacency(tmp_path):
    """The triangle pass, the community plan and the file's channel choose by capabilities."""
    import re

    from dpgraph.graph.analytics.triangle_counting import TriangleCounter

    for name, R in _releases(tmp_path).items():
        counter = TriangleCounter(R)
        caps = KINDS[name].capabilities
        assert counter.is_sparse == ("csr" in caps), name
        assert counter.is_packed == ("packed words" in caps), name  # a store's words: read once, kept
    probe = re.compile(r'hasattr\([\w.]+, "(words|indptr|indices|keep_numerator)"\)'
                       r'|file_kind [!=]= "|getattr\([\w.]+, "keep_numerator"')
    for path in ("graph/io.py", "graph/analytics/triangle_counting.py",
                 "graph/analytics/community_planning.py"):
        assert not probe.findall((ROOT / "dpgraph" / path).read_text()), path


def test_the_collected_kind_is_a_row_of_the_table(tmp_path):
    """An upper layer's kind is one more row: its file payload, class and capabilities."""
    import dpgraph.local as local
    from dpgraph.graph import ReleaseKind, register_kind

    row = KINDS["collected"]
    assert row.file_kind == "collected" and row.release_type is local.CollectedGraph
    assert row.mechanics is None and row.capabilities == frozenset()
    register_kind(row)  # the same row again: a no-op
    with pytest.raises(ValueError, match="taken by the row 'collected'"):
        register_kind(ReleaseKind("collected", "other", "dense", frozenset(),
                                  payload=row.payload, release_type=object))
    with pytest.raises(ValueError, match="needs payload=.*release_type="):
        register_kind(ReleaseKind("mine", "mine", "dense", frozenset()))
    C = local.simulate_collection(nx.path_graph(6), 1.0, seed=0)
    assert kind_of(C) is row
    C.save(tmp_path / "c.dpg")
    assert type(dpgraph.load(tmp_path / "c.dpg")) is local.CollectedGraph
    with pytest.raises(TypeError, match="needs a typed release.*this release is collected"):
        C.value_counts()
