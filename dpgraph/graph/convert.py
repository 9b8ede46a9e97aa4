"""The released graph as data: networkx, scipy.sparse, edge-list text, edge blocks; their sizes.

Every export reads the release in row blocks (:func:`edge_blocks`), so what
it holds besides its output is bounded by a block, and :func:`csr_bytes`,
:func:`networkx_bytes` and :func:`edgelist_bytes` say what the output will
take before anything is built (``PrivateGraph.to_*`` refuse what cannot fit).

networkx
--------

``Graph.add_edges_from`` spends most of its time per edge in Python (a tuple,
a lookup, an attribute-dict update for each of the millions of released
edges).  Here the edges are sorted by endpoint once with numpy and every
node's neighbour dict is filled by one ``dict.update(zip(...))`` at C speed.
The result is the graph ``add_edges_from`` would build: the same nodes and
edges, one fresh attribute dict per edge, shared by its two directions
(``H[u][v] is H[v][u]`` for an undirected graph, ``H.succ[u][v] is
H.pred[v][u]`` for a directed one), so it behaves like any networkx graph.

Edge-list text
--------------

:func:`write_edge_lines` formats a block of edges at a time, never a Python
string per line.  With numba, a compiled loop copies each line's label bytes
(one pool of UTF-8 bytes, offsets by node) into the block's buffer (blocks of
2^18 lines or more: below, loading the compiled code costs more than it
saves).  Otherwise numpy: every label's UTF-8 bytes sit in a row of a table
padded to whole 64-bit words past the longest label (gathers of words are
several times faster than of odd-sized items), a block's lines are laid out
as fixed-width records of words (row label, delimiter, column label,
newline) beside a mask of the same shape, and one boolean compress drops
the padding.  The bytes are those of
``f"{u}{delimiter}{v}\\n"`` line by line.

:func:`write_edgelist` (``PrivateGraph.to_edgelist``) goes further for an
in-memory packed or CSR release of 2^18 edges or more, with numba: one
compiled loop lists a row block's pairs and writes their lines (no position
arrays), blocks of about 2^22 vertex pairs (CSR: 2^18 stored pairs) run on
two threads (the loop releases the GIL) and are written in order by the
calling thread, so listing, formatting and writing overlap.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from operator import itemgetter
from typing import Any

import networkx as nx
import numpy as np

__all__ = [
    "blocks_to_networkx",
    "csr_bytes",
    "edge_blocks",
    "edgelist_bytes",
    "edges_to_networkx",
    "label_pool",
    "networkx_bytes",
    "to_csr",
    "write_edge_lines",
    "write_edgelist",
]

_BLOCK = 1 << 22  # edges per block (bounds the temporary lists; larger blocks measured faster)
#: vertex pairs per row block read from a packed or stored adjacency (16 MiB of bits unpacked)
BLOCK_PAIRS = 1 << 24
#: bytes of temporaries per edge of a block: positions, sort order, placement (measured < 60)
_BLOCK_EDGE_BYTES = 64
#: networkx's memory (tracemalloc, networkx 3.x, CPython 3.11): a node's dicts ~ 265-315 bytes;
#: an edge (two neighbour entries, one attribute dict) 125-215 bytes at average degree 40, more
#: at small degree (dict slack); integer labels cost most (one int object per entry)
_NX_NODE_BYTES = 330
_NX_EDGE_BYTES = 260


def _sort_key(keys: np.ndarray, n: int) -> np.ndarray:
    """``keys`` in the narrowest unsigned type: numpy's stable sort is then a radix sort."""
    for dtype in (np.uint8, np.uint16):
        if n <= np.iinfo(dtype).max:
            return keys.astype(dtype)
    return keys


