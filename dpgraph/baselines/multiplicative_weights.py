"""MWEM (Hardt, Ligett & McSherry 2012) for linear queries over a finite universe.

MWEM keeps a synthetic histogram ``A`` over the ``K`` values of the universe,
starting from the uniform histogram of total mass ``n``, and for ``T`` rounds

1. selects the query worst answered by ``A`` with the exponential mechanism
   (privacy ``eps / (2T)``, score ``|q(A) - q(B)|`` on the unnormalized sums);
2. measures that query on the true histogram ``B`` with Laplace noise
   (privacy ``eps / (2T)``);
3. applies the multiplicative-weights update
   ``A(x) <- A(x) * exp(q(x) * (m - q(A)) / (2 n))`` and rescales to mass ``n``.

By sequential composition the whole run is ``eps``-DP.  Two update rules:

``update="plain"``
    The algorithm as analysed: each round applies the multiplicative-weights
    update once, for the newest measurement only.  With ``average=True``
    (release the average of the round histograms) this is **textbook MWEM**,
    whose theorem bounds the error by ``2 n sqrt(log K / T) + 10 T log|Q| / eps``.
``update="replay"`` (default)
    The practical improvement the MWEM paper suggests for experiments: each
    round replays the update for *every* measurement taken so far, ``passes``
    sweeps (the default of 10 is our choice); the last histogram is released.
    ``passes=1`` is still a replay (all past measurements, once), not the
    plain update.

Both use the same privacy budget: the update is post-processing of the
noisy measurements.  ``T`` and ``passes`` have defaults fixed before any
experiment (``T = 10``, as in the MWEM authors' code), not tuned to data.

A linear query is one row function ``phi`` (a length-``K`` vector) applied to
every row: ``q(B) = sum_x B(x) phi(x)``.  Its sensitivity is the range
``max phi - min phi``; MWEM's privacy here uses the largest range in the query
set, ``Delta``, for both the selection score and the Laplace scale.  The
database size ``n`` is treated as public (as in the MWEM paper), unless a
``synthetic_size`` is given.

:func:`mwem_statistical` is the sub-database adaptation of Wang, Ying & Zhang
(section VI-A) for statistical queries whose row function depends on a public
group label of the row.

The noise is drawn from a numpy Generator in floating point.  This is a
baseline for accuracy comparisons, not a hardened release mechanism.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from dpgraph.core import resolve_random
from dpgraph.validation import Boolean, Epsilon, Integer, Optional, Options, validate_params

__all__ = ["DEFAULT_PASSES", "DEFAULT_T", "UPDATES", "MWEMResult", "mwem", "mwem_statistical"]

#: Default number of rounds (privacy eps/(2T) per selection and per measurement).
DEFAULT_T = 10
#: Default number of sweeps of the MW update over all measurements each round (replay update).
DEFAULT_PASSES = 10
#: The multiplicative-weights update rules: the newest measurement once, or all of them replayed.
UPDATES = ("plain", "replay")

_CHUNK_ELEMENTS = 1 << 22  # databases x queries processed at once (32 MiB of float64)
_BLOCK = 1024  # queries per block in the two-level exponential-mechanism sampler


@dataclasses.dataclass(frozen=True)
class MWEMResult:
    """Output of :func:`mwem`.

    Attributes
    ----------
    histogram : numpy.ndarray
        Synthetic histogram(s), shape ``(K,)`` or ``(G, K)``, each of total
        mass ``synthetic_size`` (the public database size by default).
    selected : numpy.ndarray
        Indices of the queries measured, shape ``(T,)`` or ``(G, T)``.
    measurements : numpy.ndarray
        Their noisy answers (unnormalized sums), same shape as ``selected``.
    """

    histogram: np.ndarray
    selected: np.ndarray
    measurements: np.ndarray

    def answer(self, queries: np.ndarray) -> np.ndarray:
        """Unnormalized answers ``sum_x A(x) phi(x)`` of linear queries.

        Parameters
        ----------
        queries : numpy.ndarray
            ``(Q, K)`` row functions (or ``(K,)`` for one query).

        Returns
        -------
        numpy.ndarray
            ``(Q,)`` for one histogram, ``(G, Q)`` for a batch.
        """
        q = np.asarray(queries, dtype=np.float64)
        return self.histogram @ q.T


def _generator(seed: Any) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    return resolve_random(seed).generator()


def _exp_mech_select(logits: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Sample one index per row with P(j) proportional to exp(logits[:, j]).

    Inverse-CDF sampling with one uniform per row, vectorized over rows.  To
    avoid a cumulative sum over every query, the CDF is located in two steps:
    first the block of ``_BLOCK`` queries (from block sums), then the index
    inside that block.  ``logits`` is overwritten.
    """
    m, Q = logits.shape
    w = logits
    w -= w.max(axis=1, keepdims=True)
    np.exp(w, out=w)
    block = min(_BLOCK, Q)
    starts = np.arange(0, Q, block)
    block_sums = np.add.reduceat(w, starts, axis=1)  # (m, nb)
    cb = np.cumsum(block_sums, axis=1)
    u = rng.random(m) * cb[:, -1]
    blk = np.minimum((cb < u[:, None]).sum(axis=1), starts.size - 1)
    before = np.where(blk > 0, cb[np.arange(m), blk - 1], 0.0)
    cols = starts[blk][:, None] + np.arange(block)[None, :]
    inside = np.where(cols < Q, w[np.arange(m)[:, None], np.minimum(cols, Q - 1)], 0.0)
    c = before[:, None] + np.cumsum(inside, axis=1)
    off = (c < u[:, None]).sum(axis=1)
    idx = starts[blk] + off
    return np.minimum(idx, Q - 1)


