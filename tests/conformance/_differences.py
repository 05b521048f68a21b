"""Every deliberate difference between a profile and its real engine, and the run's results.

A key is ``(engine, behaviour)`` as the suite names them; the value says why the profile differs.
``docs/profiles.md`` lists the same differences for users, and ``test_docs.py`` keeps the two in
step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Cell:
    agree: bool
    how: str
    engine: Any
    fake: Any

    @property
    def label(self) -> str:
        word = "agree" if self.agree else "differ"
        return f"{word} ({self.how})" if self.how else word


results: dict[tuple[str, str], Cell] = {}

_README_MISSING_KEY = (
    "placeborag's own rule: a key the record lacks never matches; "
    "filter_semantics='engine' gives the engine's answer"
)
_TYPED_VALUES = (
    "placeborag compares by kind (5 == 5.0, '7' != 7) and never coerces a stored value; "
    "the engine rejects or coerces the value"
)
_STRICT_BOUND = (
    "placeborag's default semantics keep 0.4.0's rule: a numeric bound against a stored string "
    "is a bug in the filter and raises 'cannot compare'; filter_semantics='engine' skips the "
    "record as the engine does"
)
_STRICT_EMPTY_LIST = (
    "placeborag's default semantics refuse an empty $in/$nin list (0.4.0's rule, and Chroma's); "
    "filter_semantics='engine' reads it as the engine does, as the empty set"
)
_K_ZERO = "placeborag raises on k=0 (a caller asking for nothing is a bug); the engine returns []"

DIFFERENCES: dict[tuple[str, str], str] = {
    ("chroma", "filter $ne, key missing"): _README_MISSING_KEY,
    ("chroma", "filter $nin, key missing"): _README_MISSING_KEY,
    ("chroma", "filter $gt, a str value stored"): _STRICT_BOUND,
    ("qdrant_local", "filter $ne, key missing"): _README_MISSING_KEY,
    ("qdrant_local", "filter $nin, key missing"): _README_MISSING_KEY,
    ("qdrant_local", "filter $in, empty list"): _STRICT_EMPTY_LIST,
    ("qdrant_local", "filter $nin, empty list"): _STRICT_EMPTY_LIST,
    ("qdrant_local", "filter $gt, a str value stored"): _STRICT_BOUND,
    ("qdrant_local", "filter int stored, float asked"): _TYPED_VALUES,
    ("qdrant_local", "filter int stored, float asked (filter_semantics='engine')"): _TYPED_VALUES,
    ("qdrant_edge", "filter $ne, key missing"): _README_MISSING_KEY,
    ("qdrant_edge", "filter $nin, key missing"): _README_MISSING_KEY,
    ("qdrant_edge", "filter $in, empty list"): _STRICT_EMPTY_LIST,
    ("qdrant_edge", "filter $nin, empty list"): _STRICT_EMPTY_LIST,
    ("qdrant_edge", "filter $gt, a str value stored"): _STRICT_BOUND,
    ("qdrant_edge", "filter int stored, float asked"): _TYPED_VALUES,
    ("qdrant_edge", "filter int stored, float asked (filter_semantics='engine')"): _TYPED_VALUES,
    ("qdrant_edge", "k = 0"): _K_ZERO,
    ("faiss", "ties: which ones a cutting k keeps"): (
        "FAISS keeps the first-inserted ties in heap order; the profile's reverse-insertion "
        "rule keeps the last-inserted ones"
    ),
    ("lancedb", "filter int stored, float asked"): _TYPED_VALUES,
    ("lancedb", "filter int stored, float asked (filter_semantics='engine')"): _TYPED_VALUES,
    ("lancedb", "filter int stored, str asked"): _TYPED_VALUES,
    ("lancedb", "filter int stored, str asked (filter_semantics='engine')"): _TYPED_VALUES,
    ("pgvector", "k = 0"): _K_ZERO,
    ("pgvector", "filter $in, empty list"): _STRICT_EMPTY_LIST,
    ("pgvector", "filter $nin, empty list"): _STRICT_EMPTY_LIST,
    ("pgvector", "filter $gt, a str value stored"): _TYPED_VALUES,
    ("pgvector", "filter $gt, a str value stored (filter_semantics='engine')"): _TYPED_VALUES,
    ("pgvector", "filter int stored, str asked"): _TYPED_VALUES,
    ("pgvector", "filter int stored, str asked (filter_semantics='engine')"): _TYPED_VALUES,
    ("langchain", "k = 0"): _K_ZERO,
    ("langchain", "filter $in, empty list"): _STRICT_EMPTY_LIST,
    ("langchain", "filter $nin, empty list"): _STRICT_EMPTY_LIST,
    ("langchain", "filter $ne, key missing"): _README_MISSING_KEY,
}
