"""Ratings data for the statistical-query experiments (paper section VI-A).

Wang, Ying & Zhang ran these on Netflix ratings, which are no longer
distributed; here **MovieLens 100K stands in for Netflix** (one rating 1..5 is
one row, K = 5).  Without the file, synthetic look-alike ratings are used and
every output says so.

**Privacy unit.** One rating (one row) is what the experiments protect: the
movie label of a row, the user id and the group sizes are public (they form
the sub-databases), only the rating value is private.  A user rates each
movie at most once but many movies: among the 128 most-rated MovieLens
movies one user spans up to 116 sub-databases (:func:`user_span` checks it),
so at user level both mechanism E and the sub-database MWEM are bounded, by
group privacy, by ``eps`` times the user's number of ratings.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dpgraph.core import Universe
from dpgraph.validation import check_positive_int

__all__ = [
    "RATING_UNIVERSE",
    "STAND_IN_NOTE",
    "SYNTHETIC_NOTE",
    "load_ratings",
    "pack_databases",
    "random_row_functions",
    "split_units",
    "synthetic_ratings",
    "top_movies",
    "user_span",
]

#: The ratings universe: one row is one rating 1..5.
RATING_UNIVERSE = Universe([1, 2, 3, 4, 5])
STAND_IN_NOTE = "MovieLens 100K ratings stand in for the paper's Netflix ratings"
SYNTHETIC_NOTE = (
    "SYNTHETIC ratings (MovieLens 100K not found locally): numbers are illustrative only"
)


# --------------------------------------------------------------------------- data


def synthetic_ratings(seed: int = 0, n_movies: int = 1682, n_ratings: int = 100_000) -> Any:
    """Ratings shaped like MovieLens 100K, for offline demos and tests.

    Movie popularity follows a Zipf-like law; each movie's rating
    distribution is drawn around MovieLens' overall one.

    Parameters
    ----------
    seed : int
    n_movies, n_ratings : int

    Returns
    -------
    dpgraph.datasets.Ratings

    Examples
    --------
    >>> r = synthetic_ratings(0, n_movies=50, n_ratings=2000)
    >>> len(r), int(r.rating.min()) >= 1, int(r.rating.max()) <= 5
    (2000, True, True)
    """
    from dpgraph.datasets import Ratings

    n_movies = check_positive_int(n_movies, "n_movies")
    n_ratings = check_positive_int(n_ratings, "n_ratings")
    rng = np.random.default_rng(seed)
    pop = 1.0 / np.arange(1, n_movies + 1) ** 0.9
    item = rng.choice(n_movies, size=n_ratings, p=pop / pop.sum()) + 1
    base = np.array([0.061, 0.114, 0.271, 0.342, 0.212])
    probs = rng.dirichlet(base * 20, size=n_movies)
    u = rng.random(n_ratings)
    rating = (u[:, None] > np.cumsum(probs[item - 1], axis=1)).sum(axis=1) + 1
    rating = np.minimum(rating, 5)
    user = rng.integers(1, 944, n_ratings)
    return Ratings(user, item, rating.astype(np.int64), np.zeros(n_ratings, np.int64))


def load_ratings(data: str = "auto") -> tuple[Any, str]:
    """Return ``(ratings, note)`` for the experiments.

    Parameters
    ----------
    data : {"auto", "movielens", "synthetic"}
        ``"movielens"`` requires MovieLens 100K (see ``datasets/README.md``);
        ``"auto"`` uses it when present locally and synthetic ratings otherwise.

    Returns
    -------
    tuple
        The ratings and a note saying what stands for what.

    Examples
    --------
    >>> r, note = load_ratings("synthetic")
    >>> note.startswith("SYNTHETIC")
    True
    """
    from dpgraph import datasets

    if data not in ("auto", "movielens", "synthetic"):
        raise ValueError(f"data must be 'auto', 'movielens' or 'synthetic', got {data!r}")
    if data == "movielens" or (data == "auto" and datasets.available("movielens-100k")):
        return datasets.movielens_100k(), STAND_IN_NOTE
    return synthetic_ratings(0), SYNTHETIC_NOTE


def top_movies(
    ratings: Any, m: int, offset: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows of the movies ranked offset + 1 to offset + m by number of ratings.

    ``offset=0`` gives the ``m`` most-rated movies (the test movies of the
    heterogeneity experiment); ``offset=m`` the next ``m``, disjoint rows used
    as held-out data to choose MWEM's T.

    Returns
    -------
    values : numpy.ndarray
        Rating labels 1..5 of those rows.
    movie : numpy.ndarray
        Movie index 0..m-1 of each row (0 = rank offset+1; ties by item id).
    user : numpy.ndarray
        User id of each row.

    Examples
    --------
    >>> r = synthetic_ratings(0, n_movies=20, n_ratings=500)
    >>> v, mv, _ = top_movies(r, 4)
    >>> int(mv.max()), bool(np.all(np.bincount(mv)[:-1] >= np.bincount(mv)[1:]))
    (3, True)
    >>> bool(np.bincount(mv).min() >= np.bincount(top_movies(r, 4, offset=4)[1]).max())
    True
    """
    m = check_positive_int(m, "m")
    if int(offset) < 0:
        raise ValueError(f"offset must be >= 0 (movies ranked offset+1 .. offset+m), got {offset}")
    offset = int(offset)
    items, counts = np.unique(ratings.item, return_counts=True)
    if items.size < offset + m:
        raise ValueError(
            f"m={m} movies from rank {offset + 1} requested but the ratings cover only "
            f"{items.size}; lower m or offset"
        )
    order = np.lexsort((items, -counts))[offset : offset + m]
    rank = np.full(items.max() + 1, -1, dtype=np.int64)
    rank[items[order]] = np.arange(m)
    movie = rank[ratings.item]
    keep = movie >= 0
    return ratings.rating[keep], movie[keep], ratings.user[keep]


