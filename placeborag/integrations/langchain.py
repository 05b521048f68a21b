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

``PlaceboVectorStore`` is a drop-in for ``InMemoryVectorStore``: the ``"langchain"`` profile
by default, callable filters, MMR, ``k=0``, int ids, ``dump``/``load``. ``docs/integrations.md``
lists what changes when a test swaps LangChain's doubles for these.
"""

from __future__ import annotations

import json
import os
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np

from placeborag import (
    FakeVectorStore,
    FilterError,
    Match,
    PlaceboragTypeError,
    PlaceboragValueError,
)
from placeborag.integrations import _shared
from placeborag.integrations._models import (
    LANGCHAIN,
    Integration,
    integration_for,
    store_options_for,
)
from placeborag.toolkit import write_text

try:
    from langchain_core.callbacks import (
        AsyncCallbackManagerForRetrieverRun,
        CallbackManagerForRetrieverRun,
        Callbacks,
    )
    from langchain_core.documents import BaseDocumentCompressor, Document
    from langchain_core.embeddings import Embeddings
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.runnables.config import run_in_executor
    from langchain_core.vectorstores import VectorStore
    from pydantic import ConfigDict
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise _shared.framework_missing("langchain", "langchain-core", "langchain") from exc

from placeborag._files import read_regular
from placeborag._threads import FreshLocks
from placeborag._validation import dump_json, load_json
from placeborag.integrations._langchain_chat import PlaceboChatModel, PlaceboKnowledgeRetriever
from placeborag.toolkit import (
    check_int,
    check_path,
    check_real,
    check_unicode_tree,
    check_vector,
    shown,
)

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
_DUMP_FORMAT = "placeborag.langchain/1"
#: The largest file :meth:`PlaceboVectorStore.load` reads unless told otherwise (``max_bytes=``).
MAX_DUMP_BYTES = 256 * 2**20
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
        return cast("list[list[float]]", _shared.document_vectors(self._embedder, texts).tolist())

    def embed_query(self, text: str) -> list[float]:
        return cast("list[float]", _shared.query_vectors(self._embedder, [text])[0].tolist())

    def __repr__(self) -> str:
        return f"PlaceboEmbeddings({self._embedder!r})"


def _document(match: Match) -> Document:
    return Document(id=match.id, page_content=match.text, metadata=match.metadata)


# Keys of a Qdrant filter: a dict built from them is not a placeborag where dict.
_QDRANT_KEYS = frozenset({"must", "should", "must_not", "min_should"})


def _checked_where(where: object, name: str) -> Mapping[str, Any] | None:
    if where is None:
        return None
    if isinstance(where, Mapping):
        if where and _QDRANT_KEYS.issuperset(where):
            raise FilterError(
                f"{name}={shown(where)} is a Qdrant filter; PlaceboVectorStore takes a placeborag "
                "where dict (such as {'lang': 'hu'} or {'$and': [...]}) or a callable "
                "filter(document) -> bool"
            )
        return where
    raise PlaceboragTypeError(
        f"{name}={shown(where)} must be a placeborag where dict such as {{'lang': 'hu'}}, a "
        "callable "
        f"filter(document) -> bool, or None, not {type(where).__name__}"
    )


def _stored_id(value: object, name: str) -> str | None:
    """An id as the store keeps it: a str, an int as its decimal text; None or '' for a new one."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise PlaceboragTypeError(f"{name}={shown(value)} must be a str, an int or None")


_RECORD_FIELDS = {"id": (str,), "text": (str,), "metadata": (dict, type(None))}


