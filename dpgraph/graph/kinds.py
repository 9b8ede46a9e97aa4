"""The table of release kinds: what each kind is and can do, in one place.

A release is one of five built-in kinds (and of any kind an upper layer adds
with :func:`register_kind`, such as the collected release of
:mod:`dpgraph.local`); each row says what the rest of the package
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

Only the dense row composes with the degree channel (``channels``:
``"degrees"``); a release asking another row for it is refused by the row
(:func:`refuse_channel`), before anything is read or charged.

Each in-memory row also holds its ``mechanics`` (:mod:`dpgraph.graph.mechanics`:
its subsampling plan, size check, input and sampler), and :func:`run` makes a
release of any kind in one sequence: size check (:func:`check`, before
anything is charged), ``tx.commit()``, the row's sampler, then the composed
degree channel when the transaction carries one (a row modifier: the noisy
degrees of :mod:`dpgraph.graph.degree_channel`, drawn after the pairs from
the same stream).  :func:`row_for` picks the row of a release's arguments.

Each row with a file payload also holds its writer and reader
(``payload``); :mod:`dpgraph.graph.io` takes them from here.  Adding an
in-memory kind is one row with its mechanics and payload; a kind assembled
outside the transaction (a collection of users' own reports) is one row with
its payload and release class, added by :func:`register_kind`; see
docs/design.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, NamedTuple, TypeVar

from . import degree_channel, mechanics
from .packed_io import packed_payload, packed_read
from .sparse_io import sparse_payload, sparse_read
from .typed.typed_io import sparse_typed_payload, sparse_typed_read, typed_payload, typed_read

__all__ = ["ANALYTIC_NEEDS", "KINDS", "Made", "ReleaseKind", "by_file_kind", "capabilities",
           "check", "declare_needs", "kind_of", "offers", "refuse_channel", "refuse_unmet",
           "register_kind", "row_for", "run"]


@dataclass(frozen=True)
class ReleaseKind:
    """One row of the table of release kinds.

    Attributes
    ----------
    name : str
        ``"dense"``, ``"sparse"``, ``"typed"``, ``"typed sparse"`` or ``"blockwise"``.
    file_kind : str or None
        The payload kind of its ``.dpg`` file (``"store"``: a pointer to a blockwise store,
        whose writer and reader :mod:`dpgraph.graph.blockwise` adds to the row).
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
    channels : frozenset of str
        The channels its release composes with the pairs (``"degrees"``: the
        noisy degrees of :mod:`dpgraph.graph.degree_channel`).
    release_type : callable or None
        What :func:`dpgraph.load` builds from a file of this kind: a
        ``PrivateGraph`` subclass or a function of the same arguments (None:
        ``PrivateGraph`` itself).
    """

    name: str
    file_kind: str | None
    storage: str
    capabilities: frozenset[str]
    mechanics: Any = None
    payload: tuple[Callable[..., Any], Callable[..., Any]] | None = None
    channels: frozenset[str] = frozenset()
    release_type: Any = None


KINDS: dict[str, ReleaseKind] = {row.name: row for row in (
    ReleaseKind("dense", "packed", "dense", frozenset({"packed words"}), mechanics.dense,
                (packed_payload, packed_read), channels=frozenset({"degrees"})),
    ReleaseKind("sparse", "sparse", "sparse", frozenset({"csr"}), mechanics.sparse,
                (sparse_payload, sparse_read)),
    ReleaseKind("typed", "typed", "dense", frozenset({"typed", "packed words"}), mechanics.typed,
                (typed_payload, typed_read)),
    ReleaseKind("typed sparse", "sparsetyped", "sparse", frozenset({"typed", "csr"}),
                mechanics.typed_sparse, (sparse_typed_payload, sparse_typed_read)),
    ReleaseKind("blockwise", "store", "blockwise", frozenset({"packed words", "store"})),
)}
_BY_FILE_KIND = {row.file_kind: row for row in KINDS.values()}


def register_kind(row: ReleaseKind) -> None:
    """Add the row of a kind an upper layer assembles (it needs a file payload and a class).

    Such a kind is not sampled by the transaction (no ``mechanics``): a
    collection of users' own reports is the example.  :func:`dpgraph.load`
    reads its files with the row's payload reader and builds its
    ``release_type``; its capabilities decide which analytics it offers.
    Registering the same row again is a no-op.  A row of the table without
    a payload is completed the same way, by a ``row`` equal to it but for
    ``payload`` and ``release_type`` (the blockwise row: its package
    holds the pointer payload, which the table cannot import without a
    cycle).

    Raises
    ------
    ValueError
        If its name or file kind is taken by another row, its file kind is
        not 1 to 16 lowercase letters, or it has no payload or release class.
    """
    if not (isinstance(row.file_kind, str) and re.fullmatch(r"[a-z]{1,16}", row.file_kind)):
        raise ValueError(f"row {row.name!r}: its file kind must be 1 to 16 lowercase letters")
    if row.payload is None or row.release_type is None:
        raise ValueError(f"row {row.name!r}: a registered kind needs payload=(writer, reader) "
                         "and release_type= (the class dpgraph.load builds)")
    taken = KINDS.get(row.name) or _BY_FILE_KIND.get(row.file_kind)
    completes = taken is not None and taken.payload is None and replace(
        taken, payload=row.payload, release_type=row.release_type) == row
    if taken is not None and taken != row and not completes:
        raise ValueError(f"row {row.name!r}: its name or file kind {row.file_kind!r} is taken "
                         f"by the row {taken.name!r}")
    KINDS[row.name] = _BY_FILE_KIND[row.file_kind] = row


def by_file_kind(file_kind: Any) -> ReleaseKind | None:
    """The row whose files have payload kind ``file_kind`` (None: no row does)."""
    return _BY_FILE_KIND.get(file_kind)


def refuse_channel(row: ReleaseKind, channel: str) -> None:
    """Refuse a release of ``row`` that asks for a composed ``channel`` its row does not offer.

    Raises
    ------
    ValueError
        Naming the kind, the channel and the rows that offer it.
    """
    if channel not in row.channels:
        offering = [r.name for r in KINDS.values() if channel in r.channels]
        raise ValueError(
            f"degree_share > 0: a {row.name} release has no {channel} channel; it composes with "
            f"the {' or '.join(offering)} release only (drop edge_attr/values/bins and "
            "keep/target_edges), or use degree_share=0")


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
    """The capabilities of ``R``'s row (none for an object of no row).

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
