"""Reading a thread over HTTP: the body for its owner, 404 for anyone else, 401 unsigned."""

import asyncio
import json

import httpx
import pytest
from asgi_transport import StreamingASGITransport
from qe_support import events_of, searching
from ragdemo.server import ChatApp

pytestmark = [pytest.mark.integration, pytest.mark.p1]


@pytest.fixture
def app(make_engine, alice, bob, bugs):
    model = searching("refund policy", "Returns are accepted within 30 days [1].")
    return ChatApp(make_engine(model=model), {"alice-token": alice, "bob-token": bob}, bugs=bugs)


def call(app, method, path, token=None, **kwargs):
    headers = {"Authorization": f"Bearer {token}"} if token else {}

    async def main():
        transport = StreamingASGITransport(app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            response = await http.request(method, path, headers=headers, **kwargs)
            return response.status_code, response.text

    return asyncio.run(main())


def start_thread(app):
    status, body = call(app, "POST", "/chat", "alice-token", json={"message": "refund?"})
    assert status == 200
    return events_of(body)[-1][1]


def test_the_first_message_creates_the_thread_and_returns_its_id(app):
    assert app.engine.store.conversations == {}

    done = start_thread(app)

    assert list(app.engine.store.conversations) == [done["conversation_id"]]


def test_the_owner_reads_the_thread_in_order_with_citations_on_the_answer(app):
    done = start_thread(app)

    status, body = call(app, "GET", f"/conversations/{done['conversation_id']}", "alice-token")

    thread = json.loads(body)
    assert status == 200
    assert [(m["role"], m["content"]) for m in thread["messages"]] == [
        ("user", "refund?"),
        ("assistant", "Returns are accepted within 30 days [1]."),
    ]
    assert thread["messages"][0]["citations"] == []
    assert [c["record_id"] for c in thread["messages"][1]["citations"]] == ["refund"]


@pytest.mark.catches("foreign_thread_403")
def test_an_unknown_and_a_foreign_thread_are_both_404_and_no_session_is_401(app):
    done = start_thread(app)
    path = f"/conversations/{done['conversation_id']}"

    assert call(app, "GET", "/conversations/conv-404", "alice-token")[0] == 404
    assert call(app, "GET", path, "bob-token")[0] == 404
    assert call(app, "GET", path)[0] == 401
