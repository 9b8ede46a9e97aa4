"""The client and the wire format: exact bytes, exact flips, epsilon-edge-LDP per user."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from dpgraph.audit import neighbour_audit
from dpgraph.core import discrete_laplace, rr_probabilities
from dpgraph.exceptions import SeededReleaseWarning
from dpgraph.local import client_report, wire
from dpgraph.local.assignment import owner, partners, partners_count

DOC = Path(__file__).resolve().parents[1] / "docs" / "local-collection.md"


def _vector() -> bytes:
    text = DOC.read_text()
    block = re.search(r"<!-- test vector -->\n```\n([0-9a-f\n]+)```", text)
    assert block is not None, "docs/local-collection.md lost its test vector"
    return bytes.fromhex(block.group(1).replace("\n", ""))


def test_the_documented_test_vector_decodes_to_its_documented_fields():
    r = wire.decode(_vector())
    assert (r.protocol, r.n, r.user, r.epsilon, r.degree_share, r.degree) == \
        ("one", 5, 2, 1.0, 0.5, 3)
    assert r.flip_numerator == rr_probabilities(0.5).flip_numerator
    assert r.laplace_numerator == discrete_laplace(0.5, 1).numerator
    assert r.bits.tolist() == [True, False]
    assert wire.encode(r) == _vector()


@pytest.mark.parametrize("n", [2, 3, 7, 10, 64, 65, 101])
def test_protocol_one_assigns_every_pair_once_and_balances_the_load(n):
    seen = set()
    for k in range(n):
        p = partners(k, n, "one")
        assert p.size == partners_count(k, n, "one")
        assert abs(p.size - (n - 1) / 2) <= 1
        assert np.all(owner(np.full(p.size, k), p) == k)
        seen |= {(min(k, j), max(k, j)) for j in p.tolist()}
    assert len(seen) == n * (n - 1) // 2


def test_a_report_carries_the_flipped_row_with_the_certified_probability():
    n, eps = 2001, 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeededReleaseWarning)
        reports = [wire.decode(client_report(0, [], n, eps, protocol="both", seed=s))
                   for s in range(20)]
    flips = np.concatenate([r.bits for r in reports])  # no neighbours: every 1 is a flip
    p = rr_probabilities(eps).flip_probability
    se = np.sqrt(p * (1 - p) / flips.size)
    assert abs(flips.mean() - p) < 4 * se
    assert reports[0].flip_numerator == rr_probabilities(eps).flip_numerator


def test_a_seed_warns_and_the_default_is_secure():
    with pytest.warns(SeededReleaseWarning):
        a = client_report(1, [0], 10, 1.0, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SeededReleaseWarning)
        b = client_report(1, [0], 10, 1.0)  # secure: no warning
    assert len(a) == len(b)


def test_the_degree_is_noisy_with_the_users_share():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeededReleaseWarning)
        degs = np.array([wire.decode(client_report(0, range(1, 31), 100, 2.0, degree_share=0.5,
                                                   seed=s)).degree for s in range(400)])
    lap = discrete_laplace(1.0, 1)
    assert abs(degs.mean() - 30) < 4 * lap.std / np.sqrt(degs.size)
    assert degs.std() > 0.5 * lap.std


@pytest.mark.parametrize("bad, match", [
    (dict(user=10), "user"), (dict(neighbours=[99]), "neighbours"),
    (dict(neighbours=[1]), "own neighbour"), (dict(protocol="all"), "protocol"),
    (dict(degree_share=1.0), "degree_share"), (dict(epsilon=0.0), "epsilon"),
])
def test_bad_client_arguments_are_refused_naming_the_argument(bad, match):
    args = dict(user=1, neighbours=[0], nodes=5, epsilon=1.0)
    args.update(bad)
    with pytest.raises(ValueError, match=match):
        client_report(**args)


@pytest.mark.parametrize("cut, match", [
    (lambda b: b[:30], "truncated"), (lambda b: b + b"\0", "padded"),
    (lambda b: b[:4] + b"\x02" + b[5:], "version 2"), (lambda b: b"XXXX" + b[4:], "magic"),
    (lambda b: b[:52] + bytes([b[52] ^ 1]) + b[53:], "CRC"),
])
def test_damaged_reports_are_refused_by_the_decoder(cut, match):
    with pytest.raises(ValueError, match=match):
        wire.decode(cut(_vector()))


def _client_sampler(share):
    """Outcome codes of user 0's report (its bits, and its noisy degree clipped to 0..63)."""

    def sample(G, epsilon, n, source):
        seeds = source.uint64(n)
        out = np.empty(n, dtype=np.int64)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SeededReleaseWarning)
            for k in range(n):
                r = wire.decode(client_report(0, list(G[0]), 6, epsilon, "both", share,
                                              seed=int(seeds[k])))
                code = int(np.packbits(r.bits, bitorder="little")[0])
                if r.degree is not None:
                    code = 64 * code + min(max(r.degree + 30, 0), 63)
                out[k] = code
        return out

    return sample


@pytest.mark.parametrize("share", [0.0, 0.5])
def test_neighbour_audit_of_the_client_stays_below_epsilon(share):
    import networkx as nx

    G = nx.Graph([(0, 1), (0, 2)])
    G.add_nodes_from(range(6))
    H = G.copy()
    H.add_edge(0, 3)  # one neighbour differs: a bit and the degree
    res = neighbour_audit(_client_sampler(share), G, H, epsilon=1.0, n=4_000, n_search=1_000,
                          seed=0)
    assert res.passed and res.eps_lower <= 1.0
