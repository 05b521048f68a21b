"""The audit's retrieval mutations, switched on directly (``placeborag._mutations``)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from placeborag import (
    FakeEmbedder,
    FakeVectorStore,
    PlaceboragValueError,
    RetrievalTimeout,
    _mutations,
)

DOCS = [
    ("refund", "our refund policy allows returns within 30 days", "en"),
    ("shipping", "delivery times to remote islands", "en"),
    ("warranty", "the warranty covers water damage", "en"),
    ("hu-refund", "pénzvisszatérítési szabályzat harminc napon belül", "hu"),
]


def filled(**options):
    store = FakeVectorStore(**options)
    for doc_id, text, lang in DOCS:
        store.upsert(doc_id, text, metadata={"lang": lang})
    return store


@pytest.fixture
def mutation():
    """Run the test's queries with a mutation on: ``mutation("reversed")``."""
    started = []

    def on(name):
        _mutations.begin(name)
        started.append(name)

    yield on
    if started:
        _mutations.end()


def ids(matches):
    return [m.id for m in matches]


def test_without_an_audit_the_hooks_change_nothing_and_record_nothing():
    store = filled()
    plain = store.query("refund policy", k=2)

    assert _mutations._run is None
    assert ids(plain) == ["refund", "warranty"]
    assert _mutations.end().doubles == set()


def test_reversed_answers_the_k_worst_matches_worst_first(mutation):
    store = filled()
    everything = ids(store.query("refund policy", k=4))

    mutation("reversed")

    assert ids(store.query("refund policy", k=2)) == everything[::-1][:2]


def test_k_ignored_answers_every_match(mutation):
    store = filled()
    mutation("k-ignored")

    assert len(store.query("refund policy", k=1)) == 4


def test_filter_ignored_drops_where_and_ids(mutation):
    store = filled()
    mutation("filter-ignored")

    assert ids(store.query("refund policy", k=1, where={"lang": "hu"})) == ["refund"]
    assert ids(store.query("refund policy", k=1, ids=["shipping"])) == ["refund"]


def test_filter_after_the_cut_swaps_pre_and_post_filtering(mutation):
    pre, post = filled(filter_mode="pre"), filled(filter_mode="post")
    mutation("filter-after-cut")

    assert pre.query("refund policy", k=1, where={"lang": "hu"}) == []  # now post: starved
    assert ids(post.query("refund policy", k=1, where={"lang": "hu"})) == ["hu-refund"]


def test_ties_flipped_orders_exact_ties_the_other_way(mutation):
    store = FakeVectorStore()
    for doc_id in ("a", "b", "c"):
        store.upsert(doc_id, "the same text")
    assert ids(store.query("the same text", k=2)) == ["a", "b"]  # chroma: insertion order

    mutation("ties-flipped")

    assert ids(store.query("the same text", k=2)) == ["c", "b"]


def test_recall_lost_halves_the_share_of_candidates_kept(mutation):
    store = filled()
    expected = store.with_options(recall=0.5).query("refund policy", k=4)
    mutation("recall-lost")

    assert store.query("refund policy", k=4) == expected
    assert len(expected) == 2


def test_stale_reads_hide_writes_until_refresh(mutation):
    mutation("stale-reads")
    store = filled()

    assert store.query("refund policy", k=2) == []
    store.refresh()
    assert ids(store.query("refund policy", k=2)) == ["refund", "warranty"]
    store.upsert("late", "refund policy for late orders")
    assert "late" not in ids(store.query("refund policy", k=4))


def test_a_mutation_leaves_the_query_log_and_the_injected_failures_alone(mutation):
    store = filled()
    store.fail_next_query()
    mutation("k-ignored")

    with pytest.raises(RetrievalTimeout):
        store.query("refund policy", k=1)
    store.query_by_vector(store.embed_query("refund policy"), 1, text="refund policy")

    assert [(q.text, q.k) for q in store.queries] == [("refund policy", 1)] * 2


def test_shape_only_vectors_are_unit_deterministic_and_keep_no_structure(mutation):
    embedder = FakeEmbedder(dimensions=64)
    related = embedder.embed("refund policy"), embedder.embed("our refund policy")
    mutation("shape-only")

    shaped = np.array(embedder.embed_batch(["refund policy", "our refund policy"]))

    assert shaped.shape == (2, 64)
    assert np.allclose(np.linalg.norm(shaped, axis=1), 1.0)
    assert embedder.embed("refund policy") == shaped[0].tolist()
    assert np.array_equal(embedder.embed_array(["refund policy"])[0], shaped[0])
    assert embedder.embed("refund policy") != related[0]
    # The shared words gave the two texts a high cosine; the shape-only vectors share nothing.
    assert float(np.dot(related[0], related[1])) > 0.5
    assert abs(float(shaped[0] @ shaped[1])) < 0.5


def test_shape_only_vectors_are_the_same_bits_in_every_process():
    code = (
        "from placeborag._mutations import shape_vectors;"
        "print(shape_vectors(['refund policy', 'ünnep'], 32).tobytes().hex())"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout.strip()
        for seed in ("0", "1")
    }

    assert outputs == {_mutations.shape_vectors(["refund policy", "ünnep"], 32).tobytes().hex()}


def test_shape_only_reranks_a_store_by_texts_it_re_embeds(mutation):
    store = filled()
    mutation("shape-only")

    shaped = store.query("refund policy", k=4)

    twin = store.reembedded(_mutations.ShapeOnlyEmbedder(256))
    assert shaped == twin.query("refund policy", k=4)
    assert ids(shaped) != ["refund", "warranty", "hu-refund", "shipping"]


def test_the_baseline_records_what_the_test_did_and_which_mutations_change_an_answer():
    store = filled()
    _mutations.begin(None)
    try:
        store.query("refund policy", k=1, where={"lang": "hu"})
    finally:
        usage = _mutations.end()

    assert usage.doubles == {"FakeVectorStore", "FakeEmbedder"}
    assert usage.queries == 1 and usage.filtered and not usage.embedded
    assert usage.skip_reason("filter-ignored") is None
    assert usage.skip_reason("reversed") == "no query's answer changes under it"
    assert usage.skip_reason("ties-flipped") == "no tie reached an answer"
    # Built before the run: a stale read sees it as it was at its first query, unchanged.
    assert usage.skip_reason("stale-reads") == "no query's answer changes under it"


def test_an_unknown_mutation_is_refused_naming_the_known_ones():
    with pytest.raises(PlaceboragValueError) as excinfo:
        _mutations.begin("reverse")

    assert excinfo.value.args == (
        "mutation='reverse' must be one of 'shape-only', 'reversed', 'filter-ignored', "
        "'filter-after-cut', 'k-ignored', 'ties-flipped', 'recall-lost', 'stale-reads'",
    )


def test_a_mutation_reads_one_shot_ids_from_a_store_that_keeps_no_queries(mutation):
    # issue 27: the audit read a generator's ids back from store.last_query, which a store
    # built with query_log=0 does not keep.
    store = filled(query_log=0)
    everything = ids(filled().query("refund policy", k=4, ids=["refund", "shipping"]))
    mutation("reversed")
    matches = store.query("refund policy", k=2, ids=(i for i in ["refund", "shipping"]))
    assert ids(matches) == everything[::-1][:2]
    assert store.queries == () and store.query_count == 1
