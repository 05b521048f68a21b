"""What the two PlaceboVectorStore docstrings a new user reads first promise, held."""

from __future__ import annotations

import pytest

pytest.importorskip("langchain_core")

from langchain_core.documents import Document
from langchain_core.vectorstores import VectorStore

from placeborag.integrations.langchain import PlaceboVectorStore


def test_add_documents_has_its_own_docstring():
    assert PlaceboVectorStore.add_documents.__doc__ != VectorStore.add_documents.__doc__
    assert "uuid5" in PlaceboVectorStore.add_documents.__doc__


def test_add_documents_keeps_given_ids_generates_the_same_missing_ones_and_ids_win():
    def write(store):
        return store.add_documents(
            [Document(page_content="refund policy", id="refund"), Document(page_content="ship")]
        )

    first, again = write(PlaceboVectorStore()), write(PlaceboVectorStore())
    assert first[0] == "refund" and first == again
    store = PlaceboVectorStore()
    assert store.add_documents([Document(page_content="a", id="own")], ids=["given"]) == ["given"]
    assert store.store.ids == ["given"]


def test_a_search_by_vector_takes_a_filter_and_records_an_empty_text():
    store = PlaceboVectorStore()
    store.add_texts(
        ["refund policy", "refund policy in Hungarian"],
        [{"lang": "en"}, {"lang": "hu"}],
        ids=["en", "hu"],
    )
    vector = store.embeddings.embed_query("refund policy")
    found = store.similarity_search_with_score_by_vector(vector, k=2, filter={"lang": "hu"})
    assert [doc.id for doc, _ in found] == ["hu"]
    last = store.store.last_query
    assert (last.text, last.k, last.where) == ("", 2, {"lang": "hu"})
