"""The LangChain adapters: clean by default, the store's quirks when asked, replay end to end."""

from __future__ import annotations

import socket
import subprocess
import sys
import textwrap
from typing import Any

import pytest

pytest.importorskip("langchain_core")

from langchain_core.documents import Document
from langchain_core.runnables import ConfigurableField, RunnableLambda
from langchain_core.vectorstores import InMemoryVectorStore

from placeborag import (
    FakeEmbedder,
    FakeVectorStore,
    GeometryScorer,
    PlaceboragTypeError,
    PlaceboragValueError,
    RetrievalTimeout,
    ScoringResponse,
    ScriptedScorer,
    UnrecordedText,
    load_demo_recording,
)
from placeborag.integrations import langchain as adapter
from placeborag.integrations.langchain import (
    PlaceboEmbeddings,
    PlaceboReranker,
    PlaceboRetriever,
    PlaceboVectorStore,
)

KNOWLEDGE_BASE = [
    ("en-1", "our refund policy allows returns within 30 days", "en"),
    ("en-2", "refund policy exceptions for sale items", "en"),
    ("en-3", "how to request a refund under the refund policy", "en"),
    ("en-4", "refund policy for digital purchases", "en"),
    ("hu-1", "pénzvisszatérítési szabályzat harminc napon belül", "hu"),
    ("hu-2", "hogyan kérek vissza pénzt vásárlás után", "hu"),
]
RECORDING = load_demo_recording()


def knowledge_base(**store_options: object) -> PlaceboVectorStore:
    vector_store = PlaceboVectorStore(PlaceboEmbeddings(), **store_options)
    vector_store.add_texts(
        [text for _, text, _ in KNOWLEDGE_BASE],
        [{"lang": lang} for _, _, lang in KNOWLEDGE_BASE],
        ids=[doc_id for doc_id, _, _ in KNOWLEDGE_BASE],
    )
    return vector_store


def ids(documents: list[Document]) -> list[str | None]:
    return [doc.id for doc in documents]


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=False
    )


# -- the module boundary -----------------------------------------------------------------------


def test_import_placeborag_loads_neither_adapter_nor_framework() -> None:
    result = run_python(
        """
        import sys, placeborag
        loaded = [m for m in sys.modules if m.split(".")[0] in ("langchain_core", "llama_index")
                  or m.startswith("placeborag.integrations")]
        print(loaded)
        """
    )
    assert result.stdout.strip() == "[]", result.stderr


def test_importing_the_adapter_without_langchain_names_the_extra() -> None:
    result = run_python(
        """
        import sys
        sys.modules["langchain_core"] = None
        try:
            import placeborag.integrations.langchain
        except ImportError as exc:
            print(exc)
        """
    )
    assert result.stdout.strip() == (
        "placeborag.integrations.langchain needs langchain-core, which is not installed; "
        "pip install 'placeborag[langchain]'"
    ), result.stderr


def test_all_lists_exactly_the_public_names() -> None:
    assert adapter.__all__ == [
        "PlaceboChatModel",
        "PlaceboEmbeddings",
        "PlaceboKnowledgeRetriever",
        "PlaceboReranker",
        "PlaceboRetriever",
        "PlaceboVectorStore",
    ]
    assert all(hasattr(adapter, name) for name in adapter.__all__)


@pytest.mark.filterwarnings("ignore:A test tried to use socket.socket")
def test_the_adapter_tests_cannot_open_a_network_socket() -> None:
    pytest_socket = pytest.importorskip("pytest_socket")

    with pytest.raises(pytest_socket.SocketBlockedError):
        socket.socket(socket.AF_INET, socket.SOCK_STREAM)


# -- embeddings ----------------------------------------------------------------------------------


def test_embeddings_default_to_a_fake_embedder_and_return_its_vectors() -> None:
    embeddings = PlaceboEmbeddings()

    assert embeddings.embed_query("refund policy") == FakeEmbedder().embed("refund policy")
    assert embeddings.embed_documents(["a", "b"]) == FakeEmbedder().embed_batch(["a", "b"])


