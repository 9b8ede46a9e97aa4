"""A bounded load test of a running collector: many simulated users, concurrently, over loopback.

Used by the crash test and ``benchmarks/bench_collector.py``.  The sender is a
minimal keep-alive HTTP/1.1 client on asyncio streams (one connection per
request in flight): a general client library costs more per request than
the collector does, and would measure itself.  Its request
loop is bounded in count (one request a report) and in time (a deadline),
and it stops by itself; point it only at a collector on this machine.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["LoadResult", "send_reports"]


@dataclass(frozen=True)
class LoadResult:
    """Statuses and latencies (seconds) of each request, and the wall time.

    ``status`` is 0 for a request that failed without an answer (the
    collector was down) or was not sent before the deadline.
    """

    status: np.ndarray
    latency: np.ndarray
    seconds: float

    @property
    def accepted(self) -> int:
        """Reports answered 201."""
        return int(np.count_nonzero(self.status == 201))

    def rate(self) -> float:
        """Answered reports per second of wall time."""
        return float(np.count_nonzero(self.status)) / max(self.seconds, 1e-9)

    def p99(self) -> float:
        """99th percentile latency of the answered requests (seconds)."""
        answered = self.latency[self.status > 0]
        return float(np.percentile(answered, 99)) if answered.size else float("nan")


async def _post(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str,
                token: str, body: bytes) -> int:
    """One keep-alive HTTP/1.1 POST /report; its status code."""
    writer.write(f"POST /report HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\n"
                 f"Content-Type: application/octet-stream\r\nContent-Length: {len(body)}\r\n"
                 "\r\n".encode() + body)
    await writer.drain()
    status = int((await reader.readline()).split()[1])
    length = 0
    while (line := await reader.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode("latin-1").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    await reader.readexactly(length)
    return status


async def _send(url: str, items: Sequence[tuple[str, bytes]], concurrency: int,
                deadline: float) -> LoadResult:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    status = np.zeros(len(items), dtype=np.int64)
    latency = np.zeros(len(items))
    nxt = iter(range(len(items)))
    stop = time.perf_counter() + deadline

    async def worker() -> None:
        conn = None
        for k in nxt:
            if time.perf_counter() > stop:
                break
            token, body = items[k]
            t0 = time.perf_counter()
            try:
                if conn is None:
                    conn = await asyncio.open_connection(host, port)
                status[k] = await _post(*conn, f"{host}:{port}", token, body)
            except (OSError, ValueError, IndexError, asyncio.IncompleteReadError):
                status[k], conn = 0, None  # no answer: the collector is down or went down
            latency[k] = time.perf_counter() - t0
        if conn is not None:
            conn[1].close()

    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return LoadResult(status, latency, time.perf_counter() - t0)


def send_reports(url: str, items: Sequence[tuple[str, bytes]], concurrency: int = 64,
                 deadline: float = 300.0) -> LoadResult:
    """POST each (token, report) to ``url``/report with ``concurrency`` requests in flight.

    Parameters
    ----------
    url : str
        The collector, e.g. ``"http://127.0.0.1:8000"`` (loopback only).
    items : sequence of (token, report bytes)
    concurrency : int, default 64
    deadline : float, default 300
        Seconds after which no new request is sent.
    """
    return asyncio.run(_send(url, items, int(concurrency), float(deadline)))
