"""Precomputed vectors as a store: for looking at a real model's geometry in the explorer."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from placeborag import FakeVectorStore
from placeborag._errors import PlaceboragTypeError, PlaceboragValueError
from placeborag._validation import check_str, check_texts, shown

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
        extra = list((queries or {}).items())
        if extra:
            for text, _ in extra:
                check_str(text, "queries key")
            qs = _matrix([v for _, v in extra], "query vectors")
            if qs.ndim != 2 or qs.shape[1] != array.shape[1]:
                raise PlaceboragValueError(
                    f"query vectors have shape {qs.shape}; expected (n, {array.shape[1]})"
                )
            array = np.vstack([array, qs])
        self._vectors = array
        self._row = {t: i for i, t in enumerate([*texts, *(t for t, _ in extra)])}
        self.model_name = model_name
        self.dimensions = int(array.shape[1])

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        rows = []
        for text in check_texts(texts, "texts"):
            row = self._row.get(text)
            if row is None:
                close = difflib.get_close_matches(text, list(self._row), n=3)
                hint = f"; nearest known texts: {', '.join(map(repr, close))}" if close else ""
                raise PlaceboragValueError(
                    f"text={shown(text)} has no precomputed vector{hint}; pass its vector in"
                    " queries="
                )
            rows.append(row)
        return self._vectors[np.asarray(rows, dtype=np.int64)].reshape(len(rows), self.dimensions)

    def embed(self, text: str) -> list[float]:
        return [float(v) for v in self.embed_batch([text])[0]]


def _matrix(values: object, name: str) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=np.float64)
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
    table = VectorTable(texts, vectors, queries=queries)
    store = FakeVectorStore(embedder=table, **store_options)
    # Each record gets its own row (two records with one text may have different vectors);
    # the table is only asked for query vectors.
    store.upsert_vectors(list(ids), vectors, list(texts), metadatas)
    store.refresh()
    return store
