"""Boundary validation shared by every public entry point.

Errors name the offending argument and say how to fix it.  Nothing here
echoes the *content* of private inputs (only shapes, types and public
parameters).

Two ways to use it:

* the checkers (:func:`check_epsilon`, :func:`check_positive_int`,
  :func:`check_probability`, :func:`check_level`) take the raw argument,
  check its type and range *before* converting it, and return the converted
  value;
* :func:`validate_params` declares the constraints of a public function next
  to its signature, in the manner of scikit-learn's ``validate_params``::

      @validate_params(epsilon=Epsilon(), runs=Integer(minimum=1))
      def experiment(epsilon, runs=10): ...

  Each named argument is checked (and converted) before the body runs, so
  inner code receives validated values only.
"""

from __future__ import annotations

import decimal
import functools
import inspect
import math
import numbers
from fractions import Fraction
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

__all__ = [
    "Boolean",
    "Constraint",
    "Epsilon",
    "Integer",
    "Level",
    "Optional",
    "Options",
    "Probability",
    "check_bool",
    "check_epsilon",
    "check_level",
    "check_positive_int",
    "check_probability",
    "validate_params",
]

F = TypeVar("F", bound=Callable[..., Any])


def check_epsilon(epsilon: Any, name: str = "epsilon") -> float:
    """Return ``epsilon`` as a float after checking it is a finite real > 0.

    The float returned is never larger than the value given: a ``Fraction``,
    ``Decimal``, numpy ``longdouble`` or large integer that no float equals
    is rounded *down* to the largest float below it, so the release is
    certified for an epsilon at most the one asked for (rounding to the
    nearest float could round up and certify slightly less privacy).

    Parameters
    ----------
    epsilon : Any
        Candidate privacy parameter: any real number (int, float, numpy
        scalar, ``fractions.Fraction``, ``decimal.Decimal``).
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
        If ``epsilon`` is NaN, infinite, beyond the float range (10**400) or
        not strictly positive.

    Examples
    --------
    >>> check_epsilon(1)
    1.0
    >>> from fractions import Fraction
    >>> check_epsilon(Fraction(1, 10)) <= Fraction(1, 10) < check_epsilon(0.1)
    True
    """
    if isinstance(epsilon, (bool, np.bool_)):
        raise TypeError(f"{name} must be a real number, not a bool; pass e.g. {name}=1.0")
    if isinstance(epsilon, np.ndarray) and epsilon.ndim == 0:
        epsilon = epsilon[()]
    if not isinstance(epsilon, (numbers.Real, decimal.Decimal)):
        raise TypeError(
            f"{name} must be a real number (float or int), got {type(epsilon).__name__}; "
            f"pass e.g. {name}=1.0"
        )
    return _float_at_most(epsilon, name, f"a finite privacy parameter > 0, e.g. {name}=1.0")


def _float_at_most(x: Any, name: str, hint: str) -> float:
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


def check_probability(value: Any, name: str, *, allow_zero: bool = False,
                      example: str | None = None) -> float:
    """Return ``value`` as a float in (0, 1] (or [0, 1] with ``allow_zero``).

    Parameters
    ----------
    value : Any
        Candidate probability.
    name : str
        Argument name used in error messages.
    allow_zero : bool, default False
        Accept 0.
    example : str, optional
        A valid value to suggest in the error message, e.g. ``"0.01"``.

    Examples
    --------
    >>> check_probability(0.5, "keep")
    0.5
    """
    interval = "[0, 1]" if allow_zero else "(0, 1]"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number in {interval}, got {type(value).__name__}")
    value = _as_float(value)
    low_ok = value >= 0 if allow_zero else value > 0
    if not (low_ok and value <= 1):  # NaN fails both comparisons
        hint = f"; e.g. {name}={example}" if example is not None else ""
        raise ValueError(f"{name} must lie in {interval}, got {value!r}{hint}")
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
    level = _as_float(level)
    if not 0 < level < 1:
        raise ValueError(f"level must lie strictly between 0 and 1, e.g. 0.95; got {level!r}")
    return level


