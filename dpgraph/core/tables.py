"""Answers as tables: the columns of an :class:`~dpgraph.core.Estimate` and a pandas frame of them.

Every answer leaves as the same six columns, ``value, std, ci_low, ci_high,
resolved, reason`` (:data:`COLUMNS`): the value, its standard deviation (NaN
where there is no error bar), the 95% interval and whether the release
resolves it and, when it does not, why.  pandas is imported only when a frame
is asked for.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["COLUMNS", "estimate_columns", "estimates_frame"]

#: The columns of every answer's table, in order.
COLUMNS = ("value", "std", "ci_low", "ci_high", "resolved", "reason")


def estimate_columns(est: Any) -> dict[str, Any]:
    """``{column: value}`` of a single estimate, ``{column: list}`` of a batch (:data:`COLUMNS`).

    Examples
    --------
    >>> from dpgraph.core import Estimate
    >>> cols = estimate_columns(Estimate(917.0, 120.0, feasible_range=(0, 10_000)))
    >>> list(cols), cols["value"], cols["reason"]
    (['value', 'std', 'ci_low', 'ci_high', 'resolved', 'reason'], 917.0, None)
    """
    lo, hi = est.ci(0.95)
    if not est.is_batch:
        return {"value": float(est.value), "std": float(est.std), "ci_low": float(lo),
                "ci_high": float(hi), "resolved": bool(est.resolved), "reason": est.reason}
    n = len(est)

    def column(x: Any) -> list:
        return np.broadcast_to(np.asarray(x, dtype=float), (n,)).tolist()

    return {"value": column(est.value), "std": column(est.std), "ci_low": column(lo),
            "ci_high": column(hi), "resolved": [bool(r) for r in est.resolved],
            "reason": list(est.reason)}


def estimates_frame(columns: dict[str, Any], one_row: bool = False, index: Any = None,
             index_name: str | None = None) -> Any:
    """A :class:`pandas.DataFrame` of ``columns`` (from :func:`estimate_columns`).

    ``one_row``: the columns hold scalars (a single estimate).  ``index``: the
    row labels (nodes of a per-node answer), named ``index_name``.
    """
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("to_frame() needs pandas: pip install pandas (or use to_dict(), "
                          "which needs nothing)") from None
    frame = pd.DataFrame([columns] if one_row else columns, columns=list(COLUMNS))
    if index is not None:
        frame.index = pd.Index(list(index), name=index_name)
    return frame
