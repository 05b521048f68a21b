"""Fuzzing the core: ids, texts, metadata, filters, k, recall, dimensions and clusters.

Each test feeds hostile values to one public input and asserts a correct result or a
PlaceboragError (see ``_fuzz.result_or_error``). The threaded tests hold the store's lock
and its first write; the regression tests of issue 13 name their item.
"""

from __future__ import annotations

import math
import threading
from fractions import Fraction

import numpy as np
import pytest
from _fuzz import (
    FUZZ,
    FUZZ_SLOW,
    anything,
    huge_ints,
    json_values,
    nested,
    numbers,
    odd_objects,
    result_or_error,
    scalars,
    texts,
)
from _reference import Clash, reference
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    invariant,
    precondition,
    rule,
)

from placeborag import FakeEmbedder, FakeVectorStore, FilterTypeError, PlaceboragError
from placeborag._validation import as_written as _as_written

DOCS = {
    "a": ("refund policy for returns", {"lang": "en", "year": 2024, "n": 1}),
    "b": ("delivery times inside the EU", {"lang": "en", "year": 2023, "n": 2.5}),
    "c": ("pénzvisszatérítési szabályzat", {"lang": "hu", "year": 2025, "tag": True}),
    "d": ("reset your password", None),
}


def small_store(**options) -> FakeVectorStore:
    store = FakeVectorStore(embedder=FakeEmbedder(dimensions=16), **options)
    store.upsert_many(list(DOCS), [t for t, _ in DOCS.values()], [m for _, m in DOCS.values()])
    return store


def check_matches(matches, k: int, where) -> None:
    ids = [m.id for m in matches]
    assert len(ids) == len(set(ids)) and len(ids) <= k
    for m in matches:
        assert m.id in DOCS
        if isinstance(where, dict) and where:
            assert reference(where, DOCS[m.id][1])


# -- ids, texts, metadata -------------------------------------------------------------------


@FUZZ
@given(id_=anything, text=anything, metadata=st.one_of(json_values, anything))
def test_upsert_takes_any_record_or_refuses_it(id_, text, metadata):
    store = small_store()
    before = store.ids
    outcome = result_or_error(lambda: store.upsert(id_, text, metadata))
    if isinstance(outcome, PlaceboragError):
        assert store.ids == before  # refused before any state changed
    else:
        assert id_ in store.ids
        result_or_error(lambda: store.query(text, k=2))


@FUZZ
@given(ids=st.one_of(st.lists(anything, max_size=4), anything), data=st.data())
def test_upsert_many_and_delete_take_any_columns_or_refuse_them(ids, data):
    store = small_store()
    before = store.ids
    texts_ = data.draw(st.one_of(st.lists(texts, max_size=4), anything))
    outcome = result_or_error(lambda: store.upsert_many(ids, texts_))
    if isinstance(outcome, PlaceboragError):
        assert store.ids == before
    result_or_error(lambda: store.delete(data.draw(st.one_of(anything, st.lists(texts)))))


@FUZZ
@given(text=anything)
def test_embedding_any_text_gives_a_unit_vector_or_an_error(text):
    embedder = FakeEmbedder(dimensions=8)
    vector = result_or_error(lambda: embedder.embed(text))
    if not isinstance(vector, PlaceboragError):
        assert len(vector) == 8
        assert math.isclose(math.fsum(x * x for x in vector), 1.0, rel_tol=1e-9)


@FUZZ
@given(big=huge_ints)
def test_metadata_ints_beyond_float_range_can_be_filtered(big):
    store = small_store()
    store.upsert("big", "huge number", {"n": big})
    result_or_error(lambda: store.query("number", k=5, where={"n": 5}))
    result_or_error(lambda: store.query("number", k=5, where={"n": {"$gt": big}}))


# -- filters --------------------------------------------------------------------------------

operators = st.sampled_from(
    ["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$and", "$or", "$regex", "eq"]
)
hostile_filters = st.recursive(
    st.one_of(
        st.dictionaries(st.sampled_from(["lang", "year", "n", "tag", "$and", "$or"]), scalars),
        st.builds(
            lambda key, op, value: {key: {op: value}},
            st.sampled_from(["lang", "year", "n", "tag", "missing"]),
            operators,
            st.one_of(scalars, st.lists(scalars, max_size=3)),
        ),
        anything,
    ),
    lambda inner: st.builds(
        lambda op, items: {op: items},
        st.sampled_from(["$and", "$or", "$not"]),
        st.lists(inner, max_size=3),
    ),
    max_leaves=6,
)


