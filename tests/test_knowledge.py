"""StubKnowledgeStore and CandidateCache: scripted and computed results, access, the record."""

import asyncio

import pytest
from _race import race
from hypothesis import given
from hypothesis import strategies as st

from placeborag import (
    FakeVectorStore,
    FilterError,
    HybridRetriever,
    Match,
    PlaceboragTypeError,
    PlaceboragValueError,
    RetrievalTimeout,
)
from placeborag.query_engine import (
    CacheEvent,
    CandidateCache,
    StubKnowledgeStore,
    UnscriptedQuery,
    WithheldRecord,
)

ALICE = {"user": "alice", "groups": ["support"]}
BOB = {"user": "bob", "groups": ["hr"]}

REFUND = Match("refund#0", "Returns within 30 days.", {"source": "wiki", "acl": "all"}, 0.9)
SALARY = Match("salary#0", "Salary bands for 2026.", {"source": "hr-drive", "acl": "hr"}, 0.8)


def by_group(identity, match):
    return match.metadata["acl"] == "all" or match.metadata["acl"] in identity["groups"]


def test_a_scripted_query_returns_its_matches_and_records_the_identity():
    store = StubKnowledgeStore(results={"refund policy": [REFUND]})

    result = store.search("refund policy", identity=ALICE, context={"session": "s-1"})

    assert result.matches == (REFUND,)
    assert result.outcome == "found"
    assert [(c.query, c.identity, c.context, c.k) for c in store.calls] == [
        ("refund policy", ALICE, {"session": "s-1"}, 10)
    ]
    assert store.identities == (ALICE,)


def test_the_record_keeps_a_copy_of_the_identity():
    store = StubKnowledgeStore(default=[])
    identity = {"user": "alice", "groups": ["support"]}
    store.search("x", identity=identity)
    identity["groups"].append("admin")

    assert store.calls[0].identity == {"user": "alice", "groups": ["support"]}


def test_an_unscripted_query_raises_and_lists_the_nearest_scripted_ones():
    store = StubKnowledgeStore(results={"refund policy": [REFUND], "shipping": []})

    with pytest.raises(UnscriptedQuery) as excinfo:
        store.search("refund policies", identity=ALICE)

    assert excinfo.value.args == (
        "no result scripted for query='refund policies' (search 0); nearest scripted queries:"
        " 'refund policy'. The key is the exact query text; script it with"
        " script(query, matches) or give default=[] to answer unscripted queries with nothing",
    )
    assert store.queries == ("refund policies",)


def test_a_default_answers_unscripted_queries():
    store = StubKnowledgeStore(results={"refund policy": [REFUND]}, default=[])

    assert store.search("weather", identity=ALICE).outcome == "empty"


def test_matches_may_be_scripted_as_texts_or_dicts():
    store = StubKnowledgeStore(default=[])
    store.script("q", ["first", {"id": "doc-2", "text": "second", "metadata": {"source": "s"}}])

    result = store.search("q", identity=None)

    assert [(m.id, m.text, m.score) for m in result.matches] == [
        ("q#0", "first", 1.0),
        ("doc-2", "second", 0.5),
    ]


def test_where_filters_scripted_matches_in_the_stores_filter_language():
    store = StubKnowledgeStore(results={"both": [REFUND, SALARY]})

    wiki = store.search("both", identity=ALICE, where={"source": "wiki"})
    not_hr = store.search("both", identity=ALICE, where={"acl": {"$ne": "hr"}})

    assert (wiki.matches, not_hr.matches) == ((REFUND,), (REFUND,))
    assert store.calls[0].where == {"source": "wiki"}


def test_a_malformed_filter_raises_before_the_call_is_recorded():
    store = StubKnowledgeStore(results={"both": [REFUND]})

    with pytest.raises(FilterError):
        store.search("both", identity=ALICE, where={"source": {"$regex": "w.*"}})

    assert store.calls == ()


def test_k_cuts_the_readable_matches():
    store = StubKnowledgeStore(results={"q": ["a", "b", "c"]})

    assert [m.text for m in store.search("q", identity=None, k=2).matches] == ["a", "b"]


