"""The methods of the peers benchmark: how each produces its answer, timed and metered.

Every method gets the same seed for a given (graph, epsilon, release index).
``seconds`` and ``peak_mib`` measure producing the answer from the input
graph (for the three dpgraph rows: the release plus the estimators or the
synthesis, each on its own copy of the same release, so no row reuses
another's cached work; the benchmark meters them so on the first release of
every epsilon and lets them share one release afterwards); ``score_seconds`` is the time spent computing the
benchmark's statistics of a synthetic graph (Louvain, triangles, distances),
which is the same work for every synthetic graph and not part of the method.
Peak memory is the process's resident high-water mark (Linux
``/proc/self/status`` VmHWM, reset before each method through
``/proc/self/clear_refs``) minus the resident size when the method started:
the extra memory the method needed.  Elsewhere it is NaN.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .metrics import graph_stats, naive_stats

__all__ = ["METHODS", "METHOD_LABELS", "Meter", "run_method"]

#: every method, in table order
METHODS = ("naive", "dpgraph", "dpgraph-synth", "TmF", "PrivGraph", "DP-1K-HH", "DP-1K-CM",
           "LDPGen")

#: how each method is labelled in tables and figures
METHOD_LABELS = {
    "naive": "naive (raw release as the graph)",
    "dpgraph": "dpgraph estimators",
    "dpgraph-synth": "dpgraph: Louvain etc. on R.synthesize()",
    "TmF": "TmF (ours)",
    "PrivGraph": "PrivGraph (ours)",
    "DP-1K-HH": "DP-1K, Havel-Hakimi (ours)",
    "DP-1K-CM": "DP-1K, configuration model (ours)",
    "LDPGen": "LDPGen (ours; edge-LDP)",
}

_STATUS = Path("/proc/self/status")
_CLEAR = Path("/proc/self/clear_refs")


def _status_mib(field: str) -> float:
    try:
        for line in _STATUS.read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return float("nan")


class Meter:
    """Wall time and extra peak resident memory of a block of code.

    Examples
    --------
    >>> with Meter() as m:
    ...     x = sum(range(1000))
    >>> m.seconds >= 0
    True
    """

    def __enter__(self) -> Meter:
        try:
            _CLEAR.write_text("5")  # reset VmHWM to the current resident size
            self._reset = True
        except OSError:
            self._reset = False
        self._rss0 = _status_mib("VmRSS")
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.seconds = time.perf_counter() - self._t0
        hwm = _status_mib("VmHWM") if self._reset else float("nan")
        self.peak_mib = max(0.0, hwm - self._rss0) if np.isfinite(hwm) else float("nan")


def _estimates(R: Any, seed: int) -> dict:
    """dpgraph's estimators, unclipped, with their 95% intervals and resolved flags."""
    from dpgraph.graph.analytics import local_clustering

    out: dict = {"estimates": {}}
    for stat, call in (("triangles", lambda: R.triangles(proper=False)),
                       ("transitivity", lambda: R.transitivity(proper=False)),
                       ("density", lambda: R.density(proper=False)),
                       ("assortativity", lambda: R.degree_assortativity(proper=False))):
        e = call()
        lo, hi = e.ci(0.95)
        out[stat] = float(e.value)
        out["estimates"][stat] = (float(e.value), float(lo), float(hi),
                                  bool(getattr(e, "resolved", True)))
    com = R.communities(seed=seed, proper=False)
    out.update(
        degree_hist=np.asarray(R.degree_distribution(), dtype=float),
        clustering=local_clustering(R, proper=False),  # the raw ratios, unclipped
        partition=com.partition,
        modularity=float(com.modularity.value),  # the held-out estimate, unclipped
        reported_modularity=float(com.modularity.value),
        modularity_ci=com.modularity.ci(0.95),
        communities_resolvable=bool(com.resolvable),
        harmonic_diameter=float("nan"),  # no estimator: see dpgraph-synth
        harmonic_diameter_se=float("nan"),
    )
    return out


def _baseline(name: str) -> Callable[[Any, float, int], Any]:
    from dpgraph.baselines import dp1k, ldpgen, privgraph, tmf

    return {
        "TmF": lambda G, e, s: tmf(G, e, seed=s).graph,
        "PrivGraph": lambda G, e, s: privgraph(G, e, seed=s).graph,
        "DP-1K-HH": lambda G, e, s: dp1k(G, e, seed=s, construction="havel-hakimi").graph,
        "DP-1K-CM": lambda G, e, s: dp1k(G, e, seed=s, construction="configuration").graph,
        "LDPGen": lambda G, e, s: ldpgen(G, e, seed=s).graph,
    }[name]


def run_method(name: str, G: Any, nodes: Any, eps: float, seed: int,
               hd_sources: int | None = 200, release: Any = None) -> dict:
    """One method's statistics on one release, with ``seconds``, ``peak_mib``, ``score_seconds``.

    Parameters
    ----------
    name : str
        One of :data:`METHODS`.
    G : networkx.Graph
        The true graph.
    nodes : sequence
        Its nodes in canonical order.
    eps : float
        Privacy level.
    seed : int
        The seed of this release (the same for every method).
    hd_sources : int, optional
        BFS roots for the harmonic diameter of synthetic graphs (None: all).
    release : PrivateGraph, optional
        For the three dpgraph rows: a release of ``G`` at ``eps`` with
        ``seed`` already made and possibly used by another row (its cached
        work is reused, so ``seconds`` and ``peak_mib`` are NaN: not the
        cost of the row alone).  None: a fresh release, metered.
    """
    from dpgraph import graph

    if name not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {name!r}")
    score_t = 0.0
    if name in ("naive", "dpgraph", "dpgraph-synth"):
        with Meter() as meter:
            R = graph.release(G, eps, seed=seed) if release is None else release
            if name == "naive":
                stats = naive_stats(R)
            elif name == "dpgraph":
                stats = _estimates(R, seed)
            else:
                H = R.synthesize(seed=seed)
        if name == "dpgraph-synth":
            t0 = time.perf_counter()
            stats = graph_stats(H, nodes, seed=seed, hd_sources=hd_sources)
            score_t = time.perf_counter() - t0
    else:
        with Meter() as meter:
            H = _baseline(name)(G, eps, seed)
        t0 = time.perf_counter()
        stats = graph_stats(H, nodes, seed=seed, hd_sources=hd_sources)
        score_t = time.perf_counter() - t0
    shared = release is not None and name in ("naive", "dpgraph", "dpgraph-synth")
    stats.update(seconds=float("nan") if shared else meter.seconds,
                 peak_mib=float("nan") if shared else meter.peak_mib, score_seconds=score_t)
    return stats