def _fill(adj: dict, nodes: Sequence, as_labels, keys: np.ndarray, others: np.ndarray, dicts: Sequence) -> None:
    """adj[nodes[keys[j]]][label of others[j]] = dicts[j]; ``keys`` sorted."""
    if keys.size == 0:
        return
    neighbours = as_labels(others)
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    ends = np.r_[starts[1:], keys.size]
    for k, a, b in zip(keys[starts].tolist(), starts.tolist(), ends.tolist()):
        adj[nodes[k]].update(zip(neighbours[a:b], dicts[a:b]))


def edge_blocks(adjacency: Any, block_pairs: int | None = None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Row-major blocks (rows, cols) of the stored pairs' positions, int64.

    A CSR adjacency is sliced by rows (at most ``block_pairs`` pairs a
    block, default :data:`BLOCK_PAIRS`); any other is read through
    ``row_blocks`` with about ``block_pairs`` vertex pairs a block.  Undirected: each pair once,
    rows < cols.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> R = dpgraph.release(nx.path_graph(4), epsilon=8.0, seed=1)
    >>> [(r.tolist(), c.tolist()) for r, c in edge_blocks(R.adjacency)]
    [([0, 1, 2], [1, 2, 3])]
    """
    n = int(adjacency.n)
    block_pairs = BLOCK_PAIRS if block_pairs is None else int(block_pairs)
    indptr = getattr(adjacency, "indptr", None)
    indices = getattr(adjacency, "indices", None)
    if indptr is not None and indices is not None:  # CSR: slice it, never densify rows
        i0 = 0
        while i0 < n:
            stop = int(np.searchsorted(indptr, indptr[i0] + block_pairs, side="right")) - 1
            i1 = min(n, max(i0 + 1, stop))
            a, b = int(indptr[i0]), int(indptr[i1])
            rows = np.repeat(np.arange(i0, i1, dtype=np.int64), np.diff(indptr[i0 : i1 + 1]))
            yield rows, indices[a:b].astype(np.int64)
            i0 = i1
        return
    from .packed import PackedAdjacency

    b = max(1, block_pairs // max(n, 1))
    # only an in-memory packed matrix: a store's ``words`` would read the whole store
    words = adjacency.words if isinstance(adjacency, PackedAdjacency) else None
    kernel = _edge_kernel() if words is not None and words.size * 64 >= _COMPILED_BITS else None
    if kernel is not None:  # packed rows: list their set bits, never unpack the zeros
        for i0 in range(0, n, b):
            w = words[i0 : i0 + b]
            m = int(np.bitwise_count(w).sum(dtype=np.int64))
            rows, cols = np.empty(m, dtype=np.int64), np.empty(m, dtype=np.int64)
            kernel(w, i0, n, rows, cols)
            yield rows, cols
        return
    for i0, bits in adjacency.row_blocks(b):
        flat = np.flatnonzero(bits)  # one index array, split by division: faster than 2-D nonzero
        rows = flat // n
        yield rows + i0, flat - rows * n


_KERNELS: dict[str, Any] = {}
#: a packed release of at least this many bits is listed by the compiled loop (see _COMPILED_LINES)
_COMPILED_BITS = 1 << 26


def _kernel(name: str, warm: Any) -> Any:
    """The compiled ``name`` of :mod:`._edgekernel`, or None (numba off or failing: numpy's path).

    Called once on a tiny input first: numba loads its cached machine code at
    the first call, which can fail where the import did not (e.g. under an
    address-space limit); any failure means numpy's path, for the process.
    """
    if name not in _KERNELS:
        from .._numba import load_kernels

        kernels = load_kernels("dpgraph.graph._edgekernel", (name,))
        fn = None if kernels is None else kernels[0]
        if fn is not None:
            try:
                warm(fn)
            except Exception:  # any failure of the compiled path: use numpy's
                fn = None
        _KERNELS[name] = fn
    return _KERNELS[name]


def _edge_kernel() -> Any:
    """The compiled set-bit lister of :mod:`._edgekernel`, or None."""
    one = np.ones((1, 1), dtype=np.uint64)
    return _kernel("packed_edges", lambda f: f(one, 0, 1, np.empty(1, np.int64), np.empty(1, np.int64)))


def _text_kernel() -> Any:
    """The compiled line formatter of :mod:`._edgekernel`, or None."""
    b, i = np.zeros(2, dtype=np.uint8), np.zeros(1, dtype=np.int64)
    return _kernel("format_lines", lambda f: f(b, i, i, i, i, b[:1], np.empty(8, dtype=np.uint8)))


def _block_temporaries(n: int, m: int, directed: bool) -> int:
    """Bytes one row block of :func:`edge_blocks` holds while it is used."""
    pairs = max(n, BLOCK_PAIRS)
    total = n * (n - 1) if directed else n * (n - 1) // 2
    edges = min(m, int(pairs * min(1.0, 2.0 * m / max(total, 1))) + n)  # a block of average density
    return 3 * pairs + _BLOCK_EDGE_BYTES * edges


def csr_bytes(n: int, m: int, directed: bool, format: str = "csr") -> int:
    """Peak bytes of :func:`to_csr` (and a conversion to ``format``) for m released edges.

    The output: int8 data, int32 indices and row pointers (int64 past 2^31
    entries; the pointers are built in int64 first); plus one row block.  Other formats: the copy a conversion
    makes (``coo`` adds row indices; ``lil``/``dok`` are Python objects per
    entry; ``dia`` is bounded by n^2).
    """
    nnz = m if directed else 2 * m
    width = 4 if max(n, nnz) < 2**31 else 8
    out = nnz * (width + 1) + 8 * (n + 1)
    extra = {"csr": 0, "csc": out, "bsr": out, "coo": out + nnz * width,
             "lil": nnz * 48 + n * 120, "dok": nnz * 160, "dia": n * n}.get(format, out)
    return out + extra + 16 * n + _block_temporaries(n, m, directed)


def networkx_bytes(n: int, m: int) -> int:
    """Bytes a networkx graph of n nodes and m edges takes, built by :func:`blocks_to_networkx`."""
    return _NX_NODE_BYTES * n + _NX_EDGE_BYTES * m + 100 * min(m, _BLOCK)


def label_pool(labels: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(UTF-8 bytes of all labels, each one's first byte, each one's length in bytes).

    Examples
    --------
    >>> [x.tolist() for x in label_pool(["a", "bc", "é"])]
    [[97, 98, 99, 195, 169], [0, 1, 3], [1, 2, 2]]
    """
    text = "".join(labels)
    if text.isascii():  # one byte a character: lengths and bytes without a loop of encodes
        lens = np.fromiter(map(len, labels), dtype=np.int64, count=len(labels))
        flat = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    else:
        enc = [t.encode("utf-8") for t in labels]
        lens = np.fromiter(map(len, enc), dtype=np.int64, count=len(enc))
        flat = np.frombuffer(b"".join(enc), dtype=np.uint8)
    return flat, np.cumsum(lens) - lens, lens


def edgelist_bytes(labels: Sequence[str], degrees: np.ndarray, m: int, delimiter: str,
                   directed: bool) -> int:
    """Bytes of the text ``to_edgelist`` writes (exact for an undirected release).

    Label i appears on deg(i) lines of an undirected release; a directed
    one is bounded with the longest label at both ends.
    """
    lengths = label_pool(labels)[2]
    tail = m * (len(delimiter.encode("utf-8")) + 1) + 200  # delimiters, newlines, the comment line
    if directed:
        return int(2 * m * (lengths.max(initial=0))) + tail
    return int(np.dot(np.asarray(degrees, dtype=np.int64), lengths)) + tail


def _place(indices: np.ndarray, fill: np.ndarray, keys: np.ndarray, vals: np.ndarray) -> None:
    """indices[fill[k] ...] = the vals of key k, for the groups of a sorted ``keys``; advance fill."""
    if keys.size == 0:
        return
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    counts = np.diff(np.r_[starts, keys.size])
    first = keys[starts]
    offset = np.arange(keys.size, dtype=np.int64) - np.repeat(starts, counts)
    indices[fill[keys] + offset] = vals
    fill[first] += counts


def to_csr(adjacency: Any, format: str = "csr") -> Any:
    """The adjacency as a scipy sparse array, built in one pass over row blocks.

    Symmetric for an undirected release (each pair in both rows), rows
    follow positions; int8 data.  The column indices are written straight
    into place: a node's lower neighbours arrive, in order, from the rows
    before its own, its upper ones from its own row, so every row comes out
    sorted without a sort of the whole matrix.

    Examples
    --------
    >>> import networkx as nx, dpgraph
    >>> R = dpgraph.release(nx.path_graph(3), epsilon=8.0, seed=1)
    >>> to_csr(R.adjacency).toarray().tolist()
    [[0, 1, 0], [1, 0, 1], [0, 1, 0]]
    """
    import scipy.sparse as sp

    n, directed = int(adjacency.n), bool(adjacency.directed)
    deg = np.asarray(adjacency.degrees(), dtype=np.int64)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(deg, out=indptr[1:])
    nnz = int(indptr[-1])
    indices = np.empty(nnz, dtype=np.int32 if max(n, nnz) < 2**31 else np.int64)
    fill = indptr[:-1].copy()
    for r, c in edge_blocks(adjacency):
        if not directed:  # lower neighbours first: (c, r) sorted by c, r ascending within
            order = np.argsort(c, kind="stable")
            _place(indices, fill, c[order], r[order])
            del order
        _place(indices, fill, r, c)
    data = np.ones(nnz, dtype=np.int8)
    # one index dtype for both: scipy otherwise upcasts the indices to int64, a copy of
    # 8 bytes an entry (5 GiB at 6.7 x 10^8 entries) that csr_bytes does not count
    A = sp.csr_array((data, indices, indptr.astype(indices.dtype, copy=False)), shape=(n, n),
                     copy=False)
    A.has_sorted_indices = True
    return A if format == "csr" else A.asformat(format)


def edges_to_networkx(nodes: Sequence, rows: np.ndarray, cols: np.ndarray, directed: bool) -> nx.Graph:
    """A networkx (Di)Graph on ``nodes`` with edges (nodes[rows[k]], nodes[cols[k]]).

    Parameters
    ----------
    nodes : sequence of hashable
        Node labels; positions index into it.
    rows, cols : numpy.ndarray of int
        Edge endpoints as positions, row-major (``rows`` sorted); each
        undirected edge once; no self-loops.
    directed : bool

    Returns
    -------
    networkx.Graph or networkx.DiGraph

    Examples
    --------
    >>> H = edges_to_networkx(["a", "b", "c"], np.array([0, 1]), np.array([1, 2]), False)
    >>> sorted(H.edges()), H["a"]["b"] is H["b"]["a"]
    ([('a', 'b'), ('b', 'c')], True)
    """
    n = len(nodes)
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    if rows.size > 1 and np.any(rows[1:] < rows[:-1]):
        order = np.argsort(_sort_key(rows, n), kind="stable")
        rows, cols = rows[order], cols[order]
    return blocks_to_networkx(nodes, [(rows, cols)], directed)


def blocks_to_networkx(nodes: Sequence, blocks: Iterable[tuple[np.ndarray, np.ndarray]],
                       directed: bool) -> nx.Graph:
    """A networkx (Di)Graph on ``nodes`` from row-major blocks of edge positions.

    Like :func:`edges_to_networkx`, for edges that arrive block by block
    (:func:`edge_blocks`): the blocks, concatenated, are row-major, each
    undirected edge once, no self-loops.  Only one block is held at a time
    besides the graph.
    """
    H = nx.DiGraph() if directed else nx.Graph()
    nodes = tuple(nodes)
    H.add_nodes_from(nodes)
    n = len(nodes)
    if all(type(v) is int for v in nodes) and nodes == tuple(range(n)):
        as_labels = np.ndarray.tolist  # labels 0..n-1 are the positions
    else:
        objects = np.empty(n, dtype=object)  # element-wise: tuple labels stay whole
        for i, v in enumerate(nodes):
            objects[i] = v
        as_labels = lambda pos: objects[pos].tolist()
    # networkx's own storage, filled as add_edges_from fills it and in the same
    # neighbour order, a block of row-major edges at a time (blocks only bound
    # the temporary lists: fewer, larger updates measured faster): in-neighbours
    # (the lower half if undirected) from the block sorted by column, then
    # out-neighbours (the upper half) from the block as it is, both sharing each
    # edge's new attribute dict.  A node's lower neighbours all come from blocks
    # up to its own row, before its upper ones.
    by_row, by_col = (H._succ, H._pred) if directed else (H._adj, H._adj)
    for rows, cols in blocks:
        rows = np.asarray(rows, dtype=np.int64)
        cols = np.asarray(cols, dtype=np.int64)
        for a in range(0, rows.size, _BLOCK):
            r, c = rows[a : a + _BLOCK], cols[a : a + _BLOCK]
            dicts = [{} for _ in range(r.size)]
            order = np.argsort(_sort_key(c, n), kind="stable")
            by_col_dicts = itemgetter(*order.tolist())(dicts) if r.size > 1 else dicts  # C-speed gather
            _fill(by_col, nodes, as_labels, c[order], r[order], by_col_dicts)
            _fill(by_row, nodes, as_labels, r, c, dicts)
    return H


#: bytes of a block's fixed-width records (text and mask): bounds what a block of lines holds
_TEXT_BLOCK = 1 << 24
#: the label table (n x longest label) is built only below this size or 4x the labels' own bytes
_TABLE_CAP = 1 << 27
#: a block of at least this many lines is formatted by the compiled loop (numba's first call loads
#: its machine code, about a second: numpy formats a smaller block in less)
_COMPILED_LINES = 1 << 18


def _format_lines(labels: Sequence[str], delimiter: str, blocks: Iterable[tuple[np.ndarray, np.ndarray]],
                  ) -> Iterator[Any]:
    """Buffers of ``f"{labels[i]}{delimiter}{labels[j]}\\n"`` for the pairs (i, j) of ``blocks``, in order."""
    enc = [t.encode("utf-8") for t in labels]
    n = len(enc)
    lens = np.fromiter(map(len, enc), dtype=np.int64, count=n)
    W = max(1, int(lens.max(initial=0)))
    flat = np.frombuffer(b"".join(enc), dtype=np.uint8)
    starts = np.cumsum(lens) - lens
    d = delimiter.encode("utf-8")
    words = None  # numpy's layout, built when a first block is formatted by numpy
    for rows, cols in blocks:
        kernel = _text_kernel() if rows.size >= _COMPILED_LINES else None
        if kernel is not None:  # compiled: each line's bytes copied straight into the block's buffer
            delim = np.frombuffer(d, dtype=np.uint8)
            per = max(1, _TEXT_BLOCK // (2 * W + len(d) + 1))
            for a in range(0, rows.size, per):
                r, c = rows[a : a + per], cols[a : a + per]
                out = np.empty(int(lens[r].sum() + lens[c].sum()) + r.size * (len(d) + 1), dtype=np.uint8)
                kernel(flat, starts, lens, r, c, delim, out)
                yield out
            continue
        if n * W > max(_TABLE_CAP, 4 * int(lens.sum())):  # a few very long labels: line by line
            for a in range(0, rows.size, 1 << 16):
                yield "".join(f"{labels[i]}{delimiter}{labels[j]}\n" for i, j in
                              zip(rows[a : a + (1 << 16)].tolist(), cols[a : a + (1 << 16)].tolist())
                              ).encode("utf-8")
            continue
        if words is None:
            words = _word_layout(flat, starts, lens, W, d)
        yield from _numpy_lines(rows, cols, *words)


def _word_layout(flat: np.ndarray, starts: np.ndarray, lens: np.ndarray, W: int, d: bytes) -> tuple:
    """numpy's layout of the labels: (text, mask, tail, tail mask, Q, E) in 64-bit words."""
    n = lens.size
    Q = -(-W // 8)  # a label's words
    table = np.zeros((n, 8 * Q), dtype=np.uint8)
    table[np.repeat(np.arange(n), lens), np.arange(flat.size) - np.repeat(starts, lens)] = flat
    shown = (np.arange(8 * Q) < lens[:, None]).view(np.uint8)
    E = -(-len(d) // 8)
    tail = np.zeros(8 * (E + 1), dtype=np.uint8)  # the delimiter's words, then the newline's
    tail[: len(d)], tail[8 * E] = np.frombuffer(d, dtype=np.uint8), 10
    tail_shown = np.zeros(8 * (E + 1), dtype=np.uint8)
    tail_shown[: len(d)], tail_shown[8 * E] = 1, 1
    return (table.view(np.uint64), shown.view(np.uint64), tail.view(np.uint64),
            tail_shown.view(np.uint64), Q, E)


def _numpy_lines(rows: np.ndarray, cols: np.ndarray, text: np.ndarray, mask: np.ndarray,
                 tail: np.ndarray, tail_shown: np.ndarray, Q: int, E: int) -> Iterator[np.ndarray]:
    """The lines of (rows, cols) as records of words (u, delimiter, v, newline), padding dropped."""
    width = 2 * Q + E + 1  # words of a record
    per = max(1, _TEXT_BLOCK // (16 * width))
    for a in range(0, rows.size, per):
        r, c = rows[a : a + per], cols[a : a + per]
        out = np.empty((r.size, width), dtype=np.uint64)
        keep = np.empty((r.size, width), dtype=np.uint64)
        for dst, src in ((out, text), (keep, mask)):  # gathers of whole words
            dst[:, :Q] = src[r]
            dst[:, Q + E : 2 * Q + E] = src[c]
        out[:, Q : Q + E], out[:, -1] = tail[:E], tail[E]
        keep[:, Q : Q + E], keep[:, -1] = tail_shown[:E], tail_shown[E]
        yield out.view(np.uint8)[keep.view(bool)]


#: vertex pairs (packed) or stored pairs (CSR) of a block of the direct writer
_DIRECT_PAIRS, _DIRECT_STORED = 1 << 22, 1 << 18


def _direct_tasks(adjacency: Any, pool: tuple, delim: np.ndarray, per_line: int) -> Any:
    """The direct writer's blocks, as calls returning each block's text (None: not applicable)."""
    from .packed import PackedAdjacency

    flat, starts, lens = pool
    n = int(adjacency.n)
    indptr = getattr(adjacency, "indptr", None)
    indices = getattr(adjacency, "indices", None)
    if indptr is not None and indices is not None:
        kernel = _kernel("csr_lines", lambda f: f(np.zeros(2, np.int64), np.zeros(1, np.int64), 0, 1,
                                                 flat, starts, lens, delim,
                                                 np.empty(per_line, dtype=np.uint8)))
        if kernel is None:
            return None
        ptr = np.asarray(indptr, dtype=np.int64)
        bounds = [0]
        while bounds[-1] < n:
            i0 = bounds[-1]
            stop = int(np.searchsorted(ptr, ptr[i0] + _DIRECT_STORED, side="right")) - 1
            bounds.append(min(n, max(i0 + 1, stop)))

        def csr_block(i0: int, i1: int) -> np.ndarray:
            out = np.empty(int(ptr[i1] - ptr[i0]) * per_line, dtype=np.uint8)
            return out[: kernel(ptr, indices, i0, i1, flat, starts, lens, delim, out)]

        return [(csr_block, a, b) for a, b in itertools.pairwise(bounds)]
    if not isinstance(adjacency, PackedAdjacency):
        return None
    kernel = _kernel("packed_lines", lambda f: f(np.zeros((1, 1), np.uint64), 0, flat, starts, lens,
                                                delim, np.empty(per_line, dtype=np.uint8)))
    if kernel is None:
        return None
    words = adjacency.words
    b = max(1, _DIRECT_PAIRS // max(n, 1))

    def packed_block(i0: int, i1: int) -> np.ndarray:
        w = words[i0:i1]
        out = np.empty(int(np.bitwise_count(w).sum(dtype=np.int64)) * per_line, dtype=np.uint8)
        return out[: kernel(w, i0, flat, starts, lens, delim, out)]

    return [(packed_block, i0, min(n, i0 + b)) for i0 in range(0, n, b)]


def write_edgelist(fh: Any, labels: Sequence[str], adjacency: Any, delimiter: str = " ",
                   edges: int | None = None) -> None:
    """Write the lines of every stored pair of ``adjacency`` (each unordered pair once) to ``fh``.

    The bytes of :func:`write_edge_lines` over :func:`edge_blocks`; for an
    in-memory packed or CSR adjacency of at least 2^18 ``edges`` with numba,
    the direct writer of the module's notes (compiled, two threads, blocks
    written in order).

    Examples
    --------
    >>> import io, networkx as nx, dpgraph
    >>> R = dpgraph.release(nx.path_graph(3), epsilon=8.0, seed=1)
    >>> fh = io.BytesIO()
    >>> write_edgelist(fh, ["a", "b", "c"], R.adjacency)
    >>> fh.getvalue()
    b'a b\\nb c\\n'
    """
    tasks = None
    if edges is not None and edges >= _COMPILED_LINES:
        pool = label_pool(labels)
        delim = np.frombuffer(delimiter.encode("utf-8"), dtype=np.uint8)
        per_line = 2 * int(pool[2].max(initial=1)) + delim.size + 1
        tasks = _direct_tasks(adjacency, pool, delim, per_line)
    if tasks is None:
        write_edge_lines(fh, labels, edge_blocks(adjacency), delimiter)
        return
    from collections import deque
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=2) as pool:
        pending: deque = deque()
        for task in tasks:
            pending.append(pool.submit(*task))
            if len(pending) >= 4:  # two blocks a thread in flight: bounded memory
                fh.write(memoryview(pending.popleft().result()))
        while pending:
            fh.write(memoryview(pending.popleft().result()))


def write_edge_lines(fh: Any, labels: Sequence[str], blocks: Iterable[tuple[np.ndarray, np.ndarray]],
                     delimiter: str = " ") -> None:
    """Write ``f"{labels[i]}{delimiter}{labels[j]}\\n"`` for every pair of ``blocks`` to a binary file.

    Formats a block of lines at a time in numpy (see the module's notes);
    the bytes are those of the line-by-line f-string, UTF-8 encoded.

    Parameters
    ----------
    fh : binary file
        Open for writing bytes.
    labels : sequence of str
        The text of node i's label is ``labels[i]``.
    blocks : iterable of (rows, cols)
        Integer position arrays (e.g. :func:`edge_blocks`), written in order.
    delimiter : str, default " "

    Examples
    --------
    >>> import io
    >>> fh = io.BytesIO()
    >>> write_edge_lines(fh, ["a", "bb", "ccc"], [(np.array([0, 1]), np.array([2, 2]))])
    >>> fh.getvalue()
    b'a ccc\\nbb ccc\\n'
    """
    for buf in _format_lines(labels, delimiter, blocks):
        fh.write(memoryview(buf))