def _read_dump(path: str | os.PathLike[str], max_bytes: int) -> list[dict[str, Any]]:
    """The records of a file ``PlaceboVectorStore.dump`` wrote, each checked."""
    where = shown(os.fspath(check_path(path, "path")))
    data = read_regular(
        check_path(path, "path"),
        max_bytes,
        f"dump file {where}",
        f"PlaceboVectorStore.load(path, max_bytes=) reads larger files ({MAX_DUMP_BYTES:,} by"
        " default)",
    )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PlaceboragValueError(
            f"{where} is not UTF-8 text (byte {data[exc.start]:#04x} at offset {exc.start}); "
            "PlaceboVectorStore.dump writes UTF-8 JSON"
        ) from None
    try:
        payload = load_json(text)
    except json.JSONDecodeError as exc:
        raise PlaceboragValueError(
            f"{where} is not JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); "
            "PlaceboVectorStore.dump writes JSON"
        ) from None
    except RecursionError:
        raise PlaceboragValueError(
            f"{where} is nested too deeply to be a file written by PlaceboVectorStore.dump"
        ) from None
    if not isinstance(payload, dict) or payload.get("format") != _DUMP_FORMAT:
        raise PlaceboragValueError(
            f"{where} is not a file written by PlaceboVectorStore.dump (its 'format' must be "
            f"{_DUMP_FORMAT!r})"
        )
    records = payload.get("records")
    if not isinstance(records, list):
        raise PlaceboragValueError(
            f"{where}: 'records' must be a list of records, not {type(records).__name__}"
        )
    for i, record in enumerate(records):
        if not isinstance(record, dict):
            raise PlaceboragValueError(
                f"{where}: records[{i}] must be an object with 'id', 'text' and 'metadata', "
                f"not {type(record).__name__}"
            )
        for name, kinds in _RECORD_FIELDS.items():
            if name not in record:
                raise PlaceboragValueError(f"{where}: records[{i}] has no {name!r}")
            if not isinstance(record[name], kinds):
                allowed = " or ".join("null" if k is type(None) else k.__name__ for k in kinds)
                raise PlaceboragValueError(
                    f"{where}: records[{i}][{name!r}]={shown(record[name])} must be {allowed}"
                )
        unknown = sorted(set(record) - set(_RECORD_FIELDS))
        if unknown:
            raise PlaceboragValueError(
                f"{where}: records[{i}] has unknown field(s) {', '.join(map(repr, unknown))}; "
                "expected 'id', 'text', 'metadata'"
            )
    return records


def _check_batch_size(batch_size: object) -> int | None:
    if batch_size is None:
        return None
    if isinstance(batch_size, bool) or not isinstance(batch_size, int):
        raise PlaceboragTypeError(
            f"batch_size={shown(batch_size)} must be an int or None, not "
            f"{type(batch_size).__name__}"
        )
    if batch_size < 1:
        raise PlaceboragValueError(f"batch_size={shown(batch_size)} must be >= 1")
    return batch_size


class _InMemoryShapedStore(FakeVectorStore):
    """A ``FakeVectorStore`` that also reads like ``InMemoryVectorStore.store``.

    Iterating gives the visible ids in insertion order; ``keys()``, ``values()``, ``items()``
    and ``store[id]`` give ``InMemoryVectorStore``'s record dicts (``id``, ``vector``,
    ``text``, ``metadata``), so a test that inspects ``vector_store.store`` keeps working.
    ``get(id)`` stays the ``FakeVectorStore`` method (a ``Match``; an unknown id raises).
    """

    def __iter__(self) -> Iterator[str]:
        return iter(self.records().ids)

    def keys(self) -> list[str]:
        return list(self.records().ids)

    def values(self) -> list[dict[str, Any]]:
        records = self.records()
        return [_record_dict(records, i) for i in range(len(records))]

    def items(self) -> list[tuple[str, dict[str, Any]]]:
        records = self.records()
        return [(records.ids[i], _record_dict(records, i)) for i in range(len(records))]

    def __getitem__(self, id: str) -> dict[str, Any]:
        records = self.records()
        if id not in self:
            raise KeyError(id)
        return _record_dict(records, records.position(id))


def _record_dict(records: Any, i: int) -> dict[str, Any]:
    return {
        "id": records.ids[i],
        "vector": records.vectors[i].tolist(),
        "text": records.texts[i],
        "metadata": dict(records.metadata[i]),
    }


