"""A scripted chat model: the double for the model that decides whether to search.

This module owns the chat records (messages, tool calls, requests, replies) and
``ScriptedChatModel``, which answers each request without a network. Per request it either
answers or emits tool calls (``search_knowledge`` with a standalone query, ``web_search``,
several in one round), and it decides which in one of two ways:

* a script, step by step in arrival order (``then_calls``, ``then_answers``, ``then_fails``,
  ``then_repeats``), like ``ScriptedScorer``: a request after the last step raises
  ``ScriptExhausted`` naming the request;
* a rule, a function of the request (``ScriptedChatModel.following(rule)``), for tests that
  run many turns; ``search_on_topics`` is a ready rule.

The model honours the tool set it is offered. A scripted step that calls a tool the request
did not offer raises ``ToolNotOffered`` (a test should hear that its script and its code
disagree); a rule's call to a tool not offered is dropped, and when none is left the rule is
asked again for an answer (``ChatRequest.offers`` lets a rule check first).

Every request is recorded with its messages, the tools offered and the tool results it
carries. Token counts use ``count_tokens``, so usage is exact and the same on every machine.
The LangChain and LlamaIndex forms live in ``placeborag.integrations``.
"""

from __future__ import annotations

import asyncio
import copy
import json
import re
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NoReturn

from placeborag._errors import (
    PlaceboragError,
    PlaceboragTypeError,
    PlaceboragValueError,
    ScriptError,
)
from placeborag._script import Script
from placeborag._threads import FreshLocks
from placeborag._validation import dump_json, shown

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = [
    "ChatMessage",
    "ChatReply",
    "ChatRequest",
    "ScriptedChatModel",
    "ToolCall",
    "ToolNotOffered",
    "answer_from_results",
    "count_tokens",
    "search_on_topics",
    "stream_tokens",
    "tool_call",
]

ROLES = ("system", "user", "assistant", "tool")
_TOKEN = re.compile(r"\w+|[^\w\s]")
_STREAM_TOKEN = re.compile(r"\s*\S+")


class ToolNotOffered(PlaceboragError, RuntimeError):
    """A scripted step called a tool that the request did not offer to the model."""


def count_tokens(text: str) -> int:
    """A deterministic token count: each run of word characters and each other symbol is one.

    Real tokenizers differ per model; this one is exact and the same everywhere, which is
    what a budget test needs. Pass your own counter where a helper takes ``counter=``.
    """
    if not isinstance(text, str):
        raise PlaceboragTypeError(f"text={shown(text)} must be a str")
    return len(_TOKEN.findall(text))


def stream_tokens(text: str) -> list[str]:
    """``text`` cut into the pieces a streaming model sends: each word with the space before it.

    Joining the pieces gives ``text`` back, trailing whitespace aside.
    """
    if not isinstance(text, str):
        raise PlaceboragTypeError(f"text={shown(text)} must be a str")
    return _STREAM_TOKEN.findall(text)


