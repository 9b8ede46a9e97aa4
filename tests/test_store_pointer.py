"""A ``.dpg`` file that points at a blockwise store: ``R.save`` on a store writes it,
``dpgraph.load`` reopens the store only if it is the release the file names, and
``dpgraph report FILE.dpg`` reports the store."""

from __future__ import annotations

import hashlib
import json
import shutil
import struct
import warnings

import networkx as nx
import numpy as np
import pytest

import dpgraph
from dpgraph.cli import main
from dpgraph.graph.blockwise import open_blockwise, release_blockwise

KEY = bytes(range(32))


def _store(path, G=None, seed=1):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return release_blockwise(nx.gnp_random_graph(300, 0.03, seed=seed) if G is None else G,
                                 1.0, path, key=KEY, tile=(128, 128), overwrite=True)


@pytest.fixture
def saved(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    B = _store(folder / "s.zarr")
    B.save(folder / "s.dpg", name="a public name")
    return B, folder


def _header(path):
    raw = path.read_bytes()
    hlen = struct.unpack("<8sIQ", raw[:20])[2]
    return json.loads(raw[20 : 20 + hlen])


def _rewrite(path, **changes):
    """The file with header fields changed and its digest recomputed (what anyone can do)."""
    header = _header(path)
    header.update(changes)
    head = json.dumps(header, separators=(",", ":")).encode()
    body = struct.pack("<8sIQ", b"\x89DPGRAPH", 2, len(head)) + head
    path.write_bytes(body + hashlib.sha256(body).digest())


def test_round_trip_reopens_the_same_release(saved):
    B, folder = saved
    header = _header(folder / "s.dpg")
    assert header["kind"] == "store" and header["payload_bytes"] == 0
    assert header["store"] == "s.zarr"  # relative to the file's folder
    R = dpgraph.load(folder / "s.dpg")
    assert type(R).__name__ == "BlockwiseGraph" and R.release_id == B.release_id
    assert R.name == "a public name" and R.epsilon == B.epsilon
    assert list(R.nodes) == list(B.nodes)
    assert np.array_equal(R.released_degrees(), B.released_degrees())
    assert R.number_of_released_edges() == B.number_of_released_edges()
    assert R.cut(range(100), range(100, 300)).value == B.cut(range(100), range(100, 300)).value


def test_a_folder_holding_both_can_move(saved, tmp_path):
    B, folder = saved
    moved = tmp_path / "elsewhere"
    shutil.move(folder, moved)
    assert dpgraph.load(moved / "s.dpg").release_id == B.release_id


@pytest.mark.parametrize("how", ["moved", "deleted", "file moved alone"])
def test_missing_store_refused(saved, tmp_path, how):
    _, folder = saved
    pointer = folder / "s.dpg"
    if how == "moved":
        shutil.move(folder / "s.zarr", tmp_path / "t.zarr")
    elif how == "deleted":
        shutil.rmtree(folder / "s.zarr")
    else:
        pointer = tmp_path / "s.dpg"
        shutil.move(folder / "s.dpg", pointer)
    with pytest.raises(FileNotFoundError, match="'s.zarr'.*is missing") as info:
        dpgraph.load(pointer)
    assert str(tmp_path) not in str(info.value)  # the store as the file names it, no more


def test_store_holding_another_release_refused(saved):
    _, folder = saved
    _store(folder / "s.zarr", seed=2)  # another release written where the store was
    with pytest.raises(ValueError, match="'s.zarr' is not the release this file points to"):
        dpgraph.load(folder / "s.dpg")


def test_store_whose_metadata_changed_refused(saved):
    _, folder = saved
    meta = folder / "s.zarr" / "zarr.json"
    doc = json.loads(meta.read_text())
    doc["attributes"]["dpgraph_version"] = "0.0.1"  # everything the reader checks still holds
    meta.write_text(json.dumps(doc))
    open_blockwise(folder / "s.zarr")  # the store itself still opens
    with pytest.raises(ValueError, match="metadata changed"):
        dpgraph.load(folder / "s.dpg")


def test_tampered_pointer_refused(saved):
    _, folder = saved
    pointer = folder / "s.dpg"
    raw = bytearray(pointer.read_bytes())
    raw[-40] ^= 1  # a flipped bit: the file's own digest
    pointer.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match="integrity check"):
        dpgraph.load(pointer)


@pytest.mark.parametrize("changes", [
    {"epsilon": 2.0},  # refused by the certified numerator before the store is opened
    {"store_metadata_sha256": "0" * 64},
    {"release_id": "0" * 32},
    {"nodes": list(range(1, 301))},
    {"nodes": [True] + list(range(1, 300))},
    {"tile": [64, 64]},
    {"store": 7},
])
def test_pointer_with_a_rewritten_header_refused(saved, changes):
    _, folder = saved
    _rewrite(folder / "s.dpg", **changes)
    with pytest.raises(ValueError):
        dpgraph.load(folder / "s.dpg")


def test_pointer_rewritten_to_another_store_refused(saved):
    _, folder = saved
    _store(folder / "other.zarr", seed=2)
    _rewrite(folder / "s.dpg", store="other.zarr")
    with pytest.raises(ValueError, match="'other.zarr' is not the release"):
        dpgraph.load(folder / "s.dpg")


def test_signed_pointer_and_verify_key(saved):
    B, folder = saved
    sk, vk = dpgraph.generate_signing_key()
    B.save(folder / "signed.dpg", signing_key=sk)
    assert dpgraph.load(folder / "signed.dpg", verify_key=vk).release_id == B.release_id
    with pytest.raises(ValueError, match="not signed"):
        dpgraph.load(folder / "s.dpg", verify_key=vk)


def test_cli_report_from_the_pointer(saved, tmp_path, capsys):
    _, folder = saved
    out = tmp_path / "r.html"
    assert main(["report", str(folder / "s.dpg"), "-o", str(out), "--quiet"]) == 0
    html = out.read_text(encoding="utf-8")
    assert "300 nodes" in html and "a public name" in html
    shutil.rmtree(folder / "s.zarr")
    assert main(["report", str(folder / "s.dpg"), "-o", str(tmp_path / "x.html")]) != 0
    assert "is missing" in capsys.readouterr().err


def test_nothing_of_the_input_in_the_file(tmp_path):
    """Two releases of different graphs on one vertex set: the files differ only in the fields
    that name each store (its random nonce, the id derived from it, its metadata's digest)."""
    headers = []
    for k, G in enumerate((nx.gnp_random_graph(300, 0.03, seed=1), nx.complete_graph(300))):
        B = _store(tmp_path / f"s{k}.zarr", G)
        B.save(tmp_path / f"s{k}.dpg")
        raw = (tmp_path / f"s{k}.dpg").read_bytes()
        assert B.metadata["input_tag"].encode() not in raw  # not even the keyed tag
        headers.append(_header(tmp_path / f"s{k}.dpg"))
    naming = {"store", "release_id", "nonce", "store_metadata_sha256"}
    assert {k: v for k, v in headers[0].items() if k not in naming} == \
        {k: v for k, v in headers[1].items() if k not in naming}
    assert set(headers[0]) >= naming
