"""Haystack adapters: placeborag's embedder and store as Haystack 2.x components.

* :class:`PlaceboDocumentStore` is a Haystack ``DocumentStore`` (sync and async methods, the
  extended filter, count and metadata methods) over a ``FakeVectorStore``: its profile decides
  the score convention, tie order, default existing-id rule and filter timing, and its quirks
  (``filter_mode="post"``, ``recall``, ``visibility="manual"``, injected failures) apply to
  :meth:`PlaceboDocumentStore.embedding_retrieval`.
* :class:`PlaceboEmbeddingRetriever` is the retriever component over that store.
* :class:`PlaceboTextEmbedder` and :class:`PlaceboDocumentEmbedder` embed a query and documents
  with a ``FakeEmbedder`` (queries on its query side, documents on its document side).

Every component has ``to_dict``/``from_dict``, so a pipeline holding them serialises. Filters
use Haystack's syntax and Haystack's own evaluation (``document_matches_filter``, what
``InMemoryDocumentStore`` uses), so a filter selects what it selects there.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from placeborag import (
    ExactEmbedder,
    FakeEmbedder,
    FakeVectorStore,
    FilterError,
    Match,
    PlaceboragTypeError,
    PlaceboragValueError,
)
from placeborag.integrations import _shared
from placeborag.integrations._models import (
    HAYSTACK,
    Integration,
    integration_for,
    store_options_for,
)

try:
    from haystack import Document, component, default_from_dict, default_to_dict
    from haystack.document_stores.errors import DuplicateDocumentError
    from haystack.document_stores.types import DuplicatePolicy
    from haystack.errors import FilterError as HaystackFilterError
    from haystack.utils.filters import document_matches_filter
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise _shared.framework_missing("haystack", "haystack-ai", "haystack") from exc

from placeborag.toolkit import check_int, check_vector, shown

__all__ = [
    "PlaceboDocumentEmbedder",
    "PlaceboDocumentStore",
    "PlaceboDuplicateDocumentError",
    "PlaceboEmbeddingRetriever",
    "PlaceboFilterError",
    "PlaceboTextEmbedder",
]

# The whole Document, as JSON, under a key of the adapter's own beside the document's meta.
_DOCUMENT = "_haystack_document"


class PlaceboDuplicateDocumentError(PlaceboragValueError, DuplicateDocumentError):
    """A write refused because an id is already stored (Haystack's error and placeborag's)."""


class PlaceboFilterError(FilterError, HaystackFilterError):
    """A malformed Haystack filter (Haystack's ``FilterError`` and placeborag's)."""


def _embedder_to_dict(embedder: Any) -> dict[str, Any]:
    if type(embedder) is not FakeEmbedder:
        raise PlaceboragTypeError(
            f"embedder={shown(embedder)} cannot be serialised: to_dict() keeps a FakeEmbedder's "
            "options only"
        )
    return {
        "model_name": embedder.model_name,
        "dimensions": embedder.dimensions,
        "clusters": {name: list(texts) for name, texts in embedder.clusters.items()},
        "cluster_spread": embedder.cluster_spread,
        "cluster_match": embedder.cluster_match,
    }


def _embedder_from(value: Any) -> Any:
    """A ``FakeEmbedder`` from ``to_dict``'s options; None or an embedder as given."""
    if isinstance(value, Mapping):
        return FakeEmbedder(**value)
    return value


def _document_of(metadata: Mapping[str, Any]) -> Document:
    """The Document written under a record (its JSON, kept beside the document's meta)."""
    return Document.from_dict(json.loads(metadata[_DOCUMENT]))


def _check_text(text: object, name: str) -> str:
    if not isinstance(text, str):
        raise PlaceboragTypeError(
            f"{name}={shown(text)} must be a str, not {type(text).__name__}; to embed "
            "documents use PlaceboDocumentEmbedder"
        )
    return text


def _check_documents(documents: object, name: str = "documents") -> list[Document]:
    """A list of Documents; ValueError otherwise (the Haystack DocumentStore contract)."""
    if isinstance(documents, (str, bytes, Mapping)) or not isinstance(documents, Sequence):
        raise PlaceboragValueError(
            f"{name}={shown(documents)} must be a list of Documents, not {type(documents).__name__}"
        )
    for i, document in enumerate(documents):
        if not isinstance(document, Document):
            raise PlaceboragValueError(
                f"{name}[{i}]={shown(document)} must be a Document, not {type(document).__name__}"
            )
    return list(documents)


