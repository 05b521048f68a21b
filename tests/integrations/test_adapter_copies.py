"""Every adapter survives copy.deepcopy and pickle as a working component of its own.

LangChain copies runnables (``with_config``), LlamaIndex copies settings, pytest parametrises
and process pools pickle. A copy answers as the original would at the moment it was taken and
keeps its own script, record and records from then on. A part that cannot be pickled (a lambda
given as a rule) makes pickle raise, naming it: LlamaIndex's components would otherwise drop it
with a log line and fail later.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from typing import Any

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("llama_index.core")
pytest.importorskip("haystack")

from haystack import Document as HaystackDocument
from langchain_core.documents import Document
from llama_index.core.llms import ChatMessage as LlamaMessage
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from llama_index.core.vector_stores.types import VectorStoreQuery

from placeborag import FakeEmbedder, FakeVectorStore
from placeborag._chat import ScriptedChatModel
from placeborag._knowledge import StubKnowledgeStore
from placeborag._scoring import GeometryScorer, ScriptedScorer
from placeborag.integrations import haystack as hs
from placeborag.integrations import langchain as lc
from placeborag.integrations import llama_index as li

TEXTS = ["our refund policy allows returns", "parcels ship in two days", "reset your password"]
IDS = ["refund", "ship", "password"]


def _store() -> FakeVectorStore:
    store = FakeVectorStore(profile="qdrant", embedder=FakeEmbedder(dimensions=32))
    store.upsert_many(IDS, TEXTS)
    return store


def _script() -> ScriptedChatModel:
    return ScriptedChatModel.answering("first").then_answers("second").then_answers("third")


def _langchain_store() -> tuple[Any, Callable[[Any], Any]]:
    vector_store = lc.PlaceboVectorStore(lc.PlaceboEmbeddings(FakeEmbedder(dimensions=32)))
    vector_store.add_texts(TEXTS, ids=IDS)

    def use(v: lc.PlaceboVectorStore) -> Any:
        v.add_texts(["a new refund note"])
        return [(d.id, s) for d, s in v.similarity_search_with_score("refund", k=4)]

    return vector_store, use


def _langchain_reranker() -> tuple[Any, Callable[[Any], Any]]:
    scorer = ScriptedScorer.scoring(0.5).then_scores(0.9).then_repeats()
    reranker = lc.PlaceboReranker(scorer, top_n=2)
    docs = [Document(page_content=t) for t in TEXTS]
    return reranker, lambda r: (
        [d.metadata["relevance_score"] for d in r.compress_documents(docs, "refund")],
        len(r.scorer.requests),
    )


def _llama_postprocessor() -> tuple[Any, Callable[[Any], Any]]:
    processor = li.PlaceboNodePostprocessor(GeometryScorer(FakeEmbedder(dimensions=32)), top_n=2)
    nodes = [NodeWithScore(node=TextNode(id_=i, text=t), score=0.0) for i, t in zip(IDS, TEXTS)]
    return processor, lambda p: (
        [n.node.node_id for n in p.postprocess_nodes(nodes, query_str="refund")],
        len(p.scorer.requests),
    )


def _llama_store() -> tuple[Any, Callable[[Any], Any]]:
    vector_store = li.PlaceboLlamaVectorStore(embedder=FakeEmbedder(dimensions=32))
    vector_store.add([TextNode(id_=i, text=t) for i, t in zip(IDS, TEXTS)])

    def use(v: li.PlaceboLlamaVectorStore) -> Any:
        v.add([TextNode(id_=f"n{len(v.store)}", text="a new refund note")])
        result = v.query(VectorStoreQuery(query_str="refund", similarity_top_k=4))
        return result.ids, result.similarities

    return vector_store, use


def _haystack_store() -> tuple[Any, Callable[[Any], Any]]:
    document_store = hs.PlaceboDocumentStore(embedder=FakeEmbedder(dimensions=32))
    document_store.write_documents([HaystackDocument(id=i, content=t) for i, t in zip(IDS, TEXTS)])
    embedder = hs.PlaceboTextEmbedder(document_store.embedder)

    def use(d: hs.PlaceboDocumentStore) -> Any:
        d.write_documents([HaystackDocument(content=f"a new refund note {d.count_documents()}")])
        found = d.embedding_retrieval(embedder.run("refund")["embedding"], top_k=4)
        return [(x.id, x.score) for x in found]

    return document_store, use


ADAPTERS: dict[str, Callable[[], tuple[Any, Callable[[Any], Any]]]] = {
    "langchain.PlaceboEmbeddings": lambda: (
        lc.PlaceboEmbeddings(FakeEmbedder(dimensions=16)),
        lambda e: e.embed_query("refund"),
    ),
    "langchain.PlaceboVectorStore": _langchain_store,
    "langchain.PlaceboRetriever": lambda: (
        lc.PlaceboRetriever(_store(), k=2),
        lambda r: [d.id for d in r.invoke("refund policy")],
    ),
    "langchain.PlaceboReranker": _langchain_reranker,
    "langchain.PlaceboChatModel": lambda: (
        lc.PlaceboChatModel(_script()),
        lambda m: (m.invoke("hello").content, len(m.model.requests)),
    ),
    "langchain.PlaceboKnowledgeRetriever": lambda: (
        lc.PlaceboKnowledgeRetriever(StubKnowledgeStore(backend=_store())),
        lambda r: ([d.id for d in r.invoke("refund")], r.store.queries),
    ),
    "llama_index.PlaceboEmbedding": lambda: (
        li.PlaceboEmbedding(FakeEmbedder(dimensions=16)),
        lambda e: e.get_query_embedding("refund"),
    ),
    "llama_index.PlaceboLlamaVectorStore": _llama_store,
    "llama_index.PlaceboNodePostprocessor": _llama_postprocessor,
    "llama_index.PlaceboFunctionCallingLLM": lambda: (
        li.PlaceboFunctionCallingLLM(_script()),
        lambda m: (
            m.chat([LlamaMessage(role="user", content="hello")]).message.content,
            len(m.model.requests),
        ),
    ),
    "llama_index.PlaceboLlamaKnowledgeRetriever": lambda: (
        li.PlaceboLlamaKnowledgeRetriever(StubKnowledgeStore(backend=_store())),
        lambda r: ([n.node.node_id for n in r.retrieve(QueryBundle("refund"))], r.store.queries),
    ),
    "haystack.PlaceboDocumentStore": _haystack_store,
    "haystack.PlaceboTextEmbedder": lambda: (
        hs.PlaceboTextEmbedder(FakeEmbedder(dimensions=16)),
        lambda e: e.run("refund")["embedding"],
    ),
    "haystack.PlaceboDocumentEmbedder": lambda: (
        hs.PlaceboDocumentEmbedder(FakeEmbedder(dimensions=16)),
        lambda e: e.run([HaystackDocument(content="refund")])["documents"][0].embedding,
    ),
    "haystack.PlaceboEmbeddingRetriever": lambda: (
        hs.PlaceboEmbeddingRetriever(_haystack_store()[0], top_k=2),
        lambda r: [
            d.id
            for d in r.run(
                hs.PlaceboTextEmbedder(FakeEmbedder(dimensions=32)).run("refund")["embedding"]
            )["documents"]
        ],
    ),
}


@pytest.mark.parametrize("name", sorted(ADAPTERS))
def test_a_copied_adapter_answers_as_the_original_would_and_keeps_its_own_record(
    name: str, clone: Callable[[Any], Any]
) -> None:
    original, use = ADAPTERS[name]()
    twin, _ = ADAPTERS[name]()
    assert use(original) == use(twin)

    copied = clone(original)

    assert type(copied) is type(original)
    second = use(twin)
    assert use(copied) == second
    assert use(original) == second


def test_every_public_adapter_class_has_a_round_trip_case() -> None:
    public = {
        f"{module.__name__.rsplit('.', 1)[-1]}.{name}"
        for module in (lc, li, hs)
        for name in module.__all__
        if isinstance(getattr(module, name), type)
        and not issubclass(getattr(module, name), Exception)
    }
    assert public == set(ADAPTERS)


@pytest.mark.parametrize(
    "build",
    [
        lambda rule: li.PlaceboFunctionCallingLLM(ScriptedChatModel.following(rule)),
        lambda rule: li.PlaceboNodePostprocessor(ScriptedScorer.scoring(rule)),
        lambda rule: li.PlaceboEmbedding(_LambdaEmbedder(rule)),
    ],
    ids=["llm", "postprocessor", "embedding"],
)
def test_a_llama_component_holding_a_lambda_refuses_to_pickle_instead_of_dropping_it(
    build: Callable[[Any], Any],
) -> None:
    component = build(lambda _: "x")

    with pytest.raises((pickle.PicklingError, AttributeError, TypeError), match=r"lambda"):
        pickle.dumps(component)


class _LambdaEmbedder:
    """A placeborag embedder holding a lambda: nothing a pickle can rebuild."""

    def __init__(self, rule: Any) -> None:
        self.rule = rule
        self.dimensions = 2

    def embed_batch(self, texts: list[str]) -> list[list[float]]:
        return [[1.0, 0.0] for _ in texts]
