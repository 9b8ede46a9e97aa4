"""Typed release files: round trip, signatures, and the checks a reader makes."""

from __future__ import annotations

import hashlib
import json
import struct
import warnings

import networkx as nx
import numpy as np
import pytest

import dpgraph
from dpgraph.experiments import signed_data
from dpgraph.graph.io import _PREFIX

warnings.filterwarnings("ignore", category=dpgraph.SeededReleaseWarning)


def _release(directed: bool = False, K: int = 4):
    G = signed_data.signed_sbm(90, seed=2)
    if directed:
        G = G.to_directed()
    values = list(signed_data.VALUES[: K - 1])
    G = nx.DiGraph(G) if directed else nx.Graph(G)
    for u, v in G.edges:
        if G.edges[u, v]["kind"] not in values:
            G.edges[u, v]["kind"] = values[0]
    return dpgraph.release(G, 1.0, seed=3, directed=directed, edge_attr="kind", values=values)


@pytest.mark.parametrize("directed,K", [(False, 4), (True, 4), (False, 3), (True, 2)])
def test_round_trip_signed(tmp_path, directed, K):
    R = _release(directed, K)
    sk, vk = dpgraph.generate_signing_key()
    path = tmp_path / "typed.dpg"
    R.save(path, signing_key=sk)
    L = dpgraph.load(path, verify_key=vk)
    assert L.tie_values == R.tie_values and L.directed == directed
    assert np.array_equal(L.adjacency.planes, R.adjacency.planes)
    assert L.channel.d == R.channel.d and np.array_equal(L.channel.r, R.channel.r)
    assert L.probabilities == R.probabilities
    S, T = range(40), range(40, 90)
    for v in R.tie_values.values:
        assert L.cut(S, T, value=v).value == R.cut(S, T, value=v).value
    _, other = dpgraph.generate_signing_key()
    with pytest.raises(ValueError, match="signature check failed"):
        dpgraph.load(path, verify_key=other)


def _rewrite(path, header_edit=None, payload_edit=None):
    """Rewrite a file with an edited header or payload and a fresh (valid) digest."""
    raw = path.read_bytes()
    _, version, hlen = _PREFIX.unpack(raw[: _PREFIX.size])
    header = json.loads(raw[_PREFIX.size : _PREFIX.size + hlen])
    payload = bytearray(raw[_PREFIX.size + hlen : _PREFIX.size + hlen + header["payload_bytes"]])
    if header_edit:
        header_edit(header)
    if payload_edit:
        payload_edit(payload)
    head = json.dumps(header, separators=(",", ":")).encode()
    body = _PREFIX.pack(b"\x89DPGRAPH", version, len(head)) + head + bytes(payload)
    path.write_bytes(body + hashlib.sha256(body).digest())


def test_reader_refuses_tampered_typed_files(tmp_path):
    R = _release(False, 3)  # K = 3: two planes, value index 3 does not exist
    path = tmp_path / "t.dpg"
    R.save(path)
    raw = bytearray(path.read_bytes())
    raw[-40] ^= 1
    (tmp_path / "flip.dpg").write_bytes(bytes(raw))
    with pytest.raises(ValueError, match="SHA-256"):
        dpgraph.load(tmp_path / "flip.dpg")

    def both_planes(payload):  # pair (0, 1) gets value index 3 in both planes
        nbytes = len(payload) // 2
        payload[0] |= 2
        payload[nbytes] |= 2
    _rewrite(path, payload_edit=both_planes)
    with pytest.raises(ValueError, match="not one of its K values"):
        dpgraph.load(path)

    R.save(path)
    _rewrite(path, header_edit=lambda h: h["tie_values"]["values"].append("extra"))
    with pytest.raises(ValueError, match="flip numerator is not the certified one|layout"):
        dpgraph.load(path)
    R.save(path)
    _rewrite(path, header_edit=lambda h: h["tie_values"].update(values=["a", "a"]))
    with pytest.raises(ValueError, match="tie_values is not a valid declaration"):
        dpgraph.load(path)
    R.save(path)
    _rewrite(path, header_edit=lambda h: h.pop("tie_values"))
    with pytest.raises(ValueError, match="needs tie_values"):
        dpgraph.load(path)
    R.save(path)

    def lower_bit(payload):  # a bit below the diagonal of an undirected release
        nw = 2
        payload[8 * nw * 1] |= 1  # row 1, column 0
    _rewrite(path, payload_edit=lower_bit)
    with pytest.raises(ValueError, match="outside the vertex pairs"):
        dpgraph.load(path)


def test_binary_files_refuse_tie_values(tmp_path):
    B = dpgraph.release(nx.path_graph(10), 1.0, seed=0)
    path = tmp_path / "b.dpg"
    B.save(path)
    _rewrite(path, header_edit=lambda h: h.update(tie_values={"edge_attr": "k", "values": ["a"],
                                                              "bins": None}))
    with pytest.raises(ValueError, match="tie_values in a file of kind"):
        dpgraph.load(path)


def test_typed_file_header_holds_the_declaration_only(tmp_path):
    secret = "private-note-91c"
    G = nx.Graph([(0, 1, {"kind": "a", "note": secret}), (1, 2, {"kind": "b"})])
    with pytest.warns(dpgraph.exceptions.DroppedAttributesWarning):  # "note" is dropped
        R = dpgraph.release(G, 1.0, seed=0, edge_attr="kind", values=["a", "b"])
    path = tmp_path / "t.dpg"
    R.save(path)
    raw = path.read_bytes()
    assert secret.encode() not in raw
    hlen = struct.unpack("<Q", raw[12:20])[0]
    header = json.loads(raw[20 : 20 + hlen])
    assert header["kind"] == "typed" and header["tie_values"] == {
        "edge_attr": "kind", "values": ["a", "b"], "bins": None}
