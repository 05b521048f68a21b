"""LangChain adapters: placeborag's embedders, store and scoring doubles as LangChain components.

* :class:`PlaceboEmbeddings` is an ``Embeddings`` over any placeborag embedder. Over a
  ``ReplayEmbedder``, ``embed_documents`` answers from the recorded documents and
  ``embed_query`` from the recorded queries; the two are never mixed.
* :class:`PlaceboVectorStore` is a ``VectorStore`` over a ``FakeVectorStore``. It is clean by
  default (pre-filtering, perfect recall, writes visible at once) and keeps every quirk of the
  store it is given: profile, ``filter_mode="post"``, ``recall``, ``visibility="manual"`` and
  failures injected with ``fail_next_query``.
* :class:`PlaceboRetriever` is a ``BaseRetriever`` over a ``FakeVectorStore`` that takes ``k``
  and ``where`` per call: ``retriever.invoke(query, k=2, where={"lang": "hu"})``.
* :class:`PlaceboReranker` is a ``BaseDocumentCompressor`` over a ``ScriptedScorer`` or a
  ``GeometryScorer``, for ``ContextualCompressionRetriever`` and any chain that reranks.

Metadata: a ``FakeVectorStore`` holds str, int, float and bool values, the kinds its filter
language compares. A document whose metadata holds anything else (None, a list, a dict) is
refused with an error naming the document and the key, before anything is written: silently
dropping or stringifying the value would make a filter on that key quietly wrong.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from placeborag._errors import PlaceboragTypeError, PlaceboragValueError
from placeborag._store import FakeVectorStore, Match
from placeborag.integrations import _shared

try:
    from langchain_core.callbacks import CallbackManagerForRetrieverRun, Callbacks
    from langchain_core.documents import BaseDocumentCompressor, Document
    from langchain_core.embeddings import Embeddings
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.vectorstores import VectorStore
    from pydantic import ConfigDict
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise _shared.framework_missing("langchain", "langchain-core", "langchain") from exc

from placeborag.integrations._langchain_chat import PlaceboChatModel, PlaceboKnowledgeRetriever

__all__ = [
    "PlaceboChatModel",
    "PlaceboEmbeddings",
    "PlaceboKnowledgeRetriever",
    "PlaceboReranker",
    "PlaceboRetriever",
    "PlaceboVectorStore",
]

# The LangChain model's document and query methods, in that order.
_METHODS = ("embed_documents", "embed_query")
# Generated ids are uuid5s in this namespace: the same writes give the same ids on every run.
_ID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://placeborag.invalid/langchain/ids")


class PlaceboEmbeddings(Embeddings):
    """LangChain ``Embeddings`` over a placeborag embedder (a ``FakeEmbedder()`` by default).

    ``embed_documents`` uses the embedder's document side (``embed_batch``) and ``embed_query``
    its query side (``embed_queries`` where it has one, as ``ReplayEmbedder`` does). The async
    methods are LangChain's defaults, which run these on a worker thread.
    """

    def __init__(self, embedder: Any = None) -> None:
        self._embedder = _shared.resolve_embedder(embedder)

    @property
    def embedder(self) -> Any:
        """The placeborag embedder answering the calls."""
        return self._embedder

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return _shared.document_vectors(self._embedder, texts).tolist()

    def embed_query(self, text: str) -> list[float]:
        return _shared.query_vectors(self._embedder, [text])[0].tolist()

    def __repr__(self) -> str:
        return f"PlaceboEmbeddings({self._embedder!r})"


def _document(match: Match) -> Document:
    return Document(id=match.id, page_content=match.text, metadata=match.metadata)


def _checked_where(where: object, name: str) -> Mapping[str, Any] | None:
    if where is None or isinstance(where, Mapping):
        return where
    raise PlaceboragTypeError(
        f"{name}={where!r} must be a placeborag where dict such as {{'lang': 'hu'}} or None, "
        f"not {type(where).__name__}"
    )


class PlaceboVectorStore(VectorStore):
    """A LangChain ``VectorStore`` over a :class:`~placeborag.FakeVectorStore`.

    Give either ``store=`` (a configured ``FakeVectorStore``, quirks and all) or an
    ``embedding`` plus ``FakeVectorStore`` options (``profile=``, ``filter_mode=``, ``recall=``,
    ``visibility=``, ...). ``embedding`` may be a :class:`PlaceboEmbeddings`, a placeborag
    embedder, or any LangChain ``Embeddings`` (its vectors are then ranked by the store);
    it defaults to a ``FakeEmbedder()``.

    * ``add_texts``/``add_documents`` write with the given ids; a missing id is generated as a
      uuid5 of a per-adapter counter and the text, so the same writes give the same ids on every
      run while equal texts written twice still become two records, as in a real store.
      Writing an existing id replaces that record.
    * ``similarity_search_with_score`` reports the score in the store profile's convention:
      ``"chroma"`` a cosine distance (lower is better), ``"qdrant"`` a cosine similarity
      (higher is better). ``similarity_search_with_relevance_scores`` maps both to the cosine.
    * ``filter=`` is a placeborag ``where`` dict (``{"year": {"$gte": 2024}}``); a callable is
      refused, as a real backend's query language would refuse it.
    * ``delete`` ignores unknown ids, as LangChain expects; ``delete()`` with no ids empties
      the store.
    """

    def __init__(
        self,
        embedding: Any = None,
        *,
        store: FakeVectorStore | None = None,
        **store_options: Any,
    ) -> None:
        if store is not None:
            if embedding is not None or store_options:
                given = ["embedding"] if embedding is not None else []
                raise PlaceboragTypeError(
                    f"store= cannot be combined with {', '.join(given + sorted(store_options))}; "
                    "configure the FakeVectorStore itself instead"
                )
            if not isinstance(store, FakeVectorStore):
                raise PlaceboragTypeError(
                    f"store={store!r} must be a FakeVectorStore, not {type(store).__name__}"
                )
        else:
            embedder = _shared.store_embedder(embedding, PlaceboEmbeddings, Embeddings, _METHODS)
            store = FakeVectorStore(embedder=embedder, **store_options)
        self._store = store
        self._embedding = embedding if isinstance(embedding, Embeddings) else None
        # next() on a count is atomic, so concurrent async writes never share a number.
        self._generated = itertools.count()

    @property
    def store(self) -> FakeVectorStore:
        """The ``FakeVectorStore`` holding the records: inspect ``queries``, inject failures."""
        return self._store

    @property
    def embeddings(self) -> Embeddings:
        if self._embedding is None:
            self._embedding = PlaceboEmbeddings(self._store.embedder)
        return self._embedding

    def __repr__(self) -> str:
        return f"PlaceboVectorStore({self._store!r})"

    # -- writes ---------------------------------------------------------------------------

    def add_texts(
        self,
        texts: Iterable[str],
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str | None] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        _shared.check_options(kwargs, "PlaceboVectorStore.add_texts", ("metadatas", "ids"))
        text_list = list(texts)
        if ids is not None and len(ids) != len(text_list):
            raise PlaceboragValueError(
                f"ids has {len(ids)} items and texts has {len(text_list)}; "
                "they must have the same length"
            )
        given = ids if ids is not None else [None] * len(text_list)
        id_list = [
            value if value is not None else self._new_id(text)
            for value, text in zip(given, text_list)
        ]
        self._store.upsert_many(id_list, text_list, metadatas)
        return id_list

    def _new_id(self, text: str) -> str:
        while True:
            candidate = str(uuid.uuid5(_ID_NAMESPACE, f"{next(self._generated)}\x00{text}"))
            # Another adapter over the same store may have used this id already.
            if candidate not in self._store:
                return candidate

    def delete(self, ids: list[str] | None = None, **kwargs: Any) -> bool:
        _shared.check_options(kwargs, "PlaceboVectorStore.delete", ("ids",))
        self._store.delete(list(self._store.ids) if ids is None else ids, missing_ok=True)
        return True

    @classmethod
    def from_texts(
        cls,
        texts: list[str],
        embedding: Embeddings,
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> PlaceboVectorStore:
        """A new store over ``embedding`` holding ``texts``; ``kwargs`` are store options."""
        vector_store = cls(embedding, **kwargs)
        vector_store.add_texts(texts, metadatas, ids=ids)
        return vector_store

    # -- reads ----------------------------------------------------------------------------

    def get_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        found = [value for value in dict.fromkeys(ids) if value in self._store]
        return [_document(self._store.get(value)) for value in found]

    def similarity_search_with_score(
        self,
        query: str,
        k: int = 4,
        filter: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> list[tuple[Document, float]]:
        """The top ``k`` documents and their scores in the store profile's convention.

        ``context`` (a dict) is passed to ``FakeVectorStore.query``, which records it.
        """
        context = kwargs.pop("context", None)
        _shared.check_options(
            kwargs, "PlaceboVectorStore.similarity_search", ("k", "filter", "context")
        )
        where = _checked_where(filter, "filter")
        matches = self._store.query(query, k, where, context=context)
        return [(_document(match), match.score) for match in matches]

    def similarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[Document]:
        return [doc for doc, _ in self.similarity_search_with_score(query, k, **kwargs)]

    def similarity_search_by_vector(
        self, embedding: list[float], k: int = 4, **kwargs: Any
    ) -> list[Document]:
        raise NotImplementedError(
            "PlaceboVectorStore searches by query text only: a FakeVectorStore embeds the "
            "query itself, on the query side of its embedder, so that replay, profiles and "
            "injected failures apply; call similarity_search(text) instead"
        )

    def _select_relevance_score_fn(self) -> Callable[[float], float]:
        if self._store.profile.higher_is_better:
            return _identity
        return self._cosine_relevance_score_fn


def _identity(score: float) -> float:
    return score


class PlaceboRetriever(BaseRetriever):
    """A LangChain retriever over a ``FakeVectorStore`` (or a :class:`PlaceboVectorStore`).

    ``k`` (default: the store profile's ``default_k``) and ``where`` (a placeborag filter) are
    set at construction and may be replaced per call: ``invoke(query, k=2, where={...})``.
    ``context`` passed to ``invoke`` is recorded by the store with the query. Failures the
    store was told to inject (``fail_next_query``) propagate unchanged.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    store: FakeVectorStore
    k: int | None = None
    where: dict[str, Any] | None = None

    def __init__(
        self,
        store: FakeVectorStore | PlaceboVectorStore,
        *,
        k: int | None = None,
        where: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if isinstance(store, PlaceboVectorStore):
            store = store.store
        if not isinstance(store, FakeVectorStore):
            raise PlaceboragTypeError(
                f"store={store!r} must be a FakeVectorStore or a PlaceboVectorStore, "
                f"not {type(store).__name__}"
            )
        where = _checked_where(where, "where")
        super().__init__(
            store=store, k=k, where=dict(where) if where is not None else None, **kwargs
        )

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        k: int | None = None,
        where: Mapping[str, Any] | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> list[Document]:
        where = _checked_where(where, "where") if where is not None else self.where
        matches = self.store.query(query, k if k is not None else self.k, where, context=context)
        return [_document(match) for match in matches]


class PlaceboReranker(BaseDocumentCompressor):
    """A LangChain document compressor that reranks with a placeborag scoring double.

    The scorer (a ``ScriptedScorer``, a ``GeometryScorer`` or anything with ``score`` and
    ``ascore``) scores every document's ``page_content`` against the query in one request;
    documents come back best first (higher score is better, ties keep the retrieval order),
    cut to ``top_n`` (None keeps all), each a copy whose metadata holds its score under
    ``score_key``. No documents means no request. A response whose number of scores differs
    from the number of documents, or holding a non-finite score, raises ValueError: a
    reranker that cannot order every document should fail loudly, not drop documents.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    scorer: Any
    top_n: int | None = 3
    score_key: str = "relevance_score"

    def __init__(
        self,
        scorer: Any,
        *,
        top_n: int | None = 3,
        score_key: str = "relevance_score",
        **kwargs: Any,
    ) -> None:
        _shared.check_scorer(scorer)
        if not isinstance(score_key, str) or not score_key:
            raise PlaceboragTypeError(f"score_key={score_key!r} must be a non-empty str")
        super().__init__(
            scorer=scorer, top_n=_shared.check_top_n(top_n), score_key=score_key, **kwargs
        )

    def compress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> Sequence[Document]:
        if not documents:
            return []
        return self._reorder(documents, self.scorer.score(query, _texts(documents)).scores)

    async def acompress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> Sequence[Document]:
        if not documents:
            return []
        response = await self.scorer.ascore(query, _texts(documents))
        return self._reorder(documents, response.scores)

    def _reorder(self, documents: Sequence[Document], scores: Sequence[float]) -> list[Document]:
        return [
            documents[i].model_copy(
                update={"metadata": {**documents[i].metadata, self.score_key: score}}
            )
            for i, score in _shared.rerank_order(scores, len(documents), self.top_n)
        ]


def _texts(documents: Sequence[Document]) -> list[str]:
    return [doc.page_content for doc in documents]
