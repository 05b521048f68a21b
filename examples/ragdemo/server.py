"""A small ASGI app over the query engine: the answer streams as server-sent events.

No web framework: ``ChatApp`` speaks ASGI directly.

* ``POST /chat`` with ``Authorization: Bearer <token>`` and a JSON body
  ``{"message": ..., "conversation_id": ...}`` (the id is optional: without it a new
  conversation starts). The reply is ``text/event-stream``: one ``token`` event per piece of
  the answer as it is generated, then ``citations`` (tied to the message id), then ``done``
  with the message id, the conversation id and the tokens used. The turn runs inside the
  request: nothing is queued for later. A client that goes away stops the generation.
* ``GET /conversations/{id}``: the thread, for its owner only (404 for anyone else).

401 without a known session, 404 for an unknown or foreign conversation.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import asdict
from typing import Any

from ragdemo.bugs import check_bugs
from ragdemo.chatstore import NotFound
from ragdemo.engine import QueryEngine, TurnResult

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


def sse(event: str, data: Any) -> bytes:
    """One server-sent event; the data is one line of JSON."""
    return f"event: {event}\ndata: {json.dumps(data, sort_keys=True)}\n\n".encode()


def _event(kind: str, payload: Any) -> bytes:
    if kind == "token":
        return sse("token", {"text": payload})
    if kind == "citations":
        message_id, citations, hints = payload
        return sse(
            "citations",
            {
                "message_id": message_id,
                "citations": [asdict(c) for c in citations],
                "hints": list(hints),
            },
        )
    result: TurnResult = payload
    return sse(
        "done",
        {
            "message_id": result.message_id,
            "conversation_id": result.conversation_id,
            "tokens_used": result.tokens_used,
            "not_found": result.not_found,
        },
    )


class ChatApp:
    """The ASGI application. ``sessions`` maps a bearer token to a signed-in session."""

    def __init__(
        self, engine: QueryEngine, sessions: Mapping[str, Any], *, bugs: Iterable[str] = ()
    ) -> None:
        self.engine = engine
        self.sessions = sessions
        self.bugs = check_bugs(bugs)
        self.queued: list[Callable[[], Any]] = []  # only the enqueue_turn bug fills it

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        token = headers.get("authorization", "").removeprefix("Bearer ").strip()
        session = self.sessions.get(token)
        if session is None:
            await _json(send, 401, {"error": "sign in first"})
            return
        method, path = scope["method"], scope["path"]
        if method == "POST" and path == "/chat":
            body = await _body(receive)
            await self._chat(session, json.loads(body or b"{}"), receive, send)
        elif method == "GET" and path.startswith("/conversations/"):
            await self._thread(session, path.removeprefix("/conversations/"), send)
        else:
            await _json(send, 404, {"error": "no such route"})

    async def _thread(self, session: Any, conversation_id: str, send: Send) -> None:
        store = self.engine.store
        try:
            store.conversation(conversation_id, session.owner)
        except NotFound:
            if "foreign_thread_403" in self.bugs and conversation_id in store.conversations:
                await _json(send, 403, {"error": "not your conversation"})
                return
            await _json(send, 404, {"error": "no such conversation"})
            return
        messages = [
            {
                "id": m.id,
                "role": m.role,
                "content": m.content,
                "citations": [asdict(c) for c in m.citations],
            }
            for m in store.thread(conversation_id)
        ]
        await _json(send, 200, {"id": conversation_id, "messages": messages})

    async def _chat(self, session: Any, body: dict[str, Any], receive: Receive, send: Send) -> None:
        message = body.get("message")
        if not isinstance(message, str) or not message.strip():
            await _json(send, 400, {"error": "message must be a non-empty string"})
            return
        conversation_id = body.get("conversation_id")
        if "enqueue_turn" in self.bugs:
            self.queued.append(
                lambda: self.engine.turn(session, message, conversation_id=conversation_id)
            )
            await _start(send, 202)
            await send(
                {"type": "http.response.body", "body": sse("queued", {}), "more_body": False}
            )
            return
        events = self.engine.stream(session, message, conversation_id=conversation_id)
        try:
            first = next(events)
        except NotFound:
            await _json(send, 404, {"error": "no such conversation"})
            return
        disconnected = asyncio.Event()
        watcher = asyncio.ensure_future(_watch(receive, disconnected))
        try:
            await _start(send, 200)
            await self._send_events(first, events, send, disconnected)
        finally:
            events.close()  # a client that went away: the engine stops and finishes the message
            watcher.cancel()

    async def _send_events(
        self, first: tuple[str, Any], events: Any, send: Send, disconnected: asyncio.Event
    ) -> None:
        if "buffer_stream" in self.bugs or "citations_first" in self.bugs:
            every = [first, *events]
            if "citations_first" in self.bugs:
                every.sort(key=lambda event: event[0] != "citations")
            pending: Iterable[tuple[str, Any]] = every
        else:
            pending = _chain(first, events)
        for kind, payload in pending:
            if disconnected.is_set() and "ignore_disconnect" not in self.bugs:
                return
            body = _event(kind, payload)
            if not disconnected.is_set():
                await send({"type": "http.response.body", "body": body, "more_body": True})
            # Let the client read, and a disconnect be noticed, before the next token.
            await asyncio.sleep(0)
        if not disconnected.is_set():
            await send({"type": "http.response.body", "body": b"", "more_body": False})


def _chain(first: Any, rest: Any) -> Any:
    yield first
    yield from rest


async def _watch(receive: Receive, disconnected: asyncio.Event) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            disconnected.set()
            return


async def _body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


async def _start(send: Send, status: int, content_type: str = "text/event-stream") -> None:
    headers = [(b"content-type", content_type.encode()), (b"cache-control", b"no-store")]
    await send({"type": "http.response.start", "status": status, "headers": headers})


async def _json(send: Send, status: int, data: Any) -> None:
    await _start(send, status, "application/json")
    await send({"type": "http.response.body", "body": json.dumps(data).encode()})
