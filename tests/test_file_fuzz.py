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
from dpgraph.exceptions import LedgerFileError, NewScopeWarning
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


# ---- crafted headers (valid digest): nothing the estimators use is taken as given ----
def _forge(raw: bytes, edit) -> bytes:
    """Apply ``edit`` to the header of an unsigned file and recompute its digest."""
    hlen = struct.unpack("<Q", raw[12:20])[0]
    header = json.loads(raw[20 : 20 + hlen])
    edit(header)
    head = json.dumps(header, separators=(",", ":")).encode()
    return _redigest(raw[:12] + struct.pack("<Q", len(head)) + head + raw[20 + hlen : -32])


def _set(**fields):
    def edit(header):
        header.update(fields)
    return edit


@pytest.mark.parametrize("edit, match", [
    (_set(channel={"d": 0.001, "r": [0.4995, 0.5005]}), "channel"),
    (_set(keep=0.5), "keep"),
    (_set(flip_probability=0.01), "flip_probability"),
    (_set(epsilon=2.0), "certified"),   # a larger claim than the numerator's epsilon
    (_set(flip_numerator=str(2**62)), "certified"),
])
def test_headers_that_disagree_with_the_numerators_are_refused(saved, tmp_path, edit, match):
    _, raw = saved
    path = tmp_path / "forged.dpg"
    path.write_bytes(_forge(raw, edit))
    with pytest.raises(ValueError, match=match):
        LOAD(path)


def test_a_forged_channel_cannot_change_a_cut_answer(saved, tmp_path):
    """Without the check an edited channel moved a cut estimate by orders of magnitude."""
    R, raw = saved
    path = tmp_path / "forged.dpg"
    ch = R.channel
    path.write_bytes(_forge(raw, _set(channel={"d": float(ch.d) / 300,
                                               "r": [float(x) for x in ch.r]})))
    assert refused(path) is not None


# ---- resource bounds: refused cheaply, never RecursionError / OverflowError ----------
def _with_header(head: bytes, payload: bytes = b"") -> bytes:
    return _redigest(dpgraph.graph.io.MAGIC + struct.pack("<IQ", 1, len(head)) + head + payload)


def _real_head(field: bytes) -> bytes:
    """A complete, consistent file (sizes, digest) whose header has ``field`` as raw JSON."""
    import re

    raw = _REAL[0] if _REAL else _REAL.append(_saved_bytes()) or _REAL[0]
    hlen = struct.unpack("<Q", raw[12:20])[0]
    name = field.split(b":")[0]
    head = re.sub(name + rb":[^,]*", lambda m: field, raw[20 : 20 + hlen], count=1)
    return _redigest(raw[:12] + struct.pack("<Q", len(head)) + head + raw[20 + hlen : -32])


_REAL: list = []


def _saved_bytes() -> bytes:
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        sample_release().save(Path(d) / "r.dpg")
        return (Path(d) / "r.dpg").read_bytes()


def _valid_head(**fields) -> bytes:
    header = {"format": "dpgraph", "version": 2, "kind": "packed", "n": 3}
    header.update(fields)
    return json.dumps(header, separators=(",", ":")).encode()


