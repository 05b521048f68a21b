"""Which stores a test queried, and what its failing assertion compared: the hook below the store.

:class:`~placeborag.FakeVectorStore` calls :func:`asked` on every query (failed ones included).
Outside a watched test that is one read of a module global; inside one (the pytest plugin
starts a :class:`Watch` when a test that uses placeborag is set up and ends it after its
teardown), the store, its newest :data:`QUERIES_KEPT` query records and the injected failure a
query raised are kept: a few references per query, what the store's own query log already
holds. Nothing is computed until a test fails (:mod:`placeborag._failure_report`).

The watch holds its stores strongly, for one test only: a store a helper function built and
dropped can still be explained when the test fails, and nothing outlives the test's teardown.
This module imports nothing from the package (the plugin reads it without loading the core).
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Any, NamedTuple

__all__ = ["QUERIES_KEPT", "Asked", "Watch", "asked", "compared", "current", "start", "stop"]

#: How many of its newest queries a watched store keeps for the failure report.
QUERIES_KEPT = 3


class Asked(NamedTuple):
    """One query as the store received it: its record, the store's change counter then, and
    the injected failure it raised (None: it ran)."""

    record: Any  # a QueryRecord
    version: int
    failure: BaseException | None


class Watched:
    """A store a watched test queried: how many times, and its newest queries."""

    __slots__ = ("asked", "count", "store")

    def __init__(self, store: Any) -> None:
        self.store = store
        self.count = 0
        self.asked: deque[Asked] = deque(maxlen=QUERIES_KEPT)


class Watch:
    """What one test did with placeborag stores: the stores it queried (in the order of their
    first query) and the last comparison a failing assertion made."""

    def __init__(self) -> None:
        self.lock = threading.Lock()  # a retriever may query from a worker thread
        self.stores: dict[int, Watched] = {}  # keyed by identity: a store need not hash
        self.comparison: tuple[str, Any, Any] | None = None
        self.outer: Watch | None = None  # the watch this one interrupted (pytest in pytest)


_current: Watch | None = None
# .quiet: the audit is answering a query on a twin of a store (placeborag._recorder): the test
# did not ask it, so it is not watched.
local = threading.local()


def current() -> Watch | None:
    return _current


def start() -> Watch:
    """Watch from now on, in a new :class:`Watch` (one test at a time in a process; a test
    run by a test, as pytester does in process, interrupts the outer one's watch)."""
    global _current
    watch = Watch()
    watch.outer = _current
    _current = watch
    return watch


def stop(watch: Watch) -> None:
    """Stop watching with ``watch``: the watch it interrupted, if any, goes on."""
    global _current
    if _current is watch:
        _current = watch.outer
        watch.outer = None


def asked(store: Any, record: Any, version: int, failure: BaseException | None) -> None:
    """Called by the store for every query it logs, before an injected failure is raised."""
    watch = _current
    if watch is None or getattr(local, "quiet", False):
        return
    with watch.lock:
        watched = watch.stores.get(id(store))
        if watched is None:
            watched = watch.stores[id(store)] = Watched(store)
        watched.count += 1
        watched.asked.append(Asked(record, version, failure))


def compared(op: str, left: Any, right: Any) -> None:
    """Keep the comparison a failing assertion made (pytest's ``assertrepr_compare`` hook)."""
    watch = _current
    if watch is not None:
        watch.comparison = (op, left, right)
