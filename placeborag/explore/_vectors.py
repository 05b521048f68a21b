"""Precomputed vectors as a store: for looking at a real model's geometry in the explorer."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from placeborag import FakeVectorStore, PlaceboragTypeError, PlaceboragValueError
from placeborag._validation import nearest
from placeborag.toolkit import check_mapping, check_str, check_texts, shown

__all__ = ["VectorTable", "store_from_vectors"]


class VectorTable:
    """An embedder that looks texts up in a table of precomputed vectors.

    Queries must be texts of the table or be given their own vector in ``queries``; anything
    else raises, naming the nearest known texts.
    """

    def __init__(
        self,
        texts: Sequence[str],
        vectors: np.ndarray,
        *,
        queries: Mapping[str, Sequence[float]] | None = None,
        model_name: str = "precomputed",
    ) -> None:
        texts = check_texts(texts, "texts")
        model_name = check_str(model_name, "model_name")
        array = _matrix(vectors, "vectors")
        if array.ndim != 2 or array.shape[0] != len(texts):
            raise PlaceboragValueError(
                f"vectors has shape {array.shape}; expected ({len(texts)}, dimensions)"
            )
        extra = list(check_mapping(queries, "queries").items()) if queries is not None else []
        if extra:
            for text, _ in extra:
                check_str(text, "queries key")
            qs = _matrix([v for _, v in extra], "query vectors")
            if qs.ndim != 2 or qs.shape[1] != array.shape[1]:
                raise PlaceboragValueError(
                    f"query vectors have shape {qs.shape}; expected (n, {array.shape[1]})"
                )
        else:
            qs = np.zeros((0, array.shape[1]))
        self._vectors = array  # the documents' rows, then the queries' (float64) below them
        self._queries = qs
        self._texts = [*texts, *(t for t, _ in extra)]
        self._index: dict[str, int] | None = None  # text -> its last row, made when needed
        self.model_name = model_name
        self.dimensions = int(array.shape[1])

    def _row(self, text: str, few: bool) -> int | None:
        """The last row holding ``text`` (a query text given in ``queries`` comes after the
        documents). A few texts are looked for in the list; more make the index once."""
        if self._index is None and few:
            try:
                return len(self._texts) - 1 - self._texts[::-1].index(text)
            except ValueError:
                return None
        if self._index is None:
            self._index = {t: i for i, t in enumerate(self._texts)}
        return self._index.get(text)

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        rows = []
        wanted = check_texts(texts, "texts")
        few = len(wanted) <= _SCANNED
        for text in wanted:
            row = self._row(text, few)
            if row is None:
                close = nearest(text, self._texts)
                hint = f"; nearest known texts: {', '.join(map(repr, close))}" if close else ""
                raise PlaceboragValueError(
                    f"text={shown(text)} has no precomputed vector{hint}; pass its vector in"
                    " queries="
                )
            rows.append(row)
        at = np.asarray(rows, dtype=np.int64)
        n = self._vectors.shape[0]
        docs = at < n
        out = np.empty((len(rows), self.dimensions))
        out[docs] = self._vectors[at[docs]]
        out[~docs] = self._queries[at[~docs] - n]
        return out

    def embed(self, text: str) -> list[float]:
        return [float(v) for v in self.embed_batch([text])[0]]


_SCANNED = 4  # texts per call looked up by scanning the list (no index of a million texts)


def _matrix(values: object, name: str) -> np.ndarray:
    """A copy of ``values`` as float64, or as float32 when given as float32 (the values are
    the same either way; a million 32-dimensional rows then take 128 MB, not 256 MB)."""
    try:
        given = np.asarray(values)
        kind = np.float32 if given.dtype == np.float32 else np.float64
        array = np.array(given, dtype=kind)
    except (TypeError, ValueError, OverflowError):
        raise PlaceboragTypeError(
            f"{name}={shown(values)} must be rows of numbers, one row per text, all one length"
        ) from None
    if not np.isfinite(array).all():
        raise PlaceboragValueError(f"{name} holds a value that is not finite; every value must be")
    return array


def store_from_vectors(
    vectors: np.ndarray,
    ids: Sequence[str],
    texts: Sequence[str],
    metadatas: Sequence[Mapping[str, Any] | None] | None = None,
    *,
    queries: Mapping[str, Sequence[float]] | None = None,
    **store_options: Any,
) -> FakeVectorStore:
    """A FakeVectorStore over precomputed vectors (``queries`` adds vectors for query texts).

    ``vectors[i]`` is the vector of record ``ids[i]``; a text query is looked up in ``texts``
    and ``queries`` (:meth:`~placeborag.FakeVectorStore.query_by_vector` takes any vector).
    """
    if "embedder" in store_options:
        raise PlaceboragTypeError(
            f"embedder={shown(store_options['embedder'])} cannot be given: the store's embedder"
            " is a VectorTable of these vectors (and queries=)"
        )
    ids = check_texts(ids, "ids")
    table = VectorTable(texts, vectors, queries=queries)
    store = FakeVectorStore(embedder=table, **store_options)
    # Each record gets its own row (two records with one text may have different vectors);
    # the table is only asked for query vectors.
    store.upsert_vectors(ids, vectors, list(texts), metadatas)
    store.refresh()
    return store
