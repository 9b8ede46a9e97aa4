"""What an analyst reads and what leaves as a table: intervals that keep their width, reasons
for people with the planner's account behind them, and answers exported to pandas."""

from __future__ import annotations

import math
import pickle
import re
import sys
import warnings

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.special import ndtri

import dpgraph
from dpgraph.core import ConfidenceInterval, Estimate, project
from dpgraph.report import render_report, report_context

COLUMNS = ["value", "std", "ci_low", "ci_high", "resolved", "reason"]


def _release(G, eps, seed=0, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dpgraph.release(G, epsilon=eps, seed=seed, **kw)


# ---- intervals keep their width ----------------------------------------------------------

def _printed_interval(est: Estimate) -> tuple[str, str] | None:
    m = re.search(r"95% (?:CI|interval) \[(.+?), (.+?)\]", str(est))
    return (m.group(1), m.group(2)) if m else None


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=st.floats(-1e7, 1e7), std=st.one_of(st.just(0.0), st.floats(1e-3, 1e6)),
       upper=st.floats(0.0, 1e7), step=st.sampled_from([None, 1.0]),
       level=st.sampled_from([0.5, 0.9, 0.95, 0.99]))
def test_a_proper_interval_never_collapses_unless_the_std_is_0(raw, std, upper, step, level):
    if step is not None:
        upper = float(math.floor(upper))
    est = project(Estimate(raw, std, feasible_range=(0.0, upper)), step=step)
    lo, hi = est.ci(level)
    # inside the feasible range, around the value
    assert 0.0 <= lo <= est.value <= hi <= upper
    # at least the half-width of the unclipped interval (or the whole range, if narrower)
    half = float(ndtri(0.5 + level / 2)) * std
    assert hi - lo >= min(half, upper) * (1 - 1e-9) - 1e-9
    if std > 0 and upper > 0:
        assert hi > lo
        printed = _printed_interval(est)
        assert printed is not None and printed[0] != printed[1], str(est)


def test_a_cut_far_below_zero_keeps_its_interval():
    # a true cut of 2,455 whose raw estimate fell below 0: the interval reaches the half-width
    est = project(Estimate(-5_000.0, 3_838.0, feasible_range=(0.0, 1e8)), step=1)
    lo, hi = est.ci(0.95)
    assert lo == 0.0 and hi == pytest.approx(1.959963984540054 * 3_838.0)
    assert lo <= 2_455 <= hi and "[0, 0]" not in str(est)


def test_ratio_and_bound_intervals_keep_their_width():
    from dpgraph.core import BoundInterval, FiellerInterval

    # a ratio whose whole Fieller interval lies above the feasible range [0, 1]
    rule = FiellerInterval(13.0, 10.0, 1.0, 0.01, 0.0)
    est = project(Estimate(1.3, 0.1, feasible_range=(0.0, 1.0), interval=rule))
    lo, hi = est.ci(0.95)
    raw_lo, raw_hi = rule(1.959963984540054, -np.inf, np.inf)
    assert hi == 1.0 and hi - lo == pytest.approx((raw_hi - raw_lo) / 2)
    bound = project(Estimate(5.0, 0.0, feasible_range=(0.0, 1.0),
                             interval=BoundInterval(3.0, 0.5, 4.0, 0.5)))
    assert bound.ci(0.95)[0] < bound.ci(0.95)[1] == 1.0


def test_intervals_print_with_the_digits_that_tell_them_apart():
    t = _release(nx.karate_club_graph(), 4.0).transitivity()
    ci = t.ci(0.95)
    assert isinstance(ci, ConfidenceInterval) and ci == (ci.low, ci.high)
    text = str(ci)
    assert re.fullmatch(r"\(\d\.\d{1,3}, \d\.\d{1,3}\)", text), text
    assert pickle.loads(pickle.dumps(ci)) == ci and repr(ci) == repr((ci.low, ci.high))


# ---- reasons for people, the planner's account behind them ------------------------------

_PLANNER = ("MiB", "GiB", "std of at least", "path,", "speed measured", "x the model", "budget (")


def _visible(page: str) -> str:
    """The page's text as read, without what sits behind a details element, figures, styles."""
    page = re.sub(r"<details>.*?</details>|<svg.*?</svg>|<style>.*?</style>", " ", page, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))