@FUZZ
@given(where=hostile_filters, k=st.integers(1, 5))
def test_any_filter_gives_matching_records_or_a_filter_error(where, k):
    store = small_store()
    matches = result_or_error(lambda: store.query("refund", k=k, where=where))
    if not isinstance(matches, PlaceboragError):
        check_matches(matches, k, where)


@FUZZ
@given(big=huge_ints, op=st.sampled_from(["$gt", "$lt", "$eq", "$in"]))
def test_filter_values_beyond_float_range_are_compared_or_refused(big, op):
    store = small_store()
    value = [big] if op == "$in" else big
    result_or_error(lambda: store.query("refund", k=3, where={"year": {op: value}}))


@FUZZ
@given(depth=st.integers(250, 600))
def test_deeply_nested_filters_are_evaluated_or_refused(depth):
    where = {"lang": "en"}
    for _ in range(depth):
        where = {"$and": [where]}
    store = small_store()
    result_or_error(lambda: store.query("refund", k=2, where=where))


# The differential test: well-formed filters, answered by the store and the reference.
keys = st.sampled_from(["lang", "year", "n", "tag", "missing"])
filter_scalars = st.one_of(
    st.integers(-3, 2030),
    st.sampled_from([2024, 2.5, 2**60, 2**60 + 1, float(2**60), -0.0]),
    st.sampled_from(["en", "hu", "de", "1"]),
    st.booleans(),
)
same_kind_lists = st.one_of(
    st.lists(st.integers(2020, 2026), min_size=1, max_size=3),
    st.lists(st.sampled_from(["en", "hu", "de"]), min_size=1, max_size=3),
    st.lists(st.booleans(), min_size=1, max_size=2),
)
conditions = st.one_of(
    filter_scalars,
    st.dictionaries(st.sampled_from(["$eq", "$ne"]), filter_scalars, min_size=1, max_size=1),
    st.dictionaries(
        st.sampled_from(["$gt", "$gte", "$lt", "$lte"]),
        st.one_of(st.integers(-3, 2030), st.floats(-5, 2030, allow_nan=False)),
        min_size=1,
        max_size=2,
    ),
    st.dictionaries(st.sampled_from(["$in", "$nin"]), same_kind_lists, min_size=1, max_size=1),
)
leaves = st.dictionaries(keys, conditions, min_size=1, max_size=2)
good_filters = st.recursive(
    leaves,
    lambda inner: st.builds(
        lambda op, items: {op: items},
        st.sampled_from(["$and", "$or"]),
        st.lists(inner, min_size=1, max_size=3),
    ),
    max_leaves=8,
)
# Stored values: scalars, lists (a list in a list too) and dicts. A dict, or a list inside a
# list, once made every $in/$nin on its key raise TypeError (unhashable).
stored_values = st.one_of(
    filter_scalars,
    st.lists(st.one_of(filter_scalars, st.lists(filter_scalars, max_size=2)), max_size=3),
    st.dictionaries(st.sampled_from(["file", "page"]), filter_scalars, max_size=2),
)
record_metadata = st.one_of(
    st.none(),
    st.dictionaries(keys, stored_values, max_size=4),
)


@FUZZ
@given(where=good_filters, rows=st.lists(record_metadata, min_size=1, max_size=10))
def test_the_store_agrees_with_the_reference_interpreter(where, rows):
    store = FakeVectorStore(embedder=FakeEmbedder(dimensions=8))
    ids = [f"r{i}" for i in range(len(rows))]
    store.upsert_many(ids, [f"text {i}" for i in range(len(rows))], rows)
    try:  # strict semantics: a range bound against a stored non-number is a bug in the filter
        expected = {id_ for id_, row in zip(ids, rows) if reference(where, row, strict=True)}
    except Clash:
        with pytest.raises(FilterTypeError, match="cannot compare"):
            store.query("text", k=len(rows), where=where)
        expected = {id_ for id_, row in zip(ids, rows) if reference(where, row)}
        engine = store.with_options(filter_semantics="engine")
        got = {m.id for m in engine.query("text", k=len(rows), where=where)}
        if where_has_no_negation(where):  # engine $ne/$nin may match a missing key
            assert got == expected
        return
    got = {m.id for m in store.query("text", k=len(rows), where=where)}
    assert got == expected


