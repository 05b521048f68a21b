"""Every public double survives copy.deepcopy and pickle as a working double of its own.

Frameworks copy components (LangChain's with_config, LlamaIndex settings, pytest
parametrisation, a process pool). A copy must answer as the original would at the moment it
was taken, keep its own record from then on, and leave the original's script and log alone.
The query-engine doubles are imported from their private modules: their public home moves.
"""

from __future__ import annotations

import copy
import pickle
import threading
from collections.abc import Callable
from typing import Any

import pytest

from placeborag import FakeEmbedder, FakeVectorStore
from placeborag._chat import ScriptedChatModel
from placeborag._conversation import Conversation, Sessions, WindowBudget
from placeborag._fusion import HybridRetriever, KeywordIndex
from placeborag._knowledge import CandidateCache, StubKnowledgeStore
from placeborag._replay import load_demo_recording
from placeborag._scoring import GeometryScorer, ScriptedScorer

TEXTS = ["our refund policy allows returns", "parcels ship in two days", "reset your password"]


def _store() -> FakeVectorStore:
    store = FakeVectorStore(profile="qdrant")
    store.upsert_many(["refund", "ship", "password"], TEXTS, [{"n": i} for i in range(3)])
    return store


def _chat() -> tuple[ScriptedChatModel, Callable[[Any], Any]]:
    model = ScriptedChatModel.answering("first").then_answers("second").then_answers("third")
    return model, lambda m: (m.invoke("hello").content, len(m.requests))


def _knowledge() -> tuple[StubKnowledgeStore, Callable[[Any], Any]]:
    return StubKnowledgeStore(backend=_store()), lambda s: (
        [m.id for m in s.search("refund", identity="alice", k=2).matches],
        s.queries,
    )


def _cache() -> tuple[CandidateCache, Callable[[Any], Any]]:
    cache = CandidateCache()
    cache.put("refund", "alice", ["refund"])

    def use(c: CandidateCache) -> Any:
        found = c.get("refund", "alice")
        c.put("ship", "alice", ["ship"])
        return found, c.hits, c.puts

    return cache, use


def _sessions() -> tuple[Sessions, Callable[[Any], Any]]:
    sessions = Sessions()

    def use(s: Sessions) -> Any:
        conversation = s.start(s.open("alice"), "hello")
        return conversation.id, len(s.conversations)

    return sessions, use


def _conversation() -> tuple[Conversation, Callable[[Any], Any]]:
    def use(c: Conversation) -> Any:
        c.add("user", "hello")
        return [t.content for t in c.turns], c.tokens

    return Conversation(id="c1", owner="alice"), use


def _budget() -> tuple[WindowBudget, Callable[[Any], Any]]:
    return WindowBudget(window=100, answer_reserve=10), lambda b: (b.window, b.answer_reserve)


def _keywords() -> tuple[KeywordIndex, Callable[[Any], Any]]:
    index = KeywordIndex()
    index.add_many(["refund", "ship"], TEXTS[:2])

    def use(i: KeywordIndex) -> Any:
        i.add("password", TEXTS[2])
        return [m.id for m in i.search("refund policy", 3)]

    return index, use


def _hybrid() -> tuple[HybridRetriever, Callable[[Any], Any]]:
    return HybridRetriever(_store()), lambda r: [m.id for m in r.query("refund policy", 2)]


def _scripted_scorer() -> tuple[ScriptedScorer, Callable[[Any], Any]]:
    scorer = ScriptedScorer.scoring(0.5).then_scores(0.25).then_repeats()
    return scorer, lambda s: (s.score("q", ["a", "b"]).scores, len(s.requests))


def _geometry_scorer() -> tuple[GeometryScorer, Callable[[Any], Any]]:
    scorer = GeometryScorer(FakeEmbedder(dimensions=32))
    return scorer, lambda s: (s.score("refund", TEXTS).scores, len(s.requests))


def _embedder() -> tuple[FakeEmbedder, Callable[[Any], Any]]:
    return FakeEmbedder(dimensions=16), lambda e: e.embed("refund policy")


def _vector_store() -> tuple[FakeVectorStore, Callable[[Any], Any]]:
    def use(s: FakeVectorStore) -> Any:
        s.upsert("new", "a new refund text")
        return [(m.id, m.score) for m in s.query("refund", 3)], len(s.queries)

    return _store(), use


def _replay() -> tuple[Any, Callable[[Any], Any]]:
    recording = load_demo_recording()
    embedder = recording.embedder()
    text = recording.document_texts[0]
    return embedder, lambda e: e.embed_batch([text]).tolist()


DOUBLES = {
    "FakeEmbedder": _embedder,
    "FakeVectorStore": _vector_store,
    "ReplayEmbedder": _replay,
    "ScriptedChatModel": _chat,
    "StubKnowledgeStore": _knowledge,
    "CandidateCache": _cache,
    "Sessions": _sessions,
    "Conversation": _conversation,
    "WindowBudget": _budget,
    "KeywordIndex": _keywords,
    "HybridRetriever": _hybrid,
    "ScriptedScorer": _scripted_scorer,
    "GeometryScorer": _geometry_scorer,
}


def _pickled(value: Any) -> Any:
    return pickle.loads(pickle.dumps(value))


@pytest.fixture(params=[copy.deepcopy, _pickled], ids=["deepcopy", "pickle"])
def clone(request: pytest.FixtureRequest) -> Callable[[Any], Any]:
    return request.param  # type: ignore[no-any-return]


@pytest.mark.parametrize("name", sorted(DOUBLES))
def test_a_copy_answers_as_the_original_would_and_keeps_its_own_record(
    name: str, clone: Callable[[Any], Any]
) -> None:
    original, use = DOUBLES[name]()
    twin, _ = DOUBLES[name]()
    assert use(original) == use(twin)  # both have been used once

    copied = clone(original)

    assert type(copied) is type(original)
    second = use(twin)
    assert use(copied) == second  # the copy carries on from the original's state
    assert use(original) == second  # ... and using it did not move the original


@pytest.mark.parametrize("name", sorted(DOUBLES))
def test_a_copy_holds_locks_of_its_own(name: str, clone: Callable[[Any], Any]) -> None:
    original, _ = DOUBLES[name]()

    copied = clone(original)

    lock_types = (type(threading.Lock()), type(threading.RLock()))
    state = getattr(original, "__dict__", {})
    mine = {k: v for k, v in state.items() if isinstance(v, lock_types)}
    for attribute, lock in mine.items():
        assert type(getattr(copied, attribute)) is type(lock)
        assert getattr(copied, attribute) is not lock


def test_a_copy_taken_while_another_thread_holds_the_lock_still_completes() -> None:
    model, use = _chat()
    with model._lock:
        copied = copy.deepcopy(model)
    assert use(copied) == ("first", 1)
