"""The rows of a graph's database: its vertex pairs, numbered without materializing them.

A graph on n nodes is a database of N rows, one per unordered pair {i, j}
(N = n(n-1)/2), or one per ordered pair (i, j), i != j, when directed
(N = n(n-1)).  Rows are numbered row-major:

* undirected pair (i, j), i < j, is row i (2n - i - 1) / 2 + (j - i - 1);
* directed pair (i, j) is row i (n - 1) + j - [j > i].

Every layer numbers pairs with these functions (the samplers, the file
format, the blockwise tiles, the estimators' row counts).
"""

from __future__ import annotations

import numpy as np

__all__ = ["pair_count", "pair_from_index", "pair_index"]


def pair_count(n: int, directed: bool) -> int:
    """Number of vertex pairs: n(n-1)/2, or n(n-1) ordered pairs if directed.

    Examples
    --------
    >>> pair_count(4, False), pair_count(4, True)
    (6, 12)
    """
    n = int(n)
    return n * (n - 1) if directed else n * (n - 1) // 2


def _row_offset(i: np.ndarray, n: int) -> np.ndarray:
    return i * (2 * n - i - 1) // 2


def pair_index(rows: np.ndarray, cols: np.ndarray, n: int, directed: bool) -> np.ndarray:
    """Row-major linear index of pairs (i, j) (i < j if undirected).

    Examples
    --------
    >>> pair_index(np.array([0, 0, 1]), np.array([1, 2, 2]), 3, False).tolist()
    [0, 1, 2]
    """
    i = np.asarray(rows, dtype=np.int64)
    j = np.asarray(cols, dtype=np.int64)
    if directed:
        return i * (n - 1) + j - (j > i)
    return _row_offset(i, n) + (j - i - 1)


def pair_from_index(k: np.ndarray, n: int, directed: bool) -> tuple[np.ndarray, np.ndarray]:
    """Invert :func:`pair_index`: (rows, cols) of linear pair indices.

    Examples
    --------
    >>> r, c = pair_from_index(np.arange(6), 4, False)
    >>> list(zip(r.tolist(), c.tolist()))
    [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    """
    k = np.asarray(k, dtype=np.int64)
    if directed:
        i = k // (n - 1)
        j = k - i * (n - 1)
        return i, j + (j >= i)
    b = 2.0 * n - 1.0
    i = np.floor((b - np.sqrt(np.maximum(b * b - 8.0 * k.astype(np.float64), 0.0))) / 2.0)
    i = np.clip(i.astype(np.int64), 0, n - 2)
    for _ in range(64):  # float error is a few units at most; fix it exactly
        low = _row_offset(i, n) > k
        high = _row_offset(i + 1, n) <= k
        if not (low.any() or high.any()):
            break
        i = i - low + high
    return i, k - _row_offset(i, n) + i + 1
