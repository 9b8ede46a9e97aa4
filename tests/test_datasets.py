"""Tests for dpgraph.datasets: lookup order, checksums, download path, parsers."""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import zipfile
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from _data import data_missing

from dpgraph import datasets

SHARED = Path(os.environ.get("DPGRAPH_DATA_DIR", "/work/shared/datasets"))


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """No data dir, an empty private cache: nothing is available locally."""
    monkeypatch.delenv("DPGRAPH_DATA_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path


def _register(monkeypatch, name, **kw):
    info = datasets.DatasetInfo(name=name, **kw)
    monkeypatch.setitem(datasets.REGISTRY, name, info)
    return info


# --------------------------------------------------------------------------- locations


def test_cache_dir_follows_xdg(isolated):
    assert datasets.cache_dir() == isolated / "cache" / "dpgraph"
    assert datasets.search_dirs() == [isolated / "cache" / "dpgraph"]


def test_data_dir_searched_before_cache(isolated, monkeypatch):
    body = b"0 1\n"
    info = _register(
        monkeypatch, "toy", filename="toy.txt", url="file:///nonexistent",
        sha256=hashlib.sha256(body).hexdigest(),
    )
    data_dir = isolated / "data"
    data_dir.mkdir()
    cache = datasets.cache_dir()
    cache.mkdir(parents=True)
    (cache / info.filename).write_bytes(body)
    assert datasets.fetch("toy") == cache / "toy.txt"
    (data_dir / info.filename).write_bytes(body)
    monkeypatch.setenv("DPGRAPH_DATA_DIR", str(data_dir))
    assert datasets.fetch("toy") == data_dir / "toy.txt"
    assert datasets.available("toy")


def test_unknown_name_and_bad_types(isolated):
    with pytest.raises(ValueError, match="unknown dataset name 'nope'.*facebook"):
        datasets.fetch("nope")
    with pytest.raises(TypeError, match="name must be a str"):
        datasets.available(3)


# --------------------------------------------------------------------------- download


def test_offline_download_fails_with_instructions(isolated, monkeypatch):
    _register(
        monkeypatch, "toy", filename="toy.txt.gz",
        url=(isolated / "missing.gz").as_uri(), sha256="0" * 64,
    )
    assert not datasets.available("toy")
    with pytest.raises(datasets.DatasetNotFoundError) as err:
        datasets.fetch("toy")
    msg = str(err.value)
    assert "toy.txt.gz" in msg and "DPGRAPH_DATA_DIR" in msg and str(datasets.cache_dir()) in msg
    with pytest.raises(datasets.DatasetNotFoundError, match="download=False"):
        datasets.fetch("toy", download=False)


def test_download_from_file_url_verifies_and_caches(isolated, monkeypatch):
    body = gzip.compress(b"# c\n0 1\n1 2\n", mtime=0)
    src = isolated / "pub.gz"
    src.write_bytes(body)
    _register(
        monkeypatch, "toy", filename="toy.txt.gz", url=src.as_uri(),
        sha256=hashlib.sha256(body).hexdigest(),
    )
    path = datasets.fetch("toy")
    assert path == datasets.cache_dir() / "toy.txt.gz"
    assert path.read_bytes() == body
    assert datasets.available("toy")
    G = datasets.snap_edgelist("toy")
    assert sorted(G.edges()) == [(0, 1), (1, 2)]
    # no temporary files left behind
    assert [p.name for p in datasets.cache_dir().iterdir()] == ["toy.txt.gz"]


def test_download_with_wrong_checksum_is_rejected_and_not_cached(isolated, monkeypatch):
    src = isolated / "pub.txt"
    src.write_bytes(b"0 1\n")
    _register(monkeypatch, "toy", filename="toy.txt", url=src.as_uri(), sha256="f" * 64)
    with pytest.raises(ValueError, match="does not match the published checksum"):
        datasets.fetch("toy")
    assert not datasets.available("toy")
    assert list(datasets.cache_dir().iterdir()) == []


def test_download_of_zip_member_checks_uncompressed_hash(isolated, monkeypatch):
    member = b"1\t2\t3\t4\n5\t6\t5\t7\n"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("ml/u.data", member)
    src = isolated / "ml.zip"
    src.write_bytes(buf.getvalue())
    _register(
        monkeypatch, "toyml", filename="toy-u.data.gz", url=src.as_uri(),
        sha256=hashlib.sha256(member).hexdigest(), checksum_of="uncompressed",
        archive_member="ml/u.data",
    )
    path = datasets.fetch("toyml")
    assert gzip.decompress(path.read_bytes()) == member
    r = datasets.read_ratings(path)
    assert r.rating.tolist() == [3, 5]


def test_local_file_with_bad_checksum(isolated, monkeypatch):
    _register(monkeypatch, "toy", filename="toy.txt", url="file:///x", sha256="a" * 64)
    datasets.cache_dir().mkdir(parents=True)
    (datasets.cache_dir() / "toy.txt").write_bytes(b"0 1\n")
    with pytest.raises(ValueError, match="checksum"):
        datasets.fetch("toy")
    assert datasets.fetch("toy", verify=False).name == "toy.txt"


# --------------------------------------------------------------------------- edge lists


def test_snap_edgelist_plain_gz_comments_directed(tmp_path):
    text = "# Directed graph\n# FromNodeId\tToNodeId\n0\t1\n1\t0\n2 3\n\n"
    p = tmp_path / "e.txt"
    p.write_text(text)
    pg = tmp_path / "e.txt.gz"
    pg.write_bytes(gzip.compress(text.encode()))
    for path in (p, str(pg)):
        G = datasets.snap_edgelist(path)
        assert G.number_of_edges() == 2 and not G.is_directed()
    D = datasets.snap_edgelist(p, directed=True)
    assert D.is_directed() and D.number_of_edges() == 3


def test_snap_edgelist_errors_name_line_not_content(tmp_path):
    p = tmp_path / "e.txt"
    p.write_text("# c\n0 1\n7 8 9 10\n78\n")
    with pytest.raises(ValueError, match=r"line 4: expected at least 2 .*found 1") as err:
        datasets.snap_edgelist(p)
    assert "78" not in str(err.value)
    p.write_text("0 1\n1 x\n")
    with pytest.raises(ValueError, match="line 2: expected an integer"):
        datasets.snap_edgelist(p)
    p.write_text("0 1\n4 4\n")
    with pytest.raises(ValueError, match="line 2: self-loop"):
        datasets.snap_edgelist(p)
    assert datasets.snap_edgelist(p, self_loops="drop").number_of_edges() == 1
    p.write_text("0 -1\n")
    with pytest.raises(ValueError, match="line 1: node ids must be non-negative"):
        datasets.snap_edgelist(p)
    with pytest.raises(ValueError, match="no such file"):
        datasets.snap_edgelist(tmp_path / "absent.txt")
    with pytest.raises(TypeError, match="path_or_name"):
        datasets.snap_edgelist(12)


def test_weighted_edge_list_extra_column_ignored(tmp_path):
    p = tmp_path / "w.txt"
    p.write_text("0 1 5\n1 2 7\n2 3\n")
    G = datasets.snap_edgelist(p)
    assert sorted(G.edges()) == [(0, 1), (1, 2), (2, 3)]


@pytest.mark.skipif(data_missing("facebook"), reason="ego-Facebook not present")
def test_facebook_counts():
    G = datasets.facebook()
    assert G.number_of_nodes() == 4039
    assert G.number_of_edges() == 88234
    assert sorted(G.nodes())[:2] == [0, 1] and max(G.nodes()) == 4038
    assert nx_triangles(G) == 1612010


def nx_triangles(G):
    import networkx as nx

    return sum(nx.triangles(G).values()) // 3


# --------------------------------------------------------------------------- ratings


def test_read_ratings_bad_column_count(tmp_path):
    p = tmp_path / "u.data"
    p.write_text("1\t2\t3\t4\n1\t2\t3\n")
    with pytest.raises(ValueError, match=r"u.data, line 2: expected exactly 4 .*found 3"):
        datasets.read_ratings(p)


@pytest.mark.parametrize("bad", [0, 6, -1])
def test_read_ratings_rating_outside_universe(tmp_path, bad):
    p = tmp_path / "u.data"
    p.write_text(f"1 2 3 4\n1 2 5 4\n9 9 {bad} 9\n")
    with pytest.raises(ValueError, match=r"line 3: rating outside the universe 1..5"):
        datasets.read_ratings(p)


def test_read_ratings_non_integer_and_empty(tmp_path):
    p = tmp_path / "u.data"
    p.write_text("1 2 3 4\n1 2 3.5 4\n")
    with pytest.raises(ValueError, match="line 2: expected an integer"):
        datasets.read_ratings(p)
    p.write_text("")
    with pytest.raises(ValueError, match="no ratings"):
        datasets.read_ratings(p)


def test_ratings_repr_hides_rows(tmp_path):
    p = tmp_path / "u.data"
    p.write_text("11 22 3 44\n")
    r = datasets.read_ratings(p)
    assert repr(r) == "Ratings(n=1, users=1, items=1, scale=1..5)"


@pytest.mark.skipif(data_missing("movielens-100k"), reason="MovieLens not present")
def test_movielens_100k():
    r = datasets.movielens_100k()
    assert len(r) == 100000
    assert np.unique(r.user).size == 943 and np.unique(r.item).size == 1682
    assert r.rating.min() == 1 and r.rating.max() == 5
    assert r.rating.dtype == np.int64


@pytest.mark.skipif(data_missing("email-eu-core"), reason="email-Eu-core not present")
def test_email_eu_core_counts_and_departments():
    G, dept = datasets.email_eu_core(departments=True)
    assert datasets.email_eu_core().number_of_edges() == 16064
    assert not G.is_directed()
    assert (G.number_of_nodes(), G.number_of_edges()) == (1005, 16064)
    assert sum(1 for v in G if G.degree(v) == 0) == 19
    assert set(dept) == set(G.nodes()) and len(set(dept.values())) == 42
    assert nx.number_of_selfloops(G) == 0


def test_http_download_failure_names_the_file(isolated, monkeypatch):
    # an address nothing listens on: the loader must explain where to put the file
    _register(monkeypatch, "toy", filename="toy.txt", url="http://127.0.0.1:9/toy.txt",
              sha256="0" * 64)
    with pytest.raises(datasets.DatasetNotFoundError, match="toy.txt.*DPGRAPH_DATA_DIR"):
        datasets.fetch("toy", timeout=5)
    assert list(datasets.cache_dir().iterdir()) == []
