"""A zoo of test graphs: seeded generated graphs of many kinds plus the real ones.

The analytics are judged on graphs of every kind, not one: sparse (average
degree 2-10) and dense (40+), heavy-tailed and homogeneous degrees, low and
high clustering, with and without communities, at 1,000-6,000 nodes.  Every
generated graph is a simple undirected ``networkx.Graph`` on nodes
``0..n-1`` without attributes, reproducible from its ``seed``.

>>> from dpgraph.experiments import zoo
>>> G = zoo.generate("watts-strogatz", seed=1)
>>> G.number_of_nodes(), zoo.ZOO["watts-strogatz"].clustering
(2000, 'high')

Real graphs (:func:`real`) load from the data directory (see
:mod:`dpgraph.datasets`): ego-Facebook, email-Eu-core (with departments) and
MovieLens 100K co-fans.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["REAL", "ZOO", "ZooGraph", "generate", "names", "real"]


@dataclass(frozen=True)
class ZooGraph:
    """One kind of generated graph.

    Attributes
    ----------
    name : str
        Key of :data:`ZOO`.
    description : str
        The generator and its parameters.
    n : int
        Default number of nodes.
    sparsity, degrees, clustering, communities : str
        Its kind: "sparse"/"dense", "heavy-tailed"/"homogeneous",
        "low"/"high", "yes"/"no".
    build : callable
        ``build(n, rng) -> networkx.Graph``.
    """

    name: str
    description: str
    n: int
    sparsity: str
    degrees: str
    clustering: str
    communities: str
    build: Callable[[int, np.random.Generator], Any]


def _graph(n: int, rows: np.ndarray, cols: np.ndarray, name: str) -> Any:
    """Simple graph on 0..n-1 from endpoint arrays (loops and repeats dropped)."""
    import networkx as nx

    keep = rows != cols
    a, b = np.minimum(rows[keep], cols[keep]), np.maximum(rows[keep], cols[keep])
    e = np.unique(a.astype(np.int64) * n + b)
    G = nx.Graph(name=name)
    G.add_nodes_from(range(n))
    G.add_edges_from(zip((e // n).tolist(), (e % n).tolist()))
    return G


def _sbm_edges(sizes: list[int], p_in: float, p_out: float, rng: np.random.Generator):
    """Endpoints of a planted-partition SBM by geometric skipping (O(edges))."""
    n = int(sum(sizes))
    block = np.repeat(np.arange(len(sizes)), sizes)
    rows, cols = [], []
    for p, same in ((p_in, True), (p_out, False)):
        # sample pairs i<j of the full triangle at rate p, keep those of the right kind
        N = n * (n - 1) // 2
        m = rng.binomial(N, p)
        idx = np.unique(rng.integers(0, N, size=int(m * 1.02) + 16))[:m]
        i = (n - 2 - np.floor(np.sqrt(-8 * idx + 4 * n * (n - 1) - 7) / 2 - 0.5)).astype(np.int64)
        j = idx + i + 1 - N + (n - i) * ((n - i) - 1) // 2
        ok = (block[i] == block[j]) == same
        rows.append(i[ok])
        cols.append(j[ok])
    return np.concatenate(rows), np.concatenate(cols)


def _sbm(n: int, rng: np.random.Generator, k: int, d_in: float, d_out: float, name: str) -> Any:
    sizes = [n // k + (1 if c < n % k else 0) for c in range(k)]
    s = n / k
    r, c = _sbm_edges(sizes, d_in / (s - 1), d_out / (n - s), rng)
    return _graph(n, r, c, name)


def _gnp(n: int, rng: np.random.Generator, avg: float, name: str) -> Any:
    r, c = _sbm_edges([n], avg / (n - 1), 0.0, rng)
    return _graph(n, r, c, name)


def _powerlaw(n: int, rng: np.random.Generator) -> Any:
    # degrees floor(1.5 X), X Pareto (exponent 2.5), at most 3 sqrt(n): about a third of
    # the nodes have degree 1; configuration-model pairing of stubs, loops and
    # multi-edges dropped (a simple graph)
    gamma = 2.5
    d = np.floor(1.5 * (1 - rng.random(n)) ** (-1 / (gamma - 1))).astype(np.int64)
    d = np.minimum(d, int(3 * np.sqrt(n)))
    if d.sum() % 2:
        d[int(rng.integers(n))] += 1
    stubs = rng.permutation(np.repeat(np.arange(n), d))
    return _graph(n, stubs[0::2], stubs[1::2], "power-law configuration model (gamma 2.5)")


def _holme_kim(n: int, rng: np.random.Generator) -> Any:
    import networkx as nx

    H = nx.powerlaw_cluster_graph(n, 3, 0.6, seed=int(rng.integers(2**31)))
    r, c = (np.array(x, dtype=np.int64) for x in zip(*H.edges()))
    return _graph(n, r, c, "Holme-Kim power-law cluster (m 3, p 0.6)")


def _watts_strogatz(n: int, rng: np.random.Generator) -> Any:
    import networkx as nx

    H = nx.watts_strogatz_graph(n, 6, 0.05, seed=int(rng.integers(2**31)))
    r, c = (np.array(x, dtype=np.int64) for x in zip(*H.edges()))
    return _graph(n, r, c, "Watts-Strogatz (k 6, p 0.05)")


def _geometric(n: int, rng: np.random.Generator) -> Any:
    from scipy.spatial import cKDTree

    avg = 8.0
    pts = rng.random((n, 2))
    radius = np.sqrt(avg / (np.pi * n))
    pairs = cKDTree(pts).query_pairs(radius, output_type="ndarray")
    return _graph(n, pairs[:, 0], pairs[:, 1], "random geometric (unit square, mean degree ~8)")


def _tree(n: int, rng: np.random.Generator) -> Any:
    # uniform random labelled tree from a random Pruefer sequence
    import networkx as nx

    T = nx.from_prufer_sequence(rng.integers(0, n, size=n - 2).tolist())
    r, c = (np.array(x, dtype=np.int64) for x in zip(*T.edges()))
    return _graph(n, r, c, "uniform random tree (Pruefer)")


ZOO: dict[str, ZooGraph] = {
    z.name: z
    for z in [
        ZooGraph("sbm", "planted partition, 10 blocks, mean degree 8 inside + 2 across", 2000,
                 "sparse", "homogeneous", "low", "yes",
                 lambda n, rng: _sbm(n, rng, 10, 8.0, 2.0, "SBM (10 blocks, degree 8 + 2)")),
        ZooGraph("gnp", "sparse G(n, p), mean degree 5", 3000, "sparse", "homogeneous", "low", "no",
                 lambda n, rng: _gnp(n, rng, 5.0, "sparse G(n, p) (mean degree 5)")),
        ZooGraph("powerlaw", "configuration model, Pareto degrees (gamma 2.5, a third of degree 1), simple",
                 3000, "sparse", "heavy-tailed", "low", "no", _powerlaw),
        ZooGraph("holme-kim", "Holme-Kim power-law cluster graph, m 3, triad probability 0.6",
                 3000, "sparse", "heavy-tailed", "high", "no", _holme_kim),
        ZooGraph("watts-strogatz", "Watts-Strogatz ring, k 6, rewiring 0.05", 2000,
                 "sparse", "homogeneous", "high", "no", _watts_strogatz),
        ZooGraph("geometric", "random geometric graph in the unit square, mean degree ~8", 2000,
                 "sparse", "homogeneous", "high", "yes", _geometric),
        ZooGraph("tree", "uniform random labelled tree", 2000, "sparse", "homogeneous", "low",
                 "no", _tree),
        ZooGraph("dense-sbm", "planted partition, 4 blocks, mean degree 40 inside + 15 across",
                 1000, "dense", "homogeneous", "low", "yes",
                 lambda n, rng: _sbm(n, rng, 4, 40.0, 15.0, "dense SBM (4 blocks, 40 + 15)")),
        ZooGraph("dense-gnp", "dense G(n, p), mean degree 45", 1000, "dense", "homogeneous", "low",
                 "no", lambda n, rng: _gnp(n, rng, 45.0, "dense G(n, p) (mean degree 45)")),
    ]
}


def names() -> list[str]:
    """Names of the generated graphs, in :data:`ZOO` order."""
    return list(ZOO)


def generate(name: str, n: int | None = None, seed: int = 0) -> Any:
    """Generate one zoo graph.

    Parameters
    ----------
    name : str
        A key of :data:`ZOO`.
    n : int or None, default None
        Number of nodes (>= 100); None for the kind's default (1,000-3,000).
    seed : int, default 0
        Non-negative seed; the same (name, n, seed) gives the same graph.

    Returns
    -------
    networkx.Graph
        Simple, undirected, nodes ``0..n-1``, no attributes.

    Raises
    ------
    ValueError
        Unknown ``name``, ``n`` < 100 or a negative ``seed``.
    """
    if name not in ZOO:
        raise ValueError(f"name must be one of {names()}, got {name!r}")
    if n is not None and (isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 100):
        raise ValueError(f"n must be None or an int >= 100, got {n!r}")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    z = ZOO[name]
    return z.build(int(n or z.n), np.random.default_rng([int(seed), 7019]))


def _facebook() -> Any:
    from dpgraph.datasets import facebook

    return facebook()


def _email() -> Any:
    from dpgraph.datasets import email_eu_core

    return email_eu_core()


def _cofans() -> Any:
    from dpgraph.datasets import movielens_cofans

    return movielens_cofans()


REAL: dict[str, Callable[[], Any]] = {
    "facebook": _facebook,
    "email-eu-core": _email,
    "movielens-cofans": _cofans,
}


def real(name: str) -> Any:
    """Load a real graph of :data:`REAL` (raises DatasetNotFoundError when absent)."""
    if name not in REAL:
        raise ValueError(f"name must be one of {sorted(REAL)}, got {name!r}")
    return REAL[name]()
