"""A public random split of the vertex pairs, streamed in row blocks.

Community detection finds a partition on one part of the vertex pairs and
scores it on parts it never saw (see :mod:`.community`).  The split is public
randomness, independent of the graph and of the release: pair (i, j), i < j,
gets a uniform 16-bit draw u_ij and belongs to

* the *score* part when u_ij < t1,
* the *select* part when t1 <= u_ij < t2,
* the *find* part otherwise,

so each pair is in a part with an exact dyadic probability (t / 65536), the
probability the estimators use.  The draws of rows [64 b, 64 b + 64) come
from their own generator keyed by (key, b), so any row block can be drawn
again without storing the split: nothing here is n x n.  The parts are used
through two passes over the release:

* :meth:`PairSplit.find_adjacency`: the released adjacency restricted to the
  find part, in the release's own layout (packed bits, or CSR rows);
* :meth:`PairSplit.block_counts`: for labelings of the nodes, the released
  edges and the pairs of the select and score parts between every two
  communities (k x k each), from one pass over row blocks.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..packed import PackedAdjacency, words_per_row
from ..sparse import SparseAdjacency

ROWS = 64  # rows per draw block (fixed: the draws must not depend on memory settings)
_STREAM = 0x5B117  # stream id of the split (public randomness)
_SCALE = 1 << 16


class PairSplit:
    """Split of the pairs of n nodes into find, select and score parts (public randomness).

    Parameters
    ----------
    n : int
        Number of nodes.
    score, select : float
        Wanted fractions of the pairs in the score and select parts (rounded
        to multiples of 2^-16; ``select`` may be 0).
    key : int
        Key of the draws (a seed, or fresh entropy when the seed is None).

    Attributes
    ----------
    score_fraction, select_fraction, find_fraction : float
        The exact probabilities of each part.
    """

    def __init__(self, n: int, score: float, select: float, key: int) -> None:
        self.n = int(n)
        self.key = int(key)
        t1 = min(max(round(score * _SCALE), 1), _SCALE - 2)
        t2 = t1 + (min(max(round(select * _SCALE), 1), _SCALE - 1 - t1) if select > 0 else 0)
        self.t1, self.t2 = t1, t2
        self.score_fraction = t1 / _SCALE
        self.select_fraction = (t2 - t1) / _SCALE
        self.find_fraction = 1.0 - t2 / _SCALE

    def draws(self, i0: int) -> np.ndarray:
        """uint16 draws of rows [i0, i0 + ROWS) (i0 a multiple of ROWS), columns i0..n-1."""
        rows = min(ROWS, self.n - i0)
        rng = np.random.default_rng([self.key, _STREAM, i0 // ROWS])
        return rng.integers(0, _SCALE, size=(rows, self.n - i0), dtype=np.uint16)

    def _find_mask(self, i0: int) -> np.ndarray:
        return self.draws(i0) >= self.t2

    def find_adjacency(self, adjacency: Any) -> Any:
        """The released pairs that fall in the find part, as an undirected adjacency.

        A packed release gives packed words (n^2 / 16 bytes, the size of the
        release itself), a sparse (CSR) release gives CSR rows; any other
        adjacency is read through its row blocks into packed words.
        """
        n = self.n
        if isinstance(adjacency, SparseAdjacency):
            rows, cols = adjacency.edge_array()
            keep = np.zeros(rows.size, dtype=bool)
            starts = np.searchsorted(rows, np.arange(0, n + ROWS, ROWS))
            for b, i0 in enumerate(range(0, n, ROWS)):
                a, z = starts[b], starts[b + 1]
                if z > a:
                    keep[a:z] = self._find_mask(i0)[rows[a:z] - i0, cols[a:z] - i0]
            return SparseAdjacency.from_pairs(rows[keep], cols[keep], n, False)
        nw = words_per_row(n)
        words = getattr(adjacency, "words", None)
        out = np.zeros((n, nw), dtype=np.uint64)
        member = np.zeros((ROWS, 64 * nw), dtype=bool)
        blocks = adjacency.row_blocks(ROWS) if words is None else None
        for i0 in range(0, n, ROWS):
            i1 = min(n, i0 + ROWS)
            member[:] = False
            member[: i1 - i0, i0:n] = self._find_mask(i0)
            if words is None:
                _, bits = next(blocks)
                member[: i1 - i0, :n] &= bits
            packed = np.packbits(member[: i1 - i0], axis=1, bitorder="little").view(np.uint64)
            out[i0:i1] = packed if words is None else (words[i0:i1] & packed)
        return PackedAdjacency(out, n, False)

    def block_counts(self, adjacency: Any, labels: list[np.ndarray],
                     counterfactual: list | None = None, weight: float = 0.0,
                     tick: Any = None) -> dict:
        """Released edges and pairs of the select and score parts between communities.

        Parameters
        ----------
        adjacency : Adjacency
            The whole (undirected) release.
        labels : list of numpy.ndarray
            Labelings 0..k_c - 1 of the n nodes (one per candidate partition).
        counterfactual : list of (rule, X, shift, (size, reach)), optional
            Per labeling, its local rule (labels == rule(X)), the embedding
            X, the move of a row per added finding edge (row i moves by
            ``X[j] * shift`` when pair (i, j) becomes a released edge of the
            finding part), the length of that move per node j and the
            shortest move that could change node i's community (pairs with
            neither end reached are skipped: nothing can change there).
            Each held-out pair then counts with weight 1 - ``weight`` in the
            block of its two nodes' communities and ``weight`` in the block
            they would be in had the pair been a finding edge.
        weight : float
            f alpha, the probability that a true edge is a finding edge.
        tick : callable, optional
            Called before each row block (a time limit's check: it may raise
            to stop the pass; nothing is returned then).

        Returns
        -------
        dict
            ``{part: [(edges, pairs), ...]}`` for part in ("select", "score")
            (parts of fraction 0 left out), one pair of k_c x k_c float64
            matrices per labeling: released edges and pairs of the part
            between communities a and b, counted over ordered pairs (both
            triangles, so the diagonal counts each pair inside twice).
        """
        ks = [int(lab.max()) + 1 for lab in labels]
        if counterfactual is not None:
            ks = [max(k, cf[0].k) for k, cf in zip(ks, counterfactual)]
        parts = [("score", 0, self.t1)]
        if self.t2 > self.t1:
            parts.append(("select", self.t1, self.t2))
        acc = {name: [(np.zeros(k * k), np.zeros(k * k)) for k in ks] for name, _, _ in parts}
        below = ~np.triu(np.ones((ROWS, ROWS), dtype=bool), 1)  # j <= i in the diagonal square
        for i0, bits in adjacency.row_blocks(ROWS):
            if tick is not None:
                tick()
            i1 = i0 + bits.shape[0]
            u = self.draws(i0)
            u[:, : i1 - i0][below[: i1 - i0, : i1 - i0]] = np.iinfo(np.uint16).max  # not pairs
            Yb = bits[:, i0:]
            for name, lo, hi in parts:
                r, c = np.nonzero((u >= lo) & (u < hi) if lo else (u < hi))
                y = Yb[r, c].astype(np.float64)
                i, j = r + i0, c + i0
                for t, (lab, k) in enumerate(zip(labels, ks)):
                    E, P = acc[name][t]
                    code = lab[i] * k + lab[j]
                    P += np.bincount(code, minlength=k * k)
                    E += np.bincount(code, weights=y, minlength=k * k)
                    if counterfactual is None or weight <= 0:
                        continue
                    rule, X, shift, (size, reach) = counterfactual[t]
                    near = (size[j] >= reach[i]) | (size[i] >= reach[j])  # a move could matter
                    ii, jj, yy = i[near], j[near], y[near]
                    if ii.size == 0:
                        continue
                    li, lj = lab[ii], lab[jj]
                    li2, lj2 = rule(X[ii] + X[jj] * shift), rule(X[jj] + X[ii] * shift)
                    moved = (li2 != li) | (lj2 != lj)
                    if moved.any():
                        old, new = (li * k + lj)[moved], (li2 * k + lj2)[moved]
                        ym = yy[moved]
                        P += weight * (np.bincount(new, minlength=k * k)
                                       - np.bincount(old, minlength=k * k))
                        E += weight * (np.bincount(new, weights=ym, minlength=k * k)
                                       - np.bincount(old, weights=ym, minlength=k * k))
        out = {}
        for name, mats in acc.items():
            out[name] = []
            for (E, P), k in zip(mats, ks):
                E, P = E.reshape(k, k), P.reshape(k, k)
                out[name].append((E + E.T, P + P.T))
        return out
