"""Hostile and mistaken inputs at the file, key and table boundaries.

Keys given as text (PEM, hex) are read, and no refusal ever quotes key
material; file headers, blockwise stores and edge lists are bounded before
they can cost more than their size; tables, bins and labels that would slip
through a float or a 2-D column are refused or found exactly.
"""

from __future__ import annotations

import re
import traceback

import networkx as nx
import pytest

import dpgraph
from dpgraph.cli import main
from dpgraph.graph.signing import key_source, public_hex, signing_key, verify_key, write_key_files


# --------------------------------------------------------------------------- keys as text
@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    """A key pair written by keygen, an edge list and a release of it."""
    d = tmp_path_factory.mktemp("keys")
    secret, public = write_key_files(d / "curator")
    G = nx.gnp_random_graph(30, 0.2, seed=3)
    (d / "edges.txt").write_text("".join(f"{u} {v}\n" for u, v in G.edges()))
    R = dpgraph.release(G, 1.0, seed=5)
    return d, secret, public, R


def _chain(exc: BaseException) -> list[BaseException]:
    out, seen = [], set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        out.append(exc)
        exc = exc.__cause__ or exc.__context__
    return out


def _all_text(exc: BaseException) -> str:
    """Everything an exception can show: each chained error's str and repr, the traceback."""
    parts = ["".join(traceback.format_exception(type(exc), exc, exc.__traceback__))]
    for link in _chain(exc):
        parts += [str(link), repr(link), repr(getattr(link, "filename", None)),
                  repr(getattr(link, "args", None))]
        # the chained errors also exist when suppressed by "from None": print them regardless
        parts.append("".join(traceback.format_exception(type(link), link, None)))
    return "\n".join(parts)


def _secret_pieces(text: str) -> list[str]:
    """Pieces of ``text`` that must never be shown: every 12-character run of its body."""
    body = re.sub(r"-----[A-Z ]+-----|\s", "", text)
    return [body[i:i + 12] for i in range(0, max(len(body) - 11, 1), 6)]


def test_pem_text_and_hex_keys_sign_and_verify(keys, tmp_path):
    _d, secret, public, R = keys
    pem_secret, pem_public = secret.read_text(), public.read_text()
    assert (key_source(pem_secret), key_source(pem_public)) == ("PEM text", "PEM text")
    out = tmp_path / "g.dpg"
    R.save(out, signing_key=pem_secret)  # open("curator.key").read()
    vk = verify_key(public)
    hex_public = public_hex(vk)
    assert key_source(hex_public) == "hex" and key_source(hex_public + "\n") == "hex"
    for key in (pem_public, pem_public.encode(), hex_public, hex_public.upper() + "\n", public):
        assert dpgraph.load(out, verify_key=key).number_of_nodes() == 30
    sk, vk_raw = dpgraph.generate_signing_key()
    R.save(tmp_path / "raw.dpg", signing_key=sk.hex())  # 128 hex digits: the raw signing key
    assert dpgraph.load(tmp_path / "raw.dpg", verify_key=vk_raw.hex()).number_of_nodes() == 30
    with pytest.raises(ValueError, match="signature check failed"):
        dpgraph.load(tmp_path / "raw.dpg", verify_key=hex_public)
    # a path stays a path, whatever it is named; a pathlib.Path is always one
    named = tmp_path / ("ab" * 32)
    named.write_bytes(public.read_bytes())
    assert key_source(named) == "path" and key_source(str(public)) == "path"
    assert public_hex(verify_key(named)) == hex_public


def test_cli_takes_the_hex_keygen_prints_and_pem_text(keys, tmp_path, capsys):
    d = keys[0]
    assert main(["keygen", str(tmp_path / "c")]) == 0
    printed = re.search(r"public key ([0-9a-f]{64})", capsys.readouterr().out).group(1)
    out = tmp_path / "r.dpg"
    assert main(["release", str(d / "edges.txt"), "--nodes", "30", "-e", "1", "-o", str(out),
                 "--signing-key", (tmp_path / "c.key").read_text()]) == 0
    capsys.readouterr()
    assert main(["cut", str(out), "--S", "0-4", "--T", "5-9", "--verify-key", printed]) == 0
    assert main(["cut", str(out), "--S", "0-4", "--T", "5-9",
                 "--verify-key", (tmp_path / "c.pub").read_text()]) == 0


