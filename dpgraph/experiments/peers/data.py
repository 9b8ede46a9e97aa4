"""Graphs of the peers benchmark and the published SoK figures kept in the package."""

from __future__ import annotations

import csv
from collections.abc import Callable
from importlib import resources
from typing import Any

__all__ = ["DATASETS", "DEFAULT_DATASETS", "SOK_FILES", "expand_datasets", "load_edge_list",
           "load_graph", "nx_induced", "published_figures"]

#: the real graphs: what ``dpgraph experiment peers`` runs by default
DEFAULT_DATASETS = ("facebook", "email-eu-core", "movielens-cofans")

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
    "harmonic_diameter_rel": "Harmonic_Diameter.csv",
}

#: the sources of :func:`published_figures`
SOURCES = {"sok": "SoK study (ndsi6382/SoK-PAoRDPG@82be3ba, means of 10 trials)",
           "pgb": "PGB plots (arXiv 2408.02928, read by eye, +-10%)"}


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


def published_figures(source: str = "sok") -> dict:
    """Published figures on ego-Facebook: {metric: {epsilon: {method: value}}}.

    Parameters
    ----------
    source : {"sok", "pgb"}, default "sok"
        "sok": the SoK study's CSV files (means over 10 trials); "pgb": the
        values read off PGB's plots (+-10%).  Both are package data in
        ``dpgraph/experiments/reference/sok_facebook``; its README gives the
        sources, citations and how to read each metric.

    Examples
    --------
    >>> round(published_figures()["nmi"][1.0]["PrivGraph"], 3)
    0.189
    >>> published_figures("pgb")["triangles_rel"][1.0]
    {'DP-1K': 0.11}
    """
    if source not in SOURCES:
        raise ValueError(f"source must be one of {sorted(SOURCES)}, got {source!r}")
    ref = resources.files("dpgraph.experiments").joinpath("reference", "sok_facebook")
    out: dict = {}
    if source == "pgb":
        with ref.joinpath("pgb_plots.csv").open(newline="") as fh:
            for row in csv.DictReader(fh):
                out.setdefault(row["metric"], {}).setdefault(float(row["epsilon"]), {})[
                    row["method"]] = float(row["value"])
        return out
    for key, fname in SOK_FILES.items():
        with ref.joinpath(fname).open(newline="") as fh:
            for row in csv.DictReader(fh):
                eps = float(row.pop("epsilon"))
                out.setdefault(key, {})[eps] = {k: float(v) for k, v in row.items()}
    return out


def expand_datasets(names: Any) -> list[str]:
    """Data set names with ``zoo`` standing for every generated graph and ``real`` for the defaults.

    Examples
    --------
    >>> expand_datasets(["real"]) == list(DEFAULT_DATASETS)
    True
    >>> "zoo-sbm" in expand_datasets(["zoo"])
    True
    """
    from dpgraph.experiments import zoo

    out: list[str] = []
    for name in names:
        group = {"zoo": [f"zoo-{z}" for z in zoo.names()], "real": list(DEFAULT_DATASETS)}
        for d in group.get(name, [name]):
            if d not in DATASETS:
                raise ValueError(f"dataset must be one of {sorted(DATASETS)}, 'zoo' or 'real', "
                                 f"got {d!r}")
            if d not in out:
                out.append(d)
    return out


def load_edge_list(path: str, nodes: Any) -> Any:
    """The graph of an edge-list file on the public vertex set ``nodes``.

    Read by :func:`dpgraph.graph.read_input`, the reader behind
    ``dpgraph.release(path, nodes=...)`` (``u v`` a line, ``#`` comments,
    further columns ignored; an edge at a node outside ``nodes`` is refused).
    ``nodes`` is what ``dpgraph.release`` accepts (a sequence of labels, or
    the :class:`~dpgraph.cli_types.NodeList` of a ``--nodes`` argument).
    """
    import networkx as nx

    from dpgraph.graph import read_input

    enc = read_input(str(path), nodes=nodes)
    labels = enc.index.nodes
    G = nx.Graph(name=str(path))
    G.add_nodes_from(labels)
    G.add_edges_from(zip(map(labels.__getitem__, enc.rows.tolist()),
                         map(labels.__getitem__, enc.cols.tolist())))
    return G
