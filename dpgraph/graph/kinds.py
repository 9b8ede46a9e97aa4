"""The table of release kinds: what each kind is and can do, in one place.

A release is one of five kinds; each row says what the rest of the package
used to re-derive from ``hasattr`` probes and kind strings: its name, the
payload kind of its file (:mod:`dpgraph.graph.io`), how it stores its pairs
for memory advice (``storage``: dense, sparse or blockwise, see
:mod:`dpgraph.graph._memory`), and its capabilities (typed, packed words,
CSR, store).  :func:`kind_of` reads the row of a release from its adjacency's
payload kind, once.

Analytics declare what they need (:data:`ANALYTIC_NEEDS`: ``typed``,
``directed``, ``undirected``, ``packed words``, ``csr``); a release refuses a
method whose needs its kind and direction do not meet, by the declaration,
before the analytic runs (:func:`refuse_unmet`).

=============  ============  =========  ====================================
kind           file payload  storage    capabilities
=============  ============  =========  ====================================
dense          packed        dense      packed words
sparse         sparse        sparse     csr
typed          typed         dense      typed, packed words
typed sparse   sparsetyped   sparse     typed, csr
blockwise      store         blockwise  packed words, store
=============  ============  =========  ====================================

Each in-memory row also holds its ``mechanics`` (:mod:`dpgraph.graph.mechanics`:
its subsampling plan, size check, input and sampler), and :func:`run` makes a
release of any kind in one sequence: size check (:func:`check`, before
anything is charged), ``tx.commit()``, the row's sampler, then the composed
degree channel when the transaction carries one (a row modifier: the noisy
degrees of :mod:`dpgraph.graph.degree_channel`, drawn after the pairs from
the same stream).  :func:`row_for` picks the row of a release's arguments.

Each row with a file payload also holds its writer and reader
(``payload``); :mod:`dpgraph.graph.io` takes them from here.  Adding an
in-memory kind is one row with its mechanics and payload; see docs/design.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar

from . import degree_channel, mechanics
from .packed_io import packed_payload, packed_read
from .sparse_io import sparse_payload, sparse_read
from .typed.typed_io import sparse_typed_payload, sparse_typed_read, typed_payload, typed_read

__all__ = ["ANALYTIC_NEEDS", "KINDS", "Made", "ReleaseKind", "capabilities", "check",
           "declare_needs", "kind_of", "offers", "refuse_unmet", "row_for", "run"]


@dataclass(frozen=True)
class ReleaseKind:
    """One row of the table of release kinds.

    Attributes
    ----------
    name : str
        ``"dense"``, ``"sparse"``, ``"typed"``, ``"typed sparse"`` or ``"blockwise"``.
    file_kind : str or None
        The payload kind of its ``.dpg`` file (``"store"``: a pointer to a blockwise store,
        registered by :mod:`dpgraph.graph.blockwise.pointer`).
    storage : str
        How its pairs are held, for memory advice: ``"dense"`` (every pair),
        ``"sparse"`` (the kept pairs in CSR form) or ``"blockwise"`` (on disk).
    capabilities : frozenset of str
        Among ``"typed"``, ``"packed words"``, ``"csr"``, ``"store"``.
    mechanics : type or None
        Its plan, size check, input and sampler (:mod:`dpgraph.graph.mechanics`);
        None for the blockwise kind, which writes tiles to a store.
    payload : tuple or None
        ``(writer, reader)`` of its file payload (:mod:`dpgraph.graph.io`
        picks them from the row): ``writer(adjacency) -> (header fields,
        payload)``, ``reader(payload, header, n, directed) -> adjacency``,
        checking the payload against the header.
    """

    name: str
    file_kind: str | None
    storage: str
    capabilities: frozenset[str]
    mechanics: Any = None
    payload: tuple[Callable[..., Any], Callable[..., Any]] | None = None


KINDS: dict[str, ReleaseKind] = {row.name: row for row in (
    ReleaseKind("dense", "packed", "dense", frozenset({"packed words"}), mechanics.dense,
                (packed_payload, packed_read)),
    ReleaseKind("sparse", "sparse", "sparse", frozenset({"csr"}), mechanics.sparse,
                (sparse_payload, sparse_read)),
    ReleaseKind("typed", "typed", "dense", frozenset({"typed", "packed words"}), mechanics.typed,
                (typed_payload, typed_read)),
    ReleaseKind("typed sparse", "sparsetyped", "sparse", frozenset({"typed", "csr"}),
                mechanics.typed_sparse, (sparse_typed_payload, sparse_typed_read)),
    ReleaseKind("blockwise", "store", "blockwise", frozenset({"packed words", "store"})),
)}
_BY_FILE_KIND = {row.file_kind: row for row in KINDS.values()}


def kind_of(R: Any) -> ReleaseKind:
    """The row of the release ``R``, from its adjacency's payload kind.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> G = nx.Graph([(0, 1, {"s": "+"}), (1, 2, {"s": "-"})])
    >>> kind_of(dpgraph.release(G, 1.0, seed=0, edge_attr="s", values=["+", "-"], keep=0.5)).name
    'typed sparse'
    """
    file_kind = getattr(getattr(R, "adjacency", None), "file_kind", None)
    try:
        return _BY_FILE_KIND[file_kind]
    except KeyError:
        raise ValueError(f"no release kind stores its pairs as {file_kind!r}") from None


def row_for(typed: bool, sparse: bool) -> ReleaseKind:
    """The in-memory row of a release's arguments: typed (``edge_attr=``) and sparse (``keep=``)."""
    return KINDS[{(False, False): "dense", (False, True): "sparse", (True, False): "typed",
                  (True, True): "typed sparse"}[bool(typed), bool(sparse)]]


