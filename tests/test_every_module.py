"""Every module imports and each layer answers once, on whatever versions are installed.

``make lower-bounds`` runs this file (with the public-API and headless explorer tests) in
``.venv-lower``: Python 3.10 and every minimum pyproject.toml declares, pinned by
``tests/constraints/lower-bounds.txt``. In ``.venv`` it runs with the rest of the suite.
"""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import placeborag

MODULES = sorted(m.name for m in pkgutil.walk_packages(placeborag.__path__, "placeborag."))
# The third-party package a module needs at import time, by the extra that brings it.
NEEDS = {
    "placeborag.integrations.langchain": "langchain_core",
    "placeborag.integrations._langchain_chat": "langchain_core",
    "placeborag.integrations.llama_index": "llama_index.core",
    "placeborag.integrations._llama_chat": "llama_index.core",
    "placeborag.explore._figures.widgets": "anywidget",
}


def test_the_walk_finds_every_layer():
    assert {"placeborag._store", "placeborag.explore._app", *NEEDS} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_every_module_imports(name):
    if name in NEEDS:
        pytest.importorskip(NEEDS[name])
    importlib.import_module(name)


@pytest.mark.parametrize("package", ["placeborag", "placeborag.explore"])
def test_every_public_name_loads(package):
    if package == "placeborag.explore":
        for extra in ("pandas", "sklearn", "plotly", "ipywidgets", "anywidget"):
            pytest.importorskip(extra)
    module = importlib.import_module(package)
    assert all(getattr(module, name) is not None for name in module.__all__)


def test_the_langchain_adapter_answers_a_query_by_vector():
    pytest.importorskip("langchain_core")
    from placeborag.integrations.langchain import PlaceboVectorStore

    store = PlaceboVectorStore()
    store.add_texts(["our refund policy", "parcels ship in two days"], ids=["refund", "ship"])
    vector = store.embeddings.embed_query("refund policy")
    found = store.similarity_search_by_vector(vector, k=1)
    assert [doc.id for doc in found] == ["refund"]


def test_the_llama_index_adapter_answers_a_query():
    pytest.importorskip("llama_index.core")
    from llama_index.core import Document, StorageContext, VectorStoreIndex

    from placeborag.integrations.llama_index import PlaceboEmbedding, PlaceboLlamaVectorStore

    storage = StorageContext.from_defaults(vector_store=PlaceboLlamaVectorStore())
    index = VectorStoreIndex.from_documents(
        [Document(text="our refund policy", id_="refund"), Document(text="parcels ship")],
        storage_context=storage,
        embed_model=PlaceboEmbedding(),
    )
    nodes = index.as_retriever(similarity_top_k=1).retrieve("refund policy")
    assert [node.node.ref_doc_id for node in nodes] == ["refund"]
