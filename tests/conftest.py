"""Shared test configuration.

Tests that need the real datasets read them from ``$DPGRAPH_DATA_DIR`` (CI
sets it). When it is unset and a file is not in the user cache, those tests
skip; when it is set, a missing or damaged file fails them (tests/_data.py).
"""
