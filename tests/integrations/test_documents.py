"""A record's document read back as the application wrote it, through any adapter."""

from __future__ import annotations

import json

import pytest

from placeborag import FakeEmbedder
from placeborag.integrations import document_metadata, document_text

EMBEDDED = "file_name: a.txt\n\nParcels ship."
NODE = {"_node_content": json.dumps({"text": "Parcels ship."}), "_node_type": "TextNode"}


@pytest.mark.parametrize(
    ("metadata", "text", "kept"),
    [
        ({"lang": "en"}, EMBEDDED, {"lang": "en"}),  # no adapter's node: as stored
        ({**NODE, "file_name": "a.txt"}, "Parcels ship.", {"file_name": "a.txt"}),
        (
            {**NODE, "_ref_doc_id": "doc-1", "file_name": "a.txt"},
            "Parcels ship.",
            {"file_name": "a.txt"},
        ),
        (
            {"_node_content": json.dumps({"text_resource": {"text": "T"}}), "_node_type": "N"},
            "T",
            {},
        ),
        ({"_node_content": "{not json", "_node_type": "TextNode"}, EMBEDDED, None),
        ({"_node_content": json.dumps({"text": "x"})}, EMBEDDED, None),  # no node type
        ({"_node_content": json.dumps(["x"]), "_node_type": "TextNode"}, EMBEDDED, None),
    ],
)
def test_a_records_own_text_and_metadata(metadata, text, kept):
    assert document_text(EMBEDDED, metadata) == text
    assert document_metadata(metadata) == (dict(metadata) if kept is None else kept)


def test_a_llamaindex_record_gives_back_its_nodes_text_and_metadata():
    llama = pytest.importorskip("llama_index.core")
    from placeborag.integrations.llama_index import PlaceboEmbedding, PlaceboLlamaVectorStore

    vector_store = PlaceboLlamaVectorStore(embedder=FakeEmbedder())
    llama.VectorStoreIndex.from_documents(
        [llama.Document(text="Parcels ship.", metadata={"file_name": "a.txt"})],
        storage_context=llama.StorageContext.from_defaults(vector_store=vector_store),
        embed_model=PlaceboEmbedding(vector_store.store.embedder),
    )
    records = vector_store.store.records()
    assert records.texts[0] == "file_name: a.txt\n\nParcels ship."
    assert document_text(records.texts[0], records.metadata[0]) == "Parcels ship."
    assert document_metadata(records.metadata[0]) == {"file_name": "a.txt"}


def test_a_langchain_record_is_its_page_content():
    lc = pytest.importorskip("langchain_core.documents")
    from placeborag.integrations.langchain import PlaceboVectorStore

    vector_store = PlaceboVectorStore(FakeEmbedder())
    vector_store.add_documents([lc.Document(page_content="Parcels ship.", metadata={"a": 1})])
    records = vector_store.store.records()
    assert document_text(records.texts[0], records.metadata[0]) == "Parcels ship."
    assert document_metadata(records.metadata[0]) == {"a": 1}