def test_unresolved_estimates_give_a_short_reason_and_keep_the_detail():
    R = _release(nx.gnm_random_graph(2_000, 6_000, seed=1), 0.2)
    for est in (R.triangles(), R.transitivity()):
        assert not est.resolved and "a larger epsilon would resolve it" in est.reason
        assert not any(word in est.reason for word in _PLANNER)
        assert "std of at least" in est.detail and est.detail not in str(est)
        assert math.isnan(est.std)  # no error bar: no placeholder std
    a = R.degree_assortativity()
    assert math.isnan(a.std) and a.ci() == (-1.0, 1.0)


class _NoMemory:
    """A release whose motif and community computations cannot allocate."""

    def __init__(self, R):
        self._R = R

    def __getattr__(self, name):
        if name in ("triangles", "wedges", "transitivity", "average_clustering", "communities"):
            def refuse(*args, **kwargs):
                raise MemoryError("Unable to allocate 9.12 GiB; try R.to_edgelist(path) or a "
                                  "sparse release (keep=)")
            return refuse
        return getattr(self._R, name)


def _check_cells(page: str, ctx: dict) -> None:
    text = _visible(page)
    for word in (*_PLANNER, "Unable to allocate", "to_edgelist", "keep="):
        assert word not in text, word
    for row in ctx["statistics"]:
        if "error" in row:
            continue
        # a numeric std beside an interval that is the whole range would be a placeholder
        if row["ci"] == row["range"] and not row["exact"]:
            assert row["std"] == "--", row
    assert "0.2551" not in text and "0.5102" not in text


def _report_of(R):
    ctx = report_context(R)
    return render_report(ctx), ctx


def test_report_of_an_unresolved_release_holds_no_planner_text():
    R = _release(nx.gnm_random_graph(2_000, 6_000, seed=1), 1.0, target_edges=40_000)
    page, ctx = _report_of(R)
    _check_cells(page, ctx)
    assert "how this was decided" in page  # the planner's account is one click away
    assert re.search(r"kept with probability\s+0\.0\d\d?\d?;", page)


def test_report_says_why_not_computed_for_people():
    R = _release(nx.gnm_random_graph(300, 900, seed=1), 1.0)
    page, ctx = _report_of(_NoMemory(R))
    _check_cells(page, ctx)
    assert "needs more memory than this machine has free" in _visible(page)
    assert "Unable to allocate 9.12 GiB" in page  # behind its details element


@pytest.mark.slow
def test_report_of_an_unresolved_release_of_ten_thousand_nodes():
    R = _release(nx.gnm_random_graph(10_000, 30_000, seed=1), 1.0, target_edges=100_000)
    page, ctx = _report_of(R)
    _check_cells(page, ctx)


# ---- answers leave as tables ---------------------------------------------------------------

def _same_reason(cell, est) -> bool:
    """A reason in a frame: the estimate's, or pandas' missing value where it has none."""
    import pandas as pd

    return pd.isna(cell) if est.reason is None else cell == est.reason


def test_estimate_to_dict_and_to_frame_round_trip():
    pd = pytest.importorskip("pandas")
    R = _release(nx.karate_club_graph(), 2.0)
    e = R.cut([0, 1, 2], [30, 31, 32, 33])
    d = e.to_dict()
    assert list(d) == COLUMNS and d["value"] == e.value and d["std"] == e.std
    assert (d["ci_low"], d["ci_high"]) == e.ci(0.95) and d["resolved"] == e.resolved
    f = e.to_frame()
    assert list(f.columns) == COLUMNS and len(f) == 1 and f.loc[0, "value"] == e.value
    pairs = [([0, 1], [30, 31]), ([2, 3], [32, 33]), ([4], [5, 6, 7])]
    batch = R.cuts(pairs)
    frame = batch.to_frame()
    assert list(frame.columns) == COLUMNS and len(frame) == 3
    assert frame.equals(pd.DataFrame(batch.to_dict()))
    for k, row in frame.iterrows():
        one = batch[k]
        assert row["value"] == one.value and row["std"] == one.std
        assert (row["ci_low"], row["ci_high"]) == one.ci(0.95)
        assert row["resolved"] == one.resolved and _same_reason(row["reason"], one)


