"""Boundary validation shared by every public entry point.

Errors name the offending argument and say how to fix it. Nothing here echoes
the *content* of private inputs (only shapes, types and public parameters).
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

__all__ = ["check_epsilon", "check_positive_int", "check_probability", "check_level"]


def check_epsilon(epsilon: Any, name: str = "epsilon") -> float:
    """Return ``epsilon`` as a float after checking it is a finite real > 0.

    Parameters
    ----------
    epsilon : Any
        Candidate privacy parameter.
    name : str
        Argument name used in error messages.

    Returns
    -------
    float

    Raises
    ------
    TypeError
        If ``epsilon`` is a bool, a string, a complex number, an array or
        anything but a real scalar.
    ValueError
        If ``epsilon`` is NaN, infinite or not strictly positive.

    Examples
    --------
    >>> check_epsilon(1)
    1.0
    """
    if isinstance(epsilon, (bool, np.bool_)):
        raise TypeError(f"{name} must be a real number, not a bool; pass e.g. {name}=1.0")
    if isinstance(epsilon, np.ndarray) and epsilon.ndim == 0:
        epsilon = epsilon.item()
    if not isinstance(epsilon, numbers.Real):
        raise TypeError(
            f"{name} must be a real number (float or int), got {type(epsilon).__name__}; "
            f"pass e.g. {name}=1.0"
        )
    value = float(epsilon)
    if math.isnan(value):
        raise ValueError(f"{name} is NaN; pass a finite privacy parameter > 0, e.g. {name}=1.0")
    if math.isinf(value):
        raise ValueError(
            f"{name} must be finite (infinite epsilon means no privacy); pass e.g. {name}=1.0"
        )
    if value <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}; pass e.g. {name}=1.0")
    return value


def check_positive_int(value: Any, name: str, minimum: int = 1) -> int:
    """Return ``value`` as an int after checking it is an integer >= ``minimum``.

    Examples
    --------
    >>> check_positive_int(3, "K", minimum=2)
    3
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    value = int(value)
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def check_probability(value: Any, name: str, *, allow_zero: bool = False) -> float:
    """Return ``value`` as a float in (0, 1] (or [0, 1] with ``allow_zero``).

    Examples
    --------
    >>> check_probability(0.5, "keep")
    0.5
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number in (0, 1], got {type(value).__name__}")
    value = float(value)
    low_ok = value >= 0 if allow_zero else value > 0
    if not (low_ok and value <= 1):
        interval = "[0, 1]" if allow_zero else "(0, 1]"
        raise ValueError(f"{name} must lie in {interval}, got {value!r}")
    return value


def check_level(level: Any) -> float:
    """Return a confidence level in (0, 1).

    Examples
    --------
    >>> check_level(0.95)
    0.95
    """
    if isinstance(level, (bool, np.bool_)) or not isinstance(level, numbers.Real):
        raise TypeError(f"level must be a real number in (0, 1), got {type(level).__name__}")
    level = float(level)
    if not 0 < level < 1:
        raise ValueError(f"level must lie strictly between 0 and 1, e.g. 0.95; got {level!r}")
    return level
