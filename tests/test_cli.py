"""The command-line jobs: demo, release, cut and the experiment registration.

dpgraph/cli.py wires these; ``_main`` below is a local copy of that wiring so
the commands are tested on their own.
"""

from __future__ import annotations

import argparse
import json
import warnings

import networkx as nx
import pytest
from _data import data_missing

import dpgraph
from dpgraph import commands, load
from dpgraph.experiments import facebook_cuts


def _main(argv: list[str]) -> int:
    """Local copy of the wiring dpgraph.cli.main performs."""
    ap = argparse.ArgumentParser(prog="dpgraph")
    sub = ap.add_subparsers(dest="command", required=True)
    commands.register_commands(sub)
    exp = sub.add_parser("experiment").add_subparsers(dest="experiment", required=True)
    facebook_cuts.register(exp)
    args = ap.parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, TypeError) as exc:
        print(f"dpgraph: error: {exc}")
        return 2


@pytest.fixture
def edgelist(tmp_path):
    G = nx.gnp_random_graph(80, 0.1, seed=3)
    path = tmp_path / "g.txt"
    path.write_text("# a comment\n" + "".join(f"{u} {v}\n" for u, v in G.edges()))
    return path, G


def test_release_then_cut(tmp_path, edgelist, capsys):
    path, G = edgelist
    out = tmp_path / "r.dpg"
    argv = ["release", str(path), "--epsilon", "1.5", "-o", str(out), "--seed", "4"]
    assert _main([*argv, "--nodes-from-edges"]) == 0
    R = load(out)
    assert R.epsilon == 1.5 and R.number_of_nodes() == len({v for e in G.edges() for v in e})
    again = dpgraph.release(nx.Graph(nx.read_edgelist(path, nodetype=int)), 1.5, seed=4)
    assert (R.adjacency.words == again.adjacency.words).all()  # same seed, same release
    capsys.readouterr()
    assert _main(["cut", str(out), "--S", "0-9,15", "--T", "20-39", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    S = [v for v in [*range(10), 15] if v in R.nodes]
    T = [v for v in range(20, 40) if v in R.nodes]
    est = R.cut(S, T)
    assert got["estimate"] == pytest.approx(est.value) and got["std"] == pytest.approx(est.std)
    assert got["S_size"] == len(S) and got["T_size"] == len(T)
    # @file and the default T = complement of S
    nodes_file = tmp_path / "s.txt"
    nodes_file.write_text("0\n1, 2\n3")
    assert _main(["cut", str(out), "--S", f"@{nodes_file}"]) == 0
    text = capsys.readouterr().out
    rest = [v for v in R.nodes if v not in {0, 1, 2, 3}]
    assert str(R.cut([0, 1, 2, 3], rest)) in text  # the proper estimate, said as resolved or not
    assert _main(["cut", str(out), "--S", f"@{nodes_file}", "--unbiased", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["estimate"] == got["raw"] == pytest.approx(R.cut([0, 1, 2, 3], rest).raw)
    assert got["proper"] is False


def test_seeded_release_warns(tmp_path, edgelist, capsys):
    path, _ = edgelist
    _main(["release", str(path), "-e", "1", "-o", str(tmp_path / "a.dpg"), "--seed", "1",
           "--nodes", "80"])
    assert capsys.readouterr().err.count("never publish") == 1
    with warnings.catch_warnings(record=True) as caught:  # said once, not again as a warning
        warnings.simplefilter("always")
        _main(["release", str(path), "-e", "1", "-o", str(tmp_path / "c.dpg"), "--seed", "1",
               "--nodes", "80"])
    assert not [w for w in caught if issubclass(w.category, dpgraph.SeededReleaseWarning)]
    assert capsys.readouterr().err.count("never publish") == 1
    _main(["release", str(path), "-e", "1", "-o", str(tmp_path / "b.dpg"), "--nodes", "80"])
    assert "never publish" not in capsys.readouterr().err


@pytest.mark.parametrize("argv, msg", [
    (["cut", "{r}", "--S", "0-3", "--T", "2-5"], "share"),
    (["cut", "{r}", "--S", "0,999"], "--S names 1 node"),
    (["cut", "{r}", "--S", "0", "--T", "abc"], "--T names 1 node"),
    (["cut", "{r}", "--S", " , "], "--S is empty"),
    (["cut", "{r}", "--S", "@/nonexistent/file"], "node file /nonexistent/file: no such file"),
    (["cut", "{bad}", "--S", "0"], "not a dpgraph file"),
    (["release", "/nonexistent.txt", "-e", "1", "-o", "{out}"], "EDGELIST"),
    (["release", "{edges}", "-e", "1", "-o", "{out}"], "--nodes is required"),
    (["release", "{edges}", "-e", "1", "-o", "{out}", "--nodes", "0-9"], "not in nodes"),
])
def test_bad_inputs_name_the_argument(tmp_path, edgelist, capsys, argv, msg):
    path, _ = edgelist
    r = tmp_path / "r.dpg"
    _main(["release", str(path), "-e", "1", "-o", str(r), "--seed", "0", "--nodes", "0-79"])
    bad = tmp_path / "bad.dpg"
    bad.write_text("hello")
    argv = [a.format(r=r, bad=bad, out=tmp_path / "o.dpg", edges=path) for a in argv]
    capsys.readouterr()
    assert _main(argv) == 2
    assert msg in capsys.readouterr().out


@pytest.mark.parametrize("argv", [
    ["release", "x.txt", "-e", "0", "-o", "o"],
    ["release", "x.txt", "-e", "nan", "-o", "o"],
    ["release", "x.txt", "-e", "1", "-o", "o", "--seed", "-3"],
    ["cut", "f", "--S", "1", "--level", "1.5"],
    ["release", "x.txt", "-o", "o"],
])
def test_argparse_refuses_bad_values(argv, capsys):
    with pytest.raises(SystemExit):
        _main(argv)
    err = capsys.readouterr().err
    assert "--epsilon" in err or "--seed" in err or "--level" in err or "-e/--epsilon" in err


def test_demo_offline_builtin(tmp_path, capsys):
    assert _main(["demo", "--builtin", "--seed", "1", "--out", str(tmp_path),
                  "--save", str(tmp_path / "d.dpg")]) == 0
    out = capsys.readouterr().out
    assert "stochastic block model" in out and "95% CI" in out
    assert (tmp_path / "dpgraph-demo.png").stat().st_size > 1000
    assert load(tmp_path / "d.dpg").number_of_nodes() == 600


def test_demo_says_which_graph(monkeypatch, tmp_path, capsys):
    from dpgraph import datasets

    monkeypatch.setattr(datasets, "available", lambda name: False)
    assert _main(["demo", "--seed", "2", "--queries", "2", "--out", str(tmp_path)]) == 0
    assert "ego-Facebook not found" in capsys.readouterr().out


@pytest.mark.skipif(data_missing("facebook"),
                    reason="ego-Facebook not available locally")
def test_demo_uses_facebook_when_present(tmp_path, capsys):
    assert _main(["demo", "--seed", "3", "--queries", "2", "--out", str(tmp_path)]) == 0
    assert "SNAP ego-Facebook" in capsys.readouterr().out


def test_experiment_registered():
    ap = argparse.ArgumentParser(prog="dpgraph")
    sub = ap.add_subparsers(dest="command")
    exp = sub.add_parser("experiment").add_subparsers(dest="experiment")
    facebook_cuts.register(exp)
    args = ap.parse_args(["experiment", "facebook-cuts", "--quick", "--out", "x"])
    assert args.quick and callable(args.func)


def test_no_help_text_shows_a_doubled_percent_sign():
    # argparse %-formats help strings but not descriptions: "95%%" in a description leaks
    import dpgraph.cli

    parser = dpgraph.cli.build_parser()
    pending, seen = [parser], 0
    while pending:
        p = pending.pop()
        assert "%%" not in p.format_help(), p.prog
        seen += 1
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                pending.extend(action.choices.values())
    assert seen >= 10


# --------------------------------------------------------------------------- one spelling
def _leaf_parsers(parser, path=()):
    """(command path, parser) of every command that takes options (no subcommands)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _leaf_parsers(sub, (*path, name))
            return
    yield " ".join(path), parser


def _leaves():
    from dpgraph.cli import build_parser

    return dict(_leaf_parsers(build_parser()))


@pytest.mark.parametrize("name", sorted(_leaves()))
def test_epsilon_is_spelled_epsilon_everywhere(name):
    options = [o for a in _leaves()[name]._actions for o in a.option_strings]
    assert [o for o in options if o.lstrip("-").lower().startswith("eps")] in ([], ["--epsilon"])


def test_every_experiment_requires_out():
    experiments = {k: p for k, p in _leaves().items() if k.startswith("experiment ")}
    assert len(experiments) >= 6
    for name, parser in experiments.items():
        out = [a for a in parser._actions if "--out" in a.option_strings]
        assert len(out) == 1 and out[0].required, name


@pytest.mark.parametrize("argv, hint", [
    (["cut", "g.dpg", "--s", "0-9"], "did you mean --S? (options are case-sensitive)"),
    (["cut", "g.dpg", "--S", "0-9", "--t", "1"], "did you mean --T?"),
    (["release", "e.txt", "--eps", "1", "-o", "x"], "use --epsilon"),
    (["cut", "g.dpg", "--S", "1", "--proper"], "--unbiased gives the unbiased one"),
    (["cut", "g.dpg", "--S", "1", "--verify=k.pub"], "did you mean --verify-key?"),
    (["experiment", "heterogeneity", "--ou", "x"], "did you mean --out? (options are not"),
    (["plan", "--nodes", "10", "--epsilon", "1", "--side", "1,2"], "did you mean --sides?"),
])
def test_other_spellings_are_refused_with_the_one_to_use(argv, hint, capsys):
    from dpgraph.cli import main

    with pytest.raises(SystemExit) as info:  # refused while parsing: nothing runs
        main(argv)
    assert info.value.code == 2 and hint in capsys.readouterr().err


def test_ledger_errors_speak_of_the_flags(tmp_path, edgelist, capsys):
    from dpgraph.cli import main

    path, _ = edgelist
    ledger = tmp_path / "budget.json"
    base = ["release", str(path), "--nodes", "80", "-o", str(tmp_path / "r.dpg"), "--force",
            "--ledger", str(ledger)]
    assert main([*base, "-e", "1"]) == 2  # no ledger yet and no --budget
    err = capsys.readouterr().err
    assert "--budget TOTAL" in err and "total_epsilon" not in err and not ledger.exists()
    assert main([*base, "-e", "1", "--budget", "2"]) == 0
    assert main([*base, "-e", "1", "--budget", "3"]) == 2  # a total cannot change
    err = capsys.readouterr().err
    assert "--budget 3" in err and "cannot be changed" in err
    assert main([*base, "-e", "1.5"]) == 2  # 1 left: says what would fit
    assert "Use an epsilon of at most 1." in capsys.readouterr().err
    assert main([*base, "-e", "1"]) == 0
    assert main([*base, "-e", "0.1"]) == 2  # nothing left: no "smaller epsilon" advice
    err = capsys.readouterr().err
    assert "used up" in err and "smaller epsilon" not in err
    L = dpgraph.PrivacyLedger.open(ledger)
    assert (L.spent, L.remaining, L.total_epsilon) == (2.0, 0.0, 2.0)  # properties, like its repr
    assert repr(L) == ("PrivacyLedger(total_epsilon=2, scope='default', spent=2, remaining=0, "
                       "releases=2)")


def test_facebook_cuts_emits_no_warning(tmp_path, capsys):
    # experiments are seeded on purpose and say so in --seed's help: nothing in the progress bar
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rows = facebook_cuts.run(out=tmp_path, graph=nx.karate_club_graph(), sizes=[20, 34],
                                 runs=2, queries=5, seed=0, progress=True)
    assert [r["nodes"] for r in rows] == [20, 34]
    assert "Warning" not in capsys.readouterr().err


def test_demo_contrasts_the_raw_count_with_the_estimate(tmp_path, capsys):
    assert _main(["demo", "--builtin", "--seed", "1", "--queries", "1", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    G, _ = commands.demo_graph(prefer_facebook=False)
    R = dpgraph.release(G, 1.0, seed=1)
    assert f"itself has {R.number_of_released_edges():,} edges" in out
    assert f"R.number_of_edges(), is {R.number_of_edges()}" in out
