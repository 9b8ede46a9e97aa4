"""Released common neighbours without n x n floats: integer row reductions of C = Y Y.

Every triangle and wedge statistic of :mod:`.motifs` is a closed form in the
released degrees d and, per row i, eight integer sums over the released
common-neighbour counts c_ij (``REDUCTIONS``):

    C1 = sum_{j != i} c_ij,      Cd = sum_{j != i} c_ij d_j,     A2 = sum_{j != i} c_ij^2,
    E1 = sum_{j in N(i)} c_ij,   Ed = sum_{j in N(i)} c_ij d_j,  E2 = sum_{j in N(i)} c_ij^2,
    N1 = sum_{j in N(i)} d_j,    N2 = sum_{j in N(i)} d_j^2

(N(i) the released neighbours of i; E1 is twice the released triangles at i).
They are integers, so both ways of computing them give identical results:

``"sparse"``
    2-hop counting on the symmetric CSR of the released graph: per row, each
    neighbour's neighbours are counted once, in sum_{k in N(i)} d_k steps;
    sum_k d_k^2 steps for all rows.  Memory: the CSR (8 bytes a released
    edge) and an n-array per thread.  The path for sparse releases and for
    dense releases at large epsilon (p' of a few percent).
``"packed"``
    AND-popcount of the packed rows of the symmetric released matrix (one
    bit per pair, n ceil(n/64) words, built from the upper-triangular store
    by 64 x 64 bit transposes), each unordered pair looked at once.  Three
    of the eight sums range over every j, but C1 = N1 - d_i and Cd =
    sum_{k in N(i)} N1_k - d_i^2 are closed forms: only A2 needs c_ij for
    the pairs that are not released edges.  Up to ``2 PROBE_PER_ROW`` nodes every pair is ANDed and A2 is
    exact; above, each non-edge pair is probed independently with
    probability f = PROBE_PER_ROW / n (a seeded hash of the pair: public
    randomness, the same pair probed whichever row asks) and the probed
    pairs' sums are expanded by 1 / f (Horvitz-Thompson: unbiased).  A2
    enters only the linear Hoeffding term of the variance, sum_j s_ij
    L^2_ij, a polynomial in (c_ij, d_j) whose large terms cancel (L^2
    estimates a squared true count from squared noisy ones): so the
    non-neighbours' part of that term is expanded from the same probed pairs
    with all its monomials (``PROBED``: the sums of 1, d_j, d_j^2, c_ij and
    c_ij d_j over them, columns 8-12 of the reductions, A2 the sixth), and
    the cancellation happens inside the sample.  T^ and every other term
    use the exact sums.  So the pass ANDs the released edges and the probed
    pairs, (m' + about PROBE_PER_ROW n / 2) x ceil(n / 64) word operations,
    against n (n - 1) / 2 x ceil(n / 64) for every pair: 3.3 times fewer at
    10^5 nodes and epsilon = 1 (density 0.27), more for sparser releases.
    Memory: the symmetric words (the size of the release) plus n x 104
    bytes per thread.

Both can be run on a subset of rows (sampled rows; the packed path then ANDs
each sampled row with its neighbours' and its probed partners' rows).  :func:`cost` predicts the seconds and
bytes of either path from n, the released degrees and the edge count: operation
counts times constants measured on a quiet 2-core AMD EPYC (AVX2) with numba,
scaled by the number of numba threads, never by a speed measured at call time
(the prediction does not move with the machine's load).  Without numba the same integers come
from numpy/scipy (float32 products of unpacked row blocks, exact below 2^24,
and sparse products), about ten times slower; the cost model says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._numba import load_kernels
from ..._numba import threads as numba_threads
from ..kinds import offers
from ..packed import words_per_row
from ._shared import _cache, _observed_degrees, progress_range

__all__ = ["PROBED", "PROBE_PER_ROW", "REDUCTIONS", "Cost", "Probe", "TriangleCounter"]

REDUCTIONS = ("C1", "Cd", "A2", "E1", "Ed", "E2", "N1", "N2")
#: the probed non-neighbours' sums of 1, d_j, d_j^2, c_ij and c_ij d_j, expanded (probed passes)
PROBED = ("P1", "Px", "Pxx", "Pc", "Pcx")
#: expected probed pairs a row in the packed pass (every pair up to 2 times this many nodes)
PROBE_PER_ROW = 4096

#: seconds per unit of work per thread, numba kernels (measured, rounded up)
_SEC_WORD = 0.65e-9      # one 64-bit AND-popcount in the packed pass (AVX2, 2.2-2.8 GHz)
_SEC_WEDGE = 6e-9        # one 2-hop step of the sparse pass
_SEC_SYM_WORD = 25e-9    # building the symmetric words, per word of the release
_SEC_BIT = 3e-9          # iterating one set bit (CSR from bits, neighbour sums)
_SEC_PAIR_BIT = 1e-9     # looking at one pair's bit in the packed pass (ANDed or not)
#: the numpy/scipy fallbacks, per unit (single-threaded BLAS/scipy)
_NP_WORD = 4e-9
_NP_WEDGE = 80e-9
_GROUP = 32              # rows ANDed together against each streamed row (they stay in L2)
_USE_NUMBA = True        # tests switch it off to compare the numpy path


def _kernels() -> Any:
    if not _USE_NUMBA:
        return None
    k = load_kernels("dpgraph.graph.analytics._trikernel",
                     ("symmetric_words", "packed_rows", "packed_all_rows", "csr_rows",
                      "packed_to_csr", "bit_neighbour_sums", "csr_neighbour_sums", "csr_matmul",
                      "bit_matmul", "packed_degrees"))
    names = ("sym", "rows", "all", "csr", "to_csr", "nsums", "csr_nsums", "csr_mm", "bit_mm",
             "degrees")
    return None if k is None else dict(zip(names, k))


def _threads(kernels: Any) -> int:
    return 1 if kernels is None else numba_threads()


class _serial:
    """Run numba kernels on one thread inside the block when ``small`` (predicted < 50 ms).

    Waking a second thread costs milliseconds (tens on a loaded machine), more
    than a small pass itself.
    """

    def __init__(self, kernels: Any, small: bool) -> None:
        self.on = kernels is not None and small
        self.before = 1

    def __enter__(self) -> None:
        if self.on:
            import numba

            self.before = numba.get_num_threads()
            numba.set_num_threads(1)

    def __exit__(self, *exc: Any) -> None:
        if self.on:
            import numba

            numba.set_num_threads(self.before)


@dataclass(frozen=True)
class Probe:
    """Which non-edge pairs the packed pass ANDs (see the module notes).

    Pair (i, j) is probed when a 64-bit hash of (min, max) keyed by ``key``,
    shifted right by 11, is below ``threshold`` (of 2^53): with a uniform key
    every pair is probed with probability ``threshold`` / 2^53 exactly, and
    ``scale`` is its inverse (1: every pair, exact).  ``seed`` drew the key
    (None: every pair).
    """

    key: int
    threshold: int
    scale: float
    seed: int | None

    @classmethod
    def of(cls, n: int, seed: int | None) -> Probe:
        """Every pair up to ``2 PROBE_PER_ROW`` nodes, else pairs probed with f = PROBE_PER_ROW / n.

        ``seed`` None draws fresh entropy (reported in ``seed``).
        """
        if n <= 2 * PROBE_PER_ROW:
            return cls(0, 1 << 53, 1.0, None)
        s = int(np.random.SeedSequence().entropy) if seed is None else int(seed)
        key = int(np.random.SeedSequence([s, _PROBE_STREAM]).generate_state(1, np.uint64)[0])
        threshold = max(1, round(PROBE_PER_ROW / n * (1 << 53)))
        return cls(key, threshold, (1 << 53) / threshold, s)

    def mask(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """Whether pairs (rows[a], cols[b]) are probed, bool (len(rows), len(cols)) (numpy path)."""
        if self.threshold >= 1 << 53:
            return np.ones((rows.size, cols.size), dtype=bool)
        r = rows.astype(np.uint64)[:, None]
        c = cols.astype(np.uint64)[None, :]
        x = (np.minimum(r, c) << np.uint64(32)) | np.maximum(r, c)
        return (_splitmix(x ^ np.uint64(self.key)) >> np.uint64(11)) < np.uint64(self.threshold)


def _splitmix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer, a bijection of uint64 (as in the kernels' ``_probed_pair``)."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


_PROBE_STREAM = 0x9B0BE  # stream of the probe's key (public randomness, apart from the rows')


@dataclass(frozen=True)
class Cost:
    """Predicted cost of one pass: ``seconds`` (wall clock) and ``bytes`` (peak extra memory)."""

    path: str
    rows: int
    seconds: float
    bytes: int


class TriangleCounter:
    """The release prepared for counting: degrees, and on demand its symmetric words or CSR.

    Parameters
    ----------
    R : PrivateGraph
        An undirected release (checked by the caller).
    """

    def __init__(self, R: Any) -> None:
        self.R = R
        self.adj = R.adjacency
        self.offers = offers(R)  # its kind's capabilities: packed words in memory, or CSR
        self.n = int(R.number_of_nodes())
        self.kernels = _kernels()
        self.threads = _threads(self.kernels)
        self.deg = self._degrees(R)
        self.m = int(self.deg.sum()) // 2  # released edges
        self.wedge_steps = float(np.sum(self.deg.astype(np.float64) ** 2))
        self._sym: np.ndarray | None = None
        self._csr: tuple[np.ndarray, np.ndarray] | None = None
        self._nsums: np.ndarray | None = None
        self._deadline: Any = None
        #: the seed of the pairs the last packed pass probed (None: every pair)
        self.probe_seed: int | None = None

    def _degrees(self, R: Any) -> np.ndarray:
        """Released degrees (cached per release); from the packed words by one compiled pass."""
        cache = _cache(R)
        # a store answers its degrees from one cached pass; its words are one more read
        if "deg" not in cache and self.is_packed and "store" not in self.offers \
                and self.kernels is not None and self.n >= 4096:  # below, the own count is as fast
            cache["deg"] = self.kernels["degrees"](np.ascontiguousarray(self.adj.words),
                                                   _threads(self.kernels))
        return np.asarray(_observed_degrees(R), dtype=np.int64)

    # ------------------------------------------------------------------ costs
    @property
    def is_packed(self) -> bool:
        """Packed words: in memory, or a blockwise store's, read once (sized first) and kept."""
        return "packed words" in self.offers

    @property
    def is_sparse(self) -> bool:
        return "csr" in self.offers

    def paths(self) -> tuple[str, ...]:
        """The paths this release offers: a sparse release has no packed words."""
        return ("sparse",) if self.is_sparse else ("sparse", "packed")

    def cost(self, path: str, rows: int | None = None) -> Cost:
        """Predicted seconds and extra bytes of the reductions of ``rows`` random rows (None: all).

        The operation-count model's seconds: the same on a quiet and a loaded machine.
        """
        build, kernel, nbytes = self._parts(path, rows)
        k = self.n if rows is None else int(rows)
        return Cost(path, k, float(build + kernel), int(nbytes))

    def _parts(self, path: str, rows: int | None) -> tuple[float, float, int]:
        """(model seconds to build the path's input, model seconds of the pass, bytes)."""
        n, T = self.n, self.threads
        k = n if rows is None else int(rows)
        nw = words_per_row(n)
        fast = self.kernels is not None
        if path == "packed":
            build = 0.0 if self._sym is not None else n * nw * _SEC_SYM_WORD / T
            f = 1.0 if n <= 2 * PROBE_PER_ROW else PROBE_PER_ROW / n  # probed share of pairs
            if rows is None:
                pairs = n * (n - 1) / 2
                anded = self.m + (pairs - self.m) * f
            else:
                pairs = k * (n - 1)
                dbar = 2 * self.m / max(n, 1)
                anded = k * (dbar + (n - 1 - dbar) * f)
            if fast:
                kernel = (anded * nw * _SEC_WORD + pairs * _SEC_PAIR_BIT) / T
            else:  # the numpy path multiplies every pair
                kernel = pairs * nw * _NP_WORD
            kernel += (n * nw * 0.3e-9 + 2 * self.m * _SEC_BIT) / T  # neighbour sums, first
            nbytes = 8 * n * nw + (104 * n * T if rows is None else 104 * k) + 16 * n
            if not fast:  # unpacked float32 row blocks instead of per-thread counters
                nbytes += 2 * 4 * n * self._np_block()
            return build, kernel, nbytes
        if path != "sparse":
            raise ValueError(f"path must be 'sparse' or 'packed', got {path!r}")
        if self._csr is not None:
            build = 0.0
        elif self.is_sparse:
            build = 2 * self.m * 30e-9
        else:
            build = n * nw * 0.3e-9 + 2 * self.m * _SEC_BIT
        steps = self.wedge_steps * k / n
        kernel = steps * (_SEC_WEDGE / T if fast else _NP_WEDGE)
        nbytes = 8 * (n + 1) + 4 * 2 * self.m + 16 * n * T
        if not fast:  # a sparse product of a row chunk: its 2-hop pairs
            nbytes += int(24 * min(steps, self.wedge_steps / max(1, n // self._np_chunk(n))))
        return build, kernel, nbytes

    @staticmethod
    def _np_chunk(n: int) -> int:
        return max(1, min(n, 4096))

    def _np_block(self) -> int:
        """Rows of the unpacked float32 blocks of the numpy packed path (<= 32 MiB each)."""
        return max(1, min(self.n, (32 << 20) // (4 * max(self.n, 1))))

    # ------------------------------------------------------------------ inputs
    def symmetric_words(self) -> np.ndarray:
        """Packed rows of the symmetric released matrix (each row its full neighbourhood)."""
        if self._sym is None:
            n, nw = self.n, words_per_row(self.n)
            if self.is_packed:
                words = np.ascontiguousarray(self.adj.words)
                if self.kernels is not None:
                    self._sym = self.kernels["sym"](words, n)
                else:
                    self._sym = _symmetric_words_numpy(words, n)
            else:
                sym = np.zeros((n, nw), dtype=np.uint64)
                for i0, bits in self.adj.row_blocks():
                    sym[i0 : i0 + bits.shape[0]] = _pack_bits(bits, nw)
                self._sym = _symmetric_words_numpy(sym, n)
        return self._sym

    def csr(self) -> tuple[np.ndarray, np.ndarray]:
        """(indptr, indices) of the symmetric released graph, rows sorted."""
        if self._csr is None:
            if self.is_packed and self.kernels is not None:
                self._csr = self.kernels["to_csr"](np.ascontiguousarray(self.adj.words), self.deg)
            else:
                import scipy.sparse as sp

                r, c = self.R.released_edges()
                r = np.asarray(r, dtype=np.int64)
                c = np.asarray(c, dtype=np.int64)
                A = sp.csr_array((np.ones(2 * r.size, dtype=np.int8),
                                  (np.concatenate([r, c]), np.concatenate([c, r]))),
                                 shape=(self.n, self.n))
                A.sort_indices()
                self._csr = (A.indptr.astype(np.int64), A.indices.astype(np.int32))
        return self._csr

    def probe(self, seed: int | None) -> Probe:
        """The packed pass's probed pairs for ``seed`` (see :class:`Probe`)."""
        return Probe.of(self.n, seed)

    def release_inputs(self) -> None:
        """Drop the symmetric words and the CSR (they are as large as the release)."""
        self._sym = None
        self._csr = None

    # ------------------------------------------------------------------ passes
    def reductions(self, path: str, rows: np.ndarray | None = None,
                   progress: Any = None, deadline: Any = None,
                   seed: int | None = None) -> np.ndarray:
        """The ``REDUCTIONS`` of ``rows`` (sorted positions; None: every row), shape (k, 8).

        int64, exact; when the packed path probed a sample of the pairs,
        float64 of shape (k, 13): A2 an unbiased estimate, every other
        reduction exact, and the ``PROBED`` sums in columns 8-12 (see the
        module notes), drawn with ``seed`` (None: fresh entropy), kept in
        ``probe_seed``.  ``deadline`` (a
        :class:`~.triangle_planning.Deadline`) is checked between blocks:
        past the caller's ``max_seconds`` the pass stops.
        """
        small = self.cost(path, None if rows is None else len(rows)).seconds * self.threads < 0.05
        self._deadline = deadline
        try:
            with _serial(self.kernels, small):
                return self._reductions(path, rows, progress, 1 if small else self.threads, seed)
        finally:
            self._deadline = None

    def _tick(self) -> None:
        if self._deadline is not None:
            self._deadline.check()

    def _reductions(self, path: str, rows: np.ndarray | None, progress: Any,
                    threads: int, seed: int | None) -> np.ndarray:
        n = self.n
        sel = np.arange(n, dtype=np.int64) if rows is None else np.asarray(rows, np.int64)
        if path == "sparse":
            indptr, indices = self.csr()
            return self._chunked(sel, progress, lambda s: self._csr_rows(indptr, indices, s))
        sym = self.symmetric_words()
        n1 = np.ascontiguousarray(self.neighbour_sums()[:, 0])
        probe = self.probe(seed)
        self.probe_seed = probe.seed
        if rows is not None or self.kernels is None:
            raw = self._chunked(sel, progress, lambda s: self._packed_rows(sym, s, n1, probe), 13)
        else:
            ngroups = -(-n // _GROUP)
            acc = np.zeros((threads, n, 13), dtype=np.int64)
            step = max(threads, ngroups // 64)
            for g0 in progress_range(0, ngroups, step, progress, n, "triangles"):
                self._tick()
                self.kernels["all"](sym, self.deg, n1, np.uint64(probe.key),
                                    np.uint64(probe.threshold), g0, min(ngroups, g0 + step),
                                    _GROUP, acc)
            raw = acc.sum(axis=0)
        return self._completed(raw, sel, probe)

    def _completed(self, raw: np.ndarray, sel: np.ndarray, probe: Probe) -> np.ndarray:
        """The reductions from the packed pass's raw sums (see :mod:`._trikernel`)."""
        d = self.deg[sel]
        raw[:, 0] = raw[:, 6] - d  # C1 = N1 - d_i
        raw[:, 1] -= d * d  # Cd = sum_{k in N(i)} N1_k - d_i^2
        if probe.scale == 1.0:  # every pair: A2 exact
            raw[:, 2] += raw[:, 5]
            return raw[:, :8]
        red = raw.astype(np.float64)
        red[:, 2] = raw[:, 5] + probe.scale * raw[:, 2]  # E2 + the probed non-edges, expanded
        red[:, 8:] *= probe.scale
        return red

    def neighbour_sums(self) -> np.ndarray:
        """(N1, N2) of every row: sums of d_j and d_j^2 over the released neighbours, int64 (n, 2)."""
        if self._nsums is None:
            small = (self.n * words_per_row(self.n) + 2 * self.m) * 1e-9 < 0.05
            with _serial(self.kernels, small):
                self._nsums = self._neighbour_sums()
        return self._nsums

    def _neighbour_sums(self) -> np.ndarray:
        d = self.deg
        nw = words_per_row(self.n)
        if self._sym is None and self._csr is None and not self.is_sparse:  # the smaller input
            from .._memory import check_call_fits

            use_csr = 8 * self.m < 8 * self.n * nw
            need = 8 * self.m + 8 * self.n if use_csr else 8 * self.n * nw
            check_call_fits(self.R, need, f"the neighbour degree sums of {self.n:,} nodes")
            if use_csr:
                self.csr()
        if self._csr is not None or self.is_sparse:
            indptr, indices = self.csr()
            if self.kernels is not None:
                return self.kernels["csr_nsums"](indptr, indices, d)
            out = np.zeros((self.n, 2), dtype=np.int64)
            for i0 in range(0, self.n, 4096):  # bounded scratch: 4096 rows at a time
                i1 = min(self.n, i0 + 4096)
                rows = np.repeat(np.arange(i1 - i0), np.diff(indptr[i0 : i1 + 1]))
                dj = d[indices[indptr[i0] : indptr[i1]]]
                out[i0:i1, 0] = np.bincount(rows, dj, i1 - i0).round()
                out[i0:i1, 1] = np.bincount(rows, dj * dj, i1 - i0).round()
            return out
        sym = self.symmetric_words()
        if self.kernels is not None:
            return self.kernels["nsums"](sym, d)
        out = np.zeros((self.n, 2), dtype=np.int64)
        X = np.stack([d, d * d], axis=1).astype(np.float64)
        b = self._np_block()
        for i0 in range(0, self.n, b):
            bits = _unpack(sym[i0 : i0 + b], self.n)
            out[i0 : i0 + bits.shape[0]] = np.round(bits @ X).astype(np.int64)
        return out

    def matmul(self, X: np.ndarray) -> np.ndarray:
        """Y X for the released adjacency Y and a float matrix X of shape (n, r).

        Uses whichever input is built (CSR or symmetric words), else the smaller one.
        """
        X = np.ascontiguousarray(X, dtype=np.float64)
        smaller = 8 * self.m < 8 * self.n * words_per_row(self.n)
        if self._sym is None and self._csr is None and not self.is_sparse and smaller:
            self.csr()
        if self._csr is not None or self.is_sparse:
            indptr, indices = self.csr()
            if self.kernels is not None:
                return self.kernels["csr_mm"](indptr, indices, X)
            import scipy.sparse as sp

            A = sp.csr_array((np.ones(indices.size), indices, indptr), shape=(self.n, self.n))
            return np.asarray(A @ X)
        sym = self.symmetric_words()
        if self.kernels is not None:
            return self.kernels["bit_mm"](sym, X)
        out = np.zeros((self.n, X.shape[1]))
        b = self._np_block()
        for i0 in range(0, self.n, b):
            bits = _unpack(sym[i0 : i0 + b], self.n)
            out[i0 : i0 + bits.shape[0]] = bits.astype(np.float64) @ X
        return out

    def _chunked(self, sel: np.ndarray, progress: Any, fn: Any, width: int = 8) -> np.ndarray:
        out = np.empty((sel.size, width), dtype=np.int64)
        step = max(_GROUP * self.threads, -(-sel.size // 64))
        for a in progress_range(0, sel.size, step, progress, self.n, "triangles"):
            self._tick()
            out[a : a + step] = fn(sel[a : a + step])
        return out

    def _packed_rows(self, sym: np.ndarray, sel: np.ndarray, n1: np.ndarray,
                     probe: Probe) -> np.ndarray:
        """The packed pass's raw sums of rows ``sel`` (see :mod:`._trikernel`)."""
        if self.kernels is not None:
            return self.kernels["rows"](sym, self.deg, n1, np.uint64(probe.key),
                                        np.uint64(probe.threshold), sel, _GROUP)
        n, b = self.n, self._np_block()
        A = _unpack(sym[sel], n)  # (k, n) float32 0/1
        out = np.zeros((sel.size, 13), dtype=np.int64)
        d = self.deg.astype(np.float64)
        for j0 in range(0, n, b):
            B = _unpack(sym[j0 : j0 + b], n)
            j1 = j0 + B.shape[0]
            C = (A @ B.T).astype(np.float64)  # exact: counts < 2^24
            Yb = A[:, j0:j1].astype(np.float64)
            own = (sel[:, None] == np.arange(j0, j1)[None, :])
            C[own] = 0.0
            dj = d[j0:j1]
            CY = C * Yb
            probed = (1.0 - Yb) * probe.mask(sel, np.arange(j0, j1))  # probed non-edges
            probed[own] = 0.0
            Cp = C * probed
            cols = (np.zeros(sel.size), Yb @ n1[j0:j1].astype(np.float64),
                    (Cp * C).sum(1), CY.sum(1), CY @ dj, (CY * C).sum(1),
                    Yb @ dj, Yb @ (dj * dj),
                    probed.sum(1), probed @ dj, probed @ (dj * dj), Cp.sum(1), Cp @ dj)
            out += np.round(np.stack(cols, axis=1)).astype(np.int64)
        return out

    def _csr_rows(self, indptr: np.ndarray, indices: np.ndarray, sel: np.ndarray) -> np.ndarray:
        if self.kernels is not None:
            import numba

            return self.kernels["csr"](indptr, indices, self.deg, sel, numba.get_num_threads())
        import scipy.sparse as sp

        n = self.n
        A = sp.csr_array((np.ones(indices.size, dtype=np.int64), indices, indptr), shape=(n, n))
        d = self.deg
        out = np.zeros((sel.size, 8), dtype=np.int64)
        c = self._np_chunk(n)
        for a in range(0, sel.size, c):
            s = sel[a : a + c]
            As = A[s]
            C = (As @ A).tocoo()
            keep = C.col != s[C.row]
            r, j, v = C.row[keep], C.col[keep], C.data[keep].astype(np.int64)
            k = s.size
            on_edge = np.asarray(As[r, j]).ravel() != 0 if r.size else np.zeros(0, bool)
            ar, aj = np.repeat(np.arange(k), np.diff(As.indptr)), As.indices
            cols = (np.bincount(r, v, k), np.bincount(r, v * d[j], k), np.bincount(r, v * v, k),
                    np.bincount(r[on_edge], v[on_edge], k),
                    np.bincount(r[on_edge], (v * d[j])[on_edge], k),
                    np.bincount(r[on_edge], (v * v)[on_edge], k),
                    np.bincount(ar, d[aj], k), np.bincount(ar, d[aj] ** 2, k))
            out[a : a + k] = np.round(np.stack(cols, axis=1)).astype(np.int64)
        return out


def _unpack(words: np.ndarray, n: int) -> np.ndarray:
    bits = np.unpackbits(np.ascontiguousarray(words).view(np.uint8), axis=1, bitorder="little")
    return bits[:, :n].astype(np.float32)


def _pack_bits(bits: np.ndarray, nw: int) -> np.ndarray:
    out = np.zeros((bits.shape[0], 8 * nw), dtype=np.uint8)
    packed = np.packbits(bits, axis=1, bitorder="little")
    out[:, : packed.shape[1]] = packed
    return out.view(np.uint64)


def _symmetric_words_numpy(words: np.ndarray, n: int) -> np.ndarray:
    """words | words^T by unpacked blocks of 512 rows (numpy fallback of the bit transpose)."""
    nw = words.shape[1]
    out = words.copy()
    for i0 in range(0, n, 512):
        block = np.unpackbits(words[i0 : i0 + 512].view(np.uint8), axis=1, bitorder="little")[:, :n]
        colbits = _pack_bits(np.ascontiguousarray(block.T), (block.shape[0] + 63) // 64)
        w0 = i0 // 64
        out[:, w0 : w0 + colbits.shape[1]] |= colbits[:, : nw - w0]
    return out
