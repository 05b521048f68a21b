"""The seams of the pipeline: what it needs from an embedder, a vector store and a reranker.

The pipeline imports no client library. Whatever is injected only has to have these shapes;
a production deployment passes real clients, a test passes doubles.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Embedder(Protocol):
    """An embedding model: one vector per text, for a named model of a fixed width."""

    model_name: str
    dimensions: int

    def embed_batch(self, texts: Sequence[str]) -> Any: ...


class Hit(Protocol):
    """One row a store returns. ``score`` follows the store's own convention, whatever it is."""

    id: str
    text: str
    metadata: Mapping[str, Any]
    score: float


@runtime_checkable
class VectorStore(Protocol):
    """A collection that embeds with the embedding function it was opened with.

    ``query`` returns hits best first; ``context`` carries the caller's identity to the store,
    which applies its own access rules. ``refresh`` (optional) makes earlier writes readable.
    """

    def upsert_many(
        self,
        ids: Sequence[str],
        texts: Sequence[str],
        metadatas: Sequence[Mapping[str, Any] | None] | None = None,
    ) -> None: ...

    def query(
        self,
        text: str,
        k: int | None = None,
        where: Mapping[str, Any] | None = None,
        *,
        context: Mapping[str, Any] | None = None,
    ) -> Sequence[Hit]: ...


#: Opens a collection whose documents and queries are embedded with the given embedder.
OpenStore = Callable[[Embedder], VectorStore]


@runtime_checkable
class Reranker(Protocol):
    """A scoring model: one score per document, higher is better, in the documents' order."""

    def score_all(self, query: str, documents: Sequence[str]) -> Sequence[float]: ...
