"""Graph release: a graph is the database of its vertex pairs (K = 2, or K values typed).

The faces of this layer: :func:`release` and :func:`load`, the released graph
:class:`PrivateGraph`, the :class:`~dpgraph.graph.protocol.Release` protocol the
analytics are typed on, the storage protocols (:class:`Adjacency`,
:class:`PackedWords`, :class:`ValuedAdjacency` of a typed release), the declared
tie values of a typed release (:class:`TieValues`) and the public vertex order
(:func:`canonical_node_order`), the packed adjacency (:class:`PackedAdjacency`) and
:class:`ReleaseKind` and :func:`register_kind` (the row of a kind an upper layer
assembles, e.g. a collected release).  For the layers above (baselines, experiments,
planner, command line): the input table's reader (:func:`read_input`,
:func:`encode_graph`), the edge-list reader (:func:`read_table_chunks`,
:func:`source_name`), the signing keys (:func:`signing_key`,
:func:`verify_key`, :func:`public_hex`, :func:`write_key_files`) and the
std of a planned typed cut (:func:`typed_cut_std`); the subsampled
channels of a planned release are the core's
(:func:`dpgraph.core.subsampled_probabilities`).
"""

from . import blockwise as blockwise  # registers the file kind of a pointer to a blockwise store
from .adjacency import Adjacency, PackedWords, ValuedAdjacency
from .answers import NodeEstimates
from .edgelist import read_table_chunks, source_name
from .encoding import NodeIndex, canonical_node_order, encode_graph
from .entry import load, release
from .inputs import read_input
from .io import check_savable
from .kinds import ReleaseKind, register_kind
from .packed import PackedAdjacency
from .private import PrivateGraph
from .protocol import Release
from .signing import key_source, public_hex, signing_key, verify_key, write_key_files
from .sparse import SparseAdjacency
from .typed import TieValues, TypedAdjacency
from .typed.planning import typed_count_std, typed_cut_std

__all__ = [
    "Adjacency",
    "NodeEstimates",
    "NodeIndex",
    "PackedAdjacency",
    "PackedWords",
    "PrivateGraph",
    "Release",
    "ReleaseKind",
    "SparseAdjacency",
    "TieValues",
    "TypedAdjacency",
    "ValuedAdjacency",
    "canonical_node_order",
    "check_savable",
    "encode_graph",
    "key_source",
    "load",
    "public_hex",
    "read_input",
    "read_table_chunks",
    "register_kind",
    "release",
    "signing_key",
    "source_name",
    "typed_count_std",
    "typed_cut_std",
    "verify_key",
    "write_key_files",
]
