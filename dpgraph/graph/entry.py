"""``dpgraph.release``: the entry point a curator calls."""

from __future__ import annotations

import os
from collections.abc import Hashable, Sequence
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any

from .._frames import drops_input_frames
from ..core.degree_fusion import check_share
from ..core.randomness import RandomSource, SecureRandom, SeededRandom, SeedLike
from ..core.transaction import ReleaseTransaction
from ..validation import Boolean, InstanceOf, Integer, Optional, validate_params
from . import kinds
from .encoding import EncodedGraph
from .inputs import GraphInput, public_n, read_input
from .io import read_release, release_type
from .private import PrivateGraph
from .timing import TimePad

if TYPE_CHECKING:
    from ..ledger import PrivacyLedger

__all__ = ["load", "release"]


@validate_params(directed=Boolean(), max_edges=Optional(Integer(minimum=0)),
                 edge_bound=Optional(Integer(minimum=0)))
@drops_input_frames
def release(
    G: GraphInput,
    epsilon: float,
    seed: SeedLike = None,
    *,
    directed: bool = False,
    nodes: Sequence[Hashable] | None = None,
    keep: Real | None = None,
    target_edges: Integral | None = None,
    ledger: PrivacyLedger | None = None,
    max_edges: Integral | None = None,
    edge_attr: Hashable | None = None,
    values: Sequence | None = None,
    bins: Sequence[Real] | None = None,
    edge_bound: Integral | None = None,
    degree_share: Real = 0.0,
) -> PrivateGraph:
    """Release ``G`` as an epsilon-edge-DP synthetic graph (mechanism E).

    Every vertex pair is flipped independently with the certified dyadic
    probability p' >= e^-eps / (1 + e^-eps), so graphs differing in one pair
    give output distributions within a factor e^eps.  The vertex set is
    public; edge and node attributes are dropped.

    Parameters
    ----------
    G : networkx graph, scipy.sparse matrix, edge-list path, DataFrame or (m, 2) edge array
        A simple graph (no self-loops; repeated edges count once), at least 2
        nodes: a networkx ``Graph``/``DiGraph``; a square scipy.sparse
        adjacency matrix (any non-zero entry is an edge); the path or URL of
        a text file with one ``u v`` edge a line (plain or gzip, ``#``
        comments, further columns ignored); a pandas or polars DataFrame or a
        pyarrow Table of edges (the columns ``source`` and ``target`` when it
        has both, else the first two; further columns ignored); or an (m, 2)
        array of edges given by node labels.  Edge attributes (weights,
        further columns) are dropped with a
        :class:`~dpgraph.exceptions.DroppedAttributesWarning`.
    epsilon : float
        Privacy parameter per vertex pair, finite and > 0.
    seed : None, int, numpy.random.Generator, numpy.random.RandomState or random.Random
        ``None`` (default) draws from a cryptographically secure stream keyed
        from OS entropy: use it for every real release.  Anything else makes
        the release reproducible, which is for tests and experiments only (a
        statistical generator can be predicted from its output); see
        :func:`dpgraph.core.resolve_random`.
    directed : bool, default False
        Opt in to releasing a directed graph, one row per ordered pair.
    nodes : int or sequence of node labels, optional
        The public vertex set: the labels, or the number of nodes n for the
        labels 0..n-1.  Required for an edge array, table or file (it is
        never inferred from the edges, which would reveal which nodes have
        none); for a matrix, the labels of its rows (default 0..n-1); for a
        networkx graph, a superset of its nodes (the others are isolated).
    keep : float in (0, 1], optional
        Sparse release: keep each released edge with probability ``keep``
        (rounded to a multiple of 2^-64).  That is post-processing, so the
        privacy guarantee is unchanged; a pair is in the output with
        probability keep (1 - p') if it is an edge and keep p' if not, and the
        estimators use exactly these.  Sampled in O(m + output) time and
        memory, never touching all pairs (see :mod:`dpgraph.graph.sparse`).
    target_edges : int, optional
        Sparse release sized for about ``target_edges`` released edges:
        keep = target_edges / (p' N), chosen from public quantities only.
        At most p' N, what the full release would give.
    ledger : dpgraph.PrivacyLedger, optional
        Charge ``epsilon`` to this privacy budget (see SECURITY.md): one ledger
        is one dataset, whatever graph is passed.  A release that would exceed
        it raises :class:`dpgraph.BudgetExceededError`
        before any randomness is drawn.
    max_edges : int, optional
        Constant-time mode: a public bound on the number of edges.  The call
        first times releases of a public input of the same kind with
        ``max_edges`` uniform edges, then pads the real release to twice the
        slowest, so its duration reveals neither m nor where the edges are
        (see :mod:`dpgraph.graph.timing`; 4 to 5 times slower).  An input
        with more edges is refused before anything is charged.
    edge_attr : hashable, optional
        A typed release: the edge attribute holding each tie's value.  Every
        pair then holds one value of the public universe {no tie, *values*}
        and is released by K-ary mechanism E (K = len(values) + 1): whether a
        tie exists and of which kind are protected together, at epsilon per
        pair.  Needs a networkx graph; see docs/typed-graphs.md.  With
        ``keep`` or ``target_edges``, a sparse typed release (each released
        tie kept with probability keep, stored in CSR form with its value).
    values : sequence, optional
        The tie values, declared by the curator in advance (never read from
        the data).  A tie whose value is not declared is refused (the error
        does not show it).
    bins : sequence of float, optional
        For a numeric ``edge_attr``: bin edges b_0 < ... < b_k; tie value i
        is [b_i, b_{i+1}) (the last bin closed).  ``values`` then names the
        bins (default: their intervals).
    degree_share : float in [0, 1), default 0
        A composed release: (1 - s) epsilon on the pairs and s epsilon on
        every node's degree (out- and in-degrees if directed), released with
        certified discrete Laplace noise of sensitivity 2; epsilon is charged
        once.  The degree, volume, cut and edge-count estimators then fuse
        both (:mod:`dpgraph.graph.degree_channel`); ``R.epsilon`` is the
        pairs' part and ``R.degree_channel`` holds the rest.  0 (default) is
        mechanism E alone.  Dense untyped releases only.
    edge_bound : int, optional
        A public bound on the number of edges (ties), declared by the
        curator, used only to size a sparse release's memory before
        anything is read or charged.  Without it the size check assumes
        the worst case (every pair an edge).  Memory is never sized from
        the input's own edge count: a refusal is an output, and one that
        depended on the data would tell neighbouring graphs apart.  A graph
        with more edges than the bound is still released (refusing it would
        depend on the data); its output may then need more memory than was
        checked.  ``max_edges`` (the constant-time mode) bounds it too.

    Returns
    -------
    PrivateGraph
        Bit-packed adjacency for the full release, CSR
        (:class:`~dpgraph.graph.sparse.SparseAdjacency`) for a sparse one.

    Raises
    ------
    MemoryError
        Before encoding ``G`` or allocating, if the release cannot fit in the
        memory available now (the message says how much it needs and has).

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> R = dpgraph.release(nx.karate_club_graph(), epsilon=1.0, seed=0)
    >>> R.number_of_nodes(), R.directed
    (34, False)

    A sparse release with about 30 released non-edges (plus the kept true edges):

    >>> S = dpgraph.release(nx.karate_club_graph(), epsilon=1.0, seed=0, target_edges=30)
    >>> 10 < S.number_of_released_edges() < 60, round(S.keep, 3)
    (True, 0.199)

    An edge array with its public vertex set (node 4 has no edge):

    >>> import numpy as np
    >>> E = dpgraph.release(np.array([[0, 1], [1, 2], [2, 3]]), epsilon=1.0, seed=0, nodes=range(5))
    >>> E.nodes
    NodeView((0, 1, 2, 3, 4))

    A typed release (signed ties):

    >>> G = nx.Graph([(0, 1, {"sign": "+"}), (1, 2, {"sign": "-"})])
    >>> T = dpgraph.release(G, epsilon=2.0, seed=0, edge_attr="sign", values=["+", "-"])
    >>> T.tie_values.K
    3
    """
    share = check_share(degree_share)
    typed = edge_attr is not None or values is not None or bins is not None
    row = kinds.row_for(typed=typed, sparse=keep is not None or target_edges is not None)
    if share:  # the row says which channels its release composes with
        kinds.refuse_channel(row, "degrees")
        if max_edges is not None:
            raise ValueError("degree_share > 0 with max_edges: the constant-time release draws "
                             "the pairs only; drop max_edges or use degree_share=0")
    if typed:
        from .typed.release import typed_release

        parts = typed_release(G, epsilon, seed, directed=directed, nodes=nodes, ledger=ledger,
                              edge_attr=edge_attr, values=values, bins=bins, keep=keep,
                              target_edges=target_edges, max_edges=max_edges,
                              edge_bound=edge_bound)
        return PrivateGraph(parts.adjacency, parts.index, parts.probabilities, parts.channel,
                            parts.keep, tie_values=parts.tie_values)
    tx = ReleaseTransaction(epsilon, K=2, seed=seed, ledger=ledger, laplace_share=share)
    rr = tx.probabilities
    # every size from public quantities alone (n, epsilon, keep, the declared bound), before
    # the input is read and before the charge: never from the input's edges
    bound = edge_bound if max_edges is None else \
        max_edges if edge_bound is None else min(edge_bound, max_edges)
    checked: dict[int, Any] = {}

    def check(n: int) -> Any:
        if n not in checked:
            checked[n] = kinds.check(row, rr, n, directed, keep, target_edges, bound)
        return checked[n]

    n = public_n(G, nodes)
    if isinstance(n, int) and n >= 2:
        check(n)

    def prepare(H: Any, v: Any) -> tuple[EncodedGraph, Any, Any]:
        enc = read_input(H, directed=directed, nodes=v)
        plan = check(enc.n)  # n was public; known now if the arguments did not say it
        # what grows with the edges is allocated with the input, before the charge
        return enc, row.mechanics.prepare(enc, None, plan), plan

    pad = None
    if max_edges is not None:  # time a public input with max_edges edges first (timing.py)
        pad = TimePad(max_edges, lambda H, v: row.mechanics.sample(
            *prepare(H, v)[1:], rr, _throwaway(tx.secure)), G, nodes, directed)
    enc, data, plan = prepare(G, nodes)
    if pad is not None:
        pad.check(enc.rows.size)
    # every input is validated above: charge, warn about a seed, then sample (kinds.run)
    made = kinds.run(row, tx, enc, data, plan, share)
    R = PrivateGraph(made.adjacency, enc.index, rr, channel=made.channel, keep=made.keep,
                     degree_channel=made.degree_channel)
    if pad is not None:
        pad.finish()
    return R


