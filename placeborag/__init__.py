"""placeborag: deterministic test doubles for the retrieval half of a RAG pipeline.

``import placeborag`` imports nothing heavy; the first use of a double loads numpy, and nothing
heavier. The explorer lives in
``placeborag.explore`` and the framework adapters in ``placeborag.integrations``; each imports
its own libraries when it is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.5.0.dev0"

# Every public name is loaded on first use, so that `import placeborag` (which pytest does in
# every run of every project that installs us, to load the plugin) costs next to nothing.
_LAZY = {
    "FakeEmbedder": "placeborag._embedder",
    "cosine_similarity": "placeborag._embedder",
    "FilterError": "placeborag._errors",
    "FilterTypeError": "placeborag._errors",
    "PlaceboragWarning": "placeborag._errors",
    "PlaceboragError": "placeborag._errors",
    "PlaceboragTypeError": "placeborag._errors",
    "PlaceboragValueError": "placeborag._errors",
    "RetrievalError": "placeborag._errors",
    "RetrievalTimeout": "placeborag._errors",
    "WriteError": "placeborag._errors",
    "StoreOptions": "placeborag._options",
    "Embedder": "placeborag._embedding",
    "ExactEmbedder": "placeborag._embedding",
    "MAX_K": "placeborag._validation",
    "PROFILES": "placeborag._profiles",
    "Profile": "placeborag._profiles",
    "get_profile": "placeborag._profiles",
    "FakeVectorStore": "placeborag._store",
    "Match": "placeborag._store",
    "QueryExplanation": "placeborag._store",
    "QueryRecord": "placeborag._store",
    "QueryTrace": "placeborag._store",
    "StoreRecords": "placeborag._store",
    "TieInfo": "placeborag._store",
    "STAGES": "placeborag._trace",
    "ScriptedScorer": "placeborag._scoring",
    "GeometryScorer": "placeborag._scoring",
    "ScoringRequest": "placeborag._scoring",
    "ScoringResponse": "placeborag._scoring",
    "ScoringListener": "placeborag._scoring",
    "ScriptExhausted": "placeborag._errors",
    "ScriptError": "placeborag._errors",
    "reciprocal_rank_fusion": "placeborag._fusion",
    "KeywordIndex": "placeborag._fusion",
    "keyword_scores": "placeborag._fusion",
    "HybridRetriever": "placeborag._fusion",
    "FusedMatch": "placeborag._fusion",
    "HybridExplanation": "placeborag._fusion",
    "MetricScore": "placeborag._profiles",
    "ReplayEmbedder": "placeborag._replay",
    "Recording": "placeborag._replay",
    "record_vectors": "placeborag._replay",
    "load_demo_recording": "placeborag._replay",
    "UnrecordedText": "placeborag._errors",
    "RecordingNotFound": "placeborag._errors",
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

__all__ = ["__version__", *sorted(_LAZY)]


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'placeborag' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


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
    from placeborag._embedder import FakeEmbedder as FakeEmbedder
    from placeborag._embedder import cosine_similarity as cosine_similarity
    from placeborag._embedding import Embedder as Embedder
    from placeborag._embedding import ExactEmbedder as ExactEmbedder
    from placeborag._errors import FilterError as FilterError
    from placeborag._errors import FilterTypeError as FilterTypeError
    from placeborag._errors import PlaceboragError as PlaceboragError
    from placeborag._errors import PlaceboragTypeError as PlaceboragTypeError
    from placeborag._errors import PlaceboragValueError as PlaceboragValueError
    from placeborag._errors import PlaceboragWarning as PlaceboragWarning
    from placeborag._errors import RecordingNotFound as RecordingNotFound
    from placeborag._errors import RetrievalError as RetrievalError
    from placeborag._errors import RetrievalTimeout as RetrievalTimeout
    from placeborag._errors import ScriptError as ScriptError
    from placeborag._errors import ScriptExhausted as ScriptExhausted
    from placeborag._errors import UnrecordedText as UnrecordedText
    from placeborag._errors import WriteError as WriteError
    from placeborag._fusion import FusedMatch as FusedMatch
    from placeborag._fusion import HybridExplanation as HybridExplanation
    from placeborag._fusion import HybridRetriever as HybridRetriever
    from placeborag._fusion import KeywordIndex as KeywordIndex
    from placeborag._fusion import keyword_scores as keyword_scores
    from placeborag._fusion import reciprocal_rank_fusion as reciprocal_rank_fusion
    from placeborag._knowledge import CacheEvent as CacheEvent
    from placeborag._knowledge import CandidateCache as CandidateCache
    from placeborag._knowledge import KnowledgeCall as KnowledgeCall
    from placeborag._knowledge import KnowledgeResult as KnowledgeResult
    from placeborag._knowledge import StubKnowledgeStore as StubKnowledgeStore
    from placeborag._knowledge import UnscriptedQuery as UnscriptedQuery
    from placeborag._knowledge import WithheldRecord as WithheldRecord
    from placeborag._options import StoreOptions as StoreOptions
    from placeborag._profiles import PROFILES as PROFILES
    from placeborag._profiles import MetricScore as MetricScore
    from placeborag._profiles import Profile as Profile
    from placeborag._profiles import get_profile as get_profile
    from placeborag._replay import Recording as Recording
    from placeborag._replay import ReplayEmbedder as ReplayEmbedder
    from placeborag._replay import load_demo_recording as load_demo_recording
    from placeborag._replay import record_vectors as record_vectors
    from placeborag._scoring import GeometryScorer as GeometryScorer
    from placeborag._scoring import ScoringListener as ScoringListener
    from placeborag._scoring import ScoringRequest as ScoringRequest
    from placeborag._scoring import ScoringResponse as ScoringResponse
    from placeborag._scoring import ScriptedScorer as ScriptedScorer
    from placeborag._store import FakeVectorStore as FakeVectorStore
    from placeborag._store import Match as Match
    from placeborag._store import QueryExplanation as QueryExplanation
    from placeborag._store import QueryRecord as QueryRecord
    from placeborag._store import QueryTrace as QueryTrace
    from placeborag._store import StoreRecords as StoreRecords
    from placeborag._store import TieInfo as TieInfo
    from placeborag._trace import STAGES as STAGES
    from placeborag._validation import MAX_K as MAX_K
