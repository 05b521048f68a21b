"""The seams of the pipeline: what it needs from an embedder, a vector store and a reranker.

The pipeline imports no client library. Whatever is injected only has to have these shapes;
a production deployment passes real clients, a test passes doubles.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
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


# -- the query engine's seams ------------------------------------------------------------------


class ToolCallLike(Protocol):
    name: str
    arguments: Mapping[str, Any]
    id: str


class ChatReplyLike(Protocol):
    content: str
    tool_calls: Sequence[ToolCallLike]
    model_name: str


@runtime_checkable
class ChatModel(Protocol):
    """A chat model that may call tools: messages are dicts (role, content, tool_calls...).

    ``tools`` are the tool specs offered for this call; a model never calls one not offered.
    ``stream`` yields the answer's text piece by piece.
    """

    def invoke(self, messages: Sequence[Mapping[str, Any]], *, tools: Sequence[Any]) -> Any: ...

    def stream(
        self, messages: Sequence[Mapping[str, Any]], *, tools: Sequence[Any]
    ) -> Iterator[str]: ...


class KnowledgeResultLike(Protocol):
    matches: Sequence[Hit]  # readable, best first (the hybrid fused order)
    withheld: Sequence[Any]  # relevant but withheld by permissions: only .source is shown


@runtime_checkable
class KnowledgeStore(Protocol):
    """The knowledge service: retrieval, fusion and permissions all happen behind it."""

    @property
    def is_empty(self) -> bool: ...

    def search(
        self, query: str, *, identity: Mapping[str, Any] | None, k: int | None = None
    ) -> KnowledgeResultLike: ...


@runtime_checkable
class CandidateCache(Protocol):
    def get(self, query: str, identity: Mapping[str, Any] | None) -> Any: ...

    def put(self, query: str, identity: Mapping[str, Any] | None, value: Any) -> None: ...


class WebResult(Protocol):
    url: str
    title: str
    text: str


@runtime_checkable
class WebSearch(Protocol):
    def search(self, query: str) -> Sequence[WebResult]: ...


class SessionLike(Protocol):
    """The signed-in caller: ``owner`` is the user id, ``identity`` what KS filters on."""

    owner: str
    identity: Mapping[str, Any] | None
