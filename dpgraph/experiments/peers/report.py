"""Tables and figures of the peers benchmark."""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any

import numpy as np

from .data import published_figures
from .metrics import EPSILONS, METHODS

__all__ = ["format_table", "plots", "replot"]

#: columns of the printed tables (those with no finite value at an epsilon are left out)
TABLE_COLUMNS = ["transitivity_err", "degree_kl", "degree_w1", "modularity_err", "nmi", "ari",
                 "partition_true_modularity", "modularity_reported_err", "nmi_dept", "ari_dept",
                 "density_err", "assortativity_err", "clustering_w1", "triangles_rel"]


def _fmt(x: Any) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    x = float(x)
    if x != 0 and (abs(x) < 1e-3 or abs(x) >= 1e4):
        return f"{x:.2e}"
    return f"{x:.3f}"


def format_table(summary: list[dict], published: dict, eps: float, dataset: str) -> str:
    """Markdown table of our rows beside the published peers at one epsilon.

    Every number is shown as measured (means over the releases); ``-`` marks
    a metric that is undefined for that method (no finite value), and the
    dpgraph row says how many releases were resolvable for communities.
    """
    ours = [s for s in summary if s["epsilon"] == eps and s["dataset"] == dataset]
    pubs = {k: v.get(eps) for k, v in published.items() if eps in v}
    cols = [c for c in TABLE_COLUMNS
            if any(math.isfinite(s.get(c, float("nan"))) for s in ours) or c in pubs]
    lines = ["| method | " + " | ".join(cols) + " |", "|" + "---|" * (len(cols) + 1)]
    for s in ours:
        label = f"{s['method']} (ours, {s['releases']} releases"
        if s["method"] == "dpgraph" and s.get("resolvable_n"):
            label += f", communities resolvable in {round(s['resolvable'] * s['resolvable_n'])}"
        lines.append(f"| {label}) | " + " | ".join(_fmt(s.get(c)) for c in cols) + " |")
    if pubs:
        for meth in next(iter(pubs.values())):
            vals = [_fmt(pubs[c].get(meth)) if c in pubs else "-" for c in cols]
            lines.append(f"| {meth} (published, SoK) | " + " | ".join(vals) + " |")
    return "\n".join(lines)


def plots(out: Path, name: str, summary: list[dict], published: dict,
          deg_example: tuple | None) -> None:
    """``peers_<name>.png`` (metrics against epsilon) and ``peers_<name>_degrees.png``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = ["transitivity_err", "degree_w1", "modularity_err", "nmi", "ari",
              "partition_true_modularity", "density_err", "clustering_w1"]
    fig, axes = plt.subplots(2, 4, figsize=(18, 8))
    higher = ("nmi", "ari", "partition_true_modularity")
    for ax, key in zip(axes.ravel(), panels):
        for meth in METHODS:
            pts = [(s["epsilon"], s[key]) for s in summary if s["method"] == meth]
            if pts:
                x, y = zip(*pts)
                if key not in higher:  # log axis: a zero error is drawn as a gap, not hidden
                    y = [v if v > 0 else np.nan for v in y]
                ax.plot(x, y, "o-", lw=2, label=f"{meth} (ours)")
        if key in published:
            for meth in ("PrivGraph", "CAGMDP", "TmF"):
                pts = sorted((e, v[meth]) for e, v in published[key].items() if e <= 4.5)
                if pts:
                    x, y = zip(*pts)
                    if key not in higher:
                        y = [v if v > 0 else np.nan for v in y]
                    ax.plot(x, y, "x--", alpha=0.7, label=f"{meth} (published)")
        ax.set_xscale("log")
        ax.set_xticks(list(EPSILONS), [f"{e:g}" for e in EPSILONS])
        ax.minorticks_off()
        ax.set_title(key + ("  (higher is better)" if key in higher else "  (lower is better)"))
        ax.set_xlabel("epsilon")
        if key not in higher:
            ax.set_yscale("log")
    axes[0, 0].legend(fontsize=7)
    fig.suptitle(f"{name}: dpgraph, TmF and PrivGraph"
                 + (" vs published edge-DP peers (SoK figures)" if published else ""))
    fig.tight_layout()
    fig.savefig(out / f"peers_{name}.png", dpi=110)
    plt.close(fig)
    if deg_example is not None:
        true_deg, naive_deg, hist, eps = deg_example
        fig, ax = plt.subplots(figsize=(7, 4.5))
        n = hist.size
        bins = np.arange(0, n + 1)
        ax.hist(true_deg, bins=bins, histtype="step", density=True, label="true", lw=1.5)
        ax.hist(naive_deg, bins=bins, histtype="step", density=True, label="naive (release)")
        ax.plot(np.arange(n), hist, label="deconvolved (dpgraph)", lw=1.5)
        ax.set_xscale("symlog", linthresh=10)
        ax.set_yscale("log")
        ax.set_ylim(1e-5, 1)
        ax.set_xlabel("degree")
        ax.set_ylabel("fraction of nodes")
        ax.set_title(f"{name}, eps = {eps:g}: degree histogram")
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / f"peers_{name}_degrees.png", dpi=110)
        plt.close(fig)


def replot(out: str | Path, name: str = "facebook") -> None:
    """Redraw ``peers_<name>.png`` from the summary CSV in ``out`` (no recomputation)."""
    out = Path(out)
    with open(out / f"peers_{name}.csv", newline="") as fh:
        summary = [{k: (v if k in ("dataset", "method") else float(v)) for k, v in r.items()}
                   for r in csv.DictReader(fh)]
    published = published_figures() if name == "facebook" else {}
    plots(out, name, summary, published, None)
