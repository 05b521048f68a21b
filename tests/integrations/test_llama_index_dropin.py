"""PlaceboLlamaVectorStore as a drop-in for SimpleVectorStore: one test per reported bug/refusal.

llama-index-core's sdist ships no tests, so these cover the public surface a user's tests
reach: VectorStoreIndex retrievers, the MetadataFilters operator set, node_ids, IndexNode and
ImageNode, query by embedding, MMR, get_nodes/delete_nodes by filter.
"""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest

pytest.importorskip("llama_index.core")

from llama_index.core import Document, StorageContext, VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.retrievers import RecursiveRetriever
from llama_index.core.schema import ImageNode, IndexNode, QueryBundle, TextNode
from llama_index.core.vector_stores import SimpleVectorStore
from llama_index.core.vector_stores.types import (
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryMode,
)

from placeborag import FakeEmbedder, FakeVectorStore, PlaceboragTypeError, PlaceboragValueError
from placeborag.integrations.llama_index import (
    PlaceboEmbedding,
    PlaceboLlamaVectorStore,
    metadata_filter_function,
)

ROWS = [
    ("a", "our refund policy allows returns within 30 days", {"lang": "en", "topic": "Refunds"}),
    ("b", "refund policy exceptions for sale items", {"lang": "en", "topic": "refunds, sales"}),
    ("c", "parcels ship in two days", {"lang": "en", "topic": "Shipping"}),
    ("d", "a csomagok két nap alatt érkeznek", {"lang": "hu", "topic": ""}),
    ("e", "reset your password from the login page", {"lang": "en", "topic": "accounts"}),
]


def nodes(rows: Any = ROWS) -> list[TextNode]:
    return [
        TextNode(
            id_=node_id,
            text=text,
            metadata=dict(metadata),
            excluded_embed_metadata_keys=list(metadata),
            excluded_llm_metadata_keys=list(metadata),
        )
        for node_id, text, metadata in rows
    ]


def index_over(vector_store: Any, items: Any = None, **options: Any) -> VectorStoreIndex:
    embedder = getattr(vector_store, "store", None)
    model = PlaceboEmbedding(embedder.embedder if embedder is not None else FakeEmbedder())
    return VectorStoreIndex(
        nodes() if items is None else items,
        storage_context=StorageContext.from_defaults(vector_store=vector_store),
        embed_model=model,
        **options,
    )


def retrieved(index: VectorStoreIndex, query: str = "refund policy", **options: Any) -> list[str]:
    return [item.node.node_id for item in index.as_retriever(**options).retrieve(query)]


def f(key: str, value: Any, operator: str = "==") -> MetadataFilter:
    return MetadataFilter(key=key, value=value, operator=FilterOperator(operator))


# -- bugs --------------------------------------------------------------------------------------


def test_node_ids_restrict_the_candidates() -> None:
    vector_store = PlaceboLlamaVectorStore()
    index_over(vector_store)

    result = vector_store.query(
        VectorStoreQuery(query_str="refund policy", similarity_top_k=5, node_ids=["c", "a"])
    )

    assert sorted(result.ids) == ["a", "c"]


def test_an_index_holding_index_nodes_is_queried_through_a_recursive_retriever() -> None:
    inner = index_over(PlaceboLlamaVectorStore()).as_retriever(similarity_top_k=1)
    outer = index_over(
        PlaceboLlamaVectorStore(),
        [IndexNode(id_="kb", text="refund policy and shipping questions", index_id="kb")],
    )

    retriever = RecursiveRetriever(
        "root",
        retriever_dict={"root": outer.as_retriever(similarity_top_k=1), "kb": inner},
    )
    found = retriever.retrieve("refund policy")

    assert [item.node.node_id for item in found] == retrieved_ids(inner.retrieve("refund policy"))


def retrieved_ids(found: list[Any]) -> list[str]:
    return [item.node.node_id for item in found]


def test_an_index_holding_an_image_node_is_queried_as_a_text_keeping_store_is() -> None:
    items = [*nodes(), ImageNode(id_="img", text="a photo of a returned parcel")]
    plain = index_over(PlaceboLlamaVectorStore(), items)
    every_node = index_over(PlaceboLlamaVectorStore(), items, store_nodes_override=True)

    # The index passes node_ids: with a store that keeps text, only its image and index nodes
    # are in its index struct (as with Qdrant or Weaviate), unless store_nodes_override=True.
    assert retrieved(plain, "returned parcel photo", similarity_top_k=6) == ["img"]
    assert sorted(retrieved(every_node, "returned parcel photo", similarity_top_k=6)) == [
        "a",
        "b",
        "c",
        "d",
        "e",
        "img",
    ]