def _garbage_keys(secret_pem: str) -> list[tuple[str, object]]:
    """Text that is not a usable key, each of which may be a secret the user pasted."""
    body = re.sub(r"-----[A-Z ]+-----|\s", "", secret_pem)
    return [
        ("garbage text", "my curator secret is hunter2-and-more-private-words"),
        ("base64 body", body),  # a PEM body without its armour: taken as a path
        ("long text", "Zq9" * 5000),  # longer than any file name (ENAMETOOLONG)
        ("NUL inside", "secret\x00words-that-are-private"),
        ("hex of no key length", "ab" * 33),
        ("broken PEM", secret_pem.replace(body[10:30], "!" * 20)),
        ("multi-line text", "line one secret-words\nline two private-words\n"),
    ]


def _entry_points(keys, tmp_path):
    _d, secret, _public, R = keys
    signed = tmp_path / "s.dpg"
    R.save(signed, signing_key=secret)
    return {
        "signing_key()": lambda k: signing_key(k),
        "verify_key()": lambda k: verify_key(k),
        "R.save(signing_key=)": lambda k: R.save(tmp_path / "o.dpg", signing_key=k),
        "dpgraph.load(verify_key=)": lambda k: dpgraph.load(signed, verify_key=k),
    }


def test_no_refusal_quotes_key_material_in_python(keys, tmp_path):
    _d, secret, _public, _R = keys
    pem_secret = secret.read_text()
    cases = _garbage_keys(pem_secret)
    entries = _entry_points(keys, tmp_path)
    for name in ("verify_key()", "dpgraph.load(verify_key=)"):  # the private key where it is wrong
        with pytest.raises(ValueError) as info:
            entries[name](pem_secret)
        text = _all_text(info.value)
        assert "signing (private) key" in str(info.value)
        assert not any(piece in text for piece in _secret_pieces(pem_secret)), name
    for entry, call in entries.items():
        for label, bad in cases:
            with pytest.raises((ValueError, TypeError)) as info:
                call(bad)
            text = _all_text(info.value)
            assert ("key" in str(info.value)), (entry, label)
            leaked = [p for p in _secret_pieces(bad) if p in text]
            assert not leaked, (entry, label, str(info.value))
            assert not any(p in text for p in _secret_pieces(pem_secret)), (entry, label)


def test_refusals_name_the_type_and_length_only(keys):
    with pytest.raises(ValueError) as info:
        verify_key("not-a-key-but-private-text")
    assert "a str of length 26" in str(info.value)
    with pytest.raises(TypeError, match=r"got a bytes of length 5\b"):
        signing_key(b"12345")
    with pytest.raises(TypeError, match="got a float"):
        verify_key(1.5)
    missing = "curator-missing.pub"  # a key file's name is shown: it helps, and is no key
    with pytest.raises(ValueError, match=re.escape(repr(missing))):
        verify_key(missing)


@pytest.mark.parametrize("command", ["release", "cut", "report"])
def test_no_refusal_quotes_key_material_on_the_command_line(keys, tmp_path, capsys, command):
    d, secret, _public, R = keys
    signed = tmp_path / "s.dpg"
    R.save(signed, signing_key=secret)
    pem_secret = secret.read_text()
    bad_keys = [bad for _, bad in _garbage_keys(pem_secret) if "\x00" not in bad]
    if command != "release":
        bad_keys.append(pem_secret)  # the secret key given as --verify-key
    for i, bad in enumerate(bad_keys):
        if command == "release":
            argv = ["release", str(d / "edges.txt"), "--nodes", "30", "-e", "1",
                    "-o", str(tmp_path / f"r{i}.dpg"), "--signing-key", bad]
        elif command == "cut":
            argv = ["cut", str(signed), "--S", "0-4", "--T", "5-9", "--verify-key", bad]
        else:
            argv = ["report", str(signed), "-o", str(tmp_path / f"r{i}.html"), "--quiet",
                    "--verify-key", bad]
        capsys.readouterr()
        assert main(argv) == 2
        out, err = capsys.readouterr()
        assert "key" in err and "Traceback" not in err
        for piece in _secret_pieces(bad) + _secret_pieces(pem_secret):
            assert piece not in out + err, (command, i, err)


