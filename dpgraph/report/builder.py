"""Build the analyst's HTML report of one release (post-processing only)."""

from __future__ import annotations

import datetime as _dt
import math
import time
from collections.abc import Callable
from importlib import resources
from typing import Any

import numpy as np

from .._version import __version__
from ..core import Estimate, count_estimate
from ..graph.analytics import time_limit
from ..planner import DEFAULT_EPSILONS, cut_std, plan
from . import figures
from .flags import detectability, distribution_band

__all__ = ["build_report", "render_report", "report_context"]

_Z95 = 1.959963984540054

CITATION = """@inproceedings{wang-ying-zhang-minimax,
  author    = {Weina Wang and Lei Ying and Junshan Zhang},
  title     = {A Minimax Distortion View of Differentially Private Query Release},
  booktitle = {49th Asilomar Conference on Signals, Systems and Computers},
  year      = {2015}
}
@software{dpgraph,
  author  = {{The dpgraph developers}},
  title   = {dpgraph: differentially private graph release for the cut function},
  version = {%s},
  year    = {%s}
}"""


def _fmt(x: Any, digits: int = 4) -> str:
    """A number for people: whole numbers from 100 up with thousands separators
    (never "1e+07"), ``digits`` significant digits below, "n/a" when not finite.

    Examples
    --------
    >>> _fmt(10_004_568.2), _fmt(0.011174), _fmt(0.000336), _fmt(float("nan"))
    ('10,004,568', '0.01117', '0.000336', 'n/a')
    """
    x = float(x)
    if not math.isfinite(x):
        return "n/a"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    if x != 0 and abs(x) < 1e-4:
        return f"{x:.{min(digits, 3)}g}"
    return f"{x:.{digits}g}"


def _shown(est: Any) -> str:
    """An estimate's value for people: a resolved one as a number, an unresolved one as the
    estimate itself says it ("-- (unresolved: 95% interval [0, 168] contains 0)"), never bare.
    """
    return _fmt(est.value) if bool(est.resolved) else str(est)


def _percent(x: float) -> str:
    """A fraction as a percentage for people: '17%', '1,684%', '0.4%'."""
    pct = 100.0 * x
    return f"{pct:,.0f}%" if pct >= 10 else f"{pct:.2g}%"


def _timed(progress: Callable[..., None], timings: list, label: str, fn: Callable[[], Any]) -> Any:
    progress(label)  # a step starts ...
    t0 = time.perf_counter()
    try:
        return fn()
    finally:
        dt = time.perf_counter() - t0
        timings.append((label, dt))
        progress(label, dt)  # ... and ends, with its time


def _skip(skipped: dict, what: str, exc: BaseException) -> None:
    """Record that ``what`` was not computed; one message is shown once for all it stopped.

    The page says why in a line for people (:func:`_why_not`); the exception's
    own text, written for whoever holds the code, goes behind it (a details
    element).
    """
    skipped.setdefault((_why_not(exc), str(exc) or type(exc).__name__), []).append(what)


def _why_not(exc: BaseException) -> str:
    """Why a statistic is not on the page, for its reader: what would compute it.

    Examples
    --------
    >>> _why_not(MemoryError("Unable to allocate 9.1 GiB"))
    'it needs more memory than this machine has free: a machine with more memory would compute it'
    """
    if type(exc).__name__ == "CostLimitError":
        return ("it would take longer than the time limit this page was given: dpgraph report "
                "--max-seconds with a larger limit (or none) computes it")
    if isinstance(exc, MemoryError):
        return "it needs more memory than this machine has free: a machine with more memory would compute it"
    return "this release cannot answer it"


def _std_text(est: Any) -> str:
    """An estimate's std for people: "--" where it has none (no error bar), never a placeholder."""
    std = float(est.std)
    return _fmt(std) if math.isfinite(std) else "--"


