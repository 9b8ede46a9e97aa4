"""Statistical queries (paper, Definition 1) in a compact grouped form.

A statistical query has one row function phi_i per row.  Rows are grouped by a
label that selects one of h distinct functions, so a query is

    functions : (h, K)   phi_g(U[k]) for each group g and universe value k
    groups    : (n,)     the group of each row

A linear (counting, predicate) query is h = 1; a dense (n, K) table is h = n.
Several queries that share the grouping form a batch: functions (Q, h, K).
Evaluating a batch on a database needs one histogram of (group, value) pairs,
so answering 2^20 queries costs O(n + Q h K), not O(Q n).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from .estimate import Estimate, apply_proper
from .estimators import Channel, unbiased_estimate
from .universe import Universe

__all__ = ["StatisticalQuery"]


class StatisticalQuery:
    """A statistical query, or a batch of them sharing one row grouping.

    Parameters
    ----------
    table : array_like of shape (n, K)
        ``table[i, k] = phi_i(U[k])``: the general, dense form.  For the
        compact forms use :meth:`grouped` and :meth:`linear`.
    universe : Universe, optional
        The universe whose labels ``q(X)`` reads.  Without one, rows are the
        value indices 0..K-1.

    Examples
    --------
    >>> import numpy as np
    >>> U = Universe([1, 2, 3, 4, 5])
    >>> q = StatisticalQuery.linear([0, 0, 0, 1, 1], n=4, universe=U)   # share of 4-5 stars
    >>> q(np.array([5, 1, 4, 2]))
    0.5
    >>> q.normalizer, q.C_phi
    (4.0, 2.0)
    """

    def __init__(self, table: Any, universe: Universe | None = None) -> None:
        table = np.asarray(table, dtype=float)
        if table.ndim != 2:
            raise ValueError(
                f"table must have shape (n, K) with table[i, k] = phi_i(U[k]); got shape "
                f"{table.shape}. Use StatisticalQuery.grouped for the compact form"
            )
        self._init(table, np.arange(table.shape[0]), universe)

    @classmethod
    def grouped(
        cls, functions: Any, groups: Any, universe: Universe | None = None
    ) -> StatisticalQuery:
        """Query whose row i uses ``functions[groups[i]]``.

        Parameters
        ----------
        functions : array_like of shape (h, K), or (Q, h, K) for a batch
        groups : array_like of int, shape (n,), values in 0..h-1
        universe : Universe, optional
        """
        obj = cls.__new__(cls)
        obj._init(np.asarray(functions, dtype=float), groups, universe)
        return obj

    @classmethod
    def linear(
        cls, function: Any, n: int, universe: Universe | None = None
    ) -> StatisticalQuery:
        """A linear query: the same row function (shape (K,), or (Q, K) for a batch) on n rows."""
        f = np.asarray(function, dtype=float)
        if f.ndim not in (1, 2):
            raise ValueError("function must have shape (K,) or (Q, K) for a batch")
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            raise TypeError("n must be an integer number of rows")
        if n < 1:
            raise ValueError(f"n must be >= 1 (the database has no rows), got {n}")
        return cls.grouped(f[..., None, :], np.zeros(int(n), dtype=np.intp), universe)

    def _init(self, functions: np.ndarray, groups: Any, universe: Universe | None) -> None:
        if functions.ndim not in (2, 3):
            raise ValueError("functions must have shape (h, K) or (Q, h, K)")
        if not np.all(np.isfinite(functions)):
            raise ValueError("row functions must take finite values (no NaN or inf)")
        h, K = functions.shape[-2:]
        if K < 2:
            raise ValueError(f"row functions must be tabulated on K >= 2 values, got K={K}")
        if universe is not None:
            if not isinstance(universe, Universe):
                raise TypeError("universe must be a dpgraph.core.Universe")
            if universe.K != K:
                raise ValueError(
                    f"the table has K={K} columns but the universe has {universe.K} values"
                )
        groups = np.asarray(groups)
        if groups.ndim != 1 or groups.size == 0:
            raise ValueError("groups must be a non-empty 1-d array (n >= 1 rows)")
        if groups.dtype.kind not in "iu":
            raise TypeError("groups must hold integer group indices")
        if groups.min() < 0 or groups.max() >= h:
            raise ValueError(f"groups must lie in 0..{h - 1} (one per row function)")
        c = functions.max(axis=-1) - functions.min(axis=-1)
        if np.any(c <= 0):
            raise ValueError(
                "every row function must be non-constant (c_i = max - min > 0); "
                "a constant row adds a known constant and carries no query information"
            )
        self.functions = functions
        self.groups = groups.astype(np.intp)
        self.universe = universe
        self.group_sizes = np.bincount(self.groups, minlength=h).astype(float)

    # ---- the paper's constants -------------------------------------------
    @property
    def n(self) -> int:
        """Number of rows."""
        return int(self.groups.size)

    @property
    def K(self) -> int:
        return int(self.functions.shape[-1])

    @property
    def is_batch(self) -> bool:
        return self.functions.ndim == 3

    @property
    def a(self) -> np.ndarray:
        """min of each group's row function."""
        return self.functions.min(axis=-1)

    @property
    def b(self) -> np.ndarray:
        """max of each group's row function."""
        return self.functions.max(axis=-1)

    @property
    def c(self) -> np.ndarray:
        """b - a for each group."""
        return self.b - self.a

    def _per_query(self, per_group: np.ndarray) -> Any:
        total = per_group @ self.group_sizes
        return float(total) if np.ndim(total) == 0 else total

    @property
    def normalizer(self) -> Any:
        """sum_i c_i."""
        return self._per_query(self.c)

    @property
    def C_phi(self) -> Any:
        """(1 / sum_i c_i) sum_i sum_v phi_i(v)."""
        return self._per_query(self.functions.sum(axis=-1)) / self.normalizer

    @property
    def range(self) -> tuple[Any, Any]:
        """(min, max) of q over all databases: (sum a_i, sum b_i) / sum c_i."""
        return self._per_query(self.a) / self.normalizer, self._per_query(self.b) / self.normalizer

    @property
    def integer_valued(self) -> bool:
        """Whether every row function takes integer values."""
        return bool(np.all(self.functions == np.round(self.functions)))

    # ---- evaluation ---------------------------------------------------------
    def answer(self, sums: Any, channel: Channel, proper: bool = True) -> Estimate:
        """The companion estimate of q from the released sums sum_i phi_i(Y_i).

        The unbiased estimator q_u (Lemma 2) with its std, and, when
        ``proper``, the proper estimator (Lemma 3): q_u clipped to
        :attr:`range` and, for integer-valued row functions, rounded onto the
        lattice {k / sum_i c_i} (which contains every achievable answer; the
        exact projection onto q(D^n) is a subset-sum problem).  ``raw`` keeps
        q_u.
        """
        est = unbiased_estimate(sums, self.functions, self.group_sizes, channel, self.normalizer)
        est = replace(est, feasible_range=self.range)
        step = 1.0 / np.asarray(self.normalizer) if self.integer_valued else None
        return apply_proper(est, proper, step=step)

    def histogram(self, indices: np.ndarray) -> np.ndarray:
        """(h, K) counts of rows per (group, value) for value indices ``indices``."""
        idx = np.asarray(indices)
        if idx.shape != self.groups.shape:
            raise ValueError(
                f"the database has {idx.size} rows but the query has n={self.n}; "
                "pass one row per row function"
            )
        h = self.functions.shape[-2]
        flat = self.groups * self.K + idx
        return np.bincount(flat, minlength=h * self.K).reshape(h, self.K).astype(float)

    def sums(self, indices: np.ndarray) -> Any:
        """Unnormalized sum_i phi_i(x_i) for a database of value indices."""
        hist = self.histogram(indices)
        total = np.einsum("...hk,hk->...", self.functions, hist)
        return float(total) if np.ndim(total) == 0 else total

    def evaluate_indices(self, indices: np.ndarray) -> Any:
        """q(x) for a database given as value indices 0..K-1."""
        idx = np.asarray(indices)
        if idx.size and (idx.min() < 0 or idx.max() >= self.K):
            raise ValueError(f"value indices must lie in 0..{self.K - 1}")
        return self.sums(idx) / self.normalizer

    def __call__(self, X: Any) -> Any:
        """q(X): the exact answer on a database of labels (float, or array for a batch)."""
        if self.universe is not None:
            return self.evaluate_indices(self.universe.encode(X))
        arr = np.asarray(X)
        if arr.dtype.kind not in "iu":
            raise TypeError(
                "without a universe, rows must be integer value indices 0..K-1; "
                "build the query with universe=Universe(labels) to pass labels"
            )
        return self.evaluate_indices(arr)

    def __repr__(self) -> str:
        q = f"batch of {self.functions.shape[0]}, " if self.is_batch else ""
        return f"StatisticalQuery({q}n={self.n}, h={self.functions.shape[-2]}, K={self.K})"

