"""The report's figures: matplotlib drawn to inline SVG text (no files, no network)."""

from __future__ import annotations

import io
import re
from typing import Any

import numpy as np

__all__ = ["degree_figure", "eigen_figure", "planner_figure", "svg"]

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
                  released: np.ndarray, half_width: float,
                  tail_band: tuple[np.ndarray, np.ndarray] | None = None) -> str:
    """Estimated degree distribution: its histogram (with its band when known) and its
    complementary CDF (with ``tail_band`` when given) against the released graph's raw degrees.

    The raw degrees are drawn for contrast: the noise adds about p'(n-1) to
    every degree.  Both panels are log-log; fractions below half a node are
    not drawn (they carry no information).
    """
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9.6, 3.6))
    ax_pmf, ax_cdf = fig.subplots(1, 2)
    h = np.asarray(h, float)
    n = released.size
    floor = 0.5 / n
    d = np.arange(h.size)
    idx = np.unique(np.geomspace(1, h.size - 1, 500).astype(int))  # log-spaced degrees >= 1
    if band is not None:
        lo, hi = np.asarray(band[0], float)[idx], np.asarray(band[1], float)[idx]
        ax_pmf.fill_between(d[idx], np.maximum(lo, floor), np.maximum(hi, floor), color="C0",
                            alpha=0.25, lw=0, label="uncertainty band")
    show = idx[h[idx] >= floor]
    ax_pmf.plot(d[show], h[show], color="C0", lw=1.4, label="estimated fraction")
    ax_pmf.set_xscale("log")
    ax_pmf.set_yscale("log")
    ax_pmf.set_ylim(floor, 1.0)
    ax_pmf.set_xlabel("degree d")
    ax_pmf.set_ylabel("fraction of nodes with degree d")
    ax_pmf.set_title("Estimated degree histogram", fontsize=10)
    ax_pmf.legend(fontsize=8, loc="lower left")
    ax_pmf.grid(alpha=0.3, which="both", lw=0.4)

    tail = np.clip(1.0 - np.cumsum(h) + h, 0.0, 1.0)  # P(degree >= d)
    keep = idx[tail[idx] >= floor]
    if tail_band is not None:
        lo, hi = np.asarray(tail_band[0], float)[idx], np.asarray(tail_band[1], float)[idx]
        ax_cdf.fill_between(d[idx], np.maximum(lo, floor), np.maximum(hi, floor), color="C0",
                            alpha=0.25, lw=0, step="post", label="uncertainty band")
    ax_cdf.step(d[keep], tail[keep], where="post", color="C0", lw=1.6, label="estimated (debiased)")
    vals, counts = np.unique(np.asarray(released, np.int64), return_counts=True)
    r_tail = 1.0 - (np.cumsum(counts) - counts) / n  # fraction with released degree >= value
    pos = vals > 0
    ax_cdf.step(vals[pos], r_tail[pos], where="post", color="C3", lw=1.0, ls="--",
                label="released graph (raw, biased)")
    ax_cdf.set_xscale("log")
    ax_cdf.set_yscale("log")
    ax_cdf.set_ylim(floor, 1.5)
    ax_cdf.set_xlabel("degree d")
    ax_cdf.set_ylabel("fraction of nodes with degree >= d")
    ax_cdf.set_title(f"Tail (one node's degree: +/- {half_width:.3g} at 95%)", fontsize=10)
    ax_cdf.legend(fontsize=8, loc="lower left")
    ax_cdf.grid(alpha=0.3, which="both", lw=0.4)
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