def _statistics(R: Any, progress: Callable, timings: list, skipped: dict,
                done: dict | None = None) -> list[dict]:
    """Every debiased statistic with its 95% CI and resolvability.

    Each is computed once: the estimates are kept in ``done`` (by row name)
    for the rest of the report (the mean degree rescales the edge count).
    """
    n = R.number_of_nodes()
    done = {} if done is None else done
    specs: list[tuple[str, str, Callable[[], Any]]] = [
        ("edges", "number of edges", R.number_of_edges),
        ("density", "edge density", R.density),
    ]
    ties = getattr(R, "tie_values", None)
    if ties is not None:  # a typed release: its ties by declared value
        by_value: dict = {}

        def count_of(v: Any) -> Any:
            if not by_value:
                by_value.update(R.value_counts())
            return by_value[v]

        specs += [(f"edges: {v}", f"ties of value {v!r} ({ties.edge_attr})",
                   lambda v=v: count_of(v)) for v in ties.values]
    if not R.directed:
        specs += [
            ("mean degree", "average degree 2m / n (the edge count, rescaled)", lambda: _scaled(
                done.get("edges") or R.number_of_edges(), 2.0 / n)),
            ("triangles", "number of triangles", R.triangles),
            ("wedges", "number of 2-paths", R.wedges),
            ("transitivity", "global clustering 3 T / W", R.transitivity),
            ("average clustering", "mean local clustering", R.average_clustering),
            ("degree assortativity", "Pearson correlation of degrees at an edge",
             R.degree_assortativity),
        ]
    rows = []
    refused: dict[str, BaseException] = {}  # computation -> its refusal, said once
    for key, what, fn in specs:
        label = "triangles (the counting pass)" if key == "triangles" else key
        shared = _SHARED.get(key)
        if shared in refused:  # refused once, with its sizes: not tried again
            rows.append({"name": key, "what": what, "error": True})
            _skip(skipped, key, refused[shared])
            continue
        try:
            est = _timed(progress, timings, label, fn) if key in ("triangles", "degree assortativity") \
                else fn()
        except (MemoryError, ValueError) as exc:
            if isinstance(exc, MemoryError) and shared is not None:
                refused[shared] = exc
            rows.append({"name": key, "what": what, "error": True})
            _skip(skipped, key, exc)
            continue
        done[key] = est
        lo, hi = est.ci(0.95)
        resolved = bool(est.resolved)
        rows.append({
            "name": key, "what": what,
            # an unresolved value is never shown as a bare number
            "value": _shown(est),
            "std": _std_text(est), "detail": getattr(est, "detail", None),
            "ci": f"[{_fmt(lo)}, {_fmt(hi)}]" if math.isfinite(lo) else "no error bar",
            "range": "[{}, {}]".format(*map(_fmt, est.feasible_range)),
            "exact": bool(est.exact_std), "resolved": resolved, "reason": est.reason,
        })
    return rows


#: statistics computed from the same intermediate: one that cannot fit refuses for all of them
_SHARED = {"triangles": "motifs", "wedges": "motifs", "transitivity": "motifs",
           "average clustering": "motifs"}


def _subsample_cost(R: Any) -> str:
    """What the subsampling of a sparse release costs, from public quantities (planner)."""
    if float(R.keep) == 1.0:
        return ""
    p = plan(R.number_of_nodes(), float(R.epsilon), directed=R.directed, keep=float(R.keep))
    std, full = p.stds["number_of_edges"], p.full_release_stds()["number_of_edges"]
    smallest = p.smallest_resolvable()["number_of_edges"]
    return (f"The edge count's standard deviation is {_fmt(std)}, {_fmt(std / full)} times the "
            f"full release's {_fmt(full)} at this epsilon (every count's error grows by about "
            f"that factor); an edge count below {_fmt(smallest)} cannot be resolved.")


def _scaled(est: Any, c: float) -> Any:
    """A linear rescaling c * est of an estimate (post-processing of one number)."""
    lo, hi = est.feasible_range
    return Estimate(est.value * c, est.std * c, exact_std=est.exact_std,
                    feasible_range=(lo * c, hi * c), proper=est.proper, raw=est.raw * c)


def _degree_section(R: Any, progress: Callable, timings: list, skipped: dict) -> dict:
    n = R.number_of_nodes()
    deg_std = float(count_estimate(0.0, float(n - 1), R.channel).std)
    out = {"half_width": _fmt(_Z95 * deg_std), "std": _fmt(deg_std)}
    if R.directed:
        out["note"] = "The degree distribution is estimated for undirected releases only."
        return out
    try:
        res = _timed(progress, timings, "degree distribution (deconvolution)", R.degree_distribution)
    except (MemoryError, ValueError) as exc:
        _skip(skipped, "degree distribution", exc)
        out["note"] = "Not computed (see \"Not computed\" below)."
        return out
    h, band = distribution_band(res)
    released = _released_degrees(R)
    tails = getattr(res, "ccdf_lower", None), getattr(res, "ccdf_upper", None)
    tails = tails if all(t is not None and np.shape(t) == h.shape for t in tails) else None
    out["svg"] = _timed(progress, timings, "degree figure",
                        lambda: figures.degree_figure(h, band, released, _Z95 * deg_std, tails))
    out["band"] = band is not None
    out["band_level"] = _fmt(100 * float(getattr(res, "level", 0.95)), 3)
    k = np.arange(h.size)
    out["mean_fit"] = _fmt(float(h @ k))
    out["released_mean"] = _fmt(float(released.mean()))
    return out


def _released_degrees(R: Any) -> np.ndarray:
    """Raw degrees of the released graph (public accessor when the release has one)."""
    if callable(getattr(R, "released_degrees", None)):
        return np.asarray(R.released_degrees())
    return np.asarray(R.to_scipy_sparse("csr").sum(axis=1)).ravel()


