"""Shared helpers for the benchmark scripts (timing, tables, inputs)."""

from __future__ import annotations

import json
import os
import platform
import resource
import sys
import time
import warnings
from collections.abc import Callable

import networkx as nx

from dpgraph.exceptions import SeededReleaseWarning

# benchmarks release with seeds on purpose (repeatable timings); say so once, not per call
warnings.simplefilter("ignore", SeededReleaseWarning)

__all__ = [
    "RESULTS_ENV",
    "facebook_or_none",
    "machine",
    "peak_rss_mib",
    "quick",
    "random_graph",
    "report",
    "table",
    "timeit",
]

#: environment variable naming the JSON-lines file ``python -m benchmarks`` collects ratios from
RESULTS_ENV = "DPGRAPH_BENCH_RESULTS"
#: set to 1 by ``python -m benchmarks --quick``: scripts shrink their largest inputs
QUICK_ENV = "DPGRAPH_BENCH_QUICK"


def timeit(fn: Callable[[], object], repeat: int = 5, warmup: int = 1) -> float:
    """Best (minimum) wall time of ``fn()`` over ``repeat`` runs, after ``warmup`` runs.

    The minimum is the run least disturbed by other processes on a shared
    machine; both sides of every ratio are timed the same way in the same run.
    """
    for _ in range(warmup):
        fn()
    best = float("inf")
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def timeit_interleaved(fns: dict[str, Callable[[], object]], repeat: int = 5,
                       warmup: int = 1) -> dict[str, float]:
    """Best wall time of each function, the functions timed in turn in every round.

    Interleaving puts the baseline and the contenders under the same load:
    on a shared machine whose load changes within seconds, timing one side's
    repeats and then the other's can move a ratio several-fold.
    """
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    best = {name: float("inf") for name in fns}
    for _ in range(max(1, repeat)):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - t0)
    return best


def quick() -> bool:
    """True when the runner asked for the quick (smaller inputs) variant."""
    return os.environ.get(QUICK_ENV, "") == "1"


def report(measure: str, ratio: float, target: float | None = None, *, higher_is_better: bool = True,
           baseline: str = "", note: str = "") -> None:
    """Record one ratio for the table printed by ``python -m benchmarks``.

    Prints a one-line summary and, when run under the runner, appends a JSON
    line to the file named by ``DPGRAPH_BENCH_RESULTS``.  Any benchmark script
    can call it; the ratio is reported whatever its value (never clipped).

    Parameters
    ----------
    measure : str
        What was measured, e.g. ``"R.cuts, int arrays vs networkx.cut_size"``.
    ratio : float
        The measured ratio (e.g. baseline time / our time).
    target : float, optional
        The goal for this ratio; ``None`` when it is informative only.
    higher_is_better : bool, default True
        Whether the target is a minimum (speed-up) or a maximum (slowdown).
    baseline : str
        What the ratio is relative to (measured in the same run).
    note : str
        Why a target is missed, or other context.
    """
    row = dict(script=os.path.basename(sys.argv[0]) or "?", measure=measure, ratio=float(ratio),
               target=None if target is None else float(target), higher_is_better=bool(higher_is_better),
               baseline=baseline, note=note)
    met = "" if target is None else ("met" if (ratio >= target if higher_is_better else ratio <= target)
                                      else "MISSED")
    goal = "" if target is None else f" (target {'>=' if higher_is_better else '<='} {target:g}: {met})"
    print(f"RATIO {measure}: {ratio:.3g}{goal}")
    path = os.environ.get(RESULTS_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(row) + "\n")


def table(rows: list[dict], columns: list[str]) -> str:
    """Plain-text table of ``rows`` (dicts) with the given columns."""
    cells = [[str(r.get(c, "")) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[k]) for row in cells)) for k, c in enumerate(columns)]
    line = lambda vals: "  ".join(v.rjust(w) for v, w in zip(vals, widths))
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


def cpu_model() -> str:
    """The CPU model name (Linux /proc/cpuinfo), else platform.processor()."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def load_average() -> str:
    """The 1, 5 and 15 minute load averages, or "n/a"."""
    if not hasattr(os, "getloadavg"):
        return "n/a"
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


def machine() -> str:
    """One line describing the machine: CPU, count, numba availability and load."""
    from dpgraph.graph.packed import HAVE_NUMBA

    return (f"{cpu_model()}, cpus={os.cpu_count()}, numba={'on' if HAVE_NUMBA else 'off'}, "
            f"load average {load_average()} (timings are best of k; a loaded machine slows all rows)")
