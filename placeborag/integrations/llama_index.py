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
  ``where`` dict where one exists; :func:`metadata_filter_function` evaluates any of them.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, cast

import numpy as np

from placeborag import (
    ExactEmbedder,
    FakeVectorStore,
    FilterError,
    Match,
    PlaceboragError,
    PlaceboragTypeError,
    PlaceboragValueError,
    _documents,
)
from placeborag.integrations import _shared
from placeborag.integrations._models import (
    LLAMA_INDEX,
    Integration,
    integration_for,
    store_options_for,
)
from placeborag.toolkit import FilterRules, compile_filter, filter_rules

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
from placeborag.toolkit import check_vector, shown

__all__ = [
    "PlaceboEmbedding",
    "PlaceboFunctionCallingLLM",
    "PlaceboLlamaKnowledgeRetriever",
    "PlaceboLlamaVectorStore",
    "PlaceboNodePostprocessor",
    "metadata_filter_function",
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
# Keys the adapter adds to each record's metadata, beside the node's own (see _documents).
_NODE_CONTENT = _documents.NODE_CONTENT
_NODE_TYPE = _documents.NODE_TYPE
_REF_DOC_ID = _documents.REF_DOC_ID
_RESERVED = _documents.RESERVED


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

    def __getstate__(self) -> dict[str, Any]:
        return _shared.strict_state(self)  # the embedder, or a named error, never dropped

    def __setstate__(self, state: dict[str, Any]) -> None:
        _shared.strict_setstate(self, state)

    @property
    def embedder(self) -> Any:
        """The placeborag embedder answering the calls."""
        return self._embedder

    def _get_query_embedding(self, query: str) -> Embedding:
        return cast("Embedding", _shared.query_vectors(self._embedder, [query])[0].tolist())

    async def _aget_query_embedding(self, query: str) -> Embedding:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> Embedding:
        return cast("Embedding", _shared.document_vectors(self._embedder, [text])[0].tolist())

    def _get_text_embeddings(self, texts: list[str]) -> list[Embedding]:
        return cast("list[Embedding]", _shared.document_vectors(self._embedder, texts).tolist())

    async def _aget_text_embeddings(self, texts: list[str]) -> list[Embedding]:
        return self._get_text_embeddings(texts)


def metadata_filters_to_where(filters: MetadataFilters | None) -> dict[str, Any] | None:
    """The placeborag ``where`` dict equivalent to LlamaIndex ``filters`` (None for no filter).

    ``==``, ``!=``, ``>``, ``>=``, ``<``, ``<=``, ``in`` and ``nin`` become ``$eq`` ... ``$nin``;
    the ``and``/``or`` conditions become ``$and``/``$or``, nested filters included. The other
    operators (``contains``, ``any``, ``all``, ``text_match``, ``text_match_insensitive``,
    ``is_empty``) and the ``not`` condition have no ``where`` form: this raises
    :class:`~placeborag.FilterError` for them, and ``PlaceboLlamaVectorStore`` evaluates such
    filters itself (see :func:`metadata_filter_function`). The result keeps placeborag's rules:
    in particular a key a record does not carry never matches, so ``!=`` and ``nin`` skip
    records without the key (LlamaIndex's in-memory store keeps them).
    """
    filters = _checked_filters(filters)
    if filters is None:
        return None
    return _translate(filters)


def _checked_filters(filters: object) -> MetadataFilters | None:
    if filters is None:
        return None
    if not isinstance(filters, MetadataFilters):
        raise PlaceboragTypeError(
            f"filters={shown(filters)} must be a MetadataFilters or None, not "
            f"{type(filters).__name__}"
        )
    if not filters.filters:
        return None
    return filters


def _translate(filters: MetadataFilters) -> dict[str, Any]:
    condition = filters.condition or FilterCondition.AND
    if condition not in _CONDITIONS:
        raise FilterError(
            f"condition {shown(condition.value)} has no placeborag where equivalent; "
            "expected one of 'and', 'or' (PlaceboLlamaVectorStore evaluates 'not' itself)"
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
            f"operator {shown(item.operator.value)} on key {shown(item.key)} has no placeborag "
            "where "
            f"equivalent; expected one of {supported} (PlaceboLlamaVectorStore evaluates the "
            "others itself)"
        )
    return {item.key: {operator: item.value}}


def _translatable(filters: MetadataFilters) -> bool:
    if (filters.condition or FilterCondition.AND) not in _CONDITIONS or not filters.filters:
        return False
    return all(
        _translatable(item) if isinstance(item, MetadataFilters) else item.operator in _OPERATORS
        for item in filters.filters
    )


def _kind(value: object) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    return type(value).__name__


def _contains(container: object, value: object) -> bool:
    if isinstance(container, str):
        return isinstance(value, str) and value in container
    if isinstance(container, (list, tuple)):
        return any(_kind(item) == _kind(value) and item == value for item in container)
    return False


def _text(operator: FilterOperator, value: object, stored: object) -> bool:
    if not isinstance(value, str):
        raise FilterError(f"operator {shown(operator.value)} needs a str value, not {shown(value)}")
    if not isinstance(stored, str):
        return False
    if operator == FilterOperator.TEXT_MATCH_INSENSITIVE:
        return value.lower() in stored.lower()
    return value in stored


def _members(operator: FilterOperator, value: object) -> list[Any]:
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
        raise FilterError(
            f"operator {shown(operator.value)} needs a list value, not {shown(value)}"
        )
    return list(value)


_EMPTY: tuple[object, ...] = (None, "", [])


def metadata_filter_function(
    filters: MetadataFilters | None,
    *,
    negations_match_missing: bool = False,
    semantics: str | None = None,
    rules: FilterRules | None = None,
) -> Callable[[Mapping[str, Any]], bool]:
    """A predicate over a record's metadata equivalent to LlamaIndex ``filters``.

    Every operator and condition of ``MetadataFilters`` is supported, nested filters
    included: ``not`` matches when none of its filters match. The operators with a ``where``
    form follow the placeborag filter rules (the same predicate the store applies);
    ``contains`` tests list membership (or a substring of a str), ``any``/``all`` whether
    any/all of the given values are in the stored list, ``text_match`` a substring
    (``text_match_insensitive`` ignoring case), and ``is_empty`` matches a missing key, None,
    ``""`` and ``[]``. A key the record does not carry matches nothing else (unless
    ``negations_match_missing`` lets ``!=``/``nin`` match it, as engine semantics do).
    ``semantics`` is the store's ``filter_semantics`` (``compile_filter``'s rule when None).
    ``rules`` (a ``FilterRules``, such as ``filter_rules(store.profile, store.filter_semantics)``)
    gives every rule at once, an empty ``in``/``nin`` list included, in place of those two. The
    whole filter is checked before any record is read.
    """
    if rules is None:
        rules = FilterRules.of(negations_match_missing, semantics)
    checked = _checked_filters(filters)
    if checked is None:
        return lambda metadata: True
    return _compile_filters(checked, rules)


def _compile_filters(
    filters: MetadataFilters, rules: FilterRules
) -> Callable[[Mapping[str, Any]], bool]:
    if not filters.filters:
        raise FilterError("a nested MetadataFilters has no filters; give at least one")
    tests = [
        _compile_filters(item, rules)
        if isinstance(item, MetadataFilters)
        else _compile_leaf(item, rules)
        for item in filters.filters
    ]
    condition = filters.condition or FilterCondition.AND
    if condition == FilterCondition.AND:
        return lambda metadata: all(test(metadata) for test in tests)
    if condition == FilterCondition.OR:
        return lambda metadata: any(test(metadata) for test in tests)
    if condition == FilterCondition.NOT:
        return lambda metadata: not any(test(metadata) for test in tests)
    raise FilterError(f"condition {shown(condition)} is not a FilterCondition")


def _compile_leaf(item: MetadataFilter, rules: FilterRules) -> Callable[[Mapping[str, Any]], bool]:
    key, operator, value = item.key, item.operator, item.value
    if operator in _OPERATORS:
        predicate = compile_filter(_clause(item), rules)
        assert predicate is not None, "a one-clause filter compiles to a node"
        return predicate.matches
    if operator == FilterOperator.IS_EMPTY:
        return lambda metadata: (
            key not in metadata
            or any(
                metadata[key] is empty
                or (_kind(metadata[key]) == _kind(empty) and metadata[key] == empty)
                for empty in _EMPTY
            )
        )
    if operator == FilterOperator.CONTAINS:
        return lambda metadata: key in metadata and _contains(metadata[key], value)
    if operator in (FilterOperator.ANY, FilterOperator.ALL):
        members = _members(operator, value)
        combine = any if operator == FilterOperator.ANY else all
        return lambda metadata: (
            key in metadata and combine(_contains(metadata[key], member) for member in members)
        )
    if operator in (FilterOperator.TEXT_MATCH, FilterOperator.TEXT_MATCH_INSENSITIVE):
        _text(operator, value, "")  # checks the value before any record is read
        return lambda metadata: key in metadata and _text(operator, value, metadata[key])
    raise FilterError(f"operator {shown(operator)} on key {shown(key)} is not a FilterOperator")


def _record_metadata(node: BaseNode) -> dict[str, Any]:
    """The node's own metadata plus the serialised node, so a query can rebuild it exactly."""
    metadata = dict(node.metadata)
    for key in _RESERVED:
        if key in metadata:
            raise PlaceboragValueError(
                f"node {shown(node.node_id)} has metadata key {shown(key)}, which "
                "PlaceboLlamaVectorStore keeps for itself; rename that key"
            )
    content = node.model_dump(mode="json")
    content["embedding"] = None
    metadata[_NODE_CONTENT] = json.dumps(content, ensure_ascii=False)
    metadata[_NODE_TYPE] = node.class_name()
    if node.ref_doc_id is not None:
        metadata[_REF_DOC_ID] = node.ref_doc_id
    return metadata


def _checked_nodes(nodes: object) -> list[BaseNode]:
    """``nodes`` as a list of nodes; a single node, or anything but nodes, is refused."""
    if isinstance(nodes, BaseNode):
        raise PlaceboragTypeError(
            f"nodes={shown(nodes)} is a single {type(nodes).__name__}; pass a list of nodes, "
            "such as [node]"
        )
    if isinstance(nodes, (str, bytes)) or not isinstance(nodes, Iterable):
        raise PlaceboragTypeError(
            f"nodes={shown(nodes)} must be a list of nodes, not {type(nodes).__name__}"
        )
    checked = list(nodes)
    for i, node in enumerate(checked):
        if not isinstance(node, BaseNode):
            raise PlaceboragTypeError(
                f"nodes[{i}]={shown(node)} must be a node (a TextNode or another BaseNode), "
                f"not {type(node).__name__}"
            )
    return checked


def _node(match: Match) -> BaseNode:
    return _node_of(match.metadata)


def _node_of(metadata: Mapping[str, Any]) -> BaseNode:
    return metadata_dict_to_node(dict(metadata))


def _user_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in metadata.items() if key not in _RESERVED}