def where_has_no_negation(where) -> bool:
    text = repr(where)
    return "$ne" not in text and "$nin" not in text


# -- k, recall, dimensions, clusters --------------------------------------------------------

profiles = st.sampled_from(["chroma", "qdrant", "faiss", "lancedb", "pgvector", "weaviate"])
# k far beyond any store (10**30 once overflowed under faiss's padding: issue 13 item 10).
k_values = st.one_of(
    st.integers(-3, 10),
    st.integers(10**3, 10**6),
    st.integers(10**6, 10**40),
    st.floats(),
    odd_objects,
    st.none(),
)


@FUZZ
@given(k=k_values, profile=profiles)
def test_any_k_gives_at_most_k_matches_or_an_error(k, profile):
    store = small_store(profile=profile)
    matches = result_or_error(lambda: store.query("refund", k=k))
    # None means the profile's default k (faiss pads it with id "-1" matches).
    if not isinstance(matches, PlaceboragError) and k is not None:
        assert len(matches) <= k


@FUZZ
@given(k=st.integers(10**20, 10**40))
def test_an_astronomic_k_is_answered_or_refused(k):
    store = small_store(profile="faiss")
    result_or_error(lambda: store.query("refund", k=k))


@FUZZ
@given(recall=st.one_of(numbers, anything), n=st.integers(1, 8))
def test_any_recall_keeps_at_most_every_candidate_or_is_refused(recall, n):
    store = result_or_error(
        lambda: FakeVectorStore(embedder=FakeEmbedder(dimensions=8), recall=recall)
    )
    if isinstance(store, PlaceboragError):
        return
    store.upsert_many([f"d{i}" for i in range(n)], [f"text {i}" for i in range(n)])
    assert len(store.query("text", k=n)) <= n


@FUZZ
@given(recall=huge_ints)
def test_a_recall_beyond_float_range_is_refused(recall):
    result_or_error(lambda: FakeVectorStore(recall=recall))


def test_recall_keeps_the_decimal_floor_of_the_candidates():
    # Every pair the issue measured: r in 0.1 .. 0.9, n in 1 .. 30.
    wrong = []
    for tenths in range(1, 10):
        for n in range(1, 31):
            store = FakeVectorStore(embedder=FakeEmbedder(dimensions=8), recall=tenths / 10)
            store.upsert_many([f"d{i}" for i in range(n)], [f"text {i}" for i in range(n)])
            if len(store.query("text", k=n)) != tenths * n // 10:
                wrong.append((tenths / 10, n))
    assert wrong == []


def test_recall_written_as_a_fraction_keeps_the_fraction_s_floor():
    # 1/3 is the float 0.33333333333333331: its exact value (and its decimal repr) times 3 is
    # just under 1, and kept no document of 3.
    wrong = []
    for q in range(2, 13):
        for p in range(1, q):
            for n in (q, 2 * q, 3 * q + 1):
                store = FakeVectorStore(embedder=FakeEmbedder(dimensions=8), recall=p / q)
                store.upsert_many([f"d{i}" for i in range(n)], [f"text {i}" for i in range(n)])
                if len(store.query("text", k=n)) != p * n // q:
                    wrong.append((f"{p}/{q}", n))
    assert wrong == []


@FUZZ
@given(share=st.floats(0.0, 1.0))
def test_a_share_is_read_as_a_fraction_that_rounds_to_the_float_given(share):
    read = _as_written(share)
    assert 0 <= read <= 1 and float(read) == share  # never another number than the one given
    assert read.denominator <= Fraction(share).denominator  # and never a less simple one


@FUZZ
@given(places=st.integers(1, 7), data=st.data())
def test_a_decimal_of_up_to_seven_places_is_read_as_typed(places, data):
    typed = Fraction(data.draw(st.integers(0, 10**places)), 10**places)
    assert _as_written(float(typed)) == typed


@FUZZ
@given(
    dimensions=st.one_of(st.integers(-5, 5000), huge_ints, numbers, anything),
    model_name=st.one_of(texts, anything),
)
def test_any_embedder_options_give_a_working_embedder_or_an_error(dimensions, model_name):
    embedder = result_or_error(lambda: FakeEmbedder(dimensions=dimensions, model_name=model_name))
    if not isinstance(embedder, PlaceboragError):
        assert len(embedder.embed("refund")) == dimensions


