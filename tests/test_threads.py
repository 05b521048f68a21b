"""The two ways placeborag runs work on a second thread, and their fallback where no thread can
start (Pyodide, an interpreter shutting down): the same results, errors raised, nothing left
running."""

from __future__ import annotations

import concurrent.futures
import threading
import time

import numpy as np
import pytest

from placeborag import FakeEmbedder
from placeborag._threads import beside, each


def test_beside_runs_the_background_on_another_thread_and_returns_both():
    seen: dict[str, int] = {}

    def background():
        seen["background"] = threading.get_ident()
        return "b"

    def foreground():
        seen["foreground"] = threading.get_ident()
        return "f"

    assert beside(background, foreground) == ("b", "f")
    assert seen["foreground"] == threading.get_ident() != seen["background"]


def test_beside_waits_for_the_background_when_the_foreground_fails():
    done = []

    def background():
        time.sleep(0.05)
        done.append(True)

    def foreground():
        raise ValueError("foreground broke")

    with pytest.raises(ValueError, match="foreground broke"):
        beside(background, foreground)
    assert done == [True]  # it may write into the caller's arrays: finished before the raise


def test_beside_raises_the_background_error():
    def background():
        raise KeyError("background broke")

    with pytest.raises(KeyError, match="background broke"):
        beside(background, lambda: 1)


def test_each_calls_every_item_once_and_raises_an_error():
    out = np.zeros(7)

    def work(i):
        out[i] = i + 1

    each(work, range(7))
    assert out.tolist() == [1, 2, 3, 4, 5, 6, 7]

    def broken(i):
        if i == 3:
            raise ValueError("item 3")

    with pytest.raises(ValueError, match="item 3"):
        each(broken, range(7))


def _no_threads(monkeypatch):
    def refuse(self, *args, **kwargs):
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(concurrent.futures.ThreadPoolExecutor, "submit", refuse)


def test_without_threads_both_run_one_after_the_other(monkeypatch):
    _no_threads(monkeypatch)
    order = []
    assert beside(lambda: order.append("b") or 1, lambda: order.append("f") or 2) == (1, 2)
    assert order == ["b", "f"]
    out = []
    each(out.append, range(5))
    assert out == [0, 1, 2, 3, 4]


def test_a_large_mixed_batch_without_threads_gives_the_same_bits(monkeypatch):
    from placeborag import _embedder_engine

    monkeypatch.setattr(_embedder_engine, "_ROW_BLOCK", 4)
    monkeypatch.setattr(_embedder_engine, "_CACHED_BATCH", 2)  # members spread in blocks too
    texts = [f"refund case {i}" if i % 2 else f"parcel {i} is late" for i in range(40)]

    def fresh():
        return FakeEmbedder(
            dimensions=8, clusters={"refund": ["refund case"]}, cluster_match="substring"
        )

    threaded = fresh().embed_array(texts)
    _no_threads(monkeypatch)
    _embedder_engine._MEMBER_DRAWS.clear()
    alone = fresh().embed_array(texts)
    np.testing.assert_array_equal(alone, threaded)
    one = fresh()
    np.testing.assert_array_equal(alone, np.array([one.embed(t) for t in texts]))