# --------------------------------------------------------------------------- header amplification
def _dpg_with_header(path, head: bytes) -> int:
    """A .dpg file whose header is ``head`` (its payload and digest are filler)."""
    import struct

    from dpgraph.graph.io import FORMAT_VERSION, MAGIC
    data = MAGIC + struct.pack("<IQ", FORMAT_VERSION, len(head)) + head + bytes(64)
    path.write_bytes(data)
    return len(data)


@pytest.mark.parametrize("filler", [b"{}", b"[]", b"[0]", b'{"":{}}'])
def test_a_header_of_empty_containers_is_refused_before_it_is_parsed(tmp_path, filler):
    import tracemalloc
    count = (6 << 20) // (len(filler) + 1)  # a 6 MiB header, inside the limit of its n
    head = (b'{"format":"dpgraph","version":2,"kind":"dense","n":8192,"x":['
            + b",".join([filler] * count) + b"]}")
    size = _dpg_with_header(tmp_path / "amp.dpg", head)
    del head
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"amp\.dpg: file header: .* lists/objects .*"
                                             r"refused unparsed") as info:
            dpgraph.load(tmp_path / "amp.dpg")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # parsing would build 20-40 times the file; the scan holds the header and a few blocks
    assert peak <= 3 * size, (peak / size, str(info.value))


def test_the_json_scan_counts_exactly_across_block_seams(monkeypatch):
    """shape() against the parsed document, with blocks small enough to cut every token."""
    import json
    import random

    from dpgraph import _safejson
    rng = random.Random(11)

    def doc(d=0):
        r = rng.random()
        if d > 5 or r < 0.4:
            return rng.choice([1, "a\\", '"[{', '\\\\"', "x" * rng.randint(0, 9), None, "]},:", ""])
        if r < 0.7:
            return [doc(d + 1) for _ in range(rng.randint(0, 4))]
        return {rng.choice(["k", "[", "\\", '"', "k:2,"]): doc(d + 1) for _ in range(rng.randint(0, 3))}

    def exact(x):
        depth = containers = separators = strings = 0
        stack = [(x, 0)]
        while stack:
            v, d = stack.pop()
            if isinstance(v, (list, dict)):
                containers, d = containers + 1, d + 1
                depth = max(depth, d)
                separators += max(len(v) - 1, 0) + (len(v) if isinstance(v, dict) else 0)
                strings += len(v) if isinstance(v, dict) else 0
                stack += [(c, d) for c in (v.values() if isinstance(v, dict) else v)]
            elif isinstance(v, str):
                strings += 1
        return depth, containers, separators + 1, strings

    for block in (2, 3, 7, 64):
        monkeypatch.setattr(_safejson, "_SCAN_BLOCK", block)
        for _ in range(80):
            x = doc()
            got = _safejson.shape(json.dumps(x).encode())
            assert (got.depth, got.containers, got.items, got.strings) == exact(x), x


def test_headers_dpgraph_writes_pass_the_scan():
    """Labels as ints, strings and pairs are parsed, judged by the cost ratio alone."""
    import json

    from dpgraph import _safejson
    n = 20_000
    for labels in (list(range(10**9, 10**9 + n)), [f"user-{i}" for i in range(n)],
                   [[i, i * 7 % 1000] for i in range(n)]):
        raw = json.dumps({"format": "dpgraph", "nodes": labels}).encode()
        monkey = _safejson.FREE_PARSE_BYTES
        try:
            _safejson.FREE_PARSE_BYTES = 0  # judged by the ratio alone
            assert _safejson.loads(raw, "header")["nodes"][-1] == labels[-1]
        finally:
            _safejson.FREE_PARSE_BYTES = monkey


# --------------------------------------------------------------------------- crafted blockwise stores
def _blockwise_store(path):
    from dpgraph.graph.blockwise import release_blockwise
    release_blockwise(nx.gnp_random_graph(300, 0.05, seed=1), 1.0, path, key=bytes(32),
                      tile=(64, 64))
    return path


