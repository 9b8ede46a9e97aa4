"""The collector service: refusals leave the store unchanged, a real server, kill -9."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import warnings
from dataclasses import replace
from pathlib import Path

import networkx as nx
import pytest

pytest.importorskip("starlette")
from starlette.testclient import TestClient

import dpgraph
from dpgraph.cli import main
from dpgraph.exceptions import SeededReleaseWarning
from dpgraph.local import (
    client_report,
    close_collection,
    issue_tokens,
    open_store,
    wire,
)
from dpgraph.local.loadtest import send_reports
from dpgraph.local.service import create_app, serve

ROOT = Path(__file__).resolve().parents[1]
N = 30
G = nx.gnp_random_graph(N, 0.2, seed=2)


def _report(u, protocol="one", n=N, eps=1.0, seed=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeededReleaseWarning)
        return client_report(u, list(G.adj[u]) if n == N else [], n, eps, protocol,
                             seed=u if seed is None else seed)


@pytest.fixture
def folder(tmp_path):
    tokens = issue_tokens(tmp_path / "coll", N, 1.0, tokens_path=tmp_path / "tokens.csv")
    return tmp_path / "coll", tokens


def _rows(path):
    store = open_store(path)
    try:
        return list(store.bodies())
    finally:
        store.close()


def test_bad_input_is_refused_with_a_clear_error_and_the_store_unchanged(folder):
    path, tokens = folder
    good = _report(4)
    auth = {"Authorization": f"Bearer {tokens[4]}"}
    with TestClient(create_app(path)) as client:
        assert client.post("/report", content=good, headers=auth).status_code == 201
        before = _rows(path)
        other = _report(5)
        forged = tokens[5][:-1] + ("0" if tokens[5][-1] != "0" else "1")
        flipped = bytearray(other)
        outside = wire.encode(replace(wire.decode(other), user=N + 3))
        flipped[53] ^= 0x04
        cases = [
            (other[:40], tokens[5], 400, "truncated"),
            (other + b"\0" * 400, tokens[5], 413, "larger than"),
            (other[:4] + b"\x07" + other[5:], tokens[5], 400, "version 7"),
            (good, tokens[4], 409, "already reported"),                 # replayed
            (other, forged, 401, "not issued"),                          # forged token
            (other, None, 401, "missing or malformed"),
            (other, tokens[6], 403, "not the one its token"),            # wrong user id
            (bytes(flipped), tokens[5], 400, "CRC"),                     # flipped bytes
            (_report(5, n=N - 4), tokens[5], 400, "nodes"),              # another vertex set
            (outside, tokens[5], 400, "outside the vertex set"),
            (_report(5, eps=2.0), tokens[5], 400, "epsilon"),
        ]
        for body, token, status, message in cases:
            headers = {} if token is None else {"Authorization": f"Bearer {token}"}
            r = client.post("/report", content=body, headers=headers)
            assert (r.status_code, message in r.json()["error"]) == (status, True), message
            assert _rows(path) == before, message
        assert client.get("/status").json() == {"nodes": N, "reported": 1}
        assert client.post("/report", content=other,
                           headers={"Authorization": f"Bearer {tokens[5]}"}).status_code == 201


def test_a_token_file_is_private_and_a_folder_is_never_re_keyed(folder, tmp_path):
    path, _ = folder
    assert oct(os.stat(path / "secret.key").st_mode & 0o777) == "0o600"
    assert oct(os.stat(tmp_path / "tokens.csv").st_mode & 0o777) == "0o600"
    with pytest.raises(FileExistsError):
        issue_tokens(path, N, 1.0)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Forked:
    """The collector in a forked child (no import time: the CI-sized crash test)."""

    def __init__(self, path, port):
        import multiprocessing

        self.proc = multiprocessing.get_context("fork").Process(
            target=serve, args=(str(path), "127.0.0.1", port), daemon=True)
        self.proc.start()
        self.pid = self.proc.pid

    def wait(self, timeout=None):
        self.proc.join(timeout)

    def send_signal(self, sig):
        os.kill(self.pid, sig)


def _start(path, port, forked=True):
    if forked:
        proc = _Forked(path, port)
    else:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        proc = subprocess.Popen([sys.executable, "-m", "dpgraph", "collect", "serve", str(path),
                                 "--port", str(port)], env=env, cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return proc
        except OSError:
            time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    raise AssertionError("the collector did not start")


def _crash(tmp_path, n, forked):
    path = tmp_path / "coll"
    tokens = issue_tokens(path, n, 1.0, protocol="both")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeededReleaseWarning)
        items = [(tokens[u], client_report(u, [], n, 1.0, "both", seed=u)) for u in range(n)]
    port = _free_port()
    proc = _start(path, port, forked)
    import threading

    def kill_mid_way() -> None:  # once a sixth of the reports are stored: kill -9
        import sqlite3

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with sqlite3.connect(path / "reports.sqlite") as db:
                if db.execute("SELECT COUNT(*) FROM reports").fetchone()[0] >= n // 6:
                    break
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)

    killer = threading.Thread(target=kill_mid_way)
    killer.start()
    first = send_reports(f"http://127.0.0.1:{port}", items, concurrency=16, deadline=60)
    killer.join()
    proc.wait()
    accepted = {k for k in range(n) if first.status[k] == 201}
    assert 0 < len(accepted) < n, "the kill landed outside the collection; no crash tested"
    stored = {int.from_bytes(b[12:16], "little") for b in _rows(path)}
    assert accepted <= stored  # nothing acknowledged is lost
    proc = _start(path, port, forked)
    try:
        second = send_reports(f"http://127.0.0.1:{port}", items, concurrency=16, deadline=60)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
    assert all(second.status[k] == 409 for k in stored)  # nothing counted twice
    assert all(second.status[k] == 201 for k in range(n) if k not in stored)
    R = close_collection(path, tmp_path / "c.dpg")
    assert R.missing_users == [] and dpgraph.load(tmp_path / "c.dpg").protocol == "both"


def test_kill_9_loses_nothing_accepted_and_counts_nothing_twice(tmp_path):
    """CI-sized: the collector forked from this process, 600 users."""
    _crash(tmp_path, 600, forked=True)


@pytest.mark.slow
def test_kill_9_of_the_command_line_collector_at_4039_users(tmp_path):
    """The real ``dpgraph collect serve`` process, 4,039 users."""
    _crash(tmp_path, 4039, forked=False)


def test_the_command_line_issues_tokens_and_closes(tmp_path, capsys):
    path = tmp_path / "coll"
    assert main(["collect", "tokens", str(path), "--nodes", "20", "--epsilon", "1",
                 "--tokens-out", str(tmp_path / "t.csv")]) == 0
    lines = (tmp_path / "t.csv").read_text().splitlines()
    assert lines[0] == "position,label,token" and len(lines) == 21
    store = open_store(path)
    for u in (0, 3, 7):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SeededReleaseWarning)
            store.submit(lines[u + 1].split(",")[2], client_report(u, [], 20, 1.0, seed=u))
    store.close()
    out = tmp_path / "c.dpg"
    assert main(["collect", "close", str(path), "-o", str(out)]) == 0
    R = dpgraph.load(out)
    assert len(R.missing_users) == 17
    assert main(["cut", str(out), "--S", "0,3", "--T", "7"]) == 0
    assert "missing" in capsys.readouterr().out or R.cut([0, 3], [7]).missing_pairs == 0
