"""Sphinx configuration: the API reference, built from the docstrings."""

import os
import sys

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))

project = "dpgraph"
author = "the dpgraph developers"
extensions = ["sphinx.ext.autodoc", "sphinx.ext.autosummary", "numpydoc"]
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
html_theme = "alabaster"
exclude_patterns = ["_build"]


import re  # noqa: E402

_LITERAL = re.compile(r"(``.*?``)")


def _plain_bars(app, what, name, obj, options, lines):
    """Docstrings write set sizes as |S|: escape bars outside ``literals`` for reST."""
    for k, line in enumerate(lines):
        parts = _LITERAL.split(line)
        lines[k] = "".join(p if p.startswith("``") else p.replace("|", r"\|") for p in parts)


def setup(app):
    app.connect("autodoc-process-docstring", _plain_bars)
