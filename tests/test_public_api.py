"""The public surface: a tested __all__, and an import that stays light."""

import subprocess
import sys

import pytest

import placeborag

EXPECTED = {
    "FakeEmbedder",
    "FakeVectorStore",
    "Match",
    "QueryRecord",
    "QueryExplanation",
    "cosine_similarity",
    "Profile",
    "PROFILES",
    "get_profile",
    "PlaceboragError",
    "PlaceboragTypeError",
    "PlaceboragValueError",
    "FilterError",
    "FilterTypeError",
    "PlaceboragWarning",
    "RetrievalError",
    "RetrievalTimeout",
    "ScriptedScorer",
    "GeometryScorer",
    "ScoringRequest",
    "ScoringResponse",
    "ScoringListener",
    "ScriptExhausted",
    "ScriptError",
    "ReplayEmbedder",
    "Recording",
    "record_vectors",
    "load_demo_recording",
    "UnrecordedText",
    "RecordingNotFound",
    "__version__",
    "ScriptedChatModel",
    "ChatMessage",
    "ChatReply",
    "ChatRequest",
    "ToolCall",
    "ToolNotOffered",
    "tool_call",
    "count_tokens",
    "stream_tokens",
    "search_on_topics",
    "answer_from_results",
    "StubKnowledgeStore",
    "KnowledgeResult",
    "KnowledgeCall",
    "WithheldRecord",
    "UnscriptedQuery",
    "CandidateCache",
    "CacheEvent",
    "Conversation",
    "Turn",
    "conversation",
    "Session",
    "Sessions",
    "WindowBudget",
    "Packing",
    "BudgetExceeded",
}


def test_all_lists_the_public_names():
    assert set(placeborag.__all__) >= EXPECTED


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_public_name_resolves(name):
    assert getattr(placeborag, name) is not None


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="has no attribute 'FakeEmbeder'"):
        placeborag.FakeEmbeder


def test_errors_are_also_the_builtins_a_caller_catches():
    assert issubclass(placeborag.PlaceboragTypeError, TypeError)
    assert issubclass(placeborag.PlaceboragValueError, ValueError)
    assert issubclass(placeborag.FilterError, ValueError)
    assert issubclass(placeborag.RetrievalTimeout, TimeoutError)
    for name in ("PlaceboragTypeError", "FilterError", "RetrievalError", "RetrievalTimeout"):
        assert issubclass(getattr(placeborag, name), placeborag.PlaceboragError)


HEAVY = (
    "pandas",
    "plotly",
    "sklearn",
    "ipywidgets",
    "langchain_core",
    "llama_index",
    "haystack",
    "scipy",
)


def loaded_after(code):
    probe = (
        f"{code}\nimport sys\n"
        f"print(' '.join(sorted(m for m in {HEAVY + ('numpy',)!r} if m in sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_import_placeborag_loads_nothing_heavy():
    assert loaded_after("import placeborag") == []


def test_using_every_core_double_loads_numpy_at_most():
    code = (
        "import placeborag as p\n"
        "s = p.FakeVectorStore(); s.upsert('a', 'refund'); s.query('refund', where={'x': 1})\n"
        "p.ScriptedScorer.scoring(0.5).score('q', ['d'])\n"
        "p.GeometryScorer().score('q', ['d'])\n"
        "p.ReplayEmbedder, p.record_vectors\n"
        "p.reciprocal_rank_fusion([['a', 'b'], ['b']])\n"
    )
    assert loaded_after(code) == ["numpy"]
