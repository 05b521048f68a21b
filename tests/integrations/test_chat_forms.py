"""The framework forms of ScriptedChatModel: LangChain's BaseChatModel and LlamaIndex's LLM."""

from __future__ import annotations

import asyncio

import pytest

from placeborag.query_engine import ScriptedChatModel, ToolNotOffered, search_on_topics, tool_call


def search_knowledge(query: str) -> str:
    """Search the knowledge base with a standalone query."""
    return query


def web_search(query: str) -> str:
    """Search the web."""
    return query


# -- LangChain ------------------------------------------------------------------------------------


@pytest.fixture
def lc():
    pytest.importorskip("langchain_core")
    from langchain_core import messages

    from placeborag.integrations.langchain import PlaceboChatModel

    return messages, PlaceboChatModel


def test_langchain_bind_tools_offers_the_tools_and_returns_tool_calls(lc):
    messages, PlaceboChatModel = lc
    core = ScriptedChatModel.calling(
        tool_call("search_knowledge", query="refund policy"), tool_call("web_search", query="x")
    ).then_answers()
    chat = PlaceboChatModel(core).bind_tools([search_knowledge, web_search])

    first = chat.invoke([messages.HumanMessage("what about refunds?")])
    tool_messages = [
        messages.ToolMessage("30 days", tool_call_id=first.tool_calls[0]["id"]),
        messages.ToolMessage("web says 14", tool_call_id=first.tool_calls[1]["id"]),
    ]
    second = chat.invoke([messages.HumanMessage("what about refunds?"), first, *tool_messages])

    assert [(c["name"], c["args"], c["id"]) for c in first.tool_calls] == [
        ("search_knowledge", {"query": "refund policy"}, "call_0_0"),
        ("web_search", {"query": "x"}, "call_0_1"),
    ]
    assert second.content == "30 days\nweb says 14"
    assert second.tool_calls == []
    assert core.requests[0].tools == ("search_knowledge", "web_search")
    request = core.requests[1]
    assert [m.role for m in request.messages] == ["user", "assistant", "tool", "tool"]
    assert request.messages[1].tool_calls[0].name == "search_knowledge"
    assert [m.tool_call_id for m in request.tool_results] == ["call_0_0", "call_0_1"]
    assert second.usage_metadata["output_tokens"] == 5


def test_langchain_without_bound_tools_offers_none(lc):
    _messages, PlaceboChatModel = lc
    core = ScriptedChatModel.calling(tool_call("search_knowledge", query="q"))

    with pytest.raises(ToolNotOffered, match="offers none"):
        PlaceboChatModel(core).invoke("hello")
    assert core.request.tools == ()


def test_langchain_rule_model_withdraws_a_tool_that_is_not_bound(lc):
    _messages, PlaceboChatModel = lc
    core = ScriptedChatModel.following(search_on_topics(["refund"], answer="general"))
    model = PlaceboChatModel(core)

    with_tool = model.bind_tools([search_knowledge]).invoke("refund?")
    without = model.bind_tools([web_search]).invoke("refund?")

    assert with_tool.tool_calls[0]["name"] == "search_knowledge"
    assert (without.content, without.tool_calls) == ("general", [])


def test_langchain_streams_the_answer_and_async_works(lc):
    _messages, PlaceboChatModel = lc
    core = ScriptedChatModel.answering("Returns within 30 days.").then_answers("async answer")
    model = PlaceboChatModel(core)

    # LangChain closes a stream with an empty chunk of its own.
    pieces = [chunk.content for chunk in model.stream("refund?") if chunk.content]
    answer = asyncio.run(model.ainvoke("again"))

    assert pieces == ["Returns", " within", " 30", " days."]
    assert answer.content == "async answer"
    assert [r.last_user_message for r in model.requests] == ["refund?", "again"]


def test_langchain_streams_tool_calls_whole(lc):
    _messages, PlaceboChatModel = lc
    core = ScriptedChatModel.calling(tool_call("search_knowledge", query="q"))
    model = PlaceboChatModel(core).bind_tools([search_knowledge])

    merged = None
    for chunk in model.stream("refund?"):
        merged = chunk if merged is None else merged + chunk

    assert [(c["name"], c["args"]) for c in merged.tool_calls] == [
        ("search_knowledge", {"query": "q"})
    ]


def test_langchain_form_refuses_anything_but_a_scripted_model(lc):
    _, PlaceboChatModel = lc
    with pytest.raises(TypeError, match="model='x' must be a ScriptedChatModel"):
        PlaceboChatModel("x")


# -- LlamaIndex ---------------------------------------------------------------------------------


@pytest.fixture
def li():
    pytest.importorskip("llama_index.core")
    from llama_index.core.llms import ChatMessage
    from llama_index.core.tools import FunctionTool

    from placeborag.integrations.llama_index import PlaceboFunctionCallingLLM

    tools = [FunctionTool.from_defaults(search_knowledge), FunctionTool.from_defaults(web_search)]
    return ChatMessage, tools, PlaceboFunctionCallingLLM


def test_llama_chat_with_tools_returns_tool_selections(li):
    _ChatMessage, tools, LLM = li
    core = ScriptedChatModel.calling(tool_call("search_knowledge", query="refund policy"))
    llm = LLM(core)

    response = llm.chat_with_tools(tools, user_msg="what about refunds?")
    selections = llm.get_tool_calls_from_response(response)

    assert [(s.tool_name, s.tool_kwargs, s.tool_id) for s in selections] == [
        ("search_knowledge", {"query": "refund policy"}, "call_0_0")
    ]
    assert core.request.tools == ("search_knowledge", "web_search")
    assert llm.metadata.is_function_calling_model