def _edit_json(path, edit):
    import json
    meta = json.loads(path.read_text())
    edit(meta)
    path.write_text(json.dumps(meta))


def test_a_store_whose_fill_value_is_not_zero_is_refused(tmp_path):
    from dpgraph.graph.blockwise import open_blockwise
    store = _blockwise_store(tmp_path / "v.zarr")
    # tiles below the diagonal are never written: with this fill they would read as all ones
    _edit_json(store / "adjacency" / "zarr.json", lambda m: m.update(fill_value=2**64 - 1))
    with pytest.raises(ValueError, match="'adjacency' has fill value .* not the 0"):
        open_blockwise(store)
    store = _blockwise_store(tmp_path / "w.zarr")
    _edit_json(store / "nodes" / "zarr.json", lambda m: m.update(fill_value=7))
    with pytest.raises(ValueError, match="'nodes' has fill value"):
        open_blockwise(store)


def test_the_layout_is_checked_where_the_reads_take_it_from(tmp_path, monkeypatch):
    """Consolidated metadata saying the writer's layout cannot vouch for the arrays' own."""
    import gzip
    import shutil

    import zarr

    from dpgraph.graph.blockwise import open_blockwise
    store = _blockwise_store(tmp_path / "c.zarr")
    with pytest.warns(UserWarning, match="[Cc]onsolidated"):
        zarr.consolidate_metadata(str(store))  # a copy of the honest layout in the group
    assert open_blockwise(store).number_of_nodes() == 300  # an honest consolidated store

    def bomb(m):  # gzip chunks of 2^23 rows: a band check would decode 320 MiB
        m["chunk_grid"]["configuration"]["chunk_shape"] = [1 << 23, 5]
        m["codecs"] = [{"name": "bytes", "configuration": {"endian": "little"}},
                       {"name": "gzip", "configuration": {"level": 1}}]
    _edit_json(store / "adjacency" / "zarr.json", bomb)
    shutil.rmtree(store / "adjacency" / "c")
    (store / "adjacency" / "c" / "0").mkdir(parents=True)
    (store / "adjacency" / "c" / "0" / "0").write_bytes(gzip.compress(bytes(1 << 16)))
    decoded = []
    real = zarr.codecs.GzipCodec._decode_single

    async def counting(self, *args, **kwargs):
        decoded.append(1)
        return await real(self, *args, **kwargs)
    monkeypatch.setattr(zarr.codecs.GzipCodec, "_decode_single", counting)
    with pytest.raises(ValueError, match="'adjacency' has (chunks|codecs)"):
        open_blockwise(store)
    assert decoded == []  # refused before a chunk was decoded


# --------------------------------------------------------------------------- repeated edge-list lines
def test_an_edge_list_of_repeated_lines_is_read_in_memory_of_its_pairs(tmp_path, monkeypatch):
    """300,000 lines naming 3 pairs: memory follows the pairs and one block, not the lines."""
    import dataclasses
    import gzip
    import tracemalloc

    from dpgraph.graph import inputs
    lines = 300_000
    path = tmp_path / "repeated.txt.gz"
    with gzip.open(path, "wb", compresslevel=1) as fh:
        fh.write(b"0 1\n2 1\n" + b"0 1\n" * (lines - 3) + b"3 2\n")
    block = 1 << 16  # the reader's block, small so that the lines are many blocks
    small = dataclasses.replace(inputs.ReadOptions(), chunk_bytes=block)
    monkeypatch.setattr(inputs, "ReadOptions", lambda **kw: dataclasses.replace(small, **kw))
    tracemalloc.start()
    try:
        enc = inputs.read_input(path, nodes=5)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (enc.rows.tolist(), enc.cols.tolist()) == ([0, 1, 2], [1, 2, 3])  # first-seen order
    # two int64 a line are 4.8 MB, held and then concatenated; a block is read with ~50x it
    assert peak < 64 * block + (1 << 20), peak