def test_replay_embeddings_answer_documents_and_queries_from_their_own_namespace() -> None:
    replay = RECORDING.embedder()
    embeddings = PlaceboEmbeddings(replay)
    document, question = RECORDING.document_texts[0], RECORDING.query_texts[0]

    assert embeddings.embed_documents([document]) == [RECORDING.document_vectors[0].tolist()]
    assert embeddings.embed_query(question) == RECORDING.query_vectors[0].tolist()
    assert replay.calls == (("embed_batch", (document,)), ("embed_queries", (question,)))
    with pytest.raises(UnrecordedText, match="recorded as a document, not as a query"):
        embeddings.embed_query(document)


def test_an_embedder_without_embed_batch_is_refused() -> None:
    with pytest.raises(PlaceboragTypeError) as excinfo:
        PlaceboEmbeddings(object)

    assert excinfo.value.args[0].startswith("embedder=<class 'object'> must have an embed_batch")


# -- replay end to end ----------------------------------------------------------------------------


def replay_documents() -> list[Document]:
    return [
        Document(id=doc_id, page_content=text, metadata=dict(metadata))
        for doc_id, text, metadata in zip(
            RECORDING.document_ids, RECORDING.document_texts, RECORDING.document_metadata
        )
    ]


@pytest.mark.parametrize("store", ["InMemoryVectorStore", "PlaceboVectorStore"])
@pytest.mark.parametrize("question", range(len(RECORDING.query_texts)), ids=RECORDING.query_ids)
def test_replayed_vectors_reproduce_the_recorded_top_3_in_a_real_store(
    store: str, question: int
) -> None:
    embeddings = PlaceboEmbeddings(RECORDING.embedder())
    if store == "InMemoryVectorStore":
        vector_store = InMemoryVectorStore(embeddings)
    else:
        vector_store = PlaceboVectorStore(embeddings, profile="qdrant")
    vector_store.add_documents(replay_documents())

    found = vector_store.similarity_search_with_score(RECORDING.query_texts[question], k=3)

    expected = RECORDING.query_metadata[question]
    assert [doc.id for doc, _ in found] == expected["expected_top3"]
    assert [score for _, score in found] == pytest.approx(expected["expected_scores"], abs=1e-5)


# -- the vector store: clean by default -----------------------------------------------------------


def test_generated_ids_are_the_same_on_every_run_and_distinct_for_repeated_texts() -> None:
    first = PlaceboVectorStore().add_texts(["refund policy", "refund policy"])
    second = PlaceboVectorStore().add_texts(["refund policy", "refund policy"])

    assert first == second
    assert len(set(first)) == 2


def test_a_generated_id_never_overwrites_a_record_another_adapter_wrote() -> None:
    store = FakeVectorStore()
    written = PlaceboVectorStore(store=store).add_texts(["refund policy"])

    again = PlaceboVectorStore(store=store).add_texts(["refund policy"])

    assert again != written
    assert len(store) == 2


def test_documents_keep_their_ids_and_unnamed_ones_get_generated_ids() -> None:
    vector_store = PlaceboVectorStore()

    written = vector_store.add_documents(
        [Document(id="mine", page_content="refund policy"), Document(page_content="shipping")]
    )

    assert written[0] == "mine"
    assert ids(vector_store.get_by_ids([*written, "absent"])) == written


def test_metadata_the_store_cannot_filter_on_is_refused_before_anything_is_written() -> None:
    vector_store = PlaceboVectorStore()

    with pytest.raises(PlaceboragTypeError) as excinfo:
        vector_store.add_documents(
            [
                Document(page_content="a", metadata={"lang": "en"}),
                Document(page_content="b", metadata={"tags": {"x"}}),
            ]
        )

    assert excinfo.value.args == (
        "metadatas[1]['tags']={'x'} must be None, a str, int, finite float, bool, datetime, "
        "date, or a list or dict of those, not set",
    )
    assert len(vector_store.store) == 0


def test_a_where_dict_and_a_callable_filter_both_filter() -> None:
    vector_store = knowledge_base()

    by_where = vector_store.similarity_search("refund policy", k=5, filter={"lang": "hu"})
    by_callable = vector_store.similarity_search(
        "refund policy", k=5, filter=lambda doc: doc.metadata["lang"] == "hu"
    )

    assert ids(by_where) == ids(by_callable) == ["hu-2", "hu-1"]


