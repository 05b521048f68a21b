"""FakeVectorStore: exact ranking, tie rules, writes, recall, stale reads and injected failures."""

import functools
from collections import defaultdict
from fractions import Fraction

import numpy as np
import pytest
from _race import race

from placeborag import (
    FakeEmbedder,
    FakeVectorStore,
    FilterError,
    Match,
    PlaceboragTypeError,
    PlaceboragValueError,
    QueryRecord,
    RetrievalError,
    RetrievalTimeout,
)

WORDS = [
    "refund",
    "policy",
    "shipping",
    "order",
    "return",
    "money",
    "back",
    "days",
    "parcel",
    "invoice",
]


def exact_key(embedder, query, text):
    """sign(p) * p**2 / |d|**2: the cosine's order, in exact arithmetic."""
    _, q = embedder._engine.embed_exact([query])
    _, d = embedder._engine.embed_exact([text])
    p = sum(int(a) * int(b) for a, b in zip(q[0], d[0]))
    return Fraction(p * abs(p), sum(int(x) * int(x) for x in d[0]))


@functools.cache
def tie_group(dimensions=32, size=8):
    """Distinct texts whose cosines to the query are equal in exact arithmetic, but whose
    floating-point cosines are not all bit-identical."""
    embedder = FakeEmbedder(dimensions=dimensions)
    query = "refund policy"
    texts = [f"{a} {b}{n}" for a in WORDS for b in WORDS for n in range(12)]
    groups = defaultdict(list)
    for text in texts:
        key = exact_key(embedder, query, text)
        if key != 0:
            groups[key].append(text)
    qv = np.array(embedder.embed(query))
    for _key, members in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        floats = {float(np.dot(embedder.embed_batch([t])[0], qv)) for t in members}
        if len(members) >= size and len(floats) > 1:
            return embedder, query, members[:size]
    raise AssertionError("no tie group found")


@pytest.mark.parametrize("seed", range(5))
def test_exact_ties_follow_insertion_order_under_chroma_every_time(seed):
    embedder, query, texts = tie_group()
    rng = np.random.default_rng(seed)
    order = [texts[i] for i in rng.permutation(len(texts))]
    ids = [f"id-{rng.integers(10**6):06d}-{i}" for i in range(len(order))]
    store = FakeVectorStore(embedder=embedder, profile="chroma")
    store.upsert_many(ids, order)
    matches = store.query(query, k=len(texts))
    assert [m.id for m in matches] == ids
    # tied matches report bit-identical scores
    assert len({m.score for m in matches}) == 1


@pytest.mark.parametrize("seed", range(5))
def test_exact_ties_follow_id_order_under_qdrant_every_time(seed):
    embedder, query, texts = tie_group()
    rng = np.random.default_rng(seed)
    ids = [f"id-{rng.integers(10**6):06d}-{i}" for i in range(len(texts))]
    store = FakeVectorStore(embedder=embedder, profile="qdrant")
    for doc_id, text in zip(ids, texts):
        store.upsert(doc_id, text)
    matches = store.query(query, k=len(texts))
    assert [m.id for m in matches] == sorted(ids)
    assert len({m.score for m in matches}) == 1


def test_floating_point_noise_alone_would_have_ordered_the_ties_differently():
    embedder, query, texts = tie_group()
    q = np.array(embedder.embed(query))
    floats = embedder.embed_batch(texts) @ q
    naive = list(np.argsort(-floats, kind="stable"))
    assert naive != list(range(len(texts)))  # what the fake's tie rule prevents


def test_ranking_matches_an_exact_brute_force_ranking():
    embedder = FakeEmbedder(dimensions=16)
    texts = [f"{a} {b} {c}" for a in WORDS[:6] for b in WORDS[3:] for c in ("x", "yy", "zzz")]
    ids = [f"d{i:03d}" for i in range(len(texts))]
    store = FakeVectorStore(embedder=embedder, profile="chroma")
    store.upsert_many(ids, texts)
    for query in ("refund policy", "money back", "parcel days"):
        expected = sorted(
            range(len(texts)), key=lambda i: (-exact_key(embedder, query, texts[i]), i)
        )
        got = [m.id for m in store.query(query, k=len(texts))]
        assert got == [ids[i] for i in expected]


def test_upsert_keeps_the_original_insertion_position():
    store = FakeVectorStore()
    store.upsert("c", "identical text")
    store.upsert("a", "identical text")
    store.upsert("c", "identical text", {"v": 2})
    assert store.ids == ["c", "a"]
    assert [m.id for m in store.query("identical text", k=2)] == ["c", "a"]
    assert store.get("c").metadata == {"v": 2}


