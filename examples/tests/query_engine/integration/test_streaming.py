"""The answer streams as server-sent events from the ASGI app, read with httpx."""

import asyncio

import httpx
import pytest
from asgi_transport import StreamingASGITransport
from qe_support import events_of, searching
from ragdemo.server import ChatApp

pytestmark = [pytest.mark.integration, pytest.mark.p1]

ANSWER = "Returns are accepted within 30 days [1]. Opened software cannot be returned [2]."


@pytest.fixture
def model():
    return searching("refund policy", ANSWER)


@pytest.fixture
def app(make_engine, model, alice, bugs):
    return ChatApp(make_engine(model=model), {"alice-token": alice}, bugs=bugs)


def client(app):
    return httpx.AsyncClient(
        transport=StreamingASGITransport(app),
        base_url="http://testserver",
        headers={"Authorization": "Bearer alice-token"},
    )


def chat(app, message="refund?"):
    async def main():
        async with client(app) as http:
            response = await http.post("/chat", json={"message": message})
            return response.status_code, response.headers.get("content-type"), response.text

    return asyncio.run(main())


@pytest.mark.catches("buffer_stream")
def test_tokens_arrive_while_the_answer_is_still_being_generated(app):
    store = app.engine.store

    seen = []

    async def main():
        async with (
            client(app) as http,
            http.stream("POST", "/chat", json={"message": "refund?"}) as response,
        ):
            async for line in response.aiter_lines():
                if line.startswith("event: token") and not seen:
                    seen.extend(m.status for m in store.messages.values() if m.role != "user")

    asyncio.run(main())

    assert seen == ["streaming"]  # the first token came before the answer was finished
    assert [m.status for m in store.messages.values()] == ["complete", "complete"]


@pytest.mark.catches("enqueue_turn")
def test_the_turn_runs_inside_the_request_with_nothing_queued(app):
    status, content_type, body = chat(app)

    assert (status, content_type) == (200, "text/event-stream")
    tokens = "".join(data["text"] for event, data in events_of(body) if event == "token")
    assert tokens == ANSWER
    assert app.queued == []
    assistant = [m for m in app.engine.store.messages.values() if m.role == "assistant"]
    assert [(m.content, m.status) for m in assistant] == [(ANSWER, "complete")]


@pytest.mark.catches("citations_first")
def test_citations_close_the_stream_tied_to_the_message(app):
    _, _, body = chat(app)

    events = events_of(body)
    kinds = [event for event, _ in events]
    assert kinds[-2:] == ["citations", "done"]
    assert set(kinds[:-2]) == {"token"}
    citations, done = events[-2][1], events[-1][1]
    assert citations["message_id"] == done["message_id"]
    assert [c["record_id"] for c in citations["citations"]] == ["refund"]


@pytest.mark.catches("ignore_disconnect")
def test_a_client_that_drops_mid_stream_stops_the_generation(app):
    store = app.engine.store

    async def main():
        async with (
            client(app) as http,
            http.stream("POST", "/chat", json={"message": "refund?"}) as response,
        ):
            async for line in response.aiter_lines():
                if line.startswith("event: token"):
                    break  # the client goes away after the first token

    asyncio.run(main())

    (assistant,) = [m for m in store.messages.values() if m.role == "assistant"]
    assert assistant.status == "interrupted"
    assert ANSWER.startswith(assistant.content) and assistant.content != ANSWER
    assert store.traces == {} and store.signals == []


@pytest.mark.catches("tokens_output_only")
def test_the_finished_message_is_stamped_with_the_whole_rounds_tokens(app, model):
    _, _, body = chat(app)

    done = events_of(body)[-1][1]
    assistant = app.engine.store.messages[done["message_id"]]
    user = next(m for m in app.engine.store.messages.values() if m.role == "user")
    # Both calls of the turn, input and output, as the model reported them.
    whole_round = sum(reply.total_tokens for reply in model.replies)
    assert len(model.replies) == 2
    assert assistant.tokens_used == done["tokens_used"] == whole_round
    assert user.tokens_used is None


def test_a_request_without_a_session_is_401_and_a_foreign_thread_404(app, make_engine, bob):
    async def main():
        async with httpx.AsyncClient(
            transport=StreamingASGITransport(app), base_url="http://testserver"
        ) as anonymous:
            unauthorised = await anonymous.post("/chat", json={"message": "hi"})
        async with client(app) as http:
            missing = await http.get("/conversations/conv-404")
            posted = await http.post("/chat", json={"message": "x", "conversation_id": "c-9"})
        return unauthorised.status_code, missing.status_code, posted.status_code

    assert asyncio.run(main()) == (401, 404, 404)
