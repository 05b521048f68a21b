"""Tests for hybrid retrieval: the exact BM25 keyword index, reciprocal rank fusion, the retriever."""

from __future__ import annotations

import math
import struct
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from placeborag import (
    FakeVectorStore,
    FilterError,
    Match,
    PlaceboragTypeError,
    PlaceboragValueError,
)
from placeborag._fusion import (
    FusedMatch,
    HybridRetriever,
    KeywordIndex,
    keyword_scores,
    reciprocal_rank_fusion,
    tokenize,
)

DOCS = {
    "refund": "our refund policy allows returns within 30 days",
    "sale": "refund policy exceptions for sale items",
    "digital": "refund policy for digital purchases",
    "shipping": "delivery times to remote islands",
    "hu": "hogyan kérek vissza pénzt vásárlás után",
}


def bm25(query: str, docs: dict[str, str], k1: float = 1.2, b: float = 0.75) -> dict[str, float]:
    """The textbook formula in plain floats, to check the exact version against."""
    tokenized = {i: tokenize(t) for i, t in docs.items()}
    n = len(docs)
    avg = sum(len(t) for t in tokenized.values()) / n
    out: dict[str, float] = {}
    for term in dict.fromkeys(tokenize(query)):
        df = sum(term in t for t in tokenized.values())
        if not df:
            continue
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        for i, tokens in tokenized.items():
            tf = tokens.count(term)
            if tf:
                norm = k1 * (1 - b + b * len(tokens) / avg)
                out[i] = out.get(i, 0.0) + idf * tf * (k1 + 1) / (tf + norm)
    return out


# -- tokens and BM25 ------------------------------------------------------------------------------


def test_tokens_are_case_folded_word_runs_in_any_script() -> None:
    assert tokenize("Refund-Policy, PÉNZT vissza!") == ["refund", "policy", "pénzt", "vissza"]


def test_tokenize_rejects_a_non_str() -> None:
    with pytest.raises(PlaceboragTypeError) as excinfo:
        tokenize(b"refund")  # type: ignore[arg-type]
    assert excinfo.value.args == ("text=b'refund' must be a str, not bytes",)


def test_keyword_scores_agree_with_the_textbook_formula() -> None:
    exact = keyword_scores("refund policy for returns", DOCS)
    approx = bm25("refund policy for returns", DOCS)
    assert list(exact) == [i for i in DOCS if i in approx]
    assert all(math.isclose(exact[i], approx[i], rel_tol=1e-12) for i in approx)


def test_a_document_sharing_no_token_gets_no_score() -> None:
    assert "shipping" not in keyword_scores("refund", DOCS)
    assert keyword_scores("", DOCS) == {}
    assert keyword_scores("refund", {}) == {}


def test_a_repeated_query_token_counts_once() -> None:
    assert keyword_scores("refund refund refund", DOCS) == keyword_scores("refund", DOCS)


def test_search_ranks_by_score_then_by_insertion_order() -> None:
    index = KeywordIndex()
    index.add_many(["b", "a", "c"], ["refund policy", "refund policy", "refund"])
    assert [m.id for m in index.search("refund policy", k=3)] == ["b", "a", "c"]
    assert index.search("refund policy", k=3)[0].score == index.search("refund policy")[1].score


def test_search_returns_matches_and_honours_k_and_where() -> None:
    index = KeywordIndex()
    for i, text in DOCS.items():
        index.add(i, text, {"lang": "hu" if i == "hu" else "en"})
    top = index.search("refund policy", k=2)
    assert [type(m) for m in top] == [Match, Match]
    assert len(top) == 2
    assert index.search("refund pénzt", where={"lang": "hu"})[0].id == "hu"
    assert index.search("refund", where={"missing": {"$ne": 1}}) == []


def test_search_rejects_a_bad_filter_and_a_bad_k() -> None:
    index = KeywordIndex()
    with pytest.raises(FilterError):
        index.search("x", where={"lang": {"$regex": "h"}})
    with pytest.raises(PlaceboragValueError) as excinfo:
        index.search("x", k=0)
    assert excinfo.value.args == ("k=0 must be >= 1",)