class PlaceboLlamaVectorStore(BasePydanticVectorStore):
    """A LlamaIndex vector store over a :class:`~placeborag.FakeVectorStore`.

    Give either ``store=`` (a configured ``FakeVectorStore``) or ``FakeVectorStore`` options;
    by default the store uses the ``"qdrant"`` profile, whose scores are cosine similarities
    (higher is better), the convention LlamaIndex expects of ``similarities``. A
    ``"chroma"``-profile store reports distances there instead: use it to test a pipeline
    against a backend whose adapter forgot to convert them. ``embedder=`` may also be a
    LlamaIndex embedding model.

    As in ``SimpleVectorStore``, a node that arrives with its own ``embedding`` is stored with
    that vector, as given; the store embeds only a node without one (its
    ``get_content(MetadataMode.EMBED)``, the text LlamaIndex embeds) with its embedder. An
    embedding of other dimensions than the store's vectors is refused, naming both. To rank in
    the fake's geometry, give the index ``PlaceboEmbedding(store.embedder)``: the vectors it
    computes are the store's own. A store the adapter builds over a placeborag embedder holds
    it behind :class:`~placeborag.integrations._shared.GivenVectors`, so it can take given
    vectors; ``PlaceboEmbedding(store.embedder)`` unwraps it.

    Queries go as in ``SimpleVectorStore`` (``is_embedding_query=True``): the index embeds
    the query (``query_str``, or a ``QueryBundle``'s ``custom_embedding_strs``) with its
    ``embed_model``, and a query that carries a ``query_embedding`` is ranked by that vector,
    ``query_str`` naming it in ``store.queries`` (and deciding what ``recall`` keeps). When the
    ``query_embedding`` is exactly the store's own vector for ``query_str`` (an
    ``embed_model`` in the store's space), the ranking is exactly ``store.query(query_str)``'s.
    A query with ``query_str`` alone is embedded by the store, on its embedder's query side.

    Like every vector store that keeps text (``stores_text=True``), the index leaves its
    docstore empty unless ``VectorStoreIndex(..., store_nodes_override=True)``: pass it when
    a test reads ``index.docstore`` or ``index.ref_doc_info``.

    ``filters`` take every ``MetadataFilters`` operator and condition; ``node_ids`` and
    ``doc_ids`` restrict the candidates; ``VectorStoreQueryMode.MMR`` picks by maximal
    marginal relevance over the stored vectors (``mmr_threshold`` is the relevance weight,
    0.5 by default, among ``mmr_prefetch_k`` candidates, every record by default).

    Built without an embedder, the store takes its dimension from the first embeddings written,
    as ``SimpleVectorStore`` does; zero embeddings are placed as the profile's engine places
    them. ``integration="chroma"`` or ``"qdrant"`` models LlamaIndex's own integration for that
    engine on top of its profile (Chroma's drops ``doc_ids`` and ``node_ids`` and reports
    ``exp(-distance)``; see ``docs/integrations.md``, "Integration models").
    """

    stores_text: bool = True
    is_embedding_query: bool = True

    _store: FakeVectorStore = PrivateAttr()
    _integration: Integration | None = PrivateAttr(default=None)

    def __init__(
        self,
        store: FakeVectorStore | None = None,
        *,
        integration: str | None = None,
        **store_options: Any,
    ) -> None:
        model = integration_for(LLAMA_INDEX, integration, "LlamaIndex")
        if model is not None:
            store_options = store_options_for(model, store, store_options)
        if store is not None:
            if store_options:
                raise PlaceboragTypeError(
                    f"store= cannot be combined with {', '.join(sorted(store_options))}; "
                    "configure the FakeVectorStore itself instead"
                )
            if not isinstance(store, FakeVectorStore):
                raise PlaceboragTypeError(
                    f"store={shown(store)} must be a FakeVectorStore, not {type(store).__name__}"
                )
        else:
            options = {"profile": "qdrant", **store_options}
            embedder = options.get("embedder")
            if embedder is None:
                # As SimpleVectorStore: the dimension comes from the first vectors written.
                resolved: Any = _shared.GivenVectors(None)
            else:
                resolved = _shared.store_embedder(
                    embedder, PlaceboEmbedding, BaseEmbedding, _METHODS
                )
            if not isinstance(resolved, (_shared.VectorFunctions, _shared.GivenVectors)):
                # The same vectors, behind a wrapper the store takes given vectors through.
                resolved = _shared.GivenVectors(resolved)
            options["embedder"] = resolved
            store = FakeVectorStore(**options)
        super().__init__(stores_text=True, is_embedding_query=True)
        self._store = store
        self._integration = model

    @property
    def integration(self) -> Integration | None:
        """The framework integration modelled (``integration=``), or None for the adapter's own
        behaviour (every query argument honoured, the profile's score)."""
        return self._integration

    def __getstate__(self) -> dict[str, Any]:
        return _shared.strict_state(self)  # the store and its embedder, or a named error

    def __setstate__(self, state: dict[str, Any]) -> None:
        _shared.strict_setstate(self, state)

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
        """Write the nodes in order; each node's own ``embedding`` is stored as given.

        A node without one is embedded by the store. A repeated node id is written again, as
        by a second call: the store's ``on_existing_id`` decides (``"replace"`` keeps the last
        node, as ``SimpleVectorStore`` does). An embedding whose dimensions differ from the
        store's is refused, naming both, before anything is written.
        """
        _shared.check_options(add_kwargs, "PlaceboLlamaVectorStore.add", ("nodes",))
        nodes = _checked_nodes(nodes)
        ids = [node.node_id for node in nodes]
        if self._integration is not None:
            self._integration.check_ids(ids)
        metadatas = [_record_metadata(node) for node in nodes]
        texts = [node.get_content(metadata_mode=MetadataMode.EMBED) for node in nodes]
        vectors = self._given_vectors(nodes, texts)
        _shared.write_in_order(self._store, ids, texts, metadatas, vectors)
        return ids

    def _given_vectors(
        self, nodes: Sequence[BaseNode], texts: Sequence[str]
    ) -> list[np.ndarray | None] | None:
        """Each node's own embedding (None where it has none), checked; None if none has one."""
        if all(node.embedding is None for node in nodes):
            return None
        dimensions = _shared.store_dimensions(self._store)
        vectors: list[np.ndarray | None] = []
        for node in nodes:
            if node.embedding is None:
                vectors.append(None)
                continue
            vector = np.asarray(
                check_vector(node.embedding, f"node {node.node_id!r} embedding"), dtype=np.float64
            )
            if dimensions is None:
                dimensions = vector.shape[0]
            if vector.shape[0] != dimensions:
                raise PlaceboragValueError(
                    f"node {shown(node.node_id)} has a {vector.shape[0]}-dimensional embedding "
                    f"and the store holds {dimensions}-dimensional vectors: the index's "
                    "embed_model is in another space than the store's embedder; give the index "
                    "PlaceboEmbedding(store.embedder), or build the store over an embedder of "
                    f"{vector.shape[0]} dimensions"
                )
            vectors.append(vector)
        if not isinstance(self._store.embedder, ExactEmbedder):  # the store's own test
            return vectors
        # A store over a bare FakeEmbedder (given as store=) ranks from the texts and takes no
        # vector from outside: a node whose embedding is the store's own vector for its text
        # (an embed_model in the store's space) is written as text; any other is refused.
        own = self._store.embedder.embed_batch(list(texts))
        for node, given, mine in zip(nodes, vectors, own):
            if given is not None and not _close(given, np.asarray(mine)):
                raise PlaceboragTypeError(
                    f"node {shown(node.node_id)} arrived with an embedding that is not the "
                    "store's vector for its text, and a FakeVectorStore over a bare "
                    "FakeEmbedder ranks from the texts, so it cannot keep it; build "
                    "PlaceboLlamaVectorStore(embedder=...) instead of passing store=, or give "
                    "the index PlaceboEmbedding(store.embedder)"
                )
        return None

    def delete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        """Delete every node of the source document ``ref_doc_id`` (none is not an error)."""
        _shared.check_options(delete_kwargs, "PlaceboLlamaVectorStore.delete", ("ref_doc_id",))
        records = self._store.records()
        ids = [i for i, m in zip(records.ids, records.metadata) if m.get(_REF_DOC_ID) == ref_doc_id]
        self._store.delete(ids, missing_ok=True)

    def _select(
        self, node_ids: Sequence[str] | None, filters: MetadataFilters | None
    ) -> list[tuple[str, Mapping[str, Any]]]:
        """(id, metadata) of the visible records with these ids that pass ``filters``."""
        test = metadata_filter_function(
            filters, rules=filter_rules(self._store.profile, self._store.filter_semantics)
        )
        records = self._store.records()
        wanted = None if node_ids is None else set(_shared.check_texts(node_ids, "node_ids"))
        return [
            (i, m)
            for i, m in zip(records.ids, records.metadata)
            if (wanted is None or i in wanted) and test(_user_metadata(m))
        ]

    def delete_nodes(
        self,
        node_ids: list[str] | None = None,
        filters: MetadataFilters | None = None,
        **delete_kwargs: Any,
    ) -> None:
        """Delete the nodes with these ids that pass ``filters`` (None: no condition).

        Unknown ids are ignored; with neither ``node_ids`` nor ``filters`` every node goes.
        """
        _shared.check_options(
            delete_kwargs, "PlaceboLlamaVectorStore.delete_nodes", ("node_ids", "filters")
        )
        self._store.delete([i for i, _ in self._select(node_ids, filters)], missing_ok=True)

    def clear(self) -> None:
        self._store.delete(list(self._store.ids), missing_ok=True)

    def get_nodes(
        self, node_ids: list[str] | None = None, filters: MetadataFilters | None = None
    ) -> list[BaseNode]:
        """The visible nodes with these ids that pass ``filters``; unknown ids are skipped.

        Nodes come in the order of ``node_ids`` when given, else in insertion order.
        """
        selected = dict(self._select(node_ids, filters))
        order = selected if node_ids is None else dict.fromkeys(node_ids)
        return [_node_of(selected[i]) for i in order if i in selected]

    def query(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        """The top ``similarity_top_k`` nodes for ``query``, filtered and scored.

        ``filters`` are translated by :func:`metadata_filters_to_where` when they can be (so
        the store's filter mode applies and ``store.last_query.where`` shows them), and
        evaluated by :func:`metadata_filter_function` otherwise; ``node_ids`` and ``doc_ids``
        restrict the candidates. ``context`` (a dict) is recorded by the store with the query.
        """
        context = _context(kwargs.pop("context", None))
        mmr_threshold = kwargs.pop("mmr_threshold", None)
        prefetch = kwargs.pop("mmr_prefetch_k", None)
        _shared.check_options(
            kwargs,
            "PlaceboLlamaVectorStore.query",
            ("query", "context", "mmr_threshold", "mmr_prefetch_k"),
        )
        mode = _query_mode(query.mode)
        if mode not in (VectorStoreQueryMode.DEFAULT, VectorStoreQueryMode.MMR):
            raise NotImplementedError(
                f"PlaceboLlamaVectorStore supports the 'default' and 'mmr' query modes, not "
                f"{shown(mode.value)}; query with VectorStoreQueryMode.DEFAULT"
            )
        if query.query_str is not None and not isinstance(query.query_str, str):
            raise PlaceboragTypeError(
                f"query_str={shown(query.query_str)} must be a str or None, not "
                f"{type(query.query_str).__name__}"
            )
        if query.query_str is None and query.query_embedding is None:
            raise PlaceboragValueError(
                "VectorStoreQuery has neither query_str nor query_embedding; give one"
            )
        k = _shared.check_k(query.similarity_top_k, "similarity_top_k")
        model = self._integration
        if model is not None:
            model.check_k(k)
            # What the integration does not pass on to the engine, the engine never sees.
            query = dataclasses.replace(
                query,
                doc_ids=query.doc_ids if model.doc_ids else None,
                node_ids=query.node_ids if model.node_ids else None,
            )
        where, ids = self._where_and_ids(query)
        if k == 0:
            return VectorStoreQueryResult(nodes=[], similarities=[], ids=[])
        if mode == VectorStoreQueryMode.MMR:
            # A zero-vector node has no direction to diversify by: MMR never picks one.
            zero = set(_zero_vector_ids(self._store))
            if zero:
                ids = [i for i in (self._store.ids if ids is None else ids) if i not in zero]
            matches = self._mmr(query, k, where, ids, context, mmr_threshold, prefetch)
        else:
            admits = _admits(where, self._store)
            matches = _shared.query_around_zero_vectors(
                self._store,
                k,
                ids,
                lambda only: self._ranked(query, k, where, only, context),
                admits,
            )
        matches = [match for match in matches if match.id in self._store]  # no FAISS padding
        convert = model.similarity if model is not None else float
        return VectorStoreQueryResult(
            nodes=[_node(match) for match in matches],
            similarities=[convert(match.score) for match in matches],
            ids=[match.id for match in matches],
        )

    def _ranked(
        self,
        query: VectorStoreQuery,
        k: int,
        where: dict[str, Any] | None,
        ids: list[str] | None,
        context: Mapping[str, Any] | None,
    ) -> list[Match]:
        """Rank by ``query_embedding`` when there is one (as ``SimpleVectorStore`` does), else
        by the store's embedding of ``query_str``; ``query_str`` names the query in the log.

        A ``query_embedding`` that is exactly the store's own vector for ``query_str`` (the
        index's ``embed_model`` in the store's space) is answered as a text query, so the
        ranking is the one of ``store.query(query_str)``, exact ties included.
        """
        store, text, vector = self._store, query.query_str, query.query_embedding
        if vector is None:
            return _shared.run_query(store, text, None, k, where, ids, context)
        given = self._checked_query_embedding(vector)
        if text is None:
            return _shared.run_query(store, None, given, k, where, ids, context)
        embedder = store.embedder
        if isinstance(embedder, _shared.VectorFunctions):
            # The store asks its model for the query's vector: answer with the one given.
            with embedder.supplying({}, queries={text: given.tolist()}):
                return _shared.run_query(store, text, None, k, where, ids, context)
        if self._own_query_vector(text, given):
            return _shared.run_query(store, text, None, k, where, ids, context)
        options: dict[str, Any] = {"context": context}
        if ids is not None:
            options["ids"] = ids
        return store.query_by_vector(given, k, where, text=text, **options)

    def _checked_query_embedding(self, vector: object) -> np.ndarray:
        given = np.asarray(check_vector(vector, "query_embedding"), dtype=np.float64)
        dimensions = _shared.store_dimensions(self._store)
        if dimensions is not None and given.shape[0] != dimensions:
            raise PlaceboragValueError(
                f"query_embedding has {given.shape[0]} dimensions and the store's vectors have "
                f"{dimensions}: the index's embed_model is in another space than the store's "
                "embedder; give the index PlaceboEmbedding(store.embedder)"
            )
        return given

    def _own_query_vector(self, text: str, given: np.ndarray) -> bool:
        """True when ``given`` is exactly the vector the store ranks ``text`` with."""
        if not len(self._store):
            return False  # an empty store answers nothing, and never embeds
        try:
            own = self._store.embed_query(text)
        except PlaceboragError:  # an unrecorded query_str (replay): rank by the vector given
            return False
        return bool(np.array_equal(own, given))

    def _where_and_ids(
        self, query: VectorStoreQuery
    ) -> tuple[dict[str, Any] | None, list[str] | None]:
        filters = _checked_filters(query.filters)
        where = None
        ids = None
        if filters is not None and _translatable(filters):
            where = _translate(filters)
            filters = None
        if query.doc_ids:
            by_doc: dict[str, Any] = {_REF_DOC_ID: {"$in": list(query.doc_ids)}}
            where = by_doc if where is None else {"$and": [where, by_doc]}
        if filters is not None or query.node_ids:
            ids = [i for i, _ in self._select(query.node_ids or None, filters)]
        return where, ids

    def _mmr(
        self,
        query: VectorStoreQuery,
        k: int,
        where: dict[str, Any] | None,
        ids: list[str] | None,
        context: Mapping[str, Any] | None,
        threshold: object,
        prefetch: object,
    ) -> list[Match]:
        store = self._store
        if query.query_embedding is not None:  # query() refuses a query with neither
            vector = self._checked_query_embedding(query.query_embedding)
        else:
            vector = store.embed_query(query.query_str)  # type: ignore[arg-type]
        fetch = len(store) if prefetch is None else _shared.check_k(prefetch, "mmr_prefetch_k")
        if fetch == 0:
            return []
        options: dict[str, Any] = {"context": context, "text": query.query_str}
        if ids is not None:
            options["ids"] = ids
        # query_str names the query: it is logged and decides what recall keeps, as in a
        # default-mode query.
        matches = [
            m for m in store.query_by_vector(vector, fetch, where, **options) if m.id in store
        ]
        records = store.records()
        rows = [records.position(m.id) for m in matches]
        weight = 0.5 if threshold is None else threshold
        chosen = _shared.mmr_order(
            vector,
            records.vectors[rows],
            k,
            weight,  # type: ignore[arg-type]
            records.sequence[rows].tolist(),
        )
        return [matches[i] for i in chosen]


def _zero_vector_ids(store: FakeVectorStore) -> list[str]:
    records = store.records()
    return [i for i, m in zip(records.ids, records.metadata) if m.get(_shared.ZERO_VECTOR)]


def _admits(
    where: Mapping[str, Any] | None, store: FakeVectorStore
) -> Callable[[Mapping[str, Any]], bool]:
    """Whether a record's stored metadata passes ``where`` under the store's filter rules."""
    if where is None:
        return lambda metadata: True
    predicate = compile_filter(where, filter_rules(store.profile, store.filter_semantics))
    if predicate is None:
        return lambda metadata: True
    return predicate.matches


def _query_mode(mode: object) -> VectorStoreQueryMode:
    """A query's mode as a ``VectorStoreQueryMode``; its value as a str (``"mmr"``) is one too."""
    if isinstance(mode, VectorStoreQueryMode):
        return mode
    try:
        return VectorStoreQueryMode(mode)
    except ValueError:
        allowed = ", ".join(repr(item.value) for item in VectorStoreQueryMode)
        raise PlaceboragValueError(
            f"mode={shown(mode)} must be a VectorStoreQueryMode or one of its values: {allowed}"
        ) from None


def _close(own: np.ndarray, stored: np.ndarray) -> bool:
    norm = math.sqrt(float(np.dot(own, own)))
    if norm == 0.0 or not math.isfinite(norm):
        return False
    return float(np.dot(own / norm, stored.astype(np.float64))) >= 1.0 - 1e-4


def _context(context: object) -> Mapping[str, Any] | None:
    if context is None or isinstance(context, Mapping):
        return context
    raise PlaceboragTypeError(
        f"context={shown(context)} must be a dict or None, not {type(context).__name__}"
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

    def __getstate__(self) -> dict[str, Any]:
        return _shared.strict_state(self)  # the scorer, or a named error, never dropped

    def __setstate__(self, state: dict[str, Any]) -> None:
        _shared.strict_setstate(self, state)

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
