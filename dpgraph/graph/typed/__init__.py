"""Typed and weighted relationships: K-ary mechanism E on the vertex pairs.

A typed release (``dpgraph.release(G, eps, edge_attr=..., values=[...])``)
holds one value per pair from the public universe {no tie, v_1, ..., v_{K-1}}
declared by the curator.  Modules: :mod:`.encoding` (the declared values and
the encoding of a graph's ties), :mod:`.sampler` (K-ary randomized response,
bit-sliced), :mod:`.adjacency` (bit-plane storage), :mod:`.release` (the
typed branch of ``release``), :mod:`.estimators` (typed and weighted counts,
cuts, degrees), :mod:`.balance` (signed triangles), :mod:`.reciprocity`,
:mod:`.typed_io` (the ``typed`` file payload).
"""

from .adjacency import TypedAdjacency
from .encoding import MAX_TIE_VALUES, TieValues, tie_values, value_bits

__all__ = ["MAX_TIE_VALUES", "TieValues", "TypedAdjacency", "tie_values", "value_bits"]
