"""Tests for the backend profiles and every store option they drive, with exact error messages."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from placeborag import (
    PROFILES,
    FakeEmbedder,
    FakeVectorStore,
    PlaceboragTypeError,
    PlaceboragValueError,
    Profile,
    get_profile,
)
from placeborag._profiles import FLOAT32_MAX

NAMES = ("chroma", "qdrant", "faiss", "lancedb", "pgvector", "langchain", "weaviate")


class Grid:
    """Hand-made vectors: the cosine of each text with "q" is written in its name."""

    vectors: ClassVar[dict[str, list[float]]] = {
        "q": [1.0, 0.0, 0.0],
        "cos 1": [1.0, 0.0, 0.0],
        "cos 0.8": [0.8, 0.6, 0.0],
        "cos 0.6 a": [0.6, 0.8, 0.0],
        "cos 0.6 b": [0.6, 0.0, 0.8],
        "cos 0.6 c": [0.6, 0.8, 0.0],
        "cos 0": [0.0, 0.0, 1.0],
        "cos -0.6": [-0.6, 0.8, 0.0],
    }
    dimensions = 3

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        return np.array([self.vectors[t] for t in texts], dtype=np.float64)


def grid_store(**options: object) -> FakeVectorStore:
    store = FakeVectorStore(embedder=Grid(), **options)
    for text in ("cos 0.8", "cos 0.6 b", "cos 0.6 a", "cos 0", "cos 0.6 c"):
        store.upsert(text.split()[-1] if text.startswith("cos 0.6") else text, text)
    return store


def ids(matches: list) -> list[str]:
    return [m.id for m in matches]


# -- the table ------------------------------------------------------------------------------------

SCORES = {  # profile -> metric -> (higher is better, score at cos = 0.6)
    "chroma": {"cosine": (False, 0.4), "l2": (False, 0.8), "ip": (False, 0.4)},
    "qdrant": {"cosine": (True, 0.6), "l2": (False, math.sqrt(0.8)), "ip": (True, 0.6)},
    "faiss": {"cosine": (True, 0.6), "l2": (False, 0.8), "ip": (True, 0.6)},
    "lancedb": {"cosine": (False, 0.4), "l2": (False, 0.8), "ip": (False, 0.4)},
    "pgvector": {"cosine": (False, 0.4), "l2": (False, math.sqrt(0.8)), "ip": (False, -0.6)},
    "langchain": {"cosine": (True, 0.6)},
    "weaviate": {"cosine": (False, 0.4), "l2": (False, 0.8), "ip": (False, -0.6)},
}
# profile -> (tie order, default k, existing id, filter mode, pads, $ne matches missing, empty $in)
BEHAVIOUR = {
    "chroma": ("insertion", 10, "replace", "pre", False, True, "error"),
    "qdrant": ("id", 10, "replace", "pre", False, True, "empty_set"),
    "faiss": ("reverse", 10, "duplicate", "pre", True, False, "error"),
    "lancedb": ("insertion", 10, "move_to_end", "pre", False, False, "error"),
    "pgvector": ("insertion", 10, "move_to_end", "post", False, False, "empty_set"),
    "langchain": ("shuffle", 4, "replace", "pre", False, True, "empty_set"),
    "weaviate": ("id", 10, "replace", "pre", False, True, "error"),
}


def test_the_known_profiles() -> None:
    assert tuple(PROFILES) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_each_profile_declares_its_behaviour(name: str) -> None:
    profile = PROFILES[name]
    declared = (
        profile.tie_order,
        profile.default_k,
        profile.on_existing_id,
        profile.filter_mode,
        profile.pad_missing,
        profile.negation_matches_missing,
        profile.empty_in,
    )
    assert declared == BEHAVIOUR[name]
    assert profile.metric == "cosine"
    assert profile.supported_metrics == tuple(SCORES[name])
    assert profile.engine


@pytest.mark.parametrize(
    ("name", "metric"), [(n, m) for n, metrics in SCORES.items() for m in metrics]
)
def test_each_metric_reports_its_number_and_direction(name: str, metric: str) -> None:
    higher, at_06 = SCORES[name][metric]
    profile = get_profile(name).with_options(metric=metric)
    assert profile.higher_is_better is higher
    assert profile.score(0.6) == pytest.approx(at_06, abs=1e-12)
    assert profile.score_label
    store = grid_store(profile=name, metric=metric)
    scores = [m.score for m in store.query("q", k=5)]
    assert scores == sorted(scores, reverse=higher)
    assert store.profile.metric == metric


def test_the_readme_defaults_are_unchanged() -> None:
    chroma, qdrant = FakeVectorStore(profile="chroma"), FakeVectorStore(profile="qdrant")
    assert chroma.profile.higher_is_better is False
    assert qdrant.profile.higher_is_better is True
    assert chroma.profile.score(0.25) == 0.75
    assert qdrant.profile.score(0.25) == 0.25
    assert FakeVectorStore().filter_mode == "pre"


# -- errors ---------------------------------------------------------------------------------------


def test_an_unknown_profile_lists_the_known_ones() -> None:
    with pytest.raises(PlaceboragValueError) as excinfo:
        FakeVectorStore(profile="nope")
    assert excinfo.value.args == (
        "profile='nope' must be one of 'chroma', 'qdrant', 'faiss', 'lancedb', 'pgvector', "
        "'langchain', 'weaviate'",
    )


def test_a_profile_of_the_wrong_type() -> None:
    with pytest.raises(PlaceboragTypeError) as excinfo:
        get_profile(3)  # type: ignore[arg-type]
    assert excinfo.value.args == ("profile=3 must be a profile name or a Profile, not int",)


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        (
            {"metric": "hamming"},
            PlaceboragValueError,
            "metric='hamming' must be one of 'cosine', 'l2', 'ip' for profile 'chroma'",
        ),
        (
            {"profile": "langchain", "metric": "l2"},
            PlaceboragValueError,
            "metric='l2' must be one of 'cosine' for profile 'langchain'",
        ),
        (
            {"tie_order": "random"},
            PlaceboragValueError,
            "tie_order='random' must be one of 'insertion', 'reverse', 'id', 'shuffle'",
        ),
        (
            {"on_existing_id": "overwrite"},
            PlaceboragValueError,
            "on_existing_id='overwrite' must be one of 'replace', 'ignore', 'duplicate', "
            "'move_to_end', 'error'",
        ),
        (
            {"filter_mode": "during"},
            PlaceboragValueError,
            "filter_mode='during' must be one of 'pre', 'post'",
        ),
        (
            {"filter_semantics": "sql"},
            PlaceboragValueError,
            "filter_semantics='sql' must be one of 'strict', 'engine'",
        ),
        ({"pad_missing": 1}, PlaceboragTypeError, "pad_missing=1 must be a bool"),
        ({"seed": "1"}, PlaceboragTypeError, "seed='1' must be an int, not str"),
        ({"orphans": 1.5}, PlaceboragValueError, "orphans=1.5 must be between 0.0 and 1.0"),
        ({"churn": -0.1}, PlaceboragValueError, "churn=-0.1 must be between 0.0 and 1.0"),
        ({"churn": "0.1"}, PlaceboragTypeError, "churn='0.1' must be a number, not str"),
    ],
)
def test_store_options_are_validated_with_exact_messages(
    options: dict, error: type, message: str
) -> None:
    with pytest.raises(error) as excinfo:
        FakeVectorStore(**options)
    assert excinfo.value.args == (message,)


def test_with_options_rejects_an_unknown_option() -> None:
    with pytest.raises(PlaceboragTypeError) as excinfo:
        get_profile("chroma").with_options(colour="red")
    assert excinfo.value.args[0].startswith("unknown profile option 'colour'; expected one of ")


def test_a_custom_profile_is_validated() -> None:
    with pytest.raises(PlaceboragValueError) as excinfo:
        Profile("mine", True, "insertion", 0, "cos", lambda c: c)
    assert excinfo.value.args == ("default_k=0 must be >= 1",)


# -- ties -----------------------------------------------------------------------------------------

# grid_store writes, in order: "cos 0.8", then the tied "b", "a", "cos 0", "c" (cos 0.6 each).


@pytest.mark.parametrize(
    ("tie_order", "expected"),
    [("insertion", ["b", "a", "c"]), ("reverse", ["c", "a", "b"]), ("id", ["a", "b", "c"])],
)
def test_tie_orders(tie_order: str, expected: list[str]) -> None:
    store = grid_store(tie_order=tie_order)
    assert ids(store.query("q", k=4))[1:] == expected


def test_a_cutting_k_keeps_the_ties_its_rule_puts_first() -> None:
    assert ids(grid_store(tie_order="reverse").query("q", k=2)) == ["cos 0.8", "c"]
    assert ids(grid_store(tie_order="insertion").query("q", k=2)) == ["cos 0.8", "b"]


def test_shuffled_ties_are_fixed_by_the_seed_and_move_with_it() -> None:
    orders = {
        seed: tuple(ids(grid_store(tie_order="shuffle", seed=seed).query("q", k=4))[1:])
        for seed in range(12)
    }
    assert all(sorted(order) == ["a", "b", "c"] for order in orders.values())
    assert len(set(orders.values())) > 1
    again = grid_store(tie_order="shuffle", seed=3).query("q", k=4)
    assert tuple(ids(again)[1:]) == orders[3]


# -- writing an existing id -----------------------------------------------------------------------


def rewrite(on_existing_id: str, **options: object) -> FakeVectorStore:
    store = grid_store(on_existing_id=on_existing_id, **options)
    store.upsert("b", "cos 0.6 b", {"v": 2})
    return store


def test_replace_keeps_the_position() -> None:
    store = rewrite("replace")
    assert ids(store.query("q", k=4))[1:] == ["b", "a", "c"]
    assert store.get("b").metadata == {"v": 2}


def test_move_to_end_makes_the_record_the_newest() -> None:
    store = rewrite("move_to_end")
    assert ids(store.query("q", k=4))[1:] == ["a", "c", "b"]
    assert store.ids[-1] == "b"
    assert len(store) == 5


def test_ignore_keeps_the_old_record() -> None:
    store = rewrite("ignore")
    assert store.get("b").metadata == {}
    assert ids(store.query("q", k=4))[1:] == ["b", "a", "c"]


def test_duplicate_keeps_both_records_searchable() -> None:
    store = rewrite("duplicate")
    matches = store.query("q", k=6)
    assert ids(matches)[1:5] == ["b", "a", "c", "b"]
    assert [m.metadata for m in matches if m.id == "b"] == [{}, {"v": 2}]
    assert len(store) == 5
    assert store.get("b").metadata == {"v": 2}
    store.delete("b")
    assert "b" not in ids(store.query("q", k=6))


def test_error_raises_before_anything_is_written() -> None:
    store = grid_store(on_existing_id="error")
    with pytest.raises(PlaceboragValueError) as excinfo:
        store.upsert_many(["new", "b"], ["cos 1", "cos 0.6 b"])
    assert excinfo.value.args == (
        "id 'b' is already stored and on_existing_id='error' forbids writing it again",
    )
    assert "new" not in store


# -- padding, post-filter window, filter semantics --------------------------------------------------


def test_faiss_pads_a_short_answer_with_minus_one() -> None:
    store = grid_store(profile="faiss")
    matches = store.query("q", k=7)
    assert ids(matches)[5:] == ["-1", "-1"]
    assert [m.score for m in matches[5:]] == [-FLOAT32_MAX, -FLOAT32_MAX]
    assert grid_store(profile="faiss", metric="l2").query("q", k=6)[-1].score == FLOAT32_MAX
    assert ids(grid_store(profile="faiss", pad_missing=False).query("q", k=7)) == ids(matches)[:5]


def test_pgvector_post_filters_a_window_of_candidates() -> None:
    store = FakeVectorStore(profile="pgvector")
    for i in range(60):
        store.upsert(f"d{i}", f"refund policy number {i}", {"even": i % 2 == 0})
    explained = store.explain("refund policy", k=10, where={"even": True})
    assert len(explained.top_k) == 40
    assert len(explained.matches) == 10
    narrow = FakeVectorStore(profile=store.profile.with_options(post_filter_candidates=0))
    for i in range(60):
        narrow.upsert(f"d{i}", f"refund policy number {i}", {"even": i % 2 == 0})
    assert len(narrow.query("refund policy", k=10, where={"even": True})) < 10


@pytest.mark.parametrize(
    ("profile", "engine_matches"),
    [("chroma", ["f2", "none"]), ("qdrant", ["f2", "none"]), ("lancedb", ["f2"])],
)
def test_engine_filter_semantics_for_a_missing_key(profile: str, engine_matches: list[str]) -> None:
    def build(semantics: str) -> FakeVectorStore:
        store = FakeVectorStore(profile=profile, filter_semantics=semantics)
        store.upsert("f1", "one", {"color": "red"})
        store.upsert("f2", "two", {"color": "blue"})
        store.upsert("none", "three")
        return store

    for where in ({"color": {"$ne": "red"}}, {"color": {"$nin": ["red"]}}):
        assert sorted(ids(build("strict").query("x", k=5, where=where))) == ["f2"]
        assert sorted(ids(build("engine").query("x", k=5, where=where))) == engine_matches
    assert build("engine").filter_semantics == "engine"


# -- orphans and churn ------------------------------------------------------------------------------


def test_an_orphaned_delete_still_comes_back_from_queries() -> None:
    store = FakeVectorStore(orphans=1.0)
    store.upsert_many(["a", "b"], ["refund policy", "delivery times"])
    store.delete("a")
    assert "a" not in store
    assert store.orphaned_ids == ("a",)
    assert ids(store.query("refund policy", k=2)) == ["a", "b"]
    with pytest.raises(PlaceboragValueError):
        store.get("a")
    store.upsert("a", "refund policy again")
    assert store.orphaned_ids == ()
    assert ids(store.query("refund policy", k=3)).count("a") == 1


def test_which_deletes_are_orphaned_is_fixed_by_the_ids() -> None:
    def orphans() -> tuple[str, ...]:
        store = FakeVectorStore(orphans=0.5)
        names = [f"d{i}" for i in range(40)]
        store.upsert_many(names, names)
        store.delete(names[:30])
        return store.orphaned_ids

    first = orphans()
    assert first == orphans()
    assert 0 < len(first) < 30


def test_churn_makes_live_records_unreachable_by_query_but_not_by_get() -> None:
    store = FakeVectorStore(churn=1.0)
    names = [f"d{i}" for i in range(10)]
    store.upsert_many(names, [f"refund policy {i}" for i in range(10)])
    store.delete(["d0", "d1", "d2"])
    lost = store.unreachable_ids
    assert len(lost) == 3
    assert not set(lost) & {"d0", "d1", "d2"}
    found = ids(store.query("refund policy", k=10))
    assert len(found) == 4
    assert not set(found) & set(lost)
    assert all(store.get(i).id == i for i in lost)
    store.upsert(lost[0], "refund policy again")
    assert lost[0] not in store.unreachable_ids
    assert store.explain("refund policy", k=10).unreachable == store.unreachable_ids


def test_no_churn_by_default() -> None:
    store = FakeVectorStore()
    store.upsert_many(["a", "b"], ["x", "y"])
    store.delete("a")
    store.upsert("b", "z")
    assert store.unreachable_ids == ()
    assert store.orphaned_ids == ()


# -- the property the profiles sell -----------------------------------------------------------------

words = st.sampled_from(["refund", "policy", "money", "back", "delivery", "time", "order", "x"])
corpora = st.lists(st.lists(words, min_size=1, max_size=4).map(" ".join), min_size=1, max_size=12)


@given(corpora, st.lists(words, min_size=1, max_size=3).map(" ".join))
def test_every_profile_ranks_documents_in_the_same_relevance_order(texts, query) -> None:
    embedder = FakeEmbedder(dimensions=64)
    groups = {}
    for name in NAMES:
        store = FakeVectorStore(embedder=embedder, profile=name)
        store.upsert_many([f"d{i}" for i in range(len(texts))], texts)
        explained = store.explain(query, k=len(texts))
        real = [m for m in explained.matches if m.id != "-1"]
        assert len(real) == len(texts)
        cosines = [explained.cosines[m.id] for m in real]
        assert cosines == sorted(cosines, reverse=True)
        scores = [m.score for m in real]
        assert scores == sorted(scores, reverse=store.profile.higher_is_better)
        # Only the order inside a group of exactly equal cosines may differ (the tie rule).
        grouped: dict[float, set[str]] = {}
        for m, c in zip(real, cosines):
            grouped.setdefault(c, set()).add(m.id)
        groups[name] = grouped
    assert all(g == groups["chroma"] for g in groups.values())


def test_a_custom_profile_reports_only_its_own_metric() -> None:
    mine = Profile("mine", True, "insertion", 3, "cos", lambda c: c)
    assert mine.supported_metrics == ("cosine",)
    assert mine.with_options(metric="cosine") == mine
    with pytest.raises(PlaceboragValueError) as excinfo:
        FakeVectorStore(profile=mine, metric="l2")
    assert excinfo.value.args == ("metric='l2' must be one of 'cosine' for profile 'mine'",)


def test_store_options_override_only_their_own_behaviour() -> None:
    store = FakeVectorStore(profile="pgvector", tie_order="id", filter_mode="pre")
    assert (store.profile.tie_order, store.filter_mode) == ("id", "pre")
    assert store.profile.on_existing_id == "move_to_end"
    assert PROFILES["pgvector"].tie_order == "insertion"  # the shared profile is untouched


def test_explain_shows_orphans_and_padding() -> None:
    store = FakeVectorStore(profile="faiss", orphans=1.0)
    store.upsert_many(["a", "b"], ["refund policy", "delivery times"])
    store.delete("a")
    explained = store.explain("refund policy", k=3)
    assert explained.orphans == ("a",)
    assert "a" in explained.candidates
    assert [m.id for m in explained.matches] == ["a", "b", "-1"]


def test_the_empty_in_rule_of_each_profile_is_the_one_docs_profiles_lists():
    # The table under "An empty `$in` or `$nin` list": | `name` | `"rule"` | ...
    doc = (Path(__file__).parent.parent / "docs" / "profiles.md").read_text(encoding="utf-8")
    section = doc.split("### An empty `$in` or `$nin` list", 1)[1].split("\n#", 1)[0]
    rows = re.findall(r'^\| `(\w+)` \| `"(\w+)"` \|', section, re.M)
    assert dict(rows) == {name: profile.empty_in for name, profile in PROFILES.items()}


def test_an_unknown_empty_in_rule_is_refused_listing_the_rules():
    with pytest.raises(PlaceboragValueError) as excinfo:
        get_profile("qdrant").with_options(empty_in="nothing")
    assert excinfo.value.args == ("empty_in='nothing' must be one of 'error', 'empty_set'",)


# -- the pgvector clients (docs/profiles.md) ----------------------------------------------------


def _chunks(store: FakeVectorStore) -> FakeVectorStore:
    for n in range(3):
        store.upsert_many(["file-1"], [f"chunk {n} of the refund policy"], [{"n": n}])
    for n in range(60):
        store.upsert_many([f"other-{n}"], [f"refund policy note {n}"], [{"n": 100 + n}])
    return store


def test_the_pgvector_profile_models_raw_sql_upserts_over_an_hnsw_index() -> None:
    store = _chunks(FakeVectorStore(profile="pgvector"))

    assert "raw SQL" in store.profile.engine and "HNSW" in store.profile.engine
    assert (
        store.ids[-1] == "other-59" and store.get("file-1").text == "chunk 2 of the refund policy"
    )
    assert [m.id for m in store.query("refund policy", k=100)].count("file-1") == 1
    # The WHERE sees only the index's 40 candidates, all notes: the chunk is cut before it.
    assert store.query("note", k=3, where={"n": {"$lt": 3}}) == []


def test_the_langchain_pgvector_options_keep_every_chunk_and_filter_before_ranking() -> None:
    store = _chunks(
        FakeVectorStore(profile="pgvector", on_existing_id="duplicate", filter_mode="pre")
    )

    found = store.query("note", k=3, where={"n": {"$lt": 3}})

    assert sorted(m.text for m in found) == [f"chunk {n} of the refund policy" for n in range(3)]


def test_an_empty_in_is_refused_where_langchains_pgvector_returns_nothing() -> None:
    # A documented difference (docs/profiles.md): the day the store accepts it, this fails.
    store = _chunks(
        FakeVectorStore(profile="pgvector", on_existing_id="duplicate", filter_mode="pre")
    )

    with pytest.raises(PlaceboragValueError, match=r"\$in"):
        store.query("refund", k=4, where={"n": {"$in": []}})
