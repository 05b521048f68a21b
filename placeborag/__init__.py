"""placeborag: deterministic test doubles for the retrieval half of a RAG pipeline.

``import placeborag`` imports nothing heavy; the first use of a double loads numpy, and nothing
heavier. Beside the retrieval doubles here, the public namespaces are:

* ``placeborag.query_engine``: doubles for the seams of a query engine (a scripted chat model, a
  stub knowledge store, a candidate cache, conversations and window budgets);
* ``placeborag.toolkit``: the checks (with placeborag's messages), atomic file writes, filter
  compiler and stage names a layer of your own builds on;
* ``placeborag.explore``: the geometry explorer;
* ``placeborag.integrations.langchain`` and ``placeborag.integrations.llama_index``: the
  framework adapters.

Each imports its own libraries when it is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from placeborag._lazy import lazy_namespace

__version__ = "0.5.0.dev0"

# Every public name is loaded on first use, so that `import placeborag` (which pytest does in
# every run of every project that installs us, to load the plugin) costs next to nothing.
_LAZY = {
    "FakeEmbedder": "placeborag._embedder",
    "cosine_similarity": "placeborag._embedder",
    "FilterError": "placeborag._errors",
    "MissingExtra": "placeborag._errors",
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
    "MAX_DIMENSIONS": "placeborag._limits",
    "MAX_K": "placeborag._limits",
    "PROFILES": "placeborag._profiles",
    "Profile": "placeborag._profiles",
    "get_profile": "placeborag._profiles",
    "FakeVectorStore": "placeborag._store",
    "Match": "placeborag._results",
    "QueryExplanation": "placeborag._store",
    "QueryRecord": "placeborag._results",
    "QueryTrace": "placeborag._store",
    "StoreRecords": "placeborag._store",
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
    "HybridRetriever": "placeborag._fusion",
    "HybridExplanation": "placeborag._fusion",
    "ReplayEmbedder": "placeborag._replay",
    "Recording": "placeborag._replay",
    "record_vectors": "placeborag._replay",
    "load_demo_recording": "placeborag._replay",
    "UnrecordedText": "placeborag._errors",
    "RecordingNotFound": "placeborag._errors",
}

__all__ = ["__version__", *sorted(_LAZY)]


# Names that left the top level: each still resolves, with a DeprecationWarning saying what to
# use instead. The types are those of the entries of a public result, reached from it.
_DEPRECATED = {
    "keyword_scores": (
        "placeborag._fusion",
        "use KeywordIndex(k1=k1, b=b), its add_many(ids, texts) and then scores(query)",
    ),
    "FusedMatch": (
        "placeborag._fusion",
        "it is private now: the type of the entries reciprocal_rank_fusion returns and "
        "HybridExplanation.fused holds; read their attributes",
    ),
    "MetricScore": (
        "placeborag._profiles",
        "it is private now: the type of the entries of Profile.metrics; read their attributes",
    ),
    "TieInfo": (
        "placeborag._trace",
        "it is private now: the type of the entries of QueryTrace.ties and of what "
        "QueryTrace.tie_of returns; read their attributes",
    ),
}

# A name read from here that lives in another namespace (the query-engine doubles moved out of
# the top level) gets an error naming that namespace.
__getattr__, __dir__ = lazy_namespace(
    globals(), _LAZY, ("placeborag.query_engine",), deprecated=_DEPRECATED
)


if TYPE_CHECKING:  # pragma: no cover
    # `name as name` marks a re-export for type checkers (mypy --strict, pyright).
    from placeborag._embedder import FakeEmbedder as FakeEmbedder
    from placeborag._embedder import cosine_similarity as cosine_similarity
    from placeborag._embedding import Embedder as Embedder
    from placeborag._embedding import ExactEmbedder as ExactEmbedder
    from placeborag._errors import FilterError as FilterError
    from placeborag._errors import FilterTypeError as FilterTypeError
    from placeborag._errors import MissingExtra as MissingExtra
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
    from placeborag._fusion import HybridExplanation as HybridExplanation
    from placeborag._fusion import HybridRetriever as HybridRetriever
    from placeborag._fusion import KeywordIndex as KeywordIndex
    from placeborag._fusion import reciprocal_rank_fusion as reciprocal_rank_fusion
    from placeborag._limits import MAX_DIMENSIONS as MAX_DIMENSIONS
    from placeborag._limits import MAX_K as MAX_K
    from placeborag._options import StoreOptions as StoreOptions
    from placeborag._profiles import PROFILES as PROFILES
    from placeborag._profiles import Profile as Profile
    from placeborag._profiles import get_profile as get_profile
    from placeborag._replay import Recording as Recording
    from placeborag._replay import ReplayEmbedder as ReplayEmbedder
    from placeborag._replay import load_demo_recording as load_demo_recording
    from placeborag._replay import record_vectors as record_vectors
    from placeborag._results import Match as Match
    from placeborag._results import QueryRecord as QueryRecord
    from placeborag._scoring import GeometryScorer as GeometryScorer
    from placeborag._scoring import ScoringListener as ScoringListener
    from placeborag._scoring import ScoringRequest as ScoringRequest
    from placeborag._scoring import ScoringResponse as ScoringResponse
    from placeborag._scoring import ScriptedScorer as ScriptedScorer
    from placeborag._store import FakeVectorStore as FakeVectorStore
    from placeborag._store import QueryExplanation as QueryExplanation
    from placeborag._store import QueryTrace as QueryTrace
    from placeborag._store import StoreRecords as StoreRecords
    from placeborag._trace import STAGES as STAGES


if TYPE_CHECKING:  # pragma: no cover
    # The names that left (_DEPRECATED), visible to type checkers until they are removed.
    from placeborag._fusion import FusedMatch as FusedMatch
    from placeborag._fusion import keyword_scores as keyword_scores
    from placeborag._profiles import MetricScore as MetricScore
    from placeborag._trace import TieInfo as TieInfo