def test_a_query_by_embedding_alone_ranks_like_the_query_text() -> None:
    vector_store = PlaceboLlamaVectorStore()
    index_over(vector_store)
    vector = PlaceboEmbedding(vector_store.store.embedder).get_query_embedding("refund policy")

    by_vector = vector_store.query(VectorStoreQuery(query_embedding=vector, similarity_top_k=3))
    by_text = vector_store.query(VectorStoreQuery(query_str="refund policy", similarity_top_k=3))

    assert by_vector.ids == by_text.ids
    assert by_vector.similarities == pytest.approx(by_text.similarities, abs=1e-6)


@pytest.mark.parametrize("mode", ["default", "mmr"])
def test_an_index_ranks_by_the_query_bundles_embedding_and_custom_strings_like_simple(
    mode: str,
) -> None:
    bundles = {
        "hyde": lambda model: QueryBundle(
            query_str="refund policy", custom_embedding_strs=["parcels ship in two days"]
        ),
        "embedding": lambda model: QueryBundle(
            query_str="refund policy", embedding=model.get_query_embedding("reset your password")
        ),
        "plain": lambda model: QueryBundle(query_str="refund policy"),
    }
    ours_store = PlaceboLlamaVectorStore()
    ours, theirs = index_over(ours_store), index_over(SimpleVectorStore())
    model = PlaceboEmbedding(ours_store.store.embedder)

    for name, bundle in bundles.items():
        found = {
            side: [
                item.node.node_id
                for item in index.as_retriever(
                    similarity_top_k=2, vector_store_query_mode=mode
                ).retrieve(bundle(model))
            ]
            for side, index in (("ours", ours), ("theirs", theirs))
        }
        assert found["ours"] == found["theirs"], name
        assert ours_store.store.last_query.text == "refund policy"  # the log names the query
        if name == "hyde":
            assert found["ours"][0] == "c"  # the custom string's document, not the query's


@pytest.mark.asyncio
async def test_the_async_retriever_ranks_by_the_custom_embedding_strings() -> None:
    index = index_over(PlaceboLlamaVectorStore())
    bundle = QueryBundle(query_str="refund policy", custom_embedding_strs=["parcels ship"])

    found = await index.as_retriever(similarity_top_k=1).aretrieve(bundle)

    assert [item.node.node_id for item in found] == ["c"]


@pytest.mark.parametrize("embedder", ["fake", "llama"])
def test_a_plain_index_query_ranks_exactly_as_the_store_ranks_its_text(embedder: str) -> None:
    if embedder == "fake":
        vector_store = PlaceboLlamaVectorStore(tie_order="insertion")
        index = index_over(vector_store)
    else:
        model = NgramEmbedding()
        vector_store = PlaceboLlamaVectorStore(embedder=model)
        index = VectorStoreIndex(
            nodes(),
            storage_context=StorageContext.from_defaults(vector_store=vector_store),
            embed_model=model,
        )
    store = vector_store.store

    for text in ("refund policy", "parcels", "two days", "password reset", "returns"):
        found = index.as_retriever(similarity_top_k=5).retrieve(text)
        expected = store.query(text, 5)
        assert [(n.node.node_id, n.score) for n in found] == [(m.id, m.score) for m in expected]


def test_a_node_embedding_of_other_dimensions_is_refused_naming_both() -> None:
    vector_store = PlaceboLlamaVectorStore(embedder=FakeEmbedder())

    with pytest.raises(PlaceboragValueError) as excinfo:
        VectorStoreIndex(
            nodes(),
            storage_context=StorageContext.from_defaults(vector_store=vector_store),
            embed_model=MockEmbedding(embed_dim=8),
        )

    assert excinfo.value.args[0].startswith(
        "node 'a' has a 8-dimensional embedding and the store holds 256-dimensional vectors"
    )
    assert len(vector_store.store) == 0


def test_a_query_embedding_of_other_dimensions_is_refused_naming_both() -> None:
    vector_store = PlaceboLlamaVectorStore(embedder=FakeEmbedder())
    index_over(vector_store)

    with pytest.raises(ValueError, match=r"^query_embedding has 8 dimensions and the store's"):
        vector_store.query(VectorStoreQuery(query_embedding=[1.0] * 8, similarity_top_k=2))


