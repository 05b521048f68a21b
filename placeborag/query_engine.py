"""placeborag.query_engine: doubles for the seams of a query engine, beside the retrieval ones.

A query engine sits between a chat surface and a knowledge service: a chat model decides
whether a turn needs a search, the engine asks a knowledge store with the caller's identity,
caches candidates, and packs what comes back into the model's window. Each seam has a
deterministic double here (see ``docs/doubles.md``):

* the chat model: ``ScriptedChatModel`` with ``tool_call``, ``search_on_topics``,
  ``answer_from_results``, and what it records (``ChatRequest``, ``ChatReply``, ``ChatMessage``,
  ``ToolCall``); ``count_tokens`` and ``stream_tokens`` are its token rules;
* the knowledge store: ``StubKnowledgeStore`` (``KnowledgeResult``, ``KnowledgeCall``,
  ``WithheldRecord``);
* the candidate cache: ``CandidateCache`` (``CacheEvent``);
* conversations and windows: ``conversation``, ``Conversation``, ``Turn``, ``Sessions``,
  ``Session``, ``WindowBudget``, ``Packing``;
* their errors: ``ToolNotOffered``, ``UnscriptedQuery``, ``BudgetExceeded``.

Like ``placeborag`` itself, every name is loaded on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from placeborag._lazy import lazy_namespace

_LAZY = {
    "ScriptedChatModel": "placeborag._chat",
    "ChatMessage": "placeborag._chat",
    "ChatReply": "placeborag._chat",
    "ChatRequest": "placeborag._chat",
    "ToolCall": "placeborag._chat",
    "ToolNotOffered": "placeborag._chat",
    "tool_call": "placeborag._chat",
    "count_tokens": "placeborag._chat",
    "stream_tokens": "placeborag._chat",
    "search_on_topics": "placeborag._chat",
    "answer_from_results": "placeborag._chat",
    "StubKnowledgeStore": "placeborag._knowledge",
    "KnowledgeResult": "placeborag._knowledge",
    "KnowledgeCall": "placeborag._knowledge",
    "WithheldRecord": "placeborag._knowledge",
    "UnscriptedQuery": "placeborag._knowledge",
    "CandidateCache": "placeborag._knowledge",
    "CacheEvent": "placeborag._knowledge",
    "Conversation": "placeborag._conversation",
    "Turn": "placeborag._conversation",
    "conversation": "placeborag._conversation",
    "Session": "placeborag._conversation",
    "Sessions": "placeborag._conversation",
    "WindowBudget": "placeborag._conversation",
    "Packing": "placeborag._conversation",
    "BudgetExceeded": "placeborag._conversation",
}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = lazy_namespace(globals(), _LAZY)

if TYPE_CHECKING:  # pragma: no cover
    # `name as name` marks a re-export for type checkers (mypy --strict, pyright).
    from placeborag._chat import ChatMessage as ChatMessage
    from placeborag._chat import ChatReply as ChatReply
    from placeborag._chat import ChatRequest as ChatRequest
    from placeborag._chat import ScriptedChatModel as ScriptedChatModel
    from placeborag._chat import ToolCall as ToolCall
    from placeborag._chat import ToolNotOffered as ToolNotOffered
    from placeborag._chat import answer_from_results as answer_from_results
    from placeborag._chat import count_tokens as count_tokens
    from placeborag._chat import search_on_topics as search_on_topics
    from placeborag._chat import stream_tokens as stream_tokens
    from placeborag._chat import tool_call as tool_call
    from placeborag._conversation import BudgetExceeded as BudgetExceeded
    from placeborag._conversation import Conversation as Conversation
    from placeborag._conversation import Packing as Packing
    from placeborag._conversation import Session as Session
    from placeborag._conversation import Sessions as Sessions
    from placeborag._conversation import Turn as Turn
    from placeborag._conversation import WindowBudget as WindowBudget
    from placeborag._conversation import conversation as conversation
    from placeborag._knowledge import CacheEvent as CacheEvent
    from placeborag._knowledge import CandidateCache as CandidateCache
    from placeborag._knowledge import KnowledgeCall as KnowledgeCall
    from placeborag._knowledge import KnowledgeResult as KnowledgeResult
    from placeborag._knowledge import StubKnowledgeStore as StubKnowledgeStore
    from placeborag._knowledge import UnscriptedQuery as UnscriptedQuery
    from placeborag._knowledge import WithheldRecord as WithheldRecord
