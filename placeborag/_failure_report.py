"""The "placeborag" section of a failing test's report: why the asserted ids did not come back.

The plugin watches every store a test queries (:mod:`placeborag._touched`) and keeps the
comparison its failing assertion made; when the test fails, :func:`section` turns both into a
short text: for each store, its newest queries (newest first) with ``k``, ``where``, the
options that decide a ranking and the ids returned, and for every id the assertion names that
did not come back where it asserted, :meth:`QueryTrace.why <placeborag.QueryTrace.why>` of it:
the trace's own sentence, in the stage's words. Nothing here runs for a passing test.

The text is the same bytes for the same failure: stores are numbered in the order the test
first queried them, ids listed in the assertion's order, every user value shown by
:func:`~placeborag._validation.shown` (``repr``: control characters and quotes escaped, long
values cut in the middle), nothing depends on memory addresses, time or hash order. It is
bounded: :data:`MAX_STORES` stores, :data:`~placeborag._touched.QUERIES_KEPT` queries each,
:data:`MAX_IDS` ids explained per query.

With a folder to save to, each store is written as a scenario file of its records, options
and last query (:meth:`placeborag.explore.Scenario.from_store`), and the section prints the
lines that open it in the explorer.
"""

from __future__ import annotations

import os
import re
import shlex
import zlib
from collections.abc import Iterable, Sequence
from typing import Any

from placeborag._store import FakeVectorStore, QueryTrace
from placeborag._touched import Asked, Watch, Watched
from placeborag._validation import nearest, shown

__all__ = ["MAX_IDS", "MAX_SCANNED", "MAX_STORES", "Side", "asserted_ids", "section"]

#: The most stores a section describes (the ones the test queried first).
MAX_STORES = 4
#: The most ids explained under one query.
MAX_IDS = 12
#: The most elements of an assertion's operand read for ids.
MAX_SCANNED = 1000
_RETURNED_SHOWN = 10  # returned ids listed per query; the rest are counted


# -- the ids an assertion names ---------------------------------------------------------------


class Side:
    """The ids one operand of a comparison names, in its order, and whether the order counts
    (a list or tuple: yes; a set or a dict's keys: no; one id: it is a member test)."""

    def __init__(self, ids: list[str], ordered: bool) -> None:
        self.ids = ids
        self.ordered = ordered


def _id_of(value: object) -> str | None:
    """The id an element names: a str itself, or the id of a match or a framework's document
    (``.id``: a Match, LangChain and Haystack documents; ``.node_id``: LlamaIndex nodes)."""
    if isinstance(value, str):
        return value
    if isinstance(value, tuple) and value and not isinstance(value[0], (str, tuple)):
        return _id_of(value[0])  # (document, score) pairs
    for name in ("id", "node_id", "id_"):
        try:
            found = getattr(value, name, None)
        except Exception:  # a user's property may raise: it names no id
            continue
        if isinstance(found, str):
            return found
    return None


def _side(value: object) -> Side | None:
    single = _id_of(value) if not isinstance(value, (list, tuple, set, frozenset, dict)) else None
    if single is not None:
        return Side([single], ordered=False)
    if isinstance(value, (list, tuple)):
        items, ordered = list(value[:MAX_SCANNED]), True
    elif isinstance(value, (set, frozenset, dict)):
        items, ordered = [], False
        for i, item in enumerate(value):
            if i == MAX_SCANNED:
                break
            items.append(item)
    else:
        return None
    ids = [found for found in map(_id_of, items) if found is not None]
    if not ids:
        return None
    return Side(ids if ordered else sorted(set(ids)), ordered)


def asserted_ids(comparison: tuple[str, Any, Any] | None) -> tuple[str, list[Side]]:
    """The comparison's operator and the ids each side names (sides naming none left out)."""
    if comparison is None:
        return "", []
    op, left, right = comparison
    return op, [side for side in (_side(left), _side(right)) if side is not None]


# -- the section ------------------------------------------------------------------------------


