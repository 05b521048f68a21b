"""The Haystack adapter: embedders, the document store's profile and quirks, pipelines."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from typing import Any

import pytest

pytest.importorskip("haystack")

from haystack import Document, Pipeline
from haystack.document_stores.errors import DuplicateDocumentError
from haystack.document_stores.types import DuplicatePolicy
from haystack.errors import FilterError as HaystackFilterError

from placeborag import FakeEmbedder, FilterError, PlaceboragTypeError, PlaceboragValueError
from placeborag.integrations import haystack as adapter
from placeborag.integrations.haystack import (
    PlaceboDocumentEmbedder,
    PlaceboDocumentStore,
    PlaceboEmbeddingRetriever,
    PlaceboTextEmbedder,
)

TEXTS = {
    "refund": ("our refund policy allows returns within 30 days", {"lang": "en"}),
    "sale": ("refund policy exceptions for sale items", {"lang": "en"}),
    "ship": ("parcels ship in two days", {"lang": "en"}),
    "ship-hu": ("a csomagok két nap alatt érkeznek", {"lang": "hu"}),
}


def documents() -> list[Document]:
    return [Document(id=i, content=text, meta=dict(meta)) for i, (text, meta) in TEXTS.items()]


def indexed(**options: Any) -> PlaceboDocumentStore:
    document_store = PlaceboDocumentStore(**options)
    embedded = PlaceboDocumentEmbedder(document_store.embedder).run(documents())["documents"]
    document_store.write_documents(embedded)
    return document_store


def query(document_store: PlaceboDocumentStore, text: str, **options: Any) -> list[Document]:
    vector = PlaceboTextEmbedder(document_store.embedder).run(text)["embedding"]
    return document_store.embedding_retrieval(vector, **options)


def test_importing_the_adapter_without_haystack_names_the_extra() -> None:
    code = """
        import sys
        sys.modules["haystack"] = None
        try:
            import placeborag.integrations.haystack
        except ImportError as exc:
            print(exc)
    """
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=False
    )

    assert result.stdout.strip() == (
        "placeborag.integrations.haystack needs haystack-ai, which is not installed; "
        "pip install 'placeborag[haystack]'"
    ), result.stderr


def test_all_lists_exactly_the_public_names() -> None:
    assert adapter.__all__ == [
        "PlaceboDocumentEmbedder",
        "PlaceboDocumentStore",
        "PlaceboDuplicateDocumentError",
        "PlaceboEmbeddingRetriever",
        "PlaceboFilterError",
        "PlaceboTextEmbedder",
    ]
    assert all(hasattr(adapter, name) for name in adapter.__all__)


def test_the_embedders_give_the_fakes_query_and_document_vectors() -> None:
    embedder = FakeEmbedder(dimensions=32)

    embedding = PlaceboTextEmbedder(embedder).run("refund policy")
    (document,) = PlaceboDocumentEmbedder(embedder).run([Document(content="refund policy")])[
        "documents"
    ]

    assert embedding == {
        "embedding": embedder.embed("refund policy"),
        "meta": {"model": "placebo-embed-v1"},
    }
    assert document.embedding == list(embedder.embed_batch(["refund policy"])[0])


def test_the_document_embedder_embeds_meta_fields_and_leaves_its_input_alone() -> None:
    embedder = FakeEmbedder(dimensions=32)
    given = Document(content="refund policy", meta={"title": "Refunds"})

    (document,) = PlaceboDocumentEmbedder(
        embedder, meta_fields_to_embed=["title"], prefix="passage: "
    ).run([given])["documents"]

    assert given.embedding is None
    assert document.embedding == list(embedder.embed_batch(["passage: Refunds\nrefund policy"])[0])


def test_the_embedders_refuse_the_other_ones_input() -> None:
    with pytest.raises(PlaceboragTypeError, match=r"^text=\[.*must be a str, not list; to embed"):
        PlaceboTextEmbedder().run([Document(content="x")])  # type: ignore[arg-type]
    with pytest.raises(PlaceboragTypeError, match=r"^documents='x' must be a list of Documents"):
        PlaceboDocumentEmbedder().run("x")  # type: ignore[arg-type]


def test_retrieval_ranks_by_the_fakes_geometry_with_the_profiles_scores() -> None:
    document_store = indexed()
    store = document_store.store

    found = query(document_store, "refund policy", top_k=3)

    expected = store.query("refund policy", 3)
    assert [(d.id, d.score) for d in found] == [(m.id, m.score) for m in expected]
    assert found[0].embedding is None
    assert query(document_store, "refund policy", top_k=1, return_embedding=True)[0].embedding


def test_a_chroma_store_reports_distances_and_scale_score_gives_relevance() -> None:
    chroma, qdrant = indexed(profile="chroma"), indexed(profile="qdrant")

    distance = query(chroma, "refund policy", top_k=1)[0].score
    similarity = query(qdrant, "refund policy", top_k=1)[0].score
    scaled = query(chroma, "refund policy", top_k=1, scale_score=True)[0].score

    assert distance == pytest.approx(1 - similarity)
    assert scaled == pytest.approx((1 + similarity) / 2)


def test_post_filtering_returns_nothing_when_the_window_holds_no_match() -> None:
    pre = indexed(profile="qdrant")
    post = indexed(profile="qdrant", filter_mode="post")
    hungarian = {"field": "meta.lang", "operator": "==", "value": "hu"}

    assert [d.id for d in query(pre, "refund policy", top_k=1, filters=hungarian)] == ["ship-hu"]
    assert query(post, "refund policy", top_k=1, filters=hungarian) == []


def test_an_injected_failure_reaches_the_pipeline() -> None:
    document_store = indexed()
    document_store.store.fail_next_query()

    with pytest.raises(TimeoutError):
        query(document_store, "refund policy")
    assert query(document_store, "refund policy")


def test_a_pipeline_embeds_and_retrieves_and_serialises() -> None:
    document_store = indexed()
    pipeline = Pipeline()
    pipeline.add_component("embedder", PlaceboTextEmbedder(document_store.embedder))
    pipeline.add_component("retriever", PlaceboEmbeddingRetriever(document_store, top_k=2))
    pipeline.connect("embedder.embedding", "retriever.query_embedding")

    result = pipeline.run({"embedder": {"text": "parcels"}})
    again = Pipeline.loads(pipeline.dumps(), allowed_modules=["placeborag.integrations.haystack"])

    assert result["retriever"]["documents"][0].id == "ship"
    assert again.to_dict() == pipeline.to_dict()
    assert again.get_component("retriever").document_store.count_documents() == 0  # config only


@pytest.mark.parametrize(
    "component",
    [
        lambda: PlaceboTextEmbedder(FakeEmbedder(dimensions=8), prefix="query: "),
        lambda: PlaceboDocumentEmbedder(meta_fields_to_embed=["title"]),
        lambda: PlaceboDocumentStore(profile="pgvector", filter_mode="pre", recall=0.5),
        lambda: PlaceboEmbeddingRetriever(PlaceboDocumentStore(profile="chroma"), top_k=3),
    ],
    ids=["text-embedder", "document-embedder", "store", "retriever"],
)
def test_every_component_round_trips_through_to_dict(component: Any) -> None:
    original = component()

    again = type(original).from_dict(original.to_dict())

    assert again.to_dict() == original.to_dict()


def test_the_async_methods_answer_as_the_sync_ones() -> None:
    document_store = indexed()
    vector = PlaceboTextEmbedder(document_store.embedder).run("parcels")["embedding"]

    async def run() -> tuple[list[Document], dict[str, Any]]:
        found = await document_store.embedding_retrieval_async(vector, top_k=2)
        embedded = await PlaceboTextEmbedder(document_store.embedder).run_async("parcels")
        return found, embedded

    found, embedded = asyncio.run(run())
    assert found == document_store.embedding_retrieval(vector, top_k=2)
    assert embedded["embedding"] == vector


def test_the_default_policy_follows_the_profiles_existing_id_rule() -> None:
    first, second = Document(id="x", content="first"), Document(id="x", content="second")
    ignoring = PlaceboDocumentStore(on_existing_id="ignore")
    refusing = PlaceboDocumentStore(on_existing_id="error")
    duplicating = PlaceboDocumentStore(on_existing_id="duplicate")
    for document_store in (ignoring, refusing, duplicating):
        document_store.write_documents([first])

    assert ignoring.write_documents([second]) == 0
    with pytest.raises(DuplicateDocumentError, match=r"^documents\[0\] has id 'x', which is"):
        refusing.write_documents([second])
    assert duplicating.write_documents([second]) == 1

    assert ignoring.filter_documents() == [first] == refusing.filter_documents()
    both = duplicating.store.query("first second", k=5)
    assert sorted(m.text for m in both) == ["first", "second"]
    assert duplicating.write_documents([second], policy=DuplicatePolicy.OVERWRITE) == 1
    assert [m.text for m in duplicating.store.query("first second", k=5)] == ["second"]


def test_a_duplicate_error_is_haystacks_and_placeborags() -> None:
    document_store = PlaceboDocumentStore()
    document_store.write_documents([Document(id="x", content="a")])

    with pytest.raises(PlaceboragValueError) as excinfo:
        document_store.write_documents([Document(id="x", content="b")], DuplicatePolicy.FAIL)
    assert isinstance(excinfo.value, DuplicateDocumentError)


def test_an_embedding_of_other_dimensions_is_refused_naming_both() -> None:
    document_store = PlaceboDocumentStore(embedder=FakeEmbedder())

    with pytest.raises(PlaceboragValueError) as excinfo:
        document_store.write_documents([Document(id="x", content="a", embedding=[1.0, 0.0])])

    assert excinfo.value.args[0].startswith(
        "documents[0] (id 'x') has a 2-dimensional embedding and the store holds 256-dimensional"
    )
    with pytest.raises(PlaceboragValueError, match=r"^query_embedding has 2 dimensions and the"):
        document_store.embedding_retrieval([1.0, 0.0])
    assert document_store.count_documents() == 0


def test_a_document_keeps_its_own_embedding_and_is_read_back_as_written() -> None:
    document_store = PlaceboDocumentStore(embedder=FakeEmbedder(dimensions=2))
    given = [
        Document(id="n", content="north", embedding=[0.0, 2.0], meta={"n": 1}),
        Document(id="e", content="east", embedding=[3.0, 0.0], meta={"n": 2.0}),
    ]
    document_store.write_documents(given)

    found = document_store.embedding_retrieval([1.0, 0.1], top_k=2)

    assert [d.id for d in found] == ["e", "n"]
    assert document_store.filter_documents() == given


def test_a_malformed_filter_is_refused_even_by_an_empty_store() -> None:
    document_store = PlaceboDocumentStore()

    with pytest.raises(FilterError) as excinfo:
        document_store.filter_documents({"operator": "AND"})
    assert isinstance(excinfo.value, HaystackFilterError)


def test_the_store_pickles_and_deep_copies_with_its_records(clone: Any) -> None:
    document_store = indexed(profile="pgvector")

    again = clone(document_store)

    assert again.filter_documents() == document_store.filter_documents()
    assert query(again, "parcels") == query(document_store, "parcels")


def nested_ands(depth: int) -> dict[str, Any]:
    condition: dict[str, Any] = {"field": "meta.lang", "operator": "==", "value": "en"}
    for _ in range(depth):
        condition = {"operator": "AND", "conditions": [condition]}
    return condition


@pytest.mark.parametrize("profile", ["qdrant", "chroma"])
def test_a_write_that_skips_existing_ids_keeps_the_first_of_each_in_the_order_written(
    profile: str,
) -> None:
    # InMemoryDocumentStore writes [a, b, a] under SKIP as a, b: the second a is skipped as it
    # comes.
    policy = DuplicatePolicy.SKIP
    document_store = PlaceboDocumentStore(embedder=FakeEmbedder(dimensions=2), profile=profile)
    same = [1.0, 0.0]
    written = [
        Document(id="a", content="first a", embedding=same),
        Document(id="b", content="b", embedding=same),
        Document(id="a", content="second a", embedding=same),
    ]

    count = document_store.write_documents(written, policy)

    assert count == 2
    assert [(d.id, d.content) for d in document_store.filter_documents()] == [
        ("a", "first a"),
        ("b", "b"),
    ]
    # Tied documents come back in the order kept, under chroma's insertion tie order.
    if profile == "chroma":
        found = document_store.embedding_retrieval(same, top_k=2)
        assert [d.id for d in found] == ["a", "b"]


@pytest.mark.parametrize(
    ("filters", "message"),
    [
        ({"operator": "AND", "conditions": None}, "filters['conditions']=None must be a list"),
        (
            {"operator": "OR", "conditions": ["meta.lang"]},
            "filters['conditions'][0]='meta.lang' must be a dict",
        ),
        (
            {"field": 5, "operator": "==", "value": "en"},
            "filters['field']=5 must be a non-empty str",
        ),
        (
            {
                "operator": "NOT",
                "conditions": [{"field": "meta.lang", "operator": "~", "value": 1}],
            },
            "filters['conditions'][0]['operator']='~' must be one of '==', '!='",
        ),
        (nested_ands(1000), "filters nest deeper than 100 levels"),
    ],
    ids=["conditions-none", "condition-not-a-dict", "int-field", "bad-operator", "1000-ands"],
)
def test_a_malformed_filter_raises_haystacks_filter_error_naming_the_part(
    filters: dict[str, Any], message: str
) -> None:
    document_store = PlaceboDocumentStore(embedder=FakeEmbedder(dimensions=8))
    document_store.write_documents(documents())

    for call in (
        lambda: document_store.filter_documents(filters),
        lambda: document_store.embedding_retrieval([1.0] * 8, filters=filters),
        lambda: document_store.count_documents_by_filter(filters),
    ):
        with pytest.raises(HaystackFilterError) as excinfo:
            call()
        assert isinstance(excinfo.value, FilterError)
        assert excinfo.value.args[0].startswith(message)
    assert document_store.count_documents() == len(TEXTS)


def test_a_filter_one_level_below_the_depth_limit_is_evaluated() -> None:
    document_store = PlaceboDocumentStore(embedder=FakeEmbedder(dimensions=8))
    document_store.write_documents(documents())

    found = document_store.filter_documents(nested_ands(adapter.MAX_FILTER_DEPTH - 1))

    assert [d.id for d in found] == ["refund", "sale", "ship"]
