"""The query engine: one conversational turn, grounded when the model decides to search.

One call of :meth:`QueryEngine.turn` (or :meth:`QueryEngine.stream`)::

    conversation (owned by the caller, created on the first message)
    -> tools available now (search_knowledge only while the base holds something,
       web_search only while the admin allows it)
    -> the model decides: answer (a conversational turn) or one round of tool calls
    -> at most one search_knowledge per turn: cache gate on (standalone query, identity),
       then the knowledge store, with the identity from the session
    -> fuse knowledge and web results by rank (RRF), cut to top_k, pack into the window budget
    -> the model answers with no tools offered: one round, never a loop
    -> grounding: only sentences anchored on a packed source [n] survive; none -> not found;
       withheld records add a hint naming only their source system
    -> record-level citations, access signals on cited records, the retrieval trace,
       the assistant message with its model and tokens used

Retrieval, fusion inside the knowledge store and permissions belong to the knowledge store;
the engine passes the caller's identity through and filters nothing itself.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragdemo.budget import Budget, count_tokens
from ragdemo.bugs import check_bugs
from ragdemo.chatstore import ChatStore, MessageRow, NotFound, RetrievalTrace
from ragdemo.fusion import reciprocal_rank_fusion, tokenize
from ragdemo.generator import GROUNDING_RULES, PLATFORM_RULES
from ragdemo.pipeline import NOT_FOUND
from ragdemo.protocols import CandidateCache, ChatModel, KnowledgeStore, SessionLike, WebSearch

SEARCH_KNOWLEDGE = {
    "name": "search_knowledge",
    "description": "Search the company knowledge base. Pass a standalone query: fill in the"
    " subject from the conversation.",
    "parameters": {
        "type": "object",
        "properties": {"query": {"type": "string"}},
        "required": ["query"],
    },
}
WEB_SEARCH = {
    "name": "web_search",
    "description": "Search the public web.",
    "parameters": {
        "type": "object",
        "properties": {"query": {"type": "string"}},
        "required": ["query"],
    },
}
ONE_SEARCH_PER_TURN = "not run: one knowledge search per turn"
NO_RESULTS = "no results"
_ANCHOR = re.compile(r"\[(\d+)\]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class Fragment:
    """One packed source as the model sees it: a knowledge chunk or a web result."""

    id: str  # the chunk id (knowledge) or the url (web)
    record_id: str  # the source entity a citation links to
    title: str
    text: str
    source: str | None  # the source system ("wiki", "hr-drive", "web")
    kind: str = "knowledge"


@dataclass(frozen=True)
class RecordCitation:
    """A citation of a source entity, anchored on its best packed fragment."""

    record_id: str
    title: str
    source: str | None
    kind: str
    anchor_id: str
    quote: str


@dataclass(frozen=True)
class TurnResult:
    conversation_id: str
    message_id: str
    text: str
    grounded: bool  # the model searched: the grounding contract applies
    not_found: bool
    citations: tuple[RecordCitation, ...] = ()
    hints: tuple[str, ...] = ()  # source systems holding relevant records the caller cannot read
    tools_offered: tuple[str, ...] = ()
    query: str | None = None  # the standalone query knowledge search ran on
    candidates: tuple[Fragment, ...] = ()
    context: tuple[Fragment, ...] = ()
    model: str | None = None
    tokens_used: int = 0
    system_prompt: str = ""


def _hint(sources: Sequence[str]) -> str:
    where = ", ".join(sources) if sources else "another system"
    return f"Some relevant records in {where} are not available to you."


@dataclass
class _Turn:
    """The state of one turn while it runs."""

    session: SessionLike
    utterance: str
    conversation_id: str
    user_message: MessageRow
    model_name: str
    model: ChatModel
    tools: list[dict[str, Any]]
    system_prompt: str
    messages: list[dict[str, Any]]
    tokens: int = 0
    grounded: bool = False
    query: str | None = None
    candidates: tuple[Fragment, ...] = ()
    context: tuple[Fragment, ...] = ()
    withheld: tuple[str, ...] = ()
    withheld_any: bool = False


class QueryEngine:
    """The conversational turn over injected model(s), knowledge store, cache and web search.

    ``models`` maps a model name to a chat model; ``default_model`` answers a conversation
    with no selected model, ``allowed_models`` (the admin's allow-list) defaults to every
    name in ``models``. ``top_k`` fragments at most reach the context, and only as many as
    ``budget`` leaves room for.
    """

    def __init__(
        self,
        *,
        models: Mapping[str, ChatModel],
        knowledge: KnowledgeStore,
        store: ChatStore | None = None,
        cache: CandidateCache | None = None,
        web: WebSearch | None = None,
        web_enabled: bool = True,
        default_model: str | None = None,
        allowed_models: Sequence[str] | None = None,
        budget: Budget | None = None,
        platform_prompt: str | None = None,
        top_k: int = 5,
        fetch_k: int = 20,
        bugs: Iterable[str] = (),
    ) -> None:
        if not models:
            raise ValueError("models must name at least one chat model")
        self._bugs = check_bugs(bugs)
        self._models = dict(models)
        self._default = default_model or next(iter(self._models))
        self._allowed = tuple(allowed_models or self._models)
        self._knowledge = knowledge
        self._store = store if store is not None else ChatStore()
        self._cache = cache
        self._web = web
        self._web_enabled = web_enabled
        self._budget = budget or Budget(bugs=self._bugs)
        self._platform = platform_prompt
        self._top_k = top_k
        self._fetch_k = fetch_k
        self._history: dict[str, list[MessageRow]] = {}
        # The bug: the tool set decided once, when the engine starts.
        self._tools_at_start = self._available_tools()

    @property
    def store(self) -> ChatStore:
        return self._store

    @property
    def allowed_models(self) -> tuple[str, ...]:
        return self._allowed

    # -- tools, prompt, conversation ------------------------------------------------------------

    def _available_tools(self) -> list[dict[str, Any]]:
        tools = []
        if not self._knowledge.is_empty or "offer_search_when_empty" in self._bugs:
            tools.append(SEARCH_KNOWLEDGE)
        web_allowed = self._web_enabled or "offer_disabled_web" in self._bugs
        if self._web is not None and web_allowed:
            tools.append(WEB_SEARCH)
        return tools

    def tools(self) -> list[dict[str, Any]]:
        """The tools a turn starting now offers the model."""
        if "stale_tool_set" in self._bugs:
            return list(self._tools_at_start)
        return self._available_tools()

    def system_prompt(self) -> str:
        """The platform prompt first (the built-in one when the override is empty), then rules."""
        platform = self._platform if self._platform else PLATFORM_RULES
        if "empty_platform_prompt" in self._bugs and self._platform is not None:
            platform = self._platform
        if "grounding_first" in self._bugs:
            return f"{GROUNDING_RULES}\n{platform}"
        return f"{platform}\n{GROUNDING_RULES}"

    def _conversation(self, session: SessionLike, conversation_id: str | None) -> str:
        if conversation_id is None:
            return self._store.create_conversation(session.owner).id  # born with its first message
        if "no_ownership_check" in self._bugs:
            if conversation_id not in self._store.conversations:
                raise NotFound(conversation_id)
            return conversation_id
        return self._store.conversation(conversation_id, session.owner).id

    def _thread_history(self, session: SessionLike, conversation_id: str) -> list[MessageRow]:
        if "history_in_engine" in self._bugs:
            return list(self._history.get(conversation_id, []))
        if "history_by_user" in self._bugs:
            mine = {c.id for c in self._store.conversations.values() if c.user_id == session.owner}
            rows = [m for m in self._store.messages.values() if m.conversation_id in mine]
        else:
            rows = self._store.thread(conversation_id)
        return [m for m in rows if m.status == "complete"]

    def _model_for(self, conversation_id: str) -> tuple[str, ChatModel]:
        selected = self._store.conversations[conversation_id].selected_model
        if selected is None:
            name = self._allowed[0] if "null_model_first_allowed" in self._bugs else self._default
        else:
            name = selected
        return name, self._models[name]

    def select_model(self, session: SessionLike, conversation_id: str, model: str | None) -> None:
        """Set the conversation's model for the next answers (``None``: the default)."""
        self._store.select_model(conversation_id, session.owner, model, self._allowed)

    # -- one turn -------------------------------------------------------------------------------

    def _start(self, session: SessionLike, utterance: str, conversation_id: str | None) -> _Turn:
        conversation = self._conversation(session, conversation_id)
        history = self._thread_history(session, conversation)
        packed = self._budget.pack(history, utterance, ())
        system = self.system_prompt()
        messages = [{"role": "system", "content": system}]
        messages += [{"role": m.role, "content": m.content} for m in packed.history]
        messages.append({"role": "user", "content": packed.utterance})
        user_row = self._store.add_message(conversation, "user", utterance)
        self._history.setdefault(conversation, []).append(user_row)
        name, model = self._model_for(conversation)
        return _Turn(
            session, utterance, conversation, user_row, name, model, self.tools(), system, messages
        )

    def _round(self, turn: _Turn, reply: Any) -> list[dict[str, Any]]:
        """Run one round of tool calls; return the tool messages, one per call."""
        offered = {tool["name"] for tool in turn.tools}
        calls = list(reply.tool_calls)
        if "first_tool_only" in self._bugs:
            calls = calls[:1]
        knowledge: list[Fragment] = []
        web: list[Fragment] = []
        results = []
        searched = False
        for call in calls:
            if call.name not in offered:
                content = f"not run: {call.name} was not offered"
            elif call.name == "search_knowledge":
                if searched and "search_every_call" not in self._bugs:
                    content = ONE_SEARCH_PER_TURN
                else:
                    searched = True
                    knowledge = self._search_knowledge(turn, call.arguments)
                    content = None  # filled once the context is packed
            else:
                web = self._search_web(call.arguments)
                content = None
            results.append(
                {"role": "tool", "content": content, "tool_call_id": call.id, "name": call.name}
            )
        self._pack(turn, knowledge, web)
        numbered = {f.id: n for n, f in enumerate(turn.context, start=1)}
        for result in results:
            if result["content"] is None:
                mine = [
                    f for f in turn.context if (f.kind == "web") == (result["name"] == "web_search")
                ]
                result["content"] = (
                    "\n".join(f"[{numbered[f.id]}] {f.title}: {f.text}" for f in mine) or NO_RESULTS
                )
        return results

    def _search_knowledge(self, turn: _Turn, arguments: Mapping[str, Any]) -> list[Fragment]:
        turn.grounded = True
        query = arguments.get("query")
        if not isinstance(query, str) or not query.strip() or "raw_utterance_query" in self._bugs:
            query = turn.utterance
        turn.query = query
        identity = turn.session.identity
        if "tool_identity" in self._bugs and isinstance(arguments.get("identity"), Mapping):
            identity = dict(arguments["identity"])
        if "identity_dropped" in self._bugs:
            identity = None
        if "anonymous_as_empty" in self._bugs and identity is None:
            identity = {"groups": []}
        cache_query = turn.utterance if "cache_raw_utterance" in self._bugs else query
        cache_identity = None if "cache_ignores_identity" in self._bugs else identity
        result = None
        if self._cache is not None and "no_cache_read" not in self._bugs:
            result = self._cache.get(cache_query, cache_identity)
        if result is None:
            result = self._knowledge.search(query, identity=identity, k=self._fetch_k)
            if self._cache is not None:
                self._cache.put(cache_query, cache_identity, result)
        matches = list(result.matches)
        if "qe_acl_filter" in self._bugs:
            groups = set((identity or {}).get("groups", ()))
            matches = [m for m in matches if m.metadata.get("acl", "all") in groups | {"all"}]
        if "rescore" in self._bugs:
            terms = set(tokenize(query))
            overlap = {m.id: len(terms & set(tokenize(m.text))) for m in matches}
            matches.sort(key=lambda m: -overlap[m.id])
        turn.withheld = tuple(dict.fromkeys(w.source for w in result.withheld if w.source))
        turn.withheld_any = bool(result.withheld)
        return [
            Fragment(
                m.id,
                str(m.metadata.get("record", m.id)),
                str(m.metadata.get("title", "")),
                m.text,
                m.metadata.get("source"),
            )
            for m in matches
        ]

    def _search_web(self, arguments: Mapping[str, Any]) -> list[Fragment]:
        assert self._web is not None
        query = str(arguments.get("query", ""))
        return [
            Fragment(r.url, r.url, r.title, r.text, "web", "web") for r in self._web.search(query)
        ]

    def _pack(self, turn: _Turn, knowledge: list[Fragment], web: list[Fragment]) -> None:
        by_id = {f.id: f for f in (*knowledge, *web)}
        lists = [[f.id for f in knowledge]] + ([[f.id for f in web]] if web else [])
        ranked = reciprocal_rank_fusion(lists, limit=self._top_k, bugs=self._bugs)
        turn.candidates = tuple(by_id[f.id] for f in knowledge + web)
        fragments = [by_id[id] for id in ranked]
        history = self._thread_history(turn.session, turn.conversation_id)[:-1]
        packed = self._budget.pack(history, turn.utterance, fragments)
        turn.context = packed.fragments
        if "inline_context" in self._bugs:
            turn.messages[0]["content"] += "\nContext:\n" + "\n".join(f.text for f in turn.context)

    def _first_reply(self, turn: _Turn) -> Any:
        reply = turn.model.invoke(turn.messages, tools=turn.tools)
        turn.tokens += _usage(turn.messages, reply.content, reply.tool_calls)
        return reply

    def _answer_messages(self, turn: _Turn, reply: Any) -> tuple[list[dict[str, Any]], list]:
        """After one round of tools: the messages for the answer and the tools offered (none)."""
        messages = list(turn.messages)
        while True:
            assistant = {
                "role": "assistant",
                "content": reply.content,
                "tool_calls": [
                    {"name": c.name, "arguments": dict(c.arguments), "id": c.id}
                    for c in reply.tool_calls
                ],
            }
            messages += [assistant, *self._round(turn, reply)]
            if "second_round" not in self._bugs:
                return messages, []
            # The bug: offer the tools again and run whatever the model calls next.
            reply = turn.model.invoke(messages, tools=turn.tools)
            turn.tokens += _usage(messages, reply.content, reply.tool_calls)
            if not reply.tool_calls:
                return messages, turn.tools

    def turn(
        self, session: SessionLike, utterance: str, *, conversation_id: str | None = None
    ) -> TurnResult:
        """Answer one utterance of ``session``'s caller, in a new conversation or in theirs."""
        events = self.stream(session, utterance, conversation_id=conversation_id)
        result = None
        for kind, payload in events:
            if kind == "done":
                result = payload
        assert isinstance(result, TurnResult)
        return result

    def stream(
        self, session: SessionLike, utterance: str, *, conversation_id: str | None = None
    ) -> Iterator[tuple[str, Any]]:
        """The turn as events: ("token", text) pieces, ("citations", ...), ("done", result).

        Closing the iterator early (a client that went away) stops generation and finishes
        the assistant message as ``interrupted`` with the text sent so far.
        """
        turn = self._start(session, utterance, conversation_id)
        reply = self._first_reply(turn)
        if not reply.tool_calls:
            if "always_retrieve" in self._bugs and not self._knowledge.is_empty:
                self._search_knowledge(turn, {"query": utterance})
                turn.grounded = False
            if "always_ground" in self._bugs:
                turn.grounded = True
            pieces = _pieces(reply.content)
            answer_messages, answer_tools, model_name = None, None, reply.model_name
        else:
            answer_messages, answer_tools = self._answer_messages(turn, reply)
            pieces = None
            model_name = None
        row = self._store.add_message(
            turn.conversation_id, "assistant", "", model=None, status="streaming"
        )
        sent: list[str] = []
        finished = False
        try:
            if pieces is None:
                pieces = turn.model.stream(answer_messages, tools=answer_tools)
                model_name = getattr(turn.model, "model_name", turn.model_name)
            text, raw = yield from self._deliver(turn, pieces, sent)
            finished = True
        finally:
            if not finished:
                self._store.finish_message(row.id, content="".join(sent), status="interrupted")
        if answer_messages is not None:
            turn.tokens += _usage(answer_messages, raw, ())
        result = self._finish(turn, row, text, model_name)
        yield "citations", (row.id, result.citations, result.hints)
        yield "done", result

    def _deliver(
        self, turn: _Turn, pieces: Iterable[str], sent: list[str]
    ) -> Iterator[tuple[str, Any]]:
        """Yield the answer's tokens, a sentence at a time on a grounding turn.

        A grounding turn holds each sentence back until it is complete, and drops it unless it
        is anchored on a packed source; a turn with nothing anchored ends as not found.
        """
        raw: list[str] = []
        kept_any = False
        if not turn.grounded:
            for piece in pieces:
                raw.append(piece)
                sent.append(piece)
                yield "token", piece
            return "".join(raw), "".join(raw)
        dropped: list[str] = []
        for text in _sentences(pieces, raw):
            if not self._anchored(text, turn):
                dropped.append(text)
                continue
            kept_any = True
            for token in _pieces(text if sent else text.lstrip()):
                sent.append(token)
                yield "token", token
        if dropped and kept_any and "keep_uncited" in self._bugs:
            for token in _pieces("".join(dropped)):
                sent.append(token)
                yield "token", token
        tail = ""
        if not kept_any:
            tail = "".join(raw).strip() if "invent_answer" in self._bugs else NOT_FOUND
            if turn.withheld_any and "hidden_as_empty" not in self._bugs:
                tail = ""
        if turn.withheld_any and "hidden_as_empty" not in self._bugs:
            tail = (tail + " " if tail else "") + _hint(turn.withheld)
        if tail:
            for token in _pieces((" " if sent else "") + tail):
                sent.append(token)
                yield "token", token
        return "".join(sent).strip(), "".join(raw)

    def _anchored(self, sentence: str, turn: _Turn) -> bool:
        numbers = [int(n) for n in _ANCHOR.findall(sentence)]
        if not numbers:
            return False
        if "unchecked_anchor" in self._bugs:
            return True
        return all(1 <= n <= len(turn.context) for n in numbers)

    def _finish(
        self, turn: _Turn, row: MessageRow, text: str, model_name: str | None
    ) -> TurnResult:
        grounded = turn.grounded
        used = sorted({int(n) for n in _ANCHOR.findall(text) if 1 <= int(n) <= len(turn.context)})
        citations = self._citations(turn, text, used) if grounded else ()
        not_found = grounded and text == NOT_FOUND
        hints = turn.withheld if turn.withheld_any and "hidden_as_empty" not in self._bugs else ()
        if "stamp_intent" in self._bugs:
            model_name = turn.model_name
        tokens = turn.tokens
        if "tokens_output_only" in self._bugs:
            tokens = count_tokens(text)
        self._store.finish_message(
            row.id,
            content=text,
            model=model_name,
            tokens_used=tokens,
            citations=citations,
            hints=hints,
            status="complete",
        )
        self._history.setdefault(turn.conversation_id, []).append(self._store.messages[row.id])
        if grounded and "no_trace" not in self._bugs:
            self._store.write_trace(
                RetrievalTrace(
                    row.id,
                    turn.query or "",
                    turn.session.identity,
                    tuple(f.id for f in turn.candidates),
                    tuple(f.id for f in turn.context),
                )
            )
        self._signal(turn, row.id, citations, used)
        return TurnResult(
            turn.conversation_id,
            row.id,
            text,
            grounded,
            not_found,
            citations,
            hints,
            tuple(tool["name"] for tool in turn.tools),
            turn.query,
            turn.candidates,
            turn.context,
            model_name,
            tokens,
            turn.system_prompt,
        )

    def _citations(self, turn: _Turn, text: str, used: list[int]) -> tuple[RecordCitation, ...]:
        if "cite_candidates" in self._bugs:
            cited = list(turn.candidates)
        elif "cite_in_answer_order" in self._bugs:
            order = list(dict.fromkeys(int(n) for n in _ANCHOR.findall(text)))
            cited = [turn.context[n - 1] for n in order if 1 <= n <= len(turn.context)]
        else:
            records = {turn.context[n - 1].record_id for n in used}
            cited = [f for f in turn.context if f.record_id in records]
        if "cite_every_chunk" in self._bugs:
            return tuple(_cite(f) for f in cited)
        best: dict[str, RecordCitation] = {}
        for fragment in cited:  # in relevance order, so a record's first fragment is its best
            best.setdefault(fragment.record_id, _cite(fragment))
        return tuple(best.values())

    def _signal(
        self, turn: _Turn, message_id: str, citations: Sequence[RecordCitation], used: list[int]
    ) -> None:
        user = turn.session.owner
        if "signal_on_retrieve" in self._bugs:
            for fragment in turn.candidates:
                self._store.signal(fragment.record_id, user, "cited", message_id)
            return
        if "signal_per_chunk" in self._bugs:
            for n in used:
                if turn.context[n - 1].kind == "knowledge":
                    self._store.signal(turn.context[n - 1].record_id, user, "cited", message_id)
            return
        for citation in citations:
            if citation.kind == "knowledge":
                self._store.signal(citation.record_id, user, "cited", message_id)

    def click(self, session: SessionLike, message_id: str, record_id: str) -> None:
        """The caller opened a citation of one of their answers: one access on that record."""
        row = self._store.messages.get(message_id)
        if row is None:
            raise NotFound(message_id)
        self._store.conversation(row.conversation_id, session.owner)
        if record_id not in {c.record_id for c in row.citations}:
            raise NotFound(record_id)
        if "click_uncounted" in self._bugs:
            return
        self._store.signal(record_id, session.owner, "click", message_id)


def _cite(fragment: Fragment) -> RecordCitation:
    return RecordCitation(
        fragment.record_id,
        fragment.title,
        fragment.source,
        fragment.kind,
        fragment.id,
        fragment.text,
    )


_PIECE = re.compile(r"\s*\S+")


def _pieces(text: str) -> list[str]:
    return _PIECE.findall(text)


def _sentences(pieces: Iterable[str], raw: list[str]) -> Iterator[str]:
    """Whole sentences as the pieces complete them (the last may lack its full stop)."""
    sentence: list[str] = []
    for piece in pieces:
        raw.append(piece)
        sentence.append(piece)
        if piece.rstrip().endswith((".", "!", "?")):
            yield "".join(sentence)
            sentence = []
    if sentence:
        yield "".join(sentence)


def _usage(messages: Sequence[Mapping[str, Any]], text: str, calls: Sequence[Any]) -> int:
    """Input and output tokens of one model call, counted like the model reports them."""
    input_tokens = sum(count_tokens(m["content"] or "") for m in messages)
    output_tokens = count_tokens(text) + sum(
        count_tokens(" ".join(f"{k} {v}" for k, v in c.arguments.items())) for c in calls
    )
    return input_tokens + output_tokens


def dumps(value: Any) -> str:
    """JSON for the wire: dataclasses as dicts, keys sorted."""
    from dataclasses import asdict, is_dataclass

    def default(item: Any) -> Any:
        if is_dataclass(item) and not isinstance(item, type):
            return asdict(item)
        raise TypeError(f"{item!r} is not JSON")

    return json.dumps(value, default=default, sort_keys=True)