hashable = st.one_of(texts, scalars, st.sampled_from([b"k", (1, 2), frozenset({1}), 3.5]))
cluster_maps = st.dictionaries(
    hashable,
    st.one_of(st.lists(st.one_of(texts, anything), max_size=4), anything),
    max_size=3,
)


@FUZZ
@given(
    clusters=st.one_of(cluster_maps, anything),
    spread=st.one_of(numbers, anything),
    match=st.one_of(st.sampled_from(["exact", "substring"]), scalars),
)
def test_any_cluster_declaration_gives_an_embedder_or_an_error(clusters, spread, match):
    embedder = result_or_error(
        lambda: FakeEmbedder(
            dimensions=32, clusters=clusters, cluster_spread=spread, cluster_match=match
        )
    )
    if not isinstance(embedder, PlaceboragError):
        vectors = embedder.embed_array(["refund policy", "delivery"])
        assert vectors.shape == (2, 32)


def test_an_array_as_cluster_match_is_refused():
    result_or_error(lambda: FakeEmbedder(cluster_match=np.array([1.0, 2.0])))


# -- a stateful test of the store against a dict --------------------------------------------


class StoreMachine(RuleBasedStateMachine):
    """FakeVectorStore under upsert, delete, refresh and query, beside a plain dict model.

    With ``visibility="manual"`` the model keeps two dicts: what a query sees (``visible``) and
    what it will see after the next refresh (``written``).
    """

    ids = Bundle("ids")

    def __init__(self) -> None:
        super().__init__()
        self.manual = False
        self.store = FakeVectorStore(embedder=FakeEmbedder(dimensions=8))
        self.written: dict[str, tuple[str, dict | None]] = {}
        self.visible: dict[str, tuple[str, dict | None]] = {}

    @precondition(lambda self: not self.written and not self.manual)
    @rule()
    def switch_to_manual_visibility(self) -> None:
        self.manual = True
        self.store = FakeVectorStore(embedder=FakeEmbedder(dimensions=8), visibility="manual")

    @rule(
        target=ids,
        id_=st.text(alphabet="abcde", min_size=1, max_size=3),
        text=st.text(max_size=10),
        meta=st.one_of(st.none(), st.dictionaries(st.sampled_from("xy"), st.integers(0, 3))),
    )
    def upsert(self, id_, text, meta):
        self.store.upsert(id_, text, meta)
        self.written[id_] = (text, meta)
        if not self.manual:
            self.visible = dict(self.written)
        return id_

    @rule(id_=consumes(ids))
    def delete(self, id_):
        outcome = result_or_error(lambda: self.store.delete(id_))
        # One id: True when it was stored, False when not (0.4.0's contract).
        if id_ in self.written:
            assert outcome is True
            del self.written[id_]
        else:
            assert outcome is False
        if not self.manual:
            self.visible = dict(self.written)

    @rule()
    def refresh(self):
        self.store.refresh()
        self.visible = dict(self.written)

    @rule(k=st.integers(1, 6), x=st.one_of(st.none(), st.integers(0, 3)))
    def query(self, k, x):
        where = None if x is None else {"x": x}
        matches = self.store.query("a", k=k, where=where)
        expected = {i for i, (_, m) in self.visible.items() if where is None or reference(where, m)}
        assert len(matches) == min(k, len(expected))
        assert {m.id for m in matches} <= expected
        for m in matches:
            text, meta = self.visible[m.id]
            assert m.text == text and (m.metadata or None) == (meta or None)

    @invariant()
    def ids_are_the_visible_records(self):
        assert set(self.store.ids) == set(self.visible)
        for id_ in self.visible:
            assert self.store.get(id_).id == id_


StoreMachine.TestCase.settings = FUZZ_SLOW
test_the_store_behaves_like_a_dict = StoreMachine.TestCase


# -- a bounded threaded stress test ---------------------------------------------------------


class NoDimensions:
    """An embedder without ``.dimensions``, like the adapters' wrappers (issue 13 item 5)."""

    def __init__(self) -> None:
        self.inner = FakeEmbedder(dimensions=8)

    def embed_batch(self, texts):
        return self.inner.embed_batch(texts)


