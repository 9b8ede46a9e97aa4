"""The API reference shows the contract: every public name and every PrivateGraph method has a page."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import dpgraph

API = Path(__file__).resolve().parents[1] / "docs" / "api"
_DIRECTIVE = re.compile(r"^\.\. auto(?:function|class|exception|data|module)::\s+(\S+)", re.M)


def _documented() -> set[str]:
    return {m for f in API.glob("*.rst") for m in _DIRECTIVE.findall(f.read_text())}


def _public_names() -> list[str]:
    return [n for n in dpgraph.__all__ if not n.startswith("__")]


def _private_graph_methods() -> list[str]:
    return sorted(n for n in dir(dpgraph.PrivateGraph) if not n.startswith("_"))


def test_every_public_name_has_a_directive():
    documented = _documented()
    missing = [n for n in _public_names() if f"dpgraph.{n}" not in documented]
    assert missing == []


def test_private_graph_is_documented_with_all_its_members_grouped_by_task():
    text = (API / "release.rst").read_text()
    listed = re.findall(r"^\.\. auto(?:method|attribute):: dpgraph\.PrivateGraph\.(\w+)", text, re.M)
    # every member once, under one task, and the summary tables on top name them
    assert sorted(listed) == _private_graph_methods() and len(set(listed)) == len(listed)
    summary = set(re.findall(r"^   ~dpgraph\.PrivateGraph\.(\w+)", text, re.M))
    assert summary and summary <= set(listed)


def test_no_internal_module_is_documented_as_public():
    internal = [m for m in _documented() if any(p.startswith("_") for p in m.split("."))
                or m.split(".")[1:2] in (["cli"], ["commands"], ["cli_types"], ["planning_cli"])]
    assert internal == []


@pytest.mark.slow
def test_built_reference_has_a_page_for_every_public_name_and_method(tmp_path):
    pytest.importorskip("sphinx")
    pytest.importorskip("numpydoc")
    out = tmp_path / "html"
    subprocess.run([sys.executable, "-m", "sphinx", "-q", "-b", "html", str(API), str(out)],
                   check=True, capture_output=True)
    html = "".join(p.read_text() for p in out.glob("*.html"))
    ids = set(re.findall(r'id="([^"]+)"', html))
    modules = {n for n in _public_names() if isinstance(getattr(dpgraph, n), type(dpgraph))}
    want = [f"module-dpgraph.{n}" if n in modules else f"dpgraph.{n}" for n in _public_names()]
    want += [f"dpgraph.PrivateGraph.{m}" for m in _private_graph_methods()]
    assert [w for w in want if w not in ids] == []
    shutil.rmtree(out)