def test_the_access_rule_tells_empty_from_hidden_and_mixed():
    store = StubKnowledgeStore(
        results={"salary": [SALARY], "refund": [REFUND], "both": [REFUND, SALARY], "none": []},
        access=by_group,
    )

    hidden = store.search("salary", identity=ALICE)
    mixed = store.search("both", identity=ALICE)
    empty = store.search("none", identity=ALICE)
    readable = store.search("salary", identity=BOB)

    assert (hidden.outcome, hidden.matches, hidden.withheld) == (
        "hidden",
        (),
        (WithheldRecord("hr-drive"),),
    )
    assert hidden.hidden_sources == ("hr-drive",)
    assert (mixed.outcome, mixed.matches) == ("mixed", (REFUND,))
    assert (empty.outcome, empty.is_empty, empty.withheld) == ("empty", True, ())
    assert readable.outcome == "found"


def test_a_withheld_record_shows_nothing_but_its_source():
    store = StubKnowledgeStore(results={"salary": [SALARY]}, access=by_group)

    withheld = store.search("salary", identity=ALICE).withheld[0]

    assert vars(withheld) == {"source": "hr-drive"}
    assert "Salary" not in repr(store.search("salary", identity=ALICE))


def test_is_empty_flips_when_the_first_result_is_scripted():
    store = StubKnowledgeStore(default=[])
    assert store.is_empty

    store.script("vpn", ["Use the corporate client."])

    assert not store.is_empty


def test_injected_failures_are_recorded_and_then_searches_succeed():
    store = StubKnowledgeStore(results={"q": ["a"]})
    store.fail_next_search(times=2)

    for _ in range(2):
        with pytest.raises(RetrievalTimeout, match="injected by fail_next_search"):
            store.search("q", identity=ALICE)
    result = store.search("q", identity=ALICE)

    assert result.outcome == "found"
    assert store.identities == (ALICE, ALICE, ALICE)


def test_an_injected_error_class_or_instance_is_raised():
    store = StubKnowledgeStore(results={"q": ["a"]})
    store.fail_next_search(ConnectionError)
    store.fail_next_search(TimeoutError("slow"))

    with pytest.raises(ConnectionError):
        store.search("q", identity=None)
    with pytest.raises(TimeoutError, match="slow"):
        store.search("q", identity=None)


def test_async_search_answers_like_search():
    store = StubKnowledgeStore(results={"q": ["a"]})

    result = asyncio.run(store.asearch("q", identity=ALICE))

    assert [m.text for m in result.matches] == ["a"]
    assert store.identities == (ALICE,)


def test_a_computed_store_passes_the_identity_to_a_fake_vector_store():
    backend = FakeVectorStore()
    store = StubKnowledgeStore(backend=backend, access=by_group)
    assert store.is_empty
    backend.upsert_many(
        ["refund", "salary"],
        [REFUND.text, SALARY.text],
        [{"source": "wiki", "acl": "all"}, {"source": "hr-drive", "acl": "hr"}],
    )

    result = store.search("salary bands", identity=ALICE, k=2)

    assert not store.is_empty
    assert [m.id for m in result.matches] == ["refund"]
    assert result.hidden_sources == ("hr-drive",)
    assert [q.context for q in backend.queries] == [ALICE]


def test_a_computed_store_passes_the_identity_through_a_hybrid_retriever():
    backend = FakeVectorStore()
    backend.upsert_many(["refund"], [REFUND.text], [{"source": "wiki", "acl": "all"}])
    retriever = HybridRetriever(backend)
    store = StubKnowledgeStore(backend=retriever)

    result = store.search("returns", identity=BOB, k=1)

    assert [m.id for m in result.matches] == ["refund"]
    assert [q.context for q in retriever.queries] == [BOB]
    assert [q.context for q in backend.queries] == [BOB]
    assert not store.is_empty


def test_bad_input_is_refused_before_anything_is_recorded():
    store = StubKnowledgeStore(results={"q": []})

    with pytest.raises(PlaceboragValueError, match="k=0 must be >= 1"):
        store.search("q", identity=None, k=0)
    with pytest.raises(PlaceboragTypeError, match="identity=42 must be a dict"):
        store.search("q", identity=42)
    with pytest.raises(PlaceboragTypeError, match="context=\\['x'\\] must be a dict"):
        store.search("q", identity=None, context=["x"])

    assert store.calls == ()


