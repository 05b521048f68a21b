"""ScriptedChatModel: scripts and rules, the tool set it honours, its record, sync and async."""

import asyncio
import threading

import pytest
from _race import race

from placeborag import PlaceboragTypeError, PlaceboragValueError, ScriptError, ScriptExhausted
from placeborag.query_engine import (
    ChatMessage,
    ChatReply,
    ScriptedChatModel,
    ToolCall,
    ToolNotOffered,
    count_tokens,
    search_on_topics,
    stream_tokens,
    tool_call,
)

TOOLS = ["search_knowledge", "web_search"]


def test_a_scripted_call_then_an_answer_from_the_tool_results():
    model = ScriptedChatModel.calling(tool_call("search_knowledge", query="refund policy"))
    model.then_answers()

    first = model.invoke("what about refunds?", tools=TOOLS)
    messages = [
        ChatMessage("user", "what about refunds?"),
        first.as_message(),
        ChatMessage("tool", "Returns within 30 days.", tool_call_id=first.tool_calls[0].id),
    ]
    second = model.invoke(messages, tools=TOOLS)

    assert first.calls_tools and first.content == ""
    assert first.tool_calls == (
        ToolCall("search_knowledge", {"query": "refund policy"}, "call_0_0"),
    )
    assert (second.content, second.tool_calls) == ("Returns within 30 days.", ())
    assert [r.tools for r in model.requests] == [tuple(TOOLS)] * 2
    assert model.requests[1].tool_results[0].content == "Returns within 30 days."
    assert model.requests[0].tool_results == ()


def test_several_calls_in_one_round_get_distinct_deterministic_ids():
    model = ScriptedChatModel.calling(
        tool_call("search_knowledge", query="vpn setup"), ("web_search", {"query": "vpn client"})
    )

    reply = model.invoke("how do I set up the vpn", tools=TOOLS)

    assert [(c.name, c.arguments["query"], c.id) for c in reply.tool_calls] == [
        ("search_knowledge", "vpn setup", "call_0_0"),
        ("web_search", "vpn client", "call_0_1"),
    ]
    assert model.tool_calls == reply.tool_calls


def test_a_scripted_call_to_a_tool_not_offered_raises_naming_the_request():
    model = ScriptedChatModel.calling(tool_call("search_knowledge", query="x"))

    with pytest.raises(ToolNotOffered) as excinfo:
        model.invoke("hello there", tools=["web_search"])

    assert excinfo.value.args == (
        "the script calls 'search_knowledge' but request 0 (last user message 'hello there',"
        " 0 tool results, offered: web_search) offers web_search; a model never calls a tool"
        " it was not offered",
    )
    assert len(model.requests) == 1  # the request arrived; it is its answer that failed


def test_a_request_after_the_last_step_raises_script_exhausted_naming_it():
    model = ScriptedChatModel.answering("hi")
    model.invoke("first", tools=[])

    with pytest.raises(ScriptExhausted) as excinfo:
        model.invoke("second", tools=["web_search"])

    assert excinfo.value.args == (
        "no step left for request 1 (last user message 'second', 0 tool results, offered:"
        " web_search): the script has 1 step and answered 1 request; end it with"
        " then_repeats() to answer every further request with its last step",
    )


def test_then_repeats_answers_every_further_request_with_the_last_step():
    model = ScriptedChatModel.answering("one").then_answers(lambda r: r.last_user_message.upper())
    model.then_repeats()

    replies = [model.invoke(text).content for text in ("a", "b", "c")]

    assert replies == ["one", "B", "C"]
    with pytest.raises(ScriptError, match="cannot add a step after then_repeats"):
        model.then_answers("late")


def test_a_failing_step_raises_the_given_exception_and_the_script_goes_on():
    error = TimeoutError("read timed out")
    model = ScriptedChatModel.failing(error).then_answers("recovered")

    with pytest.raises(TimeoutError) as excinfo:
        model.invoke("hi")
    assert excinfo.value is error
    assert model.invoke("hi again").content == "recovered"
    assert len(model.replies) == 1


def test_the_model_cannot_start_without_a_step():
    with pytest.raises(ScriptError, match="cannot start without a step"):
        ScriptedChatModel()


def test_malformed_input_raises_before_anything_is_recorded():
    model = ScriptedChatModel.answering("hi")

    with pytest.raises(PlaceboragTypeError, match=r"messages\[0\]=42 must be a ChatMessage"):
        model.invoke([42])
    with pytest.raises(PlaceboragTypeError, match="tools='web_search' must be a list"):
        model.invoke("hi", tools="web_search")

    assert model.requests == ()
    assert model.invoke("hi").content == "hi"


