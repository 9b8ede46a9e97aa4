"""Collection in memory, the collected release's estimators, its file and the commands on it."""

from __future__ import annotations

import json
import warnings

import networkx as nx
import numpy as np
import pytest

import dpgraph
from dpgraph.cli import main
from dpgraph.core import count_estimate
from dpgraph.exceptions import SeededReleaseWarning
from dpgraph.graph.answers import ANALYTICS
from dpgraph.local import (
    CollectedGraph,
    Collection,
    ReportRefused,
    client_report,
    consistency,
    simulate_collection,
)

G = nx.gnp_random_graph(40, 0.15, seed=3)


def _report(u, nodes=40, eps=1.0, protocol="one", share=0.0, seed=0, graph=G):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeededReleaseWarning)
        return client_report(u, list(graph.adj[u]), nodes, eps, protocol, share, seed=seed)


def _collect(protocol="one", dropouts=(), share=0.0, seed=0):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeededReleaseWarning)
        return simulate_collection(G, 1.0, protocol, share, dropouts=dropouts, seed=seed)


def test_protocol_one_without_dropouts_is_a_central_release_with_its_stds():
    R = _collect()
    central = dpgraph.release(G, 1.0, seed=0)
    assert R.complete and R.central_epsilon == 1.0
    assert R.flip_probability == central.flip_probability
    S, T = range(10), range(10, 40)
    assert R.cut(S, T).std == central.cut(S, T).std
    assert R.number_of_edges().std == central.number_of_edges().std
    assert R.number_of_edges().missing_pairs == 0
    assert np.allclose(np.asarray(R.degree(proper=False).estimate.std),
                       np.asarray(central.degree(proper=False).estimate.std))
    R.triangles()  # every analytic runs on a central release


def test_dropouts_are_counted_as_missing_pairs_never_imputed():
    R = _collect("one", dropouts=[0, 1, 2, 3])
    e = R.number_of_edges(proper=False)
    # pairs reported by the four dropouts are exactly the missing ones
    from dpgraph.local.assignment import partners_count

    assert e.missing_pairs == sum(partners_count(k, 40, "one") for k in range(4))
    assert e.observed_pairs + e.missing_pairs == 40 * 39 // 2
    ch = R.channel
    assert e.std == pytest.approx(float(count_estimate(0, e.observed_pairs, ch).std))
    assert "missing" in str(R.cut(range(5), range(5, 40)))
    assert R.missing_users == [0, 1, 2, 3]


def test_protocol_both_uses_both_reports_and_a_lone_report_where_one_endpoint_dropped():
    R = _collect("both", dropouts=[0])
    e = R.number_of_edges(proper=False)
    assert e.missing_pairs == 0  # a pair with one report uses that one
    one = float(count_estimate(0, 1, R.channel).std) ** 2  # variance of a once-reported pair
    n2, n1 = 39 * 38 // 2, 39
    assert e.std ** 2 == pytest.approx(one * (n1 + n2 / 2))
    R2 = _collect("both", dropouts=[0, 1])
    assert R2.cut([0], [1]).missing_pairs == 1
    assert R2.central_epsilon == 2.0


def test_analytics_that_need_every_pair_are_refused_with_the_available_counts():
    R = _collect("one", dropouts=[5])
    own = {"number_of_edges", "density", "degree", "volume", "cut", "cuts", "edges_within"}
    refused = []
    for name in ANALYTICS:
        if name in own:
            continue
        with pytest.raises((ValueError, TypeError)) as info:
            getattr(R, name)()
        if "observed pairs" in str(info.value):
            refused.append(name)
    assert {"triangles", "communities", "degree_distribution"} <= set(refused)


def test_collection_refuses_what_is_not_its_own():
    C = Collection(40, 1.0)
    C.add(_report(3))
    with pytest.raises(ReportRefused, match="already reported") as info:
        C.add(_report(3, seed=9))
    assert info.value.status == 409
    for bad, match in [(_report(4, eps=2.0), "epsilon"),
                       (_report(4, protocol="both"), "more than the 59"),
                       (_report(4, share=0.2), "more than the 59"),
                       (_report(5, protocol="both", nodes=12, graph=nx.empty_graph(12)), "protocol"),
                       (_report(4, nodes=41, graph=nx.empty_graph(41)), "nodes")]:
        with pytest.raises(ReportRefused, match=match):
            C.add(bad)
    assert len(C) == 1


def test_the_release_file_round_trips_and_the_commands_read_it(tmp_path, capsys):
    R = _collect("one", dropouts=[7], share=0.25)
    path = tmp_path / "c.dpg"
    R.save(path)
    R2 = dpgraph.load(path)
    assert isinstance(R2, CollectedGraph)
    assert (R2.protocol, R2.missing_users, R2.local_epsilon) == ("one", [7], 1.0)
    assert R2.number_of_edges().value == R.number_of_edges().value
    assert np.array_equal(np.asarray(R2.noisy_degrees().value), np.asarray(R.noisy_degrees().value),
                          equal_nan=True)
    head = path.read_bytes()[20:4000]
    assert b'"missing_users":[7]' in head and b'"protocol":"one"' in head
    assert main(["cut", str(path), "--S", "0,1,2", "--T", "3,4,5", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["std"] > 0
    assert main(["report", str(path), "-o", str(tmp_path / "r.html")]) == 0
    assert "number of edges" in (tmp_path / "r.html").read_text()


def test_a_flipped_payload_bit_outside_a_users_pairs_is_refused(tmp_path):
    R = _collect("one", dropouts=[3])
    path = tmp_path / "c.dpg"
    R.save(path)
    data = bytearray(path.read_bytes())
    data[-40] ^= 0x10  # inside the payload: the digest catches it first
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="integrity|corrupted"):
        dpgraph.load(path)


def test_consistency_flags_a_user_who_claims_everyone():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeededReleaseWarning)
        H = nx.gnp_random_graph(120, 0.05, seed=1)
        C = Collection(120, 1.0, "both")
        for u in range(120):
            near = [v for v in range(120) if v != u] if u == 17 else list(H.adj[u])
            C.add(client_report(u, near, 120, 1.0, "both", seed=u))
    check = consistency(C.close())
    assert check.flagged().tolist() == [17]
    with pytest.raises(ValueError, match="protocol 'both'"):
        consistency(_collect("one"))


def _rewrite_header(path, change):
    """Apply ``change`` to a release file's header and recompute its digest (a forger could)."""
    import hashlib
    import struct

    data = path.read_bytes()
    magic, version, hlen = struct.unpack_from("<8sIQ", data)
    header = json.loads(data[20:20 + hlen])
    change(header)
    head = json.dumps(header, separators=(",", ":")).encode()
    body = struct.pack("<8sIQ", magic, version, len(head)) + head + data[20 + hlen:-32]
    path.write_bytes(body + hashlib.sha256(body).digest())


@pytest.mark.parametrize("change, match", [
    (lambda h: h["collection"].update(missing_users=[]), "missing users"),
    (lambda h: h["collection"].update(protocol="both"), "central_epsilon|outside the pairs"),
    (lambda h: h["collection"].update(central_epsilon=0.5), "central_epsilon"),
    (lambda h: h["collection"].update(local_epsilon=2.0), "epsilon"),
])
def test_a_header_that_disagrees_with_its_payload_is_refused(tmp_path, change, match):
    path = tmp_path / "c.dpg"
    _collect("one", dropouts=[3]).save(path)
    _rewrite_header(path, change)
    with pytest.raises(ValueError, match=match):
        dpgraph.load(path)
