"""What an exported module calls things: its fixture, its documents (``ids=``), and the rows
it holds for them, each document's own text and what was embedded in its place.

Every name here is made so it cannot collide with one the module defines itself
(:data:`MODULE_NAMES`), whatever the scenario or the application called things.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from placeborag import PlaceboragTypeError, PlaceboragValueError
from placeborag.explore._literals import identifier, plain
from placeborag._documents import document_metadata, document_text
from placeborag.toolkit import shown

__all__ = ["MODULE_NAMES", "document_names", "document_rows", "fixture_name"]

#: The names an exported module defines or imports itself (besides its tests and fixture).
MODULE_NAMES = frozenset(
    {
        "datetime",
        "Path",
        "pytest",
        "FakeEmbedder",
        "FakeVectorStore",
        "Recording",
        "DOCUMENTS",
        "EMBEDDED",
        "HEADERS",
        "QUERY",
        "K",
        "WHERE",
        "VECTORS",
        "RECORDING_SHA256",
        "build_store",
    }
)
#: The longest stem a fixture name takes from the scenario's name (cut between words).
_FIXTURE_STEM = 24


def fixture_name(name: str) -> str:
    """The fixture's name for a scenario called ``name``: its words as ``[a-z0-9_]`` (cut
    between words, at most 24 characters) and ``_store``; never a name the module defines
    itself (``build_store``) nor one pytest would collect as a test (``test...``)."""
    stem = _whole_words(identifier(name, 10_000), _FIXTURE_STEM) or "designed"
    fixture = f"{stem}_store"
    if fixture in MODULE_NAMES or fixture.startswith("test"):
        fixture = f"designed_{fixture}"
    return fixture


def _whole_words(name: str, limit: int) -> str:
    """``name`` cut to at most ``limit`` characters between two words (a first word longer
    than that is cut itself)."""
    if len(name) <= limit:
        return name
    cut = name[: limit + 1].rfind("_")
    return name[:cut] if cut > 0 else name[:limit]


def document_names(records: Any, positions: Sequence[int], ids: Any) -> list[str]:
    """The id each exported record has in the module (``ids=``; see :func:`build_export`)."""
    if ids is None:
        return [records.ids[p] for p in positions]
    if isinstance(ids, str):
        named = _names_from_key(records, positions, ids)
    elif isinstance(ids, Mapping):
        named = {}
        for key, value in ids.items():
            if not isinstance(key, str) or not isinstance(value, str) or not value:
                raise PlaceboragTypeError(
                    f"ids={shown(ids)} must map the store's ids to non-empty str names; "
                    f"{shown(key)}: {shown(value)} does not"
                )
            records.position(key)  # an unknown id raises, naming the nearest ones
            named[key] = value
    else:
        raise PlaceboragTypeError(
            f"ids={shown(ids)} must be None (the store's ids), a mapping of the store's ids to "
            "names, or a metadata key whose value names each document"
        )
    names = [named.get(records.ids[p], records.ids[p]) for p in positions]
    owner: dict[str, str] = {}
    for p, doc_name in zip(positions, names):
        first = owner.setdefault(doc_name, records.ids[p])
        if first != records.ids[p]:
            raise PlaceboragValueError(
                f"ids={shown(ids)} names both {shown(first)} and {shown(records.ids[p])} "
                f"{shown(doc_name)}; every exported document needs a name of its own"
            )
    return names


def _names_from_key(records: Any, positions: Sequence[int], key: str) -> dict[str, str]:
    """Each exported id named by its metadata ``key``, numbered ``#1``, ``#2``... in the
    store's order where records share a value."""
    exported = {records.ids[p] for p in positions}
    values: dict[str, str] = {}
    for doc_id, metadata in zip(records.ids, records.metadata):
        if doc_id in values:
            continue
        value = document_metadata(metadata).get(key)
        if value is None or isinstance(value, bool) or not isinstance(value, (str, int)):
            if doc_id in exported:
                raise PlaceboragValueError(
                    f"ids={key!r} names documents by their metadata {key!r}, and document "
                    f"{shown(doc_id)} has {key}={shown(value)}; give every document a str "
                    "value there, or pass ids= a mapping"
                )
            continue
        values[doc_id] = str(value)
    counts: dict[str, int] = {}
    for value in values.values():
        counts[value] = counts.get(value, 0) + 1
    seen: dict[str, int] = {}
    named = {}
    for doc_id, value in values.items():
        if counts[value] == 1:
            named[doc_id] = value
        else:
            seen[value] = seen.get(value, 0) + 1
            named[doc_id] = f"{value}#{seen[value]}"
    return {doc_id: named[doc_id] for doc_id in exported}


def document_rows(
    records: Any, positions: Sequence[int], names: Sequence[str], keys: set[str] | None
) -> tuple[list[tuple[str, str, dict[str, Any]]], dict[str, str] | None]:
    """The exported rows (name, the document's own text, the metadata kept) and, by name,
    what was embedded where it is not the document's text (a LlamaIndex node's header)."""
    documents = []
    embedded: dict[str, str] | None = {}
    for p, doc_name in zip(positions, names):
        doc_id, stored, metadata = records.ids[p], records.texts[p], records.metadata[p]
        meta = document_metadata(metadata)
        kept = meta if keys is None else {key: meta[key] for key in meta if key in keys}
        own = document_text(stored, metadata)
        documents.append(
            (
                plain(doc_name, "id"),
                plain(own, f"the text of id {doc_id!r}"),
                plain(kept, f"the metadata of id {doc_id!r}"),
            )
        )
        if own != stored:
            text = plain(stored, f"the embedded text of id {doc_id!r}")
            if embedded is not None and embedded.setdefault(doc_name, text) != text:
                embedded = None  # one id, two embedded texts: only a recording holds both
    return documents, embedded
