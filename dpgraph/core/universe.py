"""Finite data universes: the K values a row can take."""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from itertools import repeat
from typing import Any

import numpy as np

from ..validation import Integer, validate_params

__all__ = ["Universe"]


class Universe:
    """A finite universe of K labelled values.

    Rows of a database are labels; internally they are encoded once into value
    indices 0..K-1 (the position of the label in ``labels``).

    Parameters
    ----------
    labels : iterable of hashable
        The K >= 2 distinct values a row can take, in a fixed, public order.

    Examples
    --------
    >>> U = Universe([1, 2, 3, 4, 5])
    >>> U.K
    5
    >>> U.encode([5, 1, 3]).tolist()
    [4, 0, 2]
    >>> U.decode([4, 0]).tolist()
    [5, 1]
    """

    def __init__(self, labels: Iterable[Hashable]) -> None:
        if isinstance(labels, (str, bytes)):
            raise TypeError("labels must be a sequence of values, not a string")
        labels = list(labels)
        try:
            index = {lab: i for i, lab in enumerate(labels)}
        except TypeError:
            raise TypeError("labels must be hashable (numbers, strings, tuples)") from None
        if len(index) != len(labels):
            raise ValueError("labels must be distinct; remove the duplicates")
        if len(labels) < 2:
            raise ValueError(f"a universe needs K >= 2 values, got {len(labels)}")
        self._labels = labels
        self._index = index
        arr = np.empty(len(labels), dtype=object)
        arr[:] = labels
        try:
            numeric = np.asarray(labels)
            if numeric.dtype.kind in "iufb" and numeric.ndim == 1:
                arr = numeric
        except (ValueError, TypeError):
            pass
        self._array = arr
        self._sorted = None
        self._lut = None
        if arr.dtype.kind in "iu" and int(arr.max()) - int(arr.min()) < 1 << 20:
            # small integer labels (ratings, binary rows): a direct look-up table
            lut = np.full(int(arr.max()) - int(arr.min()) + 1, -1, dtype=np.intp)
            lut[arr - arr.min()] = np.arange(arr.size)
            self._lut = (int(arr.min()), lut)
        if arr.dtype.kind in "iuf":
            order = np.argsort(arr, kind="stable")
            self._sorted = (arr[order], order)

    @classmethod
    @validate_params(l=Integer(minimum=1, maximum=24))  # 2^24 values: tables fit in memory
    def binary(cls, l: int) -> Universe:
        """The paper's universe {0,1}^l, labelled by the integers 0..2^l - 1.

        Bit j of label v is attribute j of the row; see :meth:`bits`.

        Examples
        --------
        >>> Universe.binary(3).K
        8
        """
        return cls(range(1 << l))

    @property
    def K(self) -> int:
        """Number of values."""
        return len(self._labels)

    @property
    def labels(self) -> np.ndarray:
        """The labels as a numpy array (a copy)."""
        return self._array.copy()

    def bits(self) -> np.ndarray:
        """For a binary universe, the (K, l) table of attribute bits."""
        l = int(np.log2(self.K))
        if not (1 << l == self.K and np.array_equal(self._array, np.arange(self.K))):
            raise ValueError("bits() is defined for Universe.binary(l) only")
        return ((np.arange(self.K)[:, None] >> np.arange(l)) & 1).astype(np.uint8)

    def encode(self, X: Any, name: str = "X") -> np.ndarray:
        """Map labels to value indices 0..K-1 (vectorized).

        Raises
        ------
        ValueError
            If some values are not labels of the universe (the error says how
            many, never which: they are private data).
        """
        arr = np.asarray(X)
        if arr.size == 0:
            raise ValueError(f"{name} is empty; a database needs n >= 1 rows")
        out = self._codes(arr)
        bad = int(np.count_nonzero(out < 0))
        if bad:
            raise ValueError(
                f"{name} has {bad} value(s) that are not labels of this "
                f"universe of K={self.K}; encode rows with the universe's labels"
            )
        return out

    def lookup(self, X: Any) -> np.ndarray:
        """Value indices of the entries of X, -1 where an entry is not a label (no error).

        For callers with their own message for values outside the universe.
        A list is read as Python objects, one label a row (tuples included),
        with one dict look-up each and no conversion to an array; anything
        else goes through ``numpy.asarray`` as for :meth:`encode`.

        Examples
        --------
        >>> Universe(["a", "b"]).lookup(["b", "z", "a"]).tolist()
        [1, -1, 0]
        """
        if isinstance(X, list):
            return self._dict_codes(X)
        return self._codes(X if isinstance(X, np.ndarray) else np.asarray(X))

    def _codes(self, arr: np.ndarray) -> np.ndarray:
        """Value index of every entry of ``arr``, -1 for entries that are not labels."""
        too_big = None
        if arr.dtype.kind == "u" and self._array.dtype.kind != "u":
            # compare as int64 (mixing uint64 and int64 goes through float64, and a
            # plain cast would wrap 2**64 - 1 to the label -1)
            too_big = arr > np.iinfo(np.int64).max
            arr = arr.astype(np.int64)
        if self._lut is not None and arr.dtype.kind in "iu":
            low, lut = self._lut
            shifted = arr.astype(np.int64, copy=False)
            if low:
                shifted = shifted - low
            # negatives wrap to huge unsigned values, so one comparison checks both ends
            pos = shifted.view(np.uint64)
            inside = pos < lut.size
            if inside.all():
                out = np.take(lut, pos.view(np.int64))  # -1 at the gaps between labels
            else:
                out = np.full(arr.shape, -1, dtype=np.intp)
                out[inside] = lut[pos[inside].view(np.int64)]
        elif self._sorted is not None and arr.dtype.kind in "iufb":
            keys, order = self._sorted
            flat = arr.ravel()
            pos = np.minimum(np.searchsorted(keys, flat), keys.size - 1)
            out = order[pos].astype(np.intp)
            out[keys[pos] != flat] = -1
            out = out.reshape(arr.shape)
        else:
            out = self._dict_codes(arr.ravel()).reshape(arr.shape)
        if too_big is not None:
            out[too_big] = -1
        return out

    def _dict_codes(self, flat: np.ndarray | list) -> np.ndarray:
        """Dict look-ups of any labels; -1 for the others (unhashable ones included)."""
        get = self._index.get
        if isinstance(flat, np.ndarray) and flat.dtype != object:
            try:  # strings, or numbers against other labels: each distinct value once
                uniq, inverse = np.unique(flat, return_inverse=True)
                return np.array([get(u, -1) for u in uniq.tolist()], dtype=np.intp)[inverse]
            except TypeError:
                pass
        items = flat.tolist() if isinstance(flat, np.ndarray) else flat
        try:  # one dict look-up a row at C speed
            return np.fromiter(map(get, items, repeat(-1)), dtype=np.intp, count=len(items))
        except TypeError:  # an unhashable entry: one at a time
            return np.array([get(v, -1) if _hashable(v) else -1 for v in items], dtype=np.intp)

    def decode(self, indices: Any) -> np.ndarray:
        """Map value indices back to labels."""
        idx = np.asarray(indices, dtype=np.intp)
        if idx.size and (idx.min() < 0 or idx.max() >= self.K):
            raise ValueError(f"indices must lie in 0..{self.K - 1}")
        return self._array[idx]

    def __repr__(self) -> str:
        shown = ", ".join(repr(x) for x in self._labels[:6])
        more = ", ..." if self.K > 6 else ""
        return f"Universe([{shown}{more}], K={self.K})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Universe) and self._labels == other._labels

    def __hash__(self) -> int:
        return hash(tuple(self._labels))


def _hashable(v: Any) -> bool:
    try:
        hash(v)
    except TypeError:
        return False
    return True
