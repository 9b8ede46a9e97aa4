"""Parse untrusted JSON (file headers, ledgers) with resource limits.

``json.loads`` on hostile input can raise RecursionError (deep nesting),
produce a huge int (and later an OverflowError or a slow conversion) from a
number of thousands of digits, or read ``1e999`` as infinity.  :func:`loads`
refuses all of these with a ValueError: nesting deeper than the interpreter's
recursion limit stops the parser (RecursionError, turned into ValueError) and
anything deeper than :data:`MAX_DEPTH` is refused after parsing (an iterative
walk), numbers are parsed by hooks that bound their length, and NaN/Infinity
are refused.
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["MAX_DEPTH", "MAX_NUMBER_CHARS", "loads"]

#: deepest nesting of arrays/objects accepted (dpgraph writes at most 4)
MAX_DEPTH = 32
#: longest number literal accepted (a uint64 has 20 digits, a float repr ~24 chars)
MAX_NUMBER_CHARS = 40


def _depth(doc: Any) -> int:
    """Maximum nesting of lists/dicts in a parsed document (iterative: no recursion)."""
    deepest, stack = 0, [(doc, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (list, dict)):
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > MAX_DEPTH:
                    return deepest
            items = node.values() if isinstance(node, dict) else node
            stack.extend((child, depth) for child in items if isinstance(child, (list, dict)))
    return deepest


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
    ValueError: example: JSON nested too deep (at most 32 is accepted)
    """
    # every refusal is raised outside its handler: UnicodeDecodeError.object and
    # JSONDecodeError.doc hold the input, and would travel as the error's __context__
    problem = None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        problem = "not valid JSON (invalid UTF-8)"
    if problem is None:
        try:
            doc = json.loads(text, parse_int=_parse_int, parse_float=_parse_float,
                             parse_constant=_constant)
        except RecursionError:  # the C scanner stops at the interpreter's recursion limit
            problem = f"JSON nested too deep (at most {MAX_DEPTH} is accepted)"
        except json.JSONDecodeError as exc:
            problem = f"not valid JSON ({exc.msg})"
        except (ValueError, OverflowError) as exc:
            problem = str(exc)
    if problem is not None:
        raise ValueError(f"{what}: {problem}")
    depth = _depth(doc)
    if depth > MAX_DEPTH:
        raise ValueError(f"{what}: JSON nested too deep (at most {MAX_DEPTH} is accepted)")
    return doc