def test_tools_are_recorded_by_name_whatever_their_shape():
    class Tool:
        name = "web_search"

    model = ScriptedChatModel.answering("ok")
    model.invoke(
        [("system", "be brief"), {"role": "user", "content": "hi"}],
        tools=["a", {"name": "b"}, {"type": "function", "function": {"name": "c"}}, Tool()],
    )

    assert model.request.tools == ("a", "b", "c", "web_search")
    assert [m.role for m in model.request.messages] == ["system", "user"]


def test_request_and_last_request_say_what_the_record_holds():
    model = ScriptedChatModel.answering("x").then_repeats()
    with pytest.raises(ScriptError, match="no request yet"):
        model.last_request
    model.invoke("one")
    model.invoke("two")

    assert model.last_request.last_user_message == "two"
    with pytest.raises(ScriptError, match="exactly one request, but the model received 2"):
        model.request


def test_a_rule_searches_on_a_known_topic_and_answers_otherwise():
    model = ScriptedChatModel.following(search_on_topics(["refund", "shipping"]))

    search = model.invoke("What is the REFUND policy?", tools=TOOLS)
    chat = model.invoke("thanks, bye", tools=TOOLS)

    assert [(c.name, c.arguments) for c in search.tool_calls] == [
        ("search_knowledge", {"query": "What is the REFUND policy?"})
    ]
    assert chat.tool_calls == () and chat.content == "(answer to: thanks, bye)"


def test_a_rule_falls_back_to_an_answer_when_its_tool_is_not_offered():
    model = ScriptedChatModel.following(search_on_topics(["refund"], answer="general answer"))

    reply = model.invoke("refund please", tools=["web_search"])

    assert (reply.content, reply.tool_calls) == ("general answer", ())


def test_a_rule_answers_after_one_round_of_tool_calls():
    model = ScriptedChatModel.following(search_on_topics(["refund"]))
    first = model.invoke("refund please", tools=TOOLS)
    messages = [
        ChatMessage("user", "refund please"),
        first.as_message(),
        ChatMessage("tool", "30 days", tool_call_id="call_0_0", name="search_knowledge"),
    ]

    second = model.invoke(messages, tools=TOOLS)

    assert (second.content, second.tool_calls) == ("30 days", ())


def test_a_rule_call_to_a_tool_not_offered_is_dropped_and_the_rest_kept():
    def rule(request):
        return [tool_call("search_knowledge", query="q"), tool_call("web_search", query="q")]

    model = ScriptedChatModel.following(rule)

    reply = model.invoke("anything", tools=["web_search"])

    assert [c.name for c in reply.tool_calls] == ["web_search"]


def test_a_rule_that_returns_something_else_is_a_clear_error():
    model = ScriptedChatModel.following(lambda request: 42)

    with pytest.raises(PlaceboragTypeError, match=r"rule\(\.\.\.\) returned 42"):
        model.invoke("hi")


def test_a_rule_model_has_no_script():
    model = ScriptedChatModel.following(lambda request: "x")

    with pytest.raises(ScriptError, match="a model following a rule has none"):
        model.then_answers("y")


def test_token_usage_is_counted_exactly():
    model = ScriptedChatModel.answering("Returns within 30 days.")

    reply = model.invoke([("system", "Be brief."), ("user", "refund policy?")])

    assert count_tokens("Returns within 30 days.") == 5
    assert (reply.input_tokens, reply.output_tokens, reply.total_tokens) == (3 + 3, 5, 11)


def test_streaming_yields_the_answer_piece_by_piece_and_records_the_request():
    model = ScriptedChatModel.answering("Returns within 30 days.")

    pieces = list(model.stream("refund?"))

    assert pieces == ["Returns", " within", " 30", " days."]
    assert "".join(pieces) == "Returns within 30 days."
    assert stream_tokens("") == []
    assert len(model.requests) == 1


def test_async_invoke_and_astream_take_steps_in_arrival_order():
    model = ScriptedChatModel.answering("one").then_answers("two").then_answers("three four")

    async def main():
        replies = await asyncio.gather(model.ainvoke("a"), model.ainvoke("b"))
        pieces = [piece async for piece in model.astream("c")]
        return [r.content for r in replies], pieces

    assert asyncio.run(main()) == (["one", "two"], ["three", " four"])
    assert [r.last_user_message for r in model.requests] == ["a", "b", "c"]


def test_the_async_form_raises_exhaustion_from_the_await():
    model = ScriptedChatModel.answering("one")
    asyncio.run(model.ainvoke("a"))

    with pytest.raises(ScriptExhausted, match="request 1"):
        asyncio.run(model.ainvoke("b"))


def test_a_reply_given_whole_by_a_rule_is_returned_as_is():
    given = ChatReply("exact", (), "other-model", 1, 2)
    model = ScriptedChatModel.following(lambda request: given)

    assert model.invoke("x") is given