def check(row: ReleaseKind, rr: Any, n: int, directed: bool, keep: Any, target_edges: Any,
          edge_bound: Any) -> Any:
    """The row's plan for ``n`` nodes, after refusing a release that cannot fit.

    From public quantities only (n, direction, epsilon, K, keep and the
    declared ``edge_bound``), before anything is charged.
    """
    plan = row.mechanics.plan(rr, n, directed, keep, target_edges)
    row.mechanics.size(rr, plan, n, directed, edge_bound)
    return plan


class Made(NamedTuple):
    """What :func:`run` released: the arguments of a ``PrivateGraph``'s parts."""

    adjacency: Any
    channel: Any  # None: plain randomized response
    keep: float
    degree_channel: Any  # None: no composed degree channel


def run(row: ReleaseKind, tx: Any, enc: Any, data: Any, plan: Any,
        degree_share: float = 0.0) -> Made:
    """Charge ``tx``, then sample the row's release of ``data`` (and the degrees, if composed).

    Call it once every check has passed (:func:`check` for the size, and
    the input read and prepared with ``row.mechanics.prepare``): the
    transaction commits here, immediately before sampling, so a refusal
    costs no budget.  A transaction opened with a Laplace share adds the
    noisy degrees of ``enc``, drawn after the pairs from the same stream.
    """
    source = tx.commit()  # the seeded-release warning names the user's line (a stack walk)
    adjacency, channel, keep = row.mechanics.sample(data, plan, tx.probabilities, source)
    degrees = None
    if tx.laplace is not None:  # the composed kind: the degrees after the pairs
        degrees = degree_channel.sample(enc, degree_share, tx.epsilon, tx.laplace, source)
    return Made(adjacency, channel, keep, degrees)


def offers(R: Any) -> frozenset[str]:
    """The capabilities of ``R``'s row; none for a kind an upper layer registered without one.

    The kind decisions of the analytics (packed words or CSR) read this, not
    the adjacency's attributes.
    """
    row = _BY_FILE_KIND.get(getattr(getattr(R, "adjacency", None), "file_kind", None))
    return frozenset() if row is None else row.capabilities


def capabilities(R: Any) -> frozenset[str]:
    """What the release ``R`` offers: its kind's capabilities and its direction."""
    return kind_of(R).capabilities | {"directed" if R.directed else "undirected"}


#: What each analytic that does not apply to every release needs (any other applies to all).
ANALYTIC_NEEDS: dict[str, frozenset[str]] = {
    "value_counts": frozenset({"typed"}),
    "value_fraction": frozenset({"typed"}),
    "value_degree": frozenset({"typed"}),
    "value_volume": frozenset({"typed"}),
    "balance": frozenset({"typed", "undirected"}),
    "mutual_ties": frozenset({"directed"}),
    "reciprocity": frozenset({"directed"}),
}

_HOW = {
    "typed": "a typed release, dpgraph.release(G, eps, edge_attr=..., values=[...])",
    "directed": "a directed release, dpgraph.release(G, eps, directed=True)",
    "undirected": "an undirected release",
    "packed words": "a full (not sparse) in-memory release",
    "csr": "a sparse release (keep= or target_edges=)",
}


def refuse_unmet(R: Any, name: str) -> None:
    """Refuse ``R.name(...)`` when the release does not meet the analytic's declared needs.

    Raises
    ------
    TypeError
        Naming the analytic, what it needs, and what this release is.
    """
    missing = ANALYTIC_NEEDS.get(name, frozenset()) - capabilities(R)
    if missing:
        need = "; and ".join(_HOW[m] for m in sorted(missing))
        direction = "directed" if R.directed else "undirected"
        raise TypeError(f"{name}() needs {need}; this release is {kind_of(R).name} and "
                        f"{direction}")


F = TypeVar("F", bound=Callable[..., Any])


def declare_needs(name: str, method: F) -> F:
    """``method`` refusing, by the declaration of ``name``, a release that lacks what it needs."""
    if name not in ANALYTIC_NEEDS:
        return method
    import functools

    @functools.wraps(method)
    def checked(self: Any, *args: Any, **kwargs: Any) -> Any:
        if hasattr(self, "adjacency") and hasattr(self, "directed"):  # a release: its needs
            refuse_unmet(self, name)
        return method(self, *args, **kwargs)  # anything else: the arguments' own checks

    return checked  # type: ignore[return-value]