def _field(name: object) -> str:
    """A metadata field name, without Haystack's optional ``meta.`` prefix."""
    if not isinstance(name, str) or not name:
        raise PlaceboragTypeError(f"metadata_field={shown(name)} must be a non-empty str")
    return name[5:] if name.startswith("meta.") else name


def _distinct_key(value: Any) -> tuple[str, str]:
    # 1, 1.0, "1" and True are four values: the type is part of the key.
    return type(value).__name__, json.dumps(value, sort_keys=True, default=repr)


def _sort_key(value: Any) -> tuple[str, Any]:
    kind = type(value).__name__
    return (kind, value) if isinstance(value, (str, int, float)) else (kind, repr(value))


@dataclasses.dataclass(frozen=True)
class _Stored:
    """A record as the adapter reads it back: its id and the Document written under it."""

    id: str
    document: Document


class PlaceboDocumentStore:
    """A Haystack ``DocumentStore`` over a :class:`~placeborag.FakeVectorStore`.

    Give ``store=`` (a configured ``FakeVectorStore``) or ``FakeVectorStore`` options
    (``profile="qdrant"`` by default: cosine similarities, higher is better). ``embedder`` is
    a ``FakeEmbedder`` (or None for ``FakeEmbedder()``); give the pipeline's embedders the same
    one (``PlaceboTextEmbedder(store.embedder)``) to rank in the fake's geometry.

    A document that arrives with an ``embedding`` is ranked by it, as given; one without is
    embedded from its ``content`` by the store's embedder (InMemoryDocumentStore leaves such a
    document out of embedding retrieval instead). A stored document is returned exactly as it
    was written. ``write_documents`` with ``DuplicatePolicy.NONE`` (the default) follows the
    store's ``on_existing_id`` (``"replace"`` for ``"qdrant"``, ``"duplicate"`` keeps both
    records); ``OVERWRITE``, ``SKIP`` and ``FAIL`` do what they say whatever the profile.

    Built without an embedder, the store takes its dimension from the first embeddings written.
    ``integration="chroma"`` or ``"qdrant"`` models chroma-haystack or qdrant-haystack on top of
    the profile (``NONE`` fails on a stored id, ``k=0``, Chroma's missing ``scale_score``).
    """

    def __init__(
        self,
        store: FakeVectorStore | None = None,
        *,
        embedder: Any = None,
        integration: str | None = None,
        **store_options: Any,
    ) -> None:
        model = integration_for(HAYSTACK, integration, "Haystack")
        if model is not None:
            store_options = store_options_for(model, store, store_options)
        self._integration = model
        if store is not None:
            if embedder is not None or store_options:
                given = ["embedder"] if embedder is not None else []
                raise PlaceboragTypeError(
                    f"store= cannot be combined with {', '.join(given + sorted(store_options))}; "
                    "configure the FakeVectorStore itself instead"
                )
            if not isinstance(store, FakeVectorStore):
                raise PlaceboragTypeError(
                    f"store={shown(store)} must be a FakeVectorStore, not {type(store).__name__}"
                )
            if isinstance(store.embedder, ExactEmbedder):
                raise PlaceboragTypeError(
                    "store= over a bare FakeEmbedder (an exact embedder) ranks from the texts "
                    "and cannot keep the embeddings documents arrive with; pass the store's "
                    "options instead: PlaceboDocumentStore(embedder=..., profile=..., ...)"
                )
        else:
            options = {"profile": "qdrant", **store_options}
            # Without an embedder the store takes its dimension from the first embeddings.
            store = FakeVectorStore(embedder=_shared.GivenVectors(embedder), **options)
        self._store = store

    @property
    def store(self) -> FakeVectorStore:
        """The ``FakeVectorStore`` holding the records: inspect ``queries``, inject failures."""
        return self._store

    @property
    def integration(self) -> Integration | None:
        """The Haystack integration modelled (``integration=``), or None."""
        return self._integration

    @property
    def embedder(self) -> Any:
        """The placeborag embedder the store embeds documents without an embedding with."""
        return _shared.resolve_embedder(self._store.embedder)

    def __repr__(self) -> str:
        return f"PlaceboDocumentStore({self._store!r})"

    # -- serialisation ------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The store's configuration (not its documents), as ``InMemoryDocumentStore`` does."""
        options = dict(self._store.options)
        if not isinstance(options["profile"], str):
            raise PlaceboragTypeError(
                f"profile={shown(options['profile'])} cannot be serialised: to_dict() keeps a "
                "profile by its name"
            )
        given = self._store.embedder
        embedder: dict[str, Any] | None
        if isinstance(given, _shared.GivenVectors) and given.chosen:
            # No embedder was given: a store built from the dict takes its dimension again.
            embedder = None
        else:
            embedder = _embedder_to_dict(self.embedder)
        if self._integration is not None:
            options["integration"] = self._integration.name
        return default_to_dict(self, embedder=embedder, **options)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PlaceboDocumentStore:
        parameters = data.get("init_parameters", {})
        parameters["embedder"] = _embedder_from(parameters.get("embedder"))
        return default_from_dict(cls, data)

    # -- reads --------------------------------------------------------------------------------

    def count_documents(self) -> int:
        return len(self._store)

    def _stored(self) -> list[_Stored]:
        records = self._store.records()
        return [
            _Stored(value, _document_of(metadata))
            for value, metadata in zip(records.ids, records.metadata)
        ]

    def _matching(self, filters: object) -> list[_Stored]:
        test = _compiled(filters)
        return [item for item in self._stored() if test(item.document)]

    def filter_documents(self, filters: dict[str, Any] | None = None) -> list[Document]:
        """The visible documents that match ``filters`` (all for None or ``{}``), as written."""
        return [item.document for item in self._matching(filters)]

    def count_documents_by_filter(self, filters: dict[str, Any]) -> int:
        return len(self._matching(filters))

    def count_unique_metadata_by_filter(
        self, filters: dict[str, Any], metadata_fields: list[str]
    ) -> dict[str, int]:
        """How many distinct values each field takes among the matching documents."""
        names = [_field(name) for name in _shared.check_texts(metadata_fields, "metadata_fields")]
        matching = self._matching(filters)
        return {
            name: len(
                {
                    _distinct_key(item.document.meta[name])
                    for item in matching
                    if name in item.document.meta
                }
            )
            for name in names
        }

    def get_metadata_fields_info(self) -> dict[str, dict[str, str]]:
        """Each metadata field and the type of its values (``keyword``, ``int``, ...)."""
        kinds: dict[str, str] = {}
        for item in self._stored():
            for name, value in item.document.meta.items():
                if isinstance(value, bool):
                    kinds.setdefault(name, "boolean")
                elif isinstance(value, int):
                    kinds.setdefault(name, "int")
                elif isinstance(value, float):
                    kinds.setdefault(name, "float")
                else:
                    kinds.setdefault(name, "keyword")
        return {name: {"type": kind} for name, kind in kinds.items()}

    def get_metadata_field_min_max(self, metadata_field: str) -> dict[str, Any]:
        """The smallest and largest number a field holds (None and None when it holds none)."""
        name = _field(metadata_field)
        values = [
            item.document.meta[name]
            for item in self._stored()
            if isinstance(item.document.meta.get(name), (int, float))
            and not isinstance(item.document.meta.get(name), bool)
        ]
        if not values:
            return {"min": None, "max": None}
        return {"min": min(values), "max": max(values)}

    def get_metadata_field_unique_values(
        self,
        metadata_field: str,
        search_term: str | None = None,
        from_: int = 0,
        size: int = 10,
        filters: dict[str, Any] | None = None,
    ) -> tuple[list[Any], int]:
        """One page of a field's distinct values, sorted, and how many there are in all.

        ``search_term`` keeps the values whose text contains it, ignoring case.
        """
        name = _field(metadata_field)
        if search_term is not None:
            _check_text(search_term, "search_term")
        start = check_int(from_, "from_", minimum=0)
        count = _shared.check_k(size, "size")
        distinct: dict[tuple[str, str], Any] = {}
        for item in self._matching(filters):
            if name not in item.document.meta:
                continue
            value = item.document.meta[name]
            if search_term is not None and search_term.lower() not in str(value).lower():
                continue
            distinct.setdefault(_distinct_key(value), value)
        values = sorted(distinct.values(), key=_sort_key)
        return values[start : start + count], len(values)

    # -- writes -------------------------------------------------------------------------------

    def write_documents(
        self, documents: list[Document], policy: DuplicatePolicy = DuplicatePolicy.NONE
    ) -> int:
        """Write the documents; returns how many were written.

        ``DuplicatePolicy.NONE`` leaves an existing id to the store's ``on_existing_id``
        (``"error"`` raises :class:`PlaceboDuplicateDocumentError`, ``"ignore"`` writes only
        the new ids); ``OVERWRITE`` replaces the stored document; ``SKIP`` writes only the ids
        not stored yet; ``FAIL`` raises when any id is stored or repeated. Everything is checked
        before anything is written.
        """
        documents = _check_documents(documents)
        if not isinstance(policy, DuplicatePolicy):
            allowed = ", ".join(f"DuplicatePolicy.{item.name}" for item in DuplicatePolicy)
            raise PlaceboragTypeError(f"policy={shown(policy)} must be one of {allowed}")
        mode = self._store.profile.on_existing_id
        fails = self._integration is not None and self._integration.none_policy_fails
        if policy == DuplicatePolicy.NONE and (mode == "error" or fails):
            policy = DuplicatePolicy.FAIL
        stored = set(self._store.ids)
        if policy == DuplicatePolicy.FAIL:
            self._refuse_duplicates(documents, stored)
            self._write(documents)
            return len(documents)
        if policy == DuplicatePolicy.SKIP or (policy == DuplicatePolicy.NONE and mode == "ignore"):
            # The first document of each new id, in the order written (InMemoryDocumentStore
            # skips each later one as it comes).
            first: dict[str, Document] = {}
            for document in documents:
                if document.id not in stored:
                    first.setdefault(document.id, document)
            fresh = list(first.values())
            self._write(fresh)
            return len(fresh)
        if policy == DuplicatePolicy.OVERWRITE and mode not in ("replace", "move_to_end"):
            last = {d.id: d for d in documents}
            self._overwrite(list(last.values()), stored)
            return len(last)
        self._write(documents)
        return len(documents)

    def _refuse_duplicates(self, documents: Sequence[Document], stored: set[str]) -> None:
        seen: set[str] = set()
        for i, document in enumerate(documents):
            if document.id in stored or document.id in seen:
                where = "is already stored" if document.id in stored else "repeats in this write"
                raise PlaceboDuplicateDocumentError(
                    f"documents[{i}] has id {shown(document.id)}, which {where}, and the "
                    "write policy forbids writing an id twice; nothing was written"
                )
            seen.add(document.id)

    def _overwrite(self, documents: list[Document], stored: set[str]) -> None:
        """Replace stored documents under a profile whose own rule would keep the old one."""
        rows = self._rows(documents)  # checked before the old records are deleted
        self._store.delete([d.id for d in documents if d.id in stored], missing_ok=True)
        _shared.write_in_order(self._store, *rows)

    def _write(self, documents: list[Document]) -> None:
        if documents:
            _shared.write_in_order(self._store, *self._rows(documents))

    def _rows(
        self, documents: Sequence[Document]
    ) -> tuple[list[str], list[str], list[dict[str, Any]], list[Any] | None]:
        """The store's columns for ``documents``, every one checked."""
        dimensions = _shared.store_dimensions(self._store)
        ids, texts, metadatas, vectors = [], [], [], []
        for i, document in enumerate(documents):
            if _DOCUMENT in document.meta:
                raise PlaceboragValueError(
                    f"documents[{i}] has meta key {shown(_DOCUMENT)}, which PlaceboDocumentStore "
                    "keeps for itself; rename that key"
                )
            if document.embedding is not None:  # a bad vector is named before the JSON
                check_vector(document.embedding, f"documents[{i}].embedding")
            try:
                serialised = json.dumps(
                    dataclasses.replace(document, score=None).to_dict(flatten=False),
                    ensure_ascii=False,
                    allow_nan=False,
                )
            except (TypeError, ValueError) as exc:
                raise PlaceboragTypeError(
                    f"documents[{i}] (id {shown(document.id)}) cannot be stored: its fields must "
                    f"be JSON values ({exc})"
                ) from None
            vector = None
            if document.embedding is not None:
                vector = np.asarray(
                    check_vector(document.embedding, f"documents[{i}].embedding"), np.float64
                )
                if dimensions is None:
                    dimensions = vector.shape[0]
                if vector.shape[0] != dimensions:
                    raise PlaceboragValueError(
                        f"documents[{i}] (id {shown(document.id)}) has a {vector.shape[0]}-"
                        f"dimensional embedding and the store holds {dimensions}-dimensional "
                        "vectors; embed the documents with PlaceboDocumentEmbedder(store.embedder)"
                        f", or build the store over FakeEmbedder(dimensions={vector.shape[0]})"
                    )
            ids.append(document.id)
            texts.append(document.content or "")
            metadatas.append({**document.meta, _DOCUMENT: serialised})
            vectors.append(vector)
        return ids, texts, metadatas, vectors if any(v is not None for v in vectors) else None

    def delete_documents(self, document_ids: list[str]) -> None:
        """Delete the documents with these ids; an unknown id is not an error."""
        ids = _shared.check_texts(document_ids, "document_ids")
        self._store.delete(ids, missing_ok=True)

    def delete_all_documents(self, recreate_index: bool = False) -> None:
        """Delete every document (``recreate_index`` changes nothing: there is no index)."""
        self._store.delete(list(self._store.ids), missing_ok=True)

    def delete_by_filter(self, filters: dict[str, Any]) -> int:
        """Delete the documents matching ``filters``; returns how many."""
        return int(
            self._store.delete([item.id for item in self._matching(filters)], missing_ok=True)
        )

    def update_by_filter(self, filters: dict[str, Any], meta: dict[str, Any]) -> int:
        """Merge ``meta`` into the meta of the documents matching ``filters``; returns how many.

        Each keeps its id, content, embedding and place.
        """
        if not isinstance(meta, Mapping):
            raise PlaceboragTypeError(f"meta={shown(meta)} must be a dict")
        updated = [
            dataclasses.replace(item.document, meta={**item.document.meta, **meta})
            for item in self._matching(filters)
        ]
        stored = {d.id for d in updated}
        if self._store.profile.on_existing_id in ("replace", "move_to_end"):
            self._write(updated)
        else:
            self._overwrite(updated, stored)
        return len(updated)

    # -- retrieval ------------------------------------------------------------------------------

    def embedding_retrieval(
        self,
        query_embedding: list[float],
        filters: dict[str, Any] | None = None,
        top_k: int = 10,
        scale_score: bool = False,
        return_embedding: bool = False,
    ) -> list[Document]:
        """The ``top_k`` documents closest to ``query_embedding``, each with its ``score``.

        The score is the profile's number (a cosine similarity under ``"qdrant"``, a distance
        under ``"chroma"``); ``scale_score=True`` reports ``(1 + cos) / 2`` instead, in
        ``[0, 1]`` and higher is better for every profile. ``filters`` restrict the candidates
        before ranking, or, when the store post-filters (``filter_mode="post"``), after the
        profile's candidate window, as the engine would.
        """
        vector = np.asarray(check_vector(query_embedding, "query_embedding"), np.float64)
        dimensions = _shared.store_dimensions(self._store)
        if dimensions is not None and vector.shape[0] != dimensions:
            raise PlaceboragValueError(
                f"query_embedding has {vector.shape[0]} dimensions and the store's vectors have "
                f"{dimensions}; embed the query with PlaceboTextEmbedder(store.embedder)"
            )
        k = _shared.check_k(top_k, "top_k")
        model = self._integration
        if model is not None:
            model.check_k(k, "top_k")
            if scale_score and not model.scale_score:
                raise PlaceboragTypeError(
                    f"scale_score=True: {model.package}'s retriever has no scale_score and "
                    "reports Chroma's distances; drop it"
                )
        if k == 0:
            return []
        matches = self._ranked(vector, filters, k)
        stored = {item.id: item.document for item in self._stored()}
        relevance = _shared.cosine_of_score(self._store.profile.score)
        found = []
        for match in matches:
            if match.id not in stored:
                continue  # a FAISS-style padding slot
            score = (1.0 + relevance(match.score)) / 2.0 if scale_score else match.score
            document = Document.from_dict(json.loads(match.metadata[_DOCUMENT]))
            found.append(
                dataclasses.replace(
                    document,
                    score=float(score),
                    embedding=document.embedding if return_embedding else None,
                )
            )
        return found

    def _ranked(self, vector: np.ndarray, filters: object, k: int) -> list[Match]:
        test = _compiled(filters)
        return _shared.query_around_zero_vectors(
            self._store,
            k,
            None,
            lambda only: self._ranked_by_store(vector, filters, test, k, only),
            lambda metadata: bool(test(_document_of(metadata))),
        )

    def _ranked_by_store(
        self, vector: np.ndarray, filters: object, test: Any, k: int, only: list[str] | None
    ) -> list[Match]:
        """The store's ranking, over the records ``only`` (None: all of them)."""
        store = self._store
        options: dict[str, Any] = {} if only is None else {"ids": only}
        if filters is None or filters == {}:
            return store.query_by_vector(vector, k, **options)
        if store.filter_mode == "post":
            window = max(k, store.profile.post_filter_candidates)
            ranked = store.query_by_vector(vector, window, **options)
            documents = {item.id: item.document for item in self._stored()}
            kept = [m for m in ranked if m.id in documents and test(documents[m.id])]
            return kept[:k]
        ids = [item.id for item in self._matching(filters)]
        if only is not None:
            allowed = set(only)
            ids = [i for i in ids if i in allowed]
        if not ids:
            return []
        return store.query_by_vector(vector, k, ids=ids)

    # -- async ----------------------------------------------------------------------------------

    async def count_documents_async(self) -> int:
        return self.count_documents()

    async def filter_documents_async(self, filters: dict[str, Any] | None = None) -> list[Document]:
        return self.filter_documents(filters)

    async def write_documents_async(
        self, documents: list[Document], policy: DuplicatePolicy = DuplicatePolicy.NONE
    ) -> int:
        return self.write_documents(documents, policy)

    async def delete_documents_async(self, document_ids: list[str]) -> None:
        self.delete_documents(document_ids)

    async def delete_all_documents_async(self, recreate_index: bool = False) -> None:
        self.delete_all_documents(recreate_index)

    async def delete_by_filter_async(self, filters: dict[str, Any]) -> int:
        return self.delete_by_filter(filters)

    async def update_by_filter_async(self, filters: dict[str, Any], meta: dict[str, Any]) -> int:
        return self.update_by_filter(filters, meta)

    async def count_documents_by_filter_async(self, filters: dict[str, Any]) -> int:
        return self.count_documents_by_filter(filters)

    async def count_unique_metadata_by_filter_async(
        self, filters: dict[str, Any], metadata_fields: list[str]
    ) -> dict[str, int]:
        return self.count_unique_metadata_by_filter(filters, metadata_fields)

    async def get_metadata_fields_info_async(self) -> dict[str, dict[str, str]]:
        return self.get_metadata_fields_info()

    async def get_metadata_field_min_max_async(self, metadata_field: str) -> dict[str, Any]:
        return self.get_metadata_field_min_max(metadata_field)

    async def get_metadata_field_unique_values_async(
        self,
        metadata_field: str,
        search_term: str | None = None,
        from_: int = 0,
        size: int = 10,
        filters: dict[str, Any] | None = None,
    ) -> tuple[list[Any], int]:
        return self.get_metadata_field_unique_values(
            metadata_field, search_term, from_, size, filters
        )

    async def embedding_retrieval_async(
        self,
        query_embedding: list[float],
        filters: dict[str, Any] | None = None,
        top_k: int = 10,
        scale_score: bool = False,
        return_embedding: bool = False,
    ) -> list[Document]:
        return self.embedding_retrieval(
            query_embedding, filters, top_k, scale_score, return_embedding
        )