@dataclass(frozen=True)
class ToolCall:
    """One tool call the model emits: the tool's name, its arguments and the call's id."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    id: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise PlaceboragTypeError(f"name={shown(self.name)} must be a non-empty str")
        if not isinstance(self.arguments, Mapping):
            raise PlaceboragTypeError(f"arguments={shown(self.arguments)} must be a dict")
        if not isinstance(self.id, str):
            raise PlaceboragTypeError(f"id={shown(self.id)} must be a str")
        # The arguments travel as JSON to a real model: a value JSON cannot hold (a lock, a
        # set, NaN) is refused here, naming the call, rather than failing in the copy below.
        dump_json(
            self.arguments, f"arguments={shown(self.arguments)} of the {shown(self.name)} call"
        )
        # A private copy: a test that keeps its dict and changes it later changes no record.
        object.__setattr__(self, "arguments", copy.deepcopy(dict(self.arguments)))


def tool_call(name: str, /, **arguments: Any) -> ToolCall:
    """A tool call for a script: ``tool_call("search_knowledge", query="refund policy")``."""
    return ToolCall(name, arguments)


@dataclass(frozen=True)
class ChatMessage:
    """One message of a conversation as the model receives it.

    ``role`` is one of system, user, assistant, tool. An assistant message may carry the
    ``tool_calls`` it made; a tool message carries the result of one call in ``content`` and
    names it with ``tool_call_id`` and ``name``.
    """

    role: str
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.role, str) or self.role not in ROLES:
            raise PlaceboragValueError(
                f"role={shown(self.role)} is not a chat role; expected one of {', '.join(ROLES)}"
            )
        if not isinstance(self.content, str):
            raise PlaceboragTypeError(f"content={shown(self.content)} must be a str")
        if isinstance(self.tool_calls, (str, bytes, Mapping, ToolCall)) or not isinstance(
            self.tool_calls, Iterable
        ):
            raise PlaceboragTypeError(
                f"tool_calls={shown(self.tool_calls)} must be a sequence of ToolCall (() for none)"
            )
        for name in ("tool_call_id", "name"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise PlaceboragTypeError(f"{name}={shown(value)} must be a str or None")
        calls = tuple(self.tool_calls)
        for position, item in enumerate(calls):
            if not isinstance(item, ToolCall):
                raise PlaceboragTypeError(
                    f"tool_calls[{position}]={shown(item)} must be a ToolCall"
                )
        object.__setattr__(self, "tool_calls", calls)


MessageLike = ChatMessage | Mapping[str, Any] | tuple[str, str] | str


def to_message(value: object, position: int = 0) -> ChatMessage:
    """A ``ChatMessage`` from a message, a ``{"role", "content"}`` dict, a pair or a str (user)."""
    if isinstance(value, ChatMessage):
        return value
    if isinstance(value, str):
        return ChatMessage("user", value)
    if isinstance(value, tuple) and len(value) == 2:
        return ChatMessage(value[0], value[1])
    if isinstance(value, Mapping) and "role" in value:
        where = f"messages[{position}]"
        content = value.get("content", "")
        # OpenAI's assistant message that calls tools carries "content": None.
        return ChatMessage(
            value["role"],
            "" if content is None else content,
            _dict_calls(value.get("tool_calls"), f"{where}['tool_calls']"),
            value.get("tool_call_id"),
            value.get("name"),
        )
    raise PlaceboragTypeError(
        f"messages[{position}]={shown(value)} must be a ChatMessage, a dict with 'role' and"
        " 'content', a (role, content) pair or a str (a user message)"
    )


_FLAT_CALL_KEYS = frozenset({"name", "arguments", "id"})
_OPENAI_CALL_KEYS = frozenset({"id", "type", "function"})
_CALL_SHAPES = (
    "a ToolCall, a {'name', 'arguments', 'id'} dict or OpenAI's"
    " {'id', 'type': 'function', 'function': {'name', 'arguments'}} dict"
)


def _dict_calls(calls: object, where: str) -> tuple[ToolCall, ...]:
    """The tool calls of a message given as a dict: ``None`` (none), or a list of calls."""
    if calls is None:
        return ()
    if isinstance(calls, (str, bytes, Mapping)) or not isinstance(calls, Iterable):
        raise PlaceboragTypeError(
            f"{where}={shown(calls)} must be a list of tool calls or None; each is {_CALL_SHAPES}"
        )
    return tuple(_dict_call(item, f"{where}[{n}]") for n, item in enumerate(calls))


def _dict_call(item: object, where: str) -> ToolCall:
    if isinstance(item, ToolCall):
        return item
    if not isinstance(item, Mapping) or not (
        set(item) <= _FLAT_CALL_KEYS or set(item) <= _OPENAI_CALL_KEYS
    ):
        raise PlaceboragTypeError(f"{where}={shown(item)} must be {_CALL_SHAPES}")
    call_id = item.get("id")
    call_id = "" if call_id is None else call_id
    if "function" not in item and "type" not in item:
        return ToolCall(item.get("name", ""), item.get("arguments", {}), call_id)
    if item.get("type", "function") != "function":
        raise PlaceboragValueError(
            f"{where}['type']={shown(item.get('type'))} must be 'function', the only type of"
            " tool call a chat model emits"
        )
    function = item.get("function")
    if not isinstance(function, Mapping) or not set(function) <= {"name", "arguments"}:
        raise PlaceboragTypeError(
            f"{where}['function']={shown(function)} must be a dict with 'name' and 'arguments'"
        )
    arguments = function.get("arguments", {})
    if arguments is None:
        arguments = {}
    elif isinstance(arguments, str):
        # OpenAI sends the arguments as one JSON text.
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError):
            raise PlaceboragValueError(
                f"{where}['function']['arguments']={shown(arguments)} must be a JSON object"
                " (OpenAI's arguments are one JSON text)"
            ) from None
        if not isinstance(arguments, dict):
            raise PlaceboragValueError(
                f"{where}['function']['arguments'] holds {shown(arguments)}; it must be a JSON"
                " object"
            )
    return ToolCall(function.get("name", ""), arguments, call_id)


def _tool_name(tool: object, position: int) -> str:
    if isinstance(tool, str) and tool:
        return tool
    if isinstance(tool, Mapping):
        # OpenAI's shape nests the name under "function".
        inner = tool.get("function", tool)
        name = inner.get("name") if isinstance(inner, Mapping) else None
    else:
        name = getattr(tool, "name", None)
    if not isinstance(name, str) or not name:
        raise PlaceboragTypeError(
            f"tools[{position}]={shown(tool)} must be a tool name, a dict with a 'name', or an"
            " object with a .name"
        )
    return name


@dataclass(frozen=True)
class ChatRequest:
    """One call of the model: the messages, the names of the tools offered, the arrival index."""

    messages: tuple[ChatMessage, ...]
    tools: tuple[str, ...]
    index: int
    model_name: str

    @property
    def last_user_message(self) -> str:
        """The content of the last user message ('' when there is none)."""
        for message in reversed(self.messages):
            if message.role == "user":
                return message.content
        return ""

    @property
    def tool_results(self) -> tuple[ChatMessage, ...]:
        """The tool messages after the last user message: the results of this turn's round."""
        out: list[ChatMessage] = []
        for message in reversed(self.messages):
            if message.role == "user":
                break
            if message.role == "tool":
                out.append(message)
        return tuple(reversed(out))

    @property
    def tool_rounds(self) -> int:
        """How many assistant messages with tool calls this turn already holds."""
        rounds = 0
        for message in reversed(self.messages):
            if message.role == "user":
                break
            if message.role == "assistant" and message.tool_calls:
                rounds += 1
        return rounds

    def offers(self, tool: str) -> bool:
        """Whether ``tool`` was offered with this request."""
        return tool in self.tools

    def describe(self) -> str:
        """A one-line description for error messages."""
        offered = ", ".join(self.tools) or "no tools"
        return (
            f"request {self.index} (last user message {shown(self.last_user_message)},"
            f" {len(self.tool_results)} tool results, offered: {offered})"
        )


