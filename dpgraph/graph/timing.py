"""Constant-time releases: a release that takes as long as one with a public number of edges.

A release's time grows with the number of edges m and depends on where they
are (SECURITY.md, Timing).  ``dpgraph.release(G, eps, max_edges=M)`` hides
both behind a public bound M >= m:

1. before the input is read, two *calibration* releases run on a public
   input of the same kind, on the same vertex set, with M edges spread
   uniformly at random (the slow case: no locality), drawing from a
   throwaway stream of the same kind as the real one; the slower one's time
   t_M depends on n, M and the machine only;
2. the real release runs (an input with more than M edges is refused before
   anything is charged or drawn);
3. the call then sleeps until (1 + margin) t_M has passed since the real
   release started.

So the time of the whole call is t_build + 2 t_M + (1 + margin) t_M (margin
1: twice the calibration), whatever the input, as long as the real release
takes at most (1 + margin) t_M.  If it
takes longer (a much slower structure, a busier machine), the call returns
as soon as it is done and warns with :class:`TimingNotHiddenWarning`: do not
publish that release's timing.  The cost is about 4 to 5 times the time of
a release with M edges; on a loaded machine the calibration's own noise
shows through (benchmarks/bench_timing.py measures it).  Timing noise of the machine itself is not hidden (it
does not depend on the input), nor is anything but wall-clock time (the
CPU's power draw, memory use).
"""

from __future__ import annotations

import tempfile
import time
import warnings
from collections.abc import Callable
from typing import Any

import networkx as nx
import numpy as np

from ..core.pairs import pair_count, pair_from_index
from .inputs import edge_array_like, input_kind

__all__ = ["CALIBRATIONS", "MARGIN", "TimePad", "TimingNotHiddenWarning", "calibration_input"]

#: slack of the padded time over the slowest calibration release
MARGIN = 1.0
#: calibration releases run (the padded time follows the slowest)
CALIBRATIONS = 2


class TimingNotHiddenWarning(UserWarning):
    """A constant-time release took longer than its padded time: its timing may reveal m."""


def _labels(G: Any, nodes: Any) -> list:
    if nodes is not None:
        return list(range(int(nodes))) if isinstance(nodes, (int, np.integer)) else list(nodes)
    if isinstance(G, nx.Graph):
        return list(G.nodes)
    shape = getattr(G, "shape", None)
    return list(range(int(shape[0]))) if shape is not None and len(shape) == 2 else []


def calibration_input(G: Any, nodes: Any, directed: bool, max_edges: int,
                      folder: str) -> tuple[Any, Any]:
    """A public input like ``G`` (same kind, same vertex set) with ``max_edges`` uniform edges.

    Returns ``(input, nodes)`` for :func:`dpgraph.release`, built by the
    input table's ``like`` column (:class:`~dpgraph.graph.inputs.InputKind`):
    a file input is calibrated on a file written in ``folder``; a DataFrame or
    table on an edge array (same labels).
    """
    labels = _labels(G, nodes)
    n = len(labels)
    N = pair_count(n, directed)
    M = min(int(max_edges), N)
    rng = np.random.default_rng()  # public, throwaway: the positions carry no secret
    k = rng.choice(N, size=M, replace=False) if M else np.zeros(0, dtype=np.int64)
    i, j = pair_from_index(np.asarray(k, dtype=np.int64), n, directed)
    like = input_kind(G).like or edge_array_like  # the input table's column
    return like(labels, i, j, directed, folder), nodes


class TimePad:
    """Calibrate on ``max_edges`` public edges now; :meth:`finish` pads the real release.

    Parameters
    ----------
    max_edges : int
        The public bound on the input's number of edges.
    calibrate : callable
        ``calibrate(input, nodes)`` runs the release's stages (reading,
        sampling) on a calibration input, drawing from a throwaway stream.
    G, nodes, directed
        The real input's arguments (only its kind and public vertex set are used).
    """

    def __init__(self, max_edges: int, calibrate: Callable[[Any, Any], Any], G: Any,
                 nodes: Any, directed: bool) -> None:
        self.max_edges = int(max_edges)
        times = []
        with tempfile.TemporaryDirectory(prefix="dpgraph-calibration-") as folder:
            H, v = calibration_input(G, nodes, directed, self.max_edges, folder)
            for _ in range(CALIBRATIONS):  # the slowest: a busy machine makes some runs slow
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    calibrate(H, v)
                times.append(time.perf_counter() - t0)
        self.padded = (1 + MARGIN) * max(times)
        self.start = time.perf_counter()

    def check(self, m: int) -> None:
        """Refuse an input with more edges than the bound (before anything is charged)."""
        if m > self.max_edges:
            raise ValueError("the input has more edges than max_edges; a constant-time release "
                             "needs a public bound at least the number of edges")

    def finish(self) -> None:
        """Sleep until the padded time has passed since the real release started."""
        left = self.start + self.padded - time.perf_counter()
        if left > 0:
            time.sleep(left)
        else:
            warnings.warn("the release took longer than its padded time (the calibration with "
                          "max_edges uniform edges), so its timing may reveal its edges; do not "
                          "publish when it finished", TimingNotHiddenWarning, stacklevel=4)
