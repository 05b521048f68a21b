"""Scenarios: the documents, embedder and store options, and query the explorer starts from.

A :class:`Scenario` is a plain dataclass that round-trips through JSON, so a picture in the
explorer, the static report and an exported pytest module can all be rebuilt from one file.
The built-in demo is a small bilingual support knowledge base; :meth:`Scenario.scaled` grows
any scenario to N documents with deterministic variants for the benchmarks.
"""

from __future__ import annotations

import dataclasses
import json
import numbers
import os
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from placeborag import (
    FakeEmbedder,
    FakeVectorStore,
    PlaceboragTypeError,
    PlaceboragValueError,
    StoreOptions,
    StoreRecords,
    get_profile,
)
from placeborag._files import read_regular
from placeborag._threads import gc_paused
from placeborag._validation import dump_json, load_json
from placeborag.toolkit import (
    check_bool,
    check_int,
    check_k,
    check_mapping,
    check_path,
    check_str,
    check_unicode,
    check_unicode_tree,
    shown,
    write_text,
)

__all__ = [
    "EMBEDDER_FIELDS",
    "MAX_SCALED_DOCUMENTS",
    "MAX_SCENARIO_BYTES",
    "MAX_SCENARIO_VALUES",
    "STORE_FIELDS",
    "Document",
    "Scenario",
    "StoreDocuments",
    "checked_clusters",
    "demo_scenario",
    "metadata_keys",
]

EMBEDDER_FIELDS = ("model_name", "dimensions", "clusters", "cluster_spread", "cluster_match")
#: Every option of a :class:`~placeborag.FakeVectorStore` (:class:`placeborag.StoreOptions`, the
#: one list), so a scenario rebuilds the store it was made from: the same ranking, ties, writes.
STORE_FIELDS = tuple(StoreOptions())
# v2 holds every store option (tie_order, seed, on_existing_id, pad_missing, orphans, churn);
# a v1 file has none of them and loads with their defaults (the profile's own, no orphans).
_FORMAT = "placeborag.scenario/v2"
_FORMATS = ("placeborag.scenario/v1", _FORMAT)
#: The most documents :meth:`Scenario.scaled` makes: the largest store the explorer is measured
#: with (docs/benchmarks.md), and the bound on ``k``.
MAX_SCALED_DOCUMENTS = 1_000_000
#: The largest scenario file :meth:`Scenario.load` reads unless told otherwise (``max_bytes=``).
MAX_SCENARIO_BYTES = 256 * 2**20
#: The most vector entries (documents x dimensions) a loaded scenario may ask for unless told
#: otherwise (``max_values=``): 2**27 float32 values are 512 MiB, the store every view builds
#: on. A 1 MB file can otherwise ask for gigabytes (20,000 documents at 65,536 dimensions).
MAX_SCENARIO_VALUES = 2**27


@dataclass(frozen=True)
class Document:
    """One record of a scenario's knowledge base."""

    id: str
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)


_DOCUMENT_FIELDS = ("id", "text", "metadata")


def _document(doc_id: str, text: str, metadata: dict[str, Any]) -> Document:
    """A :class:`Document` of checked parts, made without the frozen dataclass's
    ``__init__`` (three ``object.__setattr__`` calls: a third of a 100,000-document
    :meth:`Scenario.scaled`)."""
    doc = object.__new__(Document)
    doc.__dict__.update(id=doc_id, text=text, metadata=metadata)
    return doc


def _checked_document(document: object, name: str) -> Document:
    if isinstance(document, Mapping):
        unknown = sorted(set(document) - set(_DOCUMENT_FIELDS), key=str)
        missing = [key for key in ("id", "text") if key not in document]
        if unknown or missing:
            problem = (
                f"unknown field(s) {', '.join(map(shown, unknown))}"
                if unknown
                else f"no {' and no '.join(missing)}"
            )
            raise PlaceboragValueError(
                f"{name}={shown(document)} has {problem}; a document has an id, a text and"
                " optionally metadata"
            )
        document = Document(**document)
    elif not isinstance(document, Document):
        raise PlaceboragTypeError(
            f"{name}={shown(document)} must be a Document or a mapping with id, text, metadata"
        )
    check_str(document.id, f"{name}.id")
    check_str(document.text, f"{name}.text")
    if document.metadata is None:
        return dataclasses.replace(document, metadata={})
    check_mapping(document.metadata, f"{name}.metadata")
    return document