def _compiled(filters: object) -> Any:
    """A predicate on a Document for Haystack ``filters``, checked before any is read."""
    if filters is None or filters == {}:
        return lambda document: True
    if not isinstance(filters, Mapping):
        raise PlaceboFilterError(
            f"filters={shown(filters)} must be a Haystack filter dict or None, not "
            f"{type(filters).__name__}"
        )
    if "operator" not in filters and "conditions" not in filters:
        raise PlaceboFilterError(
            f"filters={shown(filters)} has neither 'operator' nor 'conditions'; a Haystack filter "
            "is a comparison {'field', 'operator', 'value'} or a logic "
            "{'operator': 'AND'|'OR'|'NOT', 'conditions': [...]}"
        )

    _check_filter_tree(filters)

    def test(document: Document) -> bool:
        try:
            return bool(document_matches_filter(dict(filters), document))
        except HaystackFilterError as exc:
            raise PlaceboFilterError(str(exc)) from None

    test(Document(content=""))  # a malformed filter raises here, even over an empty store
    return test


# Haystack evaluates a filter recursively, a few frames per level: deeper than this, a filter
# would end in a RecursionError; no filter a pipeline builds comes near it.
MAX_FILTER_DEPTH = 100
_COMPARISONS = ("==", "!=", ">", ">=", "<", "<=", "in", "not in")
_LOGIC = ("AND", "OR", "NOT")