@pytest.mark.parametrize(
    "search",
    [
        lambda store: store.similarity_search(None),
        lambda store: store.similarity_search_with_relevance_scores(None),
        lambda store: store.max_marginal_relevance_search(None),
        lambda store: PlaceboRetriever(store).invoke(None),
        lambda store: PlaceboRetriever(
            store, search_type="similarity_score_threshold", search_kwargs={"score_threshold": 0.5}
        ).invoke(None),
    ],
    ids=["similarity", "relevance", "mmr", "retriever", "retriever-threshold"],
)
def test_a_query_that_is_not_a_str_is_refused_naming_the_query(search: Any) -> None:
    vector_store = knowledge_base()

    with pytest.raises(PlaceboragTypeError) as excinfo:
        search(vector_store)

    assert excinfo.value.args == ("query=None must be a str, not NoneType",)
    assert len(vector_store.store.queries) == 0


def test_a_query_vector_that_is_not_a_vector_is_refused_naming_the_embedding() -> None:
    vector_store = knowledge_base()

    for search in (
        vector_store.similarity_search_by_vector,
        vector_store.max_marginal_relevance_search_by_vector,
    ):
        with pytest.raises(PlaceboragTypeError, match=r"^embedding=None must be a sequence"):
            search(None)  # type: ignore[operator]


def test_a_misspelled_search_option_is_refused_instead_of_ignored() -> None:
    with pytest.raises(PlaceboragTypeError) as excinfo:
        knowledge_base().similarity_search("refund policy", filters={"lang": "hu"})

    assert excinfo.value.args == (
        "PlaceboVectorStore.similarity_search got unexpected keyword argument(s) 'filters'; "
        "it accepts k, filter, context",
    )


@pytest.mark.parametrize(("profile", "higher_is_better"), [("chroma", False), ("qdrant", True)])
def test_scores_follow_the_profile_and_relevance_scores_are_the_cosine(
    profile: str, higher_is_better: bool
) -> None:
    vector_store = knowledge_base(profile=profile)

    scored = vector_store.similarity_search_with_score("refund policy", k=4)
    relevance = vector_store.similarity_search_with_relevance_scores("refund policy", k=4)

    scores = [score for _, score in scored]
    assert scores == sorted(scores, reverse=higher_is_better)
    cosines = knowledge_base(profile="qdrant").similarity_search_with_score("refund policy", k=4)
    assert [score for _, score in relevance] == pytest.approx([s for _, s in cosines])
    assert ids([doc for doc, _ in scored]) == ids([doc for doc, _ in cosines])


def test_searching_by_vector_ranks_like_searching_by_the_query_text() -> None:
    vector_store = knowledge_base()
    vector = vector_store.embeddings.embed_query("refund policy")

    by_vector = vector_store.similarity_search_by_vector(vector, k=3)

    assert ids(by_vector) == ids(vector_store.similarity_search("refund policy", k=3))


def test_delete_ignores_unknown_ids_and_no_ids_empties_the_store() -> None:
    vector_store = knowledge_base()

    assert vector_store.delete(["en-1", "nope"]) is True
    assert "en-1" not in vector_store.store
    vector_store.delete()
    assert len(vector_store.store) == 0


def test_delete_of_a_bare_str_is_refused_not_split_into_characters() -> None:
    vector_store = PlaceboVectorStore(PlaceboEmbeddings())
    vector_store.add_texts(["a", "b", "c"], ids=["1", "2", "12"])
    # It once deleted "1" and "2", the characters of "12", and kept "12".
    with pytest.raises(PlaceboragTypeError, match=r"^ids='12' is a single str"):
        vector_store.delete("12")
    assert sorted(vector_store.store.ids) == ["1", "12", "2"]


def test_from_texts_passes_store_options_through() -> None:
    vector_store = PlaceboVectorStore.from_texts(
        ["refund policy"], PlaceboEmbeddings(), ids=["r"], filter_mode="post"
    )

    assert vector_store.store.filter_mode == "post"
    assert ids(vector_store.similarity_search("refund")) == ["r"]


def test_a_configured_store_cannot_be_combined_with_store_options() -> None:
    with pytest.raises(PlaceboragTypeError) as excinfo:
        PlaceboVectorStore(store=FakeVectorStore(), recall=0.5)

    assert excinfo.value.args == (
        "store= cannot be combined with recall; configure the FakeVectorStore itself instead",
    )


