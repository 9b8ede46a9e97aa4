"""What each in-memory release kind does: its plan, size check, input and sampler.

The rows of :data:`dpgraph.graph.kinds.KINDS` hold these functions, so that
:func:`dpgraph.graph.kinds.run` makes every kind in one sequence: check the
size from public quantities, charge the ledger, sample.  A kind's functions:

- ``plan(rr, n, directed, keep, target_edges)``: its certified subsampling
  (:mod:`dpgraph.core.subsampling`), or None for a full release;
- ``size(rr, plan, n, directed, edge_bound)``: refuse, before the charge,
  a release that cannot fit (from n, direction, K, keep and the declared
  bound only, never from the input's edges);
- ``prepare(enc, values, plan)``: what grows with the input's edges,
  allocated with the input, before the charge;
- ``sample(data, plan, rr, source)``: the adjacency, its channel (None:
  plain randomized response) and its keep probability, drawn after it.
"""

from __future__ import annotations

from typing import Any

from ..core import RRProbabilities, typed_subsampling
from ..core import subsampled_probabilities as _binary_subsampling
from ..core.randomness import RandomSource
from ._memory import DENSE_RELEASE_ADVICE, SPARSE_RELEASE_ADVICE, check_fits, check_release_fits
from .dense import release_packed
from .encoding import EncodedGraph
from .sparse import release_sparse, sparse_input, sparse_release_bytes
from .typed.sampler import release_typed, typed_release_bytes
from .typed.sparse import release_sparse_typed, sparse_typed_bytes, sparse_typed_input

__all__ = ["Sampled", "dense", "sparse", "typed", "typed_sparse"]

Sampled = tuple[Any, Any, float]  # (adjacency, channel or None, keep)


def _full(rr: RRProbabilities, n: int, directed: bool, keep: Any, target_edges: Any) -> None:
    return None


class dense:  # a namespace per kind, named as its row
    """The bit-packed binary release."""

    plan = staticmethod(_full)

    @staticmethod
    def size(rr: RRProbabilities, plan: None, n: int, directed: bool, bound: Any) -> None:
        check_release_fits(n, directed, False)

    @staticmethod
    def prepare(enc: EncodedGraph, values: Any, plan: None) -> EncodedGraph:
        return enc

    @staticmethod
    def sample(data: EncodedGraph, plan: None, rr: RRProbabilities,
               source: RandomSource) -> Sampled:
        return release_packed(data, rr, source), None, 1.0


class sparse:
    """The subsampled binary release in CSR form."""

    @staticmethod
    def plan(rr: RRProbabilities, n: int, directed: bool, keep: Any, target_edges: Any) -> Any:
        return _binary_subsampling(rr, n, directed, keep, target_edges)

    @staticmethod
    def size(rr: RRProbabilities, plan: Any, n: int, directed: bool, bound: Any) -> None:
        check_release_fits(n, directed, True)
        check_fits(sparse_release_bytes(plan, n, directed, bound),
                   f"a sparse release of {n:,} nodes at keep={plan.keep:.3g}",
                   SPARSE_RELEASE_ADVICE)

    @staticmethod
    def prepare(enc: EncodedGraph, values: Any, plan: Any) -> Any:
        return sparse_input(enc)

    @staticmethod
    def sample(data: Any, plan: Any, rr: RRProbabilities, source: RandomSource) -> Sampled:
        return release_sparse(data, plan, source), plan.channel, plan.keep


class typed:
    """K-ary randomized response into value bit planes."""

    plan = staticmethod(_full)

    @staticmethod
    def size(rr: RRProbabilities, plan: None, n: int, directed: bool, bound: Any) -> None:
        check_fits(typed_release_bytes(n, rr.K),
                   f"a typed release of {n:,} nodes with K={rr.K} values", DENSE_RELEASE_ADVICE)

    @staticmethod
    def prepare(enc: EncodedGraph, values: Any, plan: None) -> Any:
        return enc, values

    @staticmethod
    def sample(data: Any, plan: None, rr: RRProbabilities, source: RandomSource) -> Sampled:
        enc, values = data
        return release_typed(enc, values, rr, source), None, 1.0


class typed_sparse:
    """The subsampled typed release: CSR pairs with a value byte each."""

    @staticmethod
    def plan(rr: RRProbabilities, n: int, directed: bool, keep: Any, target_edges: Any) -> Any:
        return typed_subsampling(rr, n, directed, keep, target_edges)

    @staticmethod
    def size(rr: RRProbabilities, plan: Any, n: int, directed: bool, bound: Any) -> None:
        check_fits(sparse_typed_bytes(plan, n, directed, bound),
                   f"a sparse typed release of {n:,} nodes at keep={plan.keep:.3g}",
                   SPARSE_RELEASE_ADVICE)

    @staticmethod
    def prepare(enc: EncodedGraph, values: Any, plan: Any) -> Any:
        return sparse_typed_input(enc, values)

    @staticmethod
    def sample(data: Any, plan: Any, rr: RRProbabilities, source: RandomSource) -> Sampled:
        return release_sparse_typed(data, None, plan, source), plan.channel, plan.keep
