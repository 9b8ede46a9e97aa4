"""The report's figures: matplotlib drawn to inline SVG text (no files, no network)."""

from __future__ import annotations

import io
import re
from typing import Any

import numpy as np

__all__ = ["svg", "degree_figure", "eigen_figure", "planner_figure"]

_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.S)


def svg(fig: Any) -> str:
    """The figure as an inline ``<svg>`` element (XML prolog and metadata dropped); closes it."""
    import matplotlib.pyplot as plt

    buf = io.StringIO()
    with plt.rc_context({"svg.fonttype": "none", "svg.hashsalt": "dpgraph-report"}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    text = _METADATA.sub("", text)
    return text.replace('width="', 'class="figure" width="', 1)


def _figure(width: float = 6.4, height: float = 3.6):
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height))


def degree_figure(h: np.ndarray, band: tuple[np.ndarray, np.ndarray] | None,
                  released: np.ndarray, half_width: float) -> str:
    """Complementary CDF of the estimated degree distribution (log-log), band if known.

    ``released`` are the released graph's raw degrees, drawn for contrast:
    the noise adds about p'(n-1) to every degree.
    """
    fig = _figure()
    ax = fig.add_subplot()
    k = np.arange(1, h.size)

    def ccdf(p: np.ndarray) -> np.ndarray:
        return np.clip(1.0 - np.cumsum(p)[:-1], 0.0, 1.0)  # P(degree >= k), k = 1..n-1

    n = released.size
    floor = 0.5 / n  # below one node in n the tail carries no information
    y = ccdf(np.asarray(h, float))
    # a log-spaced subset of degrees keeps the SVG small without changing the picture
    idx = np.unique(np.geomspace(1, k.size, 400).astype(int) - 1)
    keep = idx[y[idx] >= floor]
    ax.step(k[keep], y[keep], where="post", color="C0", lw=1.6, label="estimated (debiased)")
    if band is not None:
        lo, hi = ccdf(np.asarray(band[0], float))[idx], ccdf(np.asarray(band[1], float))[idx]
        ax.fill_between(k[idx], np.minimum(lo, hi), np.maximum(lo, hi), step="post", color="C0",
                        alpha=0.25, label="uncertainty band")
    vals, counts = np.unique(np.asarray(released, np.int64), return_counts=True)
    r_ccdf = 1.0 - (np.cumsum(counts) - counts) / n  # fraction with released degree >= value
    pos = vals > 0
    ax.step(vals[pos], r_ccdf[pos], where="post", color="C3", lw=1.0, ls="--",
            label="released graph (raw, biased)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(floor, 1.5)
    ax.set_xlabel("degree k")
    ax.set_ylabel("fraction of nodes with degree >= k")
    ax.set_title(f"Degree distribution (one node's degree: +/- {half_width:.3g} at 95%)", fontsize=10)
    ax.legend(fontsize=8, loc="lower left")
    ax.grid(alpha=0.3, which="both", lw=0.4)
    fig.tight_layout()
    return svg(fig)


def eigen_figure(eigenvalues: np.ndarray, noise_edge: float) -> str:
    """Leading eigenvalues of the debiased adjacency against the noise edge."""
    fig = _figure(6.4, 3.0)
    ax = fig.add_subplot()
    ev = np.sort(np.asarray(eigenvalues, float))[::-1]
    colors = ["C2" if v > noise_edge else "0.6" for v in ev]
    ax.bar(np.arange(1, ev.size + 1), ev, color=colors)
    ax.axhline(noise_edge, color="C3", lw=1.2, ls="--", label="noise edge")
    ax.set_xlabel("rank")
    ax.set_ylabel("eigenvalue")
    ax.set_title("Spectrum of the debiased adjacency: green bars carry structure", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return svg(fig)


def planner_figure(plan: Any) -> str:
    """The planner's error-against-epsilon plot for this release's public parameters."""
    fig = _figure()
    ax = fig.add_subplot()
    plan.plot(ax=ax, relative=False)
    ax.set_ylabel("standard deviation of the estimate")
    fig.tight_layout()
    return svg(fig)