def test_llama_answers_from_tool_results_in_the_history(li):
    ChatMessage, tools, LLM = li
    core = ScriptedChatModel.calling(tool_call("search_knowledge", query="q")).then_answers()
    llm = LLM(core)
    first = llm.chat_with_tools(tools, user_msg="refund?")
    history = [
        ChatMessage(role="user", content="refund?"),
        first.message,
        ChatMessage(
            role="tool",
            content="30 days",
            additional_kwargs={"tool_call_id": "call_0_0", "name": "search_knowledge"},
        ),
    ]

    second = llm.chat(history, tools=["search_knowledge"])

    assert second.message.content == "30 days"
    assert llm.get_tool_calls_from_response(second, error_on_no_tool_call=False) == []
    assert core.requests[1].messages[1].tool_calls[0].id == "call_0_0"
    assert core.requests[1].tool_results[0].name == "search_knowledge"


def test_llama_predict_and_call_runs_the_scripted_tool(li):
    _ChatMessage, tools, LLM = li
    llm = LLM(ScriptedChatModel.calling(tool_call("web_search", query="vpn client")))

    result = llm.predict_and_call(tools, user_msg="vpn?")

    assert result.response == "vpn client"


def test_llama_without_a_tool_call_error_is_clear(li):
    ChatMessage, _tools, LLM = li
    llm = LLM(ScriptedChatModel.answering("just text"))
    response = llm.chat([ChatMessage(role="user", content="hi")])

    with pytest.raises(ValueError, match="'just text' holds no tool call"):
        llm.get_tool_calls_from_response(response)


def test_llama_streams_chat_and_completion_and_async(li):
    ChatMessage, _tools, LLM = li
    core = ScriptedChatModel.answering("a b c").then_repeats()
    llm = LLM(core)

    deltas = [r.delta for r in llm.stream_chat([ChatMessage(role="user", content="hi")])]
    completion = [r.delta for r in llm.stream_complete("hi")]
    text = llm.complete("hi").text

    async def run():
        reply = await llm.achat([ChatMessage(role="user", content="hi")])
        stream = await llm.astream_chat([ChatMessage(role="user", content="hi")])
        return reply.message.content, [r.delta async for r in stream]

    assert deltas == completion == ["a", " b", " c"]
    assert text == "a b c"
    assert asyncio.run(run()) == ("a b c", ["a", " b", " c"])
    assert len(core.requests) == 5


# -- the knowledge store as a retriever ----------------------------------------------------------

ALICE = {"user": "alice", "groups": ["support"]}


def knowledge_store():
    from placeborag import Match
    from placeborag.query_engine import StubKnowledgeStore

    refund = Match("refund#0", "Returns within 30 days.", {"source": "wiki", "acl": "all"}, 0.9)
    salary = Match("salary#0", "Band 4 pays 70k.", {"source": "hr-drive", "acl": "hr"}, 0.8)
    return StubKnowledgeStore(
        results={"refund": [refund], "salary": [salary]},
        access=lambda identity, m: (
            m.metadata["acl"] == "all" or "hr" in (identity or {}).get("groups", [])
        ),
    )


def test_langchain_knowledge_retriever_searches_as_its_identity(lc):
    from placeborag.integrations.langchain import PlaceboKnowledgeRetriever

    store = knowledge_store()
    retriever = PlaceboKnowledgeRetriever(store, identity=ALICE)

    documents = retriever.invoke("refund")
    hidden = retriever.invoke("salary")
    outcome = retriever.last_result.outcome
    as_hr = asyncio.run(retriever.ainvoke("salary", identity={"groups": ["hr"]}, k=1))

    assert [(d.id, d.page_content, d.metadata["source"]) for d in documents] == [
        ("refund#0", "Returns within 30 days.", "wiki")
    ]
    assert (hidden, outcome) == ([], "hidden")
    assert [d.id for d in as_hr] == ["salary#0"]
    assert store.identities == (ALICE, ALICE, {"groups": ["hr"]})


def test_llama_knowledge_retriever_returns_scored_nodes_and_the_outcome(li):
    from placeborag.integrations.llama_index import PlaceboLlamaKnowledgeRetriever

    store = knowledge_store()
    retriever = PlaceboLlamaKnowledgeRetriever(store, identity=ALICE)

    nodes = retriever.retrieve("refund")
    hidden = asyncio.run(retriever.aretrieve("salary"))

    assert [(n.node.node_id, n.node.get_content(), n.score) for n in nodes] == [
        ("refund#0", "Returns within 30 days.", 0.9)
    ]
    assert (hidden, retriever.last_result.hidden_sources) == ([], ("hr-drive",))
    assert store.identities == (ALICE, ALICE)


def test_the_retrievers_refuse_anything_but_a_stub_knowledge_store(lc, li):
    from placeborag.integrations.langchain import PlaceboKnowledgeRetriever
    from placeborag.integrations.llama_index import PlaceboLlamaKnowledgeRetriever

    for retriever in (PlaceboKnowledgeRetriever, PlaceboLlamaKnowledgeRetriever):
        with pytest.raises(TypeError, match="must be a StubKnowledgeStore"):
            retriever("not a store")
