"""The faster paths of large builds give what the plain ones give: the garbage-collector pause
(placeborag._threads.gc_paused), the distinct hashing plan of a corpus hashed again, member rows
spread on bit patterns, and a store's first large batch embedded straight into its matrix."""

from __future__ import annotations

import gc
import threading

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from placeborag import FakeEmbedder, FakeVectorStore, PlaceboragValueError, _hashing
from placeborag._embedder_engine import EmbedderEngine
from placeborag._threads import BULK_ROWS, gc_paused


@pytest.fixture
def collector_on():
    """The collector on for the test, and as the test found it afterwards."""
    was = gc.isenabled()
    gc.enable()
    yield
    if was:
        gc.enable()
    else:
        gc.disable()


# -- gc_paused ---------------------------------------------------------------------------


def test_gc_paused_turns_the_collector_off_inside_and_back_on_after(collector_on):
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():  # nested in one thread
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_gc_paused_never_turns_on_a_collector_the_caller_turned_off(collector_on):
    gc.disable()
    with gc_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_gc_paused_keeps_a_gc_enable_made_inside_it(collector_on):
    gc.disable()
    with gc_paused():
        gc.enable()
    assert gc.isenabled()


def test_gc_paused_restores_the_collector_when_the_block_raises(collector_on):
    with pytest.raises(ZeroDivisionError), gc_paused():
        1 / 0
    assert gc.isenabled()
    with gc_paused():  # and the count of open blocks went back to zero
        pass
    assert gc.isenabled()


