"""One signing workflow from the command line to Python and back.

``dpgraph keygen`` -> ``dpgraph release --signing-key`` -> ``dpgraph report
--verify-key`` and ``dpgraph cut --verify-key`` through the real command line
(:func:`dpgraph.cli.main`), and ``dpgraph.load(verify_key=...)`` reading the
same key file; every tampered variant (a changed byte, another curator's key,
an unsigned file, the secret key passed as the public one) is refused.
"""

from __future__ import annotations

import json
import os
import stat

import networkx as nx
import pytest

import dpgraph
from dpgraph.cli import main
from dpgraph.graph.signing import public_hex, signing_key, verify_key


@pytest.fixture(scope="module")
def signed(tmp_path_factory):
    """A curator's key pair from keygen and a release signed with it through the CLI."""
    d = tmp_path_factory.mktemp("signing")
    edges = d / "edges.txt"
    G = nx.gnp_random_graph(60, 0.1, seed=4)
    edges.write_text("".join(f"{u} {v}\n" for u, v in G.edges()))
    assert main(["keygen", str(d / "curator")]) == 0
    assert main(["release", str(edges), "--epsilon", "1", "--nodes", "60",
                 "-o", str(d / "g.dpg"), "--signing-key", str(d / "curator.key")]) == 0
    return d


def _err(capsys) -> str:
    return capsys.readouterr().err


def test_keygen_writes_a_secret_and_a_public_key_file(signed):
    secret, public = signed / "curator.key", signed / "curator.pub"
    assert stat.S_IMODE(os.stat(secret).st_mode) == 0o600  # the curator's secret
    assert public.read_text().startswith("-----BEGIN PUBLIC KEY-----")
    assert public_hex(signing_key(secret)) == public_hex(verify_key(public))


def test_keygen_never_overwrites(signed, capsys):
    before = (signed / "curator.key").read_bytes()
    assert main(["keygen", str(signed / "curator")]) == 2
    assert "exists" in _err(capsys) and (signed / "curator.key").read_bytes() == before


def test_python_load_reads_the_key_file_in_every_form(signed):
    path, pub = signed / "g.dpg", signed / "curator.pub"
    for key in (pub, str(pub), pub.read_bytes(), verify_key(pub)):
        R = dpgraph.load(path, verify_key=key)
        assert R.number_of_nodes() == 60
    sk, vk = dpgraph.generate_signing_key()  # raw bytes work too, and a key file signs
    R.save(signed / "raw.dpg", signing_key=sk)
    assert dpgraph.load(signed / "raw.dpg", verify_key=vk).number_of_nodes() == 60
    R.save(signed / "py.dpg", signing_key=signed / "curator.key")
    assert dpgraph.load(signed / "py.dpg", verify_key=pub).number_of_nodes() == 60


def test_report_and_cut_check_the_signature(signed, capsys):
    out = signed / "report.html"
    assert main(["report", str(signed / "g.dpg"), "-o", str(out), "--quiet",
                 "--verify-key", str(signed / "curator.pub")]) == 0
    page = out.read_text()
    assert "Signature checked" in page
    assert public_hex(verify_key(signed / "curator.pub"))[:16] in page
    capsys.readouterr()
    assert main(["cut", str(signed / "g.dpg"), "--S", "0-29", "--json",
                 "--verify-key", str(signed / "curator.pub")]) == 0
    assert json.loads(capsys.readouterr().out)["S_size"] == 30


def _tampered(signed, tmp_path):
    data = bytearray((signed / "g.dpg").read_bytes())
    data[len(data) // 2] ^= 0x01  # one released bit
    (tmp_path / "bit.dpg").write_bytes(bytes(data))
    data = bytearray((signed / "g.dpg").read_bytes())
    data[-1] ^= 0x01  # the signature itself
    (tmp_path / "sig.dpg").write_bytes(bytes(data))
    dpgraph.load(signed / "g.dpg").save(tmp_path / "unsigned.dpg")
    assert main(["keygen", str(tmp_path / "other")]) == 0
    return tmp_path


@pytest.mark.parametrize("command", ["report", "cut"])
@pytest.mark.parametrize("case, key, message", [
    ("bit.dpg", "curator.pub", "bit.dpg failed its SHA-256 integrity check"),
    ("sig.dpg", "curator.pub", "sig.dpg: signature check failed"),
    ("g.dpg", "OTHER/other.pub", "g.dpg: signature check failed"),
    ("unsigned.dpg", "curator.pub", "unsigned.dpg is not signed"),
    ("g.dpg", "curator.key", "--verify-key: this is the signing (private) key"),
    ("g.dpg", "edges.txt", "--verify-key: '"),
    ("g.dpg", "missing.pub", "--verify-key: no such key file"),
])
def test_tampered_variants_are_refused(signed, tmp_path, capsys, command, case, key, message):
    d = _tampered(signed, tmp_path)
    release = (d if case != "g.dpg" else signed) / case
    key_path = d / key.split("/")[1] if key.startswith("OTHER/") else signed / key
    tail = ["-o", str(tmp_path / "r.html"), "--quiet"] if command == "report" else ["--S", "0-9"]
    capsys.readouterr()
    assert main([command, str(release), *tail, "--verify-key", str(key_path)]) == 2
    assert message in _err(capsys)
    assert not (tmp_path / "r.html").exists()


def test_python_refuses_the_same_variants(signed, tmp_path):
    d = _tampered(signed, tmp_path)
    pub = signed / "curator.pub"
    for name, message in (("bit.dpg", "SHA-256"), ("sig.dpg", "signature check failed"),
                          ("unsigned.dpg", "not signed")):
        with pytest.raises(ValueError, match=message):
            dpgraph.load(d / name, verify_key=pub)
    with pytest.raises(ValueError, match="signature check failed"):
        dpgraph.load(signed / "g.dpg", verify_key=d / "other.pub")
    with pytest.raises(ValueError, match=r"signing \(private\) key.*\.pub"):
        dpgraph.load(signed / "g.dpg", verify_key=signed / "curator.key")
    with pytest.raises(ValueError, match=r"verify \(public\) key.*\.key"):
        dpgraph.load(signed / "g.dpg").save(tmp_path / "x.dpg", signing_key=pub)
