"""The release report: valid, self-contained HTML, honest flags, renders in a browser."""

from __future__ import annotations

import re
import shutil
import subprocess
import warnings

import html5lib
import networkx as nx
import numpy as np
import pytest

import dpgraph
from dpgraph.cli import main
from dpgraph.core import RESOLVED_FRACTION, Estimate
from dpgraph.planner import cut_std
from dpgraph.report import build_report, detectability, render_report, report_context

_URL = re.compile(r"^\s*(https?:)?//", re.I)
_NS = "{http://www.w3.org/1999/xhtml}"


def _release(G, eps, seed=0, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dpgraph.release(G, epsilon=eps, seed=seed, **kw)


@pytest.fixture(scope="module")
def sbm_release():
    G = nx.stochastic_block_model([60, 60, 60], [[0.3, 0.02, 0.02], [0.02, 0.3, 0.02],
                                                 [0.02, 0.02, 0.3]], seed=4)
    return _release(nx.Graph(G), 3.0, seed=2)


@pytest.fixture(scope="module")
def sbm_ctx(sbm_release):
    return report_context(sbm_release, title="three blocks")


@pytest.fixture(scope="module")
def sbm_page(sbm_ctx):
    return render_report(sbm_ctx)


def _parse(page: str):
    return html5lib.HTMLParser(strict=True).parse(page)  # raises on any parse error


def _external_references(tree) -> list[str]:
    bad = []
    for el in tree.iter():
        for name, value in el.attrib.items():
            local = name.split("}")[-1] if isinstance(name, str) else name[1]
            if local in ("src", "href", "srcset", "data", "action", "poster") and _URL.match(value):
                bad.append(f"{el.tag} {local}={value}")
        if (isinstance(el.tag, str) and el.tag.endswith("style") and el.text
                and ("@import" in el.text or re.search(r"url\(\s*['\"]?(https?:)?//", el.text))):
            bad.append("style fetches a resource")
        if isinstance(el.tag, str) and el.tag in (f"{_NS}script", f"{_NS}link", f"{_NS}iframe"):
            bad.append(el.tag)
    return bad


def test_page_parses_and_is_self_contained(sbm_ctx, sbm_page):
    tree = _parse(sbm_page)
    assert _external_references(tree) == []
    svgs = [el for el in tree.iter() if el.tag == "{http://www.w3.org/2000/svg}svg"]
    assert len(svgs) == 2 + bool(sbm_ctx["communities"]["svg"])  # degrees, planner, spectrum


def test_external_reference_check_can_fail():
    page = ('<!DOCTYPE html><html><head><title>x</title><style>@import "a.css";</style></head>'
            '<body><img src="https://example.org/a.png" alt=""></body></html>')
    assert len(_external_references(_parse(page))) == 2


def test_page_states_protection_statistics_and_cut_accuracy(sbm_release, sbm_ctx, sbm_page):
    R = sbm_release
    assert f"{R.flip_probability:.6g}" in sbm_page
    assert "per vertex pair" in sbm_page and "seed" in sbm_page
    e = R.number_of_edges()
    lo, hi = e.ci(0.95)
    text = re.sub(r"<[^>]+>", " ", sbm_page)
    assert "edges" in text and "95% interval" in text
    ctx = sbm_ctx
    row = next(r for r in ctx["statistics"] if r["name"] == "edges")
    assert row["resolved"] is True and row["exact"] is True
    assert row["ci"] == f"[{lo:,.0f}, {hi:,.0f}]"
    cut = next(r for r in ctx["cut_table"] if r["sides"] == "10 x 10")
    assert float(cut["std"]) == pytest.approx(cut_std(180, R.epsilon, (10, 10)), rel=1e-3)
    assert ctx["communities"]["detected"] is True  # three strong blocks at eps = 3
    assert "How to cite" in sbm_page and "Minimax Distortion" in sbm_page


def test_unresolvable_statistics_are_flagged():
    R = _release(nx.gnp_random_graph(40, 0.1, seed=1), 0.05)
    ctx = report_context(R)
    rows = {r["name"]: r for r in ctx["statistics"]}
    assert rows["triangles"]["resolved"] is False  # std far above C(40, 3)
    assert "triangles" in ctx["unresolved"]
    page = render_report(ctx)
    assert "Not resolved at" in page
    _assert_no_bare_unresolved_value(_parse(page))


_NUM = r"-?\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?"
_INTERVAL = re.compile(rf"\[({_NUM}), ({_NUM})\]")
# a number followed, in the same sentence, by a 95% interval: a value shown as an answer
_VALUE_AND_INTERVAL = re.compile(rf"({_NUM})[^\[\]\d]{{0,40}}95% (?:interval|CI)\s*\[({_NUM}), ({_NUM})\]")


def _n(x: str) -> float:
    return float(x.replace(",", ""))


def _shown_as_resolved(value: float, lo: float, hi: float) -> bool:
    """The library's rule, on the numbers as printed (4 significant digits: a little slack)."""
    slack = 1e-3 * max(abs(value), abs(lo), abs(hi))
    return not (lo <= 0 <= hi) and (hi - lo) / 2 <= RESOLVED_FRACTION * abs(value) + slack


def _cells(tr) -> list[str]:
    return [" ".join("".join(td.itertext()).split()) for td in tr.iter(f"{_NS}td")]


def _assert_no_bare_unresolved_value(tree) -> dict:
    """No section of the page shows an unresolved value as a number.

    Statistics rows: an interval containing 0 is marked unresolved, and an unresolved row's
    estimate reads "-- (unresolved: ...)"; a row shown as a number obeys the rule.  Cut
    rows: a cut whose interval contains 0 or is wider than the rule allows says
    "unresolved".  Prose (every paragraph, e.g. the communities' modularity): a number
    followed by its 95% interval obeys the rule.  Returns how many of each were checked.
    """
    seen = {"statistics": 0, "unresolved statistics": 0, "cuts": 0, "prose": 0,
            "unresolved prose": 0}
    for table in tree.iter(f"{_NS}table"):
        head = " ".join("".join(th.itertext()) for th in table.iter(f"{_NS}th"))
        for tr in table.iter(f"{_NS}tr"):
            cells = _cells(tr)
            if "possible range" in head and len(cells) == 6:
                seen["statistics"] += 1
                m = _INTERVAL.fullmatch(cells[3])
                if "unresolved" in cells[5]:
                    seen["unresolved statistics"] += 1
                    assert cells[1].startswith("-- (unresolved: "), cells
                else:
                    assert m and _shown_as_resolved(_n(cells[1]), _n(m[1]), _n(m[2])), cells
            elif "as % of that cut" in head and len(cells) == 7:
                seen["cuts"] += 1
                m = _INTERVAL.fullmatch(cells[5])
                if not _shown_as_resolved(_n(cells[4]), _n(m[1]), _n(m[2])):
                    assert "unresolved" in cells[6], cells
    for p in tree.iter(f"{_NS}p"):
        text = " ".join("".join(p.itertext()).split())
        seen["unresolved prose"] += text.count("-- (unresolved: ")
        for m in _VALUE_AND_INTERVAL.finditer(text):
            seen["prose"] += 1
            assert _shown_as_resolved(_n(m[1]), _n(m[2]), _n(m[3])), text
    assert seen["statistics"] >= 1 and seen["cuts"] >= 1, seen
    return seen


def test_report_never_shows_an_unresolved_value_as_a_number():
    # karate at eps = 1: the triangle count (truth 45) cannot be told from 0
    R = _release(nx.karate_club_graph(), 1.0, seed=3)
    assert not R.triangles().resolved
    seen = _assert_no_bare_unresolved_value(_parse(build_report(R)))
    assert seen["unresolved statistics"] >= 1


@pytest.mark.parametrize("G", [nx.gnp_random_graph(300, 0.03, seed=1),
                               nx.stochastic_block_model([100, 100, 100], [[0.08, 0.01, 0.01],
                                                                           [0.01, 0.08, 0.01],
                                                                           [0.01, 0.01, 0.08]],
                                                         seed=2)],
                         ids=["gnp", "sbm"])
def test_every_section_marks_unresolved_values(G):
    # at eps = 1 no community structure is resolvable here: the modularity of the trivial
    # partition (0, interval [0, 0]) is unresolved and must not read as an answer
    R = _release(nx.Graph(G), 1.0, seed=4)
    assert not R.communities().modularity.resolved
    page = build_report(R)
    seen = _assert_no_bare_unresolved_value(_parse(page))
    assert seen["unresolved prose"] >= 1, seen
    assert "Debiased modularity of the partition found: -- (unresolved: " in _text(page)


def test_the_check_finds_a_bare_unresolved_value(sbm_ctx):
    # the same page with the modularity sentence and a statistics row as they were printed
    # before: a bare value where the estimate is unresolved
    ctx = dict(sbm_ctx, communities=dict(sbm_ctx["communities"], modularity="0",
                                         modularity_resolved=True, modularity_ci="[0, 0]"))
    with pytest.raises(AssertionError, match="Debiased modularity"):
        _assert_no_bare_unresolved_value(_parse(render_report(ctx)))
    rows = [dict(r, value="12", resolved=False) if r["name"] == "edges" else r
            for r in sbm_ctx["statistics"]]
    with pytest.raises(AssertionError, match="edges"):
        _assert_no_bare_unresolved_value(_parse(render_report(dict(sbm_ctx, statistics=rows))))


def test_noise_is_not_reported_as_community_structure():
    R = _release(nx.gnp_random_graph(150, 0.1, seed=1), 1.0, seed=1)  # G(n, p): no communities
    ctx = report_context(R)
    assert ctx["communities"]["detected"] is False
    assert "No community structure resolvable" in render_report(ctx)


def test_directed_release_report():
    R = _release(nx.gnp_random_graph(50, 0.1, seed=2, directed=True), 1.0, directed=True)
    page = build_report(R)
    _parse(page)
    assert "undirected releases only" in page


def test_detectability_prefers_the_results_own_flag():
    class Comm:
        eigenvalues = np.array([10.0, 6.0, 1.0])
        noise_edge = 5.0
        modularity = Estimate(0.3, 0.01, feasible_range=(-0.5, 1.0))

    assert detectability(Comm()).detected is True and detectability(Comm()).structural == 1
    Comm.modularity = Estimate(0.01, 0.1, feasible_range=(-0.5, 1.0))
    assert detectability(Comm()).detected is False
    Comm.resolvable = True  # the result's own detectability test wins
    assert detectability(Comm()).source == "the method's detectability test" and detectability(Comm()).detected


@pytest.mark.slow
def test_report_depends_on_the_release_only(sbm_release, sbm_ctx, tmp_path):
    path = tmp_path / "g.dpg"
    sbm_release.save(path)
    a, b = sbm_ctx, report_context(dpgraph.load(path))
    for key in ("statistics", "cut_table", "eps_table", "flip", "realized", "released_edges"):
        assert a[key] == b[key], key


@pytest.mark.slow
def test_cli_report_writes_and_opens(sbm_release, tmp_path, monkeypatch, capsys):
    path = tmp_path / "g.dpg"
    sbm_release.save(path)
    opened = []
    monkeypatch.setattr("webbrowser.open", lambda url: opened.append(url) or True)
    out = tmp_path / "r.html"
    assert main(["report", str(path), "-o", str(out), "--open"]) == 0
    assert out.read_text().startswith("<!DOCTYPE html>")
    assert opened == [out.resolve().as_uri()]
    assert "triangles" in capsys.readouterr().err  # progress on the slow steps
    assert main(["report", str(tmp_path / "missing.dpg"), "-o", str(out)]) == 2
    assert "no such release file" in capsys.readouterr().err


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.slow
@pytest.mark.skipif(_chromium() is None,
                    reason="Chromium is not installed (Debian: apt-get install -y chromium)")
def test_report_renders_in_headless_chromium(sbm_page, tmp_path):
    from matplotlib.image import imread

    page = tmp_path / "r.html"
    page.write_text(sbm_page, encoding="utf-8")
    png = tmp_path / "shot.png"
    cmd = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1100,2400",
           f"--screenshot={png}", page.as_uri()]
    subprocess.run(cmd, check=True, capture_output=True, timeout=120)
    img = imread(png)[..., :3]
    assert img.shape[:2] == (2400, 1100)
    gray = img.mean(axis=2)
    assert gray.std() > 0.05  # not a blank page
    assert (gray < 0.5).mean() > 0.01  # text and figures drawn in dark ink
    header = img[5:40, 50:1000]  # the coloured title bar rendered from the inline CSS
    assert np.abs(header[..., 2] - header[..., 0]).mean() > 0.2
    # nothing runs past the page's column (the widest table included): the right margin
    # below the title bar is background only
    margin = gray[120:, -35:]
    assert (margin < 0.5).mean() < 0.001


