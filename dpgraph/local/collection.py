"""The collector in Python: check reports against the public collection, then close it.

:class:`Collection` holds the public description of a collection (vertex
set, epsilon, protocol, degree share), checks every report against it
(:meth:`Collection.check`: the same checks the service makes), keeps one
report a user and turns the reports into a :class:`CollectedGraph`.
:func:`simulate_collection` runs the client for every user of a graph in
one process (experiments and tests).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..core import discrete_laplace, rr_probabilities
from ..exceptions import SeededReleaseWarning
from ..graph import NodeIndex
from . import wire
from .assignment import partners, partners_count
from .client import budget_split, check_protocol, client_report, public_index
from .estimates import CollectedGraph
from .kind import CollectedPairs

__all__ = ["Collection", "ReportRefused", "simulate_collection"]


class ReportRefused(ValueError):
    """A report the collector refuses; ``status`` is the HTTP status the service answers.

    Attributes
    ----------
    status : int
        400 malformed or not for this collection, 403 for another user than
        the token's, 409 a second report of a user, 413 too large.
    """

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class Collection:
    """A collection in memory: add reports, then close it into a release.

    Parameters
    ----------
    nodes : int or collection of nodes
        The public vertex set (labels in canonical order) or its size n.
    epsilon : float
        Each user's budget (as given to :func:`client_report`).
    protocol : {"one", "both"}, default "one"
    degree_share : float in [0, 1), default 0

    Examples
    --------
    >>> import warnings
    >>> from dpgraph.local import client_report
    >>> C = Collection(4, 1.0)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     C.add(client_report(0, [1], 4, 1.0, seed=1))
    >>> R = C.close()
    >>> R.missing_users
    [1, 2, 3]
    """

    def __init__(self, nodes: Any, epsilon: float, protocol: str = "one",
                 degree_share: float = 0.0) -> None:
        self.protocol = check_protocol(protocol)
        self.index: NodeIndex = public_index(nodes)
        self.n = len(self.index)
        eps_bits, eps_degree = budget_split(epsilon, degree_share)
        self.epsilon, self.degree_share = float(epsilon), float(degree_share)
        self.probabilities = rr_probabilities(eps_bits)
        self._laplace = discrete_laplace(eps_degree, 1).numerator if eps_degree > 0 else 0
        self._bits: dict[int, np.ndarray] = {}
        self._degrees: dict[int, int] = {}

    @property
    def max_report_bytes(self) -> int:
        """The largest report of this collection (the service refuses larger bodies)."""
        return wire.report_size(self.n - 1 if self.protocol == "both" else (self.n + 1) // 2,
                                self._laplace > 0)

    def check(self, report: bytes, user: int | None = None) -> wire.WireReport:
        """The decoded report, if it belongs to this collection; else :class:`ReportRefused`.

        ``user`` (a position) is the user the sender authenticated as: a report
        for anyone else is refused (403).  Does not look at who already reported.
        """
        if not isinstance(report, (bytes, bytearray, memoryview)):
            raise TypeError(f"report must be bytes, got {type(report).__name__}")
        if len(report) > self.max_report_bytes:
            raise ReportRefused(f"report: {len(report)} bytes, more than the "
                                f"{self.max_report_bytes} of a report of this collection", 413)
        try:
            r = wire.decode(report)
        except ValueError as exc:
            raise ReportRefused(str(exc)) from None
        if r.protocol != self.protocol or r.n != self.n:
            raise ReportRefused(f"report: for protocol {r.protocol!r} over {r.n} nodes; this "
                                f"collection is protocol {self.protocol!r} over {self.n} nodes")
        if r.user >= self.n:
            raise ReportRefused(f"report: user {r.user} is outside the vertex set (0..{self.n - 1})")
        if user is not None and r.user != user:
            raise ReportRefused("report: its user is not the one its token was issued to", 403)
        if r.epsilon != self.epsilon or r.degree_share != self.degree_share \
                or r.flip_numerator != self.probabilities.flip_numerator \
                or r.laplace_numerator != self._laplace:
            raise ReportRefused("report: its epsilon, degree share or noise numerators are not "
                                "this collection's; the client was given other parameters")
        if r.bits.size != partners_count(r.user, self.n, self.protocol):
            raise ReportRefused(f"report: {r.bits.size} bits, but user {r.user} reports "
                                f"{partners_count(r.user, self.n, self.protocol)} pairs")
        if (r.degree is not None) != (self._laplace > 0):
            raise ReportRefused("report: a degree is sent exactly when degree_share > 0")
        return r

    def add(self, report: bytes) -> None:
        """Check and keep one report; a second report of a user is refused (409)."""
        r = self.check(report)
        if r.user in self._bits:
            raise ReportRefused(f"report: user {r.user} has already reported", 409)
        self._bits[r.user] = r.bits
        if r.degree is not None:
            self._degrees[r.user] = int(r.degree)

    def __len__(self) -> int:
        """How many users have reported."""
        return len(self._bits)

    def close(self, name: str | None = None) -> CollectedGraph:
        """The release of the reports so far; who did not report is public in it.

        Raises
        ------
        ValueError
            If nobody reported.
        """
        if not self._bits:
            raise ValueError("no user has reported; nothing to release")
        n, nw = self.n, (self.n + 63) // 64
        words = np.zeros((n, nw), dtype=np.uint64)
        reported = np.zeros(n, dtype=bool)
        for u, bits in self._bits.items():
            member = np.zeros(64 * nw, dtype=bool)
            member[partners(u, n, self.protocol)[bits]] = True
            words[u] = np.packbits(member, bitorder="little").view(np.uint64)
            reported[u] = True
        degrees = None
        if self._laplace:
            degrees = np.zeros(n, dtype=np.int64)
            for u, d in self._degrees.items():
                degrees[u] = d
        adj = CollectedPairs(n, self.protocol, self.epsilon, self.degree_share, words,
                             reported, degrees)
        return CollectedGraph(adj, self.index, self.probabilities, name=name)

    def __repr__(self) -> str:
        return (f"Collection(protocol={self.protocol!r}, nodes={self.n}, epsilon={self.epsilon:g}, "
                f"degree_share={self.degree_share:g}, reported={len(self)})")


def simulate_collection(G: Any, epsilon: float, protocol: str = "one", degree_share: float = 0.0,
                        dropouts: Iterable[Any] = (), seed: Any = None) -> CollectedGraph:
    """Run :func:`client_report` for every user of ``G`` but the dropouts, and close.

    For experiments and tests: one process plays every device.  ``seed``
    (an int) makes it reproducible (user k's report uses seed + k, a
    :class:`~dpgraph.SeededReleaseWarning` once); None draws every report
    from the secure stream.
    """
    nodes = list(G.nodes)
    C = Collection(nodes, epsilon, protocol, degree_share)
    gone = set(dropouts)
    if seed is not None:
        warnings.warn("simulate_collection with a seed: reproducible, not private",
                      SeededReleaseWarning, stacklevel=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeededReleaseWarning)
        for k, u in enumerate(C.index.nodes):
            if u in gone:
                continue
            C.add(client_report(u, list(G.adj[u]), nodes, epsilon, protocol, degree_share,
                                seed=None if seed is None else int(seed) * 1_000_003 + k))
    return C.close()
