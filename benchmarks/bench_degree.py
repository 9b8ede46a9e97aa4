"""The degree distribution: time and memory at scale, fit (KL) and band coverage, old vs new.

Three tables, each comparing with the previous method (a frozen copy below,
``old_degree_distribution``: one log-normal fitted on a 28 x 64 grid through
the full n x (support) transition matrix, band = the grid points the
profile likelihood does not reject) in the same run:

``scale`` (default): ``R.degree_distribution()`` on dense and sparse
(``target_edges = 20 n``) releases at eps = 1 of ``nx.fast_gnp_random_graph(n, 10/n)``
for n in 10^4, 5 x 10^4, 10^5: wall time and peak memory (tracemalloc: every
numpy allocation), the old method where its transition matrix fits in
``--old-budget`` GiB (else "refused", with the size it asks for).

``kl``: KL(true histogram || estimate) (the convention of
``dpgraph.experiments.peers.degree_kl``: the estimate mixed with 1e-3 of
uniform) on the zoo's sparse graphs, its dense ones, ego-Facebook and
email-Eu-core at eps in {1, 2, 4}: median and worst over ``--reps`` releases,
of the old method, of the fit before its location average ("no shift":
family average x spline, :func:`unshifted_fit`) and of the current estimate.

``coverage``: how often the 95% band holds the true tail P(D >= k), at the
degrees k of the true 25/50/75/95% quantiles (pointwise) and at every degree
at once (simultaneous), over the zoo at ``--n`` nodes and the two real graphs.

    python benchmarks/bench_degree.py [scale|kl|coverage] [--quick] [--reps R]

Run large sizes under a memory guard; every number is printed, none dropped.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
import tracemalloc
import warnings

import numpy as np
from _common import report, table

import dpgraph
from dpgraph.exceptions import SeededReleaseWarning

warnings.simplefilter("ignore", SeededReleaseWarning)

# ----------------------------------------------------------------------------- the old method


def _old_transition(n, alpha, beta, dmax):
    from scipy.stats import binom

    L = 1 << int(np.ceil(np.log2(2 * n)))
    k = np.arange(n)
    P = np.empty((n, dmax + 1))
    chunk = max(1, (1 << 22) // L)
    for d0 in range(0, dmax + 1, chunk):
        d = np.arange(d0, min(dmax + 1, d0 + chunk))[:, None]
        a = binom.pmf(k[None, :], d, alpha)
        b = binom.pmf(k[None, :], n - 1 - d, beta)
        conv = np.fft.irfft(np.fft.rfft(a, L, axis=1) * np.fft.rfft(b, L, axis=1), L, axis=1)
        block = np.clip(conv[:, :n], 0.0, None)
        block /= block.sum(axis=1, keepdims=True)
        P[:, d0 : d0 + d.shape[0]] = block.T
    return P


def old_support(R):
    n, ch = R.number_of_nodes(), R.channel
    obs = R.released_degrees()
    v0, v1 = ch.entry_variances()
    s = float(np.sqrt((n - 1) * max(v0, v1)))
    top = float(ch.debias(float(obs.max()), n - 1))
    return int(min(n - 1, max(2, np.ceil(top + 6 * s + 3))))


def old_bytes(R) -> int:
    """What the old method allocated: its n x (support) matrix, twice (as it checked)."""
    return 2 * R.number_of_nodes() * (old_support(R) + 1) * 8


def old_degree_distribution(R):
    """The previous default (log-normal on a 28 x 64 grid), as it was: (h, lower, upper)."""
    from scipy import stats
    from scipy.stats import chi2

    n = R.number_of_nodes()
    obs = np.asarray(R.released_degrees())
    dmax = old_support(R)
    P = _old_transition(n, R.channel.alpha, R.channel.beta, dmax)
    ys, cy = np.unique(obs, return_counts=True)
    Py = P[ys]
    dh = np.asarray(R.channel.debias(obs.astype(float), n - 1))
    top = max(float(np.quantile(dh, 0.999)), 2.0)
    locs = np.geomspace(0.2, min(max(top, 3.0), dmax), 64)
    shapes = np.geomspace(0.12, 2.5, 28)
    d = np.arange(dmax + 2, dtype=float)
    S, M = np.meshgrid(shapes, locs, indexing="ij")
    S, M = S.ravel()[:, None], M.ravel()[:, None]
    cdf = np.zeros((S.shape[0], d.size))
    F = stats.norm.cdf((np.log(d[1:]) - np.log(M)) / S)
    cdf[:, 1:] = (F - F[:, :1]) / np.maximum(1 - F[:, :1], 1e-300)
    Q = np.diff(cdf, axis=1)[:, : dmax + 1]
    Q[:, -1] += 1.0 - cdf[:, dmax + 1]
    Q = np.clip(Q, 0.0, None) / np.maximum(Q.sum(axis=1, keepdims=True), 1e-300)
    ll = np.log(np.maximum(Py @ Q.T, 1e-300)).T @ cy
    ok = 2 * (ll.max() - ll) <= chi2.ppf(0.95, 2)
    okshape = ok.reshape(shapes.size, locs.size).any(axis=1)
    dist = np.where(okshape, np.abs(np.log(shapes / 0.6)), np.inf)
    si = int(np.argmin(dist))
    best = si * locs.size + int(np.argmax(ll.reshape(shapes.size, locs.size)[si]))
    h, lo, hi = np.zeros(n), np.zeros(n), np.zeros(n)
    h[: dmax + 1] = Q[best]
    lo[: dmax + 1] = Q[ok].min(axis=0)
    hi[: dmax + 1] = Q[ok].max(axis=0)
    return h, lo, hi


# ----------------------------------------------------------------------------- scale


def _measure(fn):
    """(seconds, peak MiB, refusal or None): timed alone, then run again under tracemalloc
    (which counts every numpy allocation but slows Python-level work, so it is not timed)."""
    gc.collect()
    t0 = time.perf_counter()
    try:
        fn()
    except MemoryError as exc:
        return time.perf_counter() - t0, float("nan"), str(exc)
    t = time.perf_counter() - t0
    gc.collect()
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return t, peak / 2**20, None


def scale(sizes: list[int], old_budget_gib: float) -> list[dict]:
    import networkx as nx

    rows = []
    for n in sizes:
        G = nx.fast_gnp_random_graph(n, 10.0 / n, seed=1)
        for kind in ("dense", "sparse"):
            kw = {} if kind == "dense" else {"target_edges": 20 * n}
            R = dpgraph.release(G, 1.0, seed=2, **kw)
            R.released_degrees()
            # the result is cached on the release: the second run asks for another level
            levels = iter([0.95, 0.9])
            t_new, m_new, err = _measure(
                lambda R=R, levels=levels: R.degree_distribution(level=next(levels)))
            row = {"n": f"{n:,}", "release": kind, "support": old_support(R) + 1,
                   "new s": f"{t_new:.1f}", "new peak MiB": f"{m_new:,.0f}",
                   "new": "ok" if err is None else "refused"}
            need = old_bytes(R)
            if need <= old_budget_gib * 2**30:
                t_old, m_old, _ = _measure(lambda R=R: old_degree_distribution(R))
                row.update({"old s": f"{t_old:.1f}", "old peak MiB": f"{m_old:,.0f}",
                            "time old/new": f"{t_old / t_new:.1f}",
                            "memory old/new": f"{m_old / m_new:.1f}"})
                report(f"degree_distribution {kind} n={n} eps=1: old time / new time",
                       t_old / t_new, baseline="the previous method, same run")
            else:
                row.update({"old s": "not run", "old peak MiB": f"needs {need / 2**30:,.1f} GiB",
                            "time old/new": "-", "memory old/new": "-"})
            rows.append(row)
            print(row, flush=True)
            del R
    return rows


# ----------------------------------------------------------------------------- kl


def _graphs(names: list[str], n: int | None):
    from dpgraph.experiments import zoo

    for name in names:
        if name in zoo.REAL:
            yield name, zoo.real(name)
        else:
            yield name, zoo.generate(name, n=n, seed=0)


SPARSE = ["sbm", "gnp", "powerlaw", "holme-kim", "watts-strogatz", "geometric", "tree"]
DENSE = ["dense-sbm", "dense-gnp"]
REAL = ["facebook", "email-eu-core"]


def unshifted_fit(R):
    """The fit as it was before the location average: family average x spline (no band)."""
    from dpgraph.graph.analytics import degree_stats as ds
    from dpgraph.graph.analytics.degree_fit import FAMILIES, binned, corrected, family_average
    from dpgraph.graph.analytics.degree_kernel import DegreeKernel

    n, ch = R.number_of_nodes(), R.channel
    dmax = ds._support(R)
    y = ds._observed_degrees(R)
    K = DegreeKernel(n, ch.alpha, ch.beta, dmax, rows=(int(y.min()), int(y.max())))
    data = binned(K, y, ds._resolution(R))
    debiased = np.asarray(ch.debias(y.astype(float), n - 1))
    top = float(np.clip(np.quantile(debiased, 0.999), 3.0, max(dmax, 3)))
    h, _ = family_average(data, dmax, top, FAMILIES)
    return corrected(data, h, ds._resolution(R))[0]


def kl(reps: int, eps_list: list[float]) -> list[dict]:
    from dpgraph.experiments.peers import degree_kl

    rows = []
    for g, (name, G) in enumerate(_graphs(SPARSE + DENSE + REAL, None)):
        deg = np.array([d for _, d in G.degree()])
        for e, eps in enumerate(eps_list):
            old, prev, new, models, zs = [], [], [], [], []
            for r in range(reps):
                R = dpgraph.release(G, eps, seed=100_000 + 1000 * g + 100 * e + r)
                old.append(degree_kl(deg, old_degree_distribution(R)[0]))
                prev.append(degree_kl(deg, unshifted_fit(R)))
                h = R.degree_distribution()
                new.append(degree_kl(deg, np.asarray(h)))
                models.append(h.params["model"])
                m = R.number_of_edges(proper=False)  # how far the release puts the mean degree
                zs.append((m.value - G.number_of_edges()) / m.std)
            row = {"graph": name, "eps": eps,
                   "old median": f"{np.median(old):.3f}", "old worst": f"{max(old):.3f}",
                   "no shift median": f"{np.median(prev):.3f}", "no shift worst": f"{max(prev):.3f}",
                   "new median": f"{np.median(new):.3f}", "new worst": f"{max(new):.3f}",
                   "worst/median": f"{max(new) / max(np.median(new), 1e-12):.2f}",
                   "spline chosen": f"{sum(m != 'families' for m in models)}/{reps}",
                   "new all": " ".join(f"{x:.2f}" for x in new),
                   "mean-degree error / sd": " ".join(f"{z:+.1f}" for z in zs)}
            rows.append(row)
            print(row, flush=True)
    return rows


# ----------------------------------------------------------------------------- floor


def floor(eps_list: list[float]) -> list[dict]:
    """Two-point lower bound: how far apart two histograms the release cannot tell apart are.

    For each graph's true histogram h and an alternative h' (the same mean with no shape:
    Poisson, the degrees of G(n, p), or for a heavy tail the negative binomial with the
    same mean and variance; or the same shape one degree higher), r = min_q max(KL(h || q), KL(h' || q)) (the KL of the benchmark, over
    mixtures q of the two, where the minimum is) and TV, a bound on the total variation
    between the two laws of the n released degrees (from the Bhattacharyya coefficient
    of one node's law, nodes taken as independent).  Any estimator has
    P_h(KL >= r) + P_h'(KL >= r) >= 1 - TV: with TV small, one of the two graphs gets
    KL >= r in about half of its releases or more.
    """
    from scipy import stats

    from dpgraph.experiments.peers import degree_kl
    from dpgraph.graph.analytics.degree_kernel import DegreeKernel

    rows = []
    for name, G in _graphs(SPARSE + REAL, None):
        deg = np.array([d for _, d in G.degree()])
        n = deg.size
        mu, var = deg.mean(), deg.var()
        top = int(deg.max() + 10 * np.sqrt(var) + 20)
        d = np.arange(top + 1)
        if var > 1.5 * mu:
            r_ = mu**2 / (var - mu)
            smooth, label = stats.nbinom.pmf(d, r_, r_ / (r_ + mu)), "negbin(mean, var)"
        else:
            smooth, label = stats.poisson.pmf(d, mu), "Poisson(mean)"
        h = np.bincount(deg, minlength=top + 1)[: top + 1] / n
        alternatives = [(label, smooth / smooth.sum()), ("same shape, +1 degree", np.roll(h, 1))]
        for eps in eps_list:
            p_ = 1 / (1 + np.exp(eps))
            K = DegreeKernel(n, 1 - p_, p_, top)
            for label, alt in alternatives:
                seq_alt = np.minimum(np.searchsorted(np.cumsum(alt), (np.arange(n) + 0.5) / n), top)
                bc = float(np.sum(np.sqrt(np.maximum(K.pmf @ h, 0) * np.maximum(K.pmf @ alt, 0))))
                tv = float(np.sqrt(max(0.0, 1 - bc ** (2 * n))))
                ts = np.linspace(0, 1, 201)
                worst = [max(degree_kl(deg, t * h + (1 - t) * alt),
                             degree_kl(seq_alt, t * h + (1 - t) * alt)) for t in ts]
                rows.append({"graph": name, "eps": eps, "alternative": label,
                             "KL(h || h')": f"{degree_kl(deg, alt):.2f}",
                             "r = min max KL": f"{min(worst):.2f}", "TV bound": f"{tv:.2f}",
                             "P(KL >= r) on one of the two >=": f"{(1 - tv) / 2:.2f}"})
                print(rows[-1], flush=True)
    return rows


# ----------------------------------------------------------------------------- coverage


def coverage(reps: int, eps_list: list[float], n: int, level: float = 0.95,
             only: list[str] | None = None) -> list[dict]:
    from dpgraph.experiments import zoo

    rows = []
    for g, (name, G) in enumerate(_graphs(zoo.names() + REAL, n)):
        if only and name not in only:
            continue
        deg = np.array([d for _, d in G.degree()])
        nn = deg.size
        tail = np.array([np.mean(deg >= k) for k in range(nn + 1)])
        ks = np.unique(np.quantile(deg, [0.25, 0.5, 0.75, 0.95], method="lower").astype(int))
        for e, eps in enumerate(eps_list):
            point, simul, width, old_w = [], [], [], []
            for r in range(reps):
                R = dpgraph.release(G, eps, seed=200_000 + 1000 * g + 100 * e + r)
                h = R.degree_distribution(level=level)
                lo, hi = h.ccdf_lower, h.ccdf_upper
                inside = (lo <= tail[:nn] + 1e-9) & (tail[:nn] <= hi + 1e-9)
                point.extend(inside[ks].tolist())
                simul.append(bool(inside.all()))
                width.append(float(np.mean(hi[ks] - lo[ks])))
                if r == 0:
                    _, olo, ohi = old_degree_distribution(R)
                    old_w.append(float(np.max(ohi - olo)))
            rows.append({"graph": name, "eps": eps, "degrees k": ",".join(map(str, ks)),
                         "pointwise": f"{np.mean(point):.3f} ({len(point)})",
                         "simultaneous": f"{np.mean(simul):.2f} ({len(simul)})",
                         "mean width": f"{np.mean(width):.3f}",
                         "old max width (pmf)": f"{old_w[0]:.3g}"})
            print(rows[-1], flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", nargs="?", default="scale", choices=("scale", "kl", "coverage", "floor"))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--reps", type=int, default=None)
    ap.add_argument("--n", type=int, default=1000, help="zoo size for coverage")
    ap.add_argument("--eps", type=str, default="1,2,4")
    ap.add_argument("--sizes", type=str, default=None)
    ap.add_argument("--old-budget", type=float, default=4.0, help="GiB the old method may use")
    ap.add_argument("--graphs", type=str, default=None, help="coverage: only these (comma-separated)")
    a = ap.parse_args(argv)
    quick = a.quick or os.environ.get("DPGRAPH_BENCH_QUICK", "") == "1"
    eps_list = [float(x) for x in a.eps.split(",")]
    if a.what == "scale":
        sizes = ([int(x) for x in a.sizes.split(",")] if a.sizes
                 else [10_000] if quick else [10_000, 50_000, 100_000])
        rows = scale(sizes, a.old_budget)
        cols = ["n", "release", "support", "new s", "new peak MiB", "new", "old s", "old peak MiB",
                "time old/new", "memory old/new"]
    elif a.what == "kl":
        rows = kl(a.reps or (1 if quick else 5), eps_list)
        cols = ["graph", "eps", "old median", "old worst", "no shift median", "no shift worst",
                "new median", "new worst",
                "worst/median", "spline chosen", "new all", "mean-degree error / sd"]
    elif a.what == "floor":
        rows = floor(eps_list)
        cols = ["graph", "eps", "alternative", "KL(h || h')", "r = min max KL", "TV bound",
                "P(KL >= r) on one of the two >="]
    else:
        rows = coverage(a.reps or (2 if quick else 10), eps_list, a.n,
                        only=a.graphs.split(",") if a.graphs else None)
        cols = ["graph", "eps", "degrees k", "pointwise", "simultaneous", "mean width",
                "old max width (pmf)"]
    print()
    print(table(rows, cols))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
