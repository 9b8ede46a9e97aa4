"""DataFrames and Arrow tables as inputs: their columns of edge ends, checked to be columns.

:mod:`dpgraph.graph.inputs` reads a pandas or polars DataFrame, a pyarrow
Table, or any object of the dataframe interchange protocol (through pandas)
with :func:`frame_columns`.  A column it hands out is one 1-D array of
scalar labels: a repeated pandas column name (which selects several
columns), a struct column (a one-field struct included) or a list column is
refused with a ValueError naming the column, never read as rows of values.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["frame_columns", "is_dataframe", "one_column"]

#: pyarrow's nested types (polars dtypes say so themselves: ``dtype.is_nested()``)
_ARROW_NESTED = ("StructType", "ListType", "LargeListType", "FixedSizeListType", "MapType",
                 "ListViewType", "LargeListViewType", "UnionType")


def is_dataframe(G: Any) -> bool:
    """True for a pandas/polars DataFrame, a pyarrow Table or a dataframe-protocol object."""
    module = type(G).__module__.split(".")[0]
    return ((module in ("pandas", "polars", "pyarrow") and hasattr(G, "columns"))
            or (hasattr(G, "__dataframe__") and not isinstance(G, type)))


def _nested(dtype: Any) -> bool:
    is_nested = getattr(dtype, "is_nested", None)
    if callable(is_nested):
        return bool(is_nested())
    return type(dtype).__name__ in _ARROW_NESTED


def one_column(name: str, dtype: Any, read: Callable[[], Any]) -> np.ndarray:
    """The column ``name`` (declared type ``dtype``) as a 1-D array of labels.

    Raises
    ------
    ValueError
        A nested column (struct, list, map), or one that reads as more than
        one dimension (a repeated column name, a one-field struct); the
        message names the column and its shape, never a value.

    Examples
    --------
    >>> one_column("source", None, lambda: np.array([0, 1])).tolist()
    [0, 1]
    >>> one_column("source", None, lambda: np.zeros((2, 2)))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: a table of edges: column 'source' is not one column ... shape (2, 2): ...
    """
    arr = None if _nested(dtype) else np.asarray(read())
    if arr is None:
        found = f"is a nested column ({dtype})"
    elif arr.ndim != 1:
        found = f"reads as shape {arr.shape}"
    elif arr.dtype.names is not None:
        found = "reads as records"
    else:
        return arr
    raise ValueError(
        f"a table of edges: column {name!r} is not one column of node labels (it {found}: a "
        "repeated column name, or a struct or list column); give each edge end as one column "
        "of scalar labels (distinct column names; unnest a struct)")


def _original(df: Any, name: str) -> Any:
    return next(c for c in df.columns if str(c) == name)


def frame_columns(df: Any) -> tuple[list[str], Callable[[str], np.ndarray]]:
    """Column names and a reader of checked columns (see :func:`one_column`) of a table."""
    module = type(df).__module__.split(".")[0]
    if module == "pyarrow":
        return list(df.column_names), lambda c: one_column(
            c, df.schema.field(c).type, lambda: df.column(c).to_numpy())
    if module in ("pandas", "polars"):
        def read(c: str) -> np.ndarray:
            col = df[_original(df, c)]  # a DataFrame when the name is repeated (pandas)
            return one_column(c, getattr(col, "dtype", None), col.to_numpy)
        return [str(c) for c in df.columns], read
    try:  # anything else that speaks the dataframe interchange protocol: through pandas
        import pandas as pd
    except ImportError:
        raise ImportError(
            f"a {type(df).__name__} table is read through pandas, which is not installed; "
            "install it with pip install 'dpgraph[dataframe]'"
        ) from None
    return frame_columns(pd.api.interchange.from_dataframe(df))
