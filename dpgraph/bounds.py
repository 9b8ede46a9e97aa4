"""The paper's error bounds, each written once.

Notation as in the paper: n rows, K = |D| values (K = 2^l for D = {0,1}^l),
privacy parameter eps, g = 1 + (K-1) e^-eps, and uniform bounds a <= a_i,
b_i <= b, c_i >= c on the row functions.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
from scipy.special import ndtr

from .validation import Boolean, Epsilon, Integer, Interval, validate_params

__all__ = [
    "continuous_lower",
    "continuous_upper",
    "cut_upper",
    "discretization_bits",
    "discretize",
    "statistical_lower",
    "statistical_upper",
]


def _check_abc(a: float, b: float, c: float) -> tuple[float, float, float]:
    a, b, c = float(a), float(b), float(c)
    if not all(math.isfinite(x) for x in (a, b, c)):
        raise ValueError("a, b and c must be finite")
    if c <= 0:
        raise ValueError(f"c must be > 0 (the smallest range b_i - a_i), got {c}")
    if b - a < c:
        raise ValueError(f"need b - a >= c (every c_i lies in [c, b - a]); got a={a}, b={b}, c={c}")
    return a, b, c


def _out(x: Any) -> Any:
    return float(x) if np.ndim(x) == 0 else x


def _check_n(n: Any) -> Any:
    arr = np.asarray(n, dtype=float)
    if np.any(~np.isfinite(arr)) or np.any(arr < 1):
        raise ValueError("n must be >= 1 (the number of rows)")
    return arr if arr.ndim else float(arr)


@validate_params(K=Integer(minimum=2), epsilon=Epsilon(), proper=Boolean(), absolute=Boolean())
def statistical_upper(
    n: Any,
    K: int,
    epsilon: float,
    a: float = 0.0,
    b: float = 1.0,
    c: float = 1.0,
    proper: bool = False,
    absolute: bool = False,
) -> Any:
    """Upper bound on the worst-case error of mechanism E's estimators.

    Lemma 2 (unbiased q_u), squared error::

        (b-a)^2 g^2 / (c^2 (1-e^-eps)^2) / n,   g = 1 + (K-1) e^-eps.

    Lemma 3 (proper estimator): 4 times that.  With ``absolute=True`` the
    bound on E|error| (the paper's remark after Lemma 3): the square root.

    Parameters
    ----------
    n : int or array
        Number of rows.
    K : int
        Universe size (2^l in the paper).
    epsilon : float
    a, b, c : float
        Uniform bounds on the row functions.
    proper : bool
        Bound for the proper estimator instead of q_u.
    absolute : bool
        Absolute-error bound instead of squared error.

    Examples
    --------
    >>> import math
    >>> g = 1 + math.exp(-1)
    >>> math.isclose(statistical_upper(100, 2, 1.0), g**2 / (1 - math.exp(-1))**2 / 100)
    True
    """
    eps = epsilon
    a, b, c = _check_abc(a, b, c)
    n = _check_n(n)
    q = math.exp(-eps)
    g = 1 + (K - 1) * q
    squared = (b - a) ** 2 * g**2 / (c**2 * (1 - q) ** 2) / n
    if proper:
        squared = 4 * squared
    return _out(np.sqrt(squared) if absolute else squared)


@validate_params(l=Integer(minimum=1), epsilon=Epsilon())
def statistical_lower(n: Any, l: int, epsilon: float) -> Any:
    """Leading term of the Theorem 1 lower bound on the minimax squared error.

        (1 - Phi(1))^2 / (2^(l+4) (1 + e^eps / (2^l - 1))^3) / n

    It holds for every eps-DP mechanism and estimator, up to o(1/n).

    Examples
    --------
    >>> import math
    >>> from scipy.stats import norm
    >>> v = statistical_lower(1000, 1, 1.0)
    >>> math.isclose(v, norm.sf(1) ** 2 / (2**5 * (1 + math.e) ** 3) / 1000)
    True
    """
    eps = epsilon
    n = _check_n(n)
    tail = 1.0 - float(ndtr(1.0))
    return _out(tail**2 / (2 ** (l + 4) * (1 + math.exp(eps) / (2**l - 1)) ** 3) / n)


def continuous_lower(n: Any, epsilon: float) -> Any:
    """Lower bound of the continuous-universe Proposition (the l = 1 case of Theorem 1)."""
    return statistical_lower(n, 1, epsilon)


@validate_params(epsilon=Epsilon(), L=Interval(numbers.Real, 0, None, example="1"))
def continuous_upper(
    n: Any, epsilon: float, L: float, a: float = 0.0, b: float = 1.0, c: float = 1.0
) -> Any:
    """Leading term of the section V upper bound for rows in [0, 1].

    With L-Lipschitz row functions, rows discretized to k bits with
    2^(2k) = sqrt(n) and mechanism E with the proper estimator on the 2^k
    cells, the squared error is at most

        (L / c + 2 (b-a) e^-eps / (c (1-e^-eps)))^2 / sqrt(n)  +  o(1/sqrt(n)).

    This is the Proposition's bound with the cross term kept: the proof
    expands E(A + X)^2 with A <= L / (c 2^k) the discretization error and
    E|X| <= 2 (b-a) g / (c (1-e^-eps) sqrt(n)), g = 1 + (2^k - 1) e^-eps ~
    2^k e^-eps, so 2 A E|X| is of order 1/sqrt(n) too.  The Proposition as
    printed keeps only the two squares, L^2/c^2 + 4 (b-a)^2 e^-2eps /
    (c^2 (1-e^-eps)^2), which is smaller than the bound its proof supports.
    The rate 1/sqrt(n) is the same.

    Examples
    --------
    >>> import math
    >>> q = math.exp(-1)
    >>> math.isclose(continuous_upper(10_000, 1.0, L=1.0), (1 + 2 * q / (1 - q)) ** 2 / 100)
    True
    """
    eps = epsilon
    a, b, c = _check_abc(a, b, c)
    n = _check_n(n)
    q = math.exp(-eps)
    return _out((float(L) / c + 2 * (b - a) * q / (c * (1 - q))) ** 2 / np.sqrt(n))


@validate_params(n=Integer(minimum=1))
def discretization_bits(n: int) -> int:
    """Bits k per row for the Proposition's rule 2^(2k) = sqrt(n), i.e. k = log2(n) / 4.

    Rounded to the nearest integer (halves up), at least 1.

    Examples
    --------
    >>> discretization_bits(2**16)
    4
    """
    return max(1, math.floor(math.log2(n) / 4 + 0.5))  # half rounds up


@validate_params(k=Integer(minimum=1))
def discretize(x: Any, k: int) -> np.ndarray:
    """Cell index floor(x 2^k) (clipped to 2^k - 1) of rows x in [0, 1].

    The cell's left end i / 2^k is within 2^-k of x, as the Proposition needs.

    Examples
    --------
    >>> discretize([0.0, 0.49, 0.5, 1.0], 1).tolist()
    [0, 0, 1, 1]
    """
    arr = np.asarray(x, dtype=float)
    if arr.size == 0:
        raise ValueError("x is empty")
    if not np.all((arr >= 0) & (arr <= 1)):
        raise ValueError("x must lie in [0, 1]; rescale the data first")
    cells = 1 << k
    return np.minimum((arr * cells).astype(np.int64), cells - 1)


def cut_upper(s: Any, t: Any, epsilon: float) -> Any:
    """Bound on E|q_hat - q| for a cut query over |S| = s, |T| = t:

        (1 + e^-eps) / (1 - e^-eps) * sqrt(s t)

    It is the K = 2 absolute-error bound of Lemma 2 for the s t pairs of
    S x T, un-normalised (times s t).

    Examples
    --------
    >>> import math
    >>> math.isclose(cut_upper(50, 50, 1.0), (1 + math.exp(-1)) / (1 - math.exp(-1)) * 50)
    True
    """
    rows = np.asarray(s, dtype=float) * np.asarray(t, dtype=float)
    per_row = statistical_upper(rows, 2, epsilon, absolute=True)
    return _out(per_row * rows)
