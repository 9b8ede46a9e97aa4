"""The collected release and its estimators: counts over the observed pairs, said as such.

:class:`CollectedGraph` is a :class:`~dpgraph.PrivateGraph` whose adjacency
is a :class:`~dpgraph.local.kind.CollectedPairs`.  Its counts (cut, cuts,
edges_within, number_of_edges, density, degree, volume) are answered over
the *observed* pairs of the query, and every answer says how many of the
query's pairs were missing (``missing_pairs``): a missing pair is never
imputed.  With per-pair report count k (1, or 2 under protocol "both"), the
answer is

    sum over observed pairs of (mean of the pair's k reports - p') / (1 - 2 p'),

unbiased for the number of edges among the observed pairs, with the exact,
graph-independent variance p'(1 - p') / (1 - 2 p')^2 (n1 + n2 / 2) for n1
pairs reported once and n2 twice.  Both parts go through the core's one
debiasing formula (:func:`dpgraph.core.count_estimate`; the n2 pairs as 2 n2
rows, halved).  Protocol "one" with every user reporting is a central
release: n2 = 0, n1 = every pair, the same numbers as :func:`dpgraph.release`.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..core import Estimate, apply_proper, count_estimate, discrete_laplace
from ..graph import NodeEstimates, PrivateGraph
from .kind import CollectedPairs, MissingPairsError

__all__ = ["CollectedEstimate", "CollectedGraph"]


@dataclass(frozen=True, eq=False)
class CollectedEstimate(Estimate):
    """An :class:`~dpgraph.core.Estimate` of a count over the observed pairs of a query.

    Attributes
    ----------
    observed_pairs : int or numpy.ndarray
        Pairs of the query with at least one report; the count is over these.
    missing_pairs : int or numpy.ndarray
        Pairs of the query nobody reported (their endpoints did not report).
    """

    observed_pairs: Any = 0
    missing_pairs: Any = 0

    def __getitem__(self, i: Any) -> CollectedEstimate:
        item = super().__getitem__(i)
        return replace(item, observed_pairs=np.asarray(self.observed_pairs)[i],
                       missing_pairs=np.asarray(self.missing_pairs)[i])

    def __str__(self) -> str:
        text = super().__str__()
        if self.is_batch or not int(self.missing_pairs):
            return text
        total = int(self.observed_pairs) + int(self.missing_pairs)
        return (f"{text} over {int(self.observed_pairs):,} observed pairs "
                f"({int(self.missing_pairs):,} of {total:,} missing)")


def _combine(channel: Any, sum1: Any, n1: Any, sum2: Any, n2: Any, total: Any,
             proper: bool) -> CollectedEstimate:
    """The count over n1 once-reported and n2 twice-reported pairs (see the module docstring)."""
    n1, n2 = np.asarray(n1, dtype=float), np.asarray(n2, dtype=float)
    once = count_estimate(np.asarray(sum1, dtype=float), n1, channel)
    twice = count_estimate(np.asarray(sum2, dtype=float), 2 * n2, channel)
    raw = np.asarray(once.raw, dtype=float) + np.asarray(twice.raw, dtype=float) / 2
    std = np.sqrt(np.asarray(once.std) ** 2 + np.asarray(twice.std) ** 2 / 4)
    observed = n1 + n2
    scalar = np.ndim(raw) == 0
    pick = float if scalar else (lambda a: np.asarray(a, dtype=float))
    est = CollectedEstimate(
        pick(raw), pick(std), feasible_range=(pick(np.zeros_like(observed)), pick(observed)),
        observed_pairs=(int(observed) if scalar else observed.astype(np.int64)),
        missing_pairs=(int(total - observed) if scalar
                       else (np.asarray(total) - observed).astype(np.int64)))
    return apply_proper(est, proper, step=1.0)


class CollectedGraph(PrivateGraph):
    """A release collected from users' own reports (:mod:`dpgraph.local`).

    Built by :meth:`dpgraph.local.Collection.close` or read by
    :func:`dpgraph.load` from a file of kind ``"collected"``.  ``epsilon`` is
    the epsilon of each reported bit (the randomized response parameter);
    ``local_epsilon`` is each user's whole budget and ``central_epsilon``
    what one edge costs in the collected data as a whole (protocol "both"
    sees each pair twice: twice the bits' epsilon).

    The counts of this class answer over the observed pairs and say how many
    were missing (:class:`CollectedEstimate`).  Other analytics run only when
    the collection is exactly a central release (protocol "one", every user
    reported); otherwise they are refused with a ValueError naming the counts
    that are available.
    """

    def __init__(self, adjacency: CollectedPairs, *args: Any, **kwargs: Any) -> None:
        if not isinstance(adjacency, CollectedPairs):
            raise TypeError("a CollectedGraph is built from a CollectedPairs adjacency")
        super().__init__(adjacency, *args, **kwargs)
        self._pairs = adjacency
        self._vectors: dict[str, np.ndarray] = {}

    # ---- public metadata -----------------------------------------------------------
    @property
    def protocol(self) -> str:
        """"one" (each pair reported by one endpoint) or "both"."""
        return self._pairs.protocol

    @property
    def local_epsilon(self) -> float:
        """Each user's whole budget: every report is local_epsilon-edge-LDP."""
        return self._pairs.local_epsilon

    @property
    def degree_share(self) -> float:
        """The part of local_epsilon each user spent on a noisy degree."""
        return self._pairs.degree_share

    @property
    def central_epsilon(self) -> float:
        """What one edge costs in the whole collection (see :func:`~dpgraph.local.kind.central_epsilon`)."""
        from .kind import central_epsilon

        return central_epsilon(self.protocol, self.local_epsilon, self.degree_share)

    @property
    def missing_users(self) -> list:
        """The users (labels) who did not report: public, as who reported is."""
        nodes = self.node_index.nodes
        return [nodes[i] for i in self._pairs.missing_users.tolist()]

    @property
    def complete(self) -> bool:
        """Whether the collection is exactly a central release (every analytic runs)."""
        return self._pairs.complete

    def number_of_released_edges(self) -> int:
        """The 1 bits reported (a pair reported twice counts twice); raw, biased."""
        return self._pairs.reports.number_of_edges()

    def released_degrees(self) -> np.ndarray:
        """Raw released degrees: those of the central release when complete, else refused."""
        return np.asarray(self._pairs.degrees(), dtype=np.int64)

    def __repr__(self) -> str:
        return (f"CollectedGraph(protocol={self.protocol!r}, nodes={self.number_of_nodes()}, "
                f"local_epsilon={self.local_epsilon:g}, central_epsilon={self.central_epsilon:g}, "
                f"reported={self.number_of_nodes() - len(self._pairs.missing_users)}, "
                f"missing_users={len(self._pairs.missing_users)})")

    # ---- counts of the planes --------------------------------------------------------
    def _split(self, s: np.ndarray, t: np.ndarray | None) -> tuple[int, int, int, int]:
        """(sum1, n1, sum2, n2) over S x T (within S when t is None)."""
        X, O, rep = self._pairs.reports, self._pairs.observed, self._pairs.reported

        def both_ways(A: Any, a: np.ndarray, b: np.ndarray | None) -> int:
            if b is None:
                return A.within_count(a) if a.size else 0
            if not (a.size and b.size):
                return 0
            return A.cut_count(a, b) + A.cut_count(b, a)

        total, reports = both_ways(X, s, t), both_ways(O, s, t)
        if self.protocol == "one":
            return total, reports, 0, 0
        sa = s[rep[s]]
        ta = None if t is None else t[rep[t]]
        sum2 = both_ways(X, sa, ta)
        n2 = sa.size * (sa.size - 1) // 2 if ta is None else sa.size * ta.size
        return total - sum2, reports - 2 * n2, sum2, n2

    def _count(self, s: np.ndarray, t: np.ndarray | None, proper: bool) -> CollectedEstimate:
        sum1, n1, sum2, n2 = self._split(s, t)
        pairs = s.size * (s.size - 1) // 2 if t is None else s.size * t.size
        return _combine(self.channel, sum1, n1, sum2, n2, pairs, proper)

    def _vector(self, key: str) -> np.ndarray:
        """Row (``out``) and column (``in``) sums of X and O, and their sums against reporters."""
        if key not in self._vectors:
            plane, name = key.split(":")
            A = self._pairs.reports if plane == "X" else self._pairs.observed
            ones = np.ones(self.number_of_nodes())
            x = ones if name in ("out", "in") else self._pairs.reported.astype(float)
            self._vectors[key] = np.rint(A.matvec(x, transpose=name.startswith("in"))) \
                .astype(np.int64)
        return self._vectors[key]

    def _degree_counts(self, proper: bool) -> CollectedEstimate:
        n = self.number_of_nodes()
        total = self._vector("X:out") + self._vector("X:in")
        reports = self._vector("O:out") + self._vector("O:in")
        if self.protocol == "one":
            return _combine(self.channel, total, reports, 0 * total, 0 * total,
                            np.full(n, n - 1), proper)
        rep = self._pairs.reported
        sum2 = np.where(rep, self._vector("X:outA") + self._vector("X:inA"), 0)
        n2 = np.where(rep, int(rep.sum()) - 1, 0)
        return _combine(self.channel, total - sum2, reports - 2 * n2, sum2, n2,
                        np.full(n, n - 1), proper)

    # ---- the counts: the analytics that handle missing pairs and two reports -------------
    def number_of_edges(self, proper: bool = True) -> CollectedEstimate:
        """Edges among the observed pairs, with the exact std and the missing pairs counted.

        Examples
        --------
        >>> import networkx as nx, warnings
        >>> from dpgraph.local import simulate_collection
        >>> G = nx.gnp_random_graph(40, 0.2, seed=1)
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     R = simulate_collection(G, 2.0, protocol="both", dropouts=[0, 1], seed=0)
        >>> e = R.number_of_edges()
        >>> e.missing_pairs
        1
        """
        return self._count(np.arange(self.number_of_nodes()), None, proper)

    def density(self, proper: bool = True) -> CollectedEstimate:
        """Edges per observed pair, in [0, 1] (the count divided by the observed pairs)."""
        e = self.number_of_edges(proper=False)
        m = max(int(e.observed_pairs), 1)
        est = CollectedEstimate(float(e.raw) / m, float(e.std) / m, feasible_range=(0.0, 1.0),
                                observed_pairs=e.observed_pairs, missing_pairs=e.missing_pairs)
        return apply_proper(est, proper)

    def cut(self, S: Iterable[Hashable], T: Iterable[Hashable] | None = None,
            proper: bool = True) -> CollectedEstimate:
        """Edges between disjoint S and T among their observed pairs (T: the complement of S).

        ``missing_pairs`` says how many of the |S||T| pairs nobody reported.
        """
        s, t = self.cut_positions(S, T)
        return self._count(s, t, proper)

    def cuts(self, pairs: Sequence[tuple[Iterable[Hashable], Iterable[Hashable]]],
             proper: bool = True) -> CollectedEstimate:
        """Many cut queries; a batch :class:`CollectedEstimate` (``cuts(q)[k] == cut(*q[k])``)."""
        if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Sequence) or not pairs:
            raise ValueError("pairs must be a non-empty sequence of (S, T) pairs")
        parts = [self._split(*self.cut_positions(S, T)) + (len(self.positions(S, "S"))
                 * len(self.cut_positions(S, T)[1]),) for S, T in pairs]
        a = np.array(parts, dtype=np.int64)
        return _combine(self.channel, a[:, 0], a[:, 1], a[:, 2], a[:, 3], a[:, 4], proper)

    def edges_within(self, S: Iterable[Hashable], proper: bool = True) -> CollectedEstimate:
        """Edges with both ends in S, among its observed pairs."""
        return self._count(self.positions(S, "S"), None, proper)

    def degree(self, nbunch: Any = None, proper: bool = True) -> Any:
        """Degree over each node's observed pairs (``missing_pairs``: its pairs nobody reported).

        A node, or None / an iterable for a per-node view as ``PrivateGraph.degree``.
        """
        est = self._degree_counts(proper)
        nodes = self.node_index.nodes
        if nbunch is None:
            return NodeEstimates(nodes, est)
        if nbunch in self.node_index:
            return est[int(self.positions([nbunch], "nbunch")[0])]
        idx = self.positions(nbunch, "nbunch")
        return NodeEstimates(tuple(nodes[i] for i in idx), est[idx])

    def volume(self, S: Iterable[Hashable], proper: bool = True) -> CollectedEstimate:
        """Degree sum of S over observed pairs: 2 x (edges within S) + edges from S to the rest.

        ``observed_pairs`` and ``missing_pairs`` count the pairs touching S.
        """
        s = self.positions(S, "S")
        rest = np.setdiff1d(np.arange(self.number_of_nodes()), s)
        within = self._count(s, None, False)
        parts = [(2.0, within)]
        if rest.size:
            parts.append((1.0, self._count(s, rest, False)))
        raw = sum(c * float(e.raw) for c, e in parts)
        std = float(np.sqrt(sum((c * float(e.std)) ** 2 for c, e in parts)))
        observed = sum(int(e.observed_pairs) for _, e in parts)
        missing = sum(int(e.missing_pairs) for _, e in parts)
        high = sum(c * int(e.observed_pairs) for c, e in parts)
        out = CollectedEstimate(raw, std, feasible_range=(0.0, float(high)),
                                observed_pairs=observed, missing_pairs=missing)
        return apply_proper(out, proper, step=1.0)

    def noisy_degrees(self) -> Any:
        """Each reporter's own noisy degree (discrete Laplace, exact std); NaN for non-reporters.

        Unbiased for the user's degree over *all* their pairs, observed or not.

        Raises
        ------
        ValueError
            When the collection carried no degrees (degree_share was 0).
        """
        if self._pairs.noisy_degrees is None:
            raise MissingPairsError("no degrees were collected (degree_share was 0)")
        lap = discrete_laplace(self.local_epsilon * self.degree_share, 1)
        rep = self._pairs.reported
        value = np.where(rep, self._pairs.noisy_degrees.astype(float), np.nan)
        n = self.number_of_nodes()
        return Estimate(value, np.where(rep, lap.std, np.nan),
                        feasible_range=(np.zeros(n), np.full(n, n - 1.0)))

    def full_degrees(self) -> Estimate:
        """Each node's degree over *all* its pairs, from every channel that covers them all.

        A node whose pairs were all observed has the randomized-response
        count (exact variance v_R); a reporter has its noisy degree (exact
        variance v_L, when degrees were collected).  With both, the answer is
        their inverse-variance combination (v_L x + v_R y) / (v_R + v_L), of
        variance v_R v_L / (v_R + v_L): unbiased, exact, smaller than either.
        With one, that one; with neither (a non-reporter with missing pairs)
        NaN, never an imputed value.  Under protocol "both" every reporter's
        pairs are observed, so every reporter combines.

        Returns
        -------
        Estimate
            A batch in ``nodes`` order, not projected (``proper`` False).
        """
        n = self.number_of_nodes()
        rr = self._degree_counts(False)
        complete = np.asarray(rr.missing_pairs) == 0
        x, vx = np.asarray(rr.raw, dtype=float), np.asarray(rr.std, dtype=float) ** 2
        value, var = np.where(complete, x, np.nan), np.where(complete, vx, np.nan)
        if self._pairs.noisy_degrees is not None:
            lap = discrete_laplace(self.local_epsilon * self.degree_share, 1)
            rep = self._pairs.reported
            y, vy = self._pairs.noisy_degrees.astype(float), float(lap.variance)
            both = complete & rep
            w = vy / (vx + vy)
            value = np.where(both, w * x + (1 - w) * y, np.where(rep & ~complete, y, value))
            var = np.where(both, vx * vy / (vx + vy), np.where(rep & ~complete, vy, var))
        return Estimate(value, np.sqrt(var), feasible_range=(np.zeros(n), np.full(n, n - 1.0)))

    def density_between(self, *args: Any, **kwargs: Any) -> Any:
        """Refused unless complete: use ``R.cut(S, T)`` and its ``observed_pairs``."""
        if not self.complete:
            raise MissingPairsError(self._pairs.refusal())
        return super().density_between(*args, **kwargs)
