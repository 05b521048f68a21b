"""The explorer's view of a store, made from the store's public inspection API alone.

:func:`store_rows` is :meth:`FakeVectorStore.records` in the lists the views index by position;
:func:`trace_query` is :meth:`FakeVectorStore.trace` (the store's own
:class:`placeborag.QueryTrace`, with its stage names, :data:`placeborag.STAGES`);
:func:`with_options` and :func:`reembedded` are the store's own twins. Nothing here reads a
private attribute of the store or its embedder.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from placeborag import (
    STAGES,
    FakeVectorStore,
    PlaceboragTypeError,
    QueryTrace,
)
from placeborag._trace import record_index
from placeborag.toolkit import BELOW, DROPPED, FILTERED, LOST, RETURNED, TIED, UNREACHABLE, shown

__all__ = [
    "BELOW",
    "DROPPED",
    "FILTERED",
    "LOST",
    "RETURNED",
    "STAGES",
    "TIED",
    "UNREACHABLE",
    "QueryTrace",
    "StoreRows",
    "check_instance",
    "reembedded",
    "store_rows",
    "trace_query",
    "with_options",
]


@dataclass(frozen=True)
class StoreRows:
    """The visible records of a store in insertion order, with their float32 vectors.

    The columns are the store's records view, not copies: ``metadatas[i]`` is a read-only
    mapping (``dict(...)`` it to change or serialise it). Every stored record is a row: an id
    written again under ``on_existing_id="duplicate"`` has one row per record, told apart by
    ``occurrence[i]`` (0 for its first record, 1 for the next...).
    """

    ids: Sequence[str]
    texts: Sequence[str]
    metadatas: Sequence[Mapping[str, Any]]
    vectors: np.ndarray  # (n, d) float32, read-only: the store's own
    occurrence: Sequence[int] = ()

    def __post_init__(self) -> None:
        if len(self.occurrence) != len(self.ids):  # no duplicates: every record the first
            object.__setattr__(self, "occurrence", (0,) * len(self.ids))

    @cached_property
    def position(self) -> dict[str, int]:
        """id -> index in these rows (built once per snapshot): an id's newest record, the
        one ``store.get`` returns, where it has several."""
        return {doc_id: i for i, doc_id in enumerate(self.ids)}

    @cached_property
    def duplicated(self) -> bool:
        """Whether some id has more than one record."""
        return any(self.occurrence)

    def at(self, doc_id: str, occurrence: int | None = None) -> int:
        """The index of ``doc_id``'s record number ``occurrence`` (None: its newest);
        an unknown id or occurrence raises, naming what there is (``record_index``)."""
        return record_index(self.ids, doc_id, occurrence, index=self.position)


def check_instance(
    value: object, name: str, kind: type, allowed: str, *, none: bool = False
) -> None:
    """``value`` is a ``kind`` (or None, when ``none``), else ``name=value must be <allowed>``."""
    if not (isinstance(value, kind) or (none and value is None)):
        raise PlaceboragTypeError(f"{name}={shown(value)} must be {allowed}")


def store_rows(store: FakeVectorStore) -> StoreRows:
    check_instance(store, "store", FakeVectorStore, "a FakeVectorStore")
    records = store.records()
    return StoreRows(
        ids=records.ids,
        texts=records.texts,
        metadatas=records.metadata,
        vectors=records.vectors,
        occurrence=records.occurrence,
    )


def trace_query(
    store: FakeVectorStore,
    text: str,
    k: int,
    where: Mapping[str, Any] | None = None,
    *,
    rows: StoreRows | None = None,
) -> QueryTrace:
    """``store.trace(text, k, where)``, the store's own :class:`placeborag.QueryTrace`: not
    recorded, never an injected failure.

    ``rows`` is accepted for the callers that already hold the store's rows; the trace is
    aligned with them because both follow the store's records.
    """
    check_instance(store, "store", FakeVectorStore, "a FakeVectorStore")
    check_instance(rows, "rows", StoreRows, "StoreRows (store_rows(store)) or None", none=True)
    return store.trace(text, k, where)


def with_options(store: FakeVectorStore, **options: Any) -> FakeVectorStore:
    """``store.with_options(**options)``: the same records under other store options."""
    return store.with_options(**options)


def reembedded(
    store: FakeVectorStore,
    embedder: Any,
    *,
    reuse: tuple[FakeVectorStore, list[str]] | None = None,
) -> tuple[FakeVectorStore, StoreRows]:
    """``store.reembedded(embedder, reuse=reuse)`` and the new store's rows."""
    twin = store.reembedded(embedder, reuse=reuse)
    return twin, store_rows(twin)