def test_node_estimates_and_degree_view_to_frame():
    pd = pytest.importorskip("pandas")
    R = _release(nx.path_graph(["a", "b", "c"]), 2.0)
    d = R.degree()
    frame = d.to_frame()
    assert list(frame.index) == ["a", "b", "c"] and frame.index.name == "node"
    assert list(frame.columns) == COLUMNS
    for v in "abc":
        assert frame.loc[v, "value"] == d[v].value and _same_reason(frame.loc[v, "reason"], d[v])
    back = pd.DataFrame(d.to_dict())
    assert back.equals(frame.rename_axis(None))
    assert R.degree.to_frame().equals(frame) and R.degree.to_dict() == d.to_dict()


def test_no_error_bar_is_nan_in_the_table():
    R = _release(nx.barabasi_albert_graph(200, 3, seed=1), 4.0)
    row = R.degree_assortativity().to_dict()
    assert math.isnan(row["std"]) and row["resolved"] is False and row["reason"]


def test_to_frame_without_pandas_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    e = Estimate(917.0, 120.0, feasible_range=(0, 10_000))
    with pytest.raises(ImportError, match="pip install pandas.*to_dict"):
        e.to_frame()
    assert e.to_dict()["value"] == 917.0


# ---- a curator's CSV and DataFrame ---------------------------------------------------------

def _cli(*argv):
    from dpgraph.cli import main

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return main(list(argv))


@pytest.mark.parametrize("text, extra", [
    ("source,target\n0,1\n1,2\n2,3\n", ()),                    # a header naming its columns
    ("u,v\n0,1\n1,2\n2,3\n", ("--no-header",)),                # ... unless told it has none
    ("0,1\n1,2\n2,3\n", ()),                                   # no header
    ("from;to\n0;1\n1;2\n2;3\n", ("--delimiter", ";")),        # another delimiter
])
def test_release_command_reads_a_csv_with_a_header(tmp_path, text, extra):
    src = tmp_path / ("e.csv" if ";" not in text else "e.txt")
    src.write_text(text)
    out = tmp_path / "e.dpg"
    if "--no-header" in extra:  # 'u' and 'v' are then labels, which --nodes 6 does not have
        assert _cli("release", str(src), "--nodes", "6", "-e", "1", "-o", str(out), *extra) != 0
        assert not out.exists()
        return
    assert _cli("release", str(src), "--nodes", "6", "-e", "1", "--seed", "0", "-o", str(out),
                *extra) == 0
    R = dpgraph.load(out)
    assert R.number_of_nodes() == 6 and list(R.nodes) == list(range(6))


def test_release_command_reads_text_labels_from_a_csv(tmp_path):
    src = tmp_path / "people.csv"
    src.write_text("name_a,name_b\nann,bob\nbob,cy\n")
    out = tmp_path / "p.dpg"
    assert _cli("release", str(src), "--header", "--nodes", "ann,bob,cy,dee", "-e", "1",
                "--seed", "0", "-o", str(out)) == 0
    assert list(dpgraph.load(out).nodes) == ["ann", "bob", "cy", "dee"]


def test_a_typed_release_takes_a_dataframe_with_a_value_column():
    pd = pytest.importorskip("pandas")
    G = nx.gnp_random_graph(60, 0.2, seed=3)
    sign = {e: (1 if k % 3 else -1) for k, e in enumerate(G.edges())}
    nx.set_edge_attributes(G, sign, "sign")
    df = pd.DataFrame([(u, v, s) for (u, v), s in sign.items()],
                      columns=["source", "target", "sign"])
    with pytest.warns(dpgraph.exceptions.SeededReleaseWarning):
        from_frame = dpgraph.release(df, 2.0, seed=5, nodes=range(60), edge_attr="sign",
                                     values=[1, -1])
    with pytest.warns(dpgraph.exceptions.SeededReleaseWarning):
        from_graph = dpgraph.release(G, 2.0, seed=5, edge_attr="sign", values=[1, -1])
    # the same input read two ways: the same release, tie for tie
    a, b = from_frame.value_counts(), from_graph.value_counts()
    assert {k: float(v) for k, v in a.items()} == {k: float(v) for k, v in b.items()}
    with pytest.raises(ValueError, match="edge_attr='weight' names no column"):
        dpgraph.release(df, 2.0, nodes=range(60), edge_attr="weight", values=[1, -1])
    with pytest.raises(TypeError, match="nodes="):
        dpgraph.release(df, 2.0, edge_attr="sign", values=[1, -1])


