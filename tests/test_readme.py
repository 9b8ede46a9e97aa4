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


def test_python_blocks_run_in_order(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the examples may write files: never into the checkout
    namespace: dict = {"__name__": "__readme__"}
    for k, block in enumerate(_blocks("python")):
        try:
            exec(compile(block, f"README.md python block {k + 1}", "exec"), namespace)
        except Exception as exc:  # name the block that failed
            pytest.fail(f"README python block {k + 1} raised {type(exc).__name__}: {exc}")


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