@dataclass(frozen=True)
class ChatReply:
    """The model's answer to one request: text, or tool calls (never both here).

    ``input_tokens`` counts every message of the request and ``output_tokens`` the reply's
    text and call arguments, both with ``count_tokens``.
    """

    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    model_name: str = ""
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def calls_tools(self) -> bool:
        return bool(self.tool_calls)

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def as_message(self) -> ChatMessage:
        """The reply as the assistant message to append to the conversation."""
        return ChatMessage("assistant", self.content, self.tool_calls)


# -- decisions --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Answer:
    text: str | Callable[[ChatRequest], str]


@dataclass(frozen=True)
class _Calls:
    calls: tuple[ToolCall, ...] | Callable[[ChatRequest], Iterable[ToolCall]]


@dataclass(frozen=True)
class _Fail:
    error: BaseException


_Step = _Answer | _Calls | _Fail


def _checked_calls(calls: Iterable[object], where: str) -> tuple[ToolCall, ...]:
    out = []
    for position, item in enumerate(calls):
        if isinstance(item, ToolCall):
            out.append(item)
        elif isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], Mapping):
            out.append(ToolCall(item[0], item[1]))
        else:
            raise PlaceboragTypeError(
                f"{where}[{position}]={shown(item)} must be a ToolCall (see tool_call()) or a"
                " (name, arguments) pair"
            )
    if not out:
        raise PlaceboragValueError(f"{where} must hold at least one tool call; use an answer")
    return tuple(out)