GIVEN = [("x", "north", [1.0, 0.0]), ("y", "east", [0.0, 1.0]), ("z", "between", [0.6, 0.8])]


def given_nodes() -> list[TextNode]:
    return [TextNode(id_=i, text=text, embedding=vector) for i, text, vector in GIVEN]


@pytest.mark.parametrize("query", [[0.8, 0.6], [0.1, 1.0], [-1.0, 0.2]])
def test_nodes_keep_their_own_embeddings_and_rank_by_the_query_embedding_like_simple(
    query: list[float],
) -> None:
    ours, theirs = PlaceboLlamaVectorStore(embedder=FakeEmbedder(dimensions=2)), SimpleVectorStore()
    for vector_store in (ours, theirs):
        vector_store.add(given_nodes())

    found = {
        name: vector_store.query(VectorStoreQuery(query_embedding=query, similarity_top_k=3))
        for name, vector_store in (("ours", ours), ("theirs", theirs))
    }

    assert found["ours"].ids == found["theirs"].ids
    assert found["ours"].similarities == pytest.approx(found["theirs"].similarities, abs=1e-6)


def test_only_a_node_without_an_embedding_is_embedded_by_the_store() -> None:
    embedder = FakeEmbedder(dimensions=2)
    vector_store = PlaceboLlamaVectorStore(embedder=embedder)
    plain = TextNode(id_="w", text="west")

    vector_store.add([*given_nodes()[:2], plain])

    records = vector_store.store.records()
    west = np.float32(embedder.embed_batch(["west"])[0]).tolist()
    assert records.vectors.tolist() == [[1.0, 0.0], [0.0, 1.0], west]


def test_an_index_with_placebo_embedding_ranks_in_the_fakes_geometry() -> None:
    vector_store = PlaceboLlamaVectorStore(tie_order="insertion")
    index = index_over(vector_store)  # embed_model=PlaceboEmbedding(vector_store.store.embedder)

    assert type(PlaceboEmbedding(vector_store.store.embedder).embedder) is FakeEmbedder
    for text in ("refund policy", "parcels"):
        found = index.as_retriever(similarity_top_k=3).retrieve(text)
        assert [n.node.node_id for n in found] == [m.id for m in vector_store.store.query(text, 3)]


def test_a_given_fake_store_keeps_vectors_in_its_own_space_and_refuses_others() -> None:
    store = FakeVectorStore(profile="qdrant")
    vector_store = PlaceboLlamaVectorStore(store=store)
    own = PlaceboEmbedding(store.embedder).get_text_embedding("parcels ship in two days")

    vector_store.add([TextNode(id_="c", text="parcels ship in two days", embedding=own)])
    with pytest.raises(PlaceboragTypeError, match=r"^node 'd' arrived with an embedding that"):
        vector_store.add([TextNode(id_="d", text="refunds", embedding=[1.0] + [0.0] * 255)])

    assert store.ids == ["c"]


ON_EXISTING = {
    # mode: (ids in insertion order, text of every record a query finds)
    "replace": (["f1", "y"], ["b", "c"]),
    "ignore": (["f1", "y"], ["a", "b"]),
    "duplicate": (["y", "f1"], ["a", "b", "c"]),
    "move_to_end": (["y", "f1"], ["b", "c"]),
}


@pytest.mark.parametrize("mode", [*ON_EXISTING, "error"])
def test_an_id_repeated_in_one_add_is_written_as_by_a_second_add(mode: str) -> None:
    def repeated() -> list[TextNode]:
        return [TextNode(id_=i, text=t) for i, t in (("f1", "a"), ("y", "b"), ("f1", "c"))]

    def split() -> list[list[TextNode]]:
        first, second, third = repeated()
        return [[first, second], [third]]

    one_call = PlaceboLlamaVectorStore(on_existing_id=mode)
    two_calls = PlaceboLlamaVectorStore(on_existing_id=mode)
    if mode == "error":
        with pytest.raises(PlaceboragValueError, match=r"^ids\[2\]='f1' repeats ids\[0\]"):
            one_call.add(repeated())
        assert len(one_call.store) == 0  # nothing written
        return
    one_call.add(repeated())
    for batch in split():
        two_calls.add(batch)

    ids, texts = ON_EXISTING[mode]
    for vector_store in (one_call, two_calls):
        found = vector_store.store.query("a b c", k=5)
        assert vector_store.store.ids == ids
        assert sorted(match.text for match in found) == texts