def _throwaway(secure: bool) -> RandomSource:
    """A fresh stream of the same kind (and cost) as the release's, for a calibration."""
    return SecureRandom() if secure else SeededRandom(0)


@validate_params(path=InstanceOf(str, os.PathLike, what="a str or os.PathLike",
                                 example="release.dpg"))
def load(path: str | os.PathLike, *, verify_key: Any = None) -> PrivateGraph:
    """Read a PrivateGraph written by :meth:`PrivateGraph.save`.

    Never executes code from the file.  Checks the magic bytes, the format
    version, the header size against the declared n (before parsing it, with
    limits on nesting and number length), the sizes, the SHA-256 digest, the
    signature when ``verify_key`` is given, the header fields, that the flip
    probability is certified epsilon-DP, that keep and the channel are
    exactly those of the certified numerators, and that no bit lies outside
    the vertex pairs of the graph.

    Parameters
    ----------
    path : str or os.PathLike
    verify_key : Ed25519PublicKey, bytes, str or os.PathLike, optional
        The curator's public key: the object, its raw 32 bytes, or the path
        of the ``PREFIX.pub`` file of ``dpgraph keygen``.  When given, the
        file must carry a valid signature by this key: an unsigned file, a
        file signed by another key, or any changed byte is refused.

    Returns
    -------
    PrivateGraph

    Raises
    ------
    ValueError
        For a foreign, truncated, corrupted, inconsistent, unsigned (when
        ``verify_key`` is given) or version-mismatched file, or a directory;
        the message says which check failed.
    FileNotFoundError
        If ``path`` does not exist.

    Examples
    --------
    >>> import networkx as nx, dpgraph, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "p.dpg")
    >>> dpgraph.release(nx.path_graph(5), epsilon=2.0, seed=1).save(path)
    >>> R = load(path)
    >>> R.nodes, R.epsilon
    (NodeView((0, 1, 2, 3, 4)), 2.0)
    """
    parts = read_release(path, verify_key=verify_key)
    return release_type(parts.adjacency, PrivateGraph)(*parts)
