"""Parse untrusted JSON (file headers, ledgers) with resource limits.

``json.loads`` on hostile input can raise RecursionError (deep nesting),
produce a huge int (and later an OverflowError or a slow conversion) from a
number of thousands of digits, or read ``1e999`` as infinity.  :func:`loads`
refuses all of these with a ValueError: nesting deeper than the interpreter's
recursion limit stops the parser (RecursionError, turned into ValueError) and
anything deeper than :data:`MAX_DEPTH` is refused after parsing (an iterative
walk), numbers are parsed by hooks that bound their length, and NaN/Infinity
are refused.

Parsing also costs memory out of proportion to the text: ``[{},{},...]``
makes a Python dict (64 bytes and more) of every three bytes.  Before
parsing, :func:`shape` scans the text (outside its strings, 64 KiB at a
time, so the scan allocates a few MiB whatever the size; about the time of
the parse, see ``benchmarks/bench_header_scan.py``)
and :func:`loads` refuses text nested deeper than :data:`MAX_DEPTH`, or whose
containers and items would cost more than :data:`MAX_AMPLIFICATION` times its
size (and more than :data:`FREE_PARSE_BYTES`) to build.  The cost is counted
as :data:`CONTAINER_COST` bytes a list or object, :data:`ITEM_COST` bytes an
item and :data:`STRING_COST` more a string: a list of numbers or strings costs 4 to 8 times its text, a list
of distinct pairs ``[123,456]`` about 18, a list of empty objects about 47.
"""

from __future__ import annotations

import json
import math
from typing import Any, NamedTuple

import numpy as np

__all__ = ["FREE_PARSE_BYTES", "MAX_AMPLIFICATION", "MAX_DEPTH", "MAX_NUMBER_CHARS", "Shape",
           "loads", "shape"]

#: deepest nesting of arrays/objects accepted (dpgraph writes at most 4)
MAX_DEPTH = 32
#: longest number literal accepted (a uint64 has 20 digits, a float repr ~24 chars)
MAX_NUMBER_CHARS = 40
#: bytes counted for a list or object the parser builds (a one-item list from json is 88)
CONTAINER_COST = 100
#: bytes counted for an item, key or value (a slot, and an int or short str object)
ITEM_COST = 40
#: bytes counted for a string besides its text (a str object is 49 bytes and its text)
STRING_COST = 56
#: a text may cost this many times its size to parse (distinct int pairs cost ~18)
MAX_AMPLIFICATION = 20
#: below this estimated cost, any shape is parsed (small files of any shape)
FREE_PARSE_BYTES = 32 << 20

_SCAN_BLOCK = 1 << 16
#: the byte classes the scan tells apart
_OTHER, _OPEN, _CLOSE, _SEPARATOR, _QUOTE, _BACKSLASH = range(6)
_CLASSES = np.zeros(256, dtype=np.uint8)
_CLASSES[[ord("["), ord("{")]] = _OPEN
_CLASSES[[ord("]"), ord("}")]] = _CLOSE
_CLASSES[[ord(","), ord(":")]] = _SEPARATOR
_CLASSES[ord('"')] = _QUOTE
_CLASSES[ord("\\")] = _BACKSLASH
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


class Shape(NamedTuple):
    """What a JSON text would build, counted before parsing it (see :func:`shape`)."""

    depth: int  #: deepest nesting of lists and objects
    containers: int  #: lists and objects
    items: int  #: upper bound on the values and keys they hold
    strings: int  #: strings (keys and values)
    cost: int  #: estimated bytes to build (see :data:`CONTAINER_COST`, :data:`ITEM_COST`)


def shape(raw: bytes) -> Shape:
    r"""Count what ``json.loads(raw)`` would build, without building it.

    A quote preceded by an even number of backslashes opens or closes a
    string; brackets, commas and colons outside strings are counted, and the
    nesting depth is the largest running sum of openings minus closings.  The
    scan runs over 64 KiB at a time (split at its quotes, or, when it holds a
    backslash, a few numpy arrays of that size), so it allocates a fixed
    amount whatever the text (a few MiB).  Malformed text gets some shape;
    the parser refuses it afterwards.

    Examples
    --------
    >>> shape(b'{"a": [1, 2, "[x\\\\"], "b": {}}')
    Shape(depth=2, containers=3, items=6, strings=3, cost=708)
    """
    depth = level = containers = separators = quotes = 0
    inside, backslashes = False, 0  # carried from one block to the next
    for start in range(0, len(raw), _SCAN_BLOCK):
        block = raw[start:start + _SCAN_BLOCK]
        if backslashes == 0 and b"\\" not in block:  # no escape: split at the quotes, in C
            pieces = block.split(b'"')
            count = len(pieces) - 1
            bare = b"".join(pieces[1 if inside else 0::2])  # the text outside strings
            backslashes = 0
        else:
            bare, count, backslashes = _outside_escaped(block, inside, backslashes)
        quotes += count
        inside = (count + inside) % 2 == 1
        separators += bare.count(b",") + bare.count(b":")
        brackets = np.frombuffer(bare.translate(None, _NOT_BRACKETS), dtype=np.uint8)
        if brackets.size:
            # "[" and "{" have bit 1 set, "]" and "}" clear: +1 for an opening, -1 a closing
            running = np.cumsum((brackets & 2).astype(np.int32) - 1)
            depth = max(depth, level + int(running.max()))
            level += int(running[-1])
            containers += (brackets.size + int(running[-1])) // 2
    items, strings = separators + 1, quotes // 2
    return Shape(depth, containers, items, strings,
                 CONTAINER_COST * containers + ITEM_COST * items + STRING_COST * strings)


def _outside_escaped(block: bytes, inside: bool, backslashes: int) -> tuple[bytes, int, int]:
    """The text of ``block`` outside strings, its unescaped quotes and trailing backslashes.

    A quote after an odd run of backslashes (carried in from the last block
    too) is text; a block with no backslash never comes here.
    """
    codes = _CLASSES[np.frombuffer(block, dtype=np.uint8)]
    quote = codes == _QUOTE
    is_bs = codes == _BACKSLASH
    index = np.arange(len(codes), dtype=np.int32)
    last_other = np.maximum.accumulate(np.where(is_bs, -1, index))
    run = index - last_other  # backslashes ending at each position
    run[last_other < 0] += backslashes
    quote[1:] &= run[:-1] % 2 == 0
    quote[0] &= backslashes % 2 == 0
    within = (np.cumsum(quote, dtype=np.int32) + inside) % 2 == 1  # in a string
    bare = np.frombuffer(block, dtype=np.uint8)[~within & ~quote].tobytes()
    return bare, int(np.count_nonzero(quote)), int(run[-1])


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
        longer than :data:`MAX_NUMBER_CHARS` or not finite, NaN/Infinity, or a
        text that would cost more than :data:`MAX_AMPLIFICATION` times its
        size to parse (checked before parsing, see :func:`shape`).

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
    counted = shape(raw)  # before parsing: what the parser would allocate
    if counted.depth > MAX_DEPTH:
        raise ValueError(f"{what}: JSON nested too deep (at most {MAX_DEPTH} is accepted)")
    if counted.cost > max(FREE_PARSE_BYTES, MAX_AMPLIFICATION * len(raw)):
        raise ValueError(
            f"{what}: {counted.containers:,} lists/objects and {counted.items:,} items in "
            f"{len(raw):,} bytes of JSON would cost about {counted.cost:,} bytes to parse, more "
            f"than {MAX_AMPLIFICATION} times the text; no file this format writes has that "
            "shape (refused unparsed)")
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