def test_a_deleted_and_rewritten_id_goes_to_the_end():
    store = FakeVectorStore()
    for doc_id in "abc":
        store.upsert(doc_id, "identical text")
    store.delete("a")
    store.upsert("a", "identical text")
    assert store.ids == ["b", "c", "a"]
    assert [m.id for m in store.query("identical text", k=3)] == ["b", "c", "a"]


def test_returned_metadata_is_a_copy_and_stored_metadata_is_isolated_from_the_caller():
    store = FakeVectorStore()
    metadata = {"lang": "en"}
    store.upsert("a", "refund policy", metadata)
    metadata["lang"] = "hu"
    first = store.query("refund policy", k=1)[0]
    first.metadata["lang"] = "de"
    assert store.query("refund policy", k=1)[0].metadata == {"lang": "en"}


def test_k_larger_than_the_collection_returns_every_record():
    store = FakeVectorStore()
    store.upsert_many(["a", "b", "c"], ["refund", "policy", "parcel"])
    assert len(store.query("refund", k=50)) == 3


def test_the_default_k_is_the_profiles():
    store = FakeVectorStore()
    store.upsert_many([f"d{i}" for i in range(20)], [f"refund {i}" for i in range(20)])
    assert len(store.query("refund")) == store.profile.default_k == 10


def test_the_store_records_every_query_with_its_context():
    store = FakeVectorStore()
    store.upsert("a", "refund policy", {"lang": "en"})
    where = {"lang": {"$in": ["en"]}}
    store.query("refund policy", k=3, where=where, context={"user": "alice"})
    where["lang"]["$in"].append("hu")  # the record is a copy
    store.fail_next_query()
    with pytest.raises(RetrievalTimeout):
        store.query("second", context={"user": "bob"})
    assert store.queries == (
        QueryRecord("refund policy", 3, {"lang": {"$in": ["en"]}}, {"user": "alice"}),
        QueryRecord("second", 10, None, {"user": "bob"}),
    )
    assert store.last_query.context == {"user": "bob"}


def test_a_bad_record_in_a_batch_writes_nothing():
    store = FakeVectorStore()
    with pytest.raises(TypeError) as excinfo:
        store.upsert_many(["a", "b", "c"], ["x", "y", "z"], [None, None, {"tags": {"a"}}])
    assert excinfo.value.args == (
        "metadatas[2]['tags']={'a'} must be None, a str, int, finite float, bool, datetime, "
        "date, or a list or dict of those, not set",
    )
    assert len(store) == 0


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda s: s.query("q", k=0), ValueError, "k=0 must be >= 1"),
        (lambda s: s.query("q", k="3"), TypeError, "k='3' must be an int, not str"),
        (lambda s: s.query("q", k=True), TypeError, "k=True must be an int, not bool"),
        (lambda s: s.query(b"q"), TypeError, "text=b'q' must be a str, not bytes"),
        (
            lambda s: s.query("q", where="lang=hu"),
            TypeError,
            "where='lang=hu' must be a dict or None, not str",
        ),
        (lambda s: s.upsert("", "t"), ValueError, "id='' must be a non-empty str"),
        (lambda s: s.upsert(7, "t"), TypeError, "id=7 must be a str, not int"),
        (lambda s: s.upsert("a", None), TypeError, "text=None must be a str, not NoneType"),
        (
            lambda s: s.upsert_many(["a"], [None]),
            TypeError,
            "texts[0]=None must be a str, not NoneType",
        ),
        (
            lambda s: s.upsert_many(["a", "a"], ["x", "y"]),
            ValueError,
            "ids[1]='a' repeats ids[0]; an id may appear once per call",
        ),
        (
            lambda s: s.upsert_many(["a"], ["x", "y"]),
            ValueError,
            "texts has 2 items and ids has 1; they must have the same length",
        ),
        (
            lambda s: s.upsert("a", "t", {"x": float("nan")}),
            ValueError,
            "metadata['x']=nan must be finite",
        ),
        (lambda s: s.delete(["nope"]), ValueError, "unknown id 'nope'"),
        (lambda s: s.delete(["doc-"]), ValueError, "unknown id 'doc-'; did you mean 'doc-1'?"),
        (
            lambda s: s.fail_next_query("boom"),
            TypeError,
            "error='boom' must be an exception instance or class, not str",
        ),
        (lambda s: s.fail_next_query(times=0), ValueError, "times=0 must be >= 1"),
    ],
)
def test_bad_input_raises_a_clear_error_and_changes_nothing(call, error, message):
    store = FakeVectorStore()
    store.upsert("doc-1", "refund policy")
    with pytest.raises(error) as excinfo:
        call(store)
    assert excinfo.value.args == (message,)
    assert store.ids == ["doc-1"]
    assert store.query("refund policy", k=1)[0].id == "doc-1"


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        (
            {"profile": "pinecone"},
            ValueError,
            "profile='pinecone' must be one of 'chroma', 'qdrant', 'faiss', 'lancedb', "
            "'pgvector', 'langchain', 'weaviate'",
        ),
        ({"filter_mode": "mid"}, ValueError, "filter_mode='mid' must be one of 'pre', 'post'"),
        ({"recall": 1.5}, ValueError, "recall=1.5 must be between 0.0 and 1.0"),
        ({"recall": "high"}, TypeError, "recall='high' must be a number, not str"),
        (
            {"visibility": "eventual"},
            ValueError,
            "visibility='eventual' must be one of 'immediate', 'manual'",
        ),
        ({"embedder": object()}, TypeError, None),
    ],
)
def test_bad_store_options_raise(options, error, message):
    with pytest.raises(error) as excinfo:
        FakeVectorStore(**options)
    if message is not None:
        assert excinfo.value.args == (message,)


