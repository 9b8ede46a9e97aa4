"""Shared plumbing of the statistical-query experiments.

Every experiment returns an :class:`ExperimentResult`; :func:`write_outputs`
turns it into ``<name>.csv`` (summary), ``<name>_runs.csv`` (every run),
``<name>.json`` (parameters, targets, timing) and ``<name>.png``.  The CLI
handlers share :func:`add_common_options` and :func:`run_and_report`.

Seeds in experiments are deliberate (reproducible figures), so
:func:`deliberately_seeded` silences :class:`dpgraph.SeededReleaseWarning`
inside an experiment run, and only there: a seeded release made outside an
experiment still warns.  Progress bars are closed before anything is
printed.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import functools
import json
import math
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from dpgraph.baselines import DEFAULT_T, UPDATES
from dpgraph.cli_types import add_command
from dpgraph.exceptions import SeededReleaseWarning
from dpgraph.validation import Boolean, Epsilon, Integer, Optional, Options

__all__ = [
    "MOVIES",
    "RUN",
    "ExperimentResult",
    "add_common_options",
    "deliberately_seeded",
    "experiment_parser",
    "loglog_slope",
    "mean_sem",
    "mwem_label",
    "mwem_meta",
    "mwem_options",
    "print_summary",
    "progress_bar",
    "quiet_seeded",
    "run_and_report",
    "write_outputs",
]

F = TypeVar("F", bound=Callable[..., Any])


@dataclasses.dataclass
class ExperimentResult:
    """Rows and summary of one experiment (written by :func:`write_outputs`).

    Attributes
    ----------
    name : str
        File stem of the outputs.
    runs : list of dict
        One row per run (and setting).
    summary : list of dict
        Means over runs with their standard errors.
    meta : dict
        Parameters, data note (``meta["data"]``) and ``meta["targets"]``.
    plot : callable
        ``plot(ax, result)`` draws the figure on a matplotlib axis.
    """

    name: str
    runs: list[dict[str, Any]]
    summary: list[dict[str, Any]]
    meta: dict[str, Any]
    plot: Callable[[Any, ExperimentResult], None]


@contextmanager
def quiet_seeded() -> Iterator[None]:
    """Silence :class:`dpgraph.SeededReleaseWarning` inside the block (experiments only)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeededReleaseWarning)
        yield


def deliberately_seeded(fn: F) -> F:
    """Decorator: the experiment's seeded releases are deliberate; do not warn inside it."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with quiet_seeded():
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def progress_bar(total: int, desc: str, enabled: bool) -> Any:
    """A tqdm bar that disappears when closed (print only after closing it)."""
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, disable=not enabled, leave=False)


def mean_sem(x: Sequence[float]) -> tuple[float, float]:
    """Mean and standard error of the mean (NaN standard error for one value).

    Examples
    --------
    >>> mean_sem([1.0, 3.0])
    (2.0, 1.0)
    """
    a = np.asarray(x, dtype=float)
    sem = float(a.std(ddof=1) / math.sqrt(a.size)) if a.size > 1 else float("nan")
    return float(a.mean()), sem


def loglog_slope(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Least-squares slope of log y on log x and its standard error.

    Examples
    --------
    >>> s, se = loglog_slope(np.array([1.0, 2.0, 4.0]), np.array([4.0, 1.0, 0.25]))
    >>> round(s, 12), round(se, 12)
    (-2.0, 0.0)
    """
    lx, ly = np.log(np.asarray(x, float)), np.log(np.asarray(y, float))
    if lx.size < 2:
        return float("nan"), float("nan")
    A = np.vstack([lx, np.ones_like(lx)]).T
    coef, *_ = np.linalg.lstsq(A, ly, rcond=None)
    if lx.size > 2:
        resid = ly - A @ coef
        s2 = float(resid @ resid) / (lx.size - 2)
        se = math.sqrt(s2 / float(np.sum((lx - lx.mean()) ** 2)))
    else:
        se = float("nan")
    return float(coef[0]), se


#: Declared constraints of the arguments every ratings experiment takes.
RUN = dict(epsilon=Epsilon(), runs=Integer(), seed=Integer(minimum=0), progress=Boolean())
#: ... and of the movie experiments' (heterogeneity, total budget).
MOVIES = dict(n_movies=Integer(), n_queries=Integer())


def mwem_options(mwem: dict[str, Any] | None) -> tuple[int, dict[str, Any]]:
    """MWEM's rounds ``T`` and its other options (keywords of :func:`dpgraph.baselines.mwem`).

    ``mwem`` is an experiment's ``mwem=`` argument: ``T`` (rounds, default
    10), ``update`` ("replay" or "plain"), ``passes`` and ``average``, each
    optional; checked here, before any run.

    Examples
    --------
    >>> mwem_options({"T": 20})
    (20, {'update': 'replay', 'passes': None, 'average': False})
    """
    opts = dict(mwem or {})
    unknown = sorted(set(opts) - {"T", "update", "passes", "average"})
    if unknown:
        raise TypeError(f"mwem: unknown option(s) {unknown}; MWEM's options are T, update, "
                        "passes and average")
    T = Integer(minimum=1)(opts.get("T", DEFAULT_T), "mwem['T']")
    return T, {"update": Options(*UPDATES)(opts.get("update", "replay"), "mwem['update']"),
               "passes": Optional(Integer(minimum=1))(opts.get("passes"), "mwem['passes']"),
               "average": Boolean()(opts.get("average", False), "mwem['average']")}


