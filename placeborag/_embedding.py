"""The embedder contract: what a store needs from an embedder, and the strategy it picks once.

:class:`Embedder` is what any embedder must offer (``embed_batch``); :class:`ExactEmbedder` is
the optional extension that lets a store rank exactly from the texts (a
:class:`~placeborag.FakeEmbedder` implements it). A store looks at the embedder once, when it
is built, through :func:`vectors_for`: the protocol decides, never the concrete class, so a
subclass of ``FakeEmbedder`` ranks as ``FakeEmbedder`` does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from placeborag._errors import PlaceboragTypeError, PlaceboragValueError
from placeborag._ranking import float_to_exact
from placeborag._validation import shown

__all__ = [
    "Embedder",
    "ExactEmbedder",
    "ExactVectors",
    "ModelVectors",
    "VectorsOnlyEmbedder",
    "vectors_for",
]


@runtime_checkable
class Embedder(Protocol):
    """What a store needs of any embedder: vectors for a batch of texts.

    ``embed_batch(texts)`` returns one row per text (any array-like of real numbers, every row
    the same length, finite and nonzero). Optional: ``dimensions`` (an int, so an empty store
    knows its width), ``model_name``, and ``embed_queries(texts)`` for query-side vectors
    (instruction-tuned models embed questions differently from documents).
    """

    def embed_batch(self, texts: Sequence[str]) -> Any: ...


@runtime_checkable
class ExactEmbedder(Embedder, Protocol):
    """The exact extension: an embedder whose vectors are normalised integer vectors.

    A store over one ranks near-ties from the integers (never from float noise), re-ranks only
    the rows float32 cannot order, and may embed a batch of writes lazily, before the next read:
    an exact embedder promises that embedding a str never fails and depends on the text alone.

    - ``exact_vectors(texts)``: int64 rows whose normalised form is each text's vector, and
      their exact squared norms (or None when they would cost extra work);
    - ``exact_query(text)``: the query's unit float64 vector, its int64 form, its squared norm
      (or None);
    - ``embed_rows(texts, dtype)``: the unit rows rounded once to ``dtype``;
    - ``embed_into(texts, out, rows)``: the same rows written into ``out[rows]``.
    """

    dimensions: int

    def exact_vectors(self, texts: Sequence[str]) -> tuple[np.ndarray, list[int] | None]: ...

    def exact_query(self, text: str) -> tuple[np.ndarray, np.ndarray, int | None]: ...

    def embed_rows(self, texts: Sequence[str], dtype: Any = ...) -> np.ndarray: ...

    def embed_into(self, texts: Sequence[str], out: np.ndarray, rows: np.ndarray) -> None: ...


QueryVector = tuple[np.ndarray, np.ndarray, "int | None"]


class ModelVectors:
    """The strategy for any :class:`Embedder`: its float vectors are the record.

    Vectors are embedded when written (outside the store's lock: a model may be slow or fail),
    and the stored float32 rows are the exact values ranked: the model is never called again
    to rank.
    """

    exact = False

    def __init__(self, embedder: Any) -> None:
        self.embedder = embedder

    @property
    def dimensions(self) -> int | None:
        dims = getattr(self.embedder, "dimensions", None)
        return dims if isinstance(dims, int) and not isinstance(dims, bool) and dims > 0 else None

    by_text: Callable[[list[str]], tuple[np.ndarray, list[int] | None]] | None = None

    def documents(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of ``texts`` (float64), not yet checked against the store."""
        returned = self.embedder.embed_batch(list(texts))
        try:
            vectors = np.array(returned, dtype=np.float64)
        except (TypeError, ValueError):
            raise PlaceboragValueError(
                f"the embedder returned {type(returned).__name__} that is not a rectangular "
                f"array of numbers for {len(texts)} texts"
            ) from None
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise PlaceboragValueError(
                f"the embedder returned an array of shape {vectors.shape} for {len(texts)} texts"
            )
        norms = np.sqrt(np.einsum("ij,ij->i", vectors, vectors))
        bad = np.flatnonzero(~np.isfinite(norms) | (norms == 0))
        if bad.size:
            raise PlaceboragValueError(
                f"the embedder returned a zero or non-finite vector for {shown(texts[bad[0]])}"
            )
        unit: np.ndarray = np.divide(vectors, norms[:, None], out=vectors)
        return unit

    def fill(self, texts: Sequence[str], out: np.ndarray, rows: np.ndarray) -> None:
        out[rows] = self.documents(texts)

    def query(self, text: str, dimensions: int | None) -> QueryVector:
        """A query's float vector, its exact integer form, and None (the norm is computed)."""
        embed = getattr(self.embedder, "embed_queries", None) or self.embedder.embed_batch
        floats = np.asarray(embed([text]), dtype=np.float64)
        if floats.shape != (1, dimensions):
            raise PlaceboragValueError(
                f"the embedder returned an array of shape {floats.shape} for the query "
                f"{shown(text)}"
            )
        if not np.all(np.isfinite(floats)) or not np.any(floats):
            raise PlaceboragValueError(
                f"the embedder returned a zero or non-finite vector for the query {shown(text)}"
            )
        return floats[0], float_to_exact(floats)[0], None

    def is_query_vector(self, vector: np.ndarray, text: str) -> bool:
        """Whether ``vector`` is the exact form of ``text``'s query (only an exact embedder
        knows: a model's own vectors are ranked as given)."""
        return False


class ExactVectors(ModelVectors):
    """The strategy for an :class:`ExactEmbedder`: rank from the integers, embed lazily."""

    exact = True

    def __init__(self, embedder: Any) -> None:
        super().__init__(embedder)
        # Bound once: read on every query.
        self.by_text = embedder.exact_vectors
        self.query_of = embedder.exact_query

    @property
    def dimensions(self) -> int | None:
        return int(self.embedder.dimensions)

    def documents(self, texts: Sequence[str]) -> np.ndarray:
        rows: np.ndarray = self.embedder.embed_rows(texts, np.float32)
        return rows

    def fill(self, texts: Sequence[str], out: np.ndarray, rows: np.ndarray) -> None:
        self.embedder.embed_into(texts, out, rows)

    def query(self, text: str, dimensions: int | None) -> QueryVector:
        vector: QueryVector = self.query_of(text)
        return vector

    def is_query_vector(self, vector: np.ndarray, text: str) -> bool:
        own = self.embedder.exact_query(text)[0]
        return bool(vector.shape == own.shape and np.array_equal(vector, own))


# The protocols' members, as ``isinstance`` against a runtime-checkable protocol reads them
# (a method present and not None, a data member present). Python 3.11 collects them again on
# every such ``isinstance`` (hundreds of bytecodes): a store is built in every test, so
# :func:`vectors_for` checks these names instead, with the same answer (tested).
_EXACT_METHODS = ("embed_batch", "exact_vectors", "exact_query", "embed_rows", "embed_into")
_MISSING = object()


def _offers(embedder: Any, methods: tuple[str, ...], data: tuple[str, ...] = ()) -> bool:
    for name in methods:
        if getattr(embedder, name, None) is None:
            return False
    return all(getattr(embedder, name, _MISSING) is not _MISSING for name in data)


def vectors_for(embedder: Any) -> ModelVectors:
    """The strategy a store uses for ``embedder``, chosen from the protocols it implements
    (:class:`ExactEmbedder`, else :class:`Embedder`)."""
    if _offers(embedder, _EXACT_METHODS, ("dimensions",)):
        return ExactVectors(embedder)
    if callable(getattr(embedder, "embed_batch", None)):
        return ModelVectors(embedder)
    raise PlaceboragTypeError(
        f"embedder={shown(embedder)} must have an embed_batch(texts) method "
        "(a FakeEmbedder, a ReplayEmbedder or a compatible object)"
    )


class VectorsOnlyEmbedder:
    """The embedder of :meth:`FakeVectorStore.from_vectors`: dimensions, and no texts."""

    model_name = "vectors-only"

    def __init__(self, dimensions: int | None) -> None:
        self.dimensions = dimensions

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        first = f" {shown(texts[0])}" if len(texts) else ""
        raise PlaceboragValueError(
            f"this store was built from vectors and cannot embed the text{first}; "
            "use query_by_vector(vector), or build the store with an embedder "
            "(FakeVectorStore(embedder=...) and upsert_vectors())"
        )

    def embed(self, text: str) -> list[float]:
        row: list[float] = self.embed_batch([text])[0].tolist()
        return row

    def __repr__(self) -> str:
        return f"<vectors-only embedder, dimensions={self.dimensions}>"