def section(watch: Watch, nodeid: str, save: str | None = None) -> str:
    """The section of a failed test (never raises: a report must still be written)."""
    try:
        return _section(watch, nodeid, save)
    except Exception as exc:  # pragma: no cover - a bug here must not hide the test's failure
        return f"placeborag could not explain this failure: {type(exc).__name__}: {shown(exc)}\n"


def _section(watch: Watch, nodeid: str, save: str | None) -> str:
    with watch.lock:
        watched = list(watch.stores.values())
    op, sides = asserted_ids(watch.comparison)
    shown_stores = watched[:MAX_STORES]
    lines = [_headline(len(watched), len(shown_stores), op, sides)]
    known: set[str] = set()
    for number, entry in enumerate(shown_stores, 1):
        lines.extend(_store_lines(entry, number, op, sides, known))
        if save is not None:
            name = _file_name(nodeid, number if len(shown_stores) > 1 else 0)
            lines.extend(_saved(entry, os.path.join(save, name)))
    named = [i for side in sides for i in side.ids]
    missing = [i for i in dict.fromkeys(named) if i not in known]
    if missing and len(missing) < len(named):
        # Some named values are ids of a store and these are none: a typo, or deleted.
        lines.append(
            "named by the assertion, stored in none of these stores: "
            + ", ".join(_with_nearest(i, known) for i in missing[:MAX_IDS])
        )
    return "\n".join(lines) + "\n"


def _headline(total: int, described: int, op: str, sides: list[Side]) -> str:
    stores = "1 store" if total == 1 else f"{total} stores"
    more = f" (the first {described} described)" if described < total else ""
    if sides:
        source = f"the ids the failing assertion ({op!s}) names"
    else:
        source = "the ids returned (the failing assertion names no id)"
    return f"this test queried {stores}{more}; explained: {source}"


def _store_lines(
    entry: Watched, number: int, op: str, sides: list[Side], known: set[str]
) -> list[str]:
    store = entry.store
    records = store.records()
    lines = [f"store {number}: {_options_line(store)}; {len(records)} records"]
    if store.pending_writes:
        lines[-1] += f", {store.pending_writes} write(s) pending until refresh()"
    asked = list(entry.asked)
    for place, item in enumerate(reversed(asked)):
        ordinal = entry.count - place
        label = "newest query" if place == 0 else "query"
        lines.append(f"  {label} {ordinal} of {entry.count}: {_query_line(item.record)}")
        try:
            explained = _query_lines(store, item, op, sides, known)
        except Exception as exc:  # one query that cannot be traced again keeps the others
            explained = [f"could not trace this query again: {type(exc).__name__}: {shown(exc)}"]
        lines.extend("    " + line for line in explained)
    if entry.count > len(asked):
        lines.append(f"  ({entry.count - len(asked)} earlier queries not shown)")
    return lines


def _options_line(store: FakeVectorStore) -> str:
    """The options that decide a ranking: the profile's convention and every option set."""
    profile = store.profile
    better = "higher" if profile.higher_is_better else "lower"
    parts = [
        f"profile {shown(profile.name)} ({profile.metric}, {better} is better, "
        f"ties by {profile.tie_order})",
        f"filter_mode {shown(store.filter_mode)}",
    ]
    defaults = type(store.options)()
    for name in ("recall", "visibility", "filter_semantics", "orphans", "churn", "seed"):
        value = store.options[name]
        if name == "recall" or value != defaults[name]:
            parts.append(f"{name} {shown(value)}")
    return ", ".join(parts)


def _query_line(record: Any) -> str:
    if record.vector is not None and not record.text:
        what = "by vector"
    else:
        what = shown(record.text) + (" (by vector)" if record.vector is not None else "")
    line = f"{what}, k={record.k}, where={shown(record.where)}"
    if record.ids is not None:
        line += f", restricted to {len(record.ids)} id(s) (ids=...)"
    return line


def _trace(store: FakeVectorStore, record: Any) -> QueryTrace:
    vector = None if record.vector is None else list(record.vector)
    text = record.text if (record.text or vector is None) else None
    return store.trace(text, record.k, record.where, vector=vector, ids=record.ids)


