"""Warnings and errors of dpgraph's privacy machinery."""

from __future__ import annotations

__all__ = [
    "BudgetExceededError",
    "DroppedAttributesWarning",
    "LedgerFileError",
    "NewScopeWarning",
    "SeededReleaseWarning",
]


class SeededReleaseWarning(UserWarning):
    """A release was made with a seed: reproducible, so not for production.

    A seeded release draws from a statistical generator (PCG64).  Whoever
    learns or guesses the seed, or observes enough of the output, can
    reconstruct every flip and undo the privacy of the release.  Use
    ``seed=None`` (the default, a cryptographically secure stream) to
    publish; seeds are for tests, experiments and debugging.  Silence it in
    a test suite with ``filterwarnings = ["ignore::dpgraph.exceptions.SeededReleaseWarning"]``.
    """


class BudgetExceededError(ValueError):
    """A release would spend more privacy budget than the ledger allows.

    Raised *before* any randomness is drawn, so nothing has been released.
    """


class LedgerFileError(ValueError):
    """A privacy-ledger file is missing, unreadable, corrupted or of another format."""


class DroppedAttributesWarning(UserWarning):
    """The input carries edge attributes (weights, labels, extra columns) that were dropped.

    A graph release publishes the presence of each vertex pair only.  Typed
    releases, which publish an edge's value as well, are made with the
    ``edge_attr=`` / ``values=`` arguments of :func:`dpgraph.release`.  The
    warning never quotes an attribute's name or value.
    """


class NewScopeWarning(UserWarning):
    """A ledger charge opens a budget scope the ledger had never charged.

    Scopes are independent budgets: a misspelt scope name would open a fresh
    budget.  The warning lists the scopes the ledger already holds; silence it
    for a scope opened on purpose.
    """