def test_the_dropped_attributes_warning_names_what_works():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"source": [0, 1], "target": [1, 2], "sign": [1, -1]})
    with pytest.warns(dpgraph.exceptions.DroppedAttributesWarning) as got:
        dpgraph.release(df, 1.0, nodes=range(3))
    said = str(got[0].message)
    assert "edge_attr=NAME" in said and "column of a DataFrame" in said
    # and what it says works: the same table, typed
    R = dpgraph.release(df, 1.0, nodes=range(3), edge_attr="sign", values=[1, -1])
    assert R.tie_values.values == (1, -1)


# ---- networkx's edge-level names are refused with what to use --------------------------------

@pytest.mark.parametrize("name, instead", [
    ("edges", "R.cut(S, T)"), ("has_edge", "R.cut([u], [v])"), ("neighbors", "R.degree(v)"),
    ("adj", "R.degree(v)"), ("nbunch_iter", "R.nodes"), ("subgraph", "R.cut and R.degree"),
])
def test_networkx_edge_names_are_refused_naming_what_to_use(name, instead):
    from dpgraph.graph.views import NotAGraphError

    R = _release(nx.karate_club_graph(), 1.0)
    with pytest.raises(NotAGraphError, match=re.escape(f"R.{name} is not defined")) as info:
        getattr(R, name)
    assert instead in str(info.value) and "R.to_networkx()" in str(info.value)
    assert not hasattr(R, name)  # an AttributeError: R is not taken for a graph


@pytest.mark.parametrize("call", [
    lambda R: nx.cut_size(R, [0, 1, 2]), lambda R: nx.clustering(R), lambda R: nx.pagerank(R),
    lambda R: nx.shortest_path(R, 0, 5), lambda R: list(nx.bfs_edges(R, 0)),
    lambda R: nx.to_numpy_array(R), lambda R: nx.edge_boundary(R, [0]),
    # functions that read a graph's internal adjacency dict directly
    lambda R: nx.connected_components(R), lambda R: nx.number_connected_components(R),
    lambda R: nx.is_connected(R), lambda R: nx.node_connected_component(R, 0),
])
def test_networkx_functions_stop_with_dpgraphs_message(call):
    R = _release(nx.karate_club_graph(), 1.0)
    with pytest.raises(AttributeError, match="a release does not know the graph's edges"):
        result = call(R)
        list(result) if hasattr(result, "__next__") else result  # a lazy one runs when read


def test_to_networkx_still_gives_the_raw_released_graph_to_networkx():
    R = _release(nx.karate_club_graph(), 1.0)
    H = R.to_networkx()
    assert nx.cut_size(H, [0, 1, 2]) >= 0 and H.number_of_nodes() == 34


# ---- the README pasted into a real REPL -----------------------------------------------------

README = __import__("pathlib").Path(__file__).resolve().parents[1] / "README.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


class _Console(__import__("code").InteractiveConsole):
    """The standard REPL, fed line by line; every error it would print is kept."""

    def __init__(self):
        super().__init__({"__name__": "__console__"})
        self.errors: list[str] = []

    def showsyntaxerror(self, filename=None, **kwargs):
        self.errors.append(f"SyntaxError: {sys.exc_info()[1]}")

    def showtraceback(self):
        self.errors.append(f"{sys.exc_info()[0].__name__}: {sys.exc_info()[1]}")


