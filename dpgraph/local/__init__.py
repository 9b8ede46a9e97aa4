"""Collection without a trusted curator: each user randomizes their own row (edge LDP).

Randomized response is the local randomizer of edge local differential
privacy: user i flips their own adjacency row on their own device
(:func:`client_report`) and sends it; the collector never sees a true bit.
:class:`Collection` checks and gathers the reports and closes them into a
:class:`CollectedGraph`, a release whose counts answer over the observed
pairs with exact error bars and say how many pairs nobody reported.  The
service (``dpgraph collect``; :mod:`dpgraph.local.service`, with the
``collect`` extra) does the same over HTTP with per-user tokens and durable
storage.  docs/local-collection.md walks through a deployment.

Protocols: ``"one"`` (each pair reported by one endpoint: the collection is
distributed exactly as the central release, eps-edge-DP centrally and
eps-edge-LDP per user) and ``"both"`` (each endpoint reports: eps-edge-LDP
per user, 2 eps centrally; linear counts have about half the variance).
"""

from ..graph import ReleaseKind, register_kind
from .agreement import ConsistencyCheck, consistency
from .client import client_report
from .collection import Collection, ReportRefused, simulate_collection
from .estimates import CollectedEstimate, CollectedGraph
from .kind import CollectedPairs, MissingPairsError, collected_payload, collected_read
from .tokens import close_collection, issue_tokens, open_store

#: the collected kind's row of the table of release kinds: assembled from the users' reports
#: (no sampler of the curator's), two packed planes of n^2 bits, no analytic capability of
#: the built-in kinds (its estimators are its own)
register_kind(ReleaseKind("collected", "collected", "dense", frozenset(),
                          payload=(collected_payload, collected_read), release_type=CollectedGraph))

__all__ = [
    "CollectedEstimate",
    "CollectedGraph",
    "CollectedPairs",
    "Collection",
    "ConsistencyCheck",
    "MissingPairsError",
    "ReportRefused",
    "client_report",
    "close_collection",
    "consistency",
    "issue_tokens",
    "open_store",
    "simulate_collection",
]
