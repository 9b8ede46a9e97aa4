"""Tables and figures of the peers benchmark."""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any

import numpy as np

from .data import published_figures
from .methods import METHOD_LABELS, METHODS
from .metrics import METRIC_INFO, SOK_METRICS

__all__ = ["best_table", "format_table", "plots", "replot", "runtime_table"]

#: published methods shown beside ours, and which of our rows each corresponds to
PUBLISHED_AS = {"sok": {"TmF": "TmF", "PrivGraph": "PrivGraph", "LDPGen": "LDPGen"},
                "pgb": {"DP-1K": "DP-1K-HH", "LDPGen": "LDPGen", "PrivGraph": "PrivGraph"}}

#: SoK columns that are not private (DER uses exact leaf counts) and never count as "best"
NOT_PRIVATE = ("DER",)


def _fmt(x: Any) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    x = float(x)
    if x != 0 and (abs(x) < 1e-3 or abs(x) >= 1e4):
        return f"{x:.2e}"
    return f"{x:.3f}"


def _cell(s: dict | None) -> str:
    if s is None or not s["n"]:
        return "-"
    return f"{_fmt(s['mean'])} ± {_fmt(s['sd'])}"


def _index(summary: list[dict], name: str) -> dict:
    return {(s["epsilon"], s["method"], s["metric"]): s for s in summary if s["dataset"] == name}


def _best_published(pub: dict, metric: str, eps: float) -> tuple[str, float] | None:
    vals = {m: v for m, v in pub.get(metric, {}).get(eps, {}).items()
            if m not in NOT_PRIVATE and math.isfinite(v)}
    if not vals:
        return None
    pick = max if METRIC_INFO[metric][1] else min
    m = pick(vals, key=vals.get)
    return m, vals[m]


def format_table(summary: list[dict], published: dict, eps: float, dataset: str) -> str:
    """Markdown table at one epsilon: metrics down, methods across (mean ± sd), published beside.

    Every number is as measured (never clipped); ``-`` marks a metric the
    method does not give.  Published columns: the SoK study's TmF,
    PrivGraph and LDPGen and its best private method, and PGB's plots.
    A second table gives the dpgraph estimators' 95% interval coverage and
    resolved rate.
    """
    idx = _index(summary, dataset)
    meths = [m for m in METHODS if any(k[1] == m and k[0] == eps for k in idx)]
    sok, pgb = published.get("sok", {}), published.get("pgb", {})
    pub_cols = [] if not sok else ["SoK TmF", "SoK PrivGraph", "SoK LDPGen", "SoK best"]
    pub_cols += ["PGB plots"] if pgb else []
    head = "| metric | " + " | ".join(meths + pub_cols) + " |"
    lines = [head, "|" + "---|" * (len(meths) + len(pub_cols) + 1)]
    for metric in SOK_METRICS:
        cells = [_cell(idx.get((eps, m, metric))) for m in meths]
        if sok:
            for m in ("TmF", "PrivGraph", "LDPGen"):
                cells.append(_fmt(sok.get(metric, {}).get(eps, {}).get(m)))
            b = _best_published(sok, metric, eps)
            cells.append(f"{b[0]} {_fmt(b[1])}" if b else "-")
        if pgb:
            vals = pgb.get(metric, {}).get(eps, {})
            cells.append(", ".join(f"{m} {_fmt(v)}" for m, v in vals.items()) or "-")
        label = METRIC_INFO[metric][0] + (" ↑" if METRIC_INFO[metric][1] else " ↓")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    if ("dpgraph" in meths) and any(k[1] == "dpgraph" for k in idx):
        lines += ["", "| dpgraph estimator | 95% CI covers the truth | resolved |", "|---|---|---|"]
        for stat in ("triangles", "transitivity", "density", "assortativity", "modularity"):
            cov = idx.get((eps, "dpgraph", f"{stat}_covered"))
            res = idx.get((eps, "dpgraph", "communities_resolvable" if stat == "modularity"
                           else f"{stat}_resolved"))

            def frac(s: dict | None) -> str:
                if s is None or not s["n"]:
                    return "-"
                return f"{round(s['mean'] * s['n'])}/{s['n']}"

            what = "modularity of its partition" if stat == "modularity" else stat
            lines.append(f"| {what} | {frac(cov)} | {frac(res)}"
                         + (" (communities resolvable)" if stat == "modularity" else "") + " |")
    return "\n".join(lines)