def _check_filter_tree(filters: Mapping[str, Any]) -> None:
    """Refuse a malformed filter with a ``FilterError`` naming where, before any document is
    read: every node a dict, a comparison's ``field`` a str and its operator one of Haystack's,
    a logic node's ``conditions`` a list, at most :data:`MAX_FILTER_DEPTH` levels deep.

    Walked with a stack, not recursion, so a filter nested thousands deep is refused by name
    rather than escaping as a RecursionError (or a TypeError from Haystack's own evaluation).
    """
    stack: list[tuple[object, str, int]] = [(filters, "filters", 1)]
    while stack:
        node, where, depth = stack.pop()
        if not isinstance(node, Mapping):
            raise PlaceboFilterError(
                f"{where}={shown(node)} must be a dict: a comparison with 'field', "
                "'operator' and 'value', or a logic node with 'operator' and 'conditions'"
            )
        if depth > MAX_FILTER_DEPTH:
            raise PlaceboFilterError(
                f"filters nest deeper than {MAX_FILTER_DEPTH} levels; Haystack evaluates "
                "filters recursively, so flatten the conditions (AND takes a list)"
            )
        operator = node.get("operator")
        if "field" in node:
            field = node["field"]
            if not isinstance(field, str) or not field:
                raise PlaceboFilterError(
                    f"{where}['field']={shown(field)} must be a non-empty str such as 'meta.year'"
                )
            if not isinstance(operator, str) or operator not in _COMPARISONS:
                raise PlaceboFilterError(
                    f"{where}['operator']={shown(operator)} must be one of "
                    f"{', '.join(repr(op) for op in _COMPARISONS)}"
                )
            if "value" not in node:
                raise PlaceboFilterError(f"{where} has no 'value' key; a comparison needs one")
            continue
        if not isinstance(operator, str) or operator not in _LOGIC:
            raise PlaceboFilterError(
                f"{where}['operator']={shown(operator)} must be one of "
                f"{', '.join(repr(op) for op in _LOGIC)} (or give 'field' for a comparison)"
            )
        conditions = node.get("conditions")
        if not isinstance(conditions, (list, tuple)):
            raise PlaceboFilterError(
                f"{where}['conditions']={shown(conditions)} must be a list of conditions"
            )
        for i in reversed(range(len(conditions))):
            stack.append((conditions[i], f"{where}['conditions'][{i}]", depth + 1))


