"""Real numbers as floats without rounding up or overflowing (for the checks of validation.py).

A privacy parameter given as a ``Fraction``, ``Decimal``, numpy ``longdouble``
or a large integer may have no float equal to it; :func:`float_at_most`
returns the largest float not above its exact value, so a release is never
certified for more than the epsilon asked.
"""

from __future__ import annotations

import decimal
import math
import numbers
from fractions import Fraction
from typing import Any

import numpy as np

__all__ = ["as_float", "float_at_most"]


def float_at_most(x: Any, name: str, hint: str) -> float:
    """The largest float <= the exact value of the real ``x``, refusing NaN, infinities,
    values beyond the float range and values <= 0."""
    if isinstance(x, float) or (isinstance(x, np.floating) and x.dtype.itemsize <= 8):
        value = float(x)  # exact: float32 and float64 convert without rounding
        exact = None
    else:
        exact = _exact(x)
        if isinstance(exact, str):
            value = math.nan if exact == "nan" else math.inf
            exact = None
        else:
            try:
                value = float(exact)
            except OverflowError:
                value = math.inf if exact > 0 else -math.inf
    if math.isnan(value):
        raise ValueError(f"{name} is NaN; pass {hint}")
    if math.isinf(value):
        raise ValueError(f"{name} must be finite and within the float range (an infinite or "
                         f"huge epsilon means no privacy); pass {hint}")
    if exact is not None and Fraction(value) > exact:
        value = math.nextafter(value, -math.inf)  # never certify more than was asked
    if value <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}; pass {hint}")
    return value


def _exact(x: Any) -> Fraction | str:
    """The exact rational value of a real number, or "nan" / "inf"."""
    if isinstance(x, decimal.Decimal):
        if x.is_nan():
            return "nan"
        return "inf" if x.is_infinite() else Fraction(x)
    if isinstance(x, numbers.Integral):
        return Fraction(int(x))
    if isinstance(x, numbers.Rational):
        return Fraction(int(x.numerator), int(x.denominator))
    if isinstance(x, np.floating):  # longdouble: exact through its integer ratio
        if np.isnan(x):
            return "nan"
        if np.isinf(x):
            return "inf"
        return Fraction(*(int(v) for v in x.as_integer_ratio()))
    ratio = getattr(x, "as_integer_ratio", None)
    if callable(ratio):
        return Fraction(*(int(v) for v in ratio()))
    value = float(x)  # another Real: its float conversion is all it offers
    return "nan" if math.isnan(value) else "inf" if math.isinf(value) else Fraction(value)


def as_float(value: Any) -> float:
    """``float(value)``, with a value beyond the float range as an infinity (then refused by
    the range check that follows) instead of an OverflowError."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf
