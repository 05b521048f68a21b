"""``integration=`` against the frameworks' own integration packages, on the same operations.

The same operations run on ``llama-index-vector-stores-chroma`` over an in-process Chroma
(``EphemeralClient``, cosine space) and ``llama-index-vector-stores-qdrant`` over Qdrant's
local mode, and on the fake with ``integration="chroma"`` / ``"qdrant"``: what reaches the
engine of ``doc_ids`` and ``node_ids``, the scores the framework reports, ``!=`` on a node
without the key, a rewritten id, ``similarity_top_k=0``, a node id that is not a UUID, a zero
and a NaN embedding. Every answer is the same; the differences left are pinned below.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import pytest

pytest.importorskip("llama_index.core")
pytest.importorskip("llama_index.vector_stores.chroma")
pytest.importorskip("llama_index.vector_stores.qdrant")

import chromadb
import chromadb.errors
import llama_index.vector_stores.chroma as llama_chroma
import llama_index.vector_stores.qdrant as llama_qdrant
import qdrant_client
from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode
from llama_index.core.vector_stores.types import (
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
)

from placeborag import PlaceboragValueError
from placeborag.integrations.llama_index import PlaceboLlamaVectorStore

pytestmark = [
    pytest.mark.engines,
    # The Qdrant integration creates a payload index, which local mode says it ignores.
    pytest.mark.filterwarnings("ignore:Payload indexes have no effect:UserWarning"),
    # Chroma's relevance (1 - distance) is negative past a right angle: LangChain warns, on
    # the real store and the fake alike.
    pytest.mark.filterwarnings("ignore:Relevance scores must be between 0 and 1:UserWarning"),
]

_names = itertools.count()


def real_chroma() -> Any:
    client = chromadb.EphemeralClient()
    collection = client.create_collection(
        f"placebo-{next(_names)}", metadata={"hnsw:space": "cosine"}
    )
    return llama_chroma.ChromaVectorStore(chroma_collection=collection)


def real_qdrant() -> Any:
    client = qdrant_client.QdrantClient(location=":memory:")
    return llama_qdrant.QdrantVectorStore(client=client, collection_name="placebo")


REAL: dict[str, Callable[[], Any]] = {"chroma": real_chroma, "qdrant": real_qdrant}
IDS = [f"00000000-0000-0000-0000-00000000000{i}" for i in range(1, 7)]
ROWS = [
    (IDS[0], [1.0, 0.0], "d1", {"team": "a"}),
    (IDS[1], [0.6, 0.8], "d2", {"team": "b"}),
    (IDS[2], [0.0, 1.0], "d1", {}),
    (IDS[3], [0.0, 0.0], "d2", {"team": "a"}),  # a zero vector
    (IDS[4], [-0.8, 0.6], "d3", {"team": "b"}),
]


def nodes(rows: list[tuple[str, list[float], str, dict[str, Any]]]) -> list[TextNode]:
    return [
        TextNode(
            id_=node_id,
            text=f"text {node_id[-1]}",
            embedding=vector,
            metadata=dict(metadata),
            relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=doc)},
        )
        for node_id, vector, doc, metadata in rows
    ]


def answer(store: Any, **query: Any) -> Any:
    """What a query returns (ids and rounded scores), or the builtin type of its error."""
    try:
        result = store.query(VectorStoreQuery(query_embedding=[1.0, 0.0], **query))
    except (TypeError, ValueError) as exc:
        return TypeError if isinstance(exc, TypeError) else ValueError
    return [(i, round(s, 5)) for i, s in zip(result.ids, result.similarities)]


def written(store: Any, rows: Any) -> str:
    try:
        store.add(nodes(rows))
    except Exception:  # each engine raises its own class; both refuse before writing
        return "refused"
    return "written"


NOT_TEAM_A = MetadataFilters(
    filters=[MetadataFilter(key="team", value="a", operator=FilterOperator.NE)]
)


def operations(store: Any) -> list[Any]:
    """The same sequence on either store; the outcome of each step."""
    out: list[Any] = [written(store, ROWS)]
    out.append(answer(store, similarity_top_k=5))
    out.append(answer(store, similarity_top_k=5, doc_ids=["d1"]))
    out.append(answer(store, similarity_top_k=5, node_ids=[IDS[1], IDS[4]]))
    out.append(answer(store, similarity_top_k=5, filters=NOT_TEAM_A))
    out.append(answer(store, similarity_top_k=2))
    out.append(answer(store, similarity_top_k=0))
    # A rewrite (no exact tie after it: neither engine has a rule for the order of ties).
    out.append(written(store, [(IDS[0], [0.28, 0.96], "d9", {"team": "z"})]))
    out.append(answer(store, similarity_top_k=1))
    out.append(written(store, [(IDS[5], [math.nan, 0.0], "d1", {})]))
    out.append(answer(store, similarity_top_k=5))
    return out


@pytest.mark.parametrize("integration", ["chroma", "qdrant"])
def test_the_fake_answers_every_operation_as_the_real_integration(integration: str) -> None:
    real = operations(REAL[integration]())
    fake = operations(PlaceboLlamaVectorStore(integration=integration))

    assert fake == real


def test_chromas_llamaindex_integration_ignores_doc_ids_and_node_ids_and_so_does_the_model() -> (
    None
):
    real, fake = real_chroma(), PlaceboLlamaVectorStore(integration="chroma")
    for store in (real, fake):
        store.add(nodes(ROWS))
    every = answer(real, similarity_top_k=5)

    for restriction in ({"doc_ids": ["d1"]}, {"node_ids": [IDS[1]]}):
        assert answer(real, similarity_top_k=5, **restriction) == every
        assert answer(fake, similarity_top_k=5, **restriction) == every
    # The adapter's own behaviour (no integration=) restricts by them: a test that needs a
    # document filter to be honoured must model the integration, or it passes on a fake that
    # honours what the real integration drops.
    own = PlaceboLlamaVectorStore(profile="chroma")
    own.add(nodes(ROWS))
    assert [i for i, _ in answer(own, similarity_top_k=5, doc_ids=["d1"])] == [IDS[0], IDS[2]]


def test_qdrants_llamaindex_integration_refuses_a_node_id_that_is_not_a_uuid() -> None:
    real, fake = real_qdrant(), PlaceboLlamaVectorStore(integration="qdrant")

    assert written(real, [("plain", [1.0, 0.0], "d1", {})]) == "refused"
    with pytest.raises(PlaceboragValueError, match="node id 'plain' is not a valid UUID"):
        fake.add(nodes([("plain", [1.0, 0.0], "d1", {})]))
    assert len(fake.store) == 0


# -- the differences left, pinned -----------------------------------------------------------


def test_difference_chroma_refuses_a_nan_embedding_with_its_own_error_class() -> None:
    real, fake = real_chroma(), PlaceboLlamaVectorStore(integration="chroma")

    with pytest.raises(chromadb.errors.InvalidArgumentError):
        real.add(nodes([(IDS[0], [math.nan, 0.0], "d1", {})]))
    with pytest.raises(PlaceboragValueError):  # a ValueError, as the other engines raise
        fake.add(nodes([(IDS[0], [math.nan, 0.0], "d1", {})]))


def test_difference_chroma_l2_scores_a_zero_vector_from_the_raw_vectors() -> None:
    # Chroma's l2 space measures raw vectors: a zero vector is at squared distance |q|^2 = 1
    # from a unit query. The fake ranks unit vectors, so under l2 it reports 2 - 2 cos = 2.
    collection = chromadb.EphemeralClient().create_collection(
        f"placebo-{next(_names)}", metadata={"hnsw:space": "l2"}
    )
    real = llama_chroma.ChromaVectorStore(chroma_collection=collection)
    fake = PlaceboLlamaVectorStore(integration="chroma", metric="l2")
    for store in (real, fake):
        store.add(nodes([ROWS[3]]))

    assert answer(real, similarity_top_k=1) == [(IDS[3], round(math.exp(-1.0), 5))]
    assert answer(fake, similarity_top_k=1) == [(IDS[3], round(math.exp(-2.0), 5))]


def test_an_integration_of_another_engine_than_the_profile_is_refused() -> None:
    with pytest.raises(PlaceboragValueError, match="runs on the 'chroma' profile, not 'qdrant'"):
        PlaceboLlamaVectorStore(integration="chroma", profile="qdrant")
    with pytest.raises(PlaceboragValueError, match=r"^integration='weaviate' must be one of"):
        PlaceboLlamaVectorStore(integration="weaviate")


# -- LangChain: langchain-chroma and langchain-qdrant ------------------------------------------

pytest.importorskip("langchain_chroma")
pytest.importorskip("langchain_qdrant")

from langchain_chroma import Chroma  # noqa: E402 - after the skips above
from langchain_core.embeddings import Embeddings  # noqa: E402
from langchain_qdrant import QdrantVectorStore  # noqa: E402
from qdrant_client.models import Distance, VectorParams  # noqa: E402

from placeborag.integrations.langchain import PlaceboVectorStore  # noqa: E402

TEXTS = {
    "a": [1.0, 0.0],
    "b": [0.6, 0.8],
    "c": [0.0, 1.0],
    "e": [-0.8, 0.6],
    "r": [0.28, 0.96],
    "q": [1.0, 0.0],
}


class TextVectors(Embeddings):
    """Fixed vectors by text: both sides rank the same vectors (no model)."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [TEXTS.get(text, [1.0, 1.0]) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return TEXTS[text]


def langchain_chroma(space: str) -> Any:
    client = chromadb.EphemeralClient()
    name = f"placebo-{next(_names)}"
    return Chroma(name, TextVectors(), client=client, collection_metadata={"hnsw:space": space})


def langchain_qdrant() -> Any:
    client = qdrant_client.QdrantClient(location=":memory:")
    client.create_collection("placebo", VectorParams(size=2, distance=Distance.COSINE))
    return QdrantVectorStore(client=client, collection_name="placebo", embedding=TextVectors())


def outcome(call: Callable[[], Any]) -> Any:
    try:
        found = call()
    except (TypeError, ValueError) as exc:
        return TypeError if isinstance(exc, TypeError) else ValueError
    return [(d.page_content, dict(d.metadata), round(s, 5)) for d, s in found]


def langchain_operations(store: Any) -> list[Any]:
    metadatas = [{"team": "a"}, {"team": "b"}, {"x": 1}, {"team": "b"}]
    out: list[Any] = [store.add_texts(["a", "b", "c", "e"], metadatas, ids=IDS[:4])]
    out.append(outcome(lambda: store.similarity_search_with_score("q")))  # the default k
    out.append(outcome(lambda: store.similarity_search_with_relevance_scores("q", k=4)))
    out.append(outcome(lambda: store.similarity_search_with_score("q", k=0)))
    store.add_texts(["r"], [{"team": "z"}], ids=[IDS[0]])  # a rewrite: both upsert
    out.append(outcome(lambda: store.similarity_search_with_score("q", k=2)))
    out.append(outcome(lambda: store.add_texts(["a"], ids=["plain"]) and []))
    return out


