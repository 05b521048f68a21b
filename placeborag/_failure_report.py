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
        lines.extend("    " + line for line in _query_lines(store, item, op, sides, known))
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
    stored = set(trace.ids) | set(trace.pending)
    known.update(stored)
    if sides:
        explained = _to_explain(returned, op, sides, stored)
    else:
        explained = [(doc_id, 0) for doc_id in returned]
    for doc_id, place in explained[:MAX_IDS]:
        asserted = f" (asserted at place {place})" if place else ""
        lines.append(f"{shown(doc_id)}{asserted}: {trace.why(doc_id)}")
    if len(explained) > MAX_IDS:
        lines.append(f"... {len(explained) - MAX_IDS} more ids not explained")
    return lines


def _to_explain(
    returned: Sequence[str], op: str, sides: list[Side], stored: set[str]
) -> list[tuple[str, int]]:
    """The named ids of this store that did not come back where asserted, each with the place
    the assertion put it at (0: no place, a member or a set)."""
    expected = _expected(returned, sides)
    at = {doc_id: rank for rank, doc_id in enumerate(returned, 1)}
    out: dict[str, int] = {}
    for side in expected:
        for place, doc_id in enumerate(side.ids, 1):
            if doc_id not in stored or doc_id in out:
                continue
            place = place if side.ordered else 0
            negated = op in ("!=", "not in", "is not")
            if negated or doc_id not in at or (place and at[doc_id] != place):
                out[doc_id] = place
    return list(out.items())


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
    """A file name for a test's store: readable, and unique per test id (a CRC-32 of it)."""
    stem = _UNSAFE.sub("_", nodeid.replace("::", "--")).strip("._")[:80] or "test"
    store = f"-store{number}" if number else ""
    return f"{stem}-{zlib.crc32(nodeid.encode('utf-8')):08x}{store}.json"


def _saved(entry: Watched, path: str) -> list[str]:
    """Save the store as a scenario of its last query; the lines that open it (or why not)."""
    store = entry.store
    last = entry.asked[-1].record if entry.asked else None
    if last is None:
        return ["  not saved: the store received no query"]
    from placeborag._embedder import FakeEmbedder

    if not isinstance(store.embedder, FakeEmbedder):
        return [
            "  not saved: a scenario file rebuilds a store over a FakeEmbedder, and this "
            f"store's embedder is a {type(store.embedder).__name__}; open the store itself "
            "with placeborag.explore.app(store=store, query=...)"
        ]
    try:
        from placeborag.explore import Scenario
    except ImportError as exc:
        return [f"  not saved: {exc}"]
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        Scenario.from_store(store, last.text, k=last.k, where=last.where).save(path)
    except (OSError, ValueError, TypeError) as exc:
        return [f"  not saved to {shown(path)}: {type(exc).__name__}: {exc}"]
    lines = [
        f"  saved: {shown(path)}; open it with",
        f"    placeborag report --scenario {_quoted(path)} --out report.html",
        f"    from placeborag.explore import Scenario, app; app(Scenario.load({shown(path)}))",
    ]
    if last.vector is not None and not last.text:
        lines.insert(1, "  (a query by vector: the scenario holds no vector, its query is '')")
    return lines


def _quoted(path: str) -> str:
    """``path`` for a shell line: quoted, and escaped as ``shown`` does if it is not printable."""
    return shlex.quote(path) if path.isprintable() else shown(path)
