"""LlamaIndex adapters: placeborag's embedders, store and scoring doubles as LlamaIndex components.

* :class:`PlaceboEmbedding` is a ``BaseEmbedding`` over any placeborag embedder; queries go to
  the embedder's query side and texts to its document side, so a ``ReplayEmbedder`` answers
  each from its own recorded namespace.
* :class:`PlaceboLlamaVectorStore` is a ``BasePydanticVectorStore`` (``stores_text=True``) over
  a ``FakeVectorStore``, usable as the store of a real ``VectorStoreIndex``. It keeps the
  store's quirks (profile, post-filtering, recall, stale reads, injected failures).
* :class:`PlaceboNodePostprocessor` is a ``BaseNodePostprocessor`` that reranks with a
  ``ScriptedScorer`` or a ``GeometryScorer``.
* :func:`metadata_filters_to_where` translates LlamaIndex ``MetadataFilters`` into a placeborag
  ``where`` dict.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from placeborag._errors import FilterError, PlaceboragTypeError, PlaceboragValueError
from placeborag._store import FakeVectorStore, Match
from placeborag.integrations import _shared

try:
    from llama_index.core.base.embeddings.base import BaseEmbedding, Embedding
    from llama_index.core.bridge.pydantic import PrivateAttr
    from llama_index.core.postprocessor.types import BaseNodePostprocessor
    from llama_index.core.schema import BaseNode, MetadataMode, NodeWithScore, QueryBundle
    from llama_index.core.vector_stores.types import (
        BasePydanticVectorStore,
        FilterCondition,
        FilterOperator,
        MetadataFilter,
        MetadataFilters,
        VectorStoreQuery,
        VectorStoreQueryMode,
        VectorStoreQueryResult,
    )
    from llama_index.core.vector_stores.utils import metadata_dict_to_node
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise _shared.framework_missing("llama_index", "llama-index-core", "llamaindex") from exc

from placeborag.integrations._llama_chat import (
    PlaceboFunctionCallingLLM,
    PlaceboLlamaKnowledgeRetriever,
)

__all__ = [
    "PlaceboEmbedding",
    "PlaceboFunctionCallingLLM",
    "PlaceboLlamaKnowledgeRetriever",
    "PlaceboLlamaVectorStore",
    "PlaceboNodePostprocessor",
    "metadata_filters_to_where",
]

# The LlamaIndex model's document and query methods, in that order.
_METHODS = ("get_text_embedding_batch", "get_query_embedding")

_OPERATORS = {
    FilterOperator.EQ: "$eq",
    FilterOperator.NE: "$ne",
    FilterOperator.GT: "$gt",
    FilterOperator.GTE: "$gte",
    FilterOperator.LT: "$lt",
    FilterOperator.LTE: "$lte",
    FilterOperator.IN: "$in",
    FilterOperator.NIN: "$nin",
}
_CONDITIONS = {FilterCondition.AND: "$and", FilterCondition.OR: "$or"}
# Keys the adapter adds to each record's metadata, beside the node's own.
_NODE_CONTENT = "_node_content"
_NODE_TYPE = "_node_type"
_REF_DOC_ID = "ref_doc_id"


class PlaceboEmbedding(BaseEmbedding):
    """A LlamaIndex embedding model over a placeborag embedder (a ``FakeEmbedder()`` by default).

    ``kwargs`` are ``BaseEmbedding`` fields (``embed_batch_size``, ``callback_manager``, ...);
    ``model_name`` defaults to the embedder's.
    """

    _embedder: Any = PrivateAttr()

    def __init__(self, embedder: Any = None, **kwargs: Any) -> None:
        embedder = _shared.resolve_embedder(embedder)
        kwargs.setdefault("model_name", getattr(embedder, "model_name", "placeborag"))
        super().__init__(**kwargs)
        self._embedder = embedder

    @classmethod
    def class_name(cls) -> str:
        return "PlaceboEmbedding"

    @property
    def embedder(self) -> Any:
        """The placeborag embedder answering the calls."""
        return self._embedder

    def _get_query_embedding(self, query: str) -> Embedding:
        return _shared.query_vectors(self._embedder, [query])[0].tolist()

    async def _aget_query_embedding(self, query: str) -> Embedding:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> Embedding:
        return _shared.document_vectors(self._embedder, [text])[0].tolist()

    def _get_text_embeddings(self, texts: list[str]) -> list[Embedding]:
        return _shared.document_vectors(self._embedder, texts).tolist()

    async def _aget_text_embeddings(self, texts: list[str]) -> list[Embedding]:
        return self._get_text_embeddings(texts)


def metadata_filters_to_where(filters: MetadataFilters | None) -> dict[str, Any] | None:
    """The placeborag ``where`` dict equivalent to LlamaIndex ``filters`` (None for no filter).

    ``==``, ``!=``, ``>``, ``>=``, ``<``, ``<=``, ``in`` and ``nin`` become ``$eq`` ... ``$nin``;
    the ``and``/``or`` conditions become ``$and``/``$or``, nested filters included. Any other
    operator or condition raises :class:`~placeborag.FilterError`. The result keeps
    placeborag's rules: in particular a key a record does not carry never matches, so
    ``!=`` and ``nin`` skip records without the key (LlamaIndex's in-memory store keeps them).
    """
    if filters is None:
        return None
    if not isinstance(filters, MetadataFilters):
        raise PlaceboragTypeError(
            f"filters={filters!r} must be a MetadataFilters or None, not {type(filters).__name__}"
        )
    if not filters.filters:
        return None
    return _translate(filters)


def _translate(filters: MetadataFilters) -> dict[str, Any]:
    condition = filters.condition or FilterCondition.AND
    if condition not in _CONDITIONS:
        raise FilterError(
            f"condition {condition.value!r} has no placeborag equivalent; "
            "expected one of 'and', 'or'"
        )
    if not filters.filters:
        raise FilterError("a nested MetadataFilters has no filters; give at least one")
    clauses = [
        _translate(item) if isinstance(item, MetadataFilters) else _clause(item)
        for item in filters.filters
    ]
    if len(clauses) == 1:
        return clauses[0]
    return {_CONDITIONS[condition]: clauses}


def _clause(item: MetadataFilter) -> dict[str, Any]:
    operator = _OPERATORS.get(item.operator)
    if operator is None:
        supported = ", ".join(repr(op.value) for op in _OPERATORS)
        raise FilterError(
            f"operator {item.operator.value!r} on key {item.key!r} has no placeborag "
            f"equivalent; expected one of {supported}"
        )
    return {item.key: {operator: item.value}}


def _record_metadata(node: BaseNode) -> dict[str, Any]:
    """The node's own metadata plus the serialised node, so a query can rebuild it exactly."""
    content = node.model_dump(mode="json")
    content["embedding"] = None
    metadata = dict(node.metadata)
    metadata[_NODE_CONTENT] = json.dumps(content, ensure_ascii=False)
    metadata[_NODE_TYPE] = node.class_name()
    if node.ref_doc_id is not None:
        metadata[_REF_DOC_ID] = node.ref_doc_id
    return metadata


def _node(match: Match) -> BaseNode:
    return metadata_dict_to_node(match.metadata)


class PlaceboLlamaVectorStore(BasePydanticVectorStore):
    """A LlamaIndex vector store over a :class:`~placeborag.FakeVectorStore`.

    Give either ``store=`` (a configured ``FakeVectorStore``) or ``FakeVectorStore`` options;
    by default the store uses the ``"qdrant"`` profile, whose scores are cosine similarities
    (higher is better), the convention LlamaIndex expects of ``similarities``. A
    ``"chroma"``-profile store reports distances there instead: use it to test a pipeline
    against a backend whose adapter forgot to convert them. ``embedder=`` may also be a
    LlamaIndex embedding model.

    The store embeds for itself: each node is written as its
    ``get_content(MetadataMode.EMBED)`` (the text LlamaIndex embeds) and queried by
    ``query_str`` on the query side of the embedder, so ``is_embedding_query`` is False and
    the embeddings LlamaIndex computed are not used. Give the index an ``embed_model`` in the
    same space (``PlaceboEmbedding(store.embedder)``) so both agree. Node metadata values must
    be str, int, float or bool, the kinds the filter language compares; None or a list is
    refused with an error naming the node and key.
    """

    stores_text: bool = True
    is_embedding_query: bool = False

    _store: FakeVectorStore = PrivateAttr()

    def __init__(self, store: FakeVectorStore | None = None, **store_options: Any) -> None:
        if store is not None:
            if store_options:
                raise PlaceboragTypeError(
                    f"store= cannot be combined with {', '.join(sorted(store_options))}; "
                    "configure the FakeVectorStore itself instead"
                )
            if not isinstance(store, FakeVectorStore):
                raise PlaceboragTypeError(
                    f"store={store!r} must be a FakeVectorStore, not {type(store).__name__}"
                )
        else:
            options = {"profile": "qdrant", **store_options}
            embedder = options.get("embedder")
            options["embedder"] = _shared.store_embedder(
                embedder, PlaceboEmbedding, BaseEmbedding, _METHODS
            )
            store = FakeVectorStore(**options)
        super().__init__(stores_text=True, is_embedding_query=False)
        self._store = store

    @classmethod
    def class_name(cls) -> str:
        return "PlaceboLlamaVectorStore"

    @property
    def client(self) -> FakeVectorStore:
        """The ``FakeVectorStore`` holding the records: inspect ``queries``, inject failures."""
        return self._store

    @property
    def store(self) -> FakeVectorStore:
        return self._store

    def add(self, nodes: Sequence[BaseNode], **add_kwargs: Any) -> list[str]:
        _shared.check_options(add_kwargs, "PlaceboLlamaVectorStore.add", ("nodes",))
        ids = [node.node_id for node in nodes]
        self._store.upsert_many(
            ids,
            [node.get_content(metadata_mode=MetadataMode.EMBED) for node in nodes],
            [_record_metadata(node) for node in nodes],
        )
        return ids

    def delete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        """Delete every node of the source document ``ref_doc_id`` (none is not an error)."""
        _shared.check_options(delete_kwargs, "PlaceboLlamaVectorStore.delete", ("ref_doc_id",))
        store = self._store
        ids = [i for i in store.ids if store.get(i).metadata.get(_REF_DOC_ID) == ref_doc_id]
        store.delete(ids, missing_ok=True)

    def delete_nodes(
        self,
        node_ids: list[str] | None = None,
        filters: MetadataFilters | None = None,
        **delete_kwargs: Any,
    ) -> None:
        """Delete nodes by id (unknown ids are ignored); ``node_ids=None`` deletes all."""
        _shared.check_options(delete_kwargs, "PlaceboLlamaVectorStore.delete_nodes", ("node_ids",))
        self._refuse_filters(filters, "delete_nodes")
        self._store.delete(list(self._store.ids) if node_ids is None else node_ids, missing_ok=True)

    def clear(self) -> None:
        self._store.delete(list(self._store.ids), missing_ok=True)

    def get_nodes(
        self, node_ids: list[str] | None = None, filters: MetadataFilters | None = None
    ) -> list[BaseNode]:
        """The visible nodes with these ids (all for None), in the order asked; unknown skipped."""
        self._refuse_filters(filters, "get_nodes")
        wanted = self._store.ids if node_ids is None else dict.fromkeys(node_ids)
        return [_node(self._store.get(i)) for i in wanted if i in self._store]

    @staticmethod
    def _refuse_filters(filters: MetadataFilters | None, method: str) -> None:
        if filters is not None:
            raise NotImplementedError(
                f"PlaceboLlamaVectorStore.{method} selects by node_ids only; a FakeVectorStore "
                "applies filters to queries, not to reads by id"
            )

    def query(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        """The top ``similarity_top_k`` nodes for ``query.query_str``, filtered and scored.

        ``filters`` are translated by :func:`metadata_filters_to_where`; ``doc_ids`` restrict
        to those source documents. ``context`` (a dict) is recorded by the store with the query.
        """
        context = kwargs.pop("context", None)
        _shared.check_options(kwargs, "PlaceboLlamaVectorStore.query", ("query", "context"))
        if query.mode != VectorStoreQueryMode.DEFAULT:
            raise NotImplementedError(
                f"PlaceboLlamaVectorStore supports the default query mode only, not "
                f"{query.mode.value!r}"
            )
        if query.node_ids:
            raise NotImplementedError(
                "PlaceboLlamaVectorStore cannot restrict a query to node_ids; filter on "
                "metadata or doc_ids instead"
            )
        if query.query_str is None:
            raise PlaceboragValueError(
                "VectorStoreQuery.query_str is None; a FakeVectorStore embeds the query text "
                "itself, so a query_embedding alone cannot be searched"
            )
        where = metadata_filters_to_where(query.filters)
        if query.doc_ids:
            by_doc: dict[str, Any] = {_REF_DOC_ID: {"$in": list(query.doc_ids)}}
            where = by_doc if where is None else {"$and": [where, by_doc]}
        matches = self._store.query(
            query.query_str, query.similarity_top_k, where, context=_context(context)
        )
        return VectorStoreQueryResult(
            nodes=[_node(match) for match in matches],
            similarities=[match.score for match in matches],
            ids=[match.id for match in matches],
        )


def _context(context: object) -> Mapping[str, Any] | None:
    if context is None or isinstance(context, Mapping):
        return context
    raise PlaceboragTypeError(
        f"context={context!r} must be a dict or None, not {type(context).__name__}"
    )


class PlaceboNodePostprocessor(BaseNodePostprocessor):
    """A LlamaIndex node postprocessor that reranks with a placeborag scoring double.

    The scorer (a ``ScriptedScorer``, a ``GeometryScorer`` or anything with ``score`` and
    ``ascore``) scores every node's ``get_content(MetadataMode.EMBED)`` against the query in
    one request. Nodes come back best first (higher is better, ties keep the retrieval order),
    cut to ``top_n`` (None keeps all), each with the scorer's score as its ``score``. No nodes
    means no request; a response with a missing, extra or non-finite score raises ValueError.
    """

    scorer: Any
    top_n: int | None = 2

    def __init__(self, scorer: Any, *, top_n: int | None = 2, **kwargs: Any) -> None:
        _shared.check_scorer(scorer)
        super().__init__(scorer=scorer, top_n=_shared.check_top_n(top_n), **kwargs)

    @classmethod
    def class_name(cls) -> str:
        return "PlaceboNodePostprocessor"

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        query, texts = _rerank_request(nodes, query_bundle)
        if not nodes:
            return []
        return self._reorder(nodes, self.scorer.score(query, texts).scores)

    async def _apostprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        query, texts = _rerank_request(nodes, query_bundle)
        if not nodes:
            return []
        return self._reorder(nodes, (await self.scorer.ascore(query, texts)).scores)

    def _reorder(self, nodes: list[NodeWithScore], scores: Sequence[float]) -> list[NodeWithScore]:
        return [
            NodeWithScore(node=nodes[i].node, score=score)
            for i, score in _shared.rerank_order(scores, len(nodes), self.top_n)
        ]


def _rerank_request(
    nodes: list[NodeWithScore], query_bundle: QueryBundle | None
) -> tuple[str, list[str]]:
    if query_bundle is None:
        raise PlaceboragValueError(
            "PlaceboNodePostprocessor needs the query: pass query_bundle or query_str"
        )
    texts = [item.node.get_content(metadata_mode=MetadataMode.EMBED) for item in nodes]
    return query_bundle.query_str, texts