class CountingEmbedding(MockEmbedding):
    """LlamaIndex's MockEmbedding, counting the texts and queries it is asked to embed."""

    texts: list[str] = []
    queries: list[str] = []

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        self.texts.extend(texts)
        return super()._get_text_embeddings(texts)

    def _get_query_embedding(self, query: str) -> list[float]:
        self.queries.append(query)
        return super()._get_query_embedding(query)


def test_a_llama_index_model_as_the_store_embedder_is_called_once_per_node_and_query() -> None:
    model = CountingEmbedding(embed_dim=8, texts=[], queries=[])
    vector_store = PlaceboLlamaVectorStore(embedder=model)
    vector_store.add(nodes())

    vector_store.query(VectorStoreQuery(query_str="refund", similarity_top_k=3))
    vector_store.query(VectorStoreQuery(query_str="parcels", similarity_top_k=5))

    assert model.texts == [text for _, text, _ in ROWS]
    assert model.queries == ["refund", "parcels"]


class NgramEmbedding(BaseEmbedding):
    """A LlamaIndex model whose vectors tell texts apart (a FakeEmbedder's), not a wrapper."""

    def _get_text_embedding(self, text: str) -> list[float]:
        return [float(x) for x in FakeEmbedder(dimensions=16).embed(text)]

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._get_text_embedding(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_text_embedding(query)


@pytest.mark.parametrize(
    "model", [lambda: MockEmbedding(embed_dim=8), NgramEmbedding], ids=["mock", "ngram"]
)
def test_a_store_over_a_llama_index_model_copies_and_pickles_like_simple_vector_store(
    clone: Any, model: Any
) -> None:
    clone(SimpleVectorStore())  # what the drop-in promises: SimpleVectorStore copies and pickles
    vector_store = PlaceboLlamaVectorStore(embedder=model())
    vector_store.add(nodes())

    again = clone(vector_store)

    assert again.store.ids == vector_store.store.ids
    for text in ("refund policy", "parcels", "password"):
        query = VectorStoreQuery(query_str=text, similarity_top_k=5)
        mine, theirs = again.query(query), vector_store.query(query)
        assert (mine.ids, mine.similarities) == (theirs.ids, theirs.similarities)
    again.add([TextNode(text="a new text", id_="f")])  # the copy embeds with its own model
    assert "f" in again.store and "f" not in vector_store.store


# -- the MetadataFilters operator set ------------------------------------------------------------

FILTER_CASES = [
    (MetadataFilters(filters=[f("topic", "refund", "text_match")]), {"b"}),
    (MetadataFilters(filters=[f("topic", "refund", "text_match_insensitive")]), {"a", "b"}),
    (MetadataFilters(filters=[f("topic", "ship", "contains")]), set()),
    (MetadataFilters(filters=[f("topic", "Ship", "contains")]), {"c"}),
    (MetadataFilters(filters=[f("topic", ["sales", "acc"], "any")]), {"b", "e"}),
    (MetadataFilters(filters=[f("topic", ["refunds", "sales"], "all")]), {"b"}),
    (MetadataFilters(filters=[f("topic", None, "is_empty")]), {"d"}),
    (
        MetadataFilters(filters=[f("lang", "hu")], condition=FilterCondition.NOT),
        {"a", "b", "c", "e"},
    ),
    (
        MetadataFilters(
            filters=[f("lang", "en"), f("topic", "refund", "text_match_insensitive")],
            condition=FilterCondition.NOT,
        ),
        {"d"},
    ),
]


@pytest.mark.parametrize(("filters", "expected"), FILTER_CASES)
def test_every_operator_selects_what_simple_vector_store_selects(
    filters: MetadataFilters, expected: set[str]
) -> None:
    ours = index_over(PlaceboLlamaVectorStore())
    theirs = index_over(SimpleVectorStore())

    found = set(retrieved(ours, similarity_top_k=10, filters=filters))

    assert found == set(retrieved(theirs, similarity_top_k=10, filters=filters)) == expected


def test_nested_and_or_not_conditions_combine() -> None:
    english_refunds = MetadataFilters(
        filters=[f("lang", "en"), f("topic", "refund", "text_match_insensitive")]
    )
    not_shipping = MetadataFilters(filters=[f("topic", "Shipping")], condition=FilterCondition.NOT)
    filters = MetadataFilters(
        filters=[english_refunds, MetadataFilters(filters=[f("lang", "hu"), not_shipping])],
        condition=FilterCondition.OR,
    )

    found = retrieved(index_over(PlaceboLlamaVectorStore()), similarity_top_k=10, filters=filters)

    assert sorted(found) == ["a", "b", "d"]


def test_filters_with_a_where_form_still_reach_the_store_as_where() -> None:
    vector_store = PlaceboLlamaVectorStore()
    index = index_over(vector_store)

    retrieved(index, filters=MetadataFilters(filters=[f("lang", "hu")]))

    assert vector_store.store.last_query.where == {"lang": {"$eq": "hu"}}


def test_a_text_match_with_a_non_string_value_is_refused_before_any_record_is_read() -> None:
    with pytest.raises(ValueError, match=r"^operator 'text_match' needs a str value, not 3$"):
        metadata_filter_function(MetadataFilters(filters=[f("topic", 3, "text_match")]))


def test_get_nodes_and_delete_nodes_select_by_filter() -> None:
    vector_store = PlaceboLlamaVectorStore()
    index_over(vector_store)
    english = MetadataFilters(filters=[f("lang", "en")])
    refunds = MetadataFilters(filters=[f("topic", "refund", "text_match_insensitive")])

    assert [n.node_id for n in vector_store.get_nodes(filters=refunds)] == ["a", "b"]
    assert [n.node_id for n in vector_store.get_nodes(["e", "a", "d"], filters=english)] == [
        "e",
        "a",
    ]
    vector_store.delete_nodes(filters=refunds)
    assert vector_store.store.ids == ["c", "d", "e"]
    vector_store.delete_nodes(["c", "d"], filters=english)
    assert vector_store.store.ids == ["d", "e"]


# -- refusals now accepted -----------------------------------------------------------------------


def test_mmr_mode_picks_diverse_nodes_deterministically() -> None:
    vector_store = PlaceboLlamaVectorStore()
    index = index_over(vector_store)
    retriever = index.as_retriever(
        similarity_top_k=3,
        vector_store_query_mode=VectorStoreQueryMode.MMR,
        vector_store_kwargs={"mmr_threshold": 0.2},
    )

    first = [item.node.node_id for item in retriever.retrieve("refund policy")]
    again = [item.node.node_id for item in retriever.retrieve("refund policy")]

    assert first == again and len(first) == 3
    assert first[0] == retrieved(index, similarity_top_k=1)[0]


def test_similarity_top_k_zero_returns_nothing() -> None:
    vector_store = PlaceboLlamaVectorStore()
    index_over(vector_store)

    result = vector_store.query(VectorStoreQuery(query_str="refund", similarity_top_k=0))

    assert result.ids == [] and result.nodes == []


def test_user_metadata_ref_doc_id_is_kept_and_doc_ids_still_select_by_source() -> None:
    vector_store = PlaceboLlamaVectorStore()
    index = VectorStoreIndex.from_documents(
        [Document(id_="src", text="refund policy", metadata={"ref_doc_id": "mine"})],
        storage_context=StorageContext.from_defaults(vector_store=vector_store),
        embed_model=PlaceboEmbedding(vector_store.store.embedder),
    )

    (node,) = vector_store.get_nodes()
    by_user_key = MetadataFilters(filters=[f("ref_doc_id", "mine")])

    assert node.metadata["ref_doc_id"] == "mine" and node.ref_doc_id == "src"
    assert len(index.as_retriever(filters=by_user_key).retrieve("refund")) == 1
    assert vector_store.query(
        VectorStoreQuery(query_str="refund", similarity_top_k=2, doc_ids=["src"])
    ).ids == [node.node_id]


def test_store_nodes_override_fills_the_docstore_and_ref_doc_info() -> None:
    documents = [Document(id_="src", text="refund policy")]
    model = PlaceboEmbedding(FakeEmbedder())

    def build(**options: Any) -> VectorStoreIndex:
        return VectorStoreIndex.from_documents(
            documents,
            storage_context=StorageContext.from_defaults(vector_store=PlaceboLlamaVectorStore()),
            embed_model=model,
            **options,
        )

    plain = build()
    kept = build(store_nodes_override=True)

    assert plain.docstore.docs == {}
    with pytest.raises(NotImplementedError, match="not supported by ref_doc_info"):
        plain.ref_doc_info
    assert list(kept.ref_doc_info) == ["src"]
    assert len(kept.docstore.docs) == 1


def test_a_pickled_store_keeps_its_records() -> None:
    vector_store = PlaceboLlamaVectorStore()
    index_over(vector_store)

    again = pickle.loads(pickle.dumps(vector_store))

    assert again.store.ids == vector_store.store.ids


def test_list_metadata_is_stored_and_contains_any_all_test_membership() -> None:
    vector_store = PlaceboLlamaVectorStore()
    vector_store.add(
        nodes([("a", "refund", {"tags": ["refund", "policy"]}), ("b", "ship", {"tags": ["ship"]})])
    )

    def select(operator: str, value: Any) -> list[str]:
        filters = MetadataFilters(filters=[f("tags", value, operator)])
        return [n.node_id for n in vector_store.get_nodes(filters=filters)]

    assert select("contains", "policy") == ["a"]
    assert select("any", ["ship", "x"]) == ["b"]
    assert select("all", ["refund", "policy"]) == ["a"]


def test_a_node_arriving_with_its_embedding_is_stored_with_it_over_a_llama_index_model() -> None:
    model = CountingEmbedding(embed_dim=8, texts=[], queries=[])
    vector_store = PlaceboLlamaVectorStore(embedder=model)
    own = [0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    given, plain = nodes()[:2]
    given.embedding = own

    vector_store.add([given, plain])

    records = vector_store.store.records()
    assert records.vectors[records.position("a")].tolist() == own
    assert model.texts == [ROWS[1][1]]  # only the node without an embedding was embedded


def test_an_index_over_a_llama_index_model_embeds_each_node_once() -> None:
    model = CountingEmbedding(embed_dim=8, texts=[], queries=[])
    vector_store = PlaceboLlamaVectorStore(embedder=model)

    VectorStoreIndex(
        nodes(),
        storage_context=StorageContext.from_defaults(vector_store=vector_store),
        embed_model=model,
    )

    assert sorted(model.texts) == sorted(text for _, text, _ in ROWS)


def test_get_nodes_filters_with_the_stores_filter_semantics() -> None:
    """A bound against a stored string skips the record under engine semantics and raises under
    strict ones, in get_nodes as in a query, whatever the profile."""
    from placeborag import FilterTypeError

    bound = MetadataFilters(filters=[f("n", 4, ">")])
    for semantics in ("engine", "strict"):
        vector_store = PlaceboLlamaVectorStore(profile="lancedb", filter_semantics=semantics)
        vector_store.add(
            [
                TextNode(id_="num", text="refund policy", metadata={"n": 7}),
                TextNode(id_="str", text="refund rules", metadata={"n": "seven"}),
            ]
        )
        if semantics == "engine":
            assert [n.node_id for n in vector_store.get_nodes(filters=bound)] == ["num"]
        else:
            with pytest.raises(FilterTypeError, match="cannot compare"):
                vector_store.get_nodes(filters=bound)


@pytest.mark.parametrize(
    ("profile", "semantics", "selected"),
    [
        ("qdrant", "engine", ([], ["a", "b"])),  # the empty set, as Qdrant's MatchAny([])
        ("pgvector", "engine", ([], ["a", "b"])),
        ("qdrant", "strict", "error"),
        ("chroma", "engine", "error"),  # Chroma refuses an empty list
    ],
)
def test_get_nodes_reads_an_empty_in_as_the_stores_engine_does(profile, semantics, selected):
    # Issue 23: get_nodes/delete_nodes filter with the store's rules, an empty list included.
    from placeborag import FilterError

    vector_store = PlaceboLlamaVectorStore(profile=profile, filter_semantics=semantics)
    vector_store.add(
        [
            TextNode(id_="a", text="refund policy", metadata={"tenant": "acme"}),
            TextNode(id_="b", text="refund rules"),
        ]
    )

    def select(operator: str) -> list[str]:
        filters = MetadataFilters(filters=[f("tenant", [], operator)])
        return [n.node_id for n in vector_store.get_nodes(filters=filters)]

    if selected == "error":
        for operator in ("in", "nin"):
            with pytest.raises(FilterError, match="needs a non-empty list, got an empty one"):
                select(operator)
    else:
        assert (select("in"), select("nin")) == selected
