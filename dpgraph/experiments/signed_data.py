"""Typed graphs and their true statistics for the signed experiment.

* :func:`bitcoin_alpha_typed`: SNAP Bitcoin Alpha with each rating mapped to
  one of the declared values distrust (< 0), trust (1-2), strong trust (>= 3);
* :func:`undirected_signed`: its undirected signed version for balance (a
  pair rated either way is a tie; the lower rating decides its value, so a
  distrust in either direction makes the pair distrust);
* :func:`signed_sbm` and :func:`typed_configuration`: generated typed graphs
  (a signed stochastic block model, a configuration model with a heavy-tailed
  degree sequence and random tie values);
* exact answers of the queries the experiment asks (cuts by value, counts,
  balance, reciprocity), computed from the true graph.
"""

from __future__ import annotations

import itertools
from typing import Any

import networkx as nx
import numpy as np

__all__ = ["BINS", "VALUES", "WEIGHTS", "bitcoin_alpha_typed", "ratings_only", "signed_sbm", "true_balance",
           "true_cuts", "true_mutual", "typed_configuration", "undirected_signed", "value_matrices"]

#: The declared tie values of the experiment and the rating bins that define them.
VALUES = ("distrust", "trust", "strong trust")
BINS = (-10.0, 0.0, 3.0, 10.0)
#: The weighted cut: net trust, strong trust counting double.
WEIGHTS = {"distrust": -1.0, "trust": 1.0, "strong trust": 2.0}
#: The sign of each value for balance.
SIGNS = {"distrust": -1, "trust": 1, "strong trust": 1}
ATTR = "kind"


def _kind(rating: float) -> str:
    return VALUES[int(np.searchsorted(BINS, rating, side="right")) - 1] if rating < BINS[-1] else VALUES[-1]


def bitcoin_alpha_typed(graph: Any = None) -> nx.DiGraph:
    """Bitcoin Alpha (or ``graph``, a DiGraph with a ``rating``) with the value in ``kind``."""
    if graph is None:
        from .. import datasets

        graph = datasets.bitcoin_alpha()
    G = nx.DiGraph()
    G.add_nodes_from(graph.nodes)
    G.add_edges_from((u, v, {ATTR: _kind(d["rating"])}) for u, v, d in graph.edges(data=True))
    return G


def ratings_only(graph: Any) -> nx.DiGraph:
    """The graph with the ``rating`` of each edge and no other attribute."""
    G = nx.DiGraph()
    G.add_nodes_from(graph.nodes)
    G.add_edges_from((u, v, {"rating": r}) for u, v, r in graph.edges(data="rating"))
    return G


def undirected_signed(G: nx.DiGraph) -> nx.Graph:
    """The undirected signed graph: a pair tied either way, valued by its lower rating's kind."""
    rank = {v: k for k, v in enumerate(VALUES)}
    H = nx.Graph()
    H.add_nodes_from(G.nodes)
    for u, v, d in G.edges(data=True):
        kind = d[ATTR]
        if H.has_edge(u, v) and rank[H.edges[u, v][ATTR]] <= rank[kind]:
            continue
        H.add_edge(u, v, **{ATTR: kind})
    return H


