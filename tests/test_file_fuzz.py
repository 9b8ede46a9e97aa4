"""Fuzzing the file formats: damaged files are refused, never half-read or executed.

PrivateGraph files (``R.save`` / ``dpgraph.load``, dpgraph/graph/io.py):
truncated, bit-flipped, version-mismatched and foreign files must be refused
with a clear error, a pickle payload must never run, and save/load must
round-trip exactly.  Ledger files (dpgraph/ledger.py) are fuzzed the same
way: loading either succeeds with a well-formed ledger or raises
LedgerFileError, nothing else.
"""

from __future__ import annotations

import hashlib
import io
import json
import pickle
import struct
import zipfile

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpgraph
from dpgraph.core.randomness import SecureRandom
from dpgraph.exceptions import LedgerFileError
from dpgraph.ledger import PrivacyLedger


LOAD = dpgraph.load


FUZZ = settings(max_examples=120, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])


def sample_release():
    G = nx.gnp_random_graph(70, 0.1, seed=3)  # > 64 nodes: multi-word rows
    return dpgraph.release(G, 1.0, seed=SecureRandom(key=bytes(16)))


def same_release(a, b) -> bool:
    A, B = a.to_scipy_sparse("csr"), b.to_scipy_sparse("csr")
    return (
        a.nodes == b.nodes
        and a.directed == b.directed
        and a.epsilon == b.epsilon
        and a.flip_probability == b.flip_probability
        and a.probabilities == b.probabilities
        and (A != B).nnz == 0
    )


def refused(path) -> BaseException | None:
    try:
        LOAD(path)
    except (ValueError, OSError, EOFError) as exc:  # the documented refusals
        return exc
    return None


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    R = sample_release()
    path = tmp_path_factory.mktemp("io") / "release.dpg"
    R.save(path)
    return R, path.read_bytes()


def test_round_trip_is_exact(saved, tmp_path):
    R, raw = saved
    path = tmp_path / "again.dpg"
    path.write_bytes(raw)
    assert same_release(LOAD(path), R)


@FUZZ
@given(cut=st.floats(0.0, 0.999))
def test_truncated_files_are_refused(saved, tmp_path, cut):
    _, raw = saved
    path = tmp_path / "cut.dpg"
    path.write_bytes(raw[: int(cut * len(raw))])
    assert refused(path) is not None


@FUZZ
@given(data=st.data())
def test_bit_flipped_files_are_refused(saved, tmp_path, data):
    _, raw = saved
    pos = data.draw(st.integers(0, len(raw) - 1))
    bit = data.draw(st.integers(0, 7))
    damaged = bytearray(raw)
    damaged[pos] ^= 1 << bit
    path = tmp_path / "flip.dpg"
    path.write_bytes(bytes(damaged))
    exc = refused(path)
    assert exc is not None, f"bit {bit} of byte {pos} flipped and the file still loaded"


def test_foreign_and_version_mismatched_files_are_refused(saved, tmp_path):
    _, raw = saved
    foreign = {
        "json": json.dumps({"nodes": [1, 2], "edges": [[1, 2]]}).encode(),
        "npy": _npy_bytes(np.arange(10)),
        "zip": _zip_bytes({"a.txt": b"hello"}),
        "png": b"\x89PNG\r\n\x1a\n" + bytes(100),
        "text": b"0 1\n1 2\n",
    }
    for name, content in foreign.items():
        path = tmp_path / f"{name}.dpg"
        path.write_bytes(content)
        assert refused(path) is not None, name
    # a version bump with a valid digest (layout of docs/file-format.md)
    bumped = _redigest(raw[:8] + struct.pack("<I", 999) + raw[12:-32])
    path = tmp_path / "version.dpg"
    path.write_bytes(bumped)
    exc = refused(path)
    assert exc is not None and "version" in str(exc).lower()


def test_file_claiming_a_smaller_epsilon_is_refused(saved, tmp_path):
    """A consistent file (valid digest) whose header claims a smaller epsilon than
    its flip probability supports must not load as a more private release."""
    R, raw = saved
    hlen = struct.unpack("<Q", raw[12:20])[0]
    header = json.loads(raw[20 : 20 + hlen])
    assert header["epsilon"] == R.epsilon
    header["epsilon"] = R.epsilon / 2
    head = json.dumps(header, separators=(",", ":")).encode()
    forged = _redigest(raw[:12] + struct.pack("<Q", len(head)) + head + raw[20 + hlen : -32])
    path = tmp_path / "forged.dpg"
    path.write_bytes(forged)
    exc = refused(path)
    assert exc is not None and "certified" in str(exc)


def test_pickle_payload_never_executes(tmp_path):
    marker = tmp_path / "pwned"

    class Payload:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    for name, content in {
        "raw-pickle": pickle.dumps(Payload()),
        "npz-with-object": _npz_object_bytes(Payload()),
    }.items():
        path = tmp_path / f"{name}.dpg"
        path.write_bytes(content)
        assert refused(path) is not None, name
        assert not marker.exists(), f"{name}: code ran during load"


# ---- ledger files -------------------------------------------------------------------
def _ledger_bytes() -> bytes:
    L = PrivacyLedger(total_epsilon=2.0)
    L.charge(0.5, nx.path_graph(5), label="a")
    L.charge(1.0, nx.path_graph(5))
    return json.dumps(L.to_dict()).encode()


LEDGER = _ledger_bytes()


@FUZZ
@given(data=st.data())
def test_damaged_ledger_files_load_cleanly_or_are_refused(tmp_path, data):
    mode = data.draw(st.sampled_from(["truncate", "flip", "splice"]))
    raw = bytearray(LEDGER)
    if mode == "truncate":
        raw = raw[: data.draw(st.integers(0, len(raw) - 1))]
    elif mode == "flip":
        pos = data.draw(st.integers(0, len(raw) - 1))
        raw[pos] ^= 1 << data.draw(st.integers(0, 7))
    else:
        junk = data.draw(st.binary(min_size=1, max_size=20))
        pos = data.draw(st.integers(0, len(raw)))
        raw[pos:pos] = junk
    path = tmp_path / "ledger.json"
    path.write_bytes(bytes(raw))
    try:
        L = PrivacyLedger.load(path)
    except LedgerFileError as exc:
        assert "path" in str(exc)
        return
    # whatever loads is a well-formed ledger
    assert L.total_epsilon > 0 and all(e.epsilon > 0 for e in L.entries)
    assert len(L._key) == 32


@FUZZ
@given(doc=st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    max_leaves=20,
))
def test_arbitrary_json_is_refused(tmp_path, doc):
    path = tmp_path / "ledger.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(LedgerFileError):
        PrivacyLedger.load(path)


# ---- helpers ------------------------------------------------------------------------
def _redigest(body: bytes) -> bytes:
    return body + hashlib.sha256(body).digest()


def _npy_bytes(a) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a)
    return buf.getvalue()


def _zip_bytes(files: dict) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, content in files.items():
            z.writestr(name, content)
    return buf.getvalue()


def _npz_object_bytes(obj) -> bytes:
    buf = io.BytesIO()
    arr = np.empty(1, dtype=object)
    arr[0] = obj
    np.savez(buf, words=arr)
    return buf.getvalue()


def test_helpers_build_what_they_claim():
    assert _npy_bytes(np.arange(3))[:6] == b"\x93NUMPY"
    assert zipfile.is_zipfile(io.BytesIO(_zip_bytes({"x": b"1"})))
