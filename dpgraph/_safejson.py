"""Parse untrusted JSON (file headers, ledgers) with resource limits.

``json.loads`` on hostile input can raise RecursionError (deep nesting),
produce a huge int (and later an OverflowError or a slow conversion) from a
number of thousands of digits, or read ``1e999`` as infinity.  :func:`loads`
refuses all of these with a ValueError before or while parsing: the nesting
depth is measured on the text with strings removed (vectorized, no
recursion), numbers are parsed by hooks that bound their length, and
NaN/Infinity are refused.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import numpy as np

__all__ = ["loads", "MAX_DEPTH", "MAX_NUMBER_CHARS"]

#: deepest nesting of arrays/objects accepted (dpgraph writes at most 4)
MAX_DEPTH = 32
#: longest number literal accepted (a uint64 has 20 digits, a float repr ~24 chars)
MAX_NUMBER_CHARS = 40

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)


def _depth(raw: bytes) -> int:
    """Maximum bracket nesting of JSON text ``raw`` (strings ignored)."""
    text = np.frombuffer(_STRING.sub(b'""', raw), dtype=np.uint8)
    step = np.zeros(text.size, dtype=np.int8)
    step[(text == ord("[")) | (text == ord("{"))] = 1
    step[(text == ord("]")) | (text == ord("}"))] = -1
    return int(np.cumsum(step, dtype=np.int64).max(initial=0))


def _parse_int(s: str) -> int:
    if len(s) > MAX_NUMBER_CHARS:
        raise ValueError(f"a number of {len(s)} digits is longer than any this format writes")
    return int(s)


def _parse_float(s: str) -> float:
    if len(s) > MAX_NUMBER_CHARS:
        raise ValueError(f"a number of {len(s)} characters is longer than any this format writes")
    x = float(s)
    if not math.isfinite(x):
        raise ValueError(f"the number {s} overflows a float")
    return x


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid in this format")


def loads(raw: bytes, what: str) -> Any:
    """Parse UTF-8 JSON ``raw`` with depth and number-length limits.

    Parameters
    ----------
    raw : bytes
        The untrusted text.
    what : str
        Names the input in error messages (e.g. ``"file header"``).

    Raises
    ------
    ValueError
        Invalid UTF-8 or JSON, nesting deeper than :data:`MAX_DEPTH`, a number
        longer than :data:`MAX_NUMBER_CHARS` or not finite, NaN/Infinity.

    Examples
    --------
    >>> loads(b'{"a": [1, 2.5]}', "example")
    {'a': [1, 2.5]}
    >>> loads(b"[" * 100 + b"]" * 100, "example")
    Traceback (most recent call last):
    ...
    ValueError: example: JSON nested 100 deep (at most 32 is accepted)
    """
    depth = _depth(raw)
    if depth > MAX_DEPTH:
        raise ValueError(f"{what}: JSON nested {depth} deep (at most {MAX_DEPTH} is accepted)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{what}: not valid JSON (invalid UTF-8)") from None
    try:
        return json.loads(text, parse_int=_parse_int, parse_float=_parse_float,
                          parse_constant=_constant)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{what}: not valid JSON ({exc.msg})") from None
    except (ValueError, RecursionError, OverflowError) as exc:
        raise ValueError(f"{what}: {exc}") from None
