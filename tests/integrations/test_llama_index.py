"""The LlamaIndex adapters: a real VectorStoreIndex over the fake store, replay, reranking."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import textwrap
from typing import Any

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core import Document, StorageContext, VectorStoreIndex
from llama_index.core.llms import MockLLM
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from llama_index.core.vector_stores.types import (
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryMode,
)

from placeborag import (
    FakeEmbedder,
    FakeVectorStore,
    FilterError,
    GeometryScorer,
    PlaceboragTypeError,
    PlaceboragValueError,
    RetrievalTimeout,
    ScoringResponse,
    ScriptedScorer,
    load_demo_recording,
)
from placeborag.integrations import llama_index as adapter
from placeborag.integrations.llama_index import (
    PlaceboEmbedding,
    PlaceboLlamaVectorStore,
    PlaceboNodePostprocessor,
    metadata_filters_to_where,
)

RECORDING = load_demo_recording()
KNOWLEDGE_BASE = [
    ("en-1", "our refund policy allows returns within 30 days", {"lang": "en", "year": 2025}),
    ("en-2", "refund policy exceptions for sale items", {"lang": "en", "year": 2023}),
    ("en-3", "how to request a refund under the refund policy", {"lang": "en", "year": 2024}),
    ("en-4", "refund policy for digital purchases", {"lang": "en", "year": 2025}),
    ("hu-1", "pénzvisszatérítési szabályzat harminc napon belül", {"lang": "hu", "year": 2025}),
    ("hu-2", "hogyan kérek vissza pénzt vásárlás után", {"lang": "hu", "year": 2024}),
]


def text_nodes(rows: Any) -> list[TextNode]:
    # Metadata stays out of the embedded text, so each node embeds exactly its recorded text.
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


def index_over(
    vector_store: PlaceboLlamaVectorStore, rows: Any = KNOWLEDGE_BASE
) -> VectorStoreIndex:
    return VectorStoreIndex(
        text_nodes(rows),
        storage_context=StorageContext.from_defaults(vector_store=vector_store),
        embed_model=PlaceboEmbedding(vector_store.store.embedder),
    )


def retrieved_ids(found: list[NodeWithScore]) -> list[str]:
    return [item.node.node_id for item in found]


def where_of(*filters: Any, condition: str = "and") -> dict[str, Any] | None:
    return metadata_filters_to_where(
        MetadataFilters(filters=list(filters), condition=FilterCondition(condition))
    )


def eq(key: str, value: Any, operator: FilterOperator = FilterOperator.EQ) -> MetadataFilter:
    return MetadataFilter(key=key, value=value, operator=operator)


# -- the module boundary -----------------------------------------------------------------------


def test_importing_the_adapter_without_llama_index_names_the_extra() -> None:
    code = """
        import sys
        sys.modules["llama_index"] = None
        try:
            import placeborag.integrations.llama_index
        except ImportError as exc:
            print(exc)
    """
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=False
    )

    assert result.stdout.strip() == (
        "placeborag.integrations.llama_index needs llama-index-core, which is not installed; "
        "pip install 'placeborag[llamaindex]'"
    ), result.stderr


def test_all_lists_exactly_the_public_names() -> None:
    assert adapter.__all__ == [
        "PlaceboEmbedding",
        "PlaceboFunctionCallingLLM",
        "PlaceboLlamaKnowledgeRetriever",
        "PlaceboLlamaVectorStore",
        "PlaceboNodePostprocessor",
        "metadata_filter_function",
        "metadata_filters_to_where",
    ]
    assert all(hasattr(adapter, name) for name in adapter.__all__)


# -- the embedding model ---------------------------------------------------------------------------


def test_the_embedding_model_answers_queries_and_texts_from_their_own_namespaces() -> None:
    replay = RECORDING.embedder()
    model = PlaceboEmbedding(replay)
    documents = list(RECORDING.document_texts[:2])

    assert model.model_name == RECORDING.model
    assert (
        model.get_query_embedding(RECORDING.query_texts[0]) == RECORDING.query_vectors[0].tolist()
    )
    assert model.get_text_embedding_batch(documents) == RECORDING.document_vectors[:2].tolist()
    assert model.get_text_embedding(documents[0]) == RECORDING.document_vectors[0].tolist()
    assert [method for method, _ in replay.calls] == ["embed_queries", "embed_batch", "embed_batch"]


@pytest.mark.asyncio
async def test_the_async_hooks_give_the_sync_answers() -> None:
    model = PlaceboEmbedding()

    assert await model.aget_query_embedding("refunds") == model.get_query_embedding("refunds")
    assert await model.aget_text_embedding_batch(["a", "b"]) == model.get_text_embedding_batch(
        ["a", "b"]
    )
    assert model.get_text_embedding("a") == FakeEmbedder().embed("a")


# -- replay end to end -------------------------------------------------------------------------------


def replay_rows() -> list[tuple[str, str, Any]]:
    return list(zip(RECORDING.document_ids, RECORDING.document_texts, RECORDING.document_metadata))


@pytest.mark.parametrize("store", ["SimpleVectorStore", "PlaceboLlamaVectorStore"])
@pytest.mark.parametrize("question", range(len(RECORDING.query_texts)), ids=RECORDING.query_ids)
def test_replayed_vectors_reproduce_the_recorded_top_3_in_a_real_index(
    store: str, question: int
) -> None:
    replay = RECORDING.embedder()
    if store == "SimpleVectorStore":
        index = VectorStoreIndex(text_nodes(replay_rows()), embed_model=PlaceboEmbedding(replay))
    else:
        index = index_over(PlaceboLlamaVectorStore(embedder=replay), replay_rows())

    found = index.as_retriever(similarity_top_k=3).retrieve(RECORDING.query_texts[question])

    expected = RECORDING.query_metadata[question]
    assert retrieved_ids(found) == expected["expected_top3"]
    assert [item.score for item in found] == pytest.approx(expected["expected_scores"], abs=1e-5)


# -- filters -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("operator", "value", "clause"),
    [
        (FilterOperator.EQ, "hu", {"$eq": "hu"}),
        (FilterOperator.NE, "hu", {"$ne": "hu"}),
        (FilterOperator.GT, 2024, {"$gt": 2024}),
        (FilterOperator.GTE, 2024, {"$gte": 2024}),
        (FilterOperator.LT, 2024, {"$lt": 2024}),
        (FilterOperator.LTE, 2024, {"$lte": 2024}),
        (FilterOperator.IN, ["hu", "de"], {"$in": ["hu", "de"]}),
        (FilterOperator.NIN, ["hu", "de"], {"$nin": ["hu", "de"]}),
    ],
)
def test_each_supported_operator_becomes_its_placeborag_operator(
    operator: FilterOperator, value: Any, clause: dict[str, Any]
) -> None:
    assert where_of(eq("k", value, operator)) == {"k": clause}


def test_conditions_and_nested_filters_become_and_or_trees() -> None:
    nested = MetadataFilters(
        filters=[eq("lang", "hu"), eq("year", 2025, FilterOperator.GTE)],
        condition=FilterCondition.OR,
    )

    assert where_of(eq("tier", "all"), nested) == {
        "$and": [
            {"tier": {"$eq": "all"}},
            {"$or": [{"lang": {"$eq": "hu"}}, {"year": {"$gte": 2025}}]},
        ]
    }
    assert metadata_filters_to_where(None) is None
    assert metadata_filters_to_where(MetadataFilters(filters=[])) is None


@pytest.mark.parametrize(
    "operator",
    [
        FilterOperator.TEXT_MATCH,
        FilterOperator.CONTAINS,
        FilterOperator.ANY,
        FilterOperator.IS_EMPTY,
    ],
)
def test_an_operator_without_a_where_form_is_refused_by_the_translation(
    operator: FilterOperator,
) -> None:
    with pytest.raises(FilterError) as excinfo:
        where_of(eq("lang", "hu", operator))

    assert excinfo.value.args == (
        f"operator {operator.value!r} on key 'lang' has no placeborag where equivalent; "
        "expected one of '==', '!=', '>', '>=', '<', '<=', 'in', 'nin' "
        "(PlaceboLlamaVectorStore evaluates the others itself)",
    )


def test_the_not_condition_is_refused_by_the_translation() -> None:
    with pytest.raises(FilterError) as excinfo:
        where_of(eq("lang", "hu"), condition="not")

    assert excinfo.value.args == (
        "condition 'not' has no placeborag where equivalent; expected one of 'and', 'or' "
        "(PlaceboLlamaVectorStore evaluates 'not' itself)",
    )


def test_filters_reach_the_store_through_a_real_retriever() -> None:
    vector_store = PlaceboLlamaVectorStore()
    filters = MetadataFilters(
        filters=[eq("lang", "hu"), eq("year", 2025, FilterOperator.GTE)],
        condition=FilterCondition.OR,
    )

    found = (
        index_over(vector_store)
        .as_retriever(similarity_top_k=6, filters=filters)
        .retrieve("refund policy")
    )

    assert sorted(retrieved_ids(found)) == ["en-1", "en-4", "hu-1", "hu-2"]
    assert vector_store.store.last_query.where == {
        "$or": [{"lang": {"$eq": "hu"}}, {"year": {"$gte": 2025}}]
    }


# -- the vector store ----------------------------------------------------------------------------------


def test_similarities_are_cosines_by_default_and_distances_under_the_chroma_profile() -> None:
    query = "refund policy"
    cosine = index_over(PlaceboLlamaVectorStore()).as_retriever(similarity_top_k=4).retrieve(query)
    chroma = index_over(PlaceboLlamaVectorStore(profile="chroma"))
    distance = chroma.as_retriever(similarity_top_k=4).retrieve(query)

    assert retrieved_ids(cosine) == retrieved_ids(distance)
    assert [item.score for item in distance] == pytest.approx([1 - item.score for item in cosine])
    assert [item.score for item in cosine] == sorted([item.score for item in cosine], reverse=True)


def test_nodes_come_back_whole_with_their_metadata_and_text() -> None:
    vector_store = PlaceboLlamaVectorStore()
    index_over(vector_store)

    (node,) = vector_store.get_nodes(["hu-1"])

    assert node.get_content() == KNOWLEDGE_BASE[4][1]
    assert node.metadata == {"lang": "hu", "year": 2025}
    assert [n.node_id for n in vector_store.get_nodes()] == [row[0] for row in KNOWLEDGE_BASE]


def test_deleting_a_source_document_deletes_its_nodes() -> None:
    embedder = FakeEmbedder()
    vector_store = PlaceboLlamaVectorStore(embedder=embedder)
    index = VectorStoreIndex.from_documents(
        [
            Document(id_="refunds", text=KNOWLEDGE_BASE[0][1]),
            Document(id_="hu", text=KNOWLEDGE_BASE[4][1]),
        ],
        storage_context=StorageContext.from_defaults(vector_store=vector_store),
        embed_model=PlaceboEmbedding(embedder),
    )

    index.delete_ref_doc("refunds")

    found = index.as_retriever(similarity_top_k=5).retrieve("refund policy")
    assert [item.node.ref_doc_id for item in found] == ["hu"]


def test_delete_nodes_and_clear_ignore_unknown_ids() -> None:
    vector_store = PlaceboLlamaVectorStore()
    index_over(vector_store)

    vector_store.delete_nodes(["en-1", "absent"])
    assert "en-1" not in vector_store.store
    vector_store.clear()
    assert len(vector_store.store) == 0


def test_metadata_the_store_cannot_filter_on_is_refused() -> None:
    vector_store = PlaceboLlamaVectorStore()

    with pytest.raises(PlaceboragTypeError, match=r"^metadatas\[0\]\['page'\]=\{1\} must be None"):
        vector_store.add([TextNode(id_="a", text="refunds", metadata={"page": {1}})])
    assert len(vector_store.store) == 0


@pytest.mark.parametrize(
    ("query", "error", "message"),
    [
        (
            VectorStoreQuery(similarity_top_k=2),
            PlaceboragValueError,
            "VectorStoreQuery has neither query_str nor query_embedding; give one",
        ),
        (
            VectorStoreQuery(query_str="refunds", mode=VectorStoreQueryMode.HYBRID),
            NotImplementedError,
            "PlaceboLlamaVectorStore supports the 'default' and 'mmr' query modes, not 'hybrid'; "
            "query with VectorStoreQueryMode.DEFAULT",
        ),
        (
            VectorStoreQuery(query_str="refunds", similarity_top_k=1, mode="svm"),
            NotImplementedError,
            "PlaceboLlamaVectorStore supports the 'default' and 'mmr' query modes, not 'svm'; "
            "query with VectorStoreQueryMode.DEFAULT",
        ),
        (
            VectorStoreQuery(query_str="refunds", mode="bm25"),
            PlaceboragValueError,
            "mode='bm25' must be a VectorStoreQueryMode or one of its values: 'default', "
            "'sparse', 'hybrid', 'text_search', 'semantic_hybrid', 'svm', 'logistic_regression', "
            "'linear_regression', 'mmr'",
        ),
        (
            VectorStoreQuery(query_str=5),
            PlaceboragTypeError,
            "query_str=5 must be a str or None, not int",
        ),
    ],
)
def test_a_query_the_store_cannot_answer_is_refused(
    query: VectorStoreQuery, error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as excinfo:
        PlaceboLlamaVectorStore().query(query)

    assert excinfo.value.args == (message,)


@pytest.mark.parametrize("mode", ["default", "mmr"])
def test_a_query_mode_given_as_its_str_value_works(mode: str) -> None:
    vector_store = PlaceboLlamaVectorStore()
    vector_store.add([TextNode(id_="a", text="refunds"), TextNode(id_="b", text="parcels")])

    found = vector_store.query(VectorStoreQuery(query_str="refunds", similarity_top_k=1, mode=mode))

    assert found.ids == ["a"]


@pytest.mark.parametrize(
    ("nodes", "message"),
    [
        (
            TextNode(id_="b", text="b"),
            r"^nodes=TextNode\(id_='b'.* is a single TextNode; pass a list",
        ),
        (["abc"], r"^nodes\[0\]='abc' must be a node \(a TextNode or another BaseNode\), not str$"),
        ("abc", r"^nodes='abc' must be a list of nodes, not str$"),
        ([TextNode(id_="b", text="b"), None], r"^nodes\[1\]=None must be a node"),
    ],
)
def test_add_refuses_anything_but_a_list_of_nodes_by_name(nodes: object, message: str) -> None:
    vector_store = PlaceboLlamaVectorStore()

    with pytest.raises(PlaceboragTypeError, match=message):
        vector_store.add(nodes)
    assert len(vector_store.store) == 0


def test_doc_ids_restrict_the_query_to_those_source_documents() -> None:
    vector_store = PlaceboLlamaVectorStore()
    vector_store.add(
        [
            TextNode(id_="a", text="refund policy", metadata={}),
            TextNode(id_="b", text="refund policy too", metadata={}),
        ]
    )

    result = vector_store.query(
        VectorStoreQuery(query_str="refund policy", similarity_top_k=2, doc_ids=["x"])
    )

    assert result.ids == []
    assert vector_store.store.last_query.where == {"_ref_doc_id": {"$in": ["x"]}}


def test_a_configured_store_is_used_as_given() -> None:
    store = FakeVectorStore(filter_mode="post")

    assert PlaceboLlamaVectorStore(store).client is store
    with pytest.raises(PlaceboragTypeError) as excinfo:
        PlaceboLlamaVectorStore(store, recall=0.5)
    assert excinfo.value.args == (
        "store= cannot be combined with recall; configure the FakeVectorStore itself instead",
    )


# -- quirks through a real index ----------------------------------------------------------------------


def test_post_filtering_under_returns_through_a_real_retriever() -> None:
    filters = MetadataFilters(filters=[eq("lang", "hu")])

    def retrieve(filter_mode: str) -> list[NodeWithScore]:
        index = index_over(PlaceboLlamaVectorStore(filter_mode=filter_mode))
        return index.as_retriever(similarity_top_k=5, filters=filters).retrieve("refund policy")

    assert len(retrieve("pre")) == 2
    assert len(retrieve("post")) == 1


def test_an_injected_timeout_propagates_through_a_query_engine() -> None:
    vector_store = PlaceboLlamaVectorStore()
    engine = index_over(vector_store).as_query_engine(llm=MockLLM(), similarity_top_k=2)
    vector_store.store.fail_next_query()

    with pytest.raises(RetrievalTimeout):
        engine.query("refund policy")
    assert len(engine.query("refund policy").source_nodes) == 2


def test_stale_reads_through_a_real_index() -> None:
    vector_store = PlaceboLlamaVectorStore(visibility="manual")
    retriever = index_over(vector_store).as_retriever(similarity_top_k=2)

    assert retriever.retrieve("refund policy") == []
    vector_store.store.refresh()
    assert len(retriever.retrieve("refund policy")) == 2


# -- the node postprocessor -----------------------------------------------------------------------------


def digital_first(text: str) -> float:
    return 0.9 if "digital" in text else 0.1


def engine_with(scorer: Any, top_n: int | None = 2):  # type: ignore[no-untyped-def]
    return index_over(PlaceboLlamaVectorStore()).as_query_engine(
        llm=MockLLM(),
        similarity_top_k=4,
        node_postprocessors=[PlaceboNodePostprocessor(scorer, top_n=top_n)],
    )


def test_the_postprocessor_reranks_inside_a_query_engine() -> None:
    scorer = ScriptedScorer.scoring(digital_first)

    response = engine_with(scorer).query("refund policy")

    assert [(n.node.node_id, n.score) for n in response.source_nodes] == [
        ("en-4", 0.9),
        ("en-3", 0.1),
    ]
    assert scorer.request.query == "refund policy"
    assert len(scorer.request.documents) == 4


def test_a_postprocessor_that_times_out_once_recovers_on_the_next_query() -> None:
    scorer = ScriptedScorer.failing(TimeoutError("rerank timed out")).then_scores(digital_first)
    engine = engine_with(scorer, top_n=1)

    with pytest.raises(TimeoutError, match="rerank timed out"):
        engine.query("refund policy")
    assert [n.node.node_id for n in engine.query("refund policy").source_nodes] == ["en-4"]


def test_a_postprocessor_given_too_few_scores_fails_loudly() -> None:
    scorer = ScriptedScorer.responding(ScoringResponse(scores=(0.9, 0.1)))

    with pytest.raises(PlaceboragValueError) as excinfo:
        engine_with(scorer).query("refund policy")

    assert excinfo.value.args == (
        "the scorer returned 2 score(s) for 4 document(s); "
        "a reranker needs exactly one score per document",
    )


@pytest.mark.asyncio
async def test_the_async_postprocessor_uses_the_async_scorer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    scorer = GeometryScorer()
    expected = scorer.score_all("refund policy exceptions", [row[1] for row in KNOWLEDGE_BASE])
    nodes = [NodeWithScore(node=node, score=0.0) for node in text_nodes(KNOWLEDGE_BASE)]
    postprocessor = PlaceboNodePostprocessor(scorer, top_n=None)
    monkeypatch.setattr(scorer, "score", None)

    found = await postprocessor.apostprocess_nodes(nodes, query_str="refund policy exceptions")

    assert [item.score for item in found] == sorted(expected, reverse=True)
    assert len(scorer.requests) == 2


def test_the_postprocessor_needs_a_query_and_skips_an_empty_list() -> None:
    scorer = ScriptedScorer.scoring(0.5)
    postprocessor = PlaceboNodePostprocessor(scorer)

    assert postprocessor.postprocess_nodes([], QueryBundle("refunds")) == []
    assert scorer.requests == ()
    with pytest.raises(PlaceboragValueError, match="needs the query"):
        postprocessor.postprocess_nodes([NodeWithScore(node=TextNode(text="a"))])


def test_an_installed_llama_index_too_old_for_the_adapter_is_named_with_its_version() -> None:
    # llama-index-core 0.10 has no TextBlock: the adapter's import fails on a missing name.
    code = """
        import llama_index.core.base.llms.types as types
        del types.TextBlock
        try:
            import placeborag.integrations.llama_index
        except ImportError as exc:
            print(exc)
    """
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=False
    )

    installed = importlib.metadata.version("llama-index-core")
    assert result.stdout.startswith(
        f"placeborag.integrations.llama_index cannot use llama-index-core {installed} "
        "(cannot import name 'TextBlock'"
    ), result.stderr
    assert "pip install -U 'placeborag[llamaindex]'" in result.stdout
