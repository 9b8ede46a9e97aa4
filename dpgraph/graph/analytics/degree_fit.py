"""Estimating the degree histogram from the released degrees through the exact channel.

The released degrees are a sample from the mixture sum_d h(d) P(. | d) of the
kernel's columns (:mod:`.degree_kernel`).  Two layers of model, the data
choosing how far to go:

1. **Two-parameter families, averaged.**  D = k0 + Z with Z either
   floor(X) - 1 for X log-normal truncated to X >= 1, or negative binomial,
   and a minimum degree k0 (``K0_PRIOR``: 0 or 1 for both families, equally
   likely; 2 .. 5 for the log-normal only, each a priori e^-5 as likely, so
   a release must favour a minimum degree above 1 by a Bayes factor of about
   150 before the estimate leaves the nodes below it no mass: a shifted
   family that fits the bulk better but wrongly empties the lowest degrees
   costs far more KL than it gains).  Rather than one maximum-likelihood
   member (which at small epsilon, where the likelihood is flat in the
   shape, jumps to a point mass in one release out of three), the estimate
   is the posterior mean of h under a uniform prior over family and log
   shape and log location (``_SHAPES``, ``_LOC_LOW`` .. the top of the
   debiased degrees), computed by quadrature on a grid refined where the
   posterior lives.  The posterior mean is the histogram with the least
   expected KL divergence from the truth under that prior: where the release
   cannot tell shapes apart it averages them instead of betting on one.
2. **A nonparametric correction where the release can pin it down.**
   h(d) proportional to h_family(d) exp(s(log(1 + d))), s a cubic spline
   with knots no closer than the deconvolution's resolution (:func:`knots`)
   under a second-difference penalty lambda; lambda is chosen by 5-fold
   held-out likelihood of the released degrees (folds of nodes drawn with a
   fixed public seed) among ``_LAMBDAS`` (infinity: no correction), with the
   one-standard-error rule towards the larger lambda.  At small epsilon the
   held-out likelihood cannot tell the corrections apart and the family
   average stands; on large or heavy-tailed graphs the correction takes over.

3. **The location's uncertainty, counted once more.**  That likelihood
   treats the n released degrees as independent, but every vertex pair is
   in two of them: the mean released degree (2 x released edges / n) varies
   twice as much as n independent degrees would, so the posterior above is
   too sure where the histogram sits by about half the variance of the
   debiased mean degree 2 m^ / n.  The estimate is averaged over a shift of
   every degree by that missing variance (:func:`location_averaged`), the
   posterior predictive under the correct location spread, except that a
   node of degree >= 1 whose shift would end at 0 or below stays where it
   is: the location's uncertainty is no evidence of isolated nodes, and the
   plain shift moved a fixed fraction of the leaves to 0 (a fifth of the
   leaves of a graph without isolated nodes at eps = 1).

The likelihood is that of the released degrees coarsened to bins of
``width`` consecutive values (width = a quarter of the smallest noise
standard deviation, at least 1): an exact likelihood of a coarser
observation, losing nothing the noise has not already blurred.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .degree_kernel import DegreeKernel

FAMILIES = ("lognormal", "negbin")
MIN_DEGREES = tuple(range(6))
K0_PRIOR = {**{("lognormal", k): (1.0 if k < 2 else float(np.exp(-5))) for k in MIN_DEGREES},
             ("negbin", 0): 1.0, ("negbin", 1): 1.0}
FAMILY_PRIOR = {"lognormal": 1.0, "negbin": 1.0}
_LAMBDAS = (np.inf, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7)
_FOLDS = 5
_FOLD_SEED = 20_240_607  # public: which nodes form which fold is not secret
# quadrature: log-uniform prior over these ranges (location upper end: the data's top)
_SHAPES = {"lognormal": (0.03, 3.0), "negbin": (0.1, 1000.0)}
_LOC_LOW = {"lognormal": 0.05, "negbin": 0.1}
_COARSE = (16, 24)
_FINE = 12


@dataclass
class Binned:
    """The released degrees as counts over bins of ``width`` consecutive values, and the
    kernel's rows summed over the same bins (``rows``: bins x (dmax + 1)).

    ``edges`` groups the true degrees into bins too (``edges[j] <= d < edges[j + 1]``), each
    narrower than 1/64 of the deconvolution's resolution (the sd of one node's debiased
    degree), and ``cols`` averages ``rows`` over them: the likelihood of a family member
    is computed on those bins, where the kernel's columns differ by less than the noise
    can show.  Without noise to hide in (resolution < 64 degrees), every degree is a bin.
    """

    rows: np.ndarray
    counts: np.ndarray
    index: np.ndarray  # bin of every node
    width: int
    edges: np.ndarray
    cols: np.ndarray


def degree_edges(dmax: int, resolution: float) -> np.ndarray:
    """Edges 0 = e_0 < ... < e_m = dmax + 1 of true-degree bins ``resolution / 64`` wide (>= 1)."""
    w = max(1, int(resolution // 64))
    return np.unique(np.append(np.arange(0, dmax + 1, w), dmax + 1))


def binned(K: DegreeKernel, y: np.ndarray, resolution: float) -> Binned:
    """Coarsen the released degrees ``y`` to bins a quarter of the noise sd wide (>= 1)."""
    n, a, b = K.n, K.alpha, K.beta
    ends = np.array([0, K.dmax])
    sd = np.sqrt(ends * a * (1 - a) + (n - 1 - ends) * b * (1 - b)).min()
    width = max(1, int(sd // 4))
    nb = (K.y1 - K.y0) // width + 1
    starts = np.arange(nb) * width
    rows = np.add.reduceat(K.pmf, starts, axis=0)
    index = (np.asarray(y, dtype=np.int64) - K.y0) // width
    counts = np.bincount(index, minlength=nb).astype(float)
    used = counts > 0
    remap = np.cumsum(used) - 1
    rows = rows[used]
    edges = degree_edges(K.dmax, resolution)
    cols = np.add.reduceat(rows, edges[:-1], axis=1) / np.diff(edges)[None, :]
    return Binned(rows, counts[used], remap[index], width, edges, cols)


# ----------------------------------------------------------------------------- families


def family_pmfs(family: str, k0: int, shapes: np.ndarray, locs: np.ndarray,
                edges: np.ndarray) -> np.ndarray:
    """Mass of D = k0 + Z in each bin [edges[j], edges[j + 1]) (rows: every (shape, loc) pair).

    The last bin also holds the tail beyond ``edges[-1]``.  ``lognormal``:
    Z = floor(X) - 1, X log-normal (median ``loc``, log-sd ``shape``)
    truncated to X >= 1.  ``negbin``: Z negative binomial with size ``shape``
    and mean ``loc``.  ``edges = arange(dmax + 2)`` gives the pmf on 0 .. dmax.

    Examples
    --------
    >>> q = family_pmfs("negbin", 2, np.array([1e6]), np.array([3.0]), np.arange(42))
    >>> float(q[0, :2].sum()), round(float(q[0] @ np.arange(41)), 3)
    (0.0, 5.0)
    """
    from scipy import special

    S, M = np.meshgrid(np.asarray(shapes, float), np.asarray(locs, float), indexing="ij")
    S, M = S.ravel()[:, None], M.ravel()[:, None]
    j = np.maximum(np.asarray(edges, float) - k0, 0.0)[None, :]  # P(D < e) = P(Z < e - k0)
    if family == "lognormal":
        lo = special.ndtr(-np.log(M) / S)
        with np.errstate(divide="ignore"):
            F = (special.ndtr((np.log(j + 1.0) - np.log(M)) / S) - lo) / np.maximum(1 - lo, 1e-300)
    elif 4 * j.size < j.max():  # few, wide bins: the regularized beta function at the edges
        F = special.betainc(S, np.maximum(j, 1.0), S / (S + M))
    else:  # pmf by its ratio recursion in logs, summed to the cdf at every integer
        top = int(j.max())
        i = np.arange(top, dtype=float)[None, :]
        logp = np.log(S / (S + M))
        steps = np.log((i + S) / (i + 1.0)) + np.log(M / (S + M))
        logpmf = np.concatenate([S * logp, S * logp + np.cumsum(steps, axis=1)], axis=1)
        cdf = np.concatenate([np.zeros((S.shape[0], 1)), np.cumsum(np.exp(logpmf), axis=1)], axis=1)
        F = cdf[:, j[0].astype(np.int64)]
    F = np.where(j > 0, np.clip(F, 0.0, 1.0), 0.0)
    F[:, -1] = 1.0  # the tail beyond the support goes to the last bin
    q = np.clip(np.diff(F, axis=1), 0.0, None)
    return q / np.maximum(q.sum(axis=1, keepdims=True), 1e-300)


def _loglik(rows: np.ndarray, counts: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """Log-likelihood of every candidate histogram (rows of Q)."""
    return np.log(np.maximum(Q @ rows.T, 1e-300)) @ counts


def _grid(lo: float, hi: float, k: int) -> tuple[np.ndarray, float]:
    """k log-spaced points (cell centres) on [lo, hi] and the log-width of a cell."""
    edges = np.linspace(np.log(lo), np.log(hi), k + 1)
    return np.exp(0.5 * (edges[1:] + edges[:-1])), float(edges[1] - edges[0])


def _prior(fam: str, k0: int) -> float:
    return K0_PRIOR.get((fam, k0), 0.0) * FAMILY_PRIOR[fam]


def family_average(data: Binned, dmax: int, top: float,
                   families: tuple[str, ...] = FAMILIES) -> tuple[np.ndarray, dict]:
    """Posterior mean of h over the families, minimum degrees, shapes and locations.

    Returns the histogram on 0 .. dmax and a summary: the posterior weight of
    each family and of each minimum degree, and the most likely member.
    """
    blocks = []
    for fam in families:
        s_lo, s_hi = _SHAPES[fam]
        l_lo, l_hi = _LOC_LOW[fam], max(float(top), 3.0)
        for k0 in MIN_DEGREES:
            if k0 > dmax or _prior(fam, k0) <= 0:
                continue
            shapes, ds = _grid(s_lo, s_hi, _COARSE[0])
            locs, dl = _grid(l_lo, l_hi, _COARSE[1])
            b = {"fam": fam, "k0": k0, "volume": np.log(s_hi / s_lo) * np.log(l_hi / l_lo),
                 "prior": np.log(_prior(fam, k0))}
            _evaluate(b, data, shapes, locs, ds, dl)
            blocks.append(b)
    best_ev = max(b["log_evidence"] for b in blocks)
    for b in blocks:  # refine where the posterior lives
        if b["log_evidence"] >= best_ev - 12:  # else posterior weight below 6e-6: left out
            _refine(b, data)
    best_ev = max(b["log_evidence"] for b in blocks if b.get("fine"))
    h = np.zeros(dmax + 1)
    full = np.arange(dmax + 2)
    summary: dict = {"family": {}, "min_degree": {}}
    best = (-np.inf, None)
    for b in blocks:
        w_block = float(np.exp(b["log_evidence"] - best_ev))
        if w_block < 6e-6 or not b.get("fine"):
            continue
        cell = np.exp(b["ll"] - b["ll"].max())
        cell /= cell.sum()
        keep = np.argwhere(cell > 1e-7 * cell.max())  # full resolution where the weight is
        for si in np.unique(keep[:, 0]):
            li = keep[keep[:, 0] == si, 1]
            pm = family_pmfs(b["fam"], b["k0"], b["shapes"][si : si + 1], b["locs"][li], full)
            h += w_block * (cell[si, li] @ pm)
        summary["family"][b["fam"]] = summary["family"].get(b["fam"], 0.0) + w_block
        summary["min_degree"][b["k0"]] = summary["min_degree"].get(b["k0"], 0.0) + w_block
        si, li = np.unravel_index(int(np.argmax(b["ll"])), b["ll"].shape)
        if b["ll"][si, li] > best[0]:
            best = (float(b["ll"][si, li]),
                    {"family": b["fam"], "min_degree": b["k0"], "shape": float(b["shapes"][si]),
                     "loc": float(b["locs"][li])})
    h /= h.sum()
    weight = sum(summary["family"].values())
    for key in ("family", "min_degree"):
        summary[key] = {k: v / weight for k, v in summary[key].items()}
    summary["most_likely"] = best[1]
    return h, summary


def _evaluate(b: dict, data: Binned, shapes: np.ndarray, locs: np.ndarray, ds: float,
              dl: float) -> None:
    """Log-likelihood of a block's grid of members and the block's log evidence."""
    Q = family_pmfs(b["fam"], b["k0"], shapes, locs, data.edges)
    ll = _loglik(data.cols, data.counts, Q).reshape(shapes.size, locs.size)
    m = float(ll.max())
    integral = m + float(np.log(np.exp(ll - m).sum() * ds * dl))
    b.update(shapes=shapes, locs=locs, ds=ds, dl=dl, ll=ll,
             log_evidence=integral - np.log(b["volume"]) + b["prior"])


def _refine(b: dict, data: Binned) -> None:
    """Re-grid a block finely over the cells holding its posterior mass (and one more each way)."""
    ll = b["ll"]
    hot = np.argwhere(ll >= ll.max() - 12)
    (s0, l0), (s1, l1) = hot.min(axis=0), hot.max(axis=0)
    ls, lm = np.log(b["shapes"]), np.log(b["locs"])
    shapes, ds = _grid(np.exp(ls[s0] - 1.5 * b["ds"]), np.exp(ls[s1] + 1.5 * b["ds"]), _FINE)
    locs, dl = _grid(np.exp(lm[l0] - 1.5 * b["dl"]), np.exp(lm[l1] + 1.5 * b["dl"]), _FINE)
    _evaluate(b, data, shapes, locs, ds, dl)
    b["fine"] = True


# ----------------------------------------------------------------------------- location


def location_averaged(h: np.ndarray, var: float) -> np.ndarray:
    """h averaged over a shift of every degree by X ~ N(0, ``var``), rounded to whole
    degrees, that never takes a node of degree k >= 1 to degree 0.

    The shift of the histogram's location creates no isolated nodes: the mass of
    degree k >= 1 whose shift would end at 0 or below stays at k.  Mass at 0 shifted
    below 0, and any mass shifted above the support, is left out and the rest
    renormalized (the histogram conditioned on lying in the support).

    Examples
    --------
    >>> h = np.zeros(30); h[10] = 1.0
    >>> g = location_averaged(h, 1.0)
    >>> round(float(g @ np.arange(30)), 6), round(float(g[10]), 3), bool(g[9] == g[11])
    (10.0, 0.383, True)
    >>> h = np.zeros(30); h[1] = 1.0
    >>> float(location_averaged(h, 1.0)[0])
    0.0
    """
    from scipy.special import ndtr

    h = np.asarray(h, dtype=float)
    if not var > 0:
        return h.copy()
    sd = float(np.sqrt(var))
    k = np.arange(-int(np.ceil(8 * sd)) - 1, int(np.ceil(8 * sd)) + 2)
    w = ndtr((k + 0.5) / sd) - ndtr((k - 0.5) / sd)
    out = np.convolve(h, w)[-k[0] : -k[0] + h.size]
    # a node of degree d >= 1 whose shift would end at 0 or below stays at d (only the
    # few lowest degrees reach 0): the location's spread creates no isolated node
    for d in range(1, min(h.size, int(k[-1]) + 1)):
        landed = float(ndtr((0.5 - d) / sd) - ndtr((-0.5 - d) / sd))  # round(d + X) = 0
        out[0] -= h[d] * landed
        out[d] += h[d] * float(ndtr((0.5 - d) / sd))  # every shift to <= 0, kept at d
    out = np.clip(out, 0.0, None)
    return out / out.sum()


# ----------------------------------------------------------------------------- correction


def knots(dmax: int, resolution: float, ratio: float = 0.25) -> np.ndarray:
    """Knot degrees 0 = t_0 < t_1 < ... <= dmax, t_{i+1} = t_i + max(resolution, ratio t_i).

    The release cannot tell apart degrees closer than its noise (``resolution``,
    the debiased noise sd); further out the spacing grows geometrically.
    """
    t = [0.0]
    while t[-1] < dmax:
        t.append(t[-1] + max(resolution, ratio * t[-1], 1.0))
    t[-1] = float(dmax)
    return np.asarray(t)


def spline_basis(dmax: int, resolution: float) -> np.ndarray:
    """Cubic B-splines (rows: degrees 0 .. dmax) on :func:`knots`, in log(1 + d)."""
    from scipy.interpolate import BSpline

    x = np.log1p(np.arange(dmax + 1.0))
    inner = np.log1p(knots(dmax, resolution))
    if inner.size < 2:
        inner = np.array([0.0, max(float(x[-1]), 1e-9)])
    lo_step, hi_step = inner[1] - inner[0], inner[-1] - inner[-2]
    t = np.concatenate([inner[0] - lo_step * np.arange(3, 0, -1), inner,
                        inner[-1] + hi_step * np.arange(1, 4)])
    return BSpline.design_matrix(x, t, 3).toarray()


def _penalty(k: int) -> np.ndarray:
    """Second differences of the coefficients (a linear tilt in log(1 + d) is free) + a ridge."""
    Dm = np.diff(np.eye(k), 2, axis=0)
    return Dm.T @ Dm + 1e-3 * np.eye(k)


def _tilt(base: np.ndarray, Q: np.ndarray, a: np.ndarray) -> np.ndarray:
    z = Q @ a
    h = base * np.exp(z - z.max())
    return h / h.sum()


def fit_tilt(rows: np.ndarray, counts: np.ndarray, base: np.ndarray, Q: np.ndarray, lam: float,
             a0: np.ndarray | None = None) -> np.ndarray:
    """Coefficients a maximizing loglik(h_a)/N - lam/2 a' Pen a, h_a = base exp(Q a) / Z."""
    from scipy.optimize import minimize

    N = counts.sum()
    pen = _penalty(Q.shape[1])

    def objective(a):
        h = _tilt(base, Q, a)
        m = np.maximum(rows @ h, 1e-300)
        g = rows.T @ (counts / m)
        grad = Q.T @ (h * g - N * h)
        pa = pen @ a
        return (-(counts @ np.log(m)) / N + 0.5 * lam * a @ pa, -grad / N + lam * pa)

    a0 = np.zeros(Q.shape[1]) if a0 is None else a0
    res = minimize(objective, a0, jac=True, method="L-BFGS-B",
                   options={"maxiter": 500, "gtol": 1e-8})
    return res.x