def test_degree_band_is_read_from_the_distribution_and_drawn():
    from dpgraph.report import figures
    from dpgraph.report.flags import distribution_band

    class Banded(np.ndarray):  # the shape of a histogram that carries its band
        pass

    h = np.array([0.1, 0.4, 0.3, 0.2])
    d = h.view(Banded)
    d.lower, d.upper = h * 0.5, np.minimum(h * 1.5, 1.0)
    got, band = distribution_band(d)
    assert np.array_equal(got, h) and np.array_equal(band[0], h * 0.5)
    assert distribution_band(h)[1] is None
    d.lower = h[:2]  # a band of the wrong length is not used
    assert distribution_band(d)[1] is None
    released = np.array([1, 2, 2, 3])
    with_band = figures.degree_figure(h, (h * 0.5, h * 1.5), released, 1.0)
    assert "uncertainty band" in with_band
    assert "uncertainty band" not in figures.degree_figure(h, None, released, 1.0)


def test_subsampled_release_uses_its_own_channel():
    from dpgraph.core import count_estimate

    R = _release(nx.gnp_random_graph(120, 0.05, seed=3), 1.0, keep=0.3)
    ctx = report_context(R)
    row = next(r for r in ctx["cut_table"] if r["sides"] == "10 x 10")
    assert float(row["std"]) == pytest.approx(count_estimate(0.0, 100.0, R.channel).std, rel=1e-3)
    assert float(row["std"]) != pytest.approx(cut_std(120, 1.0, (10, 10)), rel=1e-2)
    page = render_report(ctx)
    assert "subsampled release" in page
    _parse(page)