# -- components -----------------------------------------------------------------------------


@component
class PlaceboEmbeddingRetriever:
    """Haystack's embedding retriever over a :class:`PlaceboDocumentStore`.

    ``run(query_embedding, filters=None, top_k=None)`` returns ``{"documents": [...]}``, the
    store's :meth:`~PlaceboDocumentStore.embedding_retrieval`; ``filters`` and ``top_k`` given
    to ``run`` replace the ones given here.
    """

    def __init__(
        self,
        document_store: PlaceboDocumentStore,
        filters: dict[str, Any] | None = None,
        top_k: int = 10,
        scale_score: bool = False,
        return_embedding: bool = False,
    ) -> None:
        if not isinstance(document_store, PlaceboDocumentStore):
            raise PlaceboragTypeError(
                f"document_store={shown(document_store)} must be a PlaceboDocumentStore, not "
                f"{type(document_store).__name__}"
            )
        if filters is not None:
            _compiled(filters)
        self.document_store = document_store
        self.filters = filters
        self.top_k = _shared.check_k(top_k, "top_k")
        self.scale_score = scale_score
        self.return_embedding = return_embedding

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(
            self,
            document_store=self.document_store.to_dict(),
            filters=self.filters,
            top_k=self.top_k,
            scale_score=self.scale_score,
            return_embedding=self.return_embedding,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PlaceboEmbeddingRetriever:
        parameters = data.get("init_parameters", {})
        parameters["document_store"] = PlaceboDocumentStore.from_dict(parameters["document_store"])
        return default_from_dict(cls, data)

    @component.output_types(documents=list[Document])
    def run(
        self,
        query_embedding: list[float],
        filters: dict[str, Any] | None = None,
        top_k: int | None = None,
        scale_score: bool | None = None,
    ) -> dict[str, list[Document]]:
        """``filters``, ``top_k`` and ``scale_score`` given here replace the retriever's own.

        Under ``integration=`` a ``top_k`` of 0 is the retriever's own, as the integrations'
        retrievers read it (``top_k or self.top_k``).
        """
        if top_k == 0 and self.document_store.integration is not None:
            top_k = None
        documents = self.document_store.embedding_retrieval(
            query_embedding,
            filters=self.filters if filters is None else filters,
            top_k=self.top_k if top_k is None else top_k,
            scale_score=self.scale_score if scale_score is None else scale_score,
            return_embedding=self.return_embedding,
        )
        return {"documents": documents}

    @component.output_types(documents=list[Document])
    async def run_async(
        self,
        query_embedding: list[float],
        filters: dict[str, Any] | None = None,
        top_k: int | None = None,
        scale_score: bool | None = None,
    ) -> dict[str, list[Document]]:
        return self.run(query_embedding, filters, top_k, scale_score)


class _EmbedderComponent:
    """What both embedder components share: the embedder, the prefix and suffix, to_dict."""

    def __init__(self, embedder: Any, prefix: str, suffix: str) -> None:
        self.embedder = _shared.resolve_embedder(_embedder_from(embedder))
        self.prefix = _check_text(prefix, "prefix")
        self.suffix = _check_text(suffix, "suffix")

    def _options(self) -> dict[str, Any]:
        return {
            "embedder": _embedder_to_dict(self.embedder),
            "prefix": self.prefix,
            "suffix": self.suffix,
        }

    def _meta(self) -> dict[str, Any]:
        return {"model": getattr(self.embedder, "model_name", type(self.embedder).__name__)}


@component
class PlaceboTextEmbedder(_EmbedderComponent):
    """Embeds a query with a placeborag embedder (a ``FakeEmbedder()`` by default).

    ``run(text)`` returns ``{"embedding": [...], "meta": {"model": ...}}``; the text (with
    ``prefix`` and ``suffix``) goes to the embedder's query side, so a ``ReplayEmbedder``
    answers from its recorded queries.
    """

    def __init__(self, embedder: Any = None, *, prefix: str = "", suffix: str = "") -> None:
        # The component decorator rebuilds the class, so a zero-argument super() cannot work.
        _EmbedderComponent.__init__(self, embedder, prefix, suffix)

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(self, **self._options())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PlaceboTextEmbedder:
        return default_from_dict(cls, data)

    @component.output_types(embedding=list[float], meta=dict[str, Any])
    def run(self, text: str) -> dict[str, Any]:
        text = _check_text(text, "text")
        vector = _shared.query_vectors(self.embedder, [self.prefix + text + self.suffix])[0]
        return {"embedding": vector.tolist(), "meta": self._meta()}

    @component.output_types(embedding=list[float], meta=dict[str, Any])
    async def run_async(self, text: str) -> dict[str, Any]:
        return self.run(text)


@component
class PlaceboDocumentEmbedder(_EmbedderComponent):
    """Embeds documents with a placeborag embedder (a ``FakeEmbedder()`` by default).

    ``run(documents)`` returns ``{"documents": [...], "meta": {...}}``: copies of the documents
    with their ``embedding`` set, in one embedding call. The text embedded is the values of
    ``meta_fields_to_embed`` and the content, joined by ``embedding_separator``, between
    ``prefix`` and ``suffix`` (as Haystack's own document embedders build it).
    """

    def __init__(
        self,
        embedder: Any = None,
        *,
        prefix: str = "",
        suffix: str = "",
        meta_fields_to_embed: list[str] | None = None,
        embedding_separator: str = "\n",
    ) -> None:
        # The component decorator rebuilds the class, so a zero-argument super() cannot work.
        _EmbedderComponent.__init__(self, embedder, prefix, suffix)
        fields = _shared.check_texts(meta_fields_to_embed or [], "meta_fields_to_embed")
        for i, name in enumerate(fields):
            _check_text(name, f"meta_fields_to_embed[{i}]")
        self.meta_fields_to_embed = fields
        self.embedding_separator = _check_text(embedding_separator, "embedding_separator")

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(
            self,
            **self._options(),
            meta_fields_to_embed=self.meta_fields_to_embed,
            embedding_separator=self.embedding_separator,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PlaceboDocumentEmbedder:
        return default_from_dict(cls, data)

    def _text(self, document: Document) -> str:
        parts = [
            str(document.meta[name])
            for name in self.meta_fields_to_embed
            if document.meta.get(name) is not None
        ]
        parts.append(document.content or "")
        return self.prefix + self.embedding_separator.join(parts) + self.suffix

    @component.output_types(documents=list[Document], meta=dict[str, Any])
    def run(self, documents: list[Document]) -> dict[str, Any]:
        if isinstance(documents, (str, bytes)) or not isinstance(documents, Sequence):
            raise PlaceboragTypeError(
                f"documents={shown(documents)} must be a list of Documents; to embed a string "
                "use PlaceboTextEmbedder"
            )
        for i, document in enumerate(documents):
            if not isinstance(document, Document):
                raise PlaceboragTypeError(
                    f"documents[{i}]={shown(document)} must be a Document, not "
                    f"{type(document).__name__}; to embed a string use PlaceboTextEmbedder"
                )
        texts = [self._text(document) for document in documents]
        vectors = _shared.document_vectors(self.embedder, texts).tolist() if texts else []
        embedded = [
            dataclasses.replace(document, embedding=vector)
            for document, vector in zip(documents, vectors)
        ]
        return {"documents": embedded, "meta": self._meta()}

    @component.output_types(documents=list[Document], meta=dict[str, Any])
    async def run_async(self, documents: list[Document]) -> dict[str, Any]:
        return self.run(documents)