class PlaceboVectorStore(FreshLocks, VectorStore):
    """A LangChain ``VectorStore`` over a :class:`~placeborag.FakeVectorStore`.

    A drop-in for ``InMemoryVectorStore``: by default the store uses the ``"langchain"``
    profile (cosine similarity, higher is better, ``k=4``, pre-filtering, writing an existing id
    replaces it in place). Give ``store=`` (a configured ``FakeVectorStore``, quirks and all) or
    an ``embedding`` plus ``FakeVectorStore`` options (``profile=``, ``filter_mode=``,
    ``recall=``, ``visibility=``, ...). ``embedding`` may be a :class:`PlaceboEmbeddings`, a
    placeborag embedder, or any LangChain ``Embeddings`` (a ``Mock(wraps=...)`` of one too);
    it defaults to a ``FakeEmbedder()``. A LangChain model is called once per written
    document and once per query; scores come from the vectors stored at write time.

    * ``add_texts``/``add_documents`` write with the given ids (an int id is kept as its
      decimal text); a missing id is generated as a uuid5 of a per-adapter counter and the
      text, so the same writes give the same ids on every run. An id repeated in one call is
      written again, exactly as by a second call: the store's ``on_existing_id`` decides
      (``"replace"``, the ``"langchain"`` default, keeps its first position and its last
      text, as in ``InMemoryVectorStore``; ``"duplicate"`` keeps every document).
      ``batch_size`` (what ``langchain_core.indexing.index`` passes) splits the writes into
      that many records per embedding call.
    * ``similarity_search_with_score`` reports the profile's number: a cosine similarity under
      ``"langchain"``/``"qdrant"``, a distance under ``"chroma"``.
      ``similarity_search_with_relevance_scores`` reports the cosine recovered from that
      number, for every profile and metric (see ``docs/integrations.md``).
    * ``filter=`` is a placeborag ``where`` dict (``{"year": {"$gte": 2024}}``) or, as in
      ``InMemoryVectorStore``, a callable taking a ``Document`` (id included) and returning
      a bool; the callable chooses the candidates before ranking.
    * ``max_marginal_relevance_search`` runs MMR over the stored vectors, deterministically.
    * ``store`` is the ``FakeVectorStore``. One the adapter builds also reads like
      ``InMemoryVectorStore.store``: ``for id in vector_store.store``, ``.keys()``,
      ``.values()``, ``.items()`` and ``store[id]`` give its record dicts (``id``, ``vector``,
      ``text``, ``metadata``).
    * ``k=0`` returns no documents. ``delete`` ignores unknown ids; ``delete()`` with no ids
      empties the store. ``dump(path)``/``load(path, embedding)`` save and restore the
      records as JSON (``load`` embeds the texts again).
    * ``integration="chroma"`` or ``"qdrant"`` models langchain-chroma or langchain-qdrant on
      top of the profile: their relevance functions, ``k=0``, id rules and the payload keys
      langchain-qdrant adds (see ``docs/integrations.md``, "Integration models").
    """

    def __init__(
        self,
        embedding: Any = None,
        *,
        store: FakeVectorStore | None = None,
        integration: str | None = None,
        **store_options: Any,
    ) -> None:
        model = integration_for(LANGCHAIN, integration, "LangChain")
        if model is not None:
            store_options = store_options_for(model, store, store_options)
        self._integration = model
        if store is not None:
            if embedding is not None or store_options:
                given = ["embedding"] if embedding is not None else []
                raise PlaceboragTypeError(
                    f"store= cannot be combined with {', '.join(given + sorted(store_options))}; "
                    "configure the FakeVectorStore itself instead"
                )
            if not isinstance(store, FakeVectorStore):
                raise PlaceboragTypeError(
                    f"store={shown(store)} must be a FakeVectorStore, not {type(store).__name__}"
                )
        else:
            embedder = _shared.store_embedder(embedding, PlaceboEmbeddings, Embeddings, _METHODS)
            store_options.setdefault("profile", "langchain")
            store = _InMemoryShapedStore(embedder=embedder, **store_options)
        self._store = store
        self._embedding = (
            embedding if embedding is not None and not _is_placebo(embedding) else None
        )
        # Generated ids count under a lock, so concurrent async writes never share a number
        # (and the count pickles: itertools.count stops pickling in Python 3.14).
        self._lock = threading.Lock()
        self._generated = 0

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
        ids: Sequence[str | None] | None = None,
        batch_size: int | None = None,
        **kwargs: Any,
    ) -> list[str]:
        _shared.check_options(
            kwargs, "PlaceboVectorStore.add_texts", ("metadatas", "ids", "batch_size")
        )
        text_list = _shared.check_texts(texts)
        batch = _check_batch_size(batch_size)
        if ids is not None:
            ids = _shared.check_texts(ids, "ids")
            if len(ids) != len(text_list):
                raise PlaceboragValueError(
                    f"ids has {len(ids)} items and texts has {len(text_list)}; "
                    "they must have the same length"
                )
        if metadatas is not None:
            metadatas = _shared.check_texts(metadatas, "metadatas")
            if len(metadatas) != len(text_list):
                raise PlaceboragValueError(
                    f"metadatas has {len(metadatas)} items and texts has {len(text_list)}; "
                    "they must have the same length"
                )
        given = ids if ids is not None else [None] * len(text_list)
        checked = [_stored_id(value, f"ids[{i}]") for i, value in enumerate(given)]
        if self._integration is not None:
            self._integration.check_ids([v for v in checked if v is not None], "id")
        id_list = [
            value if value is not None else self._new_id(text)
            for value, text in zip(checked, text_list)
        ]
        # An id repeated in one call is written again, as by a second call: the store's
        # on_existing_id decides (the "langchain" profile's "replace" keeps the first place and
        # the last text, as InMemoryVectorStore's dict does; "duplicate" keeps every chunk).
        step = batch or max(len(id_list), 1)
        if len(id_list) > step or self._store.profile.on_existing_id == "error":
            _shared.check_write(self._store, id_list, text_list, metadatas)
        for start in range(0, len(id_list), step):
            chunk = slice(start, start + step)
            _shared.write_in_order(
                self._store,
                id_list[chunk],
                text_list[chunk],
                None if metadatas is None else metadatas[chunk],
            )
        return id_list

    def _next_number(self) -> int:
        with self._lock:
            number, self._generated = self._generated, self._generated + 1
        return number

    def add_documents(self, documents: list[Document], **kwargs: Any) -> list[str]:
        """Write ``documents`` (text and metadata) and return their ids, in order.

        A document's ``id`` is its record's id; ``ids=`` takes precedence over the documents'
        own ids, as in LangChain. A document without an id gets one generated as in
        ``add_texts`` (a uuid5 of a per-adapter counter and the text: the same writes give the
        same ids on every run). An id that exists, or one repeated in the call, is written as a
        later call would write it: the store's ``on_existing_id`` decides (``"replace"``, the
        ``"langchain"`` profile's, keeps its place and takes the new text and metadata).
        ``batch_size=`` splits the writes into that many records per embedding call.
        """
        return super().add_documents(documents, **kwargs)

    def _new_id(self, text: str) -> str:
        while True:
            candidate = str(uuid.uuid5(_ID_NAMESPACE, f"{self._next_number()}\x00{text}"))
            # Another adapter over the same store may have used this id already.
            if candidate not in self._store:
                return candidate

    def delete(self, ids: list[str] | None = None, **kwargs: Any) -> bool:
        _shared.check_options(kwargs, "PlaceboVectorStore.delete", ("ids",))
        if ids is None:
            self._store.delete(list(self._store.ids), missing_ok=True)
            return True
        id_list = _shared.check_texts(ids, "ids")  # "12" is one id, not "1" and "2"
        wanted = [_stored_id(value, f"ids[{i}]") for i, value in enumerate(id_list)]
        self._store.delete([value for value in wanted if value is not None], missing_ok=True)
        return True

    @classmethod
    def from_texts(
        cls,
        texts: list[str],
        embedding: Embeddings,
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        batch_size: int | None = None,
        **kwargs: Any,
    ) -> PlaceboVectorStore:
        """A new store over ``embedding`` holding ``texts``; ``kwargs`` are store options."""
        vector_store = cls(embedding, **kwargs)
        vector_store.add_texts(texts, metadatas, ids=ids, batch_size=batch_size)
        return vector_store

    # -- persistence ------------------------------------------------------------------------

    def dump(self, path: str | os.PathLike[str]) -> None:
        """Write the visible records (ids, texts, metadata) to ``path`` as JSON, atomically.

        The file is written next to ``path`` and moved into place, so ``path`` holds either
        the old file or the new one. Metadata must be JSON values; a record JSON or UTF-8
        cannot hold (a lone surrogate in an id the store accepted) is refused, naming it and
        the path, before anything is written.
        """
        where = shown(os.fspath(check_path(path, "path", named=True)))
        records = self._store.records()
        payload = {
            "format": _DUMP_FORMAT,
            "records": [
                {"id": i, "text": t, "metadata": dict(m)}
                for i, t, m in zip(records.ids, records.texts, records.metadata)
            ],
        }
        try:
            check_unicode_tree(payload["records"], "records")
        except PlaceboragValueError as exc:
            raise PlaceboragValueError(f"PlaceboVectorStore.dump({where}): {exc}") from None
        text = dump_json(
            payload,
            f"PlaceboVectorStore.dump({where}): the records",
            tagged=True,
            ensure_ascii=False,
            indent=1,
        )
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        write_text(path, text)  # atomic: a failed dump leaves the old file whole

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        embedding: Any = None,
        *,
        max_bytes: int = MAX_DUMP_BYTES,
        **kwargs: Any,
    ) -> PlaceboVectorStore:
        """A new store over ``embedding`` (and store options) holding the records of ``dump``.

        The texts are embedded again, in one call. A file that is not what ``dump`` writes
        (not UTF-8, not JSON, another format, a record missing a field or of the wrong type)
        raises a ``PlaceboragError`` naming the path and what is wrong. The file must be a
        regular file (a FIFO or a device is refused without blocking) of at most ``max_bytes``
        (``MAX_DUMP_BYTES``, 256 MiB), checked before it is read.
        """
        check_int(max_bytes, "max_bytes", minimum=1)
        records = _read_dump(path, max_bytes)
        vector_store = cls(embedding, **kwargs)
        try:
            vector_store.add_texts(
                [r["text"] for r in records],
                [r["metadata"] for r in records],
                ids=[r["id"] for r in records],
            )
        except (PlaceboragTypeError, PlaceboragValueError) as exc:
            raise type(exc)(f"{shown(os.fspath(path))}: {exc}") from None
        return vector_store

    # -- reads ----------------------------------------------------------------------------

    def get_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        wanted = [_stored_id(value, f"ids[{i}]") for i, value in enumerate(ids)]
        found = [value for value in dict.fromkeys(wanted) if value is not None]
        return [_document(self._store.get(value)) for value in found if value in self._store]

    def _candidates(self, filter: object) -> tuple[Mapping[str, Any] | None, list[str] | None]:
        """A dict filter as the store's ``where``; a callable as the ids it accepts."""
        if filter is None or not callable(filter):
            return _checked_where(filter, "filter"), None
        records = self._store.records()
        accepted = [
            value
            for value, text, metadata in zip(records.ids, records.texts, records.metadata)
            if filter(Document(id=value, page_content=text, metadata=dict(metadata)))
        ]
        return None, accepted

    def _search(
        self,
        query: str | None,
        vector: Sequence[float] | np.ndarray | None,
        k: object,
        options: dict[str, Any],
        method: str,
        extra: tuple[str, ...] = (),
    ) -> list[Match]:
        filter = options.pop("filter", None)
        context = options.pop("context", None)
        _shared.check_options(
            options, f"PlaceboVectorStore.{method}", ("k", "filter", "context", *extra)
        )
        count = _shared.check_k(k)
        if self._integration is not None:
            self._integration.check_k(count, "k")
        where, ids = self._candidates(filter)
        if count == 0:
            return []
        return _shared.run_query(self._store, query, vector, count, where, ids, context)

    def similarity_search_with_score(
        self, query: str, k: int = 4, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        """The top ``k`` documents and their scores in the store profile's convention.

        ``filter`` is a where dict or a callable on the ``Document``; ``context`` (a dict) is
        passed to ``FakeVectorStore.query``, which records it.
        """
        matches = self._search(_check_query(query), None, k, kwargs, "similarity_search")
        return [(self._document(match), match.score) for match in matches]

    def similarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[Document]:
        return [doc for doc, _ in self.similarity_search_with_score(query, k, **kwargs)]

    def similarity_search_with_score_by_vector(
        self, embedding: list[float], k: int = 4, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        """The top ``k`` documents for a query vector (in the store's space), with scores.

        Scores are in the store profile's convention, as in ``similarity_search_with_score``.
        ``filter=`` is a where dict (``{"lang": "en"}``) or a callable on the ``Document``, as
        in ``similarity_search``; ``context=`` (a dict) is recorded with the query. The query is
        recorded in ``store.queries`` with ``text=""`` (there is no text to record) and with
        its ``k`` and ``where``; the vector's own bytes decide any order that depends on the
        query, so the same vector always gives the same ranking.
        """
        check_vector(embedding, "embedding")
        matches = self._search(None, embedding, k, kwargs, "similarity_search_by_vector")
        return [(self._document(match), match.score) for match in matches]

    def similarity_search_by_vector(
        self, embedding: list[float], k: int = 4, **kwargs: Any
    ) -> list[Document]:
        return [
            doc for doc, _ in self.similarity_search_with_score_by_vector(embedding, k, **kwargs)
        ]

    def max_marginal_relevance_search(
        self,
        query: str,
        k: int = 4,
        fetch_k: int = 20,
        lambda_mult: float = 0.5,
        **kwargs: Any,
    ) -> list[Document]:
        """``k`` documents chosen by MMR among the best ``fetch_k``, over the stored vectors.

        The query is embedded once; candidates come from the store (filter, profile and quirks
        apply), then MMR picks from them in exact order (see ``docs/integrations.md``).
        """
        vector = self._store.embed_query(_check_query(query))
        return self.max_marginal_relevance_search_by_vector(
            vector, k, fetch_k, lambda_mult, **kwargs
        )

    def max_marginal_relevance_search_by_vector(
        self,
        embedding: list[float] | np.ndarray,
        k: int = 4,
        fetch_k: int = 20,
        lambda_mult: float = 0.5,
        **kwargs: Any,
    ) -> list[Document]:
        check_vector(embedding, "embedding")
        count = _shared.check_k(k)
        fetch = _shared.check_k(fetch_k, "fetch_k")
        matches = [
            match
            for match in self._search(
                None, embedding, fetch, kwargs, "max_marginal_relevance_search"
            )
            if match.id in self._store
        ]
        records = self._store.records()
        rows = [records.position(match.id) for match in matches]
        chosen = _shared.mmr_order(
            np.asarray(embedding, dtype=np.float64),
            records.vectors[rows],
            count,
            lambda_mult,
            records.sequence[rows].tolist(),
        )
        return [self._document(matches[i]) for i in chosen]

    def _document(self, match: Match) -> Document:
        """The document of a match, with the metadata the modelled integration adds."""
        document = _document(match)
        model = self._integration
        if model is not None and model.returned_metadata is not None:
            document.metadata.update(model.returned_metadata(match.id))
        return document

    @property
    def integration(self) -> Integration | None:
        """The LangChain integration modelled (``integration=``), or None."""
        return self._integration

    def _select_relevance_score_fn(self) -> Callable[[float], float]:
        model = self._integration
        own = None if model is None else model.relevance_of(self._store.profile.metric)
        return own or _shared.cosine_of_score(self._store.profile.score)


def _is_placebo(embedding: Any) -> bool:
    """True unless ``embedding`` is a LangChain model (an ``Embeddings`` or a duck-typed one)."""
    if isinstance(embedding, PlaceboEmbeddings):
        return True
    return not (
        isinstance(embedding, Embeddings)
        or all(callable(getattr(embedding, name, None)) for name in _METHODS)
    )


def _check_query(query: object) -> str:
    if not isinstance(query, str):
        raise PlaceboragTypeError(f"query={shown(query)} must be a str, not {type(query).__name__}")
    return query


_SEARCH_TYPES = ("similarity", "mmr", "similarity_score_threshold")
_SEARCH_KWARGS = {
    "similarity": ("k", "filter", "where"),
    "mmr": ("k", "filter", "where", "fetch_k", "lambda_mult"),
    "similarity_score_threshold": ("k", "filter", "where", "score_threshold"),
}


class PlaceboRetriever(BaseRetriever):
    """A LangChain retriever over a ``FakeVectorStore`` (or a :class:`PlaceboVectorStore`).

    ``k`` (default: the store profile's ``default_k``) and ``where`` (a placeborag filter, or a
    callable on the ``Document``) are set at construction and may be replaced per call:
    ``invoke(query, k=2, where={...})``. Like LangChain's ``VectorStoreRetriever`` it also
    takes ``search_type`` (``"similarity"``, ``"mmr"``, ``"similarity_score_threshold"``) and
    ``search_kwargs`` (``k``, ``filter``, ``fetch_k``, ``lambda_mult``, ``score_threshold``);
    an unknown key or keyword is refused. ``context`` passed to ``invoke`` is recorded by the
    store with the query. Failures the store was told to inject propagate unchanged.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    store: FakeVectorStore
    k: int | None = None
    where: Any = None
    search_type: str = "similarity"
    search_kwargs: dict[str, Any] = {}

    def __init__(
        self,
        store: FakeVectorStore | PlaceboVectorStore,
        *,
        k: int | None = None,
        where: Mapping[str, Any] | Callable[[Document], bool] | None = None,
        search_type: str = "similarity",
        search_kwargs: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if isinstance(store, PlaceboVectorStore):
            store = store.store
        if not isinstance(store, FakeVectorStore):
            raise PlaceboragTypeError(
                f"store={shown(store)} must be a FakeVectorStore or a PlaceboVectorStore, "
                f"not {type(store).__name__}"
            )
        unknown = {name: value for name, value in kwargs.items() if name not in _RETRIEVER_FIELDS}
        _shared.check_options(
            unknown,
            "PlaceboRetriever",
            ("store", "k", "where", "search_type", "search_kwargs", *sorted(_RETRIEVER_FIELDS)),
        )
        if search_type not in _SEARCH_TYPES:
            raise PlaceboragValueError(
                f"search_type={shown(search_type)} must be one of "
                f"{', '.join(repr(name) for name in _SEARCH_TYPES)}"
            )
        search = dict(search_kwargs or {})
        _shared.check_options(
            {name: v for name, v in search.items() if name not in _SEARCH_KWARGS[search_type]},
            f"PlaceboRetriever search_kwargs (search_type={shown(search_type)})",
            _SEARCH_KWARGS[search_type],
        )
        if "filter" in search and "where" in search:
            raise PlaceboragTypeError("search_kwargs has both 'filter' and 'where'; give one")
        if "where" in search:
            search["filter"] = search.pop("where")
        if search_type == "similarity_score_threshold" and "score_threshold" not in search:
            raise PlaceboragValueError(
                "search_type='similarity_score_threshold' needs search_kwargs['score_threshold']"
            )
        if k is not None and "k" in search:
            raise PlaceboragTypeError("k= and search_kwargs['k'] both given; give one")
        if where is not None and "filter" in search:
            raise PlaceboragTypeError("where= and search_kwargs['filter'] both given; give one")
        if k is None:
            k = search.pop("k", None)
        if where is None:
            where = search.pop("filter", None)
        if k is not None:
            _shared.check_k(k)
        if "fetch_k" in search:
            _shared.check_k(search["fetch_k"], "fetch_k")
        if "lambda_mult" in search:
            _shared.check_lambda_mult(search["lambda_mult"])
        if "score_threshold" in search:
            # Any finite number, as VectorStoreRetriever takes any float: the relevance lies
            # in [-1, 1], so a threshold beyond it keeps every document or none.
            search["score_threshold"] = check_real(
                search["score_threshold"], "score_threshold", "a finite real number (a float)"
            )
        if where is not None and not callable(where):
            where = dict(_checked_where(where, "where"))  # type: ignore[arg-type]
        super().__init__(
            store=store,
            k=k,
            where=where,
            search_type=search_type,
            search_kwargs=search,
            **kwargs,
        )

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        k: int | None = None,
        where: Mapping[str, Any] | Callable[[Document], bool] | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> list[Document]:
        vector_store = PlaceboVectorStore(store=self.store)
        where = where if where is not None else self.where
        count = k if k is not None else self.k
        if count is None:
            count = self.store.profile.default_k
        options: dict[str, Any] = {"filter": where, "context": context}
        if self.search_type == "mmr":
            return vector_store.max_marginal_relevance_search(
                query,
                count,
                self.search_kwargs.get("fetch_k", 20),
                self.search_kwargs.get("lambda_mult", 0.5),
                **options,
            )
        if self.search_type == "similarity_score_threshold":
            threshold = self.search_kwargs["score_threshold"]
            pairs = vector_store.similarity_search_with_relevance_scores(query, count, **options)
            return [doc for doc, score in pairs if score >= threshold]
        return vector_store.similarity_search(query, count, **options)

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        k: int | None = None,
        where: Mapping[str, Any] | Callable[[Document], bool] | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> list[Document]:
        # The sync search on a worker thread, as BaseRetriever's default does, but with the
        # per-call k, where and context (the default passes only the query).
        return await run_in_executor(
            None,
            self._get_relevant_documents,
            query,
            run_manager=run_manager.get_sync(),
            k=k,
            where=where,
            context=context,
        )


_RETRIEVER_FIELDS = frozenset(BaseRetriever.model_fields)


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
            raise PlaceboragTypeError(f"score_key={shown(score_key)} must be a non-empty str")
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