# --------------------------------------------------------------------------- for people
def _text(page: str) -> str:
    """The page's visible text, figures and styles left out."""
    page = re.sub(r"<svg.*?</svg>|<style>.*?</style>", " ", page, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))


def test_numbers_are_written_for_people(sbm_page):
    from dpgraph.report.builder import _fmt

    assert _fmt(10_004_568.2) == "10,004,568" and _fmt(0.011174) == "0.01117"
    assert not re.search(r"\d(\.\d+)?e[+-]\d", _text(sbm_page))  # no 1e+07 anywhere


def test_cut_table_explains_its_sizes_and_stays_feasible(sbm_release, sbm_ctx, sbm_page):
    n = sbm_release.number_of_nodes()
    assert sbm_ctx["cut_table"][-1]["sides"] == f"{n // 2} x {n // 2}"
    for row in sbm_ctx["cut_table"]:
        s = int(row["sides"].split(" x ")[0])
        lo, hi = (float(x.replace(",", "")) for x in row["interval"].strip("[]").split(", "))
        assert 0.0 <= lo <= hi <= s * s  # proper: never below 0 nor above |S||T|
        assert row["relative"].endswith("%")
    text = _text(sbm_page)
    assert "as % of that cut" in text and "the largest balanced cut is" in text
    assert "Another release of this graph at another" in text and "The same release" not in text


