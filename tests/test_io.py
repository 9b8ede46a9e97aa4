"""save / load: bit-identical round trips, and every kind of bad file refused."""

from __future__ import annotations

import json
import os
import struct

import networkx as nx
import numpy as np
import pytest

import dpgraph
from dpgraph import load
from dpgraph.graph.io import FORMAT_VERSION, MAGIC


def _release(G=None, directed=False, seed=0):
    G = nx.gnp_random_graph(70, 0.2, seed=1, directed=directed) if G is None else G
    return dpgraph.release(G, 1.0, seed=seed, directed=directed)


@pytest.mark.parametrize("directed", [False, True])
def test_round_trip_bit_identical(tmp_path, directed):
    R = _release(directed=directed)
    path = tmp_path / "r.dpg"
    R.save(path)
    Q = load(path)
    assert np.array_equal(Q.adjacency.words, R.adjacency.words)
    assert Q.nodes == R.nodes and Q.directed == R.directed
    assert Q.epsilon == R.epsilon
    assert Q.probabilities.flip_numerator == R.probabilities.flip_numerator
    assert Q.realized_epsilon == R.realized_epsilon
    S, T = list(range(30)), list(range(30, 70))
    assert Q.cut(S, T) == R.cut(S, T)
    # saving the loaded release reproduces the file byte for byte
    Q.save(tmp_path / "again.dpg")
    assert (tmp_path / "again.dpg").read_bytes() == path.read_bytes()


def test_labels_round_trip(tmp_path):
    G = nx.Graph([(("a", 1), ("b", 2)), (("b", 2), ("c", 3))])
    G.add_node(("d", 4))
    R = _release(G)
    R.save(tmp_path / "t.dpg")
    assert load(tmp_path / "t.dpg").nodes == R.nodes
    H = nx.relabel_nodes(nx.path_graph(4), {0: "x", 1: "y", 2: "z", 3: "w"})
    R = _release(H)
    R.save(tmp_path / "s.dpg")
    assert load(tmp_path / "s.dpg").nodes == R.nodes


def test_unsupported_labels_refused(tmp_path):
    G = nx.Graph([(frozenset({1}), frozenset({2}))])
    with pytest.raises(TypeError, match="nodes"):
        _release(G).save(tmp_path / "f.dpg")
    assert not (tmp_path / "f.dpg").exists()
    assert not list(tmp_path.iterdir())  # no temporary file left behind


def test_path_type_checked():
    with pytest.raises(TypeError, match="path"):
        _release().save(123)
    with pytest.raises(TypeError, match="path"):
        load(None)


@pytest.fixture
def saved(tmp_path):
    path = tmp_path / "g.dpg"
    _release().save(path)
    return path


def test_every_single_flipped_byte_refused(saved, tmp_path):
    data = saved.read_bytes()
    rng = np.random.default_rng(0)
    # every byte of the prefix and the digest, and a sample of header and payload bytes
    positions = sorted(set(range(20)) | set(range(len(data) - 32, len(data)))
                       | set(rng.integers(20, len(data) - 32, size=300).tolist()))
    bad = tmp_path / "bad.dpg"
    for pos in positions:
        flipped = bytearray(data)
        flipped[pos] ^= 1 << int(rng.integers(8))
        bad.write_bytes(bytes(flipped))
        with pytest.raises(ValueError):
            load(bad)


