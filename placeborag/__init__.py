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
    from placeborag._chat import (
        ChatMessage,
        ChatReply,
        ChatRequest,
        ScriptedChatModel,
        ToolCall,
        ToolNotOffered,
        answer_from_results,
        count_tokens,
        search_on_topics,
        stream_tokens,
        tool_call,
    )
    from placeborag._conversation import (
        BudgetExceeded,
        Conversation,
        Packing,
        Session,
        Sessions,
        Turn,
        WindowBudget,
        conversation,
    )
    from placeborag._embedder import FakeEmbedder, cosine_similarity
    from placeborag._errors import (
        FilterError,
        FilterTypeError,
        PlaceboragError,
        PlaceboragTypeError,
        PlaceboragValueError,
        PlaceboragWarning,
        RecordingNotFound,
        RetrievalError,
        RetrievalTimeout,
        ScriptError,
        ScriptExhausted,
        UnrecordedText,
    )
    from placeborag._fusion import (
        FusedMatch,
        HybridExplanation,
        HybridRetriever,
        KeywordIndex,
        keyword_scores,
        reciprocal_rank_fusion,
    )
    from placeborag._knowledge import (
        CacheEvent,
        CandidateCache,
        KnowledgeCall,
        KnowledgeResult,
        StubKnowledgeStore,
        UnscriptedQuery,
        WithheldRecord,
    )
    from placeborag._profiles import PROFILES, MetricScore, Profile, get_profile
    from placeborag._replay import (
        Recording,
        ReplayEmbedder,
        load_demo_recording,
        record_vectors,
    )
    from placeborag._scoring import (
        GeometryScorer,
        ScoringListener,
        ScoringRequest,
        ScoringResponse,
        ScriptedScorer,
    )
    from placeborag._store import (
        FakeVectorStore,
        Match,
        QueryExplanation,
        QueryRecord,
        QueryTrace,
        StoreRecords,
        TieInfo,
    )
    from placeborag._trace import STAGES
