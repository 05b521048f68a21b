"""The audit's mutations: the table of records, each one's own example, and the recorder.

``placeborag._mutations.MUTATIONS`` is one table; every record carries an example, run here by
one parametrised test under the recorder exactly as an audit runs it (a control run, then the
mutated one), so a new mutation is one record and its example is tested with no new test.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

from placeborag import (
    FakeVectorStore,
    PlaceboragValueError,
    RetrievalTimeout,
    _mutations,
    _recorder,
)

_recorder.install()

SIDES = {"embedder", "answer", "request", "write", "seam"}


def filled(**options):
    store = FakeVectorStore(**options)
    for doc_id, text, lang in _mutations.DOCS:
        store.upsert(doc_id, text, metadata={"lang": lang})
    return store


def under(mode, work, reference=None):
    """Run ``work()`` recorded as one run of an audit; its result and the run."""
    _recorder.begin(mode, reference=reference)
    try:
        result = work()
    finally:
        run = _recorder.end()
    return result, run


def ids(matches):
    return [m.id for m in matches]


def test_the_table_names_each_mutation_once_with_everything_the_report_and_docs_need():
    names = [m.name for m in _mutations.MUTATIONS]
    codes = [m.code for m in _mutations.MUTATIONS]

    assert len(set(names)) == len(names) and len(set(codes)) == len(codes)
    for m in _mutations.MUTATIONS:
        assert m.side in SIDES
        assert len(m.code) == 2 and m.code.isupper()
        assert m.stands_for and m.does and m.log
        assert _mutations.by_name(m.name) is m
    # Every mutation a store can run under has an example of its own.
    assert all(m.example is not None for m in _mutations.store_mutations())


@pytest.mark.parametrize("mutation", _mutations.store_mutations(), ids=lambda m: m.name)
def test_each_mutation_s_own_example_changes_what_it_says(mutation):
    example = mutation.example

    def work():
        return example.run(filled(**example.options))

    usual, baseline = under(None, work)
    control, control_run = under("control", work, baseline.facts)
    mutated, run = under(mutation.name, work, baseline.facts)

    assert usual == control == example.usual
    assert mutated == example.mutated
    assert mutation.skip_reason(baseline.facts) is None
    if mutation.side in ("embedder", "answer", "request"):
        # The usual run predicted the change, so the audit would rerun the test for it.
        assert mutation.name in baseline.changes or baseline.facts.read_log
    # What the example received differs: the mutation reached it (evidence, in an audit).
    assert run.final_received() != control_run.final_received()


def test_a_request_mutation_shows_in_the_log_what_the_store_received():
    def work():
        store = filled()
        store.query("refund policy", k=1, where={"lang": "hu"})
        return store.last_query

    usual, _ = under(None, work)
    dropped, _ = under("filter-dropped", work)
    no_k, _ = under("k-dropped", work)
    other, _ = under("query-changed", work)

    assert (usual.text, usual.k, usual.where) == ("refund policy", 1, {"lang": "hu"})
    assert (dropped.text, dropped.k, dropped.where) == ("refund policy", 1, None)
    assert (no_k.text, no_k.k, no_k.where) == ("refund policy", 10, {"lang": "hu"})
    assert other.text == _mutations.OTHER_QUESTION


def test_an_answer_mutation_leaves_the_log_and_the_injected_failures_alone():
    def work():
        store = filled()
        store.fail_next_query(times=1)
        with pytest.raises(RetrievalTimeout):
            store.query("refund policy", k=2)
        matches = store.query("refund policy", k=2)
        return ids(matches), [(q.text, q.k, q.where) for q in store.queries]

    (usual, log), _ = under(None, work)
    (reversed_, reversed_log), _ = under("reversed", work)

    assert reversed_log == log == [("refund policy", 2, None)] * 2
    assert reversed_ == ["shipping", "hu-refund"] and usual == ["refund", "warranty"]


def test_write_lost_drops_the_second_record_or_the_only_one():
    def many():
        store = FakeVectorStore()
        store.upsert_many(["a", "b", "c"], ["one", "two", "three"])
        return store.ids

    def one():
        store = FakeVectorStore()
        store.upsert("a", "one")
        return store.ids

    for work, expected in ((many, ["a", "c"]), (one, [])):
        _, baseline = under(None, work)
        assert under("write-lost", work, baseline.facts)[0] == expected


def test_metadata_key_lost_drops_the_key_the_filters_name_first():
    def work():
        store = FakeVectorStore()
        store.upsert("a", "one", {"tenant": "acme", "lang": "en"})
        store.query("one", k=1, where={"tenant": "acme"})
        return store.get("a").metadata

    _, baseline = under(None, work)

    assert baseline.facts.dropped_key() == "tenant"
    assert under("metadata-key-lost", work, baseline.facts)[0] == {"lang": "en"}


def test_delete_ignored_answers_as_a_delete_would_and_removes_nothing():
    def work():
        store = filled()
        return store.delete(["refund", "shipping"]), len(store), store.delete("nope")

    assert under(None, work)[0] == (2, 2, False)
    assert under("delete-ignored", work)[0] == (2, 4, False)


def test_recall_lost_hashes_texts_not_ids_so_random_ids_lose_the_same_records():
    def work(prefix):
        store = FakeVectorStore()
        for n, (_, text, _) in enumerate(_mutations.DOCS):
            store.upsert(f"{prefix}-{n}", text)
        return [m.text for m in store.query("refund policy", k=4)]

    first, _ = under("recall-lost", lambda: work("x"))
    second, _ = under("recall-lost", lambda: work("y"))

    assert first == second and 0 < len(first) < 4


def test_ids_drawn_afresh_each_run_are_recorded_by_the_order_they_appeared():
    import uuid

    def work():
        store = FakeVectorStore()
        for _, text, lang in _mutations.DOCS:
            store.upsert(str(uuid.uuid4()), text, {"lang": lang})
        store.query("refund policy", k=2)

    _, one = under(None, work)
    _, two = under(None, work)

    assert one.final_received() == two.final_received()
    assert one.answer_lists() == two.answer_lists()


def test_a_thread_left_running_is_recorded_by_no_later_run():
    store = filled()
    stop = threading.Event()
    started = threading.Event()

    def keep_querying():
        started.set()
        while not stop.is_set():
            store.query("refund policy", k=1)

    def leave_a_thread():
        threading.Thread(target=keep_querying, daemon=True).start()
        started.wait()

    under(None, leave_a_thread)
    try:
        _, later = under(None, lambda: None)
    finally:
        stop.set()

    assert later.facts.queries == 0 and not later.received and not later.doubles


def test_the_vectors_an_embedder_hands_to_a_store_are_not_what_the_test_received():
    from placeborag import FakeEmbedder

    def work():
        embedder = FakeEmbedder()
        store = FakeVectorStore(embedder=embedder)
        store.upsert("a", "refund policy")
        store.query_by_vector(embedder.embed("refund"), k=1)

    _, usual = under(None, work)
    _, shaped = under("shape-only", work, usual.facts)

    # The query vectors differ (shape-only), but they went to the store: only the answers
    # (the same single record) reached the test.
    assert usual.facts.embedded
    assert usual.final_received() == shaped.final_received()


def test_shape_only_vectors_are_unit_deterministic_and_keep_no_structure():
    shaped = _mutations.shape_vectors(["refund policy", "refund policies"], 64)

    assert np.allclose(np.linalg.norm(shaped, axis=1), 1.0)
    assert np.array_equal(
        shaped, _mutations.shape_vectors(["refund policy", "refund policies"], 64)
    )
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


def test_an_unknown_mutation_is_refused_naming_the_known_ones():
    with pytest.raises(PlaceboragValueError) as excinfo:
        _recorder.begin("reverse")

    message = excinfo.value.args[0]
    assert message.startswith("mutation='reverse' must be one of 'shape-only', 'reversed', ")
    assert all(repr(m.name) in message for m in _mutations.MUTATIONS)
    assert _recorder._run is None  # nothing started


def test_a_mutation_reads_one_shot_ids_from_a_store_that_keeps_no_queries():
    # issue 27: the audit read a generator's ids back from store.last_query, which a store
    # built with query_log=0 does not keep.
    everything = ids(filled().query("refund policy", k=4, ids=["refund", "shipping"]))

    def work():
        store = filled(query_log=0)
        matches = store.query("refund policy", k=2, ids=(i for i in ["refund", "shipping"]))
        return ids(matches), store.queries, store.query_count

    result, _ = under("reversed", work)

    assert result == (everything[::-1][:2], (), 1)


def test_without_an_audit_the_instrumented_doubles_record_nothing():
    store = filled()

    assert ids(store.query("refund policy", k=2)) == ["refund", "warranty"]
    assert _recorder._run is None and _recorder.end() is None
