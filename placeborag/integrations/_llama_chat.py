"""LlamaIndex forms of the query-engine doubles: a function-calling LLM and a retriever.

``PlaceboLlamaKnowledgeRetriever`` is a ``BaseRetriever`` over a ``StubKnowledgeStore``: one
search per call, with the retriever's identity, the readable matches as scored text nodes,
and ``last_result`` for the whole result ("hidden" versus "empty").

The LLM is ``PlaceboFunctionCallingLLM``, a ``FunctionCallingLLM``.

``PlaceboFunctionCallingLLM(model=ScriptedChatModel...)`` answers ``chat``, ``achat``,
``stream_chat`` and the completion methods from the core double, and ``chat_with_tools``
(or ``predict_and_call``) offers the tools' names with the request, so the core model
records them and its script's tool calls come back as ``ToolCallBlock`` s that
``get_tool_calls_from_response`` turns into ``ToolSelection`` s. The decisions and the
record stay in the core model (``.model``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from placeborag import PlaceboragError, PlaceboragTypeError
from placeborag.integrations import _shared
from placeborag.query_engine import (
    ChatMessage,
    ChatReply,
    KnowledgeResult,
    ScriptedChatModel,
    StubKnowledgeStore,
    ToolCall,
    stream_tokens,
)
from placeborag.toolkit import checked_model, shown

try:
    from llama_index.core.base.base_retriever import BaseRetriever
    from llama_index.core.base.llms.types import (
        ChatMessage as LlamaMessage,
    )
    from llama_index.core.base.llms.types import (
        ChatResponse,
        ChatResponseAsyncGen,
        ChatResponseGen,
        CompletionResponse,
        CompletionResponseAsyncGen,
        CompletionResponseGen,
        LLMMetadata,
        MessageRole,
        TextBlock,
        ToolCallBlock,
    )
    from llama_index.core.bridge.pydantic import Field
    from llama_index.core.llms.callbacks import llm_chat_callback, llm_completion_callback
    from llama_index.core.llms.function_calling import FunctionCallingLLM
    from llama_index.core.llms.llm import ToolSelection
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise _shared.framework_missing("llama_index", "llama-index-core", "llamaindex") from exc

__all__ = ["PlaceboFunctionCallingLLM", "PlaceboLlamaKnowledgeRetriever"]

_ROLES = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
    "model": "assistant",
    "chatbot": "assistant",
    "tool": "tool",
    "function": "tool",
}


class NoToolCall(PlaceboragError, ValueError):
    """``get_tool_calls_from_response(..., error_on_no_tool_call=True)`` found no tool call."""


def _text(message: LlamaMessage) -> str:
    return "".join(block.text for block in message.blocks if isinstance(block, TextBlock))


def to_core(message: LlamaMessage, position: int) -> ChatMessage:
    """A LlamaIndex message as the core double's ``ChatMessage``."""
    role = _ROLES.get(str(getattr(message.role, "value", message.role)))
    if role is None:
        raise PlaceboragTypeError(
            f"messages[{position}] has role={shown(message.role)}, not a chat role"
        )
    extra = message.additional_kwargs
    if role == "tool":
        return ChatMessage("tool", _text(message), (), extra.get("tool_call_id"), extra.get("name"))
    calls = tuple(
        ToolCall(
            block.tool_name,
            block.tool_kwargs if isinstance(block.tool_kwargs, dict) else {},
            block.tool_call_id or "",
        )
        for block in message.blocks
        if isinstance(block, ToolCallBlock)
    )
    return ChatMessage(role, _text(message), calls if role == "assistant" else ())


def _tool_names(tools: Sequence[Any]) -> list[str]:
    names = []
    for position, tool in enumerate(tools):
        name = getattr(getattr(tool, "metadata", None), "name", None)
        if name is None and isinstance(tool, str):
            name = tool
        if not isinstance(name, str) or not name:
            raise PlaceboragTypeError(
                f"tools[{position}]={shown(tool)} must be a LlamaIndex tool with a metadata.name"
            )
        names.append(name)
    return names


