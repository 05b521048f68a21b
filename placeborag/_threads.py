"""Work on a second thread where it helps, and where threads cannot start, one after the other.

The embedder fills a large batch on two threads and the explorer fits its projection beside its
traces. Each task writes only its own rows or returns its own value, so the outcome is the same
bits whichever way it runs; a runtime without threads (Pyodide, an interpreter shutting down)
just runs the tasks in turn.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

__all__ = ["beside", "each"]

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
