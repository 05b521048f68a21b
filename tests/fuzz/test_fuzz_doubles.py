"""Fuzzing the query-engine doubles: the chat model's messages and tools, the knowledge
store's scripted matches and identities, the cache's keys and the window budget's inputs."""

from __future__ import annotations

import math

from _fuzz import FUZZ, anything, json_values, result_or_error, texts
from hypothesis import given
from hypothesis import strategies as st

from placeborag import PlaceboragError
from placeborag.query_engine import (
    CandidateCache,
    ScriptedChatModel,
    StubKnowledgeStore,
    WindowBudget,
)

roles = st.sampled_from(["system", "user", "assistant", "tool"]) | anything
tool_calls = st.one_of(
    st.none(),
    anything,
    st.lists(
        st.fixed_dictionaries(
            {"id": st.one_of(texts, anything), "type": st.just("function")},
            optional={
                "function": st.fixed_dictionaries(
                    {"name": st.one_of(texts, anything)},
                    optional={"arguments": st.one_of(texts, json_values, anything)},
                )
            },
        )
        | anything,
        max_size=2,
    ),
)
message_dicts = st.fixed_dictionaries(
    {"role": roles}, optional={"content": st.one_of(texts, anything), "tool_calls": tool_calls}
)
messages = st.one_of(
    texts,
    anything,
    st.tuples(roles, st.one_of(texts, anything)),
    st.lists(st.one_of(texts, message_dicts, st.tuples(roles, texts), anything), max_size=3),
)
tools = st.one_of(
    st.none(),
    anything,
    st.fixed_dictionaries({"type": st.just("function"), "function": anything}),
    st.lists(st.one_of(texts, st.fixed_dictionaries({"name": texts}), anything), max_size=3),
)


@FUZZ
@given(messages=messages, tools=tools)
def test_a_chat_request_is_answered_or_refused_before_it_takes_a_step(messages, tools):
    model = ScriptedChatModel.answering("first").then_answers("second")

    reply = result_or_error(lambda: model.invoke(messages, tools=tools))

    if isinstance(reply, PlaceboragError):
        assert model.requests == ()
        assert model.invoke("again").content == "first"
    else:
        assert reply.content == "first"
        assert len(model.requests) == 1


match_dicts = st.fixed_dictionaries(
    {"id": st.one_of(texts, anything)},
    optional={
        "text": st.one_of(texts, anything),
        "metadata": st.one_of(st.dictionaries(texts, json_values, max_size=2), anything),
        "score": st.one_of(st.floats(), anything),
    },
)
identities = st.one_of(st.none(), texts, st.dictionaries(texts, json_values, max_size=3), anything)


@FUZZ
@given(matches=st.one_of(st.lists(st.one_of(match_dicts, texts, anything), max_size=3), anything))
def test_scripted_matches_are_kept_checked_or_refused(matches):
    store = result_or_error(lambda: StubKnowledgeStore(results={"q": matches}))
    if isinstance(store, PlaceboragError):
        return
    result = store.search("q", identity=None)
    for match in result.matches:
        assert isinstance(match.id, str) and isinstance(match.text, str)
        assert isinstance(match.score, float) and math.isfinite(match.score)


@FUZZ
@given(identity=identities, k=st.one_of(st.integers(-2, 5), anything))
def test_a_search_is_answered_or_refused_before_it_is_recorded(identity, k):
    store = StubKnowledgeStore(results={"q": ["a", "b", "c"]})

    result = result_or_error(lambda: store.search("q", identity=identity, k=k))

    if isinstance(result, PlaceboragError):
        assert store.calls == ()
    else:
        assert len(result.matches) == min(3, 10 if k is None else k)


@FUZZ
@given(first=identities, second=identities)
def test_the_cache_shares_an_entry_only_between_equal_identities(first, second):
    cache = CandidateCache()
    if isinstance(result_or_error(lambda: cache.put("q", first, "value")), PlaceboragError):
        assert cache.puts == 0
        return
    found = result_or_error(lambda: cache.get("q", second))
    if isinstance(found, PlaceboragError):
        return
    if found is not None:
        assert first == second


@FUZZ
@given(
    history=st.one_of(st.just([]), anything),
    utterance=st.one_of(texts, anything),
    fragments=st.one_of(st.lists(st.one_of(texts, anything), max_size=4), anything),
    counted=st.one_of(st.integers(-2, 5), anything),
)
def test_a_packing_is_made_or_refused(history, utterance, fragments, counted):
    budget = WindowBudget(window=40, answer_reserve=4, counter=lambda text: counted)

    packing = result_or_error(lambda: budget.pack(history, utterance, fragments))

    if not isinstance(packing, PlaceboragError):
        assert packing.used + packing.reserve + packing.free == 40
        assert packing.free >= 0
