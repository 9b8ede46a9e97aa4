"""Typed and weighted relationships: K-ary mechanism E on the vertex pairs.

A typed release (``dpgraph.release(G, eps, edge_attr=..., values=[...])``)
holds one value per pair from the public universe {no tie, v_1, ..., v_{K-1}}
declared by the curator.  Modules: :mod:`.encoding` (the declared values and
the encoding of a graph's ties), :mod:`.sampler` (K-ary randomized response,
bit-sliced, from the core), :mod:`.adjacency` (bit-plane storage),
:mod:`.sparse` and :mod:`.sparse_adjacency` (subsampled releases in CSR form),
:mod:`.release` (the typed branch of ``release``), :mod:`.planning` (stds
before a release), :mod:`.estimators` (typed and weighted counts,
cuts, degrees), :mod:`.balance` (signed triangles), :mod:`.reciprocity`,
:mod:`.typed_io` (the ``typed`` and ``sparsetyped`` file payloads).
"""

from .adjacency import TypedAdjacency
from .encoding import MAX_TIE_VALUES, TieValues, tie_values, value_bits
from .sparse_adjacency import SparseTypedAdjacency

__all__ = ["MAX_TIE_VALUES", "SparseTypedAdjacency", "TieValues", "TypedAdjacency", "tie_values",
           "value_bits"]