def _check_queries(queries: Any, K: int, name: str = "queries") -> np.ndarray:
    q = np.asarray(queries, dtype=np.float64)
    if q.ndim == 1:
        q = q[None, :]
    if q.ndim not in (2, 3) or q.shape[-1] != K:
        raise ValueError(
            f"{name} must have shape (Q, K) or (G, Q, K) with K={K} (one value per universe "
            f"element), got shape {np.shape(queries)}"
        )
    if q.shape[-2] == 0:
        raise ValueError(f"{name} is empty; pass at least one query")
    if not np.all(np.isfinite(q)):
        raise ValueError(f"{name} must be finite")
    return q


#: The declared constraints of MWEM's parameters.
_ARGS = dict(epsilon=Epsilon(), T=Integer(minimum=1), update=Options(*UPDATES),
             passes=Optional(Integer(minimum=1)), average=Boolean())


@validate_params(**_ARGS)
def mwem(
    histogram: np.ndarray,
    queries: np.ndarray,
    epsilon: float,
    T: int = DEFAULT_T,
    *,
    update: str = "replay",
    passes: int | None = None,
    average: bool = False,
    synthetic_size: float | np.ndarray | None = None,
    seed: Any = None,
) -> MWEMResult:
    """Run MWEM on one histogram or, independently, on a batch of histograms.

    Parameters
    ----------
    histogram : numpy.ndarray
        True counts, shape ``(K,)`` or ``(G, K)`` for ``G`` independent
        databases (non-negative; integers for a real database).
    queries : numpy.ndarray
        Linear queries as row functions, ``(Q, K)`` shared by all databases or
        ``(G, Q, K)`` one set per database.  Large ``Q`` (2**20) is fine: work
        is vectorized and chunked over databases.
    epsilon : float
        Privacy budget of the whole run (per database).
    T : int, default 10
        Number of rounds; each spends ``epsilon / (2T)`` on selection and on
        measurement.
    update : {"replay", "plain"}, default "replay"
        ``"plain"``: one MW update per round with the newest measurement
        (the analysed algorithm).  ``"replay"``: each round, ``passes``
        sweeps of the update over every measurement taken so far (the MWEM
        paper's practical improvement).
    passes : int, optional
        Sweeps per round of the replay update (default 10).  Only valid with
        ``update="replay"``; ``update="plain"`` accepts only ``None`` or 1.
    average : bool, default False
        Release the average of the round histograms (the analysed variant;
        with ``update="plain"`` this is textbook MWEM) instead of the last one.
    synthetic_size : float or array, optional
        Total mass of the synthetic histogram; defaults to the true size
        (treated as public, as in the MWEM paper).
    seed : None, int or numpy.random.Generator
        Randomness; None draws fresh entropy from dpgraph's secure source.

    Returns
    -------
    MWEMResult

    Raises
    ------
    ValueError
        Bad shapes, negative counts, an empty database, non-finite queries.

    Examples
    --------
    >>> B = np.array([900., 100., 0.])
    >>> Q = np.eye(3)
    >>> res = mwem(B, Q, epsilon=1.0, T=3, seed=0)
    >>> res.histogram.shape, round(float(res.histogram.sum()))
    ((3,), 1000)
    >>> bool(res.histogram[0] > 500)
    True
    """
    passes = _check_update(update, passes)
    B = np.asarray(histogram, dtype=np.float64)
    single = B.ndim == 1
    if single:
        B = B[None, :]
    if B.ndim != 2 or B.shape[1] < 1:
        raise ValueError(f"histogram must have shape (K,) or (G, K), got {np.shape(histogram)}")
    if not np.all(np.isfinite(B)) or (B < 0).any():
        raise ValueError("histogram must hold finite, non-negative counts")
    G, K = B.shape
    Qs = _check_queries(queries, K)
    if Qs.ndim == 3 and Qs.shape[0] != G:
        raise ValueError(
            f"queries of shape (G, Q, K) must have G={G} (one set per database), got {Qs.shape[0]}"
        )
    n_true = B.sum(axis=1)
    if (n_true <= 0).any():
        raise ValueError("every database must hold at least one row (an empty database was given)")
    if synthetic_size is None:
        n_syn = n_true.copy()
    else:
        n_syn = np.broadcast_to(np.asarray(synthetic_size, dtype=np.float64), (G,)).copy()
        if not np.all(np.isfinite(n_syn)) or (n_syn <= 0).any():
            raise ValueError("synthetic_size must be finite and > 0")
    rng = _generator(seed)
    ranges = Qs.max(axis=-1) - Qs.min(axis=-1)
    delta = float(ranges.max()) if ranges.size else 0.0
    if delta <= 0:
        delta = 1.0  # constant queries: nothing to learn, any scale is private
    eps_t = epsilon / (2.0 * T)
    Q = Qs.shape[-2]
    chunk = max(1, _CHUNK_ELEMENTS // max(Q, 1))

    shared_T = np.ascontiguousarray(Qs.T) if Qs.ndim == 2 else None
    out_hist = np.empty((G, K))
    out_sel = np.empty((G, T), dtype=np.int64)
    out_meas = np.empty((G, T))
    for g0 in range(0, G, chunk):
        g1 = min(G, g0 + chunk)
        Bc = B[g0:g1]
        Qc = Qs[g0:g1] if Qs.ndim == 3 else Qs
        QcT = shared_T
        ns = n_syn[g0:g1]
        m = g1 - g0
        A = np.repeat((ns / K)[:, None], K, axis=1)
        acc = np.zeros_like(A)
        sel_rows = np.empty((m, T), dtype=np.int64)
        meas = np.empty((m, T))
        phis = np.empty((m, T, K))
        rows = np.arange(m)
        ones = np.ones(K)
        for t in range(T):
            # score |q(A) - q(B)| = |q(A - B)|: one product with the difference
            logits = _apply(Qc, A - Bc, QcT)
            np.abs(logits, out=logits)
            logits *= eps_t / (2.0 * delta)
            idx = _exp_mech_select(logits, rng)
            phi = Qc[idx] if Qc.ndim == 2 else Qc[rows, idx]
            true_sel = np.einsum("gk,gk->g", phi, Bc)
            noisy = true_sel + rng.laplace(0.0, delta / eps_t, size=m)
            sel_rows[:, t] = idx
            meas[:, t] = noisy
            phis[:, t] = phi
            first = 0 if update == "replay" else t  # plain: the newest measurement only
            for _ in range(passes):
                for s in range(first, t + 1):
                    ph = phis[:, s]
                    est = (A * ph) @ ones  # row sums via BLAS: faster than a small-axis reduce
                    A = A * np.exp(ph * ((meas[:, s] - est) / (2.0 * ns))[:, None])
                    A *= (ns / (A @ ones))[:, None]
            acc += A
        out_hist[g0:g1] = acc / T if average else A
        out_sel[g0:g1] = sel_rows
        out_meas[g0:g1] = meas
    if single:
        return MWEMResult(out_hist[0], out_sel[0], out_meas[0])
    return MWEMResult(out_hist, out_sel, out_meas)


def _check_update(update: str, passes: int | None) -> int:
    """The number of sweeps per round of the (declared) update rule."""
    if update == "plain":
        if passes not in (None, 1):
            raise ValueError(
                f"passes={passes} applies to update='replay' only; the plain update applies "
                "the newest measurement once per round (leave passes unset)"
            )
        return 1
    return DEFAULT_PASSES if passes is None else passes


def _apply(Qc: np.ndarray, A: np.ndarray, QcT: np.ndarray | None = None) -> np.ndarray:
    """Answers of the queries on each histogram: ``(m, Q)``."""
    if Qc.ndim == 2:
        return A @ (Qc.T if QcT is None else QcT)
    return np.einsum("gqk,gk->gq", Qc, A)


@validate_params(**_ARGS, n_groups=Optional(Integer(minimum=1)))
def mwem_statistical(
    values: np.ndarray,
    groups: np.ndarray,
    functions: np.ndarray,
    epsilon: float,
    T: int = DEFAULT_T,
    *,
    n_groups: int | None = None,
    update: str = "replay",
    passes: int | None = None,
    average: bool = False,
    seed: Any = None,
) -> np.ndarray:
    """Answer statistical queries with MWEM run per sub-database (Wang, Ying & Zhang, VI-A).

    The rows are split by a public label ``groups`` into disjoint
    sub-databases on which every query of the set is linear (query ``j`` uses
    row function ``functions[j, g]`` on every row of group ``g``).  MWEM runs
    independently on each sub-database with the **full** ``epsilon``: a row
    lies in exactly one sub-database, so by parallel composition the combined
    release is still ``epsilon``-DP.  Each query is answered by combining the
    parts,

        q_j = (sum_g sum_x A_g(x) phi_{j,g}(x)) / (sum_g n_g c_{j,g}),

    the paper's normalized statistical query with ``c = max phi - min phi``.
    The sub-database sizes ``n_g`` are treated as public, as MWEM treats
    ``n``.

    Parameters
    ----------
    values : numpy.ndarray
        Value index in ``0..K-1`` of each row, shape ``(n,)``.
    groups : numpy.ndarray
        Sub-database label in ``0..h-1`` of each row, shape ``(n,)``.
    functions : numpy.ndarray
        ``(Q, h, K)`` (or ``(h, K)`` for one query): row function of query
        ``j`` on group ``g``.
    epsilon : float
        Privacy budget (spent in full on every sub-database).
    T, update, passes, average
        MWEM parameters, see :func:`mwem`.
    n_groups : int, optional
        Number of sub-databases ``h``; defaults to ``functions.shape[-2]``.
    seed : None, int or numpy.random.Generator

    Returns
    -------
    numpy.ndarray
        ``(Q,)`` normalized answers (a float for a single ``(h, K)`` query).

    Raises
    ------
    ValueError
        Mismatched lengths, labels out of range, or an empty sub-database.

    Examples
    --------
    >>> vals = np.array([0, 1, 1, 2, 0, 0])
    >>> grp = np.array([0, 0, 0, 1, 1, 1])
    >>> f = np.array([[[1., 0., 0.], [0., 0., 1.]]])   # one query, h=2, K=3
    >>> ans = mwem_statistical(vals, grp, f, epsilon=1.0, T=2, seed=1)
    >>> ans.shape
    (1,)
    """
    F = np.asarray(functions, dtype=np.float64)
    single = F.ndim == 2
    if single:
        F = F[None]
    if F.ndim != 3:
        raise ValueError(f"functions must have shape (Q, h, K) or (h, K), got {np.shape(functions)}")
    _, h, K = F.shape
    if n_groups is not None and n_groups != h:
        raise ValueError(f"functions has {h} groups but n_groups={n_groups}")
    vals = np.asarray(values)
    grp = np.asarray(groups)
    if vals.ndim != 1 or grp.shape != vals.shape:
        raise ValueError("values and groups must be 1-D arrays of the same length")
    if not (np.issubdtype(vals.dtype, np.integer) and np.issubdtype(grp.dtype, np.integer)):
        raise TypeError("values and groups must be integer arrays (value and group indices)")
    if vals.size and (vals.min() < 0 or vals.max() >= K):
        raise ValueError(f"values must be value indices in 0..{K - 1}")
    if grp.size and (grp.min() < 0 or grp.max() >= h):
        raise ValueError(f"groups must be labels in 0..{h - 1} (one per row function)")
    B = np.bincount(grp * K + vals, minlength=h * K).reshape(h, K).astype(np.float64)
    sizes = B.sum(axis=1)
    if (sizes == 0).any():
        g = int(np.flatnonzero(sizes == 0)[0])
        raise ValueError(
            f"sub-database {g} is empty; every group label in 0..{h - 1} needs at least one row"
        )
    per_group = np.ascontiguousarray(np.transpose(F, (1, 0, 2)))  # (h, Q, K)
    res = mwem(B, per_group, epsilon, T, update=update, passes=passes, average=average, seed=seed)
    sums = np.einsum("qgk,gk->q", F, res.histogram)
    c = F.max(axis=2) - F.min(axis=2)  # (Q, h)
    if (c <= 0).any():
        raise ValueError("every row function must be non-constant (max > min)")
    normalizer = c @ sizes
    out = sums / normalizer
    return float(out[0]) if single else out