def test_a_store_is_scripted_or_computed_not_both():
    with pytest.raises(PlaceboragValueError, match="results= and backend= were both given"):
        StubKnowledgeStore(results={}, backend=FakeVectorStore())
    with pytest.raises(PlaceboragValueError, match="computes its results from a backend"):
        StubKnowledgeStore(backend=FakeVectorStore()).script("q", [])


# -- the candidate cache ---------------------------------------------------------------------------


def test_the_cache_hits_only_the_exact_query_of_the_same_identity():
    cache = CandidateCache()
    cache.put("refund policy", ALICE, ("refund#0",))

    assert cache.get("refund policy", {"groups": ["support"], "user": "alice"}) == ("refund#0",)
    assert cache.get("refund policy", BOB) is None
    assert cache.get("Refund policy", ALICE) is None
    assert cache.get("refund policy ", ALICE) is None
    assert cache.get("refund policy", None) is None


def test_every_hit_miss_and_put_is_recorded():
    cache = CandidateCache()
    cache.get("q", ALICE)
    cache.put("q", ALICE, ["a"])
    cache.get("q", ALICE)

    assert cache.events == (
        CacheEvent("miss", "q", ALICE),
        CacheEvent("put", "q", ALICE),
        CacheEvent("hit", "q", ALICE),
    )
    assert (cache.hits, cache.misses, cache.puts, len(cache)) == (1, 1, 1, 1)
    assert ("q", ALICE) in cache and ("q", BOB) not in cache


def test_clear_drops_entries_and_keeps_the_record():
    cache = CandidateCache()
    cache.put("q", ALICE, ["a"])
    cache.clear()

    assert cache.get("q", ALICE) is None
    assert [e.kind for e in cache.events] == ["put", "miss"]


def test_an_identity_json_cannot_hold_is_refused_not_stringified():
    cache = CandidateCache()

    with pytest.raises(PlaceboragTypeError, match="must hold only JSON values"):
        cache.get("q", {"user": object()})
    with pytest.raises(PlaceboragValueError, match="value=None cannot be cached"):
        cache.put("q", ALICE, None)


# -- properties ---------------------------------------------------------------------------------

identities = st.none() | st.dictionaries(
    st.sampled_from(["user", "groups", "tenant"]),
    st.text(max_size=3) | st.lists(st.text(max_size=2), max_size=2),
    max_size=3,
)


@given(
    puts=st.lists(st.tuples(st.text(max_size=4), identities), max_size=6),
    probe=st.tuples(st.text(max_size=4), identities),
)
def test_the_cache_hits_exactly_when_the_same_query_and_identity_were_put(puts, probe):
    cache = CandidateCache()
    for n, (query, identity) in enumerate(puts):
        cache.put(query, identity, n)

    found = cache.get(*probe)

    matching = [n for n, put in enumerate(puts) if put == probe]
    assert found == (matching[-1] if matching else None)


# -- regressions ----------------------------------------------------------------------------------


@pytest.mark.parametrize("backend_of", [lambda store: store, HybridRetriever])
def test_a_str_identity_reaches_the_backend_as_its_context(backend_of):
    store = FakeVectorStore()
    store.upsert_many(["refund"], [REFUND.text], [{"source": "wiki", "acl": "all"}])
    knowledge = StubKnowledgeStore(backend=backend_of(store))

    knowledge.search("refund", identity="alice", k=1)

    assert store.queries[-1].context == {"identity": "alice"}
    assert knowledge.calls[0].identity == "alice"


def test_k_means_the_best_k_readable_matches_scripted_or_computed():
    store = FakeVectorStore()
    store.upsert_many(
        ["salary#0", "refund#0"], [SALARY.text, REFUND.text], [SALARY.metadata, REFUND.metadata]
    )
    query = "Salary bands for 2026."
    assert [m.id for m in store.query(query, k=2)] == ["salary#0", "refund#0"]
    scripted = StubKnowledgeStore(results={query: [SALARY, REFUND]}, access=by_group)
    computed = StubKnowledgeStore(backend=store, access=by_group)

    by_script = scripted.search(query, identity=ALICE, k=1)
    by_backend = computed.search(query, identity=ALICE, k=1)

    assert [m.id for m in by_script.matches] == [m.id for m in by_backend.matches] == ["refund#0"]
    assert by_script.outcome == by_backend.outcome == "mixed"
    assert by_script.hidden_sources == by_backend.hidden_sources == ("hr-drive",)


