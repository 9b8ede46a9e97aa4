"""Shared helpers for the benchmark scripts (timing, tables, inputs)."""

from __future__ import annotations

import os
import resource
import statistics
import sys
import time
import warnings
from typing import Callable

import networkx as nx

from dpgraph.exceptions import SeededReleaseWarning

# benchmarks release with seeds on purpose (repeatable timings); say so once, not per call
warnings.simplefilter("ignore", SeededReleaseWarning)

__all__ = ["timeit", "table", "facebook_or_none", "random_graph", "peak_rss_mib"]


def timeit(fn: Callable[[], object], repeat: int = 5, warmup: int = 1) -> float:
    """Median wall time of ``fn()`` over ``repeat`` runs, after ``warmup`` runs."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def table(rows: list[dict], columns: list[str]) -> str:
    """Plain-text table of ``rows`` (dicts) with the given columns."""
    cells = [[str(r.get(c, "")) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[k]) for row in cells)) for k, c in enumerate(columns)]
    line = lambda vals: "  ".join(v.rjust(w) for v, w in zip(vals, widths))  # noqa: E731
    out = [line(columns), line(["-" * w for w in widths])]
    out += [line(r) for r in cells]
    return "\n".join(out)


def facebook_or_none() -> nx.Graph | None:
    """ego-Facebook when it is available locally, else None (never downloads)."""
    from dpgraph import datasets

    if datasets.available("facebook"):
        return datasets.facebook()
    print("ego-Facebook not found locally (set DPGRAPH_DATA_DIR); skipping it", file=sys.stderr)
    return None


def random_graph(n: int, avg_degree: float, seed: int = 0) -> nx.Graph:
    """A G(n, p) graph with the given expected average degree (fixed seed)."""
    return nx.fast_gnp_random_graph(n, avg_degree / (n - 1), seed=seed)


def peak_rss_mib() -> float:
    """Peak resident memory of this process so far, in MiB (Linux ru_maxrss is KiB)."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / 1024 if sys.platform != "darwin" else rss / 2**20


def machine() -> str:
    """One line describing the machine: CPU count and numba availability."""
    from dpgraph.graph.packed import HAVE_NUMBA

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"cpus={os.cpu_count()}  numba={'on' if HAVE_NUMBA else 'off'}  "
            f"load average (1 min) at start={load:.1f}  (timings are medians; a loaded machine slows all rows)")