def test_collapsing_keeps_the_first_occurrence_order_and_the_whole_input_counts():
    import numpy as np

    from dpgraph.graph.edgelist import DistinctKeys
    rng = np.random.default_rng(5)
    stream = rng.integers(0, 5000, size=300_000).astype(np.uint64)
    d = DistinctKeys()
    for a in range(0, stream.size, 7001):
        d.add(stream[a:a + 7001])
    _, first = np.unique(stream, return_index=True)
    assert np.array_equal(d.keys(), stream[np.sort(first)])
    G = np.array([[0, 1], [1, 0], [0, 0], [0, 9], [2, 2]])  # refusals count the whole input
    with pytest.raises(ValueError, match="names 1 edge end"):
        dpgraph.release(G, 1.0, nodes=5)


# --------------------------------------------------------------------------- tables whose column is not one
def _two_d_tables():
    import pandas as pd
    import polars as pl
    import pyarrow as pa
    return {
        "repeated pandas name": pd.DataFrame([[0, 1, 2], [1, 2, 3]],
                                             columns=["source", "source", "target"]),
        "polars struct": pl.DataFrame({"source": [{"a": 0, "b": 1}, {"a": 1, "b": 2}],
                                       "target": [1, 2]}),
        "polars one-field struct": pl.DataFrame({"source": [{"a": 0}, {"a": 1}],
                                                 "target": [1, 2]}),
        "polars list": pl.DataFrame({"source": [[0], [1]], "target": [1, 2]}),
        "pyarrow struct": pa.table({"source": pa.array([{"a": 0}, {"a": 1}]), "target": [1, 2]}),
        "first two columns, one a struct": pl.DataFrame({"u": [{"a": 0}, {"a": 3}],
                                                         "v": [1, 2]}),
    }


@pytest.mark.parametrize("case", list(_two_d_tables()))
def test_a_table_column_that_is_not_one_column_is_refused(case):
    G = _two_d_tables()[case]
    with pytest.raises(ValueError, match=r"column '(source|u)' is not one column of node labels"):
        dpgraph.release(G, 1.0, nodes=4, seed=1)


def test_plain_tables_still_read():
    import pandas as pd
    import polars as pl
    import pyarrow as pa
    for G in (pd.DataFrame({"source": [0, 1], "target": [1, 2]}),
              pl.DataFrame({"source": [0, 1], "target": [1, 2]}),
              pa.table({"source": [0, 1], "target": [1, 2]})):
        assert dpgraph.graph.read_input(G, nodes=4).rows.tolist() == [0, 1]


# --------------------------------------------------------------------------- bins beyond floats, frames
@pytest.mark.parametrize("bins", [[0, 10**400], [-(10**400), 0, 1],
                                  ["fraction", 0, 10**400], [0.5, 10**309]])
def test_bins_beyond_the_float_range_are_a_value_error(bins):
    from fractions import Fraction

    from dpgraph.graph.typed.encoding import tie_values
    if bins[0] == "fraction":
        bins = [Fraction(b) for b in bins[1:]]
    with pytest.raises(ValueError, match="bins must be finite numbers within the float range"):
        tie_values("w", bins=bins)


def _dpgraph_frames(exc: BaseException) -> list[str]:
    """The frames kept below the public entry point (its wrapper in _frames.py), chain included."""
    import os
    found = []
    for k, link in enumerate(_chain(exc)):
        tb, below = link.__traceback__, k > 0  # a chained error has no entry frame above it
        while tb is not None:
            code = tb.tb_frame.f_code
            if below:
                found.append(f"{os.path.basename(code.co_filename)}:{code.co_name}")
            below = below or code.co_filename.endswith("_frames.py")
            tb = tb.tb_next
    return found


@pytest.mark.parametrize("value, error", [(10**400, ValueError), (-(10**400), ValueError),
                                          ("s3cr3t-value", TypeError), (True, TypeError)])
def test_a_refused_tie_value_keeps_no_frame_whatever_its_type(value, error):
    from fractions import Fraction
    G = nx.path_graph(4)
    nx.set_edge_attributes(G, Fraction(1, 3), "w")
    G.edges[1, 2]["w"] = value  # one private value the bins cannot map
    with pytest.raises(error) as info:
        dpgraph.release(G, 1.0, edge_attr="w", bins=[0, 1, 10], seed=1)
    assert "1 edge(s)" in str(info.value) and str(value) not in _all_text(info.value)
    assert _dpgraph_frames(info.value) == []


