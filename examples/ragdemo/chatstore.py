"""The query engine's own rows: conversations, messages, retrieval traces, access signals.

An in-memory stand-in for the tables, with the constraints the database would hold:
``UNIQUE(message_id)`` on retrieval traces, ``CHECK(feedback IN (-1, 1))`` on messages, and an
``updated_at`` that a trigger bumps on every update (here a counter, so it is deterministic).
The store outlives an engine: a new engine over the same store sees the same threads, which
is what "the session survives a restart" means here.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ragdemo.bugs import check_bugs


class IntegrityError(ValueError):
    """A write the database constraints would refuse."""


class NotFound(LookupError):
    """No such row for this user: unknown and someone else's look the same (anti-IDOR)."""


@dataclass(frozen=True)
class ConversationRow:
    id: str
    user_id: str
    selected_model: str | None = None
    updated_at: int = 0


@dataclass(frozen=True)
class MessageRow:
    id: str
    conversation_id: str
    role: str  # "user" or "assistant"
    content: str
    model: str | None = None  # the model that actually generated an assistant message
    tokens_used: int | None = None  # assistant only: input + output of the whole turn
    citations: tuple[Any, ...] = ()
    hints: tuple[Any, ...] = ()
    feedback: int | None = None
    status: str = "complete"  # or "interrupted" when the client dropped mid-stream
    updated_at: int = 0


@dataclass(frozen=True)
class RetrievalTrace:
    message_id: str
    query: str
    identity: Mapping[str, Any] | None
    candidates: tuple[str, ...]
    packed: tuple[str, ...]


@dataclass(frozen=True)
class AccessSignal:
    record_id: str
    user_id: str | None
    kind: str  # "cited" or "click"
    message_id: str


@dataclass
class ChatStore:
    """The rows, with their constraints. ``bugs`` switch off one constraint each."""

    bugs: Iterable[str] = ()
    conversations: dict[str, ConversationRow] = field(default_factory=dict)
    messages: dict[str, MessageRow] = field(default_factory=dict)
    traces: dict[str, RetrievalTrace] = field(default_factory=dict)
    signals: list[AccessSignal] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.bugs = check_bugs(self.bugs)
        self._ids = itertools.count(1)
        self._clock = itertools.count(1)

    def _next(self, prefix: str) -> str:
        return f"{prefix}-{next(self._ids)}"

    def tick(self) -> int:
        return next(self._clock)

    # -- conversations ----------------------------------------------------------------------

    def create_conversation(self, user_id: str) -> ConversationRow:
        row = ConversationRow(self._next("conv"), user_id, None, self.tick())
        self.conversations[row.id] = row
        return row

    def conversation(self, conversation_id: str, user_id: str) -> ConversationRow:
        row = self.conversations.get(conversation_id)
        if row is None or row.user_id != user_id:
            raise NotFound(conversation_id)
        return row

    def thread(self, conversation_id: str) -> list[MessageRow]:
        return [m for m in self.messages.values() if m.conversation_id == conversation_id]

    def select_model(
        self, conversation_id: str, user_id: str, model: str | None, allowed: Sequence[str]
    ) -> ConversationRow:
        """Set the intent "generate with this next"; ``None`` means the default."""
        row = self.conversation(conversation_id, user_id)
        if model is not None and model not in allowed and "model_off_list" not in self.bugs:
            raise IntegrityError(f"model {model!r} is not on the allow-list {list(allowed)}")
        row = replace(row, selected_model=model, updated_at=self.tick())
        self.conversations[row.id] = row
        if "rewrite_history" in self.bugs and model is not None:
            for message in self.thread(row.id):
                if message.role == "assistant":
                    self.messages[message.id] = replace(message, model=model)
        return row

    # -- messages ---------------------------------------------------------------------------

    def add_message(
        self, conversation_id: str, role: str, content: str, **fields: Any
    ) -> MessageRow:
        row = MessageRow(
            self._next("msg"), conversation_id, role, content, updated_at=self.tick(), **fields
        )
        self.messages[row.id] = row
        conversation = self.conversations[conversation_id]
        self.conversations[conversation_id] = replace(conversation, updated_at=self.tick())
        return row

    def finish_message(self, message_id: str, **fields: Any) -> MessageRow:
        row = replace(self.messages[message_id], updated_at=self.tick(), **fields)
        self.messages[message_id] = row
        return row

    def rate(self, message_id: str, user_id: str, value: int | None) -> MessageRow:
        """Set (or clear) the rating of an assistant message, in place."""
        row = self.messages.get(message_id)
        if row is None:
            raise NotFound(message_id)
        self.conversation(row.conversation_id, user_id)
        if value not in (-1, 1, None) and "feedback_any_value" not in self.bugs:
            raise IntegrityError(f"CHECK (feedback IN (-1, 1)) refused {value!r}")
        if row.role != "assistant" and "feedback_on_user" not in self.bugs:
            raise IntegrityError("feedback is for assistant messages only")
        if "feedback_new_row" in self.bugs:
            return self.add_message(row.conversation_id, row.role, row.content, feedback=value)
        changes: dict[str, Any] = {"feedback": value, "updated_at": self.tick()}
        if "feedback_touches_body" in self.bugs:
            changes["content"] = row.content.strip() + " (rated)"
        self.messages[message_id] = replace(row, **changes)
        return self.messages[message_id]

    # -- traces and signals -----------------------------------------------------------------

    def write_trace(self, trace: RetrievalTrace) -> None:
        if trace.message_id in self.traces and "trace_overwrite" not in self.bugs:
            raise IntegrityError(
                f"UNIQUE(message_id) refused a second retrieval trace for {trace.message_id!r}"
            )
        self.traces[trace.message_id] = trace

    def signal(self, record_id: str, user_id: str | None, kind: str, message_id: str) -> None:
        self.signals.append(AccessSignal(record_id, user_id, kind, message_id))