def _message(reply: ChatReply) -> LlamaMessage:
    blocks: list[Any] = [TextBlock(text=reply.content)] if reply.content else []
    blocks += [
        ToolCallBlock(tool_call_id=c.id, tool_name=c.name, tool_kwargs=dict(c.arguments))
        for c in reply.tool_calls
    ]
    return LlamaMessage(role=MessageRole.ASSISTANT, blocks=blocks)


def _usage(reply: ChatReply) -> dict[str, int]:
    return {
        "prompt_tokens": reply.input_tokens,
        "completion_tokens": reply.output_tokens,
        "total_tokens": reply.total_tokens,
    }


class PlaceboFunctionCallingLLM(FunctionCallingLLM):
    """A LlamaIndex function-calling LLM answered by a ``ScriptedChatModel``."""

    model: Any = Field(description="the ScriptedChatModel that decides every reply")

    def __init__(self, model: ScriptedChatModel | None = None, **kwargs: Any) -> None:
        if model is None:
            model = kwargs.pop("model", None)
        super().__init__(model=checked_model(model), **kwargs)

    def __getstate__(self) -> dict[str, Any]:
        return _shared.strict_state(self)  # the model, or a named error, never dropped

    def __setstate__(self, state: dict[str, Any]) -> None:
        _shared.strict_setstate(self, state)

    @classmethod
    def class_name(cls) -> str:
        return "PlaceboFunctionCallingLLM"

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(
            is_chat_model=True, is_function_calling_model=True, model_name=self.model.model_name
        )

    @property
    def requests(self) -> tuple[Any, ...]:
        """The core model's record of requests."""
        return cast("tuple[Any, ...]", self.model.requests)

    # -- tools ------------------------------------------------------------------------------

    def _prepare_chat_with_tools(
        self,
        tools: Sequence[Any],
        user_msg: str | LlamaMessage | None = None,
        chat_history: list[LlamaMessage] | None = None,
        verbose: bool = False,
        allow_parallel_tool_calls: bool = False,
        tool_required: bool = False,
        **kwargs: Any,
    ) -> dict[str, Any]:
        messages = list(chat_history or [])
        if isinstance(user_msg, str):
            messages.append(LlamaMessage(role=MessageRole.USER, content=user_msg))
        elif user_msg is not None:
            messages.append(user_msg)
        return {"messages": messages, "tools": _tool_names(tools), **kwargs}

    def get_tool_calls_from_response(
        self, response: ChatResponse, error_on_no_tool_call: bool = True, **kwargs: Any
    ) -> list[ToolSelection]:
        selections = [
            ToolSelection(
                tool_id=block.tool_call_id or "",
                tool_name=block.tool_name,
                tool_kwargs=block.tool_kwargs if isinstance(block.tool_kwargs, dict) else {},
            )
            for block in response.message.blocks
            if isinstance(block, ToolCallBlock)
        ]
        if not selections and error_on_no_tool_call:
            raise NoToolCall(
                f"the reply {shown(_text(response.message))} holds no tool call; pass"
                " error_on_no_tool_call=False to accept an answer"
            )
        return selections

    # -- chat -------------------------------------------------------------------------------

    def _core(self, messages: Sequence[LlamaMessage]) -> list[ChatMessage]:
        return [to_core(message, position) for position, message in enumerate(messages)]

    def _response(self, reply: ChatReply) -> ChatResponse:
        return ChatResponse(
            message=_message(reply), raw={"usage": _usage(reply)}, additional_kwargs=_usage(reply)
        )

    @llm_chat_callback()
    def chat(self, messages: Sequence[LlamaMessage], **kwargs: Any) -> ChatResponse:
        reply = self.model.invoke(self._core(messages), tools=kwargs.get("tools") or ())
        return self._response(reply)

    @llm_chat_callback()
    async def achat(self, messages: Sequence[LlamaMessage], **kwargs: Any) -> ChatResponse:
        reply = await self.model.ainvoke(self._core(messages), tools=kwargs.get("tools") or ())
        return self._response(reply)

    def _chat_chunks(self, reply: ChatReply) -> list[ChatResponse]:
        if reply.tool_calls:
            return [ChatResponse(message=_message(reply), delta="")]
        chunks, text = [], ""
        for piece in stream_tokens(reply.content):
            text += piece
            message = LlamaMessage(role=MessageRole.ASSISTANT, content=text)
            chunks.append(ChatResponse(message=message, delta=piece))
        return chunks

    @llm_chat_callback()
    def stream_chat(self, messages: Sequence[LlamaMessage], **kwargs: Any) -> ChatResponseGen:
        core = self._core(messages)
        tools = kwargs.get("tools") or ()

        def gen() -> ChatResponseGen:
            yield from self._chat_chunks(self.model.invoke(core, tools=tools))

        return gen()

    @llm_chat_callback()
    async def astream_chat(
        self, messages: Sequence[LlamaMessage], **kwargs: Any
    ) -> ChatResponseAsyncGen:
        core = self._core(messages)
        tools = kwargs.get("tools") or ()

        async def gen() -> ChatResponseAsyncGen:
            for chunk in self._chat_chunks(await self.model.ainvoke(core, tools=tools)):
                yield chunk

        return gen()

    # -- completion: one user message, no tools ----------------------------------------------

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=self.model.invoke([ChatMessage("user", prompt)]).content)

    @llm_completion_callback()
    async def acomplete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponse:
        reply = await self.model.ainvoke([ChatMessage("user", prompt)])
        return CompletionResponse(text=reply.content)

    def _completion_chunks(self, reply: ChatReply) -> list[CompletionResponse]:
        chunks, text = [], ""
        for piece in stream_tokens(reply.content):
            text += piece
            chunks.append(CompletionResponse(text=text, delta=piece))
        return chunks

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        def gen() -> CompletionResponseGen:
            yield from self._completion_chunks(self.model.invoke([ChatMessage("user", prompt)]))

        return gen()

    @llm_completion_callback()
    async def astream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseAsyncGen:
        async def gen() -> CompletionResponseAsyncGen:
            reply = await self.model.ainvoke([ChatMessage("user", prompt)])
            for chunk in self._completion_chunks(reply):
                yield chunk

        return gen()


