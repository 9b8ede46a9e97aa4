"""Boundary validation shared by every public entry point.

Errors name the offending argument and say how to fix it.  Nothing here
echoes the *content* of private inputs (only shapes, types and public
parameters).

Two ways to use it:

* the checkers (:func:`check_epsilon`, :func:`check_positive_int`,
  :func:`check_probability`, :func:`check_level`, :func:`check_regular_file`
  for a path about to be opened; :func:`write_atomic` for one about to be written) take the raw argument,
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
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from ._files import check_regular_file, refuse_overwrite, write_atomic
from ._reals import as_float as _as_float
from ._reals import float_at_most as _float_at_most

__all__ = [
    "AnyOf",
    "Boolean",
    "Constraint",
    "Epsilon",
    "InstanceOf",
    "Integer",
    "Interval",
    "Level",
    "Optional",
    "Options",
    "Probability",
    "check_bool",
    "check_epsilon",
    "check_level",
    "check_positive_int",
    "check_probability",
    "check_regular_file",
    "refuse_overwrite",
    "validate_params",
    "write_atomic",
]

F = TypeVar("F", bound=Callable[..., Any])


def check_epsilon(epsilon: Any, name: str = "epsilon") -> float:
    """Return ``epsilon`` as a float after checking it is a finite real > 0.

    Never larger than the value given: a real that no float equals is rounded
    *down*, so a release is certified for at most the epsilon asked for.

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

    ``name`` is the argument's name and ``example`` a valid value (e.g.
    ``"0.01"``) for the error message.

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
    """A declared constraint on one argument: ``constraint(value, name)`` checks and converts.

    Every constraint also says what it accepts (:meth:`describe`) and gives
    values it must refuse and one it accepts (:meth:`invalid_examples`,
    :meth:`valid_example`), so one common test can try every declared
    parameter of every public function with bad values.
    """

    def __call__(self, value: Any, name: str) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def describe(self) -> str:  # pragma: no cover - abstract
        """What the constraint accepts, in words (used in error messages)."""
        raise NotImplementedError

    def invalid_examples(self) -> tuple:
        """Values the constraint must refuse (with an error naming the argument)."""
        return (object(),)

    def valid_example(self) -> Any:  # pragma: no cover - abstract
        """One value the constraint accepts."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class Interval(Constraint):
    """A number of a kind (integer or real; never a bool) in an interval.

    Parameters
    ----------
    kind : numbers.Integral or numbers.Real
        ``Integral`` accepts Python and numpy integers; ``Real`` also floats
        (converted to float; NaN and numbers too large for a float refused).
    left, right : number or None
        The bounds (None: unbounded).
    closed : {"both", "left", "right", "neither"}, default "both"
        Which bounds belong to the interval.
    example : str, optional
        A valid value to suggest in the error message.

    Examples
    --------
    >>> Interval(numbers.Integral, 1, None)(3, "runs")
    3
    >>> Interval(numbers.Real, 0, 1, closed="neither")(1.0, "fraction")
    Traceback (most recent call last):
    ...
    ValueError: fraction must be a real number in (0, 1), got 1.0; e.g. fraction=0.5
    """

    def __init__(self, kind: type, left: Any = None, right: Any = None, *,
                 closed: str = "both", example: str | None = None) -> None:
        if kind not in (numbers.Integral, numbers.Real):
            raise TypeError("kind must be numbers.Integral or numbers.Real")
        if closed not in ("both", "left", "right", "neither"):
            raise ValueError("closed must be 'both', 'left', 'right' or 'neither'")
        self.kind, self.left, self.right, self.closed = kind, left, right, closed
        self.example = example

    def describe(self) -> str:
        what = "an integer" if self.kind is numbers.Integral else "a real number"
        lo_in = self.closed in ("both", "left")
        hi_in = self.closed in ("both", "right")
        if self.left is not None and self.right is not None:
            return (f"{what} in {'[' if lo_in else '('}{self.left:g}, "
                    f"{self.right:g}{']' if hi_in else ')'}")
        if self.left is not None:
            return f"{what} {'>=' if lo_in else '>'} {self.left:g}"
        if self.right is not None:
            return f"{what} {'<=' if hi_in else '<'} {self.right:g}"
        return what

    def __call__(self, value: Any, name: str) -> Any:
        hint = f"; e.g. {name}={self.valid_example()}"
        if isinstance(value, np.ndarray) and value.ndim == 0:
            value = value.item()
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, self.kind):
            raise TypeError(f"{name} must be {self.describe()}, got {type(value).__name__}{hint}")
        if self.kind is numbers.Integral:
            value = int(value)
        else:
            try:
                value = float(value)
            except OverflowError:
                raise ValueError(f"{name} must be {self.describe()}, got a number too large "
                                 f"for a float{hint}") from None
            if math.isnan(value):
                raise ValueError(f"{name} must be {self.describe()}, got NaN{hint}")
        if not self._inside(value):
            raise ValueError(f"{name} must be {self.describe()}, got {value!r}{hint}")
        return value

    def _inside(self, v: Any) -> bool:
        below = self.left is not None and (
            v < self.left or (v == self.left and self.closed in ("right", "neither")))
        above = self.right is not None and (
            v > self.right or (v == self.right and self.closed in ("left", "neither")))
        return not (below or above or (isinstance(v, float) and math.isinf(v)))  # finite

    def invalid_examples(self) -> tuple:
        bad: list[Any] = ["1", True, None]
        if self.kind is numbers.Integral:
            bad.append(1.5)
        else:
            bad += [float("nan"), float("inf")]
        if self.left is not None:
            bad.append(self.left - 1 if self.closed in ("both", "left") else self.left)
        if self.right is not None:
            bad.append(self.right + 1 if self.closed in ("both", "right") else self.right)
        return tuple(bad)

    def valid_example(self) -> Any:
        if self.example is not None:  # written for messages: the number it spells
            return int(self.example) if self.kind is numbers.Integral else float(self.example)
        lo, hi = self.left, self.right
        if lo is not None and hi is not None:
            mid = (lo + hi) / 2
            return int(mid) if self.kind is numbers.Integral and self._inside(int(mid)) else mid
        if lo is not None:
            return lo + 1 if self.kind is numbers.Integral or lo != int(lo) else lo + 1.0
        if hi is not None:
            return hi - 1
        return 1

    def __repr__(self) -> str:
        kind = "Integral" if self.kind is numbers.Integral else "Real"
        return f"Interval({kind}, {self.left!r}, {self.right!r}, closed={self.closed!r})"


class Epsilon(Constraint):
    """A finite privacy parameter > 0 (see :func:`check_epsilon`)."""

    def __call__(self, value: Any, name: str) -> float:
        return check_epsilon(value, name)

    def describe(self) -> str:
        return "a finite real number > 0"

    def invalid_examples(self) -> tuple:
        return ("1", True, None, 0.0, -1.0, float("nan"), float("inf"))

    def valid_example(self) -> float:
        return 1.0


class Integer(Interval):
    """An integer (not a bool) >= ``minimum``, <= ``maximum`` if given (:func:`check_positive_int`)."""

    def __init__(self, minimum: int = 1, maximum: int | None = None) -> None:
        super().__init__(numbers.Integral, int(minimum), None if maximum is None else int(maximum))
        self.minimum = int(minimum)

    def __call__(self, value: Any, name: str) -> int:
        value = check_positive_int(value, name, minimum=self.minimum)
        if self.right is not None and value > self.right:  # a huge one is not printed
            raise ValueError(f"{name} must be an integer <= {self.right:,}, got a larger one")
        return value

    def __repr__(self) -> str:
        return f"Integer(minimum={self.minimum}, maximum={self.right})"


class Probability(Interval):
    """A real number in (0, 1] (or [0, 1]) (see :func:`check_probability`)."""

    def __init__(self, allow_zero: bool = False, example: str | None = None) -> None:
        super().__init__(numbers.Real, 0, 1, closed="both" if allow_zero else "right",
                         example=example)
        self.allow_zero = bool(allow_zero)

    def __call__(self, value: Any, name: str) -> float:
        return check_probability(value, name, allow_zero=self.allow_zero, example=self.example)


class Level(Interval):
    """A confidence level strictly between 0 and 1 (see :func:`check_level`)."""

    def __init__(self) -> None:
        super().__init__(numbers.Real, 0, 1, closed="neither", example="0.95")

    def __call__(self, value: Any, name: str) -> float:
        return check_level(value)

    def invalid_examples(self) -> tuple:
        return ("0.95", True, 0.0, 1.0, 95, float("nan"))


class Boolean(Constraint):
    """True or False (numpy bools accepted), returned as a Python bool."""

    def __call__(self, value: Any, name: str) -> bool:
        return check_bool(value, name)

    def describe(self) -> str:
        return "True or False"

    def invalid_examples(self) -> tuple:
        return ("yes", 1, None)

    def valid_example(self) -> bool:
        return True


class Options(Constraint):
    """One of a fixed set of values (compared with ``==``, returned as given)."""

    def __init__(self, *options: Any) -> None:
        self.options = tuple(options)

    def describe(self) -> str:
        return "one of " + ", ".join(repr(o) for o in self.options)

    def __call__(self, value: Any, name: str) -> Any:
        try:
            ok = any(value == o and type(value) is type(o) for o in self.options) or (
                isinstance(value, str) and value in self.options)
        except (TypeError, ValueError):  # incomparable (an array, say)
            ok = False
        if not ok:
            raise ValueError(f"{name} must be {self.describe()}; got {value!r}")
        return value

    def invalid_examples(self) -> tuple:
        return ("no-such-option", 12345)

    def valid_example(self) -> Any:
        return self.options[0]

    def __repr__(self) -> str:
        return f"Options{self.options!r}"


class InstanceOf(Constraint):
    """An instance of one of ``types`` (never a bool unless ``bool`` is listed).

    Parameters
    ----------
    *types : type
    what : str, optional
        How to say it in an error message (default: the type names).
    example : Any, optional
        A valid value (for :meth:`valid_example`).
    """

    def __init__(self, *types: type, what: str | None = None, example: Any = None) -> None:
        self.types = types
        self.what = what or " or ".join(t.__name__ for t in types)
        self.example = example

    def describe(self) -> str:
        return self.what

    def __call__(self, value: Any, name: str) -> Any:
        if (isinstance(value, (bool, np.bool_)) and bool not in self.types) or \
                not isinstance(value, self.types):
            raise TypeError(f"{name} must be {self.what}, got {type(value).__name__}")
        return value

    def invalid_examples(self) -> tuple:
        return tuple(v for v in (object(), 3.5, "text") if not isinstance(v, self.types))

    def valid_example(self) -> Any:
        return self.example

    def __repr__(self) -> str:
        return f"InstanceOf({', '.join(t.__name__ for t in self.types)})"


class AnyOf(Constraint):
    """A value satisfying one of several constraints (the first that accepts converts it).

    ``None`` among the alternatives accepts ``None`` itself.

    Examples
    --------
    >>> c = AnyOf(None, Interval(numbers.Integral, 0, None))
    >>> c(None, "seed"), c(3, "seed")
    (None, 3)
    >>> c(-1, "seed")
    Traceback (most recent call last):
    ...
    ValueError: seed must be an integer >= 0, got -1; e.g. seed=1
    """

    def __init__(self, *alternatives: Constraint | None) -> None:
        self.alternatives = alternatives

    def describe(self) -> str:
        return " or ".join("None" if a is None else a.describe() for a in self.alternatives)

    def __call__(self, value: Any, name: str) -> Any:
        real = [a for a in self.alternatives if a is not None]
        if len(real) == 1 and value is not None:  # "None or X": X's own, more precise, message
            return real[0](value, name)
        errors: list[Exception] = []
        for a in self.alternatives:
            if a is None:
                if value is None:
                    return None
                continue
            try:
                return a(value, name)
            except (TypeError, ValueError) as exc:
                errors.append(exc)
        kind = ValueError if any(isinstance(e, ValueError) for e in errors) else TypeError
        shown = f"{value!r}" if kind is ValueError else type(value).__name__
        raise kind(f"{name} must be {self.describe()}, got {shown}")

    def invalid_examples(self) -> tuple:
        bad = []
        for a in self.alternatives:
            if a is None:
                continue
            for v in a.invalid_examples():
                if v is None and None in self.alternatives:
                    continue
                if all(not _accepts(b, v) for b in self.alternatives):
                    bad.append(v)
        return tuple(bad)

    def valid_example(self) -> Any:
        for a in self.alternatives:
            if a is not None:
                return a.valid_example()
        return None

    def __repr__(self) -> str:
        return f"AnyOf{self.alternatives!r}"


def _accepts(c: Constraint | None, value: Any) -> bool:
    if c is None:
        return value is None
    try:
        c(value, "x")
    except (TypeError, ValueError):
        return False
    return True


def Optional(constraint: Constraint) -> AnyOf:
    """``None`` or a value satisfying ``constraint`` (``AnyOf(None, constraint)``)."""
    return AnyOf(None, constraint)


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