@pytest.mark.parametrize(
    ("match", "error", "message"),
    [
        ({"id": "a", "score": "high"}, PlaceboragTypeError, "['score']='high' must be a finite"),
        ({"id": "a", "score": None}, PlaceboragTypeError, "['score']=None must be a finite"),
        (
            {"id": "a", "score": float("nan")},
            PlaceboragValueError,
            "['score']=nan must be a finite",
        ),
        ({"id": "a", "score": True}, PlaceboragTypeError, "['score']=True must be a finite"),
        (
            {"id": "a", "metadata": [1, 2]},
            PlaceboragTypeError,
            "['metadata']=[1, 2] must be a dict",
        ),
        ({"id": None}, PlaceboragTypeError, "results['q'][0]['id']=None must be a str"),
        (
            {"id": "a", "text": None},
            PlaceboragTypeError,
            "results['q'][0]['text']=None must be a str",
        ),
    ],
)
def test_a_match_given_as_a_dict_is_checked_when_scripted(match, error, message):
    with pytest.raises(error) as excinfo:
        StubKnowledgeStore(results={"q": [match]})

    assert message in str(excinfo.value)


def test_unscripted_queries_under_gather_name_their_own_search():
    store = StubKnowledgeStore(results={"refund policy": [REFUND]})

    async def both():
        return await asyncio.gather(
            store.asearch("x", identity=None),
            store.asearch("y", identity=None),
            return_exceptions=True,
        )

    first, second = asyncio.run(both())

    assert "query='x' (search 0)" in str(first)
    assert "query='y' (search 1)" in str(second)


def test_the_cache_refuses_non_str_keys_and_equal_numbers_share_an_entry():
    cache = CandidateCache()
    cache.put("q", {"n": 1}, ["one"])

    with pytest.raises(PlaceboragTypeError, match="1 is a key that is not a str"):
        cache.put("q", {1: "admin"}, ["secret"])
    assert cache.get("q", {"n": 1.0}) == ["one"]
    assert cache.get("q", {"n": True}) is None
    assert cache.puts == 1


def test_threads_sharing_one_knowledge_store_each_get_the_answer_they_would_get_alone():
    # A scripted store answers at once, so the recording is most of each search: 8 threads x
    # 500 searches race on it (with its lock removed, every run of this test failed).
    results = {f"q{i}": [f"doc{i}", f"doc{i + 1}"] for i in range(10)}
    queries = [f"q{i % 10}" for i in range(4000)]
    alone = {q: StubKnowledgeStore(results=results).search(q, identity=None, k=2) for q in results}
    knowledge = StubKnowledgeStore(results=results)
    got: list[tuple[str, object]] = []

    def ask(part: list[str]) -> None:
        for q in part:
            got.append((q, knowledge.search(q, identity=None, k=2)))

    assert race(ask, [(queries[i::8],) for i in range(8)]) == []
    assert len(got) == 4000 and all(result == alone[q] for q, result in got)
    assert sorted(call.index for call in knowledge.calls) == list(range(4000))


@pytest.mark.parametrize(
    "item",
    [
        {"id": "a", "text": "refunds", "metadata": {"tags": {"refund", "card"}}},
        Match("a", "refunds", {"tags": {"refund", "card"}}, 1.0),
    ],
    ids=["dict", "match"],
)
def test_scripted_metadata_is_checked_as_a_store_checks_it(item):
    # issue 27: scripted metadata was never checked, so a $in filter over a set value raised a
    # bare TypeError at search time.
    with pytest.raises(PlaceboragTypeError) as excinfo:
        StubKnowledgeStore(results={"refund": [item]})
    assert "results['refund'][0]" in str(excinfo.value) and "set" in str(excinfo.value)
    ok = StubKnowledgeStore(
        results={"refund": [{"id": "a", "text": "refunds", "metadata": {"tags": ["refund"]}}]}
    )
    found = ok.search("refund", where={"tags": {"$in": ["refund"]}}, identity=None)
    assert [m.id for m in found.matches] == ["a"]
