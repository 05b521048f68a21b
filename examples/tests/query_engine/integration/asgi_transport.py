"""An httpx transport that runs an ASGI app and streams its response as it is produced.

httpx's own ``ASGITransport`` collects the whole body before the client sees any of it, so a
test cannot tell a stream from one block at the end, and the app never hears a disconnect.
This one hands each body message to the client as the app sends it, with room for one
message in flight, so the app cannot run ahead of a client that stops reading; closing the
response early sends the app ``http.disconnect``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx

_END = object()


class _Body(httpx.AsyncByteStream):
    def __init__(self, queue: asyncio.Queue, disconnected: asyncio.Event, task: asyncio.Task):
        self._queue = queue
        self._disconnected = disconnected
        self._task = task

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            message = await self._queue.get()
            if message is _END:
                break
            if message.get("body"):
                yield message["body"]
            if not message.get("more_body", False):
                break
        await self._task

    async def aclose(self) -> None:
        if self._task.done():
            return
        self._disconnected.set()
        # Keep taking what the app sends until it notices the disconnect and returns.
        while not self._task.done():
            try:
                self._queue.get_nowait()
            except asyncio.QueueEmpty:
                await asyncio.sleep(0)
        self._task.result()


class StreamingASGITransport(httpx.AsyncBaseTransport):
    def __init__(self, app: Any) -> None:
        self.app = app

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        queue: asyncio.Queue = asyncio.Queue(maxsize=1)
        disconnected = asyncio.Event()
        delivered = False

        async def receive() -> dict[str, Any]:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            await disconnected.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            await queue.put(message)

        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": request.method,
            "scheme": request.url.scheme,
            "path": request.url.path,
            "raw_path": request.url.raw_path,
            "query_string": request.url.query,
            "headers": [(k.lower(), v) for k, v in request.headers.raw],
            "server": ("testserver", 80),
            "client": ("127.0.0.1", 123),
        }

        async def run() -> None:
            try:
                await self.app(scope, receive, send)
            finally:
                if not disconnected.is_set():
                    await queue.put(_END)

        task = asyncio.ensure_future(run())
        start = await queue.get()
        if start is _END:
            await task
            raise RuntimeError("the app returned without starting a response")
        headers = [(k, v) for k, v in start.get("headers", [])]
        return httpx.Response(
            start["status"], headers=headers, stream=_Body(queue, disconnected, task)
        )
