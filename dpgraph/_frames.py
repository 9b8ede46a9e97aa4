"""A refusal of private input leaves behind the frames that were reading it.

While an exception propagates, its traceback keeps every frame below the
handler alive, with their local variables: in an edge-list reader those are
the bytes, tokens and edge positions being parsed.  Crash reporters that
record frame locals (Sentry's ``include_local_variables``, ``faulthandler``
does not) would store them.  :func:`drops_input_frames` wraps a public entry
point that reads private input: any exception (a refusal is mostly a
``ValueError``, but a ``TypeError`` or an ``OverflowError`` met on a tie's
value, or a ``MemoryError``, holds the same frames) leaves it with a
traceback that starts at the entry point, so the frames below it, and their
locals, are freed; so do the exceptions chained to it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["drops_input_frames"]

F = TypeVar("F", bound=Callable[..., Any])


def drops_input_frames(func: F) -> F:
    """Re-raise any exception of ``func`` without the frames below it (nor its chain's).

    Every type is stripped, not only ``ValueError``: which type a refusal of
    private input takes (an ``OverflowError`` of a huge value, a
    ``TypeError`` of a string where numbers belong) does not change what its
    frames hold.
    """

    @functools.wraps(func)
    def entry(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except Exception as exc:
            seen = {id(exc)}
            link = exc.__cause__ or exc.__context__
            while link is not None and id(link) not in seen:
                seen.add(id(link))
                link.__traceback__ = None
                link = link.__cause__ or link.__context__
            raise exc.with_traceback(None) from exc.__cause__  # a traceback from here up

    return entry  # type: ignore[return-value]
