"""Threads: work on a second thread where it helps, and copies of objects that hold locks.

The embedder fills a large batch on two threads and the explorer fits its projection beside its
traces. Each task writes only its own rows or returns its own value, so the outcome is the same
bits whichever way it runs; a runtime without threads (Pyodide, an interpreter shutting down)
just runs the tasks in turn.

A double shared between threads guards its state with a lock, and a lock cannot be pickled or
deep-copied; :class:`FreshLocks` gives such a double copies that hold new locks of their own.

:func:`gc_paused` holds the cyclic garbage collector off while a large batch is built (a
100,000-document store or scenario), however many threads build at once.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any, TypeVar

__all__ = ["BULK_ROWS", "FreshLocks", "beside", "bulk", "each", "gc_paused"]

_LOCK = type(threading.Lock())
_RLOCK = type(threading.RLock())


class _NewLock:
    """Stands in a pickled state for a lock: the copy makes a new one of the same kind."""

    def __init__(self, reentrant: bool) -> None:
        self.reentrant = reentrant

    def make(self) -> Any:
        return threading.RLock() if self.reentrant else threading.Lock()


class FreshLocks:
    """Pickling and ``copy.deepcopy`` keep an object's state and give the copy new locks.

    The state is read under the object's ``_lock`` (when it has one and no thread holds it),
    its lists, dicts and sets copied there, so a copy taken while another thread writes sees
    one moment of the original. The copy starts unlocked and shares nothing with it.
    """

    def __getstate__(self) -> dict[str, Any]:
        lock = self.__dict__.get("_lock")
        held = lock is not None and lock.acquire(timeout=1.0)
        try:
            state = {
                name: type(value)(value) if type(value) in (list, dict, set) else value
                for name, value in self.__dict__.items()
            }
        finally:
            if held and lock is not None:
                lock.release()
        for name, value in state.items():
            if type(value) in (_LOCK, _RLOCK):
                state[name] = _NewLock(type(value) is _RLOCK)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(
            {
                name: value.make() if isinstance(value, _NewLock) else value
                for name, value in state.items()
            }
        )


_B = TypeVar("_B")
_F = TypeVar("_F")


def beside(background: Callable[[], _B], foreground: Callable[[], _F]) -> tuple[_B, _F]:
    """``(background(), foreground())``, the first on a second thread while the second runs on
    this one. If the foreground raises, the background is waited for (it may be writing into
    the caller's arrays) and the foreground's error is raised."""
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(max_workers=1)
    try:
        future = pool.submit(background)
    except RuntimeError:  # no thread can start here: one after the other
        pool.shutdown(wait=False)
        return background(), foreground()
    try:
        fore = foreground()
    except BaseException:
        pool.shutdown(wait=True)
        raise
    pool.shutdown(wait=False)
    return future.result(), fore


def each(work: Callable[[Any], None], items: Sequence[Any], threads: int = 2) -> None:
    """``work(item)`` for every item, on ``threads`` threads past one item; every call is done
    (or its error raised) when this returns."""
    if len(items) < 2 or threads < 2:
        for item in items:
            work(item)
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=threads) as pool:
        try:
            futures = [pool.submit(work, item) for item in items]
        except RuntimeError:  # no thread can start here: one after the other
            futures = []
            for item in items:
                work(item)
        for future in futures:
            future.result()


_GC_LOCK = threading.Lock()
_gc_pauses = 0  # the gc_paused() blocks open now, in every thread
_gc_resume = False  # whether the last of them to close turns the collector back on


@contextmanager
def gc_paused() -> Iterator[None]:
    """Hold the cyclic garbage collector off inside the block; on leaving it, the collector
    is as it was before (on, or off if the caller had turned it off).

    Building a large batch makes hundreds of thousands of objects that all live on (a
    store's records, a scenario's documents). Each time the young objects outnumber a quarter
    of the old ones, Python runs a full collection, which walks every object of the process;
    a 100,000-document build in a fresh process ran five of them, about a second of the
    build's time, and found nothing to free. Inside this block there are none; once the
    collector is on again, the first collection that follows walks the new objects once (a
    few tenths of a second at that size, paid by the next code that allocates), so the
    saving is the difference, not the whole second.

    Blocks nest, in one thread and across threads: the collector stays off until the last
    open block closes, and only then is it turned back on, and only if it was on when the
    first of them opened. A block never turns on a collector the caller had turned off
    (``gc.disable()`` before it), and a ``gc.enable()`` inside it is kept (a ``gc.disable()``
    inside it is not: the block cannot tell it from its own, and turns the collector back on
    if it was on when the block opened). Call it around
    work that makes many long-lived objects and runs for less than a few seconds; cycles
    made inside the block are collected later, not lost.
    """
    global _gc_pauses, _gc_resume
    with _GC_LOCK:
        if _gc_pauses == 0:
            _gc_resume = gc.isenabled()
            gc.disable()
        _gc_pauses += 1
    try:
        yield
    finally:
        with _GC_LOCK:
            _gc_pauses -= 1
            if _gc_pauses == 0 and _gc_resume:
                gc.enable()


# From this many records a write is a bulk build: the collector is held off while the store
# checks, lands and embeds it.
BULK_ROWS = 8192


def bulk(rows: int) -> AbstractContextManager[None]:
    """:func:`gc_paused` for a batch of ``rows`` records from :data:`BULK_ROWS` on, else a
    block that does nothing."""
    return gc_paused() if rows >= BULK_ROWS else nullcontext()
