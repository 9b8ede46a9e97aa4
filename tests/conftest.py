"""Shared test configuration.

Tests that need the real datasets read them from ``$DPGRAPH_DATA_DIR`` (CI
sets it). When it is unset and a file is not in the user cache, those tests
skip; when it is set, a missing or damaged file fails them (tests/_data.py).
"""

import os
import shutil
import tempfile

_SESSION_TMP: list[str] = []


def pytest_configure(config):
    """Every temporary folder of the run (tmp_path, doctests' mkdtemp, subprocesses' TMPDIR)
    lives in one folder, removed when the run ends: the suite leaves nothing in the system's."""
    root = tempfile.mkdtemp(prefix="dpgraph-tests-")
    _SESSION_TMP.append(root)
    os.environ["TMPDIR"] = root
    tempfile.tempdir = root


def pytest_unconfigure(config):
    for root in _SESSION_TMP:
        shutil.rmtree(root, ignore_errors=True)