def runtime_table(summary: list[dict], dataset: str) -> str:
    """Markdown table: per method, seconds to produce its answer (mean per eps) and peak memory."""
    idx = _index(summary, dataset)
    eps_list = sorted({k[0] for k in idx})
    meths = [m for m in METHODS if any(k[1] == m for k in idx)]
    lines = ["| method | " + " | ".join(f"s at eps {e:g}" for e in eps_list)
             + " | peak MiB (max) | scoring s (mean) |", "|" + "---|" * (len(eps_list) + 3)]
    for m in meths:
        secs = [_fmt(idx[(e, m, "seconds")]["mean"]) if (e, m, "seconds") in idx else "-"
                for e in eps_list]
        peaks = [idx[(e, m, "peak_mib")]["max"] for e in eps_list if (e, m, "peak_mib") in idx]
        peaks = [p for p in peaks if math.isfinite(p)]
        sc = [idx[(e, m, "score_seconds")]["mean"] for e in eps_list
              if (e, m, "score_seconds") in idx]
        lines.append(f"| {METHOD_LABELS[m]} | " + " | ".join(secs)
                     + f" | {_fmt(max(peaks)) if peaks else '-'} | {_fmt(float(np.mean(sc)))} |")
    return "\n".join(lines)


def best_table(summary: list[dict], dataset: str, published: dict | None = None) -> str:
    """Markdown table: for every metric and epsilon, the best measured method (mean ± sd).

    "Best" is the largest mean for NMI, ARI and the partition's true
    modularity and the smallest otherwise, over the methods that give the
    metric; each cell also shows the better of the two dpgraph rows
    (estimators, synthesized graph) when neither is the best.
    """
    idx = _index(summary, dataset)
    eps_list = sorted({k[0] for k in idx})
    lines = ["| metric | " + " | ".join(f"eps {e:g}" for e in eps_list) + " |",
             "|" + "---|" * (len(eps_list) + 1)]
    for metric in SOK_METRICS:
        higher = METRIC_INFO[metric][1]
        cells = []
        for e in eps_list:
            cand = {m: idx[(e, m, metric)] for m in METHODS
                    if (e, m, metric) in idx and idx[(e, m, metric)]["n"]}
            if not cand:
                cells.append("-")
                continue
            sign = -1.0 if higher else 1.0
            order = sorted(cand, key=lambda m, c=cand: sign * c[m]["mean"])
            best = order[0]
            cell = f"**{best}** {_cell(cand[best])}"
            ours = [m for m in order if m in ("dpgraph", "dpgraph-synth")]
            if ours and best not in ("dpgraph", "dpgraph-synth"):
                cell += f"; {ours[0]} {_cell(cand[ours[0]])}"
            cells.append(cell)
        label = METRIC_INFO[metric][0] + (" ↑" if higher else " ↓")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plots(out: Path, name: str, summary: list[dict], published: dict) -> list[str]:
    """One figure per metric (``peers_<name>_<metric>.png``) and an overview ``peers_<name>.png``.

    Each metric's figure has the methods side by side at every epsilon:
    bars at the mean, whiskers one standard deviation, and the published
    figures as black markers on the bar of the method they belong to
    (x: SoK, triangle: PGB).  Error metrics spanning more than a factor 20
    are drawn on a log axis (a zero mean then shows no bar).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    idx = _index(summary, name)
    eps_list = sorted({k[0] for k in idx})
    meths = [m for m in METHODS if any(k[1] == m for k in idx)]
    colors = {m: plt.get_cmap("tab10")(i) for i, m in enumerate(METHODS)}
    width = 0.8 / max(len(meths), 1)
    written = []
    for metric in SOK_METRICS:
        if not any(idx.get((e, m, metric), {"n": 0})["n"] for e in eps_list for m in meths):
            continue
        label, higher, definition = METRIC_INFO[metric]
        fig, ax = plt.subplots(figsize=(9, 4.2))
        means = []
        for j, m in enumerate(meths):
            x = np.arange(len(eps_list)) + (j - (len(meths) - 1) / 2) * width
            s = [idx.get((e, m, metric)) for e in eps_list]
            y = np.array([v["mean"] if v and v["n"] else np.nan for v in s])
            sd = np.array([v["sd"] if v and v["n"] else np.nan for v in s])
            means.extend(y[np.isfinite(y)].tolist())
            ax.bar(x, y, width, yerr=sd, color=colors[m], label=METHOD_LABELS[m], capsize=2)
        for src, marker in (("sok", "x"), ("pgb", "^")):
            for pm, ours in PUBLISHED_AS[src].items():
                if ours not in meths:
                    continue
                j = meths.index(ours)
                pts = [(i + (j - (len(meths) - 1) / 2) * width,
                        published.get(src, {}).get(metric, {}).get(e, {}).get(pm))
                       for i, e in enumerate(eps_list)]
                pts = [(a, b) for a, b in pts if b is not None]
                if pts:
                    ax.plot(*zip(*pts), marker, color="black", ms=7, ls="none",
                            label=f"{pm}, published ({src.upper()})")
        pos = [v for v in means if v > 0]
        if not higher and pos and max(pos) / min(pos) > 20:
            ax.set_yscale("log")
        ax.set_xticks(range(len(eps_list)), [f"eps = {e:g}" for e in eps_list])
        ax.set_title(f"{name}: {label} ({'higher' if higher else 'lower'} is better)\n{definition}",
                     fontsize=9)
        ax.legend(fontsize=6, ncol=2)
        fig.tight_layout()
        fname = f"peers_{name}_{metric}.png"
        fig.savefig(out / fname, dpi=90)
        plt.close(fig)
        written.append(fname)
    _overview(out, name, idx, eps_list, meths, colors, plt)
    return written + [f"peers_{name}.png"]


def _overview(out: Path, name: str, idx: dict, eps_list: list, meths: list, colors: dict,
              plt: Any) -> None:
    fig, axes = plt.subplots(3, 5, figsize=(20, 10))
    for ax, metric in zip(axes.ravel(), SOK_METRICS):
        label, higher, _ = METRIC_INFO[metric]
        for m in meths:
            s = [idx.get((e, m, metric)) for e in eps_list]
            y = np.array([v["mean"] if v and v["n"] else np.nan for v in s])
            if np.isfinite(y).any():
                if not higher:
                    y = np.where(y > 0, y, np.nan)
                ax.plot(eps_list, y, "o-", color=colors[m], label=METHOD_LABELS[m])
        ax.set_xscale("log")
        ax.set_xticks(eps_list, [f"{e:g}" for e in eps_list])
        ax.minorticks_off()
        if not higher:
            ax.set_yscale("log")
        ax.set_title(label + (" ↑" if higher else " ↓"), fontsize=9)
    from matplotlib.lines import Line2D

    fig.legend([Line2D([], [], color=colors[m], marker="o") for m in meths],
               [METHOD_LABELS[m] for m in meths], loc="lower center", ncol=len(meths), fontsize=8)
    fig.tight_layout(rect=(0, 0.04, 1, 0.96))
    fig.suptitle(f"{name}: every metric against epsilon (means over releases)")
    fig.savefig(out / f"peers_{name}.png", dpi=80)
    plt.close(fig)


def replot(out: str | Path, name: str = "facebook") -> list[str]:
    """Redraw the figures of ``name`` from ``peers_<name>_summary.csv`` in ``out``."""
    out = Path(out)
    with open(out / f"peers_{name}_summary.csv", newline="") as fh:
        summary = []
        for r in csv.DictReader(fh):
            row: dict = {k: (v if k in ("dataset", "method", "metric") else float(v))
                         for k, v in r.items()}
            row["n"] = int(row["n"])
            summary.append(row)
    published = ({"sok": published_figures("sok"), "pgb": published_figures("pgb")}
                 if name == "facebook" else {})
    return plots(out, name, summary, published)