def test_rewriting_a_document_keeps_its_position_and_updates_statistics() -> None:
    index = KeywordIndex()
    index.add_many(["a", "b"], ["refund", "delivery"])
    index.add("a", "delivery")
    assert index.ids == ("a", "b")
    assert index.scores("refund") == {}
    assert index.scores("delivery") == keyword_scores(
        "delivery", {"a": "delivery", "b": "delivery"}
    )


def test_remove_forgets_a_document_and_an_unknown_id_raises() -> None:
    index = KeywordIndex()
    index.add_many(["a", "b"], ["refund", "refund policy"])
    index.remove("a")
    assert "a" not in index
    assert len(index) == 1
    assert index.scores("refund") == keyword_scores("refund", {"b": "refund policy"})
    with pytest.raises(PlaceboragValueError) as excinfo:
        index.remove("a")
    assert excinfo.value.args == ("unknown id 'a'",)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"k1": 0}, PlaceboragValueError, "k1=0 must be > 0"),
        ({"k1": "1"}, PlaceboragTypeError, "k1='1' must be a number, not str"),
        ({"b": -0.1}, PlaceboragValueError, "b=-0.1 must be >= 0"),
        ({"b": 1.5}, PlaceboragValueError, "b=1.5 must be between 0 and 1"),
        ({"b": math.nan}, PlaceboragValueError, "b=nan must be finite"),
    ],
)
def test_keyword_index_validates_its_knobs(kwargs: dict, error: type, message: str) -> None:
    with pytest.raises(error) as excinfo:
        KeywordIndex(**kwargs)
    assert excinfo.value.args == (message,)


def test_add_many_needs_columns_of_one_length() -> None:
    with pytest.raises(PlaceboragValueError) as excinfo:
        KeywordIndex().add_many(["a", "b"], ["x"])
    assert excinfo.value.args == (
        "ids, texts and metadatas have 2, 1 and 2 items; they must have the same length",
    )


def test_keyword_scores_need_a_dict() -> None:
    with pytest.raises(PlaceboragTypeError) as excinfo:
        keyword_scores("x", ["a"])  # type: ignore[arg-type]
    assert excinfo.value.args == ("documents=['a'] must be a dict of id -> text, not list",)


# -- reciprocal rank fusion ------------------------------------------------------------------------


def test_rrf_sums_reciprocal_ranks() -> None:
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["c", "a"]])
    assert [f.id for f in fused] == ["a", "c", "b"]
    assert fused[0] == FusedMatch("a", float(Fraction(1, 61) + Fraction(1, 62)), {})
    assert fused[0].ranks == {0: 1, 1: 2}
    assert fused[2].ranks == {0: 2}


def test_rrf_breaks_ties_by_best_rank_then_by_id() -> None:
    # a and b: ranks (1, 3) and (3, 1), the same sum and the same best rank -> id order.
    fused = reciprocal_rank_fusion([["b", "x", "a"], ["a", "y", "b"]])
    assert [f.id for f in fused[:2]] == ["a", "b"]
    # With rank_constant=0, ranks (2, 6) and (3, 3) both sum to 2/3: the best rank 2 wins.
    fused = reciprocal_rank_fusion(
        [["w", "x", "y"], ["p", "q", "y", "r", "s", "x"]], rank_constant=0
    )
    scores = {f.id: f.score for f in fused}
    assert scores["x"] == scores["y"] == 2 / 3
    assert [f.id for f in fused].index("x") < [f.id for f in fused].index("y")


def test_rrf_accepts_matches_and_named_lists_with_weights() -> None:
    vector = [Match("a", "", {}, 0.9), Match("b", "", {}, 0.8)]
    fused = reciprocal_rank_fusion(
        {"vector": vector, "keyword": ["b"]}, weights={"vector": 1, "keyword": 3}, rank_constant=0
    )
    assert [(f.id, f.score) for f in fused] == [("b", 3.5), ("a", 1.0)]
    assert fused[0].ranks == {"vector": 2, "keyword": 1}


def test_rrf_counts_a_repeated_id_at_its_first_position_only() -> None:
    assert reciprocal_rank_fusion([["a", "b", "a"]]) == reciprocal_rank_fusion([["a", "b"]])


def test_rrf_truncates_to_the_budget() -> None:
    assert [f.id for f in reciprocal_rank_fusion([["a", "b", "c"]], limit=2)] == ["a", "b"]
    assert reciprocal_rank_fusion([["a"]], limit=0) == []


