"""Haystack's own document-store test classes, as published in haystack-ai, run against
PlaceboDocumentStore (subclassed here, not copied). tests/thirdparty/README.md lists every test
that fails, with the reason; a listed test that starts passing fails here too (strict xfail).
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("haystack")

from haystack import Document
from haystack.document_stores.types import DuplicatePolicy
from haystack.testing.document_store import (
    CountDocumentsByFilterTest,
    CountUniqueMetadataByFilterTest,
    DocumentStoreBaseExtendedTests,
    GetMetadataFieldMinMaxTest,
    GetMetadataFieldsInfoTest,
    GetMetadataFieldUniqueValuesTest,
)
from haystack.testing.document_store_async import (
    CountDocumentsAsyncTest,
    CountDocumentsByFilterAsyncTest,
    CountUniqueMetadataByFilterAsyncTest,
    DeleteAllAsyncTest,
    DeleteByFilterAsyncTest,
    DeleteDocumentsAsyncTest,
    FilterDocumentsAsyncTest,
    GetMetadataFieldMinMaxAsyncTest,
    GetMetadataFieldsInfoAsyncTest,
    GetMetadataFieldUniqueValuesAsyncTest,
    UpdateByFilterAsyncTest,
    WriteDocumentsAsyncTest,
)

from placeborag import PROFILES, FakeEmbedder
from placeborag.integrations.haystack import PlaceboDocumentStore

# haystack.testing's documents carry 768-dimensional embeddings.
DIMENSIONS = 768
# One profile per existing-id rule and filter timing: "qdrant" replaces in place (the
# default), "faiss" keeps duplicates, "pgvector" moves a rewrite to the end and post-filters.
PROFILE_CASES = ["qdrant", "faiss", "pgvector"]
assert {PROFILES[name].on_existing_id for name in PROFILE_CASES} == {
    "replace",
    "duplicate",
    "move_to_end",
}


def store(**options: Any) -> PlaceboDocumentStore:
    return PlaceboDocumentStore(embedder=FakeEmbedder(dimensions=DIMENSIONS), **options)


def _kept(store: PlaceboDocumentStore, first: Document, second: Document) -> list[Document]:
    """What a second write of the same id leaves, by the profile's on_existing_id."""
    duplicate = store.store.profile.on_existing_id == "duplicate"
    return [first, second] if duplicate else [second]


class TestHaystackSuite(
    DocumentStoreBaseExtendedTests,
    CountDocumentsByFilterTest,
    CountUniqueMetadataByFilterTest,
    GetMetadataFieldsInfoTest,
    GetMetadataFieldMinMaxTest,
    GetMetadataFieldUniqueValuesTest,
):
    @pytest.fixture(params=PROFILE_CASES)
    def document_store(self, request: pytest.FixtureRequest) -> PlaceboDocumentStore:
        return store(profile=request.param)

    def test_write_documents(self, document_store: PlaceboDocumentStore) -> None:
        # haystack.testing leaves the default policy to each store: ours is the profile's
        # on_existing_id. "replace" and "move_to_end" keep the newer document; "duplicate"
        # keeps both, and every stored record is read back, as queries return them.
        first, second = Document(id="1", content="first"), Document(id="1", content="second")
        assert document_store.write_documents([first]) == 1
        assert document_store.write_documents([second], policy=DuplicatePolicy.NONE) == 1
        assert document_store.filter_documents() == _kept(document_store, first, second)


class TestHaystackAsyncSuite(
    CountDocumentsAsyncTest,
    CountDocumentsByFilterAsyncTest,
    CountUniqueMetadataByFilterAsyncTest,
    DeleteAllAsyncTest,
    DeleteByFilterAsyncTest,
    DeleteDocumentsAsyncTest,
    FilterDocumentsAsyncTest,
    GetMetadataFieldMinMaxAsyncTest,
    GetMetadataFieldsInfoAsyncTest,
    GetMetadataFieldUniqueValuesAsyncTest,
    UpdateByFilterAsyncTest,
    WriteDocumentsAsyncTest,
):
    @pytest.fixture(params=PROFILE_CASES)
    def document_store(self, request: pytest.FixtureRequest) -> PlaceboDocumentStore:
        return store(profile=request.param)

    @pytest.mark.asyncio
    async def test_write_documents_async(self, document_store: PlaceboDocumentStore) -> None:
        first, second = Document(id="1", content="first"), Document(id="1", content="second")
        assert await document_store.write_documents_async([first]) == 1
        assert await document_store.write_documents_async([second]) == 1
        assert await document_store.filter_documents_async() == _kept(document_store, first, second)