def test_truncated_and_padded_refused(saved, tmp_path):
    data = saved.read_bytes()
    bad = tmp_path / "bad.dpg"
    for cut in (0, 5, 19, 20, 60, len(data) // 2, len(data) - 32, len(data) - 1):
        bad.write_bytes(data[:cut])
        with pytest.raises(ValueError, match="truncated|not a dpgraph"):
            load(bad)
    bad.write_bytes(data + b"\0")
    with pytest.raises(ValueError, match="truncated or padded"):
        load(bad)


def test_foreign_files_refused(tmp_path):
    bad = tmp_path / "foreign"
    for content in (b"", b"0 1\n1 2\n", b"\x80\x04\x95" + bytes(40), b"PK\x03\x04" + bytes(100)):
        bad.write_bytes(content)
        with pytest.raises(ValueError, match="not a dpgraph file"):
            load(bad)


def _rewrite(data: bytes, edit) -> bytes:
    """Re-encode a file after editing its header, with a valid digest."""
    import hashlib

    _, version, hlen = struct.unpack("<8sIQ", data[:20])
    header = json.loads(data[20 : 20 + hlen])
    payload = data[20 + hlen : -32]
    header, payload, version = edit(header, payload, version)
    head = json.dumps(header).encode()
    body = struct.pack("<8sIQ", MAGIC, version, len(head)) + head + payload
    return body + hashlib.sha256(body).digest()


def test_version_mismatch_refused(saved, tmp_path):
    bad = tmp_path / "v.dpg"
    bad.write_bytes(_rewrite(saved.read_bytes(), lambda h, p, v: (h, p, FORMAT_VERSION + 1)))
    with pytest.raises(ValueError, match="version"):
        load(bad)


def test_consistent_digest_but_bad_content_refused(saved, tmp_path):
    """A file with a valid digest is still checked field by field."""
    data = saved.read_bytes()
    bad = tmp_path / "c.dpg"

    def uncertified(h, p, v):  # flip probability too small for the stated epsilon
        h["flip_numerator"] = str(int(h["flip_numerator"]) // 2)
        return h, p, v

    def lower_bit(h, p, v):  # a bit below the diagonal
        words = np.frombuffer(p, dtype="<u8").copy().reshape(h["n"], -1)
        words[5, 0] |= np.uint64(1)
        return h, words.tobytes(), v

    def wrong_n(h, p, v):
        h["n"] = h["n"] + 1
        return h, p, v

    def unknown_kind(h, p, v):
        h["kind"] = "mystery"
        return h, p, v

    for edit, msg in [(uncertified, "certified"), (lower_bit, "outside"), (wrong_n, "inconsistent"),
                      (unknown_kind, "kind")]:
        bad.write_bytes(_rewrite(data, edit))
        with pytest.raises(ValueError, match=msg):
            load(bad)


def test_file_holds_no_input_graph(tmp_path):
    """The header has public metadata only; the payload is the release itself."""
    G = nx.karate_club_graph()
    R = dpgraph.release(G, 1.0, seed=3)
    R.save(tmp_path / "k.dpg")
    data = (tmp_path / "k.dpg").read_bytes()
    hlen = struct.unpack("<8sIQ", data[:20])[2]
    header = json.loads(data[20 : 20 + hlen])
    assert set(header) == {"format", "version", "kind", "n", "directed", "epsilon", "flip_numerator",
                           "flip_bits", "flip_probability", "keep", "channel", "nodes",
                           "payload_bytes", "words_per_row", "word_bits", "bit_order"}
    assert data[20 + hlen : -32] == R.adjacency.words.astype("<u8").tobytes()


def test_header_field_types_checked(saved, tmp_path):
    """Valid digest, but fields of the wrong type or out of range: refused."""
    data = saved.read_bytes()
    bad = tmp_path / "t.dpg"
    edits = [
        ("epsilon", "1.0"), ("epsilon", -1.0), ("epsilon", 1e400), ("keep", 0.0), ("keep", 2.0),
        ("flip_numerator", 123), ("flip_numerator", "-5"), ("flip_bits", 63), ("version", True),
        ("n", True), ("directed", 1), ("nodes", {"a": 1}),
    ]
    for field, value in edits:
        def edit(h, p, v, field=field, value=value):
            h[field] = value
            return h, p, v
        bad.write_bytes(_rewrite(data, edit))
        with pytest.raises(ValueError):
            load(bad)


# ---- signatures ------------------------------------------------------------------
def test_signed_files_verify_with_raw_bytes_or_key_objects(tmp_path):
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    R = dpgraph.release(nx.gnp_random_graph(80, 0.1, seed=4), 1.0, seed=5)
    sk, vk = dpgraph.generate_signing_key()
    a, b = tmp_path / "a.dpg", tmp_path / "b.dpg"
    R.save(a, signing_key=sk)
    obj = Ed25519PrivateKey.generate()
    R.save(b, signing_key=obj)
    assert load(a, verify_key=vk).number_of_released_edges() == R.number_of_released_edges()
    assert load(b, verify_key=obj.public_key()).nodes == R.nodes
    load(a)  # a signed file still loads without a key (nothing is then verified)
    with pytest.raises(ValueError, match="signature check failed"):
        load(a, verify_key=obj.public_key())  # wrong key
    R.save(tmp_path / "u.dpg")
    with pytest.raises(ValueError, match="not signed"):
        load(tmp_path / "u.dpg", verify_key=vk)
    data = bytearray(a.read_bytes())
    data[-1] ^= 1  # the signature itself
    (tmp_path / "s.dpg").write_bytes(bytes(data))
    with pytest.raises(ValueError, match="signature"):
        load(tmp_path / "s.dpg", verify_key=vk)


@pytest.mark.parametrize("key, exc", [("no-such-key-file", ValueError), (bytes(31), TypeError),
                                      (3, TypeError)])
def test_bad_signing_and_verify_keys(tmp_path, key, exc):
    R = dpgraph.release(nx.path_graph(5), 1.0, seed=1)
    with pytest.raises(exc, match="signing_key"):
        R.save(tmp_path / "x.dpg", signing_key=key)
    assert not (tmp_path / "x.dpg").exists()
    R.save(tmp_path / "x.dpg")
    with pytest.raises(exc, match="verify_key"):
        load(tmp_path / "x.dpg", verify_key=key)


def test_sparse_channel_and_keep_are_derived_from_the_numerators(tmp_path):
    G = nx.gnp_random_graph(60, 0.1, seed=2)
    S = dpgraph.release(G, 1.0, seed=3, keep=0.25)
    S.save(tmp_path / "s.dpg")
    T = load(tmp_path / "s.dpg")
    assert T.keep == S.keep and T.channel.d == S.channel.d
    assert np.array_equal(T.channel.r, S.channel.r)
    data = (tmp_path / "s.dpg").read_bytes()

    def edit(h, p, v):
        h["channel"]["d"] = h["channel"]["d"] * 2
        return h, p, v

    (tmp_path / "f.dpg").write_bytes(_rewrite(data, edit))
    with pytest.raises(ValueError, match="channel"):
        load(tmp_path / "f.dpg")


def test_command_line_signs_and_verifies(tmp_path, capsys):
    import stat as stat_mod

    from dpgraph.cli import main

    edges = tmp_path / "g.txt"
    edges.write_text("0 1\n1 2\n2 3\n")
    assert main(["keygen", str(tmp_path / "curator")]) == 0
    secret = tmp_path / "curator.key"
    assert stat_mod.S_IMODE(os.stat(secret).st_mode) == 0o600
    assert main(["keygen", str(tmp_path / "curator")]) == 2  # never overwrites a key
    out = tmp_path / "r.dpg"
    assert main(["release", str(edges), "--nodes", "6", "-e", "1", "-o", str(out),
                 "--signing-key", str(secret)]) == 0
    cut = ["cut", str(out), "--S", "0,1", "--T", "2,3"]
    assert main(cut + ["--verify-key", str(tmp_path / "curator.pub")]) == 0
    assert main(["keygen", str(tmp_path / "other")]) == 0
    capsys.readouterr()
    assert main(cut + ["--verify-key", str(tmp_path / "other.pub")]) == 2
    err = capsys.readouterr().err
    assert "signature check failed" in err and "Traceback" not in err
    assert main(cut + ["--verify-key", str(edges)]) == 2
    assert "not a key file" in capsys.readouterr().err
