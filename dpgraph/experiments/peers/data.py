"""Graphs of the peers benchmark and the published SoK figures kept in the package."""

from __future__ import annotations

import csv
from collections.abc import Callable
from importlib import resources
from typing import Any

__all__ = ["DATASETS", "SOK_FILES", "load_graph", "nx_induced", "published_figures"]

#: metric key -> (SoK csv file in dpgraph/experiments/reference/sok_facebook)
SOK_FILES = {
    "transitivity_err": "Transitivity.csv",
    "degree_w1": "Degree_Distribution.csv",
    "modularity_err": "Modularity.csv",
    "nmi": "NMI.csv",
    "ari": "ARI.csv",
    "density_err": "Density.csv",
    "assortativity_err": "Assortativity.csv",
    "clustering_w1": "Clustering_Coefficient_Distribution.csv",
}


def _plain(H: Any, name: str) -> Any:
    """An attribute-free, unweighted copy (the releases are unweighted)."""
    import networkx as nx

    G = nx.Graph(name=name)
    G.add_nodes_from(H.nodes())
    G.add_edges_from(H.edges())
    return G


def _movielens_cofans() -> tuple[Any, None]:
    from dpgraph import datasets

    return datasets.movielens_cofans(), None


def _facebook() -> tuple[Any, None]:
    from dpgraph import datasets

    return datasets.facebook(), None


def _email() -> tuple[Any, dict]:
    from dpgraph import datasets

    G, dept = datasets.email_eu_core(departments=True)
    return _plain(G, "email-Eu-core (undirected)"), dept


def _lesmis() -> tuple[Any, None]:
    import networkx as nx

    return _plain(nx.les_miserables_graph(), "Les Miserables co-appearance (networkx)"), None


def _karate() -> tuple[Any, None]:
    import networkx as nx

    return _plain(nx.karate_club_graph(), "Zachary karate club (networkx)"), None


def _zoo(name: str) -> Callable[[], tuple[Any, None]]:
    def load() -> tuple[Any, None]:
        from dpgraph.experiments import zoo

        return zoo.generate(name, seed=0), None

    return load


def _datasets() -> dict[str, Callable[[], tuple[Any, Any]]]:
    from dpgraph.experiments import zoo

    d: dict[str, Callable[[], tuple[Any, Any]]] = {
        "facebook": _facebook,
        "email-eu-core": _email,
        "movielens-cofans": _movielens_cofans,
        "lesmis": _lesmis,
        "karate": _karate,
    }
    for name in zoo.names():
        d[f"zoo-{name}"] = _zoo(name)
    return d


#: dataset name -> loader returning (graph, ground-truth labels {node: label} or None)
DATASETS: dict[str, Callable[[], tuple[Any, Any]]] = _datasets()


def load_graph(name: str, labels: bool = False) -> Any:
    """Load one of :data:`DATASETS` as an undirected networkx graph without attributes.

    Parameters
    ----------
    name : str
        A key of :data:`DATASETS` (real graphs, and ``zoo-<name>`` for the
        generated graphs of :mod:`dpgraph.experiments.zoo`, seed 0).
    labels : bool, default False
        Also return the ground-truth labels ``{node: label}`` (email-Eu-core's
        departments) or None.
    """
    if name not in DATASETS:
        raise ValueError(f"dataset must be one of {sorted(DATASETS)}, got {name!r}")
    G, lab = DATASETS[name]()
    return (G, lab) if labels else G


def nx_induced(G: Any, keep: list) -> Any:
    """A plain copy of the subgraph induced by ``keep``."""
    import networkx as nx

    H = nx.Graph(name=G.graph.get("name", ""))
    H.add_nodes_from(keep)
    H.add_edges_from(G.subgraph(keep).edges())
    return H


def published_figures() -> dict:
    """The published SoK figures on ego-Facebook: {metric: {epsilon: {method: value}}}.

    Read from the package data ``dpgraph/experiments/reference/sok_facebook``
    (see its README for the source and citation).

    Examples
    --------
    >>> round(published_figures()["nmi"][1.0]["PrivGraph"], 3)
    0.189
    """
    ref = resources.files("dpgraph.experiments").joinpath("reference", "sok_facebook")
    out: dict = {}
    for key, fname in SOK_FILES.items():
        with ref.joinpath(fname).open(newline="") as fh:
            for row in csv.DictReader(fh):
                eps = float(row.pop("epsilon"))
                out.setdefault(key, {})[eps] = {k: float(v) for k, v in row.items()}
    return out
