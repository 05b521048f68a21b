"""LangChain forms of the query-engine doubles: a chat model and a knowledge retriever.

``PlaceboKnowledgeRetriever`` is a ``BaseRetriever`` over a ``StubKnowledgeStore``: each call is
one search with the retriever's identity (or one given per call), the readable matches come
back as documents, and ``last_result`` keeps the whole result, so "hidden" can still be told
from "empty".

The chat model is ``PlaceboChatModel``, a ``BaseChatModel`` with ``bind_tools``.

``PlaceboChatModel(model=ScriptedChatModel...)`` translates LangChain messages into the core
double's messages and its replies back into ``AIMessage`` objects, tool calls and token
usage included. ``bind_tools`` converts the tools to the OpenAI shape and binds them, so the
core model records their names as the tools offered; a request without bound tools offers
none. Every decision and every record stays in the core model (``.model``), read there or
through ``requests``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any, cast

from placeborag import PlaceboragTypeError, PlaceboragValueError
from placeborag.integrations import _shared
from placeborag.query_engine import (
    ChatMessage,
    ChatReply,
    KnowledgeResult,
    ScriptedChatModel,
    StubKnowledgeStore,
    ToolCall,
)
from placeborag.toolkit import checked_model, shown

try:
    from langchain_core.callbacks import (
        AsyncCallbackManagerForLLMRun,
        AsyncCallbackManagerForRetrieverRun,
        CallbackManagerForLLMRun,
        CallbackManagerForRetrieverRun,
    )
    from langchain_core.documents import Document
    from langchain_core.language_models import BaseChatModel, LanguageModelInput
    from langchain_core.messages import (
        AIMessage,
        AIMessageChunk,
        BaseMessage,
        HumanMessage,
        SystemMessage,
        ToolMessage,
    )
    from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.runnables import Runnable
    from langchain_core.utils.function_calling import convert_to_openai_tool
    from pydantic import ConfigDict, Field, PrivateAttr
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise _shared.framework_missing("langchain", "langchain-core", "langchain") from exc

__all__ = ["PlaceboChatModel", "PlaceboKnowledgeRetriever"]


def _content(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    # Multimodal content: keep the text parts, in order.
    parts = [
        part if isinstance(part, str) else str(part.get("text", ""))
        for part in content
        if isinstance(part, str) or (isinstance(part, dict) and part.get("type") == "text")
    ]
    return "".join(parts)


def to_core(message: BaseMessage, position: int) -> ChatMessage:
    """A LangChain message as the core double's ``ChatMessage``."""
    if isinstance(message, SystemMessage):
        return ChatMessage("system", _content(message))
    if isinstance(message, HumanMessage):
        return ChatMessage("user", _content(message))
    if isinstance(message, ToolMessage):
        return ChatMessage("tool", _content(message), (), message.tool_call_id, message.name)
    if isinstance(message, AIMessage):
        calls = tuple(ToolCall(c["name"], c["args"], c.get("id") or "") for c in message.tool_calls)
        return ChatMessage("assistant", _content(message), calls)
    raise PlaceboragTypeError(
        f"messages[{position}]={shown(message)} must be a system, human, AI or tool message"
    )


def _usage(reply: ChatReply) -> dict[str, int]:
    return {
        "input_tokens": reply.input_tokens,
        "output_tokens": reply.output_tokens,
        "total_tokens": reply.total_tokens,
    }


def _lc_calls(reply: ChatReply) -> list[dict[str, Any]]:
    return [
        {"name": c.name, "args": dict(c.arguments), "id": c.id, "type": "tool_call"}
        for c in reply.tool_calls
    ]


