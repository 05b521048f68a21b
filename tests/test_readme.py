"""Every behaviour the README promises, as the README states it."""

import pytest

from placeborag import FakeEmbedder, FakeVectorStore, RetrievalTimeout, cosine_similarity

KNOWLEDGE_BASE = [
    ("en-1", "our refund policy allows returns within 30 days", "en"),
    ("en-2", "refund policy exceptions for sale items", "en"),
    ("en-3", "how to request a refund under the refund policy", "en"),
    ("en-4", "refund policy for digital purchases", "en"),
    ("hu-1", "pénzvisszatérítési szabályzat harminc napon belül", "hu"),
    ("hu-2", "hogyan kérek vissza pénzt vásárlás után", "hu"),
]

CLUSTERS = {
    "refund": ["refund policy", "money back", "hogyan kérek vissza pénzt"],
    "shipping": ["delivery times", "szállítási idő"],
}


def build(filter_mode: str, **options) -> FakeVectorStore:
    store = FakeVectorStore(embedder=FakeEmbedder(), filter_mode=filter_mode, **options)
    for doc_id, text, lang in KNOWLEDGE_BASE:
        store.upsert(doc_id, text, metadata={"lang": lang})
    return store


def test_a_related_text_is_nearer_than_an_unrelated_one():
    embedder = FakeEmbedder()
    query = embedder.embed("refund policy")
    related = embedder.embed("what is your refund policy for orders")
    unrelated = embedder.embed("delivery times to remote islands")
    assert cosine_similarity(query, related) > cosine_similarity(query, unrelated)


def test_the_same_text_always_gives_the_same_vector():
    embedder = FakeEmbedder()
    assert embedder.embed("refund policy") == embedder.embed("refund policy")
    assert FakeEmbedder().embed("refund policy") == embedder.embed("refund policy")


def test_changing_the_model_name_changes_the_space():
    a = FakeEmbedder(model_name="text-embedding-3-small")
    b = FakeEmbedder(model_name="text-embedding-3-large")
    assert a.embed("refund policy") != b.embed("refund policy")


@pytest.mark.parametrize(
    "text", ["", "   ", "?!.,", "árvíztűrő tükörfúrógép", "返金ポリシー", "🙂🙃", "\ud800"]
)
def test_every_vector_is_l2_normalised(text):
    vector = FakeEmbedder().embed(text)
    assert sum(x * x for x in vector) == pytest.approx(1.0, abs=1e-12)


def test_declared_cluster_mates_are_nearer_than_other_clusters():
    embedder = FakeEmbedder(clusters=CLUSTERS)
    assert cosine_similarity(
        embedder.embed("refund policy"), embedder.embed("money back")
    ) > cosine_similarity(embedder.embed("refund policy"), embedder.embed("delivery times"))


def test_undeclared_texts_fall_through_to_the_hashing_layer_unchanged():
    plain = FakeEmbedder()
    clustered = FakeEmbedder(clusters=CLUSTERS)
    assert clustered.embed("delivery times to remote islands") == plain.embed(
        "delivery times to remote islands"
    )


def test_substring_mode_pulls_a_chunk_into_its_cluster():
    embedder = FakeEmbedder(
        clusters={"refund": ["refund policy allows returns"]}, cluster_match="substring"
    )
    chunk = "Our refund policy allows returns within 30 days. Refunds are"
    assert embedder.cluster_of(chunk) == "refund"
    # with its own vector, not the declared member's
    assert embedder.embed(chunk) != embedder.embed("refund policy allows returns")


def test_exact_mode_ignores_a_chunk_that_only_contains_a_declared_text():
    embedder = FakeEmbedder(clusters={"refund": ["refund policy allows returns"]})
    assert embedder.cluster_of("Our refund policy allows returns within 30 days.") is None


def test_matching_is_case_sensitive_and_the_longest_declaration_wins():
    embedder = FakeEmbedder(
        clusters={"short": ["refund"], "long": ["refund policy"]}, cluster_match="substring"
    )
    assert embedder.cluster_of("the refund policy page") == "long"
    assert embedder.cluster_of("a refund") == "short"
    assert embedder.cluster_of("The Refund Policy") is None


def test_a_text_declared_in_two_clusters_is_rejected_at_construction():
    with pytest.raises(ValueError) as excinfo:
        FakeEmbedder(clusters={"a": ["same text"], "b": ["same text"]})
    assert excinfo.value.args == ("'same text' is declared in more than one cluster ('a' and 'b')",)


@pytest.mark.parametrize("dimensions", [64, 256, 1024])
def test_anchor_cosine_is_exactly_one_over_sqrt_one_plus_jitter_squared(dimensions):
    embedder = FakeEmbedder(dimensions=dimensions, clusters=CLUSTERS)
    for name, members in CLUSTERS.items():
        anchor = embedder.cluster_anchor(name)
        for text in members:
            m = embedder.jitter_of(text)
            assert cosine_similarity(anchor, embedder.embed(text)) == pytest.approx(
                1 / (1 + m * m) ** 0.5, abs=1e-12
            )