def test_delete_with_missing_ok_ignores_unknown_ids():
    store = FakeVectorStore()
    store.upsert("a", "refund")
    store.delete(["a", "ghost"], missing_ok=True)
    assert len(store) == 0


def test_deleted_records_are_never_returned_and_compaction_keeps_order():
    store = FakeVectorStore()
    ids = [f"d{i:04d}" for i in range(3000)]
    store.upsert_many(ids, ["identical"] * 3000)
    store.delete(ids[:2000])
    assert store.ids == ids[2000:]
    assert [m.id for m in store.query("identical", k=5)] == ids[2000:2005]


# -- recall ---------------------------------------------------------------------------------


def recall_store(recall, n=40):
    store = FakeVectorStore(recall=recall)
    store.upsert_many(
        [f"d{i:02d}" for i in range(n)], [f"{WORDS[i % 10]} note {i}" for i in range(n)]
    )
    return store


def test_recall_keeps_exactly_floor_of_recall_times_the_candidates():
    store = recall_store(0.4)
    explanation = store.explain("refund policy", k=40)
    assert len(explanation.candidates) == 40
    assert len(explanation.recall_lost) == 24
    assert len(explanation.matches) == 16


def test_recall_survivors_keep_their_relative_order():
    full = [m.id for m in recall_store(1.0).query("refund policy", k=40)]
    degraded = [m.id for m in recall_store(0.5).query("refund policy", k=40)]
    assert degraded == [i for i in full if i in set(degraded)]


def test_different_queries_lose_different_documents():
    store = recall_store(0.5)
    lost = {q: store.explain(q, k=40).recall_lost for q in ("refund", "parcel", "invoice days")}
    assert len(set(lost.values())) == 3


def test_degraded_recall_can_lose_the_best_document():
    perfect, degraded = recall_store(1.0), recall_store(0.5)
    queries = [f"{w} note {i}" for w in WORDS for i in range(4)]
    lost_top = [q for q in queries if perfect.query(q, k=1)[0].id != degraded.query(q, k=1)[0].id]
    assert lost_top


def test_recall_zero_returns_nothing_and_recall_one_loses_nothing():
    assert recall_store(0.0).query("refund") == []
    assert recall_store(1.0).explain("refund").recall_lost == ()


# -- stale reads ----------------------------------------------------------------------------


def test_manual_visibility_hides_overwrites_and_deletes_until_refresh():
    store = FakeVectorStore(visibility="manual")
    store.upsert("a", "refund policy", {"v": 1})
    store.refresh()
    store.upsert("a", "parcel tracking", {"v": 2})
    store.upsert("b", "refund policy b")
    assert store.pending_writes == 2
    assert [(m.id, m.metadata) for m in store.query("refund policy")] == [("a", {"v": 1})]
    assert store.ids == ["a"]
    store.delete("b")  # deleting a pending write is allowed
    store.refresh()
    assert store.pending_writes == 0
    assert store.get("a").text == "parcel tracking"
    assert store.ids == ["a"]


# -- failures ------------------------------------------------------------------------------


