"""HybridRetriever passes a query's context through to the store, as FakeVectorStore records it."""

import pytest

from placeborag import FakeVectorStore, HybridRetriever, PlaceboragTypeError

ALICE = {"user": "alice", "groups": ["support"]}


@pytest.fixture
def retriever():
    store = FakeVectorStore()
    store.upsert_many(["a", "b"], ["refund within 30 days", "shipping takes five days"])
    return HybridRetriever(store)


def test_the_context_reaches_the_store_and_both_records(retriever):
    retriever.query("refund", k=1, context=ALICE)
    retriever.explain("shipping", k=1, context={"tenant": "t-1"})

    assert [q.context for q in retriever.queries] == [ALICE, {"tenant": "t-1"}]
    assert [q.context for q in retriever.store.queries] == [ALICE, {"tenant": "t-1"}]


def test_without_a_context_nothing_is_recorded_for_it(retriever):
    retriever.query("refund", k=1)

    assert retriever.queries[0].context is None
    assert retriever.store.queries[0].context is None


def test_the_recorded_context_is_a_copy(retriever):
    identity = {"user": "alice", "groups": ["support"]}
    retriever.query("refund", k=1, context=identity)
    identity["groups"].append("admin")

    assert retriever.queries[0].context == ALICE


def test_a_context_that_is_not_a_dict_is_refused_before_anything_is_recorded(retriever):
    with pytest.raises(PlaceboragTypeError, match=r"context=\['alice'\] must be a dict or None"):
        retriever.query("refund", context=["alice"])

    assert retriever.queries == () and retriever.store.queries == ()