def _as_float(value: Any) -> float:
    """``float(value)``, with a value beyond the float range as an infinity (then refused by
    the range check that follows) instead of an OverflowError."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def check_bool(value: Any, name: str) -> bool:
    """Return ``value`` as a bool after checking it is True or False.

    Examples
    --------
    >>> check_bool(True, "directed")
    True
    """
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__}")
    return bool(value)


# ----------------------------------------------------------------------------- constraints
class Constraint:
    """A declared constraint on one argument: ``constraint(value, name)`` checks and converts."""

    def __call__(self, value: Any, name: str) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class Epsilon(Constraint):
    """A finite privacy parameter > 0 (see :func:`check_epsilon`)."""

    def __call__(self, value: Any, name: str) -> float:
        return check_epsilon(value, name)


class Integer(Constraint):
    """An integer (not a bool) >= ``minimum`` (see :func:`check_positive_int`)."""

    def __init__(self, minimum: int = 1) -> None:
        self.minimum = int(minimum)

    def __call__(self, value: Any, name: str) -> int:
        return check_positive_int(value, name, minimum=self.minimum)

    def __repr__(self) -> str:
        return f"Integer(minimum={self.minimum})"


class Probability(Constraint):
    """A real number in (0, 1] (or [0, 1]) (see :func:`check_probability`)."""

    def __init__(self, allow_zero: bool = False, example: str | None = None) -> None:
        self.allow_zero = bool(allow_zero)
        self.example = example

    def __call__(self, value: Any, name: str) -> float:
        return check_probability(value, name, allow_zero=self.allow_zero, example=self.example)


class Level(Constraint):
    """A confidence level strictly between 0 and 1 (see :func:`check_level`)."""

    def __call__(self, value: Any, name: str) -> float:
        return check_level(value)


class Boolean(Constraint):
    """True or False (numpy bools accepted), returned as a Python bool."""

    def __call__(self, value: Any, name: str) -> bool:
        return check_bool(value, name)


class Options(Constraint):
    """One of a fixed set of values (compared with ``==``, returned as given)."""

    def __init__(self, *options: Any) -> None:
        self.options = tuple(options)

    def __call__(self, value: Any, name: str) -> Any:
        try:
            ok = value in self.options
        except TypeError:  # unhashable or incomparable
            ok = False
        if not ok:
            choices = ", ".join(repr(o) for o in self.options)
            raise ValueError(f"{name} must be one of {choices}; got {value!r}")
        return value

    def __repr__(self) -> str:
        return f"Options{self.options!r}"


class Optional(Constraint):
    """``None`` or a value satisfying ``constraint``."""

    def __init__(self, constraint: Constraint) -> None:
        self.constraint = constraint

    def __call__(self, value: Any, name: str) -> Any:
        return None if value is None else self.constraint(value, name)

    def __repr__(self) -> str:
        return f"Optional({self.constraint!r})"


def validate_params(**constraints: Constraint) -> Callable[[F], F]:
    """Decorator declaring the constraints of a function's parameters.

    Every named argument is checked, in the order the constraints are
    declared, before the function body runs; the checked (converted) value
    replaces the argument.  Defaults are checked too, so a wrong default is
    caught at the first call.  The declared constraints are kept on the
    wrapper as ``__dpgraph_constraints__`` (documentation and tests read
    them).

    Parameters
    ----------
    **constraints : Constraint
        One per parameter name of the decorated function.

    Raises
    ------
    TypeError
        At decoration time, if a name is not a parameter of the function.

    Examples
    --------
    >>> @validate_params(epsilon=Epsilon(), runs=Integer(minimum=1))
    ... def experiment(epsilon, runs=10):
    ...     return epsilon, runs
    >>> experiment(1, runs=3)
    (1.0, 3)
    >>> experiment(0.5, runs=0)
    Traceback (most recent call last):
    ...
    ValueError: runs must be >= 1, got 0
    """
    for name, c in constraints.items():
        if not isinstance(c, Constraint):
            raise TypeError(f"constraint for {name!r} must be a dpgraph.validation.Constraint")

    def decorate(func: F) -> F:
        sig = inspect.signature(func)
        unknown = set(constraints) - set(sig.parameters)
        if unknown:
            raise TypeError(f"{func.__qualname__} has no parameter(s) {sorted(unknown)}")
        positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        # where each constrained argument can arrive: its position (if any) and its default
        plan = []
        for k, (name, param) in enumerate(sig.parameters.items()):
            if name in constraints:
                pos = k if param.kind in positional else None
                plan.append((name, constraints[name], pos, param.default))
        # in declaration order of the constraints, so errors come in a documented order
        order = {name: k for k, name in enumerate(constraints)}
        plan.sort(key=lambda item: order[item[0]])

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if any(pos is not None and pos < len(args) for _, _, pos, _ in plan):
                args = list(args)  # type: ignore[assignment]
            for name, constraint, pos, default in plan:
                if pos is not None and pos < len(args):
                    args[pos] = constraint(args[pos], name)  # type: ignore[index]
                elif name in kwargs:
                    kwargs[name] = constraint(kwargs[name], name)
                elif default is not inspect.Parameter.empty:
                    kwargs[name] = constraint(default, name)
                # a missing required argument: the call itself raises TypeError
            return func(*args, **kwargs)

        wrapper.__dpgraph_constraints__ = dict(constraints)  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return decorate