def test_injected_failures_queue_up_and_are_raised_exactly_as_given():
    store = FakeVectorStore()
    store.upsert("a", "refund")
    first, second = ConnectionError("refused"), RetrievalTimeout("slow")
    store.fail_next_query(first, times=2)
    store.fail_next_query(second)
    raised = []
    for _ in range(3):
        with pytest.raises(Exception) as excinfo:
            store.query("refund")
        raised.append(excinfo.value)
    assert raised[0] is first and raised[1] is first and raised[2] is second
    assert store.query("refund")[0].id == "a"


def test_the_default_injected_failure_is_a_retrieval_timeout_and_a_timeout_error():
    store = FakeVectorStore()
    store.fail_next_query()
    with pytest.raises(TimeoutError) as excinfo:
        store.query("refund")
    assert isinstance(excinfo.value, RetrievalTimeout)
    assert isinstance(excinfo.value, RetrievalError)


def test_an_exception_class_is_raised_too():
    store = FakeVectorStore()
    store.fail_next_query(ConnectionResetError)
    with pytest.raises(ConnectionResetError):
        store.query("refund")


def test_a_malformed_query_does_not_consume_an_injected_failure():
    store = FakeVectorStore()
    store.fail_next_query()
    with pytest.raises(FilterError):
        store.query("refund", where={"lang": {"$regex": "x"}})
    with pytest.raises(RetrievalTimeout):
        store.query("refund")


def test_explain_matches_query_and_reports_every_stage():
    store = FakeVectorStore(filter_mode="post")
    store.upsert_many(
        ["en-1", "en-2", "hu-1"],
        ["refund policy", "refund policy now", "visszatérítés"],
        [{"lang": "en"}, {"lang": "en"}, {"lang": "hu"}],
    )
    explanation = store.explain("refund policy", k=2, where={"lang": "hu"})
    assert explanation.top_k == ("en-1", "en-2")
    assert explanation.post_filter_dropped == ("en-1", "en-2")
    assert explanation.matches == ()
    assert store.query("refund policy", k=2, where={"lang": "hu"}) == []
    assert explanation.ranked == ("en-1", "en-2", "hu-1")
    assert store.queries[-1].text == "refund policy"  # explain itself is not recorded
    assert len(store.queries) == 1


def test_match_is_a_frozen_value():
    m = Match("a", "t", {}, 0.5)
    with pytest.raises(AttributeError):
        m.score = 1.0  # type: ignore[misc]


class VectorTable:
    """A foreign embedder: hand-made vectors, no exact integer form."""

    dimensions = 3

    def __init__(self, table):
        self.table = table

    def embed_batch(self, texts):
        return np.array([self.table[t] for t in texts], dtype=float)


def test_a_foreign_embedder_is_ranked_exactly_on_its_float_vectors():
    table = {"q": [1.0, 0.0, 0.0], "a": [0.6, 0.8, 0.0], "b": [0.6, 0.0, 0.8], "c": [1, 0, 0]}
    store = FakeVectorStore(embedder=VectorTable(table), profile="qdrant")
    store.upsert_many(["b", "c", "a"], ["b", "c", "a"])
    matches = store.query("q", k=3)
    assert [m.id for m in matches] == ["c", "a", "b"]
    # Scores come from the float32 vectors the store holds, as a real engine's do: exact for
    # those vectors, so 0.6 carries float32's rounding of the stored row.
    assert [m.score for m in matches] == [1.0, pytest.approx(0.6, abs=1e-7), matches[1].score]


class CountingTable(VectorTable):
    def __init__(self, table):
        super().__init__(table)
        self.calls = []

    def embed_batch(self, texts):
        self.calls.append(list(texts))
        return super().embed_batch(texts)


def test_a_foreign_embedder_is_called_once_per_write_and_once_per_query():
    table = {"q": [1.0, 0.0, 0.0], "a": [0.6, 0.8, 0.0], "b": [0.6, 0.8, 0.0], "c": [1, 0, 0]}
    embedder = CountingTable(table)
    store = FakeVectorStore(embedder=embedder, profile="qdrant")
    store.upsert_many(["a", "b", "c"], ["a", "b", "c"])
    matches = store.query("q", k=3)
    # a and b tie exactly; ranking them exactly reads the stored rows, not the model.
    assert [m.id for m in matches] == ["c", "a", "b"]
    assert embedder.calls == [["a", "b", "c"], ["q"]]