def _query_lines(
    store: FakeVectorStore, item: Asked, op: str, sides: list[Side], known: set[str]
) -> list[str]:
    if item.failure is not None:
        error = item.failure
        return [
            f"raised {type(error).__name__}({shown(str(error))}): a failure injected with "
            "fail_next_query(), so it returned nothing"
        ]
    trace = _trace(store, item.record)
    lines = []
    if trace.records is not None and trace.records.version != item.version:
        lines.append(
            "the store changed after this query: explained as the store is now, which may "
            "rank differently"
        )
    returned = trace.returned
    shown_ids = ", ".join(f"{shown(m.id)} ({m.score:.4f})" for m in trace.matches[:_RETURNED_SHOWN])
    more = (
        f", ... {len(trace.matches) - _RETURNED_SHOWN} more"
        if len(trace.matches) > _RETURNED_SHOWN
        else ""
    )
    lines.append(f"returned {len(trace.matches)}: {shown_ids or 'nothing'}{more}")
    if sides:
        explained = _to_explain(returned, op, sides, trace)
    else:
        explained = [(doc_id, 0, "") for doc_id in returned]
    known.update(trace.ids, trace.pending, (via for _, _, via in explained if via))
    for doc_id, place, via in explained[:MAX_IDS]:
        notes = [f"a record of {shown(via)}"] if via else []
        if place:
            notes.append(f"asserted at place {place}")
        note = f" ({', '.join(notes)})" if notes else ""
        lines.append(f"{shown(doc_id)}{note}: {trace.why(doc_id)}")
    if len(explained) > MAX_IDS:
        lines.append(f"... {len(explained) - MAX_IDS} more ids not explained")
    return lines


def _to_explain(
    returned: Sequence[str], op: str, sides: list[Side], trace: QueryTrace
) -> list[tuple[str, int, str]]:
    """The named ids of this store that did not come back where asserted, each with the place
    the assertion put it at (0: no place, a member or a set) and, for a record named by its
    document (a chunk whose metadata ``doc_id`` the assertion names), that document."""
    stored = set(trace.ids) | set(trace.pending)
    negated = op in ("!=", "not in", "is not")
    at = {doc_id: rank for rank, doc_id in enumerate(returned, 1)}
    out: dict[str, tuple[int, str]] = {}
    parents = _chunks_of([i for s in sides for i in s.ids if i not in stored], trace)
    for side in _expected(returned, sides):
        for place, named in enumerate(side.ids, 1):
            place = place if side.ordered else 0
            if named in stored:
                if named not in out and (
                    negated or named not in at or (place and at[named] != place)
                ):
                    out[named] = (place, "")
                continue
            chunks = parents.get(named, [])
            if negated or not any(chunk in at for chunk in chunks):
                for chunk in chunks[:_CHUNKS_SHOWN]:
                    out.setdefault(chunk, (place, named))
    return [(doc_id, place, via) for doc_id, (place, via) in out.items()]


# Metadata keys that name the document a record (a chunk) was cut from, as pipelines and the
# frameworks write them; an assertion on documents is read through them.
_PARENT_KEYS = ("doc_id", "document_id", "ref_doc_id", "parent_id", "source_id")
_CHUNKS_SHOWN = 3  # records explained per named document


def _chunks_of(names: Sequence[str], trace: QueryTrace) -> dict[str, list[str]]:
    """The records (ids, insertion order) whose document is one of ``names``."""
    wanted = set(names)
    found: dict[str, list[str]] = {}
    if not wanted or trace.records is None:
        return found
    for doc_id, meta in zip(trace.ids, trace.records.metadata):
        for key in _PARENT_KEYS:
            parent = meta.get(key)
            if isinstance(parent, str) and parent in wanted:
                found.setdefault(parent, []).append(doc_id)
                break
    return found


def _expected(returned: Sequence[str], sides: list[Side]) -> list[Side]:
    """The sides that say what was expected: a side that is exactly the returned ids is what
    the test got, so the other one is what it asserted."""
    got = list(returned)
    others = [s for s in sides if not (s.ordered and s.ids == got)]
    return others if others else sides