def _calls_step(calls: tuple[object, ...]) -> _Calls:
    if len(calls) == 1 and callable(calls[0]) and not isinstance(calls[0], ToolCall):
        return _Calls(calls[0])
    return _Calls(_checked_calls(calls, "calls"))


def _answer_step(text: object) -> _Answer:
    if not (isinstance(text, str) or callable(text)):
        raise PlaceboragTypeError(f"text={shown(text)} must be a str or a function of the request")
    return _Answer(text)


def _fail_step(exception: object) -> _Fail:
    if not isinstance(exception, BaseException):
        raise PlaceboragTypeError(
            f"exception={shown(exception)} must be an exception instance,"
            " such as TimeoutError('read timed out')"
        )
    return _Fail(exception)


def answer_from_results(request: ChatRequest) -> str:
    """The default answer: the tool results of this turn, joined, or a plain reply without any."""
    results = [message.content for message in request.tool_results if message.content]
    if results:
        return "\n".join(results)
    return f"(answer to: {request.last_user_message})"


def search_on_topics(
    topics: Iterable[str],
    *,
    tool: str = "search_knowledge",
    query: Callable[[ChatRequest], str] | None = None,
    answer: str | Callable[[ChatRequest], str] = answer_from_results,
) -> Callable[[ChatRequest], object]:
    """A rule: call ``tool`` once per turn when the last user message names one of ``topics``.

    Topics match case-insensitively as whole words. The call's argument is
    ``{"query": query(request)}`` (the last user message by default). A request that already
    carries this turn's tool results, names no topic, or does not offer ``tool`` is answered
    with ``answer`` (a str, or a function of the request).
    """
    if isinstance(topics, (str, bytes)) or not isinstance(topics, Iterable):
        raise PlaceboragTypeError(
            f"topics={shown(topics)} must be a list of str, not one value (write [topic] for one)"
        )
    names = tuple(topics)
    for position, topic in enumerate(names):
        if not isinstance(topic, str) or not topic.strip():
            raise PlaceboragTypeError(f"topics[{position}]={shown(topic)} must be a non-empty str")
    # Lookarounds rather than \b: a topic that starts or ends with a symbol ("C#", ".NET") has
    # no word boundary there, but is still a whole word when no word character touches it.
    patterns = [re.compile(rf"(?<!\w){re.escape(topic.casefold())}(?!\w)") for topic in names]
    answering = _answer_step(answer)

    def rule(request: ChatRequest) -> object:
        text = request.last_user_message.casefold()
        if (
            request.tool_rounds == 0
            and request.offers(tool)
            and any(pattern.search(text) for pattern in patterns)
        ):
            phrased = query(request) if query is not None else request.last_user_message
            return [ToolCall(tool, {"query": phrased})]
        return _text(answering.text, request)

    rule.__name__ = f"search_on_topics({', '.join(map(repr, names))})"
    return rule


# -- the model ---------------------------------------------------------------------------------