def test_a_foreign_embedder_of_the_wrong_dimension_is_rejected():
    store = FakeVectorStore(embedder=VectorTable({"a": [1.0, 0.0, 0.0], "z": [1.0, 0.0]}))
    store.upsert("a", "a")
    with pytest.raises(ValueError) as excinfo:
        store.upsert("z", "z")
    assert excinfo.value.args == (
        "the embedder returned 2-dimensional vectors; the store holds 3-dimensional ones",
    )


@pytest.mark.parametrize("dimensions", [3, 64, 256])
def test_a_fake_embedders_rows_are_stored_as_its_float64_vectors_rounded_to_float32(dimensions):
    """The store takes a FakeEmbedder's rows in float32 straight away (no second
    normalisation): they must be exactly its float64 unit vectors, cast."""
    clusters = {"refund": ["refund policy", "money back"], "shipping": ["delivery times"]}
    embedder = FakeEmbedder(
        dimensions=dimensions, clusters=clusters, cluster_match="substring", cluster_spread=0.4
    )
    texts = [f"refund policy case {i}" for i in range(150)] + [f"note {i}" for i in range(150)]
    texts += ["money back", "delivery times", "", "🙂"]
    store = FakeVectorStore(embedder=embedder)
    store.upsert_many([f"d{i}" for i in range(len(texts))], texts)
    stored = store.records().vectors
    assert stored.dtype == np.float32
    assert np.array_equal(stored, embedder.embed_array(texts).astype(np.float32))


def test_a_failure_injected_many_times_does_not_grow_its_traceback():
    """Issue 13 item 8: one exception instance raised 500 times kept every traceback."""
    import traceback

    store = FakeVectorStore()
    store.upsert("a", "refund policy")
    error = RetrievalTimeout("down")
    store.fail_next_query(error, times=500)
    depths = []
    for _ in range(500):
        try:
            store.query("refund")
        except RetrievalTimeout as exc:
            assert exc is error  # the caller's own instance, as 0.4.0 raised it
            depths.append(len(traceback.extract_tb(exc.__traceback__)))
    assert depths[-1] == depths[0] <= 5


@pytest.mark.parametrize("k", [10**7, 10**30, 2**64])
def test_a_k_beyond_a_million_is_refused_before_anything_is_built(k):
    """Issue 13 item 10: faiss padded 10**8 slots (seconds) and 10**30 overflowed."""
    store = FakeVectorStore(profile="faiss")
    store.upsert("a", "refund policy")
    with pytest.raises(PlaceboragValueError, match=r"must be <= 1,000,000"):
        store.query("refund", k=k)
    assert len(store.query("refund", k=1_000)) == 1_000  # padded, as FAISS pads


@pytest.mark.parametrize("recall", [10**400, -(10**400), 2])
def test_a_huge_int_recall_is_refused_without_overflow(recall):
    with pytest.raises(PlaceboragValueError, match=r"must be between 0\.0 and 1\.0"):
        FakeVectorStore(recall=recall)


def test_query_by_vector_of_a_texts_own_vector_returns_exactly_query_of_the_text():
    # The docstring's promise. Before, 14 of these 103 queries differed: the vector path ranked
    # with an exact form of the float vector, the text path with the embedder's integers, so
    # scores moved by an ulp and ties changed order.
    import random

    rng = random.Random(3)
    words = "refund policy parcel delivery invoice account password reset courier days".split()
    store = FakeVectorStore(embedder=FakeEmbedder(dimensions=16))
    for i in range(300):
        store.upsert(f"d{i}", " ".join(rng.choice(words) for _ in range(rng.randint(1, 4))))
    differ = []
    for _ in range(103):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(1, 3)))
        by_text = [(m.id, m.score) for m in store.query(text, k=10)]
        by_vector = store.query_by_vector(store.embed_query(text), text=text, k=10)
        if by_text != [(m.id, m.score) for m in by_vector]:
            differ.append(text)
    assert differ == []
    assert store.queries[-1].vector is not None  # logged as a vector query all the same


def test_two_stores_re_embedded_from_each_other_on_two_threads_both_finish():
    # reembedded() once held its own lock while taking the other store's snapshot: two
    # threads doing it in opposite directions waited on each other for good.
    clusters = {"refund": ["refund policy", "money back"]}
    ids = [f"d{i}" for i in range(3000)]
    texts = [f"doc {i} words" for i in range(3000)]
    a = FakeVectorStore(embedder=FakeEmbedder(clusters=clusters))
    b = FakeVectorStore(embedder=FakeEmbedder(clusters=clusters, cluster_spread=0.9))
    a.upsert_many(ids, texts)
    b.upsert_many(ids, texts)
    new = FakeEmbedder(clusters=clusters, cluster_spread=0.7)
    for _ in range(10):  # one after the other: each call is a few ms
        a.reembedded(new, reuse=(b, ids[:2000]))
        b.reembedded(new, reuse=(a, ids[:2000]))
    done = []

    def run(store, other):
        for _ in range(50):
            store.reembedded(new, reuse=(other, ids[:2000]))
        done.append(store)

    # a deadlock never ends; this takes well under a second
    assert race(run, [(a, b), (b, a)], timeout=60) == []
    assert len(done) == 2


