"""The pipeline: ingest documents, retrieve for a question, rerank, and answer with citations.

One turn of :meth:`Pipeline.answer`::

    standalone query -> cache (query + identity) -> dense query, widened while a filter
    starves it [-> keyword leg + RRF] -> rerank (retry, then fall back) -> pack k chunks
    -> prompt (retrieved text only as sources) -> extractive model -> citations per source

Retrieval is the store's job, permissions included: the caller's identity goes to the store
with every query, and nothing the model says can replace it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragdemo.bugs import check_bugs
from ragdemo.chunking import chunk_text
from ragdemo.fusion import KeywordIndex, reciprocal_rank_fusion
from ragdemo.generator import GROUNDING_RULES, PLATFORM_RULES, ExtractiveModel, Prompt, Source
from ragdemo.protocols import Embedder, Hit, OpenStore, Reranker, VectorStore

NOT_FOUND = "I could not find this in the knowledge base."
UNAVAILABLE = "The knowledge base could not be searched just now, so there is no answer yet."

#: Failures of a read that are worth one more attempt; anything else is a bug and propagates.
TRANSIENT = (TimeoutError, ConnectionError)


@dataclass(frozen=True)
class Document:
    id: str
    title: str
    text: str
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Chunk:
    id: str
    doc_id: str
    title: str
    text: str


@dataclass(frozen=True)
class Citation:
    """One cited source: the document, and its best packed chunk as the anchor."""

    doc_id: str
    title: str
    chunk_id: str
    quote: str


@dataclass(frozen=True)
class Answer:
    """The reply to one question.

    ``not_found`` is true when nothing retrieved supports an answer; ``degraded`` when a part
    of the pipeline failed and the reply says so instead of guessing. ``context`` is what was
    packed for the model, ``notes`` say what fell back and why.
    """

    text: str
    citations: tuple[Citation, ...]
    not_found: bool
    degraded: bool = False
    notes: tuple[str, ...] = ()
    context: tuple[Chunk, ...] = ()
    prompt: Prompt | None = None


class RetrievalUnavailable(RuntimeError):
    """Every attempt to query the store failed with a transient error."""


class _EmbeddingFunction:
    """The embedder a collection was opened with, as the store sees it.

    A collection embeds queries with the model it holds now, whatever model wrote its
    vectors; this is the object that makes a model swap without a reindex possible.
    """

    def __init__(self, model: Embedder) -> None:
        self.model = model

    @property
    def model_name(self) -> str:
        return self.model.model_name

    @property
    def dimensions(self) -> int:
        return self.model.dimensions

    def embed_batch(self, texts: Sequence[str]) -> Any:
        return self.model.embed_batch(texts)


def _freeze(value: Mapping[str, Any] | None) -> str:
    return json.dumps(value, sort_keys=True, default=repr)


class Pipeline:
    """A small RAG pipeline whose embedder, store, reranker and model are injected.

    ``open_store(embedder)`` opens an empty collection that embeds with ``embedder``.
    ``fetch_factor`` candidates per packed chunk are retrieved as headroom for reranking;
    a filtered query that returns fewer than ``k`` is widened up to ``max_fetch``.
    ``bugs`` switches on known mistakes for the mutation meta-test (see ``ragdemo.bugs``).
    """

    def __init__(
        self,
        *,
        embedder: Embedder,
        open_store: OpenStore,
        reranker: Reranker | None = None,
        hybrid: bool = False,
        chunk_words: int = 24,
        fetch_factor: int = 2,
        max_fetch: int = 64,
        attempts: int = 2,
        model: ExtractiveModel | None = None,
        bugs: Iterable[str] = (),
    ) -> None:
        for name, value in (("fetch_factor", fetch_factor), ("attempts", attempts)):
            if value < 1:
                raise ValueError(f"{name}={value!r} must be >= 1")
        self._bugs = check_bugs(bugs)
        self._open_store = open_store
        self._embedding = _EmbeddingFunction(embedder)
        self._store = open_store(self._embedding)
        self._reranker = reranker
        self._hybrid = hybrid
        self._chunk_words = chunk_words
        self._fetch_factor = fetch_factor
        self._max_fetch = max_fetch
        self._attempts = attempts
        self._model = model or ExtractiveModel()
        self._chunks: dict[str, Chunk] = {}
        self._metadata: dict[str, dict[str, Any]] = {}
        self._keywords = KeywordIndex()
        self._cache: dict[tuple[str, ...], tuple[Chunk, ...]] = {}

    @property
    def store(self) -> VectorStore:
        """The collection queries go to now (a reindex replaces it)."""
        return self._store

    @property
    def embedder(self) -> Embedder:
        return self._embedding.model

    @property
    def chunks(self) -> tuple[Chunk, ...]:
        """Every chunk this pipeline wrote, in writing order."""
        return tuple(self._chunks.values())

    # -- writing ---------------------------------------------------------------------------

    def ingest(self, documents: Iterable[Document]) -> list[Chunk]:
        """Chunk, embed and write documents; they are readable when this returns."""
        chunks = []
        indexed = {c.doc_id for c in self._chunks.values()}
        for doc in documents:
            if doc.id in indexed:
                raise ValueError(f"document {doc.id!r} is already indexed; ids must be new")
            indexed.add(doc.id)
            texts = chunk_text(doc.text, max_words=self._chunk_words, bugs=self._bugs)
            for n, text in enumerate(texts):
                chunk = Chunk(f"{doc.id}#{n}", doc.id, doc.title, text)
                self._metadata[chunk.id] = {**doc.metadata, "doc_id": doc.id, "title": doc.title}
                chunks.append(chunk)
        self._write(self._store, chunks)
        for chunk in chunks:
            self._chunks[chunk.id] = chunk
            self._keywords.add(chunk.id, chunk.text, self._metadata[chunk.id])
        self._cache.clear()
        return chunks

    def reindex(self, embedder: Embedder) -> None:
        """Move to another embedding model: a new collection, every chunk re-embedded.

        The old collection keeps serving until the new one is complete and readable.
        """
        self._cache.clear()
        if "skip_reindex" in self._bugs:
            self._embedding.model = embedder
            return
        embedding = _EmbeddingFunction(embedder)
        store = self._open_store(embedding)
        self._write(store, list(self._chunks.values()))
        self._store, self._embedding = store, embedding

    def _write(self, store: VectorStore, chunks: Sequence[Chunk]) -> None:
        if not chunks:
            return
        store.upsert_many(
            [c.id for c in chunks], [c.text for c in chunks], [self._metadata[c.id] for c in chunks]
        )
        refresh = getattr(store, "refresh", None)
        # Stores with near-real-time search (or asynchronous writes) need this before a read.
        if callable(refresh) and "no_refresh" not in self._bugs:
            refresh()

    # -- answering -------------------------------------------------------------------------

    def answer(
        self,
        question: str,
        *,
        identity: Mapping[str, Any] | None,
        where: Mapping[str, Any] | None = None,
        k: int = 5,
        tool_args: Mapping[str, Any] | None = None,
    ) -> Answer:
        """Answer ``question`` for the caller ``identity`` from at most ``k`` retrieved chunks.

        ``tool_args`` are the arguments of the model's search call: its ``query`` (the
        standalone phrasing) is used; anything else in them, an identity included, is ignored.
        """
        if k < 1:
            raise ValueError(f"k={k!r} must be >= 1")
        standalone = question
        if tool_args and isinstance(tool_args.get("query"), str) and tool_args["query"].strip():
            standalone = tool_args["query"]
        context = None if identity is None else dict(identity)
        if "tool_identity" in self._bugs and tool_args and "identity" in tool_args:
            context = dict(tool_args["identity"])
        notes: list[str] = []
        try:
            candidates = self._candidates(standalone, context, where, k)
        except RetrievalUnavailable as error:
            return Answer(UNAVAILABLE, (), not_found=True, degraded=True, notes=(str(error),))
        packed = tuple(self._rerank(standalone, candidates, notes)[:k])
        prompt = self._prompt(standalone, packed)
        draft = self._model.generate(prompt)
        done = (tuple(notes), packed, prompt)
        if not draft.used:
            if "invent_answer" in self._bugs:
                guess = packed[0].text if packed else "most policies allow this within 30 days"
                return Answer(f"Probably: {guess}", (), False, bool(notes), *done)
            # An answer with no quoted source is not grounded, whatever the model wrote.
            return Answer(NOT_FOUND, (), True, bool(notes), *done)
        if "cite_candidates" in self._bugs:
            cited: Sequence[Chunk] = candidates
        elif "cite_every_chunk" in self._bugs:
            return Answer(draft.text, tuple(_cite(c) for c in packed), False, bool(notes), *done)
        else:
            quoted = {packed[n - 1].doc_id for n in draft.used}
            cited = [chunk for chunk in packed if chunk.doc_id in quoted]
        best: dict[str, Citation] = {}
        for chunk in cited:  # in relevance order, so a source's first chunk is its best
            best.setdefault(chunk.doc_id, _cite(chunk))
        return Answer(draft.text, tuple(best.values()), False, bool(notes), *done)

    def _prompt(self, question: str, packed: Sequence[Chunk]) -> Prompt:
        instructions = f"{PLATFORM_RULES}\n{GROUNDING_RULES}"
        if "inline_context" in self._bugs:
            instructions += "\nContext:\n" + "\n".join(c.text for c in packed)
        sources = tuple(
            Source(n, c.id, c.doc_id, c.title, c.text) for n, c in enumerate(packed, start=1)
        )
        return Prompt(instructions, question, sources)

    # -- retrieval -------------------------------------------------------------------------

    def _candidates(
        self,
        query: str,
        context: dict[str, Any] | None,
        where: Mapping[str, Any] | None,
        k: int,
    ) -> tuple[Chunk, ...]:
        key = (query, _freeze(where), str(k))
        if "cache_ignores_identity" not in self._bugs:
            key += (_freeze(context),)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        search = query
        if "query_template" in self._bugs:
            search = f"{PLATFORM_RULES}\n{GROUNDING_RULES}\nQuestion: {query}"
        hits = self._dense(search, context, where, k)
        # A hit written by another client is still a candidate: it is rebuilt from the store.
        by_id = {hit.id: self._chunks.get(hit.id) or _chunk_of(hit) for hit in hits}
        ids = list(by_id)
        if self._hybrid:
            keyword = self._keywords.search(query, k * self._fetch_factor, where)
            if "fusion_intersection" in self._bugs:
                keyword = [id for id in keyword if id in by_id]
            ids = reciprocal_rank_fusion([ids, keyword], bugs=self._bugs)
        candidates = tuple(by_id.get(id) or self._chunks[id] for id in ids)
        self._cache[key] = candidates
        return candidates

    def _dense(
        self,
        text: str,
        context: dict[str, Any] | None,
        where: Mapping[str, Any] | None,
        k: int,
    ) -> list[Hit]:
        """The store's hits in the store's order, widening a filtered query that starves.

        A store that filters after its top-k cut can return fewer than k matches although
        more exist; asking for more is the only remedy a client has.
        """
        fetch = k * self._fetch_factor
        sent = 0
        while True:
            hits = self._query(text, fetch, where, context, first=sent == 0)
            sent += 1
            if where is None or len(hits) >= k or fetch >= self._max_fetch:
                break
            if "no_overfetch" in self._bugs:
                break
            fetch = min(fetch * 4, self._max_fetch)
        if "sort_by_score" in self._bugs:
            hits = sorted(hits, key=lambda hit: -hit.score)
        return hits

    def _query(
        self,
        text: str,
        k: int,
        where: Mapping[str, Any] | None,
        context: dict[str, Any] | None,
        *,
        first: bool,
    ) -> list[Hit]:
        failures = []
        for attempt in range(self._attempts):
            send = context
            if "identity_first_query_only" in self._bugs and (attempt or not first):
                send = None
            try:
                return list(self._store.query(text, k, where, context=send))
            except TRANSIENT as error:
                if "timeout_crash" in self._bugs:
                    raise
                failures.append(f"{type(error).__name__}: {error}")
        if "timeout_as_empty" in self._bugs:
            return []
        raise RetrievalUnavailable(
            f"the store failed {len(failures)} times in a row; last: {failures[-1]}"
        )

    def _rerank(self, query: str, candidates: Sequence[Chunk], notes: list[str]) -> list[Chunk]:
        """Candidates in the reranker's order; on any doubt, in retrieval order with a note."""
        if self._reranker is None or not candidates:
            return list(candidates)
        texts = [c.text for c in candidates]
        scores: list[float] | None = None
        for _ in range(1 if "rerank_crash" in self._bugs else self._attempts):
            try:
                scores = [float(s) for s in self._reranker.score_all(query, texts)]
                break
            except Exception as error:
                if "rerank_crash" in self._bugs:
                    raise
                last = f"{type(error).__name__}: {error}"
        if scores is None:
            notes.append(f"reranker failed {self._attempts} times ({last}); kept retrieval order")
            return list(candidates)
        if "rerank_zip" not in self._bugs:
            if len(scores) != len(candidates):
                notes.append(
                    f"reranker returned {len(scores)} scores for {len(candidates)} candidates;"
                    " kept retrieval order"
                )
                return list(candidates)
            if not all(math.isfinite(s) for s in scores):
                notes.append("reranker returned a non-finite score; kept retrieval order")
                return list(candidates)
        pairs = list(zip(candidates, scores))
        order = sorted(range(len(pairs)), key=lambda i: (-pairs[i][1], i))
        return [pairs[i][0] for i in order]


def _chunk_of(hit: Hit) -> Chunk:
    meta = hit.metadata
    return Chunk(hit.id, str(meta.get("doc_id", hit.id)), str(meta.get("title", "")), hit.text)


def _cite(chunk: Chunk) -> Citation:
    return Citation(chunk.doc_id, chunk.title, chunk.id, chunk.text)
