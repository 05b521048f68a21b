"""A 0.4.0 user's tests, one per behaviour that broke on upgrade (issue 15), run on this version.

Each test is written as a test against 0.4.0 would be (the README of 0.4.0 is the spec). A row
resolved as *compatible* passes unchanged. A row resolved as *a deliberate change* says so in
its name and asserts the new behaviour; ``docs/migrating.md`` gives the reason and the
before/after code for each.
"""

import warnings

import pytest

from placeborag import FakeEmbedder, FakeVectorStore, cosine_similarity

TEXTS = ["refund policy", "money back", "delivery times"]


def test_embed_batch_returns_a_list_of_lists_equal_to_embedding_each_text():
    embedder = FakeEmbedder()
    assert embedder.embed_batch(TEXTS) == [embedder.embed(t) for t in TEXTS]
    assert embedder.embed_batch([]) == []


def test_cluster_names_is_a_list():
    assert FakeEmbedder().cluster_names == []
    assert FakeEmbedder(clusters={"refund": ["refund policy"]}).cluster_names == ["refund"]


def test_store_ids_is_a_list():
    store = FakeVectorStore()
    assert store.ids == []
    store.upsert("refund", "our refund policy")
    assert store.ids == ["refund"]


def test_cluster_anchor_is_none_for_an_undeclared_cluster():
    embedder = FakeEmbedder(clusters={"refund": ["refund policy", "money back"]})
    assert embedder.cluster_anchor("shipping") is None
    anchor = embedder.cluster_anchor("refund")
    assert cosine_similarity(anchor, embedder.embed("refund policy")) > 0.5


def test_deliberate_change_cluster_spread_accepts_0_and_values_above_1():
    # 0.4.0: pytest.raises(ValueError) for cluster_spread=0.0 and 1.5. Now both build an
    # embedder (the explorer's spread slider goes to 2); no warning, since a value 0.4.0 refused
    # cannot be code that relies on 0.4.0. Negative, non-finite and > 50 still raise.
    clusters = {"refund": ["refund policy", "money back"], "shipping": ["delivery times"]}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        on_anchor = FakeEmbedder(clusters=clusters, cluster_spread=0.0)
        wide = FakeEmbedder(clusters=clusters, cluster_spread=1.5, dimensions=512)
    anchor = on_anchor.cluster_anchor("refund")
    assert cosine_similarity(anchor, on_anchor.embed("money back")) == pytest.approx(1.0)
    assert wide.cluster_of("money back") == "refund"
    for bad in (-0.1, float("nan"), 51.0):
        with pytest.raises(ValueError):
            FakeEmbedder(clusters=clusters, cluster_spread=bad)


def test_delete_returns_true_when_removed_and_false_for_an_unknown_id():
    store = FakeVectorStore()
    store.upsert("refund", "our refund policy")
    assert store.delete("refund") is True
    assert store.delete("refund") is False


def build_store(**options):
    store = FakeVectorStore(**options)
    store.upsert("en", "refund policy", {"lang": "en", "year": 2024, "meta": {"nested": 1}})
    store.upsert("hu", "refund rules", {"lang": "hu", "year": 2025, "meta": {"nested": 2}})
    return store


def test_an_empty_where_matches_every_record():
    store = build_store()
    assert sorted(m.id for m in store.query("refund", k=5, where={})) == ["en", "hu"]


def test_a_mapping_without_operators_is_compared_as_a_literal():
    store = build_store()
    assert [m.id for m in store.query("refund", k=5, where={"meta": {"nested": 1}})] == ["en"]


def test_a_numeric_bound_against_a_stored_string_raises_cannot_compare():
    store = build_store()
    store.upsert("new", "refund notes", {"year": "recent"})
    with pytest.raises(TypeError, match="cannot compare"):
        store.query("refund", k=5, where={"year": {"$gt": 2024}})
    store.upsert("flag", "refund flag", {"year": True})
    store.delete("new")
    with pytest.raises(TypeError, match="cannot compare"):
        store.query("refund", k=5, where={"year": {"$gt": 2024}})


def test_under_engine_semantics_the_engine_skips_a_string_against_a_numeric_bound():
    # filter_semantics="engine" follows the engine (Chroma and Qdrant skip the record). The
    # store passes its semantics to the filter compiler; the compiler's side is checked here.
    from placeborag._filters import Columns, compile_filter

    rows = [{"year": 2025}, {"year": "recent"}, {"year": True}]
    where = {"year": {"$gt": 2024}}
    assert compile_filter(where, semantics="engine").mask(Columns(rows)).tolist() == [
        True,
        False,
        False,
    ]


@pytest.mark.parametrize(
    "where",
    [
        {"lang": {"$in": "hu"}},
        {"lang": {"$nin": "hu"}},
        {"$and": {"lang": "hu"}},
        {"$or": "hu"},
        ["lang", "hu"],
    ],
)
def test_filters_of_the_wrong_type_raise_type_error(where):
    store = build_store()
    with pytest.raises(TypeError):
        store.query("refund", k=5, where=where)


@pytest.mark.parametrize("where", [{"$and": []}, {"$or": []}])
def test_an_empty_and_or_raises_value_error(where):
    store = build_store()
    with pytest.raises(ValueError):
        store.query("refund", k=5, where=where)


def test_a_misspelled_marker_option_fails_only_the_test_that_requests_the_fixture(pytester):
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.placeborag(profle="qdrant")
        def test_typo(fake_vector_store):
            pass

        def test_fine(fake_vector_store):
            assert len(fake_vector_store) == 0
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*UsageError*unknown @pytest.mark.placeborag option 'profle'*"])
    skipped = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "--deselect",
        "test_a_misspelled_marker_option_fails_only_the_test_that_requests_the_fixture.py::test_typo",
    )
    skipped.assert_outcomes(passed=1, deselected=1)