@pytest.mark.parametrize(
    ("integration", "options", "real"),
    [
        ("chroma", {}, lambda: langchain_chroma("cosine")),
        ("chroma", {"metric": "l2"}, lambda: langchain_chroma("l2")),
        ("qdrant", {}, langchain_qdrant),
    ],
    ids=["chroma-cosine", "chroma-l2", "qdrant"],
)
def test_the_langchain_fake_answers_as_the_real_integration(
    integration: str, options: dict[str, Any], real: Callable[[], Any]
) -> None:
    fake = PlaceboVectorStore(TextVectors(), integration=integration, **options)

    assert langchain_operations(fake) == langchain_operations(real())


def test_the_adapters_own_relevance_differs_from_langchain_qdrants() -> None:
    # langchain-qdrant reports (1 + cos) / 2 as relevance; the adapter's own (no integration=)
    # reports the cosine, so a threshold tuned on the fake would move on the real store.
    own = PlaceboVectorStore(TextVectors(), profile="qdrant")
    own.add_texts(["b"], ids=[IDS[1]])
    real = langchain_qdrant()
    real.add_texts(["b"], ids=[IDS[1]])

    assert own.similarity_search_with_relevance_scores("q", k=1)[0][1] == pytest.approx(0.6)
    assert real.similarity_search_with_relevance_scores("q", k=1)[0][1] == pytest.approx(0.8)


def test_difference_a_zero_vector_from_the_embedding_model_is_refused() -> None:
    # Chroma and Qdrant take it (cosine distance 1, score 0); a FakeVectorStore over a model
    # refuses a zero or non-finite vector from it, naming the text.
    class Zero(TextVectors):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [[0.0, 0.0] for _ in texts]

    real = Chroma("placebo-zero", Zero(), client=chromadb.EphemeralClient())
    real.add_texts(["z"], ids=[IDS[3]])
    with pytest.raises(PlaceboragValueError, match="zero or non-finite vector for 'z'"):
        PlaceboVectorStore(Zero(), integration="chroma").add_texts(["z"], ids=[IDS[3]])


# -- Haystack: chroma-haystack and qdrant-haystack -------------------------------------------