@pytest.mark.parametrize("name, head", [
    ("40 MiB junk", lambda: b"\x00" * (40 << 20)),
    ("40 MiB for 3 nodes", lambda: _valid_head(nodes=["x" * (40 << 20)])),
    ("deep nesting", lambda: _valid_head()[:-1] + b',"nodes":' + b"[" * 10_000 + b"]" * 10_000
     + b"}"),
    ("400-digit number", lambda: _real_head(b'"epsilon":1' + b"0" * 400)),
    ("huge float", lambda: _real_head(b'"epsilon":1e999')),
    ("huge float payload", lambda: _real_head(b'"flip_probability":-1e999')),
    ("400-digit n", lambda: b'{"format":"dpgraph","version":2,"kind":"packed","n":1'
     + b"0" * 400 + b"}"),
    # inside the size limit of their n, but parsing would cost 20-50 times the text
    ("4 MiB of empty objects", lambda: _valid_head(n=8192, nodes=[{}] * (4 << 18))),
    ("4 MiB of empty lists", lambda: _valid_head(n=8192, nodes=[[]] * (4 << 18))),
    ("4 MiB of one-item lists", lambda: _valid_head(n=8192, nodes=[[0]] * (1 << 20))),
    ("4 MiB of nested lists", lambda: _valid_head(n=8192, x=[[[[]]]] * (1 << 19))),
])
def test_hostile_headers_are_refused_with_a_value_error(tmp_path, name, head):
    import tracemalloc

    path = tmp_path / "hostile.dpg"
    content = head()
    path.write_bytes(content if content.startswith(dpgraph.graph.io.MAGIC) else _with_header(content))
    tracemalloc.start()
    try:
        with pytest.raises(ValueError):
            LOAD(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20, f"{name}: loading used {peak / 2**20:.0f} MiB to refuse it"


def test_directories_and_missing_files_are_refused_clearly(tmp_path):
    with pytest.raises(ValueError, match="directory"):
        LOAD(tmp_path)
    with pytest.raises(FileNotFoundError, match="no such file"):
        LOAD(tmp_path / "missing.dpg")


# ---- signed files: any changed byte, another key, a stripped signature ----------------
@pytest.fixture(scope="module")
def signed(tmp_path_factory):
    R = sample_release()
    sk, vk = dpgraph.generate_signing_key()
    path = tmp_path_factory.mktemp("signed") / "release.dpg"
    R.save(path, signing_key=sk)
    return vk, path.read_bytes()


@FUZZ
@given(data=st.data())
def test_bit_flipped_signed_files_fail_verification(signed, tmp_path, data):
    vk, raw = signed
    pos = data.draw(st.integers(0, len(raw) - 1))
    damaged = bytearray(raw)
    damaged[pos] ^= 1 << data.draw(st.integers(0, 7))
    path = tmp_path / "flip.dpg"
    path.write_bytes(bytes(damaged))
    with pytest.raises(ValueError):
        LOAD(path, verify_key=vk)


def test_re_signed_or_stripped_files_fail_verification(signed, tmp_path):
    vk, raw = signed
    hlen = struct.unpack("<Q", raw[12:20])[0]
    body = raw[: -32 - 64]
    # strip the signature and the header fields that announce it, recompute the digest
    header = json.loads(raw[20 : 20 + hlen])
    del header["signature"], header["signer"]
    head = json.dumps(header, separators=(",", ":")).encode()
    stripped = _redigest(body[:12] + struct.pack("<Q", len(head)) + head + body[20 + hlen :])
    path = tmp_path / "stripped.dpg"
    path.write_bytes(stripped)
    LOAD(path)  # a valid unsigned file ...
    with pytest.raises(ValueError, match="not signed"):
        LOAD(path, verify_key=vk)  # ... but not the curator's
    # an attacker's signature over an edited file
    from dpgraph.graph import signing

    mine, _ = dpgraph.generate_signing_key()
    key = signing.signing_key(mine)
    header = json.loads(raw[20 : 20 + hlen])
    header["signer"] = signing.public_hex(key)
    head = json.dumps(header, separators=(",", ":")).encode()
    unsigned = _redigest(body[:12] + struct.pack("<Q", len(head)) + head + body[20 + hlen :])
    forged = unsigned + signing.sign_digest(key, unsigned[-32:])
    path.write_bytes(forged)
    with pytest.raises(ValueError, match="signature check failed"):
        LOAD(path, verify_key=vk)


# ---- ledger files -------------------------------------------------------------------
def _ledger_bytes() -> bytes:
    L = PrivacyLedger(total_epsilon=2.0)
    L.charge(0.5, label="a")
    with pytest.warns(NewScopeWarning):  # a second scope beside "default", on purpose
        L.with_scope("b").charge(1.0)
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
    assert len(L.id) == 32


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
