"""placeborag: deterministic test doubles for the retrieval half of a RAG pipeline.

``import placeborag`` loads numpy and nothing heavier. The explorer lives in
``placeborag.explore`` and the framework adapters in ``placeborag.integrations``; each imports
its own libraries when it is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from placeborag._embedder import FakeEmbedder, cosine_similarity
from placeborag._errors import (
    FilterError,
    PlaceboragError,
    PlaceboragTypeError,
    PlaceboragValueError,
    RetrievalError,
    RetrievalTimeout,
)
from placeborag._profiles import PROFILES, Profile, get_profile
from placeborag._store import FakeVectorStore, Match, QueryExplanation, QueryRecord

__version__ = "0.5.0.dev0"

# Doubles whose modules are only loaded when first used.
_LAZY = {
    "ScriptedScorer": "placeborag._scoring",
    "GeometryScorer": "placeborag._scoring",
    "ScoringRequest": "placeborag._scoring",
    "ScoringResponse": "placeborag._scoring",
    "ScoringListener": "placeborag._scoring",
    "ScriptExhausted": "placeborag._scoring",
    "ScriptError": "placeborag._scoring",
    "ReplayEmbedder": "placeborag._replay",
    "Recording": "placeborag._replay",
    "record_vectors": "placeborag._replay",
    "load_demo_recording": "placeborag._replay",
    "UnrecordedText": "placeborag._replay",
}

__all__ = [
    "PROFILES",
    "FakeEmbedder",
    "FakeVectorStore",
    "FilterError",
    "Match",
    "PlaceboragError",
    "PlaceboragTypeError",
    "PlaceboragValueError",
    "Profile",
    "QueryExplanation",
    "QueryRecord",
    "RetrievalError",
    "RetrievalTimeout",
    "__version__",
    "cosine_similarity",
    "get_profile",
    *sorted(_LAZY),
]


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
    from placeborag._replay import (
        Recording,
        ReplayEmbedder,
        UnrecordedText,
        load_demo_recording,
        record_vectors,
    )
    from placeborag._scoring import (
        GeometryScorer,
        ScoringListener,
        ScoringRequest,
        ScoringResponse,
        ScriptedScorer,
        ScriptError,
        ScriptExhausted,
    )