def test_citation_has_venue_and_year(sbm_page):
    bib = _text(sbm_page)
    assert re.search(r"booktitle = \{[^}]*Asilomar[^}]*\}", bib)
    assert re.search(r"year = \{20\d\d\}", bib)


class _TooLarge:
    """A release whose triangle statistics and communities do not fit in memory."""

    def __init__(self, R):
        self._R = R

    def __getattr__(self, name):
        if name in ("triangles", "wedges", "transitivity", "average_clustering", "communities"):
            def refuse(*args, **kwargs):
                raise MemoryError("needs 12.0 GiB, 3.1 GiB free")
            return refuse
        return getattr(self._R, name)


def test_one_memory_error_is_said_once(sbm_release):
    ctx = report_context(_TooLarge(sbm_release))
    page = render_report(ctx)
    assert _text(page).count("needs 12.0 GiB, 3.1 GiB free") == 1
    (skip,) = ctx["not_computed"]
    assert skip["what"] == "triangles, wedges, transitivity, average clustering, communities"
    _parse(page)


def test_title_is_the_data_sets_name_when_the_file_keeps_one(tmp_path, capsys):
    edges = tmp_path / "edges.txt"
    edges.write_text("".join(f"{u} {v}\n" for u, v in nx.path_graph(30).edges()))
    assert main(["release", str(edges), "-e", "2", "--nodes", "30", "-o", str(tmp_path / "a.dpg"),
                 "--name", "Toy path"]) == 0
    assert main(["release", str(edges), "-e", "2", "--nodes", "30",
                 "-o", str(tmp_path / "b.dpg")]) == 0
    assert dpgraph.load(tmp_path / "a.dpg").name == "Toy path"
    for name, title in (("a.dpg", "Toy path"), ("b.dpg", "b.dpg")):
        capsys.readouterr()
        assert main(["report", str(tmp_path / name), "-o", str(tmp_path / "r.html"),
                     "--force"]) == 0
        page = (tmp_path / "r.html").read_text()
        assert f"<title>{title}: dpgraph release report</title>" in page
        err = capsys.readouterr().err  # one line per slow step, not two
        steps = [line for line in err.splitlines() if line.strip()]
        assert steps and all(re.fullmatch(r"  .+ \.\.\. \d+\.\d s", line) for line in steps), err
    with pytest.raises(ValueError, match="printable"):
        dpgraph.load(tmp_path / "a.dpg").save(tmp_path / "c.dpg", name="two\nlines")


