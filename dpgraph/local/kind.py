"""The collected release as data: who reported, what they reported, and its file payload.

A collection is kept as two directed packed 0/1 matrices over the public
positions (:class:`~dpgraph.graph.PackedAdjacency`, one bit a pair, n^2 / 8
bytes each):

* X, the reports: X[k, j] is user k's randomized bit of the pair {k, j}
  (0 where k did not report, or does not report that pair);
* O, the observation plane: O[k, j] = 1 when user k reported and k reports
  the pair {k, j} under the protocol.  O is public (who reported is public):
  it is derived from the protocol and the list of reporters, never stored.

Every count the estimators need is a count of these two matrices over S x T
or within S (:mod:`dpgraph.local.estimates`).  :class:`CollectedPairs` is the
release's adjacency: it carries the planes and the file payload (kind
``"collected"``), and it answers the adjacency protocol itself only when the
collection is exactly a central release (protocol "one", everyone reported);
otherwise every raw read is refused, so an analytic that assumes one
randomized bit on every pair cannot run on it by mistake.

File payload (after the common header of docs/file-format.md): the words of
X (n rows of ceil(n / 64) little-endian uint64, bit j of row k is X[k, j]),
then the reporters as a packed bit vector (ceil(n / 64) words), then, when a
degree was collected, n int64 noisy degrees (0 for a user who did not report).
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

from ..core import discrete_laplace, rr_probabilities
from ..graph import PackedAdjacency
from .assignment import partners

__all__ = ["CollectedPairs", "MissingPairsError", "central_epsilon", "collected_payload",
           "collected_read"]


class MissingPairsError(ValueError):
    """An analytic that needs one randomized bit on every pair, on a collection without that."""


def _wpr(n: int) -> int:
    return (int(n) + 63) // 64


def _pack_row(n: int, columns: np.ndarray, values: np.ndarray | None = None) -> np.ndarray:
    """One packed row of n bits: ``columns`` set (where ``values`` is True, if given)."""
    member = np.zeros(64 * _wpr(n), dtype=bool)
    member[columns if values is None else columns[values]] = True
    return np.packbits(member, bitorder="little").view(np.uint64)


def central_epsilon(protocol: str, epsilon: float, degree_share: float) -> float:
    """What one edge costs centrally: the bits it is seen in plus both endpoints' degrees.

    Examples
    --------
    >>> central_epsilon("one", 1.0, 0.0), central_epsilon("both", 1.0, 0.0)
    (1.0, 2.0)
    >>> central_epsilon("one", 1.0, 0.25)
    1.25
    """
    bits = epsilon * (1.0 - degree_share)
    return (1 if protocol == "one" else 2) * bits + 2 * epsilon * degree_share


class CollectedPairs:
    """The adjacency of a collected release: planes X and O, the reporters, the degrees.

    Parameters
    ----------
    n : int
    protocol : {"one", "both"}
    epsilon, degree_share : float
        The users' budget and its degree share (public).
    words : numpy.ndarray of uint64, shape (n, ceil(n / 64))
        The packed reports X (taken as is).
    reported : numpy.ndarray of bool, shape (n,)
    degrees : numpy.ndarray of int64, shape (n,), optional
        Noisy degrees (when degree_share > 0).
    """

    file_kind = "collected"
    directed = False

    def __init__(self, n: int, protocol: str, epsilon: float, degree_share: float,
                 words: np.ndarray, reported: np.ndarray, degrees: np.ndarray | None) -> None:
        self.n = int(n)
        self.protocol = protocol
        self.local_epsilon = float(epsilon)
        self.degree_share = float(degree_share)
        self.reported = np.asarray(reported, dtype=bool)
        self.noisy_degrees = degrees
        self.reports = PackedAdjacency(words, self.n, True)
        self.observed = PackedAdjacency(self._observation_words(), self.n, True)
        self.full = self._central() if protocol == "one" and self.reported.all() else None

    # ---- the planes ---------------------------------------------------------------
    def _observation_words(self) -> np.ndarray:
        out = np.zeros((self.n, _wpr(self.n)), dtype=np.uint64)
        for k in np.flatnonzero(self.reported).tolist():
            out[k] = _pack_row(self.n, partners(k, self.n, self.protocol))
        return out

    def _central(self) -> PackedAdjacency:
        """Protocol one, complete: the undirected upper-triangle words of X | X^T."""
        n = self.n
        dense = np.unpackbits(self.reports.words.view(np.uint8), axis=1, bitorder="little",
                              count=n).astype(bool)
        dense |= dense.T
        dense &= np.triu(np.ones((n, n), dtype=bool), 1)
        pad = np.zeros((n, 64 * _wpr(n)), dtype=bool)
        pad[:, :n] = dense
        return PackedAdjacency(np.packbits(pad, axis=1, bitorder="little").view(np.uint64).copy(),
                               n, False)

    @property
    def complete(self) -> bool:
        """Whether this is exactly a central release (protocol one, every user reported)."""
        return self.full is not None

    @property
    def missing_users(self) -> np.ndarray:
        """Positions of the users who did not report."""
        return np.flatnonzero(~self.reported)

    # ---- the adjacency protocol: the central release's, or refused --------------------
    def refusal(self) -> str:
        why = (f"{self.missing_users.size} of {self.n} users did not report, so some pairs "
               "were never observed" if self.protocol == "one"
               else "protocol 'both' reports each pair twice")
        return (f"this collected release cannot answer it: {why}. It answers counts over its "
                "observed pairs: R.cut, R.cuts, R.edges_within, R.number_of_edges, R.density, "
                "R.degree, R.volume (each says how many pairs were missing)")

    def _adj(self) -> PackedAdjacency:
        if self.full is None:
            raise MissingPairsError(self.refusal())
        return self.full

    @property
    def nbytes(self) -> int:
        return self.reports.nbytes * 2

    def number_of_edges(self) -> int:
        return self._adj().number_of_edges()

    def degrees(self) -> np.ndarray:
        return self._adj().degrees()

    def cut_count(self, s: np.ndarray, t: np.ndarray) -> int:
        return self._adj().cut_count(s, t)

    def cut_counts(self, sides: Any) -> np.ndarray:
        return self._adj().cut_counts(sides)

    def membership_cut_counts(self, member: np.ndarray) -> np.ndarray:
        return self._adj().membership_cut_counts(member)

    def within_count(self, s: np.ndarray) -> int:
        return self._adj().within_count(s)

    def row_blocks(self, block: int = 2048) -> Any:
        return self._adj().row_blocks(block)

    def edge_array(self) -> tuple[np.ndarray, np.ndarray]:
        return self._adj().edge_array()

    def matmat(self, X: np.ndarray, transpose: bool = False) -> np.ndarray:
        return self._adj().matmat(X, transpose)

    def matvec(self, x: np.ndarray, transpose: bool = False) -> np.ndarray:
        return self._adj().matvec(x, transpose)

    @property
    def words(self) -> np.ndarray:
        return self._adj().words

    def __repr__(self) -> str:
        return (f"CollectedPairs(protocol={self.protocol!r}, n={self.n}, "
                f"reported={int(self.reported.sum())})")


# ------------------------------------------------------------------------------ file payload
def collected_payload(adj: CollectedPairs) -> tuple[dict, np.ndarray]:
    """(header fields, payload bytes) of the ``"collected"`` file kind."""
    words = np.ascontiguousarray(adj.reports.words)
    rep = _pack_row(adj.n, np.flatnonzero(adj.reported))
    parts = [words.reshape(-1), rep]
    lap = None
    if adj.degree_share > 0:
        lap = discrete_laplace(adj.local_epsilon * adj.degree_share, 1)
        parts.append(np.asarray(adj.noisy_degrees, dtype=np.int64).view(np.uint64))
    payload = np.concatenate(parts)
    if sys.byteorder != "little":  # pragma: no cover - big-endian hosts
        payload = payload.byteswap()
    meta = {"words_per_row": _wpr(adj.n), "word_bits": 64, "bit_order": "lsb0",
            "collection": {
                "protocol": adj.protocol,
                "local_epsilon": adj.local_epsilon,
                "degree_share": adj.degree_share,
                "laplace_numerator": None if lap is None else str(lap.numerator),
                "central_epsilon": central_epsilon(adj.protocol, adj.local_epsilon,
                                                   adj.degree_share),
                "reported": int(adj.reported.sum()),
                "missing_users": adj.missing_users.tolist(),
            }}
    return meta, payload.view(np.uint8)


def collected_read(buf: np.ndarray, header: dict, n: int, directed: bool) -> CollectedPairs:
    """Check and rebuild a ``"collected"`` payload (every check refuses with a ValueError)."""
    info = header.get("collection")
    nw = _wpr(n)
    if directed or not isinstance(info, dict) or header.get("words_per_row") != nw \
            or header.get("word_bits") != 64 or header.get("bit_order") != "lsb0":
        raise ValueError("collected payload: layout fields do not match n; the file is corrupted")
    protocol, eps, share = info.get("protocol"), info.get("local_epsilon"), info.get("degree_share")
    if protocol not in ("one", "both") or type(eps) is not float or type(share) is not float \
            or not (0 < eps < math.inf and 0.0 <= share < 1.0):
        raise ValueError("collected payload: protocol, local_epsilon or degree_share is invalid")
    if header.get("epsilon") != eps * (1.0 - share) \
            or rr_probabilities(eps * (1.0 - share)).flip_numerator \
            != int(header.get("flip_numerator", "0")):
        raise ValueError("collected payload: the bits' epsilon is not local_epsilon * "
                         "(1 - degree_share); the file is corrupted")
    has_degree = share > 0
    want = 8 * (n * nw + nw + (n if has_degree else 0))
    if buf.nbytes != want:
        raise ValueError("collected payload: size does not match n; the file is corrupted")
    flat = buf.view("<u8").astype(np.uint64, copy=False)
    words = flat[: n * nw].reshape(n, nw).copy()
    reported = np.unpackbits(flat[n * nw: n * nw + nw].view(np.uint8), bitorder="little",
                             count=n).astype(bool)
    missing = info.get("missing_users")
    if not isinstance(missing, list) or missing != np.flatnonzero(~reported).tolist() \
            or info.get("reported") != int(reported.sum()):
        raise ValueError("collected payload: the header's missing users disagree with the "
                         "payload; the file is corrupted")
    if info.get("central_epsilon") != central_epsilon(protocol, eps, share):
        raise ValueError("collected payload: central_epsilon disagrees with the protocol")
    degrees = None
    if has_degree:
        lap = discrete_laplace(eps * share, 1)
        if info.get("laplace_numerator") != str(lap.numerator):
            raise ValueError("collected payload: the degree noise is not the certified one")
        degrees = flat[n * nw + nw:].view(np.int64).copy()
    elif info.get("laplace_numerator") is not None:
        raise ValueError("collected payload: a degree noise without a degree share")
    adj = CollectedPairs(n, protocol, eps, share, words, reported, degrees)
    if np.any(words & ~np.asarray(adj.observed.words)):
        raise ValueError("collected payload: a report bit outside the pairs its user reports; "
                         "the file is corrupted")
    return adj