def test_gc_paused_nests_across_threads_until_the_last_block_closes(collector_on):
    """Thread A opens a block, thread B opens one, A closes: still off (B is building);
    B closes: on again."""
    a_in, b_in, a_out, b_done = (threading.Event() for _ in range(4))
    seen: dict[str, bool] = {}

    def a() -> None:
        with gc_paused():
            a_in.set()
            b_in.wait(5)
        a_out.set()

    def b() -> None:
        a_in.wait(5)
        with gc_paused():
            b_in.set()
            a_out.wait(5)
            seen["after A closed"] = gc.isenabled()
        b_done.set()

    threads = [threading.Thread(target=a), threading.Thread(target=b)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert b_done.is_set()
    assert seen == {"after A closed": False}
    assert gc.isenabled()


def test_gc_paused_blocks_from_many_threads_leave_the_collector_as_found(collector_on):
    start = threading.Barrier(8)

    def work() -> None:
        start.wait(5)
        for _ in range(200):
            with gc_paused():
                assert not gc.isenabled()

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert gc.isenabled()


def test_a_large_store_build_leaves_the_collector_on(collector_on):
    texts = [f"text {i}" for i in range(BULK_ROWS)]
    store = FakeVectorStore(embedder=FakeEmbedder(dimensions=16))
    store.upsert_many([str(i) for i in range(len(texts))], texts)
    assert len(store.records().ids) == BULK_ROWS
    assert gc.isenabled()


# -- the distinct plan --------------------------------------------------------------------

_WORDS = st.text(
    alphabet=st.sampled_from(list("abcé ñ\x00日本-.,!?AZ") + ["\u2003", "\U0001f600", "\ud800"]),
    max_size=12,
)


@settings(max_examples=25, deadline=None)
@given(
    words=st.lists(_WORDS, min_size=1, max_size=30),
    picks=st.lists(st.integers(0, 10**6), min_size=300, max_size=320),
    dimensions=st.sampled_from([2, 7, 64, 256]),
)
def test_a_corpus_hashed_again_gets_the_same_counts_from_its_distinct_plan(
    words, picks, dimensions
):
    """A batch made of few distinct words (so its features repeat, and its plan is made
    distinct the second time it is hashed) gives, under two models, the counts of hashing
    each text alone."""
    texts = [" ".join(words[p % len(words)] for p in (q, q // 7, q // 49)) for q in picks]
    _hashing._PLANS.clear()
    for model in ("first", "second"):
        seeds = _hashing.model_seeds(model, dimensions)
        counts, norms = _hashing.hashed_counts_norms(texts, dimensions, seeds)
        again, again_norms = _hashing.hashed_counts_norms(texts, dimensions, seeds)
        one = np.stack([_hashing.hashed_counts_one(t, dimensions, seeds) for t in texts])
        assert np.array_equal(counts, one)
        assert np.array_equal(again, one)
        assert np.array_equal(norms, again_norms)
    plan = _hashing._PLANS.get(tuple(texts))
    assert plan is not None and plan.tried
    if plan.inverse is not None:  # the distinct form was the one used
        assert sum(plan.per_kind) == plan.span.size < sum(plan.kinds)
        assert plan.inverse.size == sum(plan.kinds)


def test_a_repetitive_corpus_is_hashed_from_its_distinct_plan_the_second_time():
    texts = [f"refund policy {i % 5}" for i in range(1000)]
    _hashing._PLANS.clear()
    first_seeds, second_seeds = _hashing.model_seeds("m", 64), _hashing.model_seeds("n", 64)
    first = _hashing.hashed_counts_norms(texts, 64, first_seeds)[0]
    assert _hashing._PLANS.get(tuple(texts)).inverse is None  # the first time: as it was
    second = _hashing.hashed_counts_norms(texts, 64, second_seeds)[0]
    plan = _hashing._PLANS.get(tuple(texts))
    assert plan.inverse is not None and plan.span.size < sum(plan.kinds) // 10
    for counts, seeds in ((first, first_seeds), (second, second_seeds)):
        one = np.stack([_hashing.hashed_counts_one(t, 64, seeds) for t in texts])
        assert np.array_equal(counts, one)


def test_a_corpus_of_distinct_texts_keeps_its_plan():
    """Hardly a feature repeats: the distinct form would cost more than it saves."""
    texts = ["".join(chr(0x4E00 + 16 * i + j) for j in range(16)) for i in range(300)]
    _hashing._PLANS.clear()
    seeds = _hashing.model_seeds("m", 32)
    for _ in range(2):
        _hashing.hashed_counts_norms(texts, 32, seeds)
    plan = _hashing._PLANS.get(tuple(texts))
    assert plan.tried and plan.inverse is None


# -- member rows on bit patterns ------------------------------------------------------------


def _members(embedder: FakeEmbedder, n: int) -> list[tuple[str, str]]:
    names = embedder.cluster_names
    return [(names[i % len(names)], f"member {i} of {names[i % len(names)]}") for i in range(n)]


@settings(max_examples=30, deadline=None)
@given(
    dimensions=st.sampled_from([2, 3, 8, 9, 64, 100, 257]),
    spread=st.sampled_from([0.0, 0.01, 0.3, 1.0, 2.5]),
    dtype=st.sampled_from([np.float16, np.float32, np.float64, np.dtype(">f4"), np.dtype(">f8")]),
    n=st.integers(1, 40),
)
def test_member_rows_spread_on_bit_patterns_are_the_gathered_ones(dimensions, spread, dtype, n):
    try:
        embedder = FakeEmbedder(
            dimensions=dimensions,
            clusters={"a": ["alpha"], "b": ["beta"], "c": ["gamma"]},
            cluster_spread=spread,
        )
    except PlaceboragValueError:  # a declaration that cannot hold at this size
        assume(False)
    keys = _members(embedder, n)
    fast = embedder._engine.compute_members(keys, exact=False, dtype=dtype)[1]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(EmbedderEngine, "_spread_bits", lambda self, values, a_bits: None)
        gathered = embedder._engine.compute_members(keys, exact=False, dtype=dtype)[1]
    exact = embedder._engine.compute_members(keys, exact=True)[1]  # float64, the gather
    assert fast.dtype == gathered.dtype == np.dtype(dtype)
    assert fast.tobytes() == gathered.tobytes()
    assert fast.tobytes() == exact.astype(dtype).tobytes()


def test_a_zero_value_sends_member_rows_to_the_gather():
    """-0 is the integer 0, whose float is +0.0; a sign bit flipped in would give -0.0."""
    embedder = FakeEmbedder(dimensions=8, clusters={"a": ["alpha"]})
    a_bits = np.zeros((1, 8), dtype=np.uint8)
    with_zero = np.array([[0.5, 0.0, -0.5, 0.0]], dtype=np.float32)
    assert embedder._engine._spread_bits(with_zero, a_bits) is None
    assert embedder._engine._spread_bits(np.array([[0.5, 0.25, -0.5, -0.25]]), a_bits) is not None


# -- a store's first large batch ------------------------------------------------------------


@pytest.mark.parametrize("clusters", [None, {"refund": ["refund"], "ship": ["ship"]}])
def test_a_large_lazy_batch_is_embedded_into_the_store_as_embed_rows_gives_it(clusters):
    embedder = FakeEmbedder(
        dimensions=32, clusters=clusters, cluster_match="substring" if clusters else "exact"
    )
    texts = [f"{('refund', 'ship', 'other')[i % 3]} text {i}" for i in range(BULK_ROWS + 5)]
    store = FakeVectorStore(embedder=embedder)
    store.upsert_many([str(i) for i in range(len(texts))], texts)
    first = store.records()
    expected = embedder.embed_rows(texts)
    assert first.vectors.tobytes() == expected.tobytes()
    held = first.vectors.copy()
    # A second large batch (rows past the first: not every row) into a matrix handed out.
    more = [f"more {t}" for t in texts]
    store.upsert_many([f"m{i}" for i in range(len(more))], more)
    second = store.records()
    assert first.vectors.tobytes() == held.tobytes()  # the view handed out did not change
    assert second.vectors[len(texts) :].tobytes() == embedder.embed_rows(more).tobytes()
    assert second.vectors[: len(texts)].tobytes() == expected.tobytes()