def test_tool_call_arguments_are_a_private_copy():
    arguments = {"query": "refund"}
    call = ToolCall("search_knowledge", arguments)
    arguments["query"] = "changed"

    assert call.arguments == {"query": "refund"}


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        (
            {"type": "function", "function": {"name": "search_knowledge"}},
            "must be a list of tools, not one dict (write [tool] for one)",
        ),
        (
            5,
            "tools=5 must be a list of tools (names, dicts with a 'name', or objects with a .name)",
        ),
    ],
)
def test_one_tool_dict_or_a_non_iterable_is_refused_before_a_step_is_taken(tools, message):
    model = ScriptedChatModel.answering("first").then_answers("second")

    with pytest.raises(PlaceboragTypeError) as excinfo:
        model.invoke("hi", tools=tools)

    assert message in str(excinfo.value)
    assert model.requests == ()
    assert model.invoke("hi").content == "first"


def test_openai_message_dicts_with_no_calls_or_nested_calls_are_read():
    model = ScriptedChatModel.answering("ok").then_repeats()
    openai_call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "search_knowledge", "arguments": '{"query": "refund"}'},
    }

    model.invoke([{"role": "assistant", "content": "", "tool_calls": None}])
    model.invoke([{"role": "assistant", "content": None, "tool_calls": [openai_call]}])

    assert model.requests[0].messages == (ChatMessage("assistant", ""),)
    assert model.requests[1].messages[0].tool_calls == (
        ToolCall("search_knowledge", {"query": "refund"}, "c1"),
    )


@pytest.mark.parametrize(
    ("tool_calls", "error", "message"),
    [
        (
            [{"id": "c1", "type": "function", "function": {"name": "s", "arguments": "{q"}}],
            PlaceboragValueError,
            "messages[0]['tool_calls'][0]['function']['arguments']='{q' must be a JSON object",
        ),
        (
            [{"id": "c1", "type": "function", "function": {"name": "s", "arguments": "[1]"}}],
            PlaceboragValueError,
            "messages[0]['tool_calls'][0]['function']['arguments'] holds [1]; it must be a JSON"
            " object",
        ),
        (
            [{"id": "c1", "kind": "function"}],
            PlaceboragTypeError,
            "messages[0]['tool_calls'][0]={'id': 'c1', 'kind': 'function'} must be a ToolCall",
        ),
        (
            "s",
            PlaceboragTypeError,
            "messages[0]['tool_calls']='s' must be a list of tool calls or None",
        ),
    ],
)
def test_malformed_tool_calls_in_a_message_dict_are_named_and_nothing_is_recorded(
    tool_calls, error, message
):
    model = ScriptedChatModel.answering("ok")

    with pytest.raises(error) as excinfo:
        model.invoke([{"role": "assistant", "content": "", "tool_calls": tool_calls}])

    assert message in str(excinfo.value)
    assert model.requests == ()


def test_a_message_and_a_tool_call_refuse_what_they_cannot_hold_by_name():
    with pytest.raises(
        PlaceboragTypeError, match=r"tool_calls=None must be a sequence of ToolCall"
    ):
        ChatMessage("assistant", "", None)
    with pytest.raises(PlaceboragTypeError, match=r"of the 's' call must be JSON values"):
        tool_call("s", lock=threading.Lock())


def test_one_role_content_pair_is_one_message():
    model = ScriptedChatModel.answering("ok")

    model.invoke(("user", "hi"))

    assert model.request.messages == (ChatMessage("user", "hi"),)


@pytest.mark.parametrize(
    ("topics", "message"),
    [
        ("refund", "topics='refund' must be a list of str, not one value"),
        (5, "topics=5 must be a list of str, not one value"),
    ],
)
def test_search_on_topics_refuses_one_str_or_a_non_iterable(topics, message):
    with pytest.raises(PlaceboragTypeError) as excinfo:
        search_on_topics(topics)

    assert message in str(excinfo.value)


@pytest.mark.parametrize("topic", ["C#", "C++", ".NET"])
def test_a_topic_with_symbols_at_its_ends_matches_as_a_whole_word(topic):
    model = ScriptedChatModel.following(search_on_topics([topic]))

    asked = model.invoke(f"how do I learn {topic.lower()} fast?", tools=TOOLS)
    inside = model.invoke(f"x{topic}x please", tools=TOOLS)

    assert asked.tool_calls[0].name == "search_knowledge"
    assert inside.tool_calls == ()


def test_threads_sharing_one_model_each_get_their_own_step():
    # The script's steps are handed out under one lock: 8 threads x 25 calls take the 200
    # answers exactly once each, and every request keeps the index of its arrival.
    model = ScriptedChatModel.answering("answer 0")
    for n in range(1, 200):
        model.then_answers(f"answer {n}")
    answers: list[str] = []

    def ask(worker: int) -> None:
        for call in range(25):
            answers.append(model.invoke(f"question {worker}.{call}").content)

    assert race(ask, [(w,) for w in range(8)]) == []
    assert sorted(answers) == sorted(f"answer {n}" for n in range(200))
    assert [r.index for r in model.requests] == list(range(200))
