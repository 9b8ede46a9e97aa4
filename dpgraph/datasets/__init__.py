"""Real datasets: where to find them, how to verify them, how to load them fast.

Data files are never shipped with dpgraph.  :func:`fetch` looks in
``$DPGRAPH_DATA_DIR``, then the user cache directory, then downloads from the
publisher's address (with pooch) and checks the published SHA-256.

Registered datasets (see ``datasets/README.md`` for provenance and licences):

``"facebook"``
    SNAP ego-Facebook (McAuley & Leskovec 2012), 4039 nodes, 88234 undirected
    edges.  Loader: :func:`facebook`.
``"email-eu-core"`` and ``"email-eu-core-departments"``
    SNAP email-Eu-core with its 42 departments (ground-truth communities).
    Loader: :func:`email_eu_core`.
``"bitcoin-alpha"``
    SNAP Bitcoin Alpha (Kumar et al. 2016), 3783 users, 24186 directed
    ratings -10..10: a signed, weighted graph for typed releases.  Loader:
    :func:`bitcoin_alpha`.
``"movielens-100k"``
    MovieLens 100K ratings, 100000 ratings 1..5 by 943 users of 1682 movies;
    its licence forbids redistribution.  Loader: :func:`movielens_100k`;
    :func:`movielens_cofans` derives a graph of users from it.
"""

from .loaders import (
    Ratings,
    bitcoin_alpha,
    email_eu_core,
    facebook,
    movielens_100k,
    movielens_cofans,
    read_ratings,
    snap_edgelist,
)
from .registry import (
    REGISTRY,
    DatasetInfo,
    DatasetNotFoundError,
    available,
    cache_dir,
    fetch,
    locate,
    search_dirs,
)

__all__ = [
    "REGISTRY",
    "DatasetInfo",
    "DatasetNotFoundError",
    "Ratings",
    "available",
    "bitcoin_alpha",
    "cache_dir",
    "email_eu_core",
    "facebook",
    "fetch",
    "locate",
    "movielens_100k",
    "movielens_cofans",
    "read_ratings",
    "search_dirs",
    "snap_edgelist",
]
