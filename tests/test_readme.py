"""The README runs as written: every Python block, in order, and every command line parses."""

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
