"""The README runs as written: every Python block in order, and every command line, twice in
one folder."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from dpgraph.cli import build_parser

README = Path(__file__).resolve().parents[1] / "README.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def _blocks(lang: str) -> list[str]:
    return [body for kind, body in FENCE.findall(README.read_text()) if kind == lang]


def test_readme_has_python_and_shell_blocks():
    assert _blocks("python"), "README lost its Python examples"
    assert _blocks("bash"), "README lost its command lines"


def _run_python_blocks(run: int) -> dict:
    namespace: dict = {"__name__": "__readme__"}
    for k, block in enumerate(_blocks("python")):
        try:
            exec(compile(block, f"README.md python block {k + 1}", "exec"), namespace)
        except Exception as exc:  # name the block that failed
            pytest.fail(f"README python block {k + 1} raised {type(exc).__name__} on run "
                        f"{run}: {exc}")
    return namespace


def test_python_blocks_run_in_order_twice_in_one_folder(tmp_path, monkeypatch, capsys):
    # a reader runs the examples again where they ran them first: whatever the first run
    # left in the folder (release files, a ledger) must not make the second one fail
    monkeypatch.chdir(tmp_path)  # the examples may write files: never into the checkout
    first = _run_python_blocks(1)
    left = sorted(p.name for p in tmp_path.iterdir())
    second = _run_python_blocks(2)
    assert sorted(p.name for p in tmp_path.iterdir()) == left
    out = capsys.readouterr().out
    assert out.count("refused:") == 2 and "used up" in out and "smaller epsilon" not in out
    for ns in (first, second):  # the first example's answer is what the text says it is
        est, G, S, T = ns["est"], ns["G"], ns["S"], ns["T"]
        import networkx as nx

        assert est.resolved and abs(est - nx.cut_size(G, S, T)) <= 4 * est.std
        assert est.std == pytest.approx(0.96 * (len(S) * len(T)) ** 0.5, rel=0.01)


def _command_lines() -> list[str]:
    lines = []
    for block in _blocks("bash"):
        for raw in block.splitlines():
            line = raw.split("  #", 1)[0].strip()
            if line and not line.startswith("#"):
                lines.append(line)
    return lines


def test_every_shell_line_is_one_pasteable_command():
    for line in _command_lines():
        words = shlex.split(line, comments=True)
        # no shell pipes, alternations or globs standing in for "one of these"
        assert not any(w in ("|", "||", ";") or ("|" in w and not w.startswith("-"))
                       for w in words), f"not one command: {line}"


def test_every_dpgraph_line_parses():
    parser = build_parser()
    seen = 0
    for line in _command_lines():
        for part in line.split("&&"):
            words = shlex.split(part, comments=True)
            if words and words[0] == "dpgraph":
                parser.parse_args(words[1:])  # SystemExit on a bad line fails the test
                seen += 1
            elif words[:3] == ["python", "-m", "dpgraph"]:
                parser.parse_args(words[3:])
                seen += 1
    assert seen >= 3


def _stand_in_facebook(tmp_path: Path, monkeypatch) -> None:
    """ego-Facebook's name and size (4,039 nodes) on a small random edge list, served from a
    file URL with its own checksum, into an empty cache: the README's fetch runs offline."""
    import gzip
    import hashlib

    import networkx as nx

    from dpgraph import datasets

    G = nx.gnm_random_graph(4039, 8000, seed=1)
    body = gzip.compress("".join(f"{u} {v}\n" for u, v in G.edges()).encode(), mtime=0)
    src = tmp_path / "publisher" / "facebook_combined.txt.gz"
    src.parent.mkdir()
    src.write_bytes(body)
    info = datasets.REGISTRY["facebook"]
    monkeypatch.setitem(datasets.REGISTRY, "facebook", datasets.DatasetInfo(
        name="facebook", filename=info.filename, url=src.as_uri(),
        sha256=hashlib.sha256(body).hexdigest(), description=info.description))
    monkeypatch.delenv("DPGRAPH_DATA_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def _run_shell_line(line: str, capsys) -> tuple[int, str]:
    """One README command line, in this process: dpgraph through its main(), python -c by
    exec; returns the exit code and what went to stderr."""
    from dpgraph import cli

    code = 0
    for part in line.split("&&"):
        words = shlex.split(part, comments=True)
        if words[:1] == ["dpgraph"] or words[:3] == ["python", "-m", "dpgraph"]:
            code = cli.main(words[1:] if words[0] == "dpgraph" else words[3:])
        elif words[:2] == ["python", "-c"]:
            exec(compile(words[2], "README python -c", "exec"), {"__name__": "__readme__"})
        else:  # pip install, pytest: the environment this test already runs in
            assert words[0] in ("pip", "pytest"), f"a README line this test cannot run: {line}"
        if code:
            break
    return code, capsys.readouterr().err


def _experiment(line: str) -> bool:
    return shlex.split(line, comments=True)[1:2] == ["experiment"]


@pytest.mark.parametrize("report", [
    "stub",  # the flow, flags and files; the report's own tests build real ones
    pytest.param("real", marks=pytest.mark.slow),  # four reports of 4,039 nodes: ~40 s of CPU
])
def test_shell_lines_run_twice_in_one_folder(tmp_path, monkeypatch, capsys, report):
    """Every README command runs as pasted, twice in a row in one fresh folder.  The one
    exception is the one the README announces: keygen refuses to overwrite a key.  The
    experiments (minutes to hours each) are only parsed here (test_every_dpgraph_line_parses);
    their own tests run them with --quick."""
    import tempfile
    import webbrowser

    import dpgraph

    if report == "stub":
        import dpgraph.report

        monkeypatch.setattr(dpgraph.report, "build_report",
                            lambda R, **kw: "<html>" + "<p>stand-in</p>" * 1000 + "</html>")
    _stand_in_facebook(tmp_path, monkeypatch)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the demo's plot folder
    opened = []
    monkeypatch.setattr(webbrowser, "open", lambda url, *a, **k: opened.append(url))
    lines = [line for line in _command_lines() if not _experiment(line)]
    assert any(line.startswith("dpgraph release facebook_combined.txt.gz") for line in lines)
    for run in (1, 2):
        for line in lines:
            code, err = _run_shell_line(line, capsys)
            if run == 2 and line.startswith("dpgraph keygen"):
                assert code == 2 and "exists; not overwriting a key" in err
            else:
                assert code == 0, f"run {run}: {line}\n{err}"
    assert len(opened) == 2 and (work / "report.html").stat().st_size > 10_000
    R = dpgraph.load(work / "fb.dpg", verify_key="curator.pub")
    assert R.name == "SNAP ego-Facebook" and R.number_of_nodes() == 4039
    assert dpgraph.PrivacyLedger.open(work / "budget.json").spent == 2.0
    # what the README says of a third run: the ledger refuses, fb.dpg is kept
    release = next(line for line in lines if line.startswith("dpgraph release"))
    before = (work / "fb.dpg").read_bytes()
    code, err = _run_shell_line(release, capsys)
    assert code == 2 and "budget" in err and (work / "fb.dpg").read_bytes() == before


CONCEPTS = README.parent / "docs" / "concepts.md"


def test_concepts_page_is_linked_first_and_its_numbers_are_computed():
    import math

    from dpgraph.core import rr_probabilities

    readme = README.read_text()
    first_link = re.search(r"\]\((docs/[^)]+)\)", readme).group(1)
    assert first_link == "docs/concepts.md"
    design = (README.parent / "docs" / "design.md").read_text()
    glossary = design[design.index("## 4. Glossary"):]
    assert "(concepts.md)" in glossary.split("|")[0]
    text = CONCEPTS.read_text()
    rows = re.findall(r"^\| ([\d.]+) \| ([\d.]+) \| ([\d.]+)% \| ([\d.]+)% \| ([\d.]+)% \|$",
                      text, re.M)
    assert len(rows) >= 4 and "1" in [r[0] for r in rows]
    for eps, flip, *posteriors in rows:
        e = float(eps)
        assert float(flip) == pytest.approx(float(rr_probabilities(e).flip_probability), abs=5e-5)
        for prior, shown in zip((0.5, 0.1, 0.01), posteriors):
            odds = prior / (1 - prior) * math.exp(e)
            digits = len(shown.split(".")[1]) if "." in shown else 0
            assert float(shown) == pytest.approx(100 * odds / (1 + odds), abs=0.51 * 10**-digits)
    assert "73.1%" in text  # the 50% prior at eps = 1, as the report says it