def test_rrf_of_nothing_is_an_empty_list() -> None:
    assert reciprocal_rank_fusion([]) == []
    assert reciprocal_rank_fusion([[], []]) == []
    assert reciprocal_rank_fusion({}) == []


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda: reciprocal_rank_fusion("ab"),
            PlaceboragTypeError,
            "rankings='ab' must be a list of ranked lists or a dict of them, not str",
        ),
        (
            lambda: reciprocal_rank_fusion(["ab"]),
            PlaceboragTypeError,
            "rankings[0]='ab' must be a list of ids or matches, not str",
        ),
        (
            lambda: reciprocal_rank_fusion([[1]]),
            PlaceboragTypeError,
            "rankings[0][0]=1 must be a non-empty str id or an object with a str .id",
        ),
        (
            lambda: reciprocal_rank_fusion([["a"]], rank_constant=-1),
            PlaceboragValueError,
            "rank_constant=-1 must be >= 0",
        ),
        (
            lambda: reciprocal_rank_fusion([["a"]], limit=1.5),
            PlaceboragTypeError,
            "limit=1.5 must be an int, not float",
        ),
        (
            lambda: reciprocal_rank_fusion([["a"]], weights=[1, 2]),
            PlaceboragValueError,
            "weights has 2 items and rankings has 1; they must have the same length",
        ),
        (
            lambda: reciprocal_rank_fusion([["a"]], weights=[-1]),
            PlaceboragValueError,
            "weights[0]=-1 must be >= 0",
        ),
        (
            lambda: reciprocal_rank_fusion({"v": ["a"]}, weights={"k": 1}),
            PlaceboragValueError,
            "weights={'k': 1} must be a dict with exactly the keys of rankings ('v')",
        ),
    ],
)
def test_rrf_rejects_bad_input_with_exact_messages(call, error: type, message: str) -> None:
    with pytest.raises(error) as excinfo:
        call()
    assert excinfo.value.args == (message,)


ids = st.sampled_from([f"d{i}" for i in range(12)])
ranked_lists = st.lists(st.lists(ids, max_size=10, unique=True), max_size=5)


def _bits(fused: list[FusedMatch]) -> list[tuple[str, bytes]]:
    return [(f.id, struct.pack("<d", f.score)) for f in fused]


@given(ranked_lists, st.randoms(use_true_random=False), st.integers(0, 100))
def test_rrf_is_deterministic_and_invariant_to_the_order_of_its_lists(lists, rnd, constant) -> None:
    once = reciprocal_rank_fusion(lists, rank_constant=constant)
    shuffled = list(lists)
    rnd.shuffle(shuffled)
    assert _bits(reciprocal_rank_fusion(lists, rank_constant=constant)) == _bits(once)
    assert _bits(reciprocal_rank_fusion(shuffled, rank_constant=constant)) == _bits(once)


@given(
    ranked_lists,
    st.lists(st.integers(0, 5), min_size=5, max_size=5),
    st.randoms(use_true_random=False),
)
def test_weighted_rrf_is_invariant_when_weights_move_with_their_lists(lists, weights, rnd) -> None:
    weights = weights[: len(lists)]
    pairs = list(zip(lists, weights))
    rnd.shuffle(pairs)
    once = reciprocal_rank_fusion(lists, weights=weights)
    again = reciprocal_rank_fusion([p[0] for p in pairs], weights=[p[1] for p in pairs])
    assert _bits(again) == _bits(once)


@given(ranked_lists)
def test_rrf_scores_never_increase_down_the_list(lists) -> None:
    scores = [f.score for f in reciprocal_rank_fusion(lists)]
    assert scores == sorted(scores, reverse=True)
    assert {f.id for f in reciprocal_rank_fusion(lists)} == {i for lst in lists for i in lst}


# -- the hybrid retriever -------------------------------------------------------------------------


@pytest.fixture
def store() -> FakeVectorStore:
    store = FakeVectorStore()
    for i, text in DOCS.items():
        store.upsert(i, text, {"lang": "hu" if i == "hu" else "en"})
    return store