class ScriptedChatModel(FreshLocks):
    """A chat model that answers or calls tools as its script or its rule says.

    Start a script with ``answering(text)``, ``calling(*calls)`` or ``failing(exception)``;
    add steps with ``then_answers``, ``then_calls`` and ``then_fails``; end it with
    ``then_repeats()`` to answer every further request with the last step. Or decide by a
    rule with ``following(rule)``. Create one model per test: it remembers the steps taken.

        model = ScriptedChatModel.calling(tool_call("search_knowledge", query="refund policy"))
        model.then_answers(lambda request: request.tool_results[0].content)
    """

    _DEFAULT_MODEL_NAME = "scripted-chat"

    # Set by _begin: __init__ refuses to build a model without a first step.
    _model_name: str
    _script: Script[_Step]
    _rule: Callable[[ChatRequest], object] | None
    _lock: threading.Lock
    _requests: list[ChatRequest]
    _replies: list[ChatReply]

    def __init__(self, *args: object, **kwargs: object) -> None:
        raise ScriptError(
            "ScriptedChatModel() cannot start without a step; start it with"
            " ScriptedChatModel.answering(...), .calling(...), .failing(...) or .following(rule)"
        )

    @classmethod
    def _begin(
        cls, steps: list[_Step], rule: Callable[[ChatRequest], object] | None, model_name: str
    ) -> ScriptedChatModel:
        if not isinstance(model_name, str) or not model_name:
            raise PlaceboragTypeError(f"model_name={shown(model_name)} must be a non-empty str")
        model = cls.__new__(cls)
        model._model_name = model_name
        model._script = Script(steps)
        model._rule = rule
        model._lock = threading.Lock()
        model._requests = []
        model._replies = []
        return model

    @classmethod
    def answering(
        cls, text: str | Callable[[ChatRequest], str], *, model_name: str = _DEFAULT_MODEL_NAME
    ) -> ScriptedChatModel:
        """A script whose first request is answered with ``text`` (or ``text(request)``)."""
        return cls._begin([_answer_step(text)], None, model_name)

    @classmethod
    def calling(cls, *calls: object, model_name: str = _DEFAULT_MODEL_NAME) -> ScriptedChatModel:
        """A script whose first request is answered with these tool calls, in one round.

        Each call is a ``ToolCall`` (``tool_call("web_search", query=...)``) or a (name, arguments)
        pair; or pass one function of the request that returns the calls.
        """
        return cls._begin([_calls_step(calls)], None, model_name)

    @classmethod
    def failing(
        cls, exception: BaseException, *, model_name: str = _DEFAULT_MODEL_NAME
    ) -> ScriptedChatModel:
        """A script whose first request raises exactly ``exception``."""
        return cls._begin([_fail_step(exception)], None, model_name)

    @classmethod
    def following(
        cls, rule: Callable[[ChatRequest], object], *, model_name: str = _DEFAULT_MODEL_NAME
    ) -> ScriptedChatModel:
        """A model that decides every request with ``rule(request)`` and never runs out.

        The rule returns a str (the answer), a list of ``ToolCall`` (a round of calls; an
        empty list means answer) or a ``ChatReply``. Calls to tools the request did not offer
        are dropped; when none is left, the model answers with ``answer_from_results``.
        """
        if not callable(rule):
            raise PlaceboragTypeError(f"rule={shown(rule)} must be a function of the request")
        return cls._begin([], rule, model_name)

    # -- building the script ----------------------------------------------------------------

    def _add(self, step: _Step, method: str) -> Self:
        with self._lock:
            if self._rule is not None:
                raise ScriptError(
                    f"{method}() adds a script step; a model following a rule has none"
                )
            self._script.add(step, method)
        return self

    def then_answers(self, text: str | Callable[[ChatRequest], str] = answer_from_results) -> Self:
        """Add a step: answer the next request with ``text`` (a str or a function of it).

        Without an argument the answer is built from this turn's tool results.
        """
        return self._add(_answer_step(text), "then_answers")

    def then_calls(self, *calls: object) -> Self:
        """Add a step: answer the next request with these tool calls, in one round."""
        return self._add(_calls_step(calls), "then_calls")

    def then_fails(self, exception: BaseException) -> Self:
        """Add a step: the next request raises exactly ``exception``."""
        return self._add(_fail_step(exception), "then_fails")

    def then_repeats(self) -> Self:
        """End the script: every further request is answered by the last step."""
        with self._lock:
            if self._rule is not None:
                raise ScriptError("then_repeats() ends a script; a model following a rule has none")
            self._script.end()
        return self

    # -- the record ---------------------------------------------------------------------------

    @property
    def model_name(self) -> str:
        return self._model_name

    @property
    def requests(self) -> tuple[ChatRequest, ...]:
        """A copy of the requests received so far, in arrival order."""
        with self._lock:
            return tuple(self._requests)

    @property
    def replies(self) -> tuple[ChatReply, ...]:
        """The replies given so far, in the order they were given (failed requests have none)."""
        with self._lock:
            return tuple(self._replies)

    @property
    def request(self) -> ChatRequest:
        """The only request received so far; ``ScriptError`` unless there is exactly one."""
        requests = self.requests
        if len(requests) != 1:
            listed = ", ".join(shown(r.last_user_message) for r in requests[:5])
            raise ScriptError(
                f"expected exactly one request, but the model received {len(requests)}"
                + (f": {listed}" if requests else "")
                + "; read .requests for all of them"
            )
        return requests[0]

    @property
    def last_request(self) -> ChatRequest:
        """The most recent request; ``ScriptError`` if none arrived yet."""
        requests = self.requests
        if not requests:
            raise ScriptError("the model received no request yet, so it has no last_request")
        return requests[-1]

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        """Every tool call the model emitted, in order."""
        return tuple(c for reply in self.replies for c in reply.tool_calls)

    # -- answering ----------------------------------------------------------------------------

    def _arrive(
        self, messages: Sequence[MessageLike] | MessageLike, tools: Iterable[object] | None
    ) -> tuple[ChatRequest, _Step | None]:
        if isinstance(messages, (str, ChatMessage)) or _is_pair(messages):
            messages = [messages]  # type: ignore[list-item]  # one message, as a list
        if not isinstance(messages, Sequence):
            raise PlaceboragTypeError(f"messages={shown(messages)} must be a list of messages")
        checked = tuple(to_message(m, i) for i, m in enumerate(messages))
        if isinstance(tools, (str, bytes)):
            raise PlaceboragTypeError(f"tools={shown(tools)} must be a list of tools, not one str")
        if isinstance(tools, Mapping):
            raise PlaceboragTypeError(
                f"tools={shown(tools)} must be a list of tools, not one dict (write [tool] for one)"
            )
        if tools is not None and not isinstance(tools, Iterable):
            raise PlaceboragTypeError(
                f"tools={shown(tools)} must be a list of tools (names, dicts with a 'name', or"
                " objects with a .name) or None"
            )
        names = tuple(_tool_name(t, i) for i, t in enumerate(() if tools is None else tools))
        with self._lock:
            request = ChatRequest(checked, names, len(self._requests), self._model_name)
            self._requests.append(request)
            step = self._next_step(request)
        return request, step

    def _next_step(self, request: ChatRequest) -> _Step | None:
        if self._rule is not None:
            return None
        step = self._script.take()
        return step if step is not None else _Fail(self._script.exhausted(request.describe()))

    def _decide(self, request: ChatRequest, step: _Step | None) -> ChatReply:
        if step is None:
            return self._by_rule(request)
        if isinstance(step, _Fail):
            _raise(step.error)
        if isinstance(step, _Answer):
            return self._reply(request, _text(step.text, request), ())
        calls = step.calls(request) if callable(step.calls) else step.calls
        calls = _checked_calls(calls, "calls")
        for item in calls:
            if not request.offers(item.name):
                offered = ", ".join(request.tools) or "none"
                raise ToolNotOffered(
                    f"the script calls {shown(item.name)} but {request.describe()} offers"
                    f" {offered}; a model never calls a tool it was not offered"
                )
        return self._reply(request, "", calls)

    def _by_rule(self, request: ChatRequest) -> ChatReply:
        rule = self._rule
        assert rule is not None, "only a model following a rule takes no step"
        decision = rule(request)
        if isinstance(decision, ChatReply):
            return decision
        if isinstance(decision, str):
            return self._reply(request, decision, ())
        if isinstance(decision, Iterable):
            proposed = list(decision)
            checked = _checked_calls(proposed, "rule(...)") if proposed else ()
            # The documented fallback: a call to a tool not offered is dropped, never made.
            calls = [c for c in checked if request.offers(c.name)]
            if calls:
                return self._reply(request, "", tuple(calls))
            return self._reply(request, answer_from_results(request), ())
        raise PlaceboragTypeError(
            f"rule(...) returned {shown(decision)}; it must return a str, a list of ToolCall or a"
            " ChatReply"
        )

    def _reply(self, request: ChatRequest, text: str, calls: tuple[ToolCall, ...]) -> ChatReply:
        # Ids are derived from the request's place, so a run's transcript is the same each time.
        calls = tuple(
            ToolCall(c.name, c.arguments, c.id or f"call_{request.index}_{n}")
            for n, c in enumerate(calls)
        )
        input_tokens = sum(count_tokens(m.content) for m in request.messages)
        output_tokens = count_tokens(text) + sum(
            count_tokens(" ".join(f"{k} {v}" for k, v in c.arguments.items())) for c in calls
        )
        return ChatReply(text, calls, self._model_name, input_tokens, output_tokens)

    def _record(self, reply: ChatReply) -> ChatReply:
        with self._lock:
            self._replies.append(reply)
        return reply

    def invoke(
        self,
        messages: Sequence[MessageLike] | MessageLike,
        *,
        tools: Iterable[object] | None = None,
    ) -> ChatReply:
        """Answer one request: ``messages`` (oldest first) with ``tools`` offered.

        ``messages`` is a list, or one message: a str (a user message), a ``ChatMessage`` or
        one (role, content) pair. ``tools`` is a list (never one str or one dict). A tool is a
        name, a dict with a ``name`` (OpenAI's ``{"function": {"name"}}`` too) or
        an object with ``.name``. Malformed input raises before anything is recorded.
        """
        request, step = self._arrive(messages, tools)
        return self._record(self._decide(request, step))

    async def ainvoke(
        self,
        messages: Sequence[MessageLike] | MessageLike,
        *,
        tools: Iterable[object] | None = None,
    ) -> ChatReply:
        """Like ``invoke``; the request takes its step when the coroutine starts running."""
        request, step = self._arrive(messages, tools)
        await asyncio.sleep(0)
        return self._record(self._decide(request, step))

    def stream(
        self,
        messages: Sequence[MessageLike] | MessageLike,
        *,
        tools: Iterable[object] | None = None,
    ) -> Iterator[str]:
        """Answer like ``invoke`` and yield the answer's text piece by piece (``stream_tokens``).

        A reply with tool calls yields nothing; read it from ``replies[-1]``. The request is
        recorded, and its step taken, when iteration starts.
        """
        reply = self.invoke(messages, tools=tools)
        yield from stream_tokens(reply.content)

    async def astream(
        self,
        messages: Sequence[MessageLike] | MessageLike,
        *,
        tools: Iterable[object] | None = None,
    ) -> AsyncIterator[str]:
        """Like ``stream``, yielding to the event loop between pieces."""
        reply = await self.ainvoke(messages, tools=tools)
        for piece in stream_tokens(reply.content):
            yield piece
            await asyncio.sleep(0)

    def __repr__(self) -> str:
        how = (
            f"rule={getattr(self._rule, '__name__', self._rule)!r}"
            if self._rule
            else repr(self._script)
        )
        requests = len(self._requests)
        return f"<ScriptedChatModel model_name={self._model_name!r} {how} requests={requests}>"


def _is_pair(messages: object) -> bool:
    """Whether ``messages`` is one (role, content) pair rather than a tuple of two messages."""
    return (
        isinstance(messages, tuple)
        and len(messages) == 2
        and isinstance(messages[0], str)
        and messages[0] in ROLES
        and isinstance(messages[1], str)
    )


def checked_model(model: object) -> ScriptedChatModel:
    """``model`` if it is a ``ScriptedChatModel``: what the framework forms are built on."""
    if not isinstance(model, ScriptedChatModel):
        raise PlaceboragTypeError(
            f"model={shown(model)} must be a ScriptedChatModel, such as"
            " ScriptedChatModel.answering('...')"
        )
    return model


def _text(text: str | Callable[[ChatRequest], str], request: ChatRequest) -> str:
    value = text(request) if callable(text) else text
    if not isinstance(value, str):
        raise PlaceboragTypeError(
            f"the answer function returned {shown(value)}; it must return a str"
        )
    return value


def _raise(error: BaseException) -> NoReturn:
    raise error.with_traceback(None)
