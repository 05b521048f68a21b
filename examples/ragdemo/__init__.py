"""ragdemo: a small retrieval-augmented answering pipeline, the worked example of placeborag.

It knows nothing about placeborag: its embedder, vector store and reranker are injected
through the protocols in :mod:`ragdemo.protocols`, so a test can pass doubles and an
application real clients.
"""

from ragdemo.bugs import BUGS
from ragdemo.chunking import chunk_text, split_sentences
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
    "Chunk",
    "Citation",
    "Document",
    "Embedder",
    "ExtractiveModel",
    "KeywordIndex",
    "Pipeline",
    "Prompt",
    "Reranker",
    "RetrievalUnavailable",
    "Source",
    "VectorStore",
    "chunk_text",
    "reciprocal_rank_fusion",
    "split_sentences",
    "tokenize",
]