def test_readme_python_blocks_paste_into_the_standard_repl(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # the examples write release files
    console = _Console()
    blocks = [body for kind, body in FENCE.findall(README.read_text()) if kind == "python"]
    for k, block in enumerate(blocks):
        for line in block.splitlines():
            console.push(line)
        console.push("")  # the blank line a reader's paste ends with
        assert console.errors == [], f"README python block {k + 1}: {console.errors}"
    out = capsys.readouterr().out
    ci = re.search(r"95% CI (\([^)]*\))", out).group(1)  # print(trans.ci(0.95)), for people
    assert re.fullmatch(r"\(-?[\d.,e+-]{1,8}, -?[\d.,e+-]{1,8}\)", ci), ci


def test_readme_plan_output_is_what_dpgraph_plan_prints(capsys):
    from dpgraph.cli import main

    text = README.read_text()
    console = next(body for kind, body in FENCE.findall(text) if kind == "console")
    command, shown = console.split("\n", 1)[0], console.split("\n", 1)[1]
    assert command.startswith("$ dpgraph plan ") and "--json" not in command
    assert main(command[len("$ dpgraph "):].split()) == 0
    printed = capsys.readouterr().out
    assert shown.startswith(printed.rstrip("\n") + "\n")  # then the abridged --json example


def test_plan_with_a_target_size_leaves_out_impossible_epsilons(capsys):
    from dpgraph.cli import main

    assert main(["plan", "--nodes", "100000", "--epsilon", "1", "--target-edges", "2000000"]) == 0
    out = capsys.readouterr().out
    assert "epsilon 8 left out" in out and re.search(r"^\s+4\s", out, re.M)
    # an explicit table is shown as asked: an impossible epsilon in it is an error
    assert main(["plan", "--nodes", "100000", "--epsilon", "1", "--target-edges", "2000000",
                 "--table", "1,8"]) == 2


def test_demo_leaves_no_folder_in_the_temp_dir(tmp_path, monkeypatch, capsys):
    import tempfile

    from dpgraph.cli import main

    temp, cache = tmp_path / "temp", tmp_path / "cache"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    for seed in ("1", "2"):
        assert main(["demo", "--builtin", "--seed", seed, "--queries", "1"]) == 0
    assert list(temp.iterdir()) == []
    assert (cache / "dpgraph" / "demo" / "dpgraph-demo.png").is_file()
    assert str(cache / "dpgraph" / "demo") in capsys.readouterr().out


def test_fetch_offline_says_where_to_put_the_file_without_a_traceback(tmp_path, monkeypatch,
                                                                     capsys):
    from dpgraph.cli import main
    from dpgraph.datasets import registry

    def offline(*args, **kwargs):
        raise registry.DatasetNotFoundError("dataset 'facebook' is not available locally and "
                                            "could not be downloaded (download failed: "
                                            "ConnectionError). Put the file ...")

    monkeypatch.setattr(registry, "_download", offline)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("DPGRAPH_DATA_DIR", raising=False)
    assert main(["fetch", "facebook", "--to", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dpgraph: error: dataset 'facebook' is not available locally")
    assert "Traceback" not in err and not (tmp_path / "facebook_combined.txt.gz").exists()


def test_a_cli_release_records_its_name_and_output_in_the_ledger(tmp_path):
    import json

    src = tmp_path / "e.csv"
    src.write_text("0,1\n1,2\n")
    ledger = tmp_path / "budget.json"
    out = tmp_path / "e.dpg"
    assert _cli("release", str(src), "--nodes", "4", "-e", "1", "--name", "toy graph",
                "--ledger", str(ledger), "--budget", "3", "-o", str(out)) == 0
    (entry,) = json.loads(ledger.read_text())["entries"]
    assert entry["label"] == f"toy graph -> {out}" and entry["epsilon"] == 1.0
    book = dpgraph.PrivacyLedger.open(ledger)
    assert book.with_label("x").charge(0.5).label == "x" and book.charge(0.5).label is None


@pytest.mark.parametrize("kw", [{}, {"directed": True}, {"keep": 0.3}])
def test_one_nodes_degree_is_its_row_and_equals_every_nodes(kw, monkeypatch):
    G = nx.gnp_random_graph(200, 0.05, seed=1, directed=bool(kw.get("directed")))
    R = _release(G, 1.0, **kw)
    every = R.degree()
    unbiased = R.degree(proper=False)
    for v in (0, 17, 199):
        one = R.degree(v)
        assert (one.value, one.std, one.raw, one.feasible_range) == \
            (every[v].value, every[v].std, every[v].raw, every[v].feasible_range)
        assert R.degree(v, proper=False).raw == unbiased[v].raw
    # and it reads one row: not every node's degree
    from dpgraph.graph.analytics import counts

    def every_row(*args, **kwargs):
        raise AssertionError("R.degree(v) computed every node's degree")

    monkeypatch.setattr(counts, "_degree_estimate", every_row)
    assert R.degree(5).value == every[5].value
