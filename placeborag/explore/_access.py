"""The explorer's view of a store, made from the store's public inspection API alone.

:func:`store_rows` is :meth:`FakeVectorStore.records` in the lists the views index by position;
:func:`trace_query` is :meth:`FakeVectorStore.trace` under the names the views use (``status``
for the stage); :func:`with_options` and :func:`reembedded` are the store's own twins. Nothing
here reads a private attribute of the store or its embedder.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from placeborag import STAGES, FakeVectorStore, PlaceboragTypeError
from placeborag import QueryTrace as StoreTrace
from placeborag.toolkit import BELOW, DROPPED, FILTERED, LOST, RETURNED, TIED, UNREACHABLE, shown

__all__ = [
    "BELOW",
    "DROPPED",
    "FILTERED",
    "LOST",
    "RETURNED",
    "STATUSES",
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

#: The stages a trace names (the store's :data:`placeborag.STAGES`).
STATUSES = STAGES


@dataclass(frozen=True)
class StoreRows:
    """The visible records of a store in insertion order, with their float32 vectors.

    The columns are the store's records view, not copies: ``metadatas[i]`` is a read-only
    mapping (``dict(...)`` it to change or serialise it).
    """

    ids: Sequence[str]
    texts: Sequence[str]
    metadatas: Sequence[Mapping[str, Any]]
    vectors: np.ndarray  # (n, d) float32, read-only: the store's own

    @cached_property
    def position(self) -> dict[str, int]:
        """id -> index in these rows (built once per snapshot)."""
        return {doc_id: i for i, doc_id in enumerate(self.ids)}


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
    )


@dataclass(frozen=True)
class QueryTrace:
    """A store's :class:`placeborag.QueryTrace`, under the names the explorer's views use.

    ``status[i]`` is the stage (one of :data:`STATUSES`); the other arrays are the store's.
    """

    trace: StoreTrace

    def __post_init__(self) -> None:
        check_instance(self.trace, "trace", StoreTrace, "a placeborag.QueryTrace (store.trace())")

    def __getattr__(self, name: str) -> Any:
        # Every field of the store's trace reads through (frozen: nothing is copied).
        if name == "trace":  # not set yet (unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.trace, name)

    @property
    def status(self) -> np.ndarray:
        return self.trace.stage

    @property
    def ids(self) -> tuple[str, ...]:
        """The ids as the views index them: the store's records' own tuple (the same object
        for every trace of the same records, so a view can tell it needs no new index)."""
        ids: tuple[str, ...] = self.trace.ids
        return ids

    @property
    def top_k(self) -> list[str]:
        return list(self.trace.top_k)

    @property
    def ideal_top_k(self) -> list[str]:
        return list(self.trace.ideal_top_k)


def trace_query(
    store: FakeVectorStore,
    text: str,
    k: int,
    where: Mapping[str, Any] | None = None,
    *,
    rows: StoreRows | None = None,
) -> QueryTrace:
    """``store.trace(text, k, where)``: not recorded, never an injected failure.

    ``rows`` is accepted for the callers that already hold the store's rows; the trace is
    aligned with them because both follow the store's records.
    """
    check_instance(store, "store", FakeVectorStore, "a FakeVectorStore")
    check_instance(rows, "rows", StoreRows, "StoreRows (store_rows(store)) or None", none=True)
    return QueryTrace(store.trace(text, k, where))


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
