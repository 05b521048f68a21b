"""What both framework adapters need: the import guard, embedder plumbing and reranking.

It imports no framework, so each adapter module stays the only place its framework is loaded.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from placeborag._errors import PlaceboragTypeError, PlaceboragValueError

__all__ = [
    "VectorFunctions",
    "check_options",
    "check_scorer",
    "check_top_n",
    "document_vectors",
    "framework_missing",
    "query_vectors",
    "rerank_order",
    "resolve_embedder",
    "store_embedder",
]


def framework_missing(adapter: str, package: str, extra: str) -> ImportError:
    """The error an adapter raises when its framework cannot be imported: it names the extra."""
    return ImportError(
        f"placeborag.integrations.{adapter} needs {package}, which is not installed; "
        f"pip install 'placeborag[{extra}]'"
    )


def resolve_embedder(embedder: Any) -> Any:
    """A placeborag embedder: ``embedder`` itself, or a ``FakeEmbedder()`` for None."""
    if embedder is None:
        from placeborag._embedder import FakeEmbedder

        return FakeEmbedder()
    if not callable(getattr(embedder, "embed_batch", None)):
        raise PlaceboragTypeError(
            f"embedder={embedder!r} must have an embed_batch(texts) method "
            "(a FakeEmbedder, a ReplayEmbedder or a compatible object)"
        )
    return embedder


def document_vectors(embedder: Any, texts: Sequence[str]) -> np.ndarray:
    """Vectors of documents: ``embed_batch`` is the document side of every placeborag embedder."""
    return np.asarray(embedder.embed_batch(list(texts)), dtype=np.float64)


def query_vectors(embedder: Any, texts: Sequence[str]) -> np.ndarray:
    """Vectors of queries: ``embed_queries`` where the embedder keeps queries apart (replay)."""
    embed = getattr(embedder, "embed_queries", None) or embedder.embed_batch
    return np.asarray(embed(list(texts)), dtype=np.float64)


class VectorFunctions:
    """A placeborag-shaped embedder over a framework's embedding model.

    A ``FakeVectorStore`` calls ``embed_batch`` for documents and ``embed_queries`` for
    queries; this forwards them to the framework's document and query functions, so the
    store ranks in the framework model's space and keeps its two namespaces apart.
    """

    def __init__(
        self,
        documents: Callable[[list[str]], Iterable[Sequence[float]]],
        query: Callable[[str], Sequence[float]],
        *,
        model_name: str,
    ) -> None:
        self._documents = documents
        self._query = query
        self.model_name = model_name

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(list(self._documents(list(texts))), dtype=np.float64)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray([list(self._query(text)) for text in texts], dtype=np.float64)

    def __repr__(self) -> str:
        return f"VectorFunctions(model_name={self.model_name!r})"


def store_embedder(model: Any, wrapper: type, framework: type, methods: tuple[str, str]) -> Any:
    """The placeborag-shaped embedder a ``FakeVectorStore`` needs for a framework ``model``.

    An adapter's own embedding class (``wrapper``) is unwrapped, so a ``FakeEmbedder`` still
    lets the store break ties in exact arithmetic; any other ``framework`` model is called
    through its document and query ``methods`` (named in that order); anything else must be
    a placeborag embedder (None for a ``FakeEmbedder()``).
    """
    if isinstance(model, wrapper):
        return model.embedder
    if isinstance(model, framework):
        return VectorFunctions(
            getattr(model, methods[0]),
            getattr(model, methods[1]),
            model_name=getattr(model, "model_name", None) or type(model).__name__,
        )
    return resolve_embedder(model)


def check_options(options: dict[str, Any], method: str, allowed: Sequence[str]) -> None:
    """Refuse keyword arguments a method would otherwise ignore (a misspelled ``filter``)."""
    if options:
        names = ", ".join(repr(name) for name in sorted(options))
        raise PlaceboragTypeError(
            f"{method} got unexpected keyword argument(s) {names}; it accepts {', '.join(allowed)}"
        )


def check_scorer(scorer: object) -> None:
    if not all(callable(getattr(scorer, name, None)) for name in ("score", "ascore")):
        raise PlaceboragTypeError(
            f"scorer={scorer!r} must have score(query, documents) and ascore(query, documents) "
            "methods, like ScriptedScorer and GeometryScorer"
        )


def check_top_n(top_n: object) -> int | None:
    if top_n is None:
        return None
    if isinstance(top_n, bool) or not isinstance(top_n, int):
        raise PlaceboragTypeError(
            f"top_n={top_n!r} must be an int or None, not {type(top_n).__name__}"
        )
    if top_n < 1:
        raise PlaceboragValueError(f"top_n={top_n!r} must be >= 1 (or None for every document)")
    return top_n


def rerank_order(scores: Sequence[float], count: int, top_n: int | None) -> list[tuple[int, float]]:
    """``(position, score)`` of the best ``top_n`` of ``count`` documents, best first.

    Higher scores are better, as every scoring model reports them; equal scores keep the
    retrieval order. A response with a score missing, extra or not finite cannot order the
    documents, so it raises instead of silently dropping or inventing one.
    """
    if len(scores) != count:
        raise PlaceboragValueError(
            f"the scorer returned {len(scores)} score(s) for {count} document(s); "
            "a reranker needs exactly one score per document"
        )
    for position, score in enumerate(scores):
        if not math.isfinite(score):
            raise PlaceboragValueError(
                f"the scorer returned scores[{position}]={score!r}; "
                "a reranker needs finite scores to order documents"
            )
    order = sorted(range(count), key=lambda i: (-scores[i], i))
    return [(i, float(scores[i])) for i in order[:top_n]]
