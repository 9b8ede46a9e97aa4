"""The collector over loopback: reports per second, p99 latency, and the time to close.

Each configuration creates a collection folder, pre-computes every user's
report with the real client (timed: the device's cost), starts the real
collector (``dpgraph collect serve``, uvicorn) on 127.0.0.1, sends every
report with ``--concurrency`` requests in flight (bounded in count and by a
deadline; :mod:`dpgraph.local.loadtest`), then closes the collection into a
release file (``close_collection``, timed).  Baseline in the same run: the
in-process :class:`dpgraph.local.Collection` adding the same reports (no
HTTP, no disk), so the ratio says what the service's network and durable
storage cost.  Targets: >= 500 reports/s for 4,039-node rows; the release
of 10^4 reports in under a minute.

    python benchmarks/bench_collector.py [--quick] [--concurrency 64]

Sends traffic to loopback only; every number is printed, none dropped.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks._common import quick, report, table
from dpgraph.local import Collection, client_report, close_collection, issue_tokens
from dpgraph.local.loadtest import send_reports

ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(folder: Path, port: int) -> subprocess.Popen:
    import httpx

    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "dpgraph", "collect", "serve", str(folder),
                             "--port", str(port)], env=env, stdout=subprocess.DEVNULL)
    for _ in range(600):
        try:
            httpx.get(f"http://127.0.0.1:{port}/status", timeout=1)
            return proc
        except httpx.HTTPError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("the collector did not start")


def run(n: int, users: int, protocol: str, concurrency: int, degree: float) -> dict:
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "coll"
        tokens = issue_tokens(folder, n, 1.0, protocol, degree)
        t0 = time.perf_counter()
        items = []
        for u in range(users):  # a sparse row of about 40 neighbours, as ego-Facebook's mean
            near = rng.choice(n, size=40, replace=False)
            near = near[near != u].tolist()
            items.append((tokens[u], client_report(u, near, n, 1.0, protocol, degree)))
        client_ms = 1e3 * (time.perf_counter() - t0) / users
        t0 = time.perf_counter()
        C = Collection(n, 1.0, protocol, degree)
        for _, body in items:
            C.add(body)
        inproc = users / (time.perf_counter() - t0)
        port = _free_port()
        proc = _serve(folder, port)
        try:
            res = send_reports(f"http://127.0.0.1:{port}", items, concurrency, deadline=600)
        finally:
            proc.terminate()
            proc.wait(timeout=60)
        t0 = time.perf_counter()
        close_collection(folder, Path(tmp) / "c.dpg")
        close_s = time.perf_counter() - t0
    return {"nodes": n, "users": users, "protocol": protocol,
            "report bytes": len(items[0][1]), "client ms": f"{client_ms:.2f}",
            "accepted": res.accepted, "reports/s": f"{res.rate():.0f}",
            "in-process/s": f"{inproc:.0f}",
            "p50 ms": f"{1e3 * float(np.median(res.latency)):.1f}",
            "p99 ms": f"{1e3 * res.p99():.1f}", "close s": f"{close_s:.1f}",
            "_rate": res.rate(), "_inproc": inproc, "_close": close_s}


def _load() -> list[str]:
    with open("/proc/loadavg") as fh:
        return fh.read().split()[:3]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    small = args.quick or quick()
    configs = [(4039, 4039, "both", 0.0), (4039, 4039, "one", 0.1)]
    configs.append((2000, 2000, "one", 0.0) if small else (10_000, 10_000, "one", 0.0))
    print(f"load average before: {_load()}")
    rows = [run(n, users, p, args.concurrency, d) for n, users, p, d in configs]
    cols = ["nodes", "users", "protocol", "report bytes", "client ms", "accepted", "reports/s",
            "in-process/s", "p50 ms", "p99 ms", "close s"]
    print(table(rows, cols))
    print(f"load average after: {_load()}")
    for r in rows:
        report(f"collector reports/s over loopback, {r['nodes']}-node rows, {r['protocol']}",
               r["_rate"] / 500.0, target=1.0,
               baseline="500 reports/s target (in-process Collection: "
                        f"{r['_inproc']:.0f}/s)")
    big = rows[-1]
    report(f"close {big['users']} reports into a release, seconds vs 60", 60.0 / big["_close"],
           target=1.0, baseline="60 s target")


if __name__ == "__main__":
    main()
