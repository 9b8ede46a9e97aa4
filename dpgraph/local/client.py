"""The client: one user randomizes their own adjacency row, on their own device.

:func:`client_report` is all a device runs.  It needs the public vertex set
(or its size), the user's own neighbours and the public protocol; it never
sees anyone else's data, and what it sends carries no true bit.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any

import numpy as np

from ..core import ReleaseTransaction, discrete_laplace, sampling
from ..graph import NodeIndex, canonical_node_order
from . import wire
from .assignment import partners

__all__ = ["budget_split", "client_report", "public_index"]


def public_index(nodes: Any) -> NodeIndex:
    """The public order of a vertex set: an int n (labels 0..n-1) or the labels.

    The labels are put in dpgraph's canonical order, the same on every
    device and at the collector; a client in another language receives the
    ordered list from the curator instead.
    """
    if isinstance(nodes, (int, np.integer)) and not isinstance(nodes, bool):
        if not 2 <= int(nodes) <= wire.MAX_NODES:
            raise ValueError(f"nodes: a vertex set of {int(nodes)} nodes; give 2 to "
                             f"{wire.MAX_NODES} nodes")
        return NodeIndex.from_integers(np.arange(int(nodes)))
    if isinstance(nodes, (str, bytes)) or not isinstance(nodes, Iterable):
        raise TypeError("nodes must be the public vertex set (a collection of labels) or its "
                        f"size as an int, got {type(nodes).__name__}")
    labels = canonical_node_order(nodes)
    if not 2 <= len(labels) <= wire.MAX_NODES:
        raise ValueError(f"nodes: a vertex set of {len(labels)} nodes; give at least 2")
    return NodeIndex(labels)


def budget_split(epsilon: float, degree_share: float) -> tuple[float, float]:
    """(epsilon of the bits, epsilon of the degree) of a user's budget.

    Examples
    --------
    >>> budget_split(2.0, 0.25)
    (1.5, 0.5)
    """
    if isinstance(degree_share, bool) or not isinstance(degree_share, (int, float)) \
            or not 0.0 <= float(degree_share) < 1.0:
        raise ValueError(f"degree_share must be a number in [0, 1), got {degree_share!r}; "
                         "0 sends no degree")
    eps = float(epsilon)
    share = float(degree_share)
    return eps * (1.0 - share), eps * share


def check_protocol(protocol: Any) -> str:
    """The protocol name, refused with the choices when unknown."""
    if protocol not in wire.PROTOCOLS:
        raise ValueError(f"protocol must be 'one' or 'both', got {protocol!r}")
    return protocol


def client_report(user: Hashable, neighbours: Iterable[Hashable], nodes: Any, epsilon: float,
                  protocol: str = "one", degree_share: float = 0.0, seed: Any = None) -> bytes:
    """One user's randomized report: eps-edge-LDP for that user's row.

    The user flips each bit of the pairs they report (see
    :mod:`dpgraph.local.assignment`) with the certified probability of
    randomized response at epsilon (1 - degree_share), exactly as the central
    release does (:func:`dpgraph.core.rr_probabilities`, drawn by
    :func:`dpgraph.core.sampling.bernoulli_words`: no float decides a flip).
    With ``degree_share > 0`` the report also carries the user's degree plus
    certified discrete Laplace noise at epsilon * degree_share (sensitivity 1:
    one neighbour more or less moves the degree by one).  The two parts
    compose: the report is epsilon-edge-LDP (changing one neighbour changes
    the report's distribution by at most e^epsilon).

    Parameters
    ----------
    user : node
        The reporting user, a node of ``nodes``.
    neighbours : collection of nodes
        The user's true neighbours (the user itself is refused).
    nodes : int or collection of nodes
        The public vertex set (labels put in canonical order), or its size n
        (labels 0..n-1).
    epsilon : float
        The user's whole privacy budget, finite and > 0.
    protocol : {"one", "both"}, default "one"
        The public protocol: each pair reported by one endpoint, or by both.
    degree_share : float in [0, 1), default 0
        The part of epsilon spent on a noisy degree (0: no degree is sent).
    seed : None or int, optional
        None (default): the secure stream, the only choice for a real
        device.  A seed makes the report reproducible and therefore
        predictable (tests only) and warns (:class:`dpgraph.SeededReleaseWarning`).

    Returns
    -------
    bytes
        The report in the wire format of :mod:`dpgraph.local.wire`.

    Raises
    ------
    ValueError
        An unknown user or neighbour, the user among their own neighbours, a
        bad epsilon, protocol or degree_share.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     body = client_report(2, [0, 3], 6, epsilon=1.0, seed=7)
    >>> len(body), body[:4]
    (57, b'DPLR')
    """
    protocol = check_protocol(protocol)
    index = public_index(nodes)
    n = len(index)
    eps_bits, eps_degree = budget_split(epsilon, degree_share)
    tx = ReleaseTransaction(eps_bits, seed=seed)  # validates epsilon, certifies the flips
    u = index.indices([user], "user")
    u = int(u[0])
    items = list(neighbours) if not isinstance(neighbours, (str, bytes)) else None
    if items is None:
        raise TypeError("neighbours must be a collection of nodes")
    near = index.indices(items, "neighbours") if items else np.zeros(0, dtype=np.int64)
    if np.any(near == u):
        raise ValueError("neighbours: the user is listed as their own neighbour; remove it")
    lap = discrete_laplace(eps_degree, 1) if eps_degree > 0 else None
    rr = tx.probabilities
    source = tx.commit()
    mine = partners(u, n, protocol)
    truth = np.isin(mine, near)
    nwords = (mine.size + 63) // 64
    flips = sampling.bernoulli_words(nwords, int(rr.flip_numerator), source)
    flip_bits = np.unpackbits(flips.view(np.uint8), bitorder="little", count=mine.size)
    bits = truth ^ flip_bits.astype(bool)
    degree = None
    if lap is not None:
        degree = int(near.size) + int(lap.sample(1, source)[0])
    return wire.encode(wire.WireReport(
        protocol, n, u, int(rr.flip_numerator), float(epsilon), float(degree_share),
        int(lap.numerator) if lap is not None else 0, bits, degree))