class PlaceboLlamaKnowledgeRetriever(BaseRetriever):
    """A LlamaIndex retriever over a ``StubKnowledgeStore``, searching as one identity.

    Each retrieval is one search with ``identity`` (``None``: anonymous), ``k`` and ``where``;
    a node carries the match's id, text, metadata and score. ``last_result`` is the store's
    whole answer to the latest retrieval: its ``outcome`` tells "empty" from "hidden".
    """

    def __init__(
        self,
        store: StubKnowledgeStore,
        *,
        identity: Any = None,
        k: int | None = None,
        where: Any = None,
        **kwargs: Any,
    ) -> None:
        if not isinstance(store, StubKnowledgeStore):
            raise PlaceboragTypeError(f"store={shown(store)} must be a StubKnowledgeStore")
        super().__init__(**kwargs)
        self.store = store
        self.identity = identity
        self.k = k
        self.where = where
        self._last: KnowledgeResult | None = None

    @property
    def last_result(self) -> KnowledgeResult | None:
        """The knowledge store's result for the latest retrieval (``None`` before the first)."""
        return self._last

    def _nodes(self, result: KnowledgeResult) -> list[NodeWithScore]:
        self._last = result
        return [
            NodeWithScore(
                node=TextNode(id_=m.id, text=m.text, metadata=dict(m.metadata)), score=m.score
            )
            for m in result.matches
        ]

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        result = self.store.search(
            query_bundle.query_str, identity=self.identity, k=self.k, where=self.where
        )
        return self._nodes(result)

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        result = await self.store.asearch(
            query_bundle.query_str, identity=self.identity, k=self.k, where=self.where
        )
        return self._nodes(result)