# -- the query log (issue 27: store.queries kept every query, ~800 bytes each, unbounded) ----


def test_the_query_log_keeps_the_most_recent_queries_and_counts_every_one():
    store = FakeVectorStore(query_log=3)
    store.upsert("a", "refund policy")
    for i in range(4):
        store.query(f"q{i}")
    store.fail_next_query()
    with pytest.raises(RetrievalTimeout):
        store.query("failed")
    assert [q.text for q in store.queries] == ["q2", "q3", "failed"]
    assert store.query_count == 5
    assert store.last_query.text == "failed"
    assert store.options.query_log == 3
    twin = store.with_options(profile="qdrant")  # its own log, as long as this one's
    twin.query("t0")
    assert [q.text for q in twin.queries] == ["t0"] and twin.options.query_log == 3
    assert twin.with_options(query_log=None).options.query_log is None


def test_the_default_query_log_keeps_the_last_thousand_queries():
    store = FakeVectorStore()
    store.upsert("a", "refund policy")
    for i in range(1005):
        store.query(f"q{i}")
    assert len(store.queries) == 1000 == store.options.query_log
    assert store.queries[0].text == "q5" and store.last_query.text == "q1004"
    assert store.query_count == 1005


def test_query_log_none_keeps_every_query_and_zero_keeps_none():
    every, none = FakeVectorStore(query_log=None), FakeVectorStore(query_log=0)
    for store in (every, none):
        store.upsert("a", "refund policy")
        for i in range(1500):
            store.query(f"q{i}", k=1)
    assert len(every.queries) == 1500 == every.query_count
    assert none.queries == () and none.query_count == 1500
    with pytest.raises(
        PlaceboragValueError, match=r"received 1,500 queries and keeps none .*query_log=0"
    ):
        none.last_query
    with pytest.raises(PlaceboragValueError, match="has received no query yet"):
        FakeVectorStore().last_query


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        (
            -1,
            PlaceboragValueError,
            r"query_log=-1 must be None \(keep every query\) or an int >= 0",
        ),
        (1.5, PlaceboragTypeError, r"query_log=1\.5 must be None .* not float"),
        (True, PlaceboragTypeError, r"query_log=True must be None .* not bool"),
        ("10", PlaceboragTypeError, r"query_log='10' must be None .* not str"),
    ],
)
def test_a_bad_query_log_is_refused_by_name(value, error, message):
    with pytest.raises(error, match=message):
        FakeVectorStore(query_log=value)
    store = FakeVectorStore()
    with pytest.raises(error, match=message):
        store.with_options(query_log=value)
    assert FakeVectorStore(query_log=np.int64(7)).options.query_log == 7


def test_a_bounded_query_log_holds_its_memory_over_many_queries():
    import tracemalloc

    def growth(query_log):
        store = FakeVectorStore(query_log=query_log)
        store.upsert("a", "refund policy", {"lang": "en"})
        asked = {"k": 1, "where": {"lang": "en"}, "context": {"user": "alice"}}
        for _ in range(50):  # the log fills up (and every cache warms) first
            store.query("refund", **asked)
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            for _ in range(600):
                store.query("refund", **asked)
            return tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()

    # A record of this query (its where and context copied) is about 550 bytes: a log of 20
    # holds about 11 KB however many queries run; an unbounded one grows with each.
    assert growth(20) < 100_000
    assert growth(0) < 100_000
    assert growth(None) > 600 * 400


def test_a_hybrid_retriever_keeps_as_many_queries_as_its_store():
    from placeborag import HybridRetriever

    store = FakeVectorStore(query_log=2)
    store.upsert("a", "refund policy")
    retriever = HybridRetriever(store)
    for i in range(3):
        retriever.query(f"refund {i}", k=1)
    assert [q.text for q in retriever.queries] == ["refund 1", "refund 2"]
    assert retriever.query_count == 3 and store.query_count == 3
    assert [q.text for q in store.queries] == ["refund 1", "refund 2"]