@pytest.mark.parametrize("keep", [1.0, 0.3])
def test_every_analytic_is_computed_once_per_report(keep, monkeypatch):
    """The report asks each analytic of the release once (the mean degree rescales the edge
    count, the cut table reads the density of the statistics table), and each heavy pass
    (the triangle reductions, the degree deconvolution, the spectrum) runs once."""
    import collections

    from dpgraph.graph.analytics import community, degree_stats, triangle_counting
    from dpgraph.graph.private import PrivateGraph
    from dpgraph.report.builder import report_context

    calls = collections.Counter()

    def counted(owner, name):
        inner = getattr(owner, name)

        def f(*a, **k):
            calls[name] += 1
            return inner(*a, **k)
        monkeypatch.setattr(owner, name, f)

    for name in ("number_of_edges", "density", "triangles", "wedges", "transitivity",
                 "average_clustering", "degree_assortativity", "degree_distribution",
                 "communities"):
        counted(PrivateGraph, name)
    counted(triangle_counting.TriangleCounter, "reductions")
    counted(degree_stats, "_estimate")
    counted(community, "eigen_above")
    G = nx.planted_partition_graph(3, 100, 0.2, 0.01, seed=1)
    kw = {} if keep == 1.0 else {"keep": keep}
    report_context(dpgraph.release(G, 3.0, seed=0, **kw))
    assert calls and max(calls.values()) == 1, calls
    assert calls["reductions"] == calls["_estimate"] == calls["eigen_above"] == 1, calls


def test_report_says_why_communities_were_answered_at_once():
    R = dpgraph.release(nx.karate_club_graph(), 0.1, seed=0)
    page = build_report(R)
    assert "Answered before any computation: no community structure can rise above the noise " \
        "at this epsilon: a larger epsilon would resolve it" in page
    # the planner's account stays behind a details element
    assert "<summary>how this was decided</summary>a graph with at most" in page
    assert "answered without computing" in page
