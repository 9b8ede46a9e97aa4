"""Shared test configuration.

Tests that need the real datasets read them from ``$DPGRAPH_DATA_DIR`` (CI
sets it). When it is unset and a file is not in the user cache, those tests
skip; when it is set, a missing or damaged file fails them (tests/_data.py).
"""

import math
import os
import shutil
import tempfile

import pytest

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


@pytest.fixture(autouse=True)
def _plans_from_the_cost_model(monkeypatch):
    """A plan decides from its cost model, not from a measurement of how fast the machine runs
    now: no test's outcome depends on the load of the machine it runs on.  The tests of the
    measurement itself set ``CALIBRATE_ABOVE`` back (to 0) and fake or make the measurement."""
    from dpgraph.graph.analytics import community_planning, triangle_planning

    monkeypatch.setattr(triangle_planning, "CALIBRATE_ABOVE", math.inf)
    monkeypatch.setattr(community_planning, "CALIBRATE_ABOVE", math.inf)