def test_every_refusal_type_is_stripped_of_the_frames_below_the_entry():
    from dpgraph._frames import drops_input_frames

    @drops_input_frames
    def entry(secret):
        def reader(data):
            raise {"v": ValueError, "t": TypeError, "o": OverflowError, "k": KeyError}[data[0]]()
        return reader(secret)

    for kind in "vtok":
        with pytest.raises(Exception) as info:
            entry(kind + "-private")
        frames = []
        tb = info.value.__traceback__
        while tb is not None:
            frames.append(tb.tb_frame.f_code.co_name)
            tb = tb.tb_next
        assert "reader" not in frames, (kind, frames)


# --------------------------------------------------------------------------- uint64 labels above 2^53
def _uint64_inputs(pairs):
    import numpy as np
    import pandas as pd
    import polars as pl
    E = np.array(pairs, dtype=np.uint64)
    return {"numpy uint64": E,
            "pandas uint64": pd.DataFrame({"source": E[:, 0], "target": E[:, 1]}),
            "polars UInt64": pl.DataFrame({"source": E[:, 0], "target": E[:, 1]},
                                          schema={"source": pl.UInt64, "target": pl.UInt64})}


@pytest.mark.parametrize("kind", ["numpy uint64", "pandas uint64", "polars UInt64"])
def test_uint64_labels_above_2_53_are_found_exactly(kind):
    nodes = [2**53 + 1 + k for k in range(6)]  # through float64, 2^53 + 1 and 2^53 + 2 meet
    G = _uint64_inputs([[nodes[0], nodes[1]], [nodes[3], nodes[2]], [nodes[4], nodes[5]]])[kind]
    enc = dpgraph.graph.read_input(G, nodes=nodes)
    assert (enc.rows.tolist(), enc.cols.tolist()) == ([0, 2, 4], [1, 3, 5])
    stray = _uint64_inputs([[nodes[0], 2**53]])[kind]  # no node, though 2^53 + 1 as a float
    with pytest.raises(ValueError, match="1 edge end"):
        dpgraph.graph.read_input(stray, nodes=nodes)


def test_uint64_query_labels_are_found_exactly():
    import numpy as np
    nodes = [2**53 + 1 + k for k in range(6)]
    index = dpgraph.graph.NodeIndex(nodes)
    q = np.array([*nodes, 2**53, 2**64 - 1], dtype=np.uint64)
    assert index.find(q).tolist() == [0, 1, 2, 3, 4, 5, -1, -1]
    assert index.lookup(q)[1] == 2


def test_a_private_key_given_as_a_file_path_is_never_repeated(keys):
    """A key's PEM text where a release file or an edge list's path belongs."""
    _, secret, public, _ = keys
    pem_secret = secret.read_text()
    for call in (lambda: dpgraph.load(pem_secret),
                 lambda: dpgraph.load(pem_secret, verify_key=public),
                 lambda: dpgraph.release(pem_secret, 1.0, nodes=5),
                 lambda: dpgraph.graph.read_input(pem_secret, nodes=5)):
        with pytest.raises((ValueError, OSError)) as info:
            call()
        assert "not shown" in str(info.value)
        shown = str(info.value) + repr(info.value) + "".join(
            traceback.format_exception(type(info.value), info.value, info.value.__traceback__))
        assert not any(p in shown for p in _secret_pieces(pem_secret))


def test_a_private_key_given_as_a_save_path_is_never_repeated(keys):
    """``R.save(<PEM text>)`` and a missing file checked by path keep no copy of the text,
    in the message or in any chained error."""
    from dpgraph._files import check_regular_file

    _, secret, _, _ = keys
    pem_secret = secret.read_text()
    R = dpgraph.release(nx.path_graph(5), 1.0, seed=0)
    for call in (lambda: R.save(pem_secret),
                 lambda: check_regular_file(pem_secret, "the signing_key file")):
        with pytest.raises((ValueError, OSError)) as info:
            call()
        assert not any(p in _all_text(info.value) for p in _secret_pieces(pem_secret))
        assert all(not getattr(e, "filename", None) for e in _chain(info.value))