def _community_section(R: Any, progress: Callable, timings: list, skipped: dict) -> dict:
    if R.directed:
        return {"note": "Community detection runs on undirected releases only."}
    try:
        comm = _timed(progress, timings, "communities", R.communities)
    except (MemoryError, ValueError) as exc:
        _skip(skipped, "communities", exc)
        return {"note": "Not computed (see \"Not computed\" below)."}
    det = detectability(comm)
    sizes = sorted((len(b) for b in comm.partition), reverse=True)
    q = comm.modularity
    lo, hi = q.ci(0.95)
    return {
        "detected": det.detected, "structural": det.structural, "source": det.source,
        "k": len(sizes), "sizes": ", ".join(str(s) for s in sizes[:12]) + (
            f", ... ({len(sizes) - 12} more)" if len(sizes) > 12 else ""),
        "modularity": _shown(q), "modularity_resolved": bool(q.resolved),
        "modularity_ci": f"[{_fmt(lo)}, {_fmt(hi)}]",
        "noise_edge": _fmt(comm.noise_edge),
        "reason": "no community structure can rise above the noise at this epsilon: a larger "
        "epsilon would resolve it" if (plan := getattr(comm, "plan", None)) is not None
        and plan.mode == "unresolvable" else "",
        "detail": plan.reason if plan is not None and plan.mode == "unresolvable" else "",
        "holdout": float(getattr(comm, "holdout", 0.0) or 0.0) > 0,
        "svg": figures.eigen_figure(comm.eigenvalues, comm.noise_edge)
        if np.size(comm.eigenvalues) and math.isfinite(float(comm.noise_edge)) else "",
    }