def test_the_query_context_is_recorded_by_the_store() -> None:
    vector_store = knowledge_base()

    vector_store.similarity_search("refund policy", k=2, context={"tenant": "acme"})

    assert vector_store.store.last_query.context == {"tenant": "acme"}


# -- the vector store: quirks when asked ---------------------------------------------------------


def test_post_filtering_under_returns_through_a_langchain_retriever() -> None:
    search = {"k": 5, "filter": {"lang": "hu"}}

    pre = knowledge_base(filter_mode="pre").as_retriever(search_kwargs=search)
    post = knowledge_base(filter_mode="post").as_retriever(search_kwargs=search)

    assert len(pre.invoke("refund policy")) == 2
    assert len(post.invoke("refund policy")) == 1


def test_manual_visibility_hides_writes_until_refresh() -> None:
    vector_store = PlaceboVectorStore(visibility="manual")
    vector_store.add_texts(["our refund policy allows returns"], ids=["doc"])

    assert vector_store.similarity_search("refund policy") == []
    vector_store.store.refresh()
    assert ids(vector_store.similarity_search("refund policy")) == ["doc"]


def test_degraded_recall_returns_fewer_than_k() -> None:
    assert len(knowledge_base(recall=0.4).similarity_search("refund policy", k=5)) < 5


@pytest.mark.asyncio
async def test_an_injected_failure_reaches_the_async_caller() -> None:
    vector_store = knowledge_base()
    vector_store.store.fail_next_query()

    with pytest.raises(RetrievalTimeout):
        await vector_store.asimilarity_search("refund policy")
    assert len(await vector_store.asimilarity_search("refund policy", k=2)) == 2


# -- the retriever ---------------------------------------------------------------------------------


def test_the_retriever_takes_k_and_where_per_call() -> None:
    retriever = PlaceboRetriever(knowledge_base(), k=4)

    assert len(retriever.invoke("refund policy")) == 4
    assert len(retriever.invoke("refund policy", k=1)) == 1
    assert ids(retriever.invoke("refund policy", where={"lang": "hu"})) == ["hu-2", "hu-1"]


@pytest.mark.asyncio
async def test_the_async_retriever_takes_k_where_and_context_per_call() -> None:
    vector_store = knowledge_base()
    retriever = PlaceboRetriever(vector_store, k=4)

    assert len(await retriever.ainvoke("refund policy", k=1)) == 1
    hungarian = await retriever.ainvoke("refund policy", where={"lang": "hu"}, context={"u": 1})
    assert ids(hungarian) == ["hu-2", "hu-1"]
    assert vector_store.store.last_query.context == {"u": 1}
    batched = await retriever.abatch(["refund policy", "refund"], k=2)
    assert [len(found) for found in batched] == [2, 2]


def test_the_retriever_k_is_configurable_through_the_runnable_config() -> None:
    retriever = PlaceboRetriever(knowledge_base(), k=4).configurable_fields(
        k=ConfigurableField(id="k")
    )

    found = retriever.invoke("refund policy", config={"configurable": {"k": 2}})

    assert len(found) == 2


def test_without_k_the_retriever_uses_the_profile_default() -> None:
    store = knowledge_base().store

    PlaceboRetriever(store).invoke("refund policy")

    assert store.last_query.k == store.profile.default_k


def test_an_injected_timeout_propagates_through_the_retriever() -> None:
    store = knowledge_base().store
    store.fail_next_query(RetrievalTimeout("slow"))

    with pytest.raises(RetrievalTimeout, match=r"^slow$"):
        PlaceboRetriever(store).invoke("refund policy")
    assert store.last_query.text == "refund policy"


def test_the_retriever_refuses_something_that_is_not_a_store() -> None:
    with pytest.raises(PlaceboragTypeError, match=r"^store=\{\} must be a FakeVectorStore"):
        PlaceboRetriever({})


# -- the reranker -----------------------------------------------------------------------------------


def digital_first(text: str) -> float:
    return 0.9 if "digital" in text else 0.1


def compression_retriever(reranker: PlaceboReranker, k: int = 4):  # type: ignore[no-untyped-def]
    retrievers = pytest.importorskip("langchain_classic.retrievers")
    return retrievers.ContextualCompressionRetriever(
        base_compressor=reranker, base_retriever=PlaceboRetriever(knowledge_base(), k=k)
    )