def test_member_to_anchor_order_is_the_same_at_every_dimension():
    def ranked(dimensions):
        embedder = FakeEmbedder(dimensions=dimensions, clusters=CLUSTERS)
        anchor = embedder.cluster_anchor("refund")
        return sorted(
            CLUSTERS["refund"],
            key=lambda text: -cosine_similarity(anchor, embedder.embed(text)),
        )

    assert ranked(64) == ranked(256) == ranked(1024)


def test_post_filtering_under_returns_where_pre_filtering_does_not():
    pre = build("pre").query("refund policy", k=5, where={"lang": "hu"})
    post = build("post").query("refund policy", k=5, where={"lang": "hu"})
    assert len(pre) == 2
    assert {m.id for m in pre} == {"hu-1", "hu-2"}
    assert len(post) == 1


@pytest.mark.parametrize(
    "where",
    [
        {"lang": "hu"},
        {"year": {"$gte": 2024, "$lt": 2026}},
        {"lang": {"$in": ["hu", "de"]}},
        {"$or": [{"tier": "public"}, {"year": {"$gt": 2025}}]},
    ],
)
def test_the_readme_filters_compile_and_run(where):
    store = FakeVectorStore()
    store.upsert("a", "refund policy", {"lang": "hu", "year": 2025, "tier": "public"})
    store.upsert("b", "refund policy for orders", {"lang": "en", "year": 2023, "tier": "internal"})
    assert [m.id for m in store.query("refund policy", k=5, where=where)] == ["a"]


def test_ne_does_not_surface_records_without_the_key():
    store = FakeVectorStore()
    store.upsert("en", "refund policy", {"lang": "en"})
    store.upsert("none", "refund policy too")
    assert [m.id for m in store.query("refund policy", where={"lang": {"$ne": "hu"}})] == ["en"]


@pytest.mark.parametrize(
    "where",
    [{"lang": {"$regex": "h.*"}}, {"lang": {"$in": "hu"}}, {"year": {"$gt": "2024"}}],
)
def test_a_malformed_clause_raises_before_any_record_is_read(where):
    store = FakeVectorStore()
    store.upsert("a", "refund policy", {"lang": "hu", "year": 2025})
    with pytest.raises(ValueError, match="in clause"):
        store.query("refund policy", k=5, where=where)


def test_score_directions():
    assert FakeVectorStore(profile="chroma").profile.higher_is_better is False
    assert FakeVectorStore(profile="qdrant").profile.higher_is_better is True


def test_both_profiles_rank_in_the_same_relevance_order():
    chroma = build("pre", profile="chroma").query("refund policy", k=6)
    qdrant = build("pre", profile="qdrant").query("refund policy", k=6)
    assert [m.id for m in chroma] == [m.id for m in qdrant]
    assert [m.score for m in chroma] == sorted(m.score for m in chroma)
    assert [m.score for m in qdrant] == sorted((m.score for m in qdrant), reverse=True)
    for c, q in zip(chroma, qdrant):
        assert c.score == pytest.approx(1 - q.score, abs=1e-15)


def test_ties_break_by_insertion_under_chroma_and_by_id_under_qdrant():
    def order(profile):
        store = FakeVectorStore(profile=profile)
        for doc_id in ["c", "a", "b"]:
            store.upsert(doc_id, "identical refund text")
        return [m.id for m in store.query("refund", k=3)]

    assert order("chroma") == ["c", "a", "b"]
    assert order("qdrant") == ["a", "b", "c"]


def test_the_fixture_example(fake_vector_store):
    fake_vector_store.upsert("doc", "our refund policy allows returns")
    matches = fake_vector_store.query("refund policy", k=1)
    assert matches[0].id == "doc"


@pytest.mark.placeborag(
    profile="qdrant",
    filter_mode="post",
    clusters={"refund": ["refund policy", "money back"]},
)
def test_the_marker_routes_options_to_the_right_object(fake_embedder, fake_vector_store):
    assert fake_embedder.cluster_names == ["refund"]
    assert fake_vector_store.embedder is fake_embedder
    assert fake_vector_store.profile.name == "qdrant"
    assert fake_vector_store.filter_mode == "post"


def test_degraded_recall_returns_fewer_than_k():
    store = build("pre", recall=0.4)
    matches = store.query("refund policy", k=5)
    assert len(matches) < 5


def test_degraded_recall_loses_the_same_documents_every_time():
    first = [m.id for m in build("pre", recall=0.4).query("refund policy", k=5)]
    again = [m.id for m in build("pre", recall=0.4).query("refund policy", k=5)]
    assert first == again


def test_stale_reads_until_refresh():
    store = FakeVectorStore(visibility="manual")
    store.upsert("doc", "our refund policy allows returns")
    assert store.query("refund policy") == []
    store.refresh()
    assert store.query("refund policy")


class MyUpstreamError(Exception):
    pass


def test_injected_query_failures():
    store = build("pre")
    store.fail_next_query()
    with pytest.raises(RetrievalTimeout):
        store.query("refund policy")
    store.fail_next_query(RetrievalTimeout("slow"), times=2)
    for _ in range(2):
        with pytest.raises(RetrievalTimeout, match="slow"):
            store.query("refund policy")
    store.fail_next_query(MyUpstreamError("refused"))
    store.upsert("new", "a write is unaffected")
    with pytest.raises(MyUpstreamError, match="refused"):
        store.query("refund policy")
    assert store.query("refund policy")
    assert "new" in store.ids