def test_hybrid_fuses_vector_and_keyword_rankings(store: FakeVectorStore) -> None:
    retriever = HybridRetriever(store, candidates=5)
    explained = retriever.explain("refund policy", k=3)
    expected = reciprocal_rank_fusion(
        {"vector": list(explained.vector), "keyword": list(explained.keyword)}, limit=3
    )
    assert [m.id for m in explained.matches] == [f.id for f in expected]
    assert [m.score for m in explained.matches] == [f.score for f in expected]
    assert retriever.query("refund policy", k=3) == list(explained.matches)
    assert explained.matches[0].text == DOCS[explained.matches[0].id]


def test_hybrid_queries_are_recorded_on_both_the_retriever_and_the_store(
    store: FakeVectorStore,
) -> None:
    retriever = HybridRetriever(store)
    retriever.query("refund", k=2, where={"lang": "en"})
    assert [(q.text, q.k, q.where) for q in retriever.queries] == [("refund", 2, {"lang": "en"})]
    assert store.last_query.where == {"lang": "en"}


def test_hybrid_filters_both_halves(store: FakeVectorStore) -> None:
    matches = HybridRetriever(store).query("refund policy pénzt", k=5, where={"lang": "hu"})
    assert [m.id for m in matches] == ["hu"]


def test_hybrid_keyword_half_sees_deletes(store: FakeVectorStore) -> None:
    store.delete("sale")
    explained = HybridRetriever(store).explain("sale items", k=5)
    assert "sale" not in [m.id for m in explained.keyword]


def test_hybrid_of_an_empty_store_is_empty() -> None:
    assert HybridRetriever(FakeVectorStore()).query("refund") == []


def test_hybrid_k_defaults_to_the_store_profile(store: FakeVectorStore) -> None:
    assert len(HybridRetriever(store).query("refund policy")) == len(DOCS)
    assert HybridRetriever(store).explain("refund policy").k == store.profile.default_k


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"candidates": 0}, PlaceboragValueError, "candidates=0 must be >= 1"),
        (
            {"weights": (1,)},
            PlaceboragTypeError,
            "weights=(1,) must be a pair (vector weight, keyword weight)",
        ),
        ({"weights": (1, -2)}, PlaceboragValueError, "weights[1]=-2 must be >= 0"),
        ({"k1": -1}, PlaceboragValueError, "k1=-1 must be > 0"),
    ],
)
def test_hybrid_validates_its_options(store, kwargs: dict, error: type, message: str) -> None:
    with pytest.raises(error) as excinfo:
        HybridRetriever(store, **kwargs)
    assert excinfo.value.args == (message,)


def test_hybrid_needs_a_store() -> None:
    with pytest.raises(PlaceboragTypeError) as excinfo:
        HybridRetriever(object())
    assert excinfo.value.args[0].endswith("must be a FakeVectorStore")


def test_hybrid_keyword_half_follows_the_store_filter_semantics() -> None:
    def build(semantics: str) -> FakeVectorStore:
        store = FakeVectorStore(profile="chroma", filter_semantics=semantics)
        store.upsert("hu", DOCS["hu"], {"lang": "hu"})
        store.upsert("bare", "refund policy without a language")
        return store

    where = {"lang": {"$ne": "hu"}}
    strict = HybridRetriever(build("strict")).explain("refund policy", where=where)
    engine = HybridRetriever(build("engine")).explain("refund policy", where=where)
    assert (strict.vector, strict.keyword) == ((), ())
    assert [m.id for m in engine.keyword] == [m.id for m in engine.vector] == ["bare"]


def test_hybrid_drops_padded_slots() -> None:
    store = FakeVectorStore(profile="faiss")
    store.upsert("a", "refund policy")
    explained = HybridRetriever(store, candidates=5).explain("refund policy")
    assert [m.id for m in explained.vector] == ["a"]
    assert [m.id for m in explained.matches] == ["a"]


