"""A store built without an embedder takes its dimension from the first vectors it is given.

As LlamaIndex's ``SimpleVectorStore`` and Chroma do: the LlamaIndex and Haystack adapters
built with no embedder hold no dimension until the first embedding arrives, and their text
side is then a ``FakeEmbedder`` of that dimension. Zero vectors are placed as the profile's
engine places them (docs/integrations.md, "Dimensions and zero vectors"); non-finite ones are
refused, as every engine the default profiles model refuses them.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

pytest.importorskip("llama_index.core")
pytest.importorskip("haystack")

from haystack import Document
from llama_index.core import StorageContext, VectorStoreIndex
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.types import (
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryMode,
)

from placeborag import FakeEmbedder, PlaceboragValueError
from placeborag.integrations.haystack import PlaceboDocumentStore
from placeborag.integrations.llama_index import PlaceboEmbedding, PlaceboLlamaVectorStore


def node(node_id: str, vector: list[float] | None, **metadata: Any) -> TextNode:
    return TextNode(id_=node_id, text=f"text of {node_id}", embedding=vector, metadata=metadata)


def ids_and_scores(result: Any) -> list[tuple[str, float]]:
    return list(zip(result.ids, result.similarities))


# -- LlamaIndex ---------------------------------------------------------------------------


def test_a_llama_store_without_an_embedder_takes_the_dimension_of_the_first_embeddings() -> None:
    vector_store = PlaceboLlamaVectorStore()
    VectorStoreIndex(
        [TextNode(id_="a", text="alpha"), TextNode(id_="b", text="beta")],
        storage_context=StorageContext.from_defaults(vector_store=vector_store),
        embed_model=MockEmbedding(embed_dim=5),
    )

    assert vector_store.store.records().dimensions == 5
    # The text side is a FakeEmbedder at that dimension: a query by text alone is answered.
    text_side = PlaceboEmbedding(vector_store.store.embedder).embedder
    assert (type(text_side), text_side.dimensions) == (FakeEmbedder, 5)
    found = vector_store.query(VectorStoreQuery(query_str="alpha", similarity_top_k=2))
    assert sorted(found.ids) == ["a", "b"]


def test_a_refused_first_write_leaves_the_dimension_to_the_next_one() -> None:
    vector_store = PlaceboLlamaVectorStore()

    with pytest.raises(PlaceboragValueError, match="has a 3-dimensional embedding"):
        vector_store.add([node("a", [1.0, 0.0]), node("b", [1.0, 0.0, 0.0])])
    vector_store.add([node("c", [0.0, 0.0, 1.0])])

    assert len(vector_store.store) == 1
    assert vector_store.store.records().dimensions == 3


def test_a_store_given_an_embedder_keeps_its_dimension() -> None:
    vector_store = PlaceboLlamaVectorStore(embedder=FakeEmbedder(dimensions=4))

    with pytest.raises(PlaceboragValueError, match="store holds 4-dimensional vectors"):
        vector_store.add([node("a", [1.0, 0.0])])


def test_a_one_dimensional_store_takes_vectors_and_names_why_it_cannot_embed_a_text() -> None:
    vector_store = PlaceboLlamaVectorStore()
    vector_store.add([node("a", [0.5]), node("b", [-2.0])])

    found = vector_store.query(VectorStoreQuery(query_embedding=[3.0], similarity_top_k=2))
    assert ids_and_scores(found) == [("a", 1.0), ("b", -1.0)]
    with pytest.raises(PlaceboragValueError, match="FakeEmbedder needs at least 2 dimensions"):
        vector_store.add([node("c", None)])


GRID = [node("x", [1.0, 0.0]), node("zero", [0.0, 0.0]), node("y", [-1.0, 0.2])]


@pytest.mark.parametrize(
    ("profile", "expected"),
    [
        # qdrant and chroma score a zero vector as an orthogonal one: cosine 0 (distance 1).
        ("qdrant", [("x", 1.0), ("zero", 0.0), ("y", -1.0 / math.sqrt(1.04))]),
        ("chroma", [("x", 0.0), ("zero", 1.0), ("y", 1.0 + 1.0 / math.sqrt(1.04))]),
    ],
)
def test_a_zero_embedding_ranks_as_an_orthogonal_vector(
    profile: str, expected: list[tuple[str, float]]
) -> None:
    vector_store = PlaceboLlamaVectorStore(profile=profile)
    vector_store.add(GRID)

    found = vector_store.query(VectorStoreQuery(query_embedding=[2.0, 0.0], similarity_top_k=3))

    assert [i for i in found.ids] == [i for i, _ in expected]
    assert found.similarities == pytest.approx([s for _, s in expected], rel=1e-6)


def test_a_zero_embedding_is_never_returned_under_lancedb() -> None:
    vector_store = PlaceboLlamaVectorStore(profile="lancedb")
    vector_store.add(GRID)

    found = vector_store.query(VectorStoreQuery(query_embedding=[2.0, 0.0], similarity_top_k=3))

    assert found.ids == ["x", "y"]


def test_a_zero_embedding_comes_last_with_a_nan_distance_under_pgvector() -> None:
    vector_store = PlaceboLlamaVectorStore(profile="pgvector")
    vector_store.add(GRID)

    found = vector_store.query(VectorStoreQuery(query_embedding=[2.0, 0.0], similarity_top_k=3))
    short = vector_store.query(VectorStoreQuery(query_embedding=[2.0, 0.0], similarity_top_k=2))

    assert found.ids == ["x", "y", "zero"]
    assert math.isnan(found.similarities[2])
    assert short.ids == ["x", "y"]


def test_a_zero_embedding_passes_the_query_filters_like_any_node() -> None:
    vector_store = PlaceboLlamaVectorStore()
    vector_store.add([node("x", [1.0, 0.0], team="a"), node("zero", [0.0, 0.0], team="b")])
    only_b = MetadataFilters(filters=[MetadataFilter(key="team", value="b")])

    by_filter = vector_store.query(
        VectorStoreQuery(query_embedding=[1.0, 0.0], similarity_top_k=2, filters=only_b)
    )
    by_id = vector_store.query(
        VectorStoreQuery(query_embedding=[1.0, 0.0], similarity_top_k=2, node_ids=["x"])
    )

    assert by_filter.ids == ["zero"]
    assert by_id.ids == ["x"]
    assert vector_store.get_nodes(["zero"])[0].metadata == {"team": "b"}


def test_mmr_never_picks_a_zero_embedding() -> None:
    vector_store = PlaceboLlamaVectorStore()
    vector_store.add(GRID)

    found = vector_store.query(
        VectorStoreQuery(
            query_embedding=[1.0, 0.0], similarity_top_k=3, mode=VectorStoreQueryMode.MMR
        )
    )

    assert found.ids == ["x", "y"]


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_a_non_finite_embedding_is_refused_before_anything_is_written(bad: float) -> None:
    vector_store = PlaceboLlamaVectorStore()

    with pytest.raises(PlaceboragValueError):
        vector_store.add([node("a", [1.0, 0.0]), node("b", [bad, 0.0])])

    assert len(vector_store.store) == 0
    assert vector_store.store.embedder.pending  # the next write still chooses the dimension


# -- Haystack -------------------------------------------------------------------------------


def test_a_haystack_store_without_an_embedder_takes_the_dimension_of_the_first_embeddings() -> None:
    document_store = PlaceboDocumentStore()
    document_store.write_documents(
        [
            Document(id="a", content="alpha", embedding=[1.0, 0.0, 0.0]),
            Document(id="b", content="beta"),  # embedded by the text side, at 3 dimensions
        ]
    )

    assert document_store.store.records().dimensions == 3
    assert (type(document_store.embedder), document_store.embedder.dimensions) == (
        FakeEmbedder,
        3,
    )
    found = document_store.embedding_retrieval([1.0, 0.0, 0.0], top_k=1)
    assert [d.id for d in found] == ["a"]
    # Serialised without an embedder: a store built from the dict takes its dimension again.
    assert document_store.to_dict()["init_parameters"]["embedder"] is None


def test_a_haystack_zero_embedding_scores_as_an_orthogonal_vector_and_is_filtered() -> None:
    document_store = PlaceboDocumentStore()
    document_store.write_documents(
        [
            Document(id="x", content="x", embedding=[1.0, 0.0], meta={"team": "a"}),
            Document(id="zero", content="zero", embedding=[0.0, 0.0], meta={"team": "b"}),
        ]
    )
    only_a = {"field": "meta.team", "operator": "==", "value": "a"}

    every = document_store.embedding_retrieval([1.0, 1.0], top_k=2)
    filtered = document_store.embedding_retrieval([1.0, 1.0], filters=only_a, top_k=2)

    assert [(d.id, d.score) for d in every] == [
        ("x", pytest.approx(1 / math.sqrt(2))),
        ("zero", 0.0),
    ]
    assert [d.id for d in filtered] == ["x"]
    assert [d.embedding for d in document_store.filter_documents()] == [[1.0, 0.0], [0.0, 0.0]]
