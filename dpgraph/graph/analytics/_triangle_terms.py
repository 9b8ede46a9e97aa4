"""Per-row sums of the triangle estimator's terms, in closed form from integer reductions.

For an ordered pair (i, j), i != j, every term of :func:`.motifs.triangle_statistics`
(the estimate T^, the Hoeffding terms of Var T^, Var W^ and Cov(T^, W^)) is a
polynomial in the released common-neighbour count c = c_ij and the released
degree x = d_j, with coefficients that depend on y = Y_ij and on row i only;
its monomials are 1, x, x^2, c, c x and c^2.  So the sum over j != i is

    sum_m coef_0[m] M0[m] + sum_m (coef_1[m] - coef_0[m]) M1[m],

with M0[m] the sum of monomial m over all j != i and M1[m] over the released
neighbours j of i: the integer reductions of :mod:`.triangle_counting`
(M0[c] = C1, M0[c x] = Cd, M0[c^2] = A2, M1[1] = d_i, M1[x] = N1, ...) and the
power sums of the degrees.  The per-pair formulas are written once, in
:func:`pair_terms`, and expanded symbolically by :class:`_Poly`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

TERMS = ("tri", "lin", "quad", "cub", "linw", "linc")


class _Poly:
    """A polynomial in (c, x) whose coefficients are scalars or per-row arrays."""

    __slots__ = ("t",)
    __array_ufunc__ = None  # numpy arrays defer to our reflected operators

    def __init__(self, t: dict) -> None:
        self.t = t

    @staticmethod
    def of(v: Any) -> _Poly:
        return v if isinstance(v, _Poly) else _Poly({(0, 0): v})

    def __add__(self, o: Any) -> _Poly:
        t = dict(self.t)
        for k, v in _Poly.of(o).t.items():
            t[k] = t[k] + v if k in t else v
        return _Poly(t)

    __radd__ = __add__

    def __neg__(self) -> _Poly:
        return _Poly({k: -v for k, v in self.t.items()})

    def __sub__(self, o: Any) -> _Poly:
        return self + (-_Poly.of(o))

    def __rsub__(self, o: Any) -> _Poly:
        return _Poly.of(o) - self

    def __mul__(self, o: Any) -> _Poly:
        t: dict = {}
        for (a, b), u in self.t.items():
            for (c, d), v in _Poly.of(o).t.items():
                k = (a + c, b + d)
                t[k] = t[k] + u * v if k in t else u * v
        return _Poly(t)

    __rmul__ = __mul__


@dataclass(frozen=True)
class Constants:
    """The channel's constants of the triangle terms (see :func:`.motifs.triangle_statistics`)."""

    n: int
    z0: float   # debiased value of a released 0
    dl: float   # z1 - z0
    u0: float   # z0^2
    eu: float   # z1^2 - z0^2
    w0: float   # estimated variance of an entry released 0: v0 + (v1 - v0) z0
    om: float   # (v1 - v0) (z1 - z0)

    @classmethod
    def of(cls, n: int, z0: float, z1: float, v0: float, v1: float) -> Constants:
        dl = z1 - z0
        return cls(int(n), z0, dl, z0 * z0, z1 * z1 - z0 * z0, v0 + (v1 - v0) * z0, (v1 - v0) * dl)