def signed_sbm(n: int = 600, blocks: int = 4, p_in: float = 0.08, p_out: float = 0.02,
               seed: int = 0) -> nx.Graph:
    """A signed block model: ties within blocks mostly trust, between blocks mostly distrust.

    Within a block a tie is distrust with probability 0.1, strong trust 0.3,
    trust otherwise; between blocks distrust 0.7, trust 0.25, strong 0.05.
    """
    rng = np.random.default_rng(seed)
    sizes = [n // blocks + (k < n % blocks) for k in range(blocks)]
    G = nx.stochastic_block_model(sizes, [[p_in if a == b else p_out for b in range(blocks)]
                                          for a in range(blocks)], seed=int(rng.integers(2**31)))
    block = {v: G.nodes[v]["block"] for v in G}
    G = nx.Graph(G.edges)
    G.add_nodes_from(range(n))
    for u, v in G.edges:
        p = (0.1, 0.6, 0.3) if block[u] == block[v] else (0.7, 0.25, 0.05)
        G.edges[u, v][ATTR] = VALUES[int(rng.choice(3, p=p))]
    return G


def typed_configuration(n: int = 600, mean_degree: float = 12.0, seed: int = 0) -> nx.Graph:
    """A configuration model on a heavy-tailed (log-normal) degree sequence, random tie values.

    Values drawn independently with probabilities 0.1 / 0.6 / 0.3 (distrust,
    trust, strong trust); parallel edges and self-loops dropped.
    """
    rng = np.random.default_rng(seed)
    deg = np.maximum(1, np.round(rng.lognormal(np.log(mean_degree) - 0.5, 1.0, n))).astype(int)
    deg = np.minimum(deg, n - 1)
    if deg.sum() % 2:
        deg[0] += 1
    M = nx.configuration_model(deg.tolist(), seed=int(rng.integers(2**31)))
    G = nx.Graph(M)
    G.remove_edges_from(nx.selfloop_edges(G))
    for u, v in G.edges:
        G.edges[u, v][ATTR] = VALUES[int(rng.choice(3, p=(0.1, 0.6, 0.3)))]
    return G


def value_matrices(G: nx.Graph, nodes: tuple) -> list:
    """One scipy.sparse 0/1 matrix per declared value (rows/cols in ``nodes`` order), symmetric if undirected."""
    import scipy.sparse as sp

    pos = {v: i for i, v in enumerate(nodes)}
    n = len(nodes)
    out = []
    for kind in VALUES:
        e = np.array([(pos[u], pos[v]) for u, v, k in G.edges(data=ATTR) if k == kind],
                     dtype=np.int64).reshape(-1, 2)
        A = sp.csr_array((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(n, n))
        out.append(A if G.is_directed() else A + A.T)
    return out


def true_cuts(mats: list, S: np.ndarray, T: np.ndarray) -> np.ndarray:
    """True S -> T ties of each value, for boolean memberships S, T (Q, n): shape (Q, K-1)."""
    Sf, Tf = S.astype(float), T.astype(float)
    return np.stack([np.einsum("qi,qi->q", Sf, (A @ Tf.T).T) for A in mats], axis=1)


def true_balance(H: nx.Graph) -> dict:
    """Triangles of the undirected signed graph by sign pattern and the balanced fraction."""
    sign = {e: SIGNS[k] for e, k in ((frozenset((u, v)), k) for u, v, k in H.edges(data=ATTR))}
    counts = {"+++": 0, "++-": 0, "+--": 0, "---": 0}
    names = ["+++", "++-", "+--", "---"]
    adj = {v: set(H[v]) for v in H}
    order = {v: k for k, v in enumerate(H)}
    for u in H:
        for v in adj[u]:
            if order[v] <= order[u]:
                continue
            for w in adj[u] & adj[v]:
                if order[w] <= order[v]:
                    continue
                neg = sum(sign[frozenset(p)] < 0 for p in itertools.combinations((u, v, w), 2))
                counts[names[neg]] += 1
    total = sum(counts.values())
    counts["balanced_fraction"] = (counts["+++"] + counts["+--"]) / total if total else float("nan")
    return counts


def true_mutual(G: nx.DiGraph) -> dict:
    """Mutual ties (any, and both ways of the same value) and the reciprocity of G."""
    out = {"mutual": 0, **{f"mutual {k}": 0 for k in VALUES}}
    for u, v, k in G.edges(data=ATTR):
        if G.has_edge(v, u) and order_lt(u, v):
            out["mutual"] += 1
            if G.edges[v, u][ATTR] == k:
                out[f"mutual {k}"] += 1
    out["reciprocity"] = 2 * out["mutual"] / G.number_of_edges() if G.number_of_edges() else 0.0
    return out


def order_lt(u: Any, v: Any) -> bool:
    """A fixed order on node labels (each unordered pair counted once)."""
    try:
        return u < v
    except TypeError:
        return repr(u) < repr(v)