_CHUNK = 10_000  # documents encoded at once by the quick check below


def _check_documents_unicode(
    ids: Sequence[str], texts: Sequence[str], metadatas: Sequence[Mapping[str, Any]]
) -> None:
    """The documents' ids, texts and metadata hold no lone surrogate (a scenario is saved as
    UTF-8 JSON, the report is UTF-8 HTML): encoded a chunk at a time, and only a chunk that
    fails is walked to name the document."""
    for start in range(0, len(ids), _CHUNK):
        stop = start + _CHUNK
        chunk_meta = [m for m in metadatas[start:stop] if m]
        try:
            "".join(ids[start:stop]).encode("utf-8")
            "".join(texts[start:stop]).encode("utf-8")
            if chunk_meta:
                json.dumps(
                    [dict(m) for m in chunk_meta],
                    ensure_ascii=False,
                    skipkeys=True,
                    default=repr,
                    check_circular=False,
                ).encode("utf-8")
        except UnicodeEncodeError:
            for i in range(start, min(stop, len(ids))):
                check_unicode(ids[i], f"documents[{i}].id")
                check_unicode(texts[i], f"documents[{i}].text")
                check_unicode_tree(dict(metadatas[i]), f"documents[{i}].metadata")
        except (ValueError, RecursionError):  # metadata JSON cannot hold: walk it
            for i in range(start, min(stop, len(ids))):
                check_unicode_tree(dict(metadatas[i]), f"documents[{i}].metadata")