def test_the_keyword_index_is_rebuilt_only_when_the_records_change(
    store: FakeVectorStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 27: HybridRetriever rebuilt its keyword index on every query (1.3 s at 16,000
    # documents).
    added: list[str] = []
    real_add = KeywordIndex.add

    def counted(self: KeywordIndex, id: str, *args: object, **kwargs: object) -> None:
        added.append(id)
        real_add(self, id, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(KeywordIndex, "add", counted)
    retriever = HybridRetriever(store)
    first = retriever.query("refund policy", k=3)
    for _ in range(4):
        assert retriever.query("refund policy", k=3) == first
    assert len(added) == len(store)
    store.upsert("new", "refund policy for new items")
    assert "new" in [m.id for m in retriever.explain("refund policy new", k=5).keyword]
    assert len(added) == 2 * len(store) - 1


def test_hybrid_queries_racing_deletes_on_other_threads_never_meet_an_unknown_id() -> None:
    # issue 27: HybridRetriever raised "unknown id" when another thread deleted records: it
    # listed the ids, then read each one back.
    from tests._race import race

    store = FakeVectorStore()
    ids = [f"doc-{i}" for i in range(60)]
    store.upsert_many(ids, [f"refund policy number {i}" for i in range(60)])
    retriever = HybridRetriever(store, candidates=10)
    errors: list[BaseException] = []

    def query() -> None:
        try:
            for _ in range(60):
                for match in retriever.query("refund policy", k=5):
                    assert match.id.startswith("doc-")
        except BaseException as error:
            errors.append(error)

    def churn() -> None:
        try:
            for round in range(3000):
                i = round % 60
                store.delete(ids[i])
                store.upsert(ids[i], f"refund policy number {i}")
        except BaseException as error:
            errors.append(error)

    assert race(lambda task: task(), [(query,), (query,), (churn,)], timeout=120) == []
    assert errors == []


# -- the fast exact path (issue 27: 4.1 s per repeat query at 16,000 documents) ----------------


def _reference_search(
    docs: list[tuple[str, str, dict | None]],
    query: str,
    k: int,
    where: dict | None,
    k1: float | Fraction,
    b: float | Fraction,
) -> list[tuple[str, float]]:
    """BM25 the straightforward way: every document scored in rationals, sorted by score then
    insertion order, filtered while walking down (the index before its postings)."""
    import decimal

    from placeborag._filters import compile_filter

    def ln(x: Fraction) -> Fraction:
        with decimal.localcontext() as ctx:
            ctx.prec = 40
            return Fraction((decimal.Decimal(x.numerator) / decimal.Decimal(x.denominator)).ln())

    latest: dict[str, tuple[str, dict | None]] = {}
    for doc_id, text, meta in docs:  # a rewrite keeps the first position
        latest[doc_id] = (text, meta)
    tokens = {i: tokenize(t) for i, (t, _) in latest.items()}
    n = len(tokens)
    if not n:
        return []
    avg = Fraction(sum(map(len, tokens.values())), n) or Fraction(1)
    k1, b = Fraction(k1), Fraction(b)
    scores: dict[str, Fraction] = {}
    for term in dict.fromkeys(tokenize(query)):
        df = sum(term in t for t in tokens.values())
        if not df:
            continue
        idf = ln(1 + Fraction(2 * (n - df) + 1, 2 * df + 1))
        for i, t in tokens.items():
            tf = t.count(term)
            if tf:
                norm = k1 * (1 - b + b * Fraction(len(t)) / avg)
                scores[i] = scores.get(i, 0) + idf * tf * (k1 + 1) / (tf + norm)
    position = {i: p for p, i in enumerate(tokens)}
    predicate = compile_filter(where)
    out = []
    for i in sorted(scores, key=lambda i: (-scores[i], position[i])):
        if predicate is None or predicate.matches(latest[i][1]):
            out.append((i, float(scores[i])))
    return out[:k]


_WORDS = st.sampled_from(["refund", "policy", "parcel", "days", "money", "back", "x", "y"])
_DOC = st.tuples(
    st.sampled_from([f"d{i}" for i in range(40)]),
    st.lists(_WORDS, max_size=12).map(" ".join),
    st.none() | st.fixed_dictionaries({"lang": st.sampled_from(["en", "hu"])}),
)


@given(
    docs=st.lists(_DOC, max_size=60),
    removed=st.lists(st.sampled_from([f"d{i}" for i in range(40)]), max_size=5),
    queries=st.lists(st.lists(_WORDS, min_size=1, max_size=5).map(" ".join), max_size=4),
    k=st.integers(1, 12),
    where=st.none() | st.just({"lang": "hu"}),
    knobs=st.sampled_from(
        [(1.2, 0.75), (0.5, 0.0), (2.0, 1.0), (Fraction(1, 3), Fraction(2, 3)), (1e-300, 0.5)]
    ),
)
def test_the_fast_keyword_search_gives_exactly_the_straightforward_scores_and_order(
    docs, removed, queries, k, where, knobs
) -> None:
    # Postings and float bounds only choose which documents get an exact score: the scores,
    # their order and the ties (insertion order) are those of scoring every document exactly.
    k1, b = knobs
    index = KeywordIndex(k1=k1, b=b)
    kept = list(docs)
    for doc_id, text, meta in docs:
        index.add(doc_id, text, meta)
    for doc_id in dict.fromkeys(removed):
        if doc_id in index:
            index.remove(doc_id)
            kept = [d for d in kept if d[0] != doc_id]
    for query in [*queries, *queries]:  # the second round reuses the kept postings
        got = [(m.id, m.score) for m in index.search(query, k, where)]
        assert got == _reference_search(kept, query, k, where, k1, b)
        everything = _reference_search(kept, query, 10**6, None, k1, b)
        assert index.scores(query) == dict(sorted(everything, key=lambda s: index.ids.index(s[0])))


def test_many_documents_tied_at_the_cut_are_ordered_exactly() -> None:
    # 3,000 documents, a handful of distinct scores: thousands tie with the k-th.
    texts = [
        " ".join(["refund", "policy", "days"][: 1 + i % 3] + ["x"] * (i % 2)) for i in range(3000)
    ]
    docs = [(f"d{i}", t, {"lang": ("en", "hu")[i % 5 == 0]}) for i, t in enumerate(texts)]
    index = KeywordIndex()
    for doc in docs:
        index.add(*doc)
    for where in (None, {"lang": "hu"}):
        got = [(m.id, m.score) for m in index.search("refund policy days", 50, where)]
        assert got == _reference_search(docs, "refund policy days", 50, where, 1.2, 0.75)


def test_the_keyword_index_is_rebuilt_exactly_when_the_records_version_moves(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # issue 27: the cache was keyed on the records view's identity; it is keyed on
    # StoreRecords.version, the store's documented change counter.
    built: list[int] = []
    real = KeywordIndex.add_many

    def counted(self: KeywordIndex, ids, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        built.append(len(ids))
        real(self, ids, *args, **kwargs)

    monkeypatch.setattr(KeywordIndex, "add_many", counted)
    for options in ({}, {"on_existing_id": "duplicate", "churn": 0.5}, {"visibility": "manual"}):
        store = FakeVectorStore(**options)  # type: ignore[arg-type]
        store.upsert_many(["a", "b", "c"], ["refund policy", "refund days", "parcel policy"])
        store.refresh()
        retriever = HybridRetriever(store, candidates=5)
        built.clear()
        retriever.query("refund policy", k=2)
        assert len(built) == 1
        retriever.query("refund policy", k=2)
        retriever.explain("refund policy parcel", k=3)
        assert len(built) == 1
        for action, changes in [
            (lambda s: s.query("refund"), False),
            (lambda s: s.trace("refund", 2), False),
            (lambda s: s.with_options(recall=0.5).upsert("x", "twin only"), False),
            (lambda s: s.delete("never", missing_ok=True), False),
            (lambda s: s.upsert("d", "refund refund"), True),
            (lambda s: s.upsert("d", "refund refund"), True),  # the same content: lands
            (lambda s: s.delete("a"), True),
            (lambda s: s.upsert("a", "policy again"), True),
        ]:
            before = len(built)
            action(store)
            if options.get("visibility") == "manual":
                retriever.query("refund policy", k=2)
                assert len(built) == before  # held back: the records did not change
                store.refresh()
            retriever.query("refund policy", k=2)
            retriever.query("refund policy", k=2)
            assert len(built) - before == int(changes), (options, changes)
            keyword = {m.id for m in retriever.explain("refund policy days", k=5).keyword}
            assert keyword == {m.id for m in _fresh_keyword(store, "refund policy days")}


def _fresh_keyword(store: FakeVectorStore, text: str) -> list[Match]:
    records = store.records()
    index = KeywordIndex()
    for doc_id, doc_text, meta in zip(records.ids, records.texts, records.metadata):
        index.add(doc_id, doc_text, meta)  # not add_many: the test counts the retriever's
    return index.search(text, 5)