def _with_nearest(doc_id: str, known: Iterable[str]) -> str:
    close = nearest(doc_id, sorted(known), n=1)
    return shown(doc_id) + (f" (nearest stored id {shown(close[0])})" if close else "")


# -- saving the store --------------------------------------------------------------------------

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def _file_name(nodeid: str, number: int) -> str:
    """A file name for a test's store: its test's name, and a CRC-32 of the whole test id (two
    modules' tests of one name get two files)."""
    stem = _UNSAFE.sub("_", nodeid.rpartition("::")[2]).strip("._")[:60] or "test"
    store = f"-store{number}" if number else ""
    return f"{stem}-{zlib.crc32(nodeid.encode('utf-8')):08x}{store}.json"


def _saved(entry: Watched, path: str) -> list[str]:
    """Save the store as a scenario of its last query (and, for a store over vectors of its
    own, the recording of them beside it); the lines that open it, or why it was not saved."""
    store = entry.store
    last = entry.asked[-1].record if entry.asked else None
    if last is None:
        return ["  not saved: the store received no query"]
    from placeborag._embedder import FakeEmbedder

    try:
        from placeborag.explore import Scenario
    except ImportError as exc:
        return [f"  not saved: {exc}"]
    own = not isinstance(store.embedder, FakeEmbedder)
    if own and not last.text:
        return ["  not saved: the query was a vector with no text, which a recording cannot name"]
    vectors = path[: -len(".json")] + ".vectors"
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        if own:
            refusal = _record(store, last.text, vectors)
            if refusal:
                return [f"  not saved: {refusal}"]
        Scenario.from_store(store, last.text, k=last.k, where=last.where).save(path)
    except (OSError, ValueError, TypeError) as exc:
        return [f"  not saved to {shown(path)}: {type(exc).__name__}: {exc}"]
    if own:
        return [
            f"  saved: {shown(path)} and its vectors {shown(vectors)}; open it with",
            "    from placeborag import Recording; from placeborag.explore import Scenario, app",
            f"    s = Scenario.load({shown(path)}); embedder = Recording.load({shown(vectors)})"
            ".embedder()",
            "    app(store=s.store(embedder=embedder), query=s.query, k=s.k, where=s.where)",
        ]
    lines = [
        f"  saved: {shown(path)}; open it with",
        f"    placeborag report --scenario {_quoted(path)} --out report.html",
        f"    from placeborag.explore import Scenario, app; app(Scenario.load({shown(path)}))",
    ]
    if last.vector is not None and not last.text:
        lines.insert(1, "  (a query by vector: the scenario holds no vector, its query is '')")
    return lines


def _record(store: FakeVectorStore, query: str, path: str) -> str:
    """Record the store's vectors (one per text) and the query's at ``path``; why not, or ''."""
    import numpy as np

    from placeborag._replay import record_vectors

    records = store.records()
    rows: dict[str, int] = {}
    for i, text in enumerate(records.texts):
        first = rows.setdefault(text, i)
        if not np.array_equal(records.vectors[first], records.vectors[i]):
            return (
                f"records {shown(records.ids[first])} and {shown(records.ids[i])} share a "
                "text with different vectors, and a recording holds one vector per text"
            )
    if not rows:
        return "the store holds no records to record"
    texts = list(rows)
    matrix = np.asarray(records.vectors[list(rows.values())], dtype=np.float64)
    model = str(getattr(store.embedder, "model_name", "") or type(store.embedder).__name__)
    record_vectors(
        path,
        embed_documents=lambda _texts: matrix,
        embed_query=lambda _queries: store.embed_query(query)[None, :],
        documents=texts,
        queries=[query],
        model=model,
        dtype="float64",
        overwrite=True,
        provenance={"saved by": "placeborag --placeborag-save-failures"},
    )
    return ""


def _quoted(path: str) -> str:
    """``path`` for a shell line: quoted, and escaped as ``shown`` does if it is not printable."""
    return shlex.quote(path) if path.isprintable() else shown(path)