pytest.importorskip("haystack")
pytest.importorskip("haystack_integrations.document_stores.chroma")
pytest.importorskip("haystack_integrations.document_stores.qdrant")

from haystack import Document  # noqa: E402 - after the skips above
from haystack.document_stores.errors import DuplicateDocumentError  # noqa: E402
from haystack.document_stores.types import DuplicatePolicy  # noqa: E402
from haystack_integrations.components.retrievers.chroma import (  # noqa: E402
    ChromaEmbeddingRetriever,
)
from haystack_integrations.components.retrievers.qdrant import (  # noqa: E402
    QdrantEmbeddingRetriever,
)
from haystack_integrations.document_stores.chroma import ChromaDocumentStore  # noqa: E402
from haystack_integrations.document_stores.qdrant import QdrantDocumentStore  # noqa: E402

from placeborag.integrations.haystack import (  # noqa: E402
    PlaceboDocumentStore,
    PlaceboEmbeddingRetriever,
)


def documents(rows: list[tuple[str, list[float], str, dict[str, Any]]]) -> list[Document]:
    return [
        Document(id=i, content=f"text {i[-1]}", embedding=v, meta=dict(m)) for i, v, _, m in rows
    ]


def haystack_chroma() -> tuple[Any, Callable[..., Any]]:
    store = ChromaDocumentStore(
        collection_name=f"placebo-{next(_names)}", distance_function="cosine"
    )
    return store, lambda **kw: ChromaEmbeddingRetriever(store).run(**kw)


def haystack_qdrant() -> tuple[Any, Callable[..., Any]]:
    store = QdrantDocumentStore(location=":memory:", embedding_dim=2, recreate_index=True)
    return store, lambda **kw: QdrantEmbeddingRetriever(store).run(**kw)


def haystack_fake(integration: str) -> tuple[Any, Callable[..., Any]]:
    store = PlaceboDocumentStore(integration=integration)
    return store, lambda **kw: PlaceboEmbeddingRetriever(store).run(**kw)


def retrieved(run: Callable[..., Any], **options: Any) -> Any:
    try:
        found = run(query_embedding=[1.0, 0.0], **options)["documents"]
    except (TypeError, ValueError) as exc:
        return TypeError if isinstance(exc, TypeError) else ValueError
    return [(d.id, round(d.score, 5)) for d in found]


def haystack_operations(store: Any, run: Callable[..., Any], scaled: bool) -> list[Any]:
    rewrite = documents([(IDS[0], [0.28, 0.96], "", {"team": "z"})])
    out: list[Any] = [store.write_documents(documents(ROWS))]
    out.append(retrieved(run, top_k=5))
    if scaled:
        out.append(retrieved(run, top_k=5, scale_score=True))
    not_a = {"field": "meta.team", "operator": "!=", "value": "a"}
    out.append(retrieved(run, top_k=5, filters=not_a))  # both keep the node without the key
    out.append(retrieved(run, top_k=0))
    try:
        store.write_documents(rewrite)  # DuplicatePolicy.NONE: both fail on a stored id
        out.append("written")
    except DuplicateDocumentError:
        out.append("refused")
    fresh = documents([(IDS[1], [0.28, 0.96], "", {}), (IDS[5], [0.5, 0.5], "", {})])
    out.append(store.write_documents(fresh, DuplicatePolicy.SKIP))
    out.append(store.write_documents(rewrite, DuplicatePolicy.OVERWRITE))
    out.append(retrieved(run, top_k=6))
    out.append(store.count_documents())
    return out


@pytest.mark.parametrize(
    ("integration", "real", "scaled"),
    [("chroma", haystack_chroma, False), ("qdrant", haystack_qdrant, True)],
)
def test_the_haystack_fake_answers_as_the_real_integration(
    integration: str, real: Callable[[], Any], scaled: bool
) -> None:
    assert haystack_operations(*haystack_fake(integration), scaled) == haystack_operations(
        *real(), scaled
    )


def test_chroma_haystack_has_no_scale_score_and_the_model_refuses_it() -> None:
    with pytest.raises(TypeError):
        ChromaEmbeddingRetriever(haystack_chroma()[0]).run(
            query_embedding=[1.0, 0.0],
            scale_score=True,  # type: ignore[call-arg]
        )
    with pytest.raises(TypeError, match="has no scale_score"):
        PlaceboDocumentStore(integration="chroma").embedding_retrieval([1.0, 0.0], scale_score=True)
