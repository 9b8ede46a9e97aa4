"""Structural balance of a signed typed release: triangles by sign pattern.

Each declared tie value carries a sign (+1 or -1).  With Zp and Zn the
debiased indicators of a positive and of a negative tie (:mod:`.dense`;
independent across pairs, correlated within a pair), a triangle statistic is
a symmetric cubic form over the three pairs of every triangle,

    T = sum_{i<j<k} f_ijk,   f_ijk = sum_{a,b,c} w_abc Z^a_ij Z^b_jk Z^c_ki,

with w symmetric in (a, b, c): the number of +++ triangles is w_ppp = 1;
the ++- triangles w_ppn = w_pnp = w_npp = 1; and so on.  T is unbiased
(distinct pairs, independent rows) and equals trace sums of matrix products.

Variance.  T^2 is a double sum over triangles t, t'; for t, t' sharing no
pair the product of the Z's is already unbiased for the product of their
truths, so the unbiased estimate of Var T = E[T^2] - (E T)^2 keeps only
pairs of triangles that share a pair e, where Z^a_e Z^b_e - [a = b] Z^a_e is
unbiased for Cov(Z^a_e, Z^b_e) (indicators: x^a x^b = [a = b] x^a):

    Var^ = sum_t (f_t^2 - sum_abc w_abc^2 Z^a Z^b Z^c)
         + sum_{e = ij} sum_{a,b} (Z^a Z^b - [a = b] Z^a)_e (G^a G^b - H^ab)_e,

G^a_ij = sum_k g^a_ijk and H^ab_ij = sum_k g^a_ijk g^b_ijk, with
g^a_ijk = sum_bc w_abc Z^b_jk Z^c_ki the part of f_ijk multiplying Z^a_ij.
Covariances between two forms are the same bilinear expression.  Every term
is a trace or an entrywise sum of products of n x n matrices: nine dense
matrix products in all, O(n^3) time and a dozen n x n float64 matrices.

The balanced fraction (+++ and +-- triangles over all triangles) gets
Fieller's interval from these variances and the covariance.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...core.estimate import Estimate
from ..answers import analytic, finish, finish_ratio
from ..answers import require_undirected as _undirected
from ..protocol import Release
from .dense import debiased_matrix
from .estimators import typed

__all__ = ["PATTERNS", "Balance", "balance", "triangle_forms"]

#: Sign patterns of a triangle, with the classes 0 (positive) and 1 (negative).
PATTERNS = {"+++": (0, 0, 0), "++-": (0, 0, 1), "+--": (0, 1, 1), "---": (1, 1, 1)}
_SIGN_WORDS = {"+": 1, "-": -1, "positive": 1, "negative": -1}


def _form(pattern: tuple) -> dict:
    """Coefficients w over ordered class triples: every distinct arrangement of ``pattern``."""
    return dict.fromkeys(set(itertools.permutations(pattern)), 1.0)


class _Products:
    """Matrix products of the debiased class indicators, computed once each."""

    def __init__(self, Z: list[np.ndarray]) -> None:
        self.Z = Z
        self._E: dict = {}
        self._P: dict = {}

    def E(self, a: int, b: int) -> np.ndarray:
        key = (min(a, b), max(a, b))
        if key not in self._E:
            self._E[key] = self.Z[a] * self.Z[b]
        return self._E[key]

    def prod(self, x: tuple, y: tuple) -> np.ndarray:
        """X @ Y for X, Y each a class (a,) or an entrywise product (a, b)."""
        key = (tuple(sorted(x)), tuple(sorted(y)))
        if key not in self._P:
            rev = (key[1], key[0])
            if rev in self._P:  # (XY)^T = YX for symmetric X, Y
                return self._P[rev].T
            X = self.Z[x[0]] if len(x) == 1 else self.E(*x)
            Y = self.Z[y[0]] if len(y) == 1 else self.E(*y)
            self._P[key] = X @ Y
        return self._P[key]


def _value(P: _Products, w: dict) -> float:
    return sum(c * float(np.sum(P.prod((a,), (b,)) * P.Z[g])) for (a, b, g), c in w.items()) / 6.0


def _G(P: _Products, w: dict, a: int, n: int) -> np.ndarray:
    out = np.zeros((n, n))
    for (x, b, g), c in w.items():
        if x == a:
            out += c * P.prod((g,), (b,))
    return out


def _covariance(P: _Products, w1: dict, w2: dict, classes: int, n: int) -> float:
    # same-triangle terms
    same = 0.0
    for (a, b, g), c in w1.items():
        for (a2, b2, g2), c2 in w2.items():
            same += c * c2 * float(np.sum(P.prod((a, a2), (b, b2)) * P.E(g, g2)))
        same -= c * w2.get((a, b, g), 0.0) * float(np.sum(P.prod((a,), (b,)) * P.Z[g]))
    same /= 6.0
    # pairs of triangles sharing one pair
    G1 = [_G(P, w1, a, n) for a in range(classes)]
    G2 = [_G(P, w2, a, n) for a in range(classes)]
    shared = 0.0
    for a in range(classes):
        for b in range(classes):
            H = np.zeros((n, n))
            for (x, bb, g), c in w1.items():
                if x != a:
                    continue
                for (x2, bb2, g2), c2 in w2.items():
                    if x2 == b:
                        H += c * c2 * P.prod((g, g2), (bb, bb2))
            cov_e = P.E(a, b) - (P.Z[a] if a == b else 0.0)
            shared += float(np.sum(cov_e * (G1[a] * G2[b] - H)))
    return same + shared / 2.0


def triangle_forms(Z: list[np.ndarray], forms: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    """Values and estimated covariance matrix of cubic triangle forms (module docstring).

    Parameters
    ----------
    Z : list of numpy.ndarray (n, n)
        Debiased class indicators, symmetric, zero diagonal, independent
        across pairs.
    forms : list of dict
        ``{(a, b, c): weight}`` over ordered class triples, symmetric.

    Returns
    -------
    (values, covariance) : numpy.ndarray (F,), numpy.ndarray (F, F)
    """
    n = Z[0].shape[0]
    P = _Products(Z)
    values = np.array([_value(P, w) for w in forms])
    F = len(forms)
    cov = np.zeros((F, F))
    for i in range(F):
        for j in range(i, F):
            cov[i, j] = cov[j, i] = _covariance(P, forms[i], forms[j], len(Z), n)
    return values, cov


@dataclass(frozen=True)
class Balance:
    """Triangles by sign pattern and the balanced fraction of a signed release.

    Attributes
    ----------
    triangles : dict
        ``{"+++": Estimate, "++-": ..., "+--": ..., "---": ...}``: debiased
        counts (std from the unbiased variance estimate, ``exact_std`` False).
    balanced_fraction : Estimate
        (+++ and +-- triangles) / (all triangles), with Fieller's interval.
    """

    triangles: dict
    balanced_fraction: Estimate

    def __repr__(self) -> str:
        return f"Balance(balanced_fraction={self.balanced_fraction})"


def _signs(ties: Any, signs: Any) -> np.ndarray:
    """Sign (+1/-1) of every value index 1..K-1 (index 0 unused)."""
    out = np.zeros(ties.K, dtype=int)
    if signs is None:
        for i, v in enumerate(ties.values):
            s = _SIGN_WORDS.get(v) if isinstance(v, str) else (
                int(v) if v in (1, -1) and not isinstance(v, bool) else None)
            if s is None:
                raise ValueError("signs: pass signs={value: +1 or -1} for every tie value (only "
                                 "values '+', '-', 'positive', 'negative', 1, -1 carry a sign)")
            out[i + 1] = s
        return out
    if not hasattr(signs, "items"):
        raise TypeError("signs must be a mapping {tie value: +1 or -1}")
    for key, s in signs.items():
        if s not in (1, -1) or isinstance(s, bool):
            raise ValueError("signs must map tie values to +1 or -1")
        out[ties.index_of(key, "signs has a key that")] = s
    if np.any(out[1:] == 0):
        raise ValueError("signs must give a sign to every declared tie value")
    return out


@analytic
def balance(R: Release, signs: Any = None, proper: bool = True) -> Balance:
    """Structural balance of an undirected signed release: triangles by sign pattern.

    Parameters
    ----------
    signs : mapping {tie value: +1 or -1}, optional
        The sign of every declared value; optional when the values are
        '+'/'-', 'positive'/'negative' or 1/-1.
    proper : bool, default True
        Counts clipped to [0, C(n, 3)] and rounded; the fraction in [0, 1].

    Returns
    -------
    Balance

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.complete_graph(12)
    >>> nx.set_edge_attributes(G, "+", "s")
    >>> b = dpgraph.release(G, 4.0, seed=0, edge_attr="s", values=["+", "-"]).balance()
    >>> sorted(b.triangles)
    ['+++', '++-', '+--', '---']
    """
    ties = typed(R, "balance")
    _undirected(R, "balance")
    sign = _signs(ties, signs)
    Z = [debiased_matrix(R, sign > 0, symmetric=True, copies=16),
         debiased_matrix(R, sign < 0, symmetric=True, copies=16)]
    names = list(PATTERNS)
    values, cov = triangle_forms(Z, [_form(PATTERNS[k]) for k in names])
    n = R.number_of_nodes()
    top = float(n * (n - 1) * (n - 2) // 6)
    floor = 1e-12
    tri = {}
    for k, name in enumerate(names):
        est = Estimate(float(values[k]), float(np.sqrt(max(cov[k, k], floor))), exact_std=False,
                       feasible_range=(0.0, top))
        tri[name] = finish(est, proper, step=1.0)
    num_w = np.array([1.0, 0.0, 1.0, 0.0])  # +++ and +-- are balanced
    den_w = np.ones(4)
    frac = finish_ratio(float(num_w @ values), float(den_w @ values), float(num_w @ cov @ num_w),
                        float(den_w @ cov @ den_w), float(num_w @ cov @ den_w), proper, 0.0, 1.0)
    return Balance(tri, frac)