def _hammer(store: FakeVectorStore, threads: int, writes: int) -> list[BaseException]:
    errors: list[BaseException] = []
    barrier = threading.Barrier(threads)

    def work(t: int) -> None:
        try:
            barrier.wait()
            for i in range(writes):
                store.upsert(f"t{t}-{i}", f"text {t} {i}", {"t": t})
                store.query("text", k=3, where={"t": t})
            store.delete([f"t{t}-0"])
        except BaseException as error:  # collected, re-raised by the assertion
            errors.append(error)

    workers = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return errors


@pytest.mark.parametrize("embedder", [FakeEmbedder(dimensions=8)], ids=["with-dimensions"])
def test_threads_writing_and_querying_one_store_lose_nothing(embedder):
    for _ in range(10):
        store = FakeVectorStore(embedder=embedder)
        assert _hammer(store, threads=6, writes=20) == []
        expected = {f"t{t}-{i}" for t in range(6) for i in range(1, 20)}
        assert set(store.ids) == expected


def test_threads_making_the_first_writes_without_dimensions_lose_nothing():
    import sys

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    lost = []
    try:
        for trial in range(300):
            store = FakeVectorStore(embedder=NoDimensions())
            barrier = threading.Barrier(6)
            errors: list[BaseException] = []

            def first_write(t: int, store=store, barrier=barrier, errors=errors) -> None:
                try:
                    barrier.wait()
                    store.upsert(f"t{t}", f"text {t}")
                except BaseException as error:
                    errors.append(error)

            workers = [threading.Thread(target=first_write, args=(t,)) for t in range(6)]
            for worker in workers:
                worker.start()
            for worker in workers:
                worker.join()
            if errors or len(store.ids) != 6:
                lost.append((trial, sorted(store.ids), errors))
    finally:
        sys.setswitchinterval(interval)
    assert lost == []


def test_a_3000_deep_metadata_value_is_stored_or_refused():
    store = small_store()
    result_or_error(lambda: store.upsert("deep", "text", {"a": nested(3000)}))


def test_threads_sharing_one_embedder_get_the_vectors_it_gives_alone():
    embedder = FakeEmbedder(dimensions=16)
    batches = [[f"text {t} {i}" for i in range(30)] for t in range(6)]
    alone = [FakeEmbedder(dimensions=16).embed_array(batch).tobytes() for batch in batches]
    results: dict[int, bytes] = {}
    barrier = threading.Barrier(6)

    def work(t: int) -> None:
        barrier.wait()
        for _ in range(5):
            results[t] = embedder.embed_array(batches[t]).tobytes()

    workers = [threading.Thread(target=work, args=(t,)) for t in range(6)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert [results[t] for t in range(6)] == alone


# -- query vectors --------------------------------------------------------------------------

vector_entries = st.one_of(
    numbers, huge_ints, st.booleans(), texts, st.sampled_from(["1", "2.5"]), odd_objects
)
query_vectors = st.one_of(
    st.lists(vector_entries, max_size=4),
    st.lists(st.one_of(numbers, st.lists(numbers, max_size=2)), max_size=3),
    st.sampled_from(
        [
            np.array([1 + 2j, 1]),
            np.array([True, False]),
            np.array(["1", "2"]),
            np.array([1, 2], dtype=object),
            np.array([1, 2], dtype=np.int8),
            np.zeros((2, 1)),
        ]
    ),
    anything,
)


def _real(entry) -> bool:
    return isinstance(entry, (int, float, np.integer, np.floating)) and not isinstance(
        entry, (bool, np.bool_)
    )


@FUZZ
@given(vector=query_vectors)
def test_a_query_vector_is_ranked_or_refused(vector):
    store = FakeVectorStore(embedder=FakeEmbedder(dimensions=2))
    store.upsert_many(["a", "b"], ["refund policy", "delivery times"])
    matches = result_or_error(lambda: store.query_by_vector(vector, k=2))
    if not isinstance(matches, PlaceboragError):
        # Only real numbers are a vector: numpy would quietly make 1.0 of True, "1" or 1+2j.
        entries = vector.tolist() if isinstance(vector, np.ndarray) else list(vector)
        assert all(map(_real, entries)), vector
        assert len(matches) == 2