def _cut_table(R: Any, density: float) -> list[dict]:
    """Cut accuracy for this release: two groups of s nodes each, s from 1 to n/2.

    For each size: the exact std of the cut estimate, the cut two such groups
    would have at the estimated density, and its 95% interval as a proper
    estimate reports it (clipped to the feasible 0..s^2, never below 0), with
    the half-width as a percentage of that cut.
    """
    n = R.number_of_nodes()
    sizes = sorted({s for s in (1, 10, 100, 1000, n // 10, n // 4, n // 2) if 1 <= s <= n // 2})
    rows = []
    for s in sizes:
        if R.keep == 1.0 and getattr(R, "tie_values", None) is None:
            std = cut_std(n, R.epsilon, (s, s), R.directed)
        else:  # a subsampled or typed release: its own (any-tie) channel, worst case
            std = float(count_estimate(0.0, float(s * s), R.channel).std)
        expected = max(density, 0.0) * s * s
        half = _Z95 * std
        # the library's one resolution rule, applied to such a cut
        resolved = bool(Estimate(expected, std, feasible_range=(0.0, float(s * s)),
                                 proper=True).resolved)
        rows.append({
            "sides": f"{s} x {s}", "pairs": f"{s * s:,}", "std": _fmt(std),
            "half_width": _fmt(half), "typical": _fmt(expected),
            "interval": f"[{_fmt(max(0.0, expected - half))}, {_fmt(min(s * s, expected + half))}]",
            "relative": _percent(half / expected) if expected > 0 else "n/a",
            "resolved": resolved,
        })
    return rows


def report_context(R: Any, title: str = "dpgraph release",
                   progress: Callable[[str], None] | None = None,
                   verified_by: str | None = None, max_seconds: float | None = None) -> dict:
    """Everything the template shows, computed from the release ``R`` alone.

    Parameters
    ----------
    R : PrivateGraph
        The release (e.g. ``dpgraph.load("g.dpg")``).
    title : str
        Shown as the page title.
    progress : callable, optional
        Called as ``progress(step)`` when a slow step starts and
        ``progress(step, seconds)`` when it ends.
    verified_by : str, optional
        Hex of the verify key the file's signature was checked against
        (``dpgraph report --verify-key``); None when it was not checked.
    max_seconds : float, optional
        Wall-clock seconds each long computation (the triangle pass,
        community detection) may take; one predicted or running over it is
        listed under "Not computed" with the reason.  None: no limit (only
        a prediction of hours is refused, by the analytics' own rule).
    """
    with time_limit(max_seconds):
        return _context(R, title, progress, verified_by)


def _context(R: Any, title: str, progress: Callable[[str], None] | None,
             verified_by: str | None) -> dict:
    """:func:`report_context` within its time limit."""
    progress = progress or (lambda step, seconds=None: None)
    timings: list = []
    t0 = time.perf_counter()
    n = R.number_of_nodes()
    eps = float(R.epsilon)
    p = float(R.flip_probability)
    total = getattr(getattr(R, "degree_channel", None), "total_epsilon", eps)  # what a pair's odds move by
    odds = math.exp(min(total, 700.0))
    skipped: dict[str, list[str]] = {}
    done: dict = {}
    stats = _statistics(R, progress, timings, skipped, done)
    density = float((done.get("density") or R.density()).value)
    half = max(n // 4, 1)
    public_plan = plan(n, eps, directed=R.directed, sides=(half, half) if 2 * half <= n else None)
    eps_grid = sorted(set(DEFAULT_EPSILONS) | {eps})
    ctx = {
        "title": title,
        "version": __version__,
        "generated": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "nodes": f"{n:,}", "n": n,
        "directed": bool(R.directed),
        "pairs": f"{R.number_of_pairs():,}",
        "released_edges": f"{R.number_of_released_edges():,}",
        "epsilon": _fmt(eps), "flip": f"{p:.6g}", "flip_one_in": _fmt(1.0 / p) if p > 0 else "n/a",
        "realized": f"{float(R.realized_epsilon):.12g}",
        "odds": _fmt(odds), "posterior": f"{100 * odds / (1 + odds):.1f}",
        "keep": float(R.keep), "keep_text": f"{float(R.keep):.3g}",
        "subsample_cost": _subsample_cost(R),
        "statistics": stats,
        "unresolved": [r["name"] for r in stats if r.get("resolved") is False],
        "degrees": _degree_section(R, progress, timings, skipped),
        "communities": _community_section(R, progress, timings, skipped),
        "cut_table": _cut_table(R, density),
        "eps_table": [
            {k: (_fmt(v) if k != "epsilon" else f"{v:g}") for k, v in row.items()}
            for row in public_plan.table(eps_grid)
        ],
        "eps_columns": list(public_plan.table([eps])[0]),
        "plan_sides": f"{half} x {half}",
        "citation": CITATION % (__version__, _dt.date.today().year),
        "verified_by": verified_by,
        "degree_channel": _degree_channel(R),
    }
    ctx["planner_svg"] = _timed(progress, timings, "planner figure",
                                lambda: figures.planner_figure(public_plan))
    ctx["not_computed"] = [{"what": ", ".join(names), "message": why, "detail": detail}
                           for (why, detail), names in skipped.items()]
    ctx["timings"] = [(label, f"{dt:.1f}") for label, dt in timings]
    ctx["total_seconds"] = f"{time.perf_counter() - t0:.1f}"
    return ctx


def _degree_channel(R: Any) -> dict | None:
    """The degree channel of a composed release, in public numbers (None without one)."""
    dc = getattr(R, "degree_channel", None)
    if dc is None:
        return None
    return {"share": f"{dc.share:g}", "total": f"{dc.total_epsilon:g}",
            "epsilon": f"{dc.laplace.epsilon:g}", "noise_std": f"{dc.laplace.std:.3g}",
            "degree_std": f"{float(R.degree(next(iter(R.nodes))).std):.3g}",
            "directed": bool(R.directed)}


def build_report(R: Any, title: str = "dpgraph release",
                 progress: Callable[[str], None] | None = None,
                 verified_by: str | None = None, max_seconds: float | None = None) -> str:
    """A self-contained HTML page describing the release ``R`` for an analyst.

    Post-processing of the release only (no privacy cost): what it protects,
    every debiased statistic with its 95% confidence interval and whether the
    release resolves it, the degree distribution, community structure and its
    detectability, the accuracy of cut queries, and how to cite.  Figures are
    inline SVG and the CSS is inline: the page fetches nothing.

    Parameters
    ----------
    R : PrivateGraph
    title : str, default "dpgraph release"
    progress : callable, optional
        Called as ``progress(step)`` when a slow step starts and
        ``progress(step, seconds)`` when it ends.
    verified_by : str, optional
        Hex of the verify key the file's signature was checked against.
    max_seconds : float, optional
        Wall-clock seconds each long computation may take (see
        :func:`report_context`); None: no limit.

    Returns
    -------
    str
        The HTML document.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> R = dpgraph.release(nx.karate_club_graph(), epsilon=2.0, seed=0)
    >>> page = build_report(R, title="karate")
    >>> page.startswith("<!DOCTYPE html>") and "karate" in page
    True
    """
    if not (hasattr(R, "channel") and hasattr(R, "number_of_nodes")):
        raise TypeError(f"R must be a dpgraph PrivateGraph, got {type(R).__name__}")
    return render_report(report_context(R, str(title), progress, verified_by, max_seconds))


def render_report(context: dict) -> str:
    """Render the report template with a context from :func:`report_context`."""
    import jinja2

    source = resources.files(__package__).joinpath("template.html.j2").read_text(encoding="utf-8")
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True)
    return env.from_string(source).render(**context)
