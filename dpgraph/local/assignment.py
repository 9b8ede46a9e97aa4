"""Who reports which pair: the public rules of the two protocols.

Positions are those of the public vertex order (0..n-1).

* ``"one"``: the pair {i, j}, i < j, is reported by i when j - i is odd and
  by j when j - i is even.  User k reports ceil((n - 1 - k) / 2) pairs to its
  right and floor(k / 2) to its left: (n - 1) / 2 pairs, give or take one, for
  every user.  Every pair is reported exactly once.
* ``"both"``: each user reports every one of its n - 1 pairs; each pair is
  reported by both endpoints.

A report lists its bits by partner in increasing position.
"""

from __future__ import annotations

import numpy as np

__all__ = ["owner", "partners", "partners_count"]


def partners(user: int, n: int, protocol: str) -> np.ndarray:
    """Positions of the partners of the pairs ``user`` reports, increasing (int64).

    Examples
    --------
    >>> partners(2, 6, "one").tolist()
    [0, 3, 5]
    >>> partners(2, 4, "both").tolist()
    [0, 1, 3]
    """
    if protocol == "both":
        return np.delete(np.arange(n, dtype=np.int64), user)
    left = np.arange(user % 2, user - 1, 2, dtype=np.int64)  # user - i even, i < user
    right = np.arange(user + 1, n, 2, dtype=np.int64)        # j - user odd, j > user
    return np.concatenate([left, right])


def partners_count(user: int, n: int, protocol: str) -> int:
    """How many bits ``user``'s report carries.

    Examples
    --------
    >>> [partners_count(k, 7, "one") for k in range(7)]
    [3, 3, 3, 3, 3, 3, 3]
    """
    if protocol == "both":
        return n - 1
    return (n - user) // 2 + user // 2


def owner(i: np.ndarray, j: np.ndarray, protocol: str = "one") -> np.ndarray:
    """The endpoint that reports the pair {i, j} under protocol "one" (arrays, i != j).

    Examples
    --------
    >>> owner(np.array([0, 0, 3]), np.array([1, 2, 1]), "one").tolist()
    [0, 2, 3]
    """
    if protocol != "one":
        raise ValueError("owner: under protocol 'both' every pair has two reporters")
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    return np.where((hi - lo) % 2 == 1, lo, hi)
