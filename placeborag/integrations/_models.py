"""Integration models: what a framework's own integration for an engine does on top of it.

A backend profile models the engine; a real application reaches the engine through its
framework's integration package (``llama-index-vector-stores-chroma``, ...), which decides
which query arguments reach the engine, how scores are converted, what a repeated id and
``k=0`` do. An :class:`Integration` is one such package, measured against the real one
(``tests/integrations/test_integration_models.py`` runs both on the same operations). An
adapter takes one as ``integration="<engine>"``; it implies the engine's profile.

It imports no framework.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from placeborag import PlaceboragTypeError, PlaceboragValueError
from placeborag.toolkit import shown

__all__ = [
    "HAYSTACK",
    "LANGCHAIN",
    "LLAMA_INDEX",
    "Integration",
    "integration_for",
    "store_options_for",
]


@dataclass(frozen=True)
class Integration:
    """One framework's integration package for one engine, as measured.

    ``package`` is the integration measured (name and version); ``profile`` the engine's
    profile it implies; ``doc_ids``/``node_ids`` whether a query's document and node ids
    restrict the candidates (False: the integration drops them silently); ``similarity``
    converts the engine's number into the score the framework reports; ``on_existing_id`` is
    what writing a stored id does; ``k_zero`` the error type ``k=0`` raises (None: no
    results); ``uuid_ids`` whether ids must be UUIDs; ``filter_semantics`` the store option
    that makes ``!=``/``nin`` treat a missing key as the integration's filters do.
    """

    name: str
    package: str
    profile: str
    doc_ids: bool
    node_ids: bool
    similarity: Callable[[float], float] = field(repr=False, compare=False)
    similarity_label: str
    on_existing_id: str
    k_zero: type[Exception] | None
    k_zero_message: str
    uuid_ids: bool
    filter_semantics: str
    # LangChain's relevance score of the reported number, by the profile's metric (None: the
    # adapter's own, the cosine recovered); the metadata keys the integration adds to each
    # document it returns, from the id.
    relevance: dict[str, Callable[[float], float]] | None = field(
        default=None, repr=False, compare=False
    )
    returned_metadata: Callable[[str], dict[str, str]] | None = field(
        default=None, repr=False, compare=False
    )
    # Haystack: whether DuplicatePolicy.NONE fails on an existing id, and whether the
    # retriever can scale scores at all.
    none_policy_fails: bool = False
    scale_score: bool = True

    def relevance_of(self, metric: str) -> Callable[[float], float] | None:
        """The relevance function for ``metric``, or None where the integration has none here."""
        return None if self.relevance is None else self.relevance.get(metric)

    def check_k(self, k: int, name: str = "similarity_top_k") -> None:
        """Raise as the integration does for ``k=0`` (a no-op when it returns nothing)."""
        if k == 0 and self.k_zero is not None:
            error = PlaceboragTypeError if self.k_zero is TypeError else PlaceboragValueError
            raise error(f"{name}=0: {self.k_zero_message} ({self.package})")

    def check_ids(self, ids: list[str], what: str = "node id") -> None:
        """Refuse ids the engine refuses, before anything is written."""
        if not self.uuid_ids:
            return
        for value in ids:
            try:
                uuid.UUID(value)
            except ValueError:
                raise PlaceboragValueError(
                    f"{what} {shown(value)} is not a valid UUID, and {self.package} writes "
                    "ids as Qdrant point ids (a UUID or an unsigned int)"
                ) from None


def _exp_minus(distance: float) -> float:
    return math.exp(-distance)


def _as_given(score: float) -> float:
    return score


# What each engine says when asked for no result, whichever framework asks it.
_CHROMA_K_ZERO = (
    "Chroma refuses n_results=0 ('Number of requested results 0, cannot be negative, or zero')"
)
_QDRANT_K_ZERO = "Qdrant refuses limit=0 ('limit value 0 is invalid')"

# Measured with llama-index-core 0.14.25, chromadb 1.5.9 (EphemeralClient) and qdrant-client
# 1.20.0 (local mode).
LLAMA_INDEX: dict[str, Integration] = {
    "chroma": Integration(
        name="chroma",
        package="llama-index-vector-stores-chroma 0.6.0",
        profile="chroma",
        doc_ids=False,
        node_ids=False,
        similarity=_exp_minus,
        similarity_label="exp(-distance), higher is better",
        on_existing_id="ignore",
        k_zero=TypeError,
        k_zero_message=_CHROMA_K_ZERO,
        uuid_ids=False,
        filter_semantics="engine",
    ),
    "qdrant": Integration(
        name="qdrant",
        package="llama-index-vector-stores-qdrant 0.10.4",
        profile="qdrant",
        doc_ids=True,
        node_ids=True,
        similarity=_as_given,
        similarity_label="the engine's score (cosine similarity), higher is better",
        on_existing_id="replace",
        k_zero=ValueError,
        k_zero_message=_QDRANT_K_ZERO,
        uuid_ids=True,
        filter_semantics="strict",
    ),
}


def _one_minus(distance: float) -> float:
    return 1.0 - distance


def _one_minus_over_sqrt2(distance: float) -> float:
    return 1.0 - distance / math.sqrt(2.0)


def _half_plus_half(similarity: float) -> float:
    return (1.0 + similarity) / 2.0


def _qdrant_payload_keys(value: str) -> dict[str, str]:
    return {"_id": value, "_collection_name": "placebo"}


# Measured with langchain-core 1.8.3, chromadb 1.5.9 (EphemeralClient) and qdrant-client
# 1.20.0 (local mode). Both upsert an existing id; both take a where/Filter of their own.
LANGCHAIN: dict[str, Integration] = {
    "chroma": Integration(
        name="chroma",
        package="langchain-chroma 1.1.0",
        profile="chroma",
        doc_ids=True,
        node_ids=True,
        similarity=_as_given,
        similarity_label="Chroma's distance, lower is better",
        on_existing_id="replace",
        k_zero=TypeError,
        k_zero_message=_CHROMA_K_ZERO,
        uuid_ids=False,
        filter_semantics="engine",
        relevance={"cosine": _one_minus, "l2": _one_minus_over_sqrt2},
    ),
    "qdrant": Integration(
        name="qdrant",
        package="langchain-qdrant 1.1.0",
        profile="qdrant",
        doc_ids=True,
        node_ids=True,
        similarity=_as_given,
        similarity_label="the engine's score (cosine similarity), higher is better",
        on_existing_id="replace",
        k_zero=ValueError,
        k_zero_message=_QDRANT_K_ZERO,
        uuid_ids=True,
        filter_semantics="strict",
        relevance={"cosine": _half_plus_half, "l2": _one_minus_over_sqrt2},
        returned_metadata=_qdrant_payload_keys,
    ),
}


# Measured with haystack-ai 3.4.1, chromadb 1.5.9 (in-process) and qdrant-client 1.20.0
# (local mode). Both treat DuplicatePolicy.NONE as FAIL; both filter with Haystack's syntax.
HAYSTACK: dict[str, Integration] = {
    "chroma": Integration(
        name="chroma",
        package="chroma-haystack 5.0.0",
        profile="chroma",
        doc_ids=True,
        node_ids=True,
        similarity=_as_given,
        similarity_label="Chroma's distance, lower is better (no scale_score)",
        on_existing_id="replace",
        k_zero=TypeError,
        k_zero_message=_CHROMA_K_ZERO,
        uuid_ids=False,
        filter_semantics="engine",
        none_policy_fails=True,
        scale_score=False,
    ),
    "qdrant": Integration(
        name="qdrant",
        package="qdrant-haystack 13.1.0",
        profile="qdrant",
        doc_ids=True,
        node_ids=True,
        similarity=_as_given,
        similarity_label="cosine similarity; scale_score=True gives (1 + cos) / 2",
        on_existing_id="replace",
        k_zero=ValueError,
        k_zero_message=_QDRANT_K_ZERO,
        uuid_ids=False,  # qdrant-haystack hashes any id into a UUID
        filter_semantics="engine",
        none_policy_fails=True,
    ),
}


def integration_for(
    table: dict[str, Integration], value: object, framework: str
) -> Integration | None:
    """The integration named ``value`` in ``table`` (None for None), or a named error."""
    if value is None:
        return None
    if not isinstance(value, str) or value not in table:
        allowed = ", ".join(repr(name) for name in table)
        raise PlaceboragValueError(
            f"integration={shown(value)} must be one of {allowed} (the engine whose {framework} "
            "integration to model) or None"
        )
    return table[value]


def store_options_for(model: Integration, store: Any, options: dict[str, Any]) -> dict[str, Any]:
    """The store options ``integration=`` implies: its engine's profile, existing-id rule and
    filter semantics, unless given; a profile of another engine is refused. ``store`` is a
    ``FakeVectorStore`` given as ``store=`` (its options stay its own), or None."""
    given = store.profile.name if store is not None else options.get("profile", model.profile)
    if given != model.profile:
        raise PlaceboragValueError(
            f"integration={shown(model.name)} models {model.package}, which runs on the "
            f"{shown(model.profile)} profile, not {shown(given)}; drop profile= or give "
            f"profile={shown(model.profile)}"
        )
    if store is not None:
        return options
    return {
        "profile": model.profile,
        "on_existing_id": model.on_existing_id,
        "filter_semantics": model.filter_semantics,
        **options,
    }