def user_span(unit: np.ndarray, user: np.ndarray) -> tuple[int, int]:
    """Largest number of sub-databases one user's rows fall in, and most rows of one user.

    Under rating-level privacy each sub-database is released once; a user
    whose ratings span ``s`` sub-databases (and ``r`` rows) is protected, by
    group privacy, at ``eps`` times ``r`` for mechanism E and for MWEM alike.

    Examples
    --------
    >>> user_span(np.array([0, 1, 1, 2]), np.array([7, 7, 7, 8]))
    (2, 3)
    """
    unit = np.asarray(unit, dtype=np.int64)
    user = np.asarray(user, dtype=np.int64)
    pairs = np.unique(np.stack([user, unit]), axis=1)
    span = int(np.bincount(pairs[0]).max()) if pairs.size else 0
    rows = int(np.bincount(user).max()) if user.size else 0
    return span, rows


def split_units(movie: np.ndarray, user: np.ndarray, buckets: int) -> np.ndarray:
    """Unit label of each row: its movie, split into ``buckets`` near-equal parts by user id.

    Within a movie the rows are ranked by user id and cut into ``buckets``
    consecutive slices, so unit ``movie * buckets + j`` holds slice ``j``.
    Only public labels (movie, user id) are used, never the rating, so the
    units are a data-independent partition (parallel composition applies).

    Examples
    --------
    >>> split_units(np.array([0, 0, 0, 0, 1, 1]), np.array([9, 3, 5, 1, 2, 4]), 2).tolist()
    [1, 0, 1, 0, 2, 3]
    """
    buckets = check_positive_int(buckets, "buckets")
    order = np.lexsort((user, movie))
    counts = np.bincount(movie)
    if buckets > 1 and counts[counts > 0].min() < buckets:
        raise ValueError(
            f"a movie has only {int(counts[counts > 0].min())} ratings, fewer than "
            f"buckets={buckets}: some sub-databases would be empty; lower the bucket count"
        )
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    pos = np.empty_like(order)
    pos[order] = np.arange(order.size) - starts[movie[order]]
    return movie * buckets + pos * buckets // counts[movie]


def pack_databases(
    ratings: Any, n_databases: int, low: int, high: int, rng: np.random.Generator
) -> list[np.ndarray]:
    """Disjoint databases of ``low..high`` ratings, each a union of whole movies.

    Movies are visited in random order and packed greedily; a movie with
    more than ``high`` ratings is never used.

    Returns
    -------
    list of numpy.ndarray
        The rating labels of each database.

    Raises
    ------
    ValueError
        When the ratings cannot fill ``n_databases`` databases.

    Examples
    --------
    >>> r = synthetic_ratings(1, n_movies=200, n_ratings=20000)
    >>> dbs = pack_databases(r, 5, 1000, 2000, np.random.default_rng(0))
    >>> all(1000 <= d.size <= 2000 for d in dbs)
    True
    """
    n_databases = check_positive_int(n_databases, "n_databases")
    if not (0 < low <= high):
        raise ValueError(f"need 0 < low <= high for database sizes, got {low}, {high}")
    order = np.argsort(ratings.item, kind="stable")
    items, starts, counts = np.unique(ratings.item[order], return_index=True, return_counts=True)
    chosen: list[list[int]] = []
    current: list[int] = []
    size = 0
    target = int(rng.integers(low, high + 1))
    for j in rng.permutation(items.size):  # a loop over movies, not rows
        c = int(counts[j])
        if c > high:
            continue
        if size + c > high:
            if size >= low:
                chosen.append(current)
                current, size = [], 0
                target = int(rng.integers(low, high + 1))
            else:
                continue
        current.append(j)
        size += c
        if size >= target:
            chosen.append(current)
            current, size = [], 0
            target = int(rng.integers(low, high + 1))
        if len(chosen) == n_databases:
            break
    if len(chosen) < n_databases:
        raise ValueError(
            f"the ratings fill only {len(chosen)} disjoint databases of {low}..{high} rows, "
            f"not n_databases={n_databases}; lower n_databases or the size range"
        )
    out = []
    for movies in chosen:
        idx = np.concatenate([order[starts[j] : starts[j] + counts[j]] for j in movies])
        out.append(ratings.rating[np.sort(idx)])
    return out


def random_row_functions(rng: np.random.Generator, shape: Sequence[int], K: int = 5) -> np.ndarray:
    """The paper's random row functions: K uniforms divided by their range.

    Parameters
    ----------
    rng : numpy.random.Generator
    shape : sequence of int
        Leading shape; the result is ``(*shape, K)``.
    K : int

    Returns
    -------
    numpy.ndarray
        Every row function has max - min = 1 (so c_i = 1).

    Examples
    --------
    >>> f = random_row_functions(np.random.default_rng(0), (3,))
    >>> np.allclose(f.max(axis=1) - f.min(axis=1), 1.0)
    True
    """
    X = rng.random((*tuple(shape), K))
    return X / (X.max(axis=-1, keepdims=True) - X.min(axis=-1, keepdims=True))
