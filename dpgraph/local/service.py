"""The HTTP collector: a small Starlette app over a collection folder's durable store.

Endpoints::

    GET  /collection   the public description (nodes, epsilon, protocol, degree_share)
    GET  /status       how many users have reported (public)
    POST /report       body: one report (wire format); header "Authorization: Bearer TOKEN"

``POST /report`` answers 201 when the report is stored durably, else a JSON
``{"error": ...}`` with 400 (malformed, or not for this collection), 401
(a token the curator did not issue), 403 (a report for another user than the
token's), 409 (the user has already reported), 413 (larger than a report of
this collection).  A refused report leaves the store unchanged.

Accepted reports are *group-committed*: requests that arrive while a commit
is running are written together in the next transaction, and each is
answered only after its transaction is committed (WAL synced to disk,
``synchronous=FULL``), so a crash loses nothing that was acknowledged.
Needs the ``collect`` extra (``pip install dpgraph[collect]``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import Any

from .collection import ReportRefused
from .tokens import ReportStore, open_store

__all__ = ["create_app", "serve"]


def _starlette() -> Any:
    try:
        import starlette  # noqa: F401
    except ImportError:  # pragma: no cover - the extra is part of the test extra
        raise ImportError("the collector service needs Starlette and uvicorn: "
                          "pip install 'dpgraph[collect]'") from None


class _GroupCommit:
    """One writer: queued reports are committed together, each future resolved after it."""

    def __init__(self, store: ReportStore, batch: int = 1024) -> None:
        self.store, self.batch = store, batch
        self.queue: asyncio.Queue = asyncio.Queue()

    async def run(self) -> None:
        while True:
            items = [await self.queue.get()]
            while not self.queue.empty() and len(items) < self.batch:
                items.append(self.queue.get_nowait())
            try:
                fresh = await asyncio.to_thread(self.store.commit, [(u, b) for u, b, _ in items])
            except Exception as exc:  # the transaction rolled back: nothing of it is stored
                for _, _, fut in items:
                    if not fut.done():
                        fut.set_exception(exc)
                continue
            for (_, _, fut), ok in zip(items, fresh):
                if not fut.done():
                    fut.set_result(ok)

    async def submit(self, user: int, body: bytes) -> bool:
        fut = asyncio.get_running_loop().create_future()
        await self.queue.put((user, body, fut))
        return await fut


def create_app(directory: str | os.PathLike) -> Any:
    """The ASGI app of a collection folder (made by :func:`~dpgraph.local.issue_tokens`).

    Examples
    --------
    >>> import tempfile, warnings
    >>> from starlette.testclient import TestClient
    >>> from dpgraph.local import client_report, issue_tokens
    >>> folder = tempfile.mkdtemp()
    >>> tokens = issue_tokens(folder, 5, 1.0)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     body = client_report(3, [0], 5, 1.0, seed=0)
    >>> with TestClient(create_app(folder)) as client:
    ...     ok = client.post("/report", content=body,
    ...                      headers={"Authorization": f"Bearer {tokens[3]}"})
    ...     again = client.post("/report", content=body,
    ...                         headers={"Authorization": f"Bearer {tokens[3]}"})
    >>> ok.status_code, again.status_code, again.json()["error"]
    (201, 409, 'report: user 3 has already reported')
    """
    _starlette()
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    store = open_store(directory)  # refuses a folder without a collection, before serving
    C = store.collection
    limit = C.max_report_bytes
    state: dict[str, Any] = {}

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> Any:
        writer = _GroupCommit(store)
        task = asyncio.create_task(writer.run())
        state["writer"] = writer
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            store.close()

    def refuse(message: str, status: int) -> JSONResponse:
        return JSONResponse({"error": message}, status_code=status)

    async def report(request: Request) -> JSONResponse:
        auth = request.headers.get("authorization", "")
        token = auth[7:].strip() if auth[:7].lower() == "bearer " else None
        declared = request.headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            return refuse(f"report: larger than the {limit} bytes of a report of this "
                          "collection", 413)
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > limit:
                return refuse(f"report: larger than the {limit} bytes of a report of this "
                              "collection", 413)
        try:
            user = store.validate(token, bytes(body))
        except ReportRefused as exc:
            return refuse(str(exc), exc.status)
        if not await state["writer"].submit(user, bytes(body)):
            return refuse(f"report: user {user} has already reported", 409)
        return JSONResponse({"accepted": True, "user": user}, status_code=201)

    async def status(request: Request) -> JSONResponse:
        count = await asyncio.to_thread(store.count)
        return JSONResponse({"nodes": C.n, "reported": count})

    async def collection(request: Request) -> JSONResponse:
        return JSONResponse({"nodes": list(C.index.nodes), "epsilon": C.epsilon,
                             "protocol": C.protocol, "degree_share": C.degree_share,
                             "wire_version": 1})

    return Starlette(routes=[Route("/report", report, methods=["POST"]),
                             Route("/status", status, methods=["GET"]),
                             Route("/collection", collection, methods=["GET"])],
                     lifespan=lifespan)


def serve(directory: str | os.PathLike, host: str = "127.0.0.1", port: int = 8000,
          log_level: str = "warning") -> None:
    """Run the collector with uvicorn until interrupted (``dpgraph collect serve``)."""
    _starlette()
    import uvicorn

    uvicorn.run(create_app(directory), host=host, port=port, log_level=log_level,
                access_log=False)
