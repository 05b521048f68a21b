"""The basic result types every layer of a store shares: a match and the record of a query.

They sit below the query pipeline, the query log, the trace and the doubles that answer with
matches (the hybrid retriever, the knowledge store), so that none of those imports another to
name a result. Plain frozen dataclasses: importing this module loads no numpy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Match", "QueryRecord"]


@dataclass(frozen=True)
class Match:
    """One result of a query: the record and the score in the profile's convention."""

    id: str
    text: str
    metadata: dict[str, Any]
    score: float


@dataclass(frozen=True)
class QueryRecord:
    """What a store was asked: kept for every query, including ones that failed.

    ``ids`` is the candidate restriction a query was given; ``vector`` the query vector of
    :meth:`~placeborag.FakeVectorStore.query_by_vector` (unit length; ``text`` is then ``""``).
    """

    text: str
    k: int
    where: dict[str, Any] | None
    context: dict[str, Any] | None = None
    ids: tuple[str, ...] | None = None
    vector: tuple[float, ...] | None = field(default=None, repr=False)