def single_threaded():
    """A context limiting BLAS to one thread (threadpoolctl when installed, else a no-op).

    The optimizer's products are small: on a shared machine, waking BLAS
    threads for each of them costs more than they save (measured 9x slower
    with two threads on two busy cores).
    """
    import contextlib

    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - optional
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def corrected(data: Binned, base: np.ndarray, resolution: float) -> tuple[np.ndarray, dict]:
    """The family average times exp(spline), the spline's penalty chosen by held-out likelihood."""
    with single_threaded():
        return _corrected(data, base, resolution)


def _corrected(data: Binned, base: np.ndarray, resolution: float) -> tuple[np.ndarray, dict]:
    dmax = base.size - 1
    Q = spline_basis(dmax, resolution)
    base = np.maximum(base, 1e-300)
    fold = np.random.default_rng(_FOLD_SEED).permutation(data.index.size) % _FOLDS
    scores = np.zeros((len(_LAMBDAS), _FOLDS))
    for f in range(_FOLDS):
        train = np.bincount(data.index[fold != f], minlength=data.counts.size).astype(float)
        test = np.bincount(data.index[fold == f], minlength=data.counts.size).astype(float)
        a = np.zeros(Q.shape[1])
        for i, lam in enumerate(_LAMBDAS):
            if np.isfinite(lam):
                a = fit_tilt(data.rows, train, base, Q, lam, a)
            h = _tilt(base, Q, a)
            scores[i, f] = test @ np.log(np.maximum(data.rows @ h, 1e-300))
    best = int(np.argmax(scores.sum(axis=1)))
    diff = scores - scores[best]
    se = np.sqrt(_FOLDS) * diff.std(axis=1)
    choice = min(i for i in range(len(_LAMBDAS)) if diff[i].sum() >= -se[i])
    lam = _LAMBDAS[choice]
    info = {"penalty": float(lam),
            "heldout_gain": float(scores[choice].sum() - scores[0].sum())}
    if not np.isfinite(lam):
        return base / base.sum(), info
    a = fit_tilt(data.rows, data.counts, base, Q, lam)
    return _tilt(base, Q, a), info
