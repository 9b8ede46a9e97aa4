"""Argument types shared by the ``dpgraph`` sub-commands.

Each is an argparse ``type=`` callable whose error messages name the option
and the value given, so that a mistyped flag says how to fix it.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

__all__ = ["RELEASE_FILE_HELP", "int_option"]

#: help of a positional argument naming a released graph file
RELEASE_FILE_HELP = "a file written by 'dpgraph release' or PrivateGraph.save"


def int_option(flag: str, minimum: int, kind: str = "an integer",
               bound: str | None = None) -> Callable[[str], int]:
    """An argparse type for integers >= ``minimum``.

    Parameters
    ----------
    flag : str
        The option's name, as the messages show it (``"--seed"``).
    minimum : int
        Smallest accepted value.
    kind : str, default "an integer"
        What the option takes, shown when the text is not an integer.
    bound : str, optional
        What the option takes, shown when the value is below ``minimum``;
        default ``">= minimum"``.

    Returns
    -------
    callable
        Parses one command-line string, raising ``argparse.ArgumentTypeError``.

    Examples
    --------
    >>> parse = int_option("--nodes", 2)
    >>> parse("10")
    10
    >>> parse("1")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: --nodes must be >= 2, got 1
    """
    too_small = f">= {minimum}" if bound is None else bound

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} must be {kind}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{flag} must be {too_small}, got {value}")
        return value

    return parse