def mwem_meta(T: Any, kw: dict[str, Any]) -> dict[str, Any]:
    """The entries of an experiment's meta that say which MWEM ran (see :func:`mwem_options`)."""
    return {"mwem_variant": mwem_label(**kw), "mwem_T": T, "mwem_update": kw["update"],
            "mwem_passes": kw["passes"], "mwem_average": kw["average"]}


def mwem_label(update: str, passes: int | None, average: bool) -> str:
    """Name of an MWEM variant: ``textbook`` (plain update, averaged), ``replay`` (default)...

    Examples
    --------
    >>> mwem_label("plain", None, True), mwem_label("replay", None, False)
    ('textbook', 'replay')
    >>> mwem_label("replay", 1, True)
    'replay-1-pass-average'
    """
    if update == "plain":
        return "textbook" if average else "plain-update"
    label = "replay" if passes is None else f"replay-{passes}-pass" + ("es" if passes > 1 else "")
    return label + ("-average" if average else "")


def write_outputs(res: ExperimentResult, out_dir: str | Path) -> dict[str, Path]:
    """Write ``<name>.csv``, ``<name>_runs.csv``, ``<name>.json`` and ``<name>.png``.

    Parameters
    ----------
    res : ExperimentResult
    out_dir : str or pathlib.Path
        Created if missing.

    Returns
    -------
    dict
        Paths by kind (``"csv"``, ``"runs"``, ``"json"``, ``"png"``).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "csv": out / f"{res.name}.csv",
        "runs": out / f"{res.name}_runs.csv",
        "json": out / f"{res.name}.json",
        "png": out / f"{res.name}.png",
    }
    for key, table in (("csv", res.summary), ("runs", res.runs)):
        with open(paths[key], "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(table[0].keys()))
            w.writeheader()
            w.writerows(table)
    with open(paths["json"], "w") as f:
        json.dump(res.meta, f, indent=2)
    fig, ax = plt.subplots(figsize=(6.4, 4.4), dpi=100)
    res.plot(ax, res)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.suptitle(f"{res.name} (eps = {res.meta.get('epsilon', 1.0):g}); {res.meta['data']}",
                 fontsize=8)
    fig.tight_layout()
    fig.savefig(paths["png"])
    plt.close(fig)
    return paths


def print_summary(res: ExperimentResult, paths: dict[str, Path]) -> None:
    """Print the summary table, the targets, the elapsed time and the files written."""
    print(f"# {res.name}: {res.meta['data']}")
    keys = list(res.summary[0].keys())
    print("  ".join(f"{k:>14}" for k in keys))
    for row in res.summary:
        print("  ".join(f"{v:>14.6g}" if isinstance(v, float) else f"{v:>14}" for v in row.values()))
    print("targets:", json.dumps(res.meta["targets"]))
    print(f"elapsed: {res.meta.get('elapsed_seconds', float('nan')):.1f} s")
    for kind, p in paths.items():
        print(f"wrote {kind}: {p}")


def run_and_report(fn: Callable[..., ExperimentResult], args: argparse.Namespace,
                   *fn_args: Any, **kw: Any) -> int:
    """Time ``fn(*fn_args, **kw)``, write its outputs to ``args.out``, print; return 0."""
    t0 = time.perf_counter()
    res = fn(*fn_args, **kw)
    res.meta["elapsed_seconds"] = time.perf_counter() - t0
    res.meta["quick"] = bool(args.quick)
    paths = write_outputs(res, args.out)
    print_summary(res, paths)
    return 0


def experiment_parser(subparsers: Any, name: str, func: Callable[[argparse.Namespace], int], *,
                      help: str, doc: str | None = None) -> argparse.ArgumentParser:
    """The parser of ``dpgraph experiment NAME``, which runs ``func(args)`` and writes to ``--out``.

    Its description is the second paragraph of ``doc`` (the experiment
    module's docstring), else ``help``; add the experiment's own options.

    Examples
    --------
    >>> sub = argparse.ArgumentParser().add_subparsers()
    >>> p = experiment_parser(sub, "demo", print, help="an experiment")
    >>> p.prog.endswith("demo"), p.parse_args(["--out", "o"]).out
    (True, 'o')
    """
    p = add_command(subparsers, name, func, help=help,
                    description=doc.split("\n\n")[1] if doc else help)
    p.add_argument("--out", required=True, help="output folder for the CSV, JSON and PNG files")
    return p


def add_common_options(p: argparse.ArgumentParser) -> None:
    """``--out``, ``--quick``, ``--runs``, ``--seed`` and ``--no-progress``."""
    p.add_argument("--out", required=True, help="output directory for CSV, JSON and PNG")
    p.add_argument("--quick", action="store_true", help="small, fast version (seconds)")
    p.add_argument("--runs", type=int, default=None, help="independent runs (paper: 20)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed for splits, queries and releases (experiments are seeded on "
                        "purpose, so they do not emit SeededReleaseWarning)")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