def pair_terms(y: int, c: Any, x: Any, d: Any, k: Constants) -> dict:
    """The per-pair terms for Y_ij = y, c_ij = c, d_j = x, d_i = d (one formula, any operand type).

    tri = (Z^2)_ij Z_ij; lin = S_ij L^2_ij with L^2 = (Z^2)^2 - (U^2) + Z^2;
    quad = Z_ij (S^2)_ij; cub = (S^2)_ij S_ij; linw and linc the linear
    Hoeffding terms of Var W^ and Cov(T^, W^) (Z the debiased entries, U = Z o Z,
    S the unbiased entry variances; products over the third vertex k != i, j).
    """
    n = k.n
    ai, aj = d - y, x - y  # released edges of i (of j) to third vertices
    Z, U, Sv = k.z0 + k.dl * y, k.u0 + k.eu * y, k.w0 + k.om * y
    Z2 = (n - 2) * k.z0 * k.z0 + k.z0 * k.dl * (ai + aj) + k.dl * k.dl * c
    U2 = (n - 2) * k.u0 * k.u0 + k.u0 * k.eu * (ai + aj) + k.eu * k.eu * c
    UZ = (n - 2) * k.u0 * k.z0 + k.u0 * k.dl * aj + k.eu * k.z0 * ai + k.eu * k.dl * c
    ZU = (n - 2) * k.z0 * k.u0 + k.z0 * k.eu * aj + k.dl * k.u0 * ai + k.dl * k.eu * c
    S2 = (n - 2) * k.w0 * k.w0 + k.w0 * k.om * (ai + aj) + k.om * k.om * c
    Di = (n - 1) * k.z0 + k.dl * d - Z  # row sums of Z without the pair itself
    Dj = (n - 1) * k.z0 + k.dl * x - Z
    Qi = (n - 1) * k.u0 + k.eu * d - U
    Qj = (n - 1) * k.u0 + k.eu * x - U
    return {
        "tri": Z2 * Z,
        "lin": Sv * (Z2 * Z2 - U2 + Z2),
        "quad": Z * S2,
        "cub": S2 * Sv,
        "linw": Sv * ((Di + Dj) * (Di + Dj) - (Qi - Di) - (Qj - Dj)),
        "linc": Sv * (Z2 * (Di + Dj) - UZ - ZU + 2 * Z2),
    }


def row_sums(red: dict, d: np.ndarray, S1: float, S2: float, k: Constants,
             terms: tuple = TERMS) -> dict:
    """Sum over j != i of each term, for the rows whose reductions ``red`` holds.

    ``red`` maps reduction names (``C1``, ``Cd``, ``A2``, ``E1``, ``Ed``,
    ``E2``, ``N1``, ``N2``) to per-row arrays; a term needing a reduction that
    is absent raises KeyError (the wedge terms need only ``N1`` and ``N2``).
    ``S1``, ``S2`` are the sums of d and d^2 over all nodes.  With the
    probed sums (``P1``, ``Px``, ``Pxx``, ``Pc``, ``Pcx``, expanded, and A2
    expanded from the same probe) the sums over all j are the neighbours'
    plus the probed non-neighbours', every monomial from the same sample
    (see :mod:`.triangle_counting`).
    """
    d = np.asarray(d, dtype=np.float64)
    f = {key: np.asarray(v, dtype=np.float64) for key, v in red.items()}
    every = {(0, 0): np.full(d.shape, k.n - 1.0), (0, 1): S1 - d, (0, 2): S2 - d * d}
    nbrs = {(0, 0): d}
    for m, name in (((1, 0), "C1"), ((1, 1), "Cd"), ((2, 0), "A2")):
        if name in f:
            every[m] = f[name]
    for m, name in (((0, 1), "N1"), ((0, 2), "N2"), ((1, 0), "E1"), ((1, 1), "Ed"), ((2, 0), "E2")):
        if name in f:
            nbrs[m] = f[name]
    if "P1" in f:  # a probed pass: all j = the neighbours + the probed non-neighbours, expanded
        for m, name in (((0, 0), "P1"), ((0, 1), "Px"), ((0, 2), "Pxx"), ((1, 0), "Pc"),
                        ((1, 1), "Pcx")):
            every[m] = nbrs[m] + f[name]
    c, x = _Poly({(1, 0): 1.0}), _Poly({(0, 1): 1.0})
    p0, p1 = pair_terms(0, c, x, d, k), pair_terms(1, c, x, d, k)
    out = {}
    for name in terms:
        a, b = p0[name].t, p1[name].t
        total = np.zeros(d.shape)
        for m in set(a) | set(b):
            c0 = a.get(m, 0.0)
            if np.any(c0 != 0):
                total = total + c0 * every[m]
            diff = b.get(m, 0.0) - c0
            if np.any(diff != 0):
                total = total + diff * nbrs[m]
        out[name] = total
    return out
