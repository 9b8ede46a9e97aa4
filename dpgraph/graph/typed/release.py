"""The typed branch of :func:`dpgraph.release`: validate, open the transaction, sample."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from numbers import Real
from typing import Any, NamedTuple

from ...core.probabilities import RRProbabilities
from ...core.transaction import ReleaseTransaction
from ..encoding import NodeIndex
from ..inputs import encode_input
from .adjacency import TypedAdjacency
from .encoding import TieValues, encode_typed, tie_values
from .sampler import release_typed

__all__ = ["TypedParts", "typed_release"]


class TypedParts(NamedTuple):
    """What a typed release is made of (the arguments of a PrivateGraph)."""

    adjacency: TypedAdjacency
    index: NodeIndex
    probabilities: RRProbabilities
    tie_values: TieValues


def typed_release(G: Any, epsilon: float, seed: Any, *, directed: bool,
                  nodes: Sequence[Hashable] | None, ledger: Any, edge_attr: Any,
                  values: Sequence | None, bins: Sequence[Real] | None,
                  keep: Any, target_edges: Any, stacklevel: int) -> TypedParts:
    """Release G's pairs with their declared tie values, K-ary mechanism E on every pair.

    Every check happens before :meth:`ReleaseTransaction.commit`: the
    declaration, epsilon for K values, the input and its attribute values.
    """
    if edge_attr is None:
        raise TypeError("values= and bins= declare the values of an edge attribute: pass "
                        "edge_attr= too (e.g. edge_attr='kind')")
    if keep is not None or target_edges is not None:
        raise ValueError(
            "keep= and target_edges= (a sparse, subsampled release) are for untyped releases; a "
            "typed release is stored dense, in ceil(log2 K) bit planes. Drop keep=/target_edges=, "
            "or release without edge_attr=")
    ties = tie_values(edge_attr, values, bins)
    tx = ReleaseTransaction(epsilon, K=ties.K, seed=seed, ledger=ledger)
    enc = encode_input(G, directed=directed, nodes=nodes)
    x = encode_typed(G, enc, ties)
    source = tx.commit(stacklevel=stacklevel + 1)
    adjacency = release_typed(enc, x, tx.probabilities, source)
    return TypedParts(adjacency, enc.index, tx.probabilities, ties)