def test_a_reranker_reorders_inside_contextual_compression() -> None:
    scorer = ScriptedScorer.scoring(digital_first)
    retriever = compression_retriever(PlaceboReranker(scorer, top_n=2))

    found = retriever.invoke("refund policy")

    assert ids(found) == ["en-4", "en-3"]
    assert [doc.metadata["relevance_score"] for doc in found] == [0.9, 0.1]
    assert scorer.request.query == "refund policy"
    assert len(scorer.request.documents) == 4


def test_a_reranker_that_times_out_once_recovers_under_retry() -> None:
    scorer = ScriptedScorer.failing(TimeoutError("rerank timed out")).then_scores(digital_first)
    retriever = compression_retriever(PlaceboReranker(scorer, top_n=1))

    with pytest.raises(TimeoutError, match="rerank timed out"):
        retriever.invoke("refund policy")
    scorer = ScriptedScorer.failing(TimeoutError("rerank timed out")).then_scores(digital_first)
    retrying = compression_retriever(PlaceboReranker(scorer, top_n=1)).with_retry(
        retry_if_exception_type=(TimeoutError,), stop_after_attempt=2, wait_exponential_jitter=False
    )

    assert ids(retrying.invoke("refund policy")) == ["en-4"]
    assert len(scorer.requests) == 2


def test_a_reranker_given_too_few_scores_fails_loudly() -> None:
    scorer = ScriptedScorer.responding(ScoringResponse(scores=(0.9,)))
    retriever = compression_retriever(PlaceboReranker(scorer))

    with pytest.raises(PlaceboragValueError) as excinfo:
        retriever.invoke("refund policy")

    assert excinfo.value.args == (
        "the scorer returned 1 score(s) for 4 document(s); "
        "a reranker needs exactly one score per document",
    )


def test_a_reranker_refuses_a_non_finite_score() -> None:
    scorer = ScriptedScorer.responding(ScoringResponse(scores=(0.9, float("nan"))))
    documents = [Document(page_content="a"), Document(page_content="b")]

    with pytest.raises(PlaceboragValueError, match=r"scores\[1\]=nan; a reranker needs finite"):
        PlaceboReranker(scorer).compress_documents(documents, "q")


def test_a_geometry_reranker_scores_by_cosine_in_a_core_only_chain() -> None:
    scorer = GeometryScorer()
    reranker = PlaceboReranker(scorer, top_n=None, score_key="cosine")
    retriever = PlaceboRetriever(knowledge_base(), k=3)
    chain = {"docs": retriever, "query": lambda q: q} | RunnableLambda(
        lambda x: reranker.compress_documents(x["docs"], x["query"])
    )

    found = chain.invoke("refund policy exceptions")

    expected = scorer.score_all("refund policy exceptions", [doc.page_content for doc in found])
    assert [doc.metadata["cosine"] for doc in found] == sorted(expected, reverse=True)


@pytest.mark.asyncio
async def test_the_async_reranker_uses_the_async_scorer_and_keeps_the_inputs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    scorer = ScriptedScorer.scoring(digital_first)
    reranker = PlaceboReranker(scorer, top_n=2)
    monkeypatch.setattr(scorer, "score", None)
    documents = [Document(page_content=text, id=i) for i, text, _ in KNOWLEDGE_BASE[:4]]

    found = await reranker.acompress_documents(documents, "refunds")

    assert ids(list(found)) == ["en-4", "en-1"]
    assert all("relevance_score" not in doc.metadata for doc in documents)


def test_no_documents_means_no_scoring_request() -> None:
    scorer = ScriptedScorer.scoring(0.5)

    assert PlaceboReranker(scorer).compress_documents([], "refunds") == []
    assert scorer.requests == ()


@pytest.mark.parametrize(
    ("top_n", "error", "message"),
    [
        (0, PlaceboragValueError, "top_n=0 must be >= 1 (or None for every document)"),
        ("2", PlaceboragTypeError, "top_n='2' must be an int or None, not str"),
    ],
)
def test_a_reranker_validates_top_n(top_n: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error) as excinfo:
        PlaceboReranker(ScriptedScorer.scoring(0.5), top_n=top_n)  # type: ignore[arg-type]

    assert excinfo.value.args == (message,)
