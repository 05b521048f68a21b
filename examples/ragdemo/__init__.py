"""ragdemo: a small retrieval-augmented answering pipeline, the worked example of placeborag.

It knows nothing about placeborag: its embedder, vector store and reranker (and, for the
query engine in :mod:`ragdemo.engine`, its chat model, knowledge store, candidate cache and
web search) are injected through the protocols in :mod:`ragdemo.protocols`, so a test can
pass doubles and an application real clients.
"""

from ragdemo.budget import Budget, UtteranceTooLong, count_tokens
from ragdemo.bugs import BUGS
from ragdemo.chatstore import ChatStore, IntegrityError, NotFound
from ragdemo.chunking import chunk_text, split_sentences
from ragdemo.engine import Fragment, QueryEngine, RecordCitation, TurnResult
from ragdemo.fusion import KeywordIndex, reciprocal_rank_fusion, tokenize
from ragdemo.generator import ExtractiveModel, Prompt, Source
from ragdemo.pipeline import (
    NOT_FOUND,
    UNAVAILABLE,
    Answer,
    Chunk,
    Citation,
    Document,
    Pipeline,
    RetrievalUnavailable,
)
from ragdemo.protocols import Embedder, Reranker, VectorStore

__all__ = [
    "BUGS",
    "NOT_FOUND",
    "UNAVAILABLE",
    "Answer",
    "Budget",
    "ChatStore",
    "Chunk",
    "Citation",
    "Document",
    "Embedder",
    "ExtractiveModel",
    "Fragment",
    "IntegrityError",
    "KeywordIndex",
    "NotFound",
    "Pipeline",
    "Prompt",
    "QueryEngine",
    "RecordCitation",
    "Reranker",
    "RetrievalUnavailable",
    "Source",
    "TurnResult",
    "UtteranceTooLong",
    "VectorStore",
    "chunk_text",
    "count_tokens",
    "reciprocal_rank_fusion",
    "split_sentences",
    "tokenize",
]
