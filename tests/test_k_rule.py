"""One rule for ``k`` on every surface that takes a result count (placeborag._validation.check_k).

A numpy integer is an int (a DataFrame's column gives ``np.int64``), a bool is not, and the
upper bound is the same everywhere. A framework's own count (LangChain's ``k``, LlamaIndex's
``similarity_top_k``, Haystack's ``top_k``) also takes 0, as the frameworks do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from placeborag import FakeVectorStore, PlaceboragTypeError, PlaceboragValueError
from placeborag._fusion import HybridRetriever, KeywordIndex
from placeborag._knowledge import StubKnowledgeStore
from placeborag._validation import MAX_K, check_k


def _store() -> FakeVectorStore:
    store = FakeVectorStore(profile="qdrant")
    store.upsert_many(["a", "b", "c"], ["refund policy", "parcels ship", "reset password"])
    return store


def _keyword(k: Any) -> Any:
    index = KeywordIndex()
    index.add_many(["a", "b"], ["refund policy", "parcels ship"])
    return index.search("refund", k)


def _langchain(k: Any) -> Any:
    pytest.importorskip("langchain_core")
    from placeborag.integrations.langchain import PlaceboVectorStore

    return PlaceboVectorStore(store=_store()).similarity_search("refund", k=k)


def _langchain_retriever(k: Any) -> Any:
    pytest.importorskip("langchain_core")
    from placeborag.integrations.langchain import PlaceboRetriever

    return PlaceboRetriever(_store(), k=k).invoke("refund")


def _llama(k: Any) -> Any:
    pytest.importorskip("llama_index.core")
    from llama_index.core.schema import TextNode
    from llama_index.core.vector_stores.types import VectorStoreQuery

    from placeborag.integrations.llama_index import PlaceboLlamaVectorStore

    store = PlaceboLlamaVectorStore()
    store.add([TextNode(id_="a", text="refund policy"), TextNode(id_="b", text="parcels")])
    return store.query(VectorStoreQuery(query_str="refund", similarity_top_k=k)).ids


def _haystack(k: Any) -> Any:
    pytest.importorskip("haystack")
    from haystack import Document

    from placeborag.integrations.haystack import PlaceboDocumentStore

    document_store = PlaceboDocumentStore()
    document_store.write_documents([Document(id="a", content="refund policy")])
    return document_store.embedding_retrieval([1.0] * 256, top_k=k)


SURFACES: dict[str, tuple[Callable[[Any], Any], str, int]] = {
    # name: (a call with k, the argument's name, the smallest k allowed)
    "FakeVectorStore.query": (lambda k: _store().query("refund", k), "k", 1),
    "HybridRetriever.query": (lambda k: HybridRetriever(_store()).query("refund", k), "k", 1),
    "KeywordIndex.search": (_keyword, "k", 1),
    "StubKnowledgeStore.search": (
        lambda k: StubKnowledgeStore(backend=_store()).search("refund", identity=None, k=k),
        "k",
        1,
    ),
    "StubKnowledgeStore(k=)": (lambda k: StubKnowledgeStore(backend=_store(), k=k), "k", 1),
    "PlaceboVectorStore.similarity_search": (_langchain, "k", 0),
    "PlaceboRetriever(k=)": (_langchain_retriever, "k", 0),
    "PlaceboLlamaVectorStore.query": (_llama, "similarity_top_k", 0),
    "PlaceboDocumentStore.embedding_retrieval": (_haystack, "top_k", 0),
}


@pytest.mark.parametrize("surface", sorted(SURFACES))
def test_a_numpy_integer_is_a_k(surface: str) -> None:
    call, _, _ = SURFACES[surface]
    call(np.int64(2))
    call(np.int32(1))


@pytest.mark.parametrize("surface", sorted(SURFACES))
@pytest.mark.parametrize(
    ("value", "shown_as", "kind"),
    [(True, "True", "bool"), (2.0, "2.0", "float"), ("2", "'2'", "str")],
)
def test_a_bool_a_float_or_a_str_is_refused_by_name(
    surface: str, value: Any, shown_as: str, kind: str
) -> None:
    call, name, _ = SURFACES[surface]

    with pytest.raises(PlaceboragTypeError) as excinfo:
        call(value)

    assert excinfo.value.args == (f"{name}={shown_as} must be an int, not {kind}",)


@pytest.mark.parametrize("surface", sorted(SURFACES))
def test_the_upper_bound_is_the_same_everywhere(surface: str) -> None:
    call, name, _ = SURFACES[surface]
    call(MAX_K)

    with pytest.raises(PlaceboragValueError) as excinfo:
        call(10**40)

    assert excinfo.value.args[0].startswith(f"{name}={10**40} must be <= 1,000,000 (")


@pytest.mark.parametrize("surface", sorted(SURFACES))
def test_below_the_smallest_k_is_refused(surface: str) -> None:
    call, name, minimum = SURFACES[surface]

    with pytest.raises(PlaceboragValueError) as excinfo:
        call(minimum - 1)

    assert excinfo.value.args == (f"{name}={minimum - 1} must be >= {minimum}",)


def test_check_k_is_the_rule() -> None:
    assert check_k(np.uint8(3)) == 3 and type(check_k(np.uint8(3))) is int
    assert check_k(0, minimum=0) == 0
    with pytest.raises(PlaceboragValueError, match=r"^k=0 must be >= 1$"):
        check_k(0)