class StoreDocuments(Sequence[Document]):
    """A store's visible records as the documents of a scenario, each :class:`Document` made
    when it is read: a scenario of a million records is not a million objects (and their
    metadata copies) until something walks them. Equal to a tuple of the same documents.

    The records are a snapshot (:meth:`FakeVectorStore.records`, immutable): later writes to
    the store do not change it. A document read from it carries a fresh metadata dict.
    """

    __slots__ = ("checked", "records")

    def __init__(self, records: StoreRecords) -> None:
        self.records = records
        self.checked = False  # texts checked for lone surrogates (once: the records are fixed)

    def __len__(self) -> int:
        return len(self.records.ids)

    @overload
    def __getitem__(self, index: int) -> Document: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Document, ...]: ...

    def __getitem__(self, index: int | slice) -> Document | tuple[Document, ...]:
        r = self.records
        if isinstance(index, slice):
            return tuple(
                Document(i, t, dict(m))
                for i, t, m in zip(r.ids[index], r.texts[index], r.metadata[index])
            )
        return Document(r.ids[index], r.texts[index], dict(r.metadata[index]))

    def __iter__(self) -> Iterator[Document]:
        r = self.records
        return (Document(i, t, dict(m)) for i, t, m in zip(r.ids, r.texts, r.metadata))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, StoreDocuments) and other.records is self.records:
            return True
        if isinstance(other, (tuple, StoreDocuments)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # as a tuple of documents with dicts

    def __repr__(self) -> str:
        return f"<{len(self)} documents of a store's records>"

    def metadata_keys(self) -> set[str]:
        """Every metadata key of the documents (without making them)."""
        return self.records.metadata.key_names()


def metadata_keys(documents: Sequence[Document]) -> list[str]:
    """The metadata keys the documents use, sorted."""
    if isinstance(documents, StoreDocuments):
        return sorted(documents.metadata_keys())
    return sorted({k for d in documents for k in d.metadata})


class _CheckedDocuments(tuple[Document, ...]):
    """Documents a scenario has checked: a plain tuple to everyone else (equal to one, the
    same repr), and not checked again when :meth:`Scenario.replace` keeps them (a control
    change in the explorer replaces a scenario of 100,000 documents)."""

    __slots__ = ()


def _checked_documents(documents: object) -> Sequence[Document]:
    if type(documents) is _CheckedDocuments:
        return documents
    if isinstance(documents, StoreDocuments):
        # A store's records: their types were checked when they were written; a store takes
        # lone surrogates (it hashes them), a scenario does not.
        if not documents.checked:
            r = documents.records
            _check_documents_unicode(r.ids, r.texts, r.metadata)
            documents.checked = True
        return documents
    if isinstance(documents, (str, bytes, Mapping)) or not isinstance(documents, Iterable):
        raise PlaceboragTypeError(
            f"documents={shown(documents)} must be a sequence of Document or of mappings"
        )
    checked = tuple(_checked_document(d, f"documents[{i}]") for i, d in enumerate(documents))
    _check_documents_unicode(
        [d.id for d in checked], [d.text for d in checked], [d.metadata for d in checked]
    )
    return _CheckedDocuments(checked)


def checked_clusters(clusters: object) -> dict[str, list[str]]:
    if clusters is None:  # `clusters: null` in a file means no clusters
        return {}
    check_mapping(clusters, "clusters")
    checked: dict[str, list[str]] = {}
    for key, members in clusters.items():  # type: ignore[attr-defined]
        check_str(key, "clusters key")
        if isinstance(members, (str, bytes)) or not isinstance(members, Iterable):
            raise PlaceboragTypeError(
                f"clusters[{shown(key)}]={shown(members)} must be a list of str, not a single value"
            )
        checked[key] = [
            check_str(member, f"clusters[{shown(key)}][{i}]") for i, member in enumerate(members)
        ]
    check_unicode_tree(checked, "clusters")
    return checked


def _check_where(value: object, name: str) -> None:
    if value is not None:
        check_unicode_tree(check_mapping(value, name), name)


def _check_text(value: object, name: str) -> None:
    check_unicode(check_str(value, name), name)


def _check_number(value: object, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Number):
        raise PlaceboragTypeError(f"{name}={shown(value)} must be a number")


def _check_optional_int(value: object, name: str) -> None:
    if value is not None:
        check_int(value, name)


def _check_optional_bool(value: object, name: str) -> None:
    if value is not None:
        check_bool(value, name)


def _check_k(value: object, name: str) -> None:
    check_k(value, name)


# The scalar fields; documents and clusters are normalised as well as checked, above.
def _check_optional_str(value: object, name: str) -> None:
    if value is not None:
        _check_text(value, name)


_FIELD_CHECKS: dict[str, Callable[[object, str], object]] = {
    "query": _check_text,
    "k": _check_k,
    "where": _check_where,
    "model_name": _check_text,
    "dimensions": check_int,
    "cluster_spread": _check_number,
    "cluster_match": _check_text,
    "profile": _check_text,
    "metric": _check_optional_str,
    "filter_mode": _check_text,
    "filter_semantics": _check_text,
    "recall": _check_number,
    "visibility": _check_text,
    "tie_order": _check_optional_str,
    "seed": _check_optional_int,
    "on_existing_id": _check_optional_str,
    "pad_missing": _check_optional_bool,
    "orphans": _check_number,
    "churn": _check_number,
    "query_log": _check_optional_int,
    "name": _check_text,
}


@dataclass(frozen=True)
class Scenario:
    """Everything needed to rebuild one explorer state: documents, options, the query."""

    documents: Sequence[Document]  # a tuple, or a store's records (StoreDocuments)
    query: str
    k: int = 5
    where: dict[str, Any] | None = None
    model_name: str = "placebo-embed-v1"
    dimensions: int = 256
    clusters: dict[str, list[str]] = field(default_factory=dict)
    cluster_spread: float = 0.5
    cluster_match: str = "exact"
    profile: str = "chroma"
    metric: str | None = None  # None: the profile's own
    filter_mode: str = "pre"
    filter_semantics: str = "strict"
    recall: float = 1.0
    visibility: str = "immediate"
    tie_order: str | None = None  # None: the profile's own (as metric, and the next three)
    seed: int | None = None
    on_existing_id: str | None = None
    pad_missing: bool | None = None
    orphans: float = 0.0
    churn: float = 0.0
    query_log: int | None = StoreOptions.query_log  # how many recent queries the store keeps
    name: str = "scenario"

    def __post_init__(self) -> None:
        # Types are checked here, so a scenario file with `name: 5` or `clusters: null` fails
        # on load with the field named; the embedder and the store check the values.
        object.__setattr__(self, "documents", _checked_documents(self.documents))
        object.__setattr__(self, "clusters", checked_clusters(self.clusters))
        for name, check in _FIELD_CHECKS.items():
            check(getattr(self, name), name)

    # -- options ----------------------------------------------------------------------------

    @property
    def embedder_options(self) -> dict[str, Any]:
        options = {name: getattr(self, name) for name in EMBEDDER_FIELDS}
        options["clusters"] = options["clusters"] or None
        return options

    @property
    def store_options(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in STORE_FIELDS}

    def replace(self, **changes: Any) -> Scenario:
        """A copy with some fields changed (as ``dataclasses.replace``).

        A copy that keeps the documents and clusters skips their normalisation (they are
        already normalised): the explorer makes one per control change.
        """
        unknown = sorted(set(changes) - _FIELDS)
        if unknown:
            raise PlaceboragTypeError(
                f"unknown scenario field(s) {', '.join(map(shown, unknown))}; expected some of"
                f" {', '.join(sorted(_FIELDS))}"
            )
        if "documents" in changes or "clusters" in changes:
            return dataclasses.replace(self, **changes)
        for name, value in changes.items():
            _FIELD_CHECKS[name](value, name)
        copy = dataclasses.replace(self, documents=(), clusters={})
        object.__setattr__(copy, "documents", self.documents)
        object.__setattr__(copy, "clusters", self.clusters)
        for name, value in changes.items():
            object.__setattr__(copy, name, value)
        return copy

    # -- building ---------------------------------------------------------------------------

    def embedder(self) -> FakeEmbedder:
        return FakeEmbedder(**self.embedder_options)

    def store(self, *, embedder: Any = None, **store_changes: Any) -> FakeVectorStore:
        """A store over ``embedder`` (default: this scenario's) holding every document."""
        options = {**self.store_options, **store_changes}
        store = FakeVectorStore(embedder=embedder or self.embedder(), **options)
        docs = list(self.documents)
        ids = [d.id for d in docs]
        if len(set(ids)) == len(ids):  # every id once: one call
            store.upsert_many(ids, [d.text for d in docs], [d.metadata or None for d in docs])
            store.refresh()
            return store
        # An id held more than once (on_existing_id="duplicate") is written again in a later
        # call, as it was first written: a call takes each id once.
        start, seen = 0, set[str]()
        for end, doc in enumerate([*docs, None]):
            if doc is None or doc.id in seen:
                batch = docs[start:end]
                store.upsert_many(
                    [d.id for d in batch],
                    [d.text for d in batch],
                    [d.metadata or None for d in batch],
                )
                start, seen = end, set()
            if doc is not None:
                seen.add(doc.id)
        store.refresh()
        return store

    def scaled(self, n: int) -> Scenario:
        """This scenario grown (or cut) to ``n`` documents with deterministic variants.

        The originals come first; variant ``i`` rewrites document ``i % len(documents)`` with a
        few words and a year chosen by CRC-32 of ``i``, so the same ``n`` always gives the
        same knowledge base. ``n`` is at most :data:`MAX_SCALED_DOCUMENTS` (1,000,000), and
        a scenario without documents cannot grow.
        """
        check_int(n, "n", minimum=1)
        if n > MAX_SCALED_DOCUMENTS:
            raise PlaceboragValueError(
                f"n={shown(n)} must be between 1 and {MAX_SCALED_DOCUMENTS:,} documents"
            )
        base = self.documents
        if n > len(base) and not base:
            raise PlaceboragValueError(
                f"n={shown(n)}: a scenario without documents has nothing to make variants of;"
                " give it at least one document"
            )
        docs = list(base[:n])
        # Per original: the id and text a variant starts from, and its metadata. A variant is
        # made of checked parts (an original's id, text and metadata values, ASCII words and
        # a year), so the documents are not checked again one by one.
        parts = [(f"{d.id}-v", f"{d.text} ", d.metadata, "year" in d.metadata) for d in base]
        words, n_words, crc32 = _VARIANT_WORDS, len(_VARIANT_WORDS), zlib.crc32
        # Hundreds of thousands of objects that all live on: made with the collector off.
        with gc_paused():
            for i in range(len(base), n):
                prefix, text, metadata, has_year = parts[i % len(base)]
                h = crc32(b"variant/%d" % i)
                meta = dict(metadata)
                if has_year:
                    meta["year"] = 2019 + (h >> 21) % 7
                docs.append(
                    _document(
                        f"{prefix}{i}",
                        f"{text}{words[h % n_words]} {words[(h >> 7) % n_words]}"
                        f" {words[(h >> 14) % n_words]} #{i}",
                        meta,
                    )
                )
        return self.replace(documents=_CheckedDocuments(docs), name=f"{self.name} x{n}")

    # -- JSON -------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self.replace(documents=()))  # documents: one copy, below
        out["documents"] = [dataclasses.asdict(d) for d in self.documents]
        return {"format": _FORMAT, **out}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Scenario:
        data = dict(check_mapping(data, "data"))
        fmt = data.pop("format", _FORMAT)
        if fmt not in _FORMATS:
            raise PlaceboragValueError(
                f"format={shown(fmt)} must be one of {', '.join(map(shown, _FORMATS))}"
            )
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise PlaceboragValueError(
                f"unknown scenario field(s) {', '.join(map(repr, unknown))}; "
                f"expected some of {', '.join(sorted(known))}"
            )
        missing = [name for name in ("documents", "query") if name not in data]
        if missing:
            raise PlaceboragValueError(
                f"a scenario needs {' and '.join(missing)}; the file has"
                f" {', '.join(sorted(data)) or 'no fields'}"
            )
        return cls(**data)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the scenario as JSON, atomically: ``path`` keeps its old content unless the
        whole new file is written. numpy numbers in metadata are written as JSON numbers."""
        text = dump_json(
            self.to_dict(),
            f"scenario {shown(self.name)}",
            tagged=True,
            ensure_ascii=False,
            indent=2,
        )
        write_text(check_path(path, "path", named=True), text + "\n")

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        *,
        max_bytes: int = MAX_SCENARIO_BYTES,
        max_values: int = MAX_SCENARIO_VALUES,
    ) -> Scenario:
        """Read a scenario file written by :meth:`save`.

        A file from anywhere is safe to load: it must be a regular file (a FIFO or a device is
        refused without blocking) of at most ``max_bytes`` (:data:`MAX_SCENARIO_BYTES`),
        checked before it is read, and the store it describes at most ``max_values``
        documents x dimensions (:data:`MAX_SCENARIO_VALUES`), checked before anything is
        embedded. A missing file is the ``OSError`` ``open()`` raises.
        """
        check_int(max_bytes, "max_bytes", minimum=1)
        check_int(max_values, "max_values", minimum=1)
        raw = read_regular(
            check_path(path, "path"),
            max_bytes,
            f"scenario file {shown(str(path))}",
            f"Scenario.load(path, max_bytes=) reads larger files ({MAX_SCENARIO_BYTES:,} by"
            " default)",
        )
        try:
            data = load_json(raw.decode("utf-8"))
        except ValueError as exc:  # not UTF-8, not JSON, or an int of more than 4,300 digits
            raise PlaceboragValueError(
                f"scenario file {shown(str(path))} is not UTF-8 JSON: {exc}"
            ) from None
        except RecursionError:
            raise PlaceboragValueError(
                f"scenario file {shown(str(path))} is nested too deeply to read"
            ) from None
        if not isinstance(data, dict):
            raise PlaceboragValueError(
                f"scenario file {shown(str(path))} must hold a JSON object, not "
                f"{type(data).__name__}"
            )
        scenario = cls.from_dict(data)
        values = len(scenario.documents) * scenario.dimensions
        if values > max_values:
            raise PlaceboragValueError(
                f"scenario file {shown(str(path))} asks for {len(scenario.documents):,} documents"
                f" x {scenario.dimensions:,} dimensions = {values:,} vector values, more than"
                f" the limit of {max_values:,}; Scenario.load(path, max_values=) loads larger"
                f" stores ({MAX_SCENARIO_VALUES:,} by default)"
            )
        return scenario

    @classmethod
    def from_store(cls, store: FakeVectorStore, query: str, **changes: Any) -> Scenario:
        """The scenario of an existing store: its visible records and every one of its
        options (``store.options``), so :meth:`store` ranks, ties and writes as it does.

        A store built from a :class:`~placeborag.Profile` object is described by the
        profile's name and the options that make it; one that no profile name and options
        make (a profile of your own) is refused, naming it.
        """
        if not isinstance(store, FakeVectorStore):
            raise PlaceboragTypeError(f"store={shown(store)} must be a FakeVectorStore")
        docs = StoreDocuments(store.records())
        options: dict[str, Any] = {
            **store.options,
            **_profile_options(store),
            "filter_mode": store.filter_mode,
        }
        embedder = store.embedder
        if isinstance(embedder, FakeEmbedder):
            options.update(
                model_name=embedder.model_name,
                dimensions=embedder.dimensions,
                clusters={k: list(v) for k, v in embedder.clusters.items()},
                cluster_spread=embedder.cluster_spread,
                cluster_match=embedder.cluster_match,
            )
        return cls(documents=docs, query=query, **{**options, **changes})


def _profile_options(store: FakeVectorStore) -> dict[str, Any]:
    """The profile of ``store`` as a name and the options a scenario holds."""
    given = store.options["profile"]
    if isinstance(given, str):
        return {"profile": given}
    profile = store.profile
    options = {
        "profile": profile.name,
        "metric": profile.metric,
        "tie_order": profile.tie_order,
        "seed": profile.seed,
        "on_existing_id": profile.on_existing_id,
        "pad_missing": profile.pad_missing,
    }
    try:
        named = get_profile(profile.name).with_options(
            **{k: v for k, v in options.items() if k != "profile"},
            filter_mode=profile.filter_mode,
        )
    except (PlaceboragTypeError, PlaceboragValueError):
        named = None
    if named != profile:
        raise PlaceboragValueError(
            f"the store's profile={shown(given)} must be a profile name, or a named profile "
            "changed only by store options: a scenario holds a profile by its name; build the "
            "store with profile='<name>' and the options that change it (metric=, "
            "tie_order=, ...)"
        )
    return options


_VARIANT_WORDS = (
    "order",
    "customer",
    "invoice",
    "parcel",
    "courier",
    "account",
    "return",
    "warehouse",
    "rendelés",
    "ügyfél",
    "számla",
    "csomag",
    "futár",
    "fiók",
    "raktár",
    "today",
    "urgent",
)

# id | lang | tier | year | text. Written for this project: a small refund and shipping help desk.
_DEMO_TABLE = """
en-refund-1 | en | public | 2024 | our refund policy allows returns within 30 days of delivery
en-refund-2 | en | public | 2023 | refund policy exceptions for sale and clearance items
en-refund-3 | en | public | 2025 | how to request a refund from your order history page
en-refund-4 | en | public | 2022 | refund policy for digital purchases and gift cards
en-refund-5 | en | public | 2025 | money back guarantee on damaged goods, no receipt needed
en-refund-6 | en | internal | 2024 | agents may approve a refund above 500 EUR only with a team lead
en-refund-7 | en | internal | 2025 | fraud checks before issuing a refund to a new payment card
en-refund-8 | en | public | 2021 | refunds are paid back to the original payment method in 5-10 days
en-refund-9 | en | public | 2024 | partial refund when only some items of an order are returned
en-refund-10 | en | public | 2020 | store credit instead of money back for late returns
en-ship-1 | en | public | 2025 | delivery times are 2-4 business days inside the EU
en-ship-2 | en | public | 2024 | express shipping costs 12 EUR and arrives the next day
en-ship-3 | en | public | 2023 | delivery times to remote islands can take three weeks
en-ship-4 | en | public | 2025 | track your parcel with the link in the shipping confirmation email
en-ship-5 | en | public | 2022 | free shipping on orders over 50 EUR
en-ship-6 | en | internal | 2024 | courier escalation contacts for lost parcels
en-ship-7 | en | public | 2023 | customs fees for shipping outside the EU are paid by the customer
en-ship-8 | en | internal | 2025 | warehouse cut-off for same-day dispatch is 14:00
en-ship-9 | en | public | 2021 | change the delivery address before the parcel is dispatched
en-ship-10 | en | public | 2024 | return shipping label is free for defective products
en-acct-1 | en | public | 2025 | reset your password from the login page
en-acct-2 | en | public | 2023 | close your account and delete personal data
hu-refund-1 | hu | public | 2024 | pénzvisszatérítési szabályzat: harminc napon belül visszaküldhető
hu-refund-2 | hu | public | 2025 | hogyan kérek vissza pénzt vásárlás után
hu-refund-3 | hu | public | 2022 | a visszatérítés az eredeti fizetési módra érkezik 5-10 nap alatt
hu-refund-4 | hu | public | 2023 | akciós termékekre a pénzvisszatérítés nem vonatkozik
hu-refund-5 | hu | internal | 2024 | 500 EUR feletti visszatérítést csoportvezető hagy jóvá
hu-refund-6 | hu | public | 2025 | részleges visszatérítés, ha csak néhány terméket küld vissza
hu-refund-7 | hu | public | 2021 | sérült áru esetén a pénzt nyugta nélkül is visszaadjuk
hu-ship-1 | hu | public | 2025 | szállítási idő az EU-n belül 2-4 munkanap
hu-ship-2 | hu | public | 2024 | expressz szállítás 12 EUR, másnapra érkezik
hu-ship-3 | hu | public | 2023 | a csomag követése a visszaigazoló e-mailben lévő linkkel
hu-ship-4 | hu | public | 2022 | ingyenes szállítás 50 EUR feletti rendelésnél
hu-ship-5 | hu | internal | 2025 | elveszett csomagok: futárszolgálati kapcsolattartók
hu-ship-6 | hu | public | 2024 | a szállítási cím a feladás előtt módosítható
hu-ship-7 | hu | internal | 2023 | a raktári zárás 14 órakor van az aznapi feladáshoz
hu-acct-1 | hu | public | 2025 | jelszó visszaállítása a bejelentkezési oldalon
hu-acct-2 | hu | public | 2024 | fiók törlése és személyes adatok eltávolítása
"""

# Declared with cluster_match="substring": every chunk that contains a phrase joins its cluster.
_DEMO_CLUSTERS = {
    "refund": ["refund policy", "money back", "pénzvisszatérítés", "vissza pénzt"],
    "shipping": ["delivery times", "shipping", "szállítás"],
    "parcel": ["parcel", "csomag"],
}


def demo_scenario(n: int | None = None) -> Scenario:
    """The built-in scenario: a bilingual refund and shipping help desk (``n`` scales it)."""
    if n is not None:
        check_int(n, "n", minimum=1)
    docs = []
    for line in _DEMO_TABLE.strip().splitlines():
        doc_id, lang, tier, year, text = (part.strip() for part in line.split("|"))
        docs.append(Document(doc_id, text, {"lang": lang, "tier": tier, "year": int(year)}))
    scenario = Scenario(
        documents=tuple(docs),
        query="refund policy",
        k=5,
        where={"lang": "hu"},
        clusters={k: list(v) for k, v in _DEMO_CLUSTERS.items()},
        cluster_match="substring",
        name="demo help desk",
    )
    return scenario if n is None else scenario.scaled(n)


_FIELDS = {f.name for f in dataclasses.fields(Scenario)}