class PlaceboChatModel(BaseChatModel):
    """A LangChain chat model answered by a ``ScriptedChatModel``.

    ``model.bind_tools([search_knowledge, web_search]).invoke(messages)`` returns an
    ``AIMessage`` whose ``tool_calls`` are the script's calls, or whose content is its
    answer; ``usage_metadata`` carries the exact token counts.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    model: Any = Field(description="the ScriptedChatModel that decides every reply")

    def __init__(self, model: ScriptedChatModel | None = None, **kwargs: Any) -> None:
        if model is None:
            model = kwargs.pop("model", None)
        super().__init__(model=checked_model(model), **kwargs)

    @property
    def _llm_type(self) -> str:
        return "placebo-chat"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": self.model.model_name}

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> Any:
        params = super()._get_ls_params(stop=stop, **kwargs)
        params["ls_provider"] = "placeborag"
        override = kwargs.get("model")
        params["ls_model_name"] = override if isinstance(override, str) else self.model.model_name
        return params

    @property
    def requests(self) -> tuple[Any, ...]:
        """The core model's record of requests."""
        return cast("tuple[Any, ...]", self.model.requests)

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | Any],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Offer ``tools`` with every call of the returned runnable (LangChain's contract).

        ``tool_choice`` is accepted and recorded nowhere: the script decides, as documented.
        """
        if isinstance(tools, (str, bytes)) or not isinstance(tools, Sequence):
            raise PlaceboragTypeError(f"tools={shown(tools)} must be a list of tools")
        formatted = [convert_to_openai_tool(tool) for tool in tools]
        return super().bind(tools=formatted, **kwargs)

    def _request(
        self, messages: list[BaseMessage], stop: list[str] | None, kwargs: dict[str, Any]
    ) -> tuple[list[ChatMessage], list[Any]]:
        if stop:
            raise PlaceboragValueError(
                f"stop={shown(stop)} is not supported: a scripted reply is given whole"
            )
        core = [to_core(message, position) for position, message in enumerate(messages)]
        return core, list(kwargs.get("tools") or ())

    def _result(self, reply: ChatReply) -> ChatResult:
        message = AIMessage(
            content=reply.content,
            tool_calls=_lc_calls(reply),
            usage_metadata=_usage(reply),
            response_metadata={"model_name": reply.model_name},
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        core, tools = self._request(messages, stop, kwargs)
        return self._result(self.model.invoke(core, tools=tools))

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        core, tools = self._request(messages, stop, kwargs)
        return self._result(await self.model.ainvoke(core, tools=tools))

    def _chunks(self, reply: ChatReply) -> Iterator[ChatGenerationChunk]:
        from placeborag.query_engine import stream_tokens

        if reply.tool_calls:
            chunk = AIMessageChunk(
                content="",
                tool_call_chunks=[
                    {"name": c.name, "args": _json(c.arguments), "id": c.id, "index": n}
                    for n, c in enumerate(reply.tool_calls)
                ],
                usage_metadata=_usage(reply),
            )
            yield ChatGenerationChunk(message=chunk)
            return
        pieces = stream_tokens(reply.content)
        for n, piece in enumerate(pieces):
            last = n == len(pieces) - 1
            yield ChatGenerationChunk(
                message=AIMessageChunk(
                    content=piece, usage_metadata=_usage(reply) if last else None
                )
            )

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        core, tools = self._request(messages, stop, kwargs)
        for chunk in self._chunks(self.model.invoke(core, tools=tools)):
            if run_manager is not None:
                run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        core, tools = self._request(messages, stop, kwargs)
        for chunk in self._chunks(await self.model.ainvoke(core, tools=tools)):
            if run_manager is not None:
                await run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk


def _json(arguments: Any) -> str:
    import json

    return json.dumps(dict(arguments), sort_keys=True)


_UNSET: Any = object()


class PlaceboKnowledgeRetriever(BaseRetriever):
    """A LangChain retriever over a ``StubKnowledgeStore``, searching as one identity.

    ``invoke(query)`` searches with ``identity`` (``None``: anonymous); ``identity=``, ``k=``,
    ``where=`` and ``context=`` given to ``invoke`` replace the retriever's for that call. A
    document carries the match's id, text and metadata. ``last_result`` is the store's whole
    answer to the latest call: its ``outcome`` tells "empty" from "hidden".
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    store: Any
    identity: Any = None
    k: int | None = None
    _last: KnowledgeResult | None = PrivateAttr(default=None)

    def __init__(self, store: StubKnowledgeStore, **kwargs: Any) -> None:
        if not isinstance(store, StubKnowledgeStore):
            raise PlaceboragTypeError(f"store={shown(store)} must be a StubKnowledgeStore")
        super().__init__(store=store, **kwargs)

    @property
    def last_result(self) -> KnowledgeResult | None:
        """The knowledge store's result for the latest call (``None`` before the first)."""
        return self._last

    def _arguments(self, identity: Any, k: int | None, where: Any, context: Any) -> dict[str, Any]:
        return {
            "identity": self.identity if identity is _UNSET else identity,
            "k": k if k is not None else self.k,
            "where": where,
            "context": context,
        }

    def _documents(self, result: KnowledgeResult) -> list[Document]:
        self._last = result
        return [
            Document(id=m.id, page_content=m.text, metadata=dict(m.metadata))
            for m in result.matches
        ]

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        identity: Any = _UNSET,
        k: int | None = None,
        where: Any = None,
        context: Any = None,
    ) -> list[Document]:
        arguments = self._arguments(identity, k, where, context)
        return self._documents(self.store.search(query, **arguments))

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        identity: Any = _UNSET,
        k: int | None = None,
        where: Any = None,
        context: Any = None,
    ) -> list[Document]:
        arguments = self._arguments(identity, k, where, context)
        return self._documents(await self.store.asearch(query, **arguments))
