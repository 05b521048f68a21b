"""What both framework adapters need: the import guard, embedder plumbing and reranking.

It imports no framework, so each adapter module stays the only place its framework is loaded.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from placeborag import PlaceboragTypeError, PlaceboragValueError, _documents
from placeborag.toolkit import check_id, check_metadatas, check_vector, shown
from placeborag.toolkit import check_k as check_k_rule

__all__ = [
    "ZERO_VECTOR",
    "GivenVectors",
    "VectorFunctions",
    "check_k",
    "check_lambda_mult",
    "check_options",
    "check_scorer",
    "check_texts",
    "check_top_n",
    "check_write",
    "cosine_of_score",
    "document_vectors",
    "framework_missing",
    "mark_zero_vectors",
    "mmr_order",
    "query_around_zero_vectors",
    "query_vectors",
    "rerank_order",
    "resolve_embedder",
    "run_query",
    "settling",
    "store_dimensions",
    "store_embedder",
    "strict_setstate",
    "strict_state",
    "write_in_order",
    "zero_vector_rule",
]


def framework_missing(adapter: str, package: str, extra: str) -> ImportError:
    """The error an adapter raises when its framework cannot be imported: it names the extra.

    Called while the ``ImportError`` is handled. A module that cannot be found means the
    framework is not installed; a name missing from an installed one (``cannot import name``)
    means an older version, and the error says so, with the installed version and the
    original error.
    """
    import importlib.metadata
    import sys

    cause = sys.exc_info()[1]
    try:
        installed = importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        installed = None
    if installed is None or isinstance(cause, ModuleNotFoundError) or cause is None:
        return ImportError(
            f"placeborag.integrations.{adapter} needs {package}, which is not installed; "
            f"pip install 'placeborag[{extra}]'"
        )
    return ImportError(
        f"placeborag.integrations.{adapter} cannot use {package} {installed} ({cause}); "
        f"it needs the version placeborag[{extra}] declares: pip install -U "
        f"'placeborag[{extra}]' (docs/integrations.md lists the versions served)"
    )


def resolve_embedder(embedder: Any) -> Any:
    """A placeborag embedder: ``embedder`` itself, or a ``FakeEmbedder()`` for None.

    A :class:`GivenVectors` is unwrapped: ``PlaceboEmbedding(llama_store.store.embedder)`` is
    the store's own embedder, in the store's space.
    """
    if isinstance(embedder, GivenVectors):
        return embedder.embedder
    if embedder is None:
        from placeborag import FakeEmbedder

        return FakeEmbedder()
    if not callable(getattr(embedder, "embed_batch", None)):
        raise PlaceboragTypeError(
            f"embedder={shown(embedder)} must have an embed_batch(texts) method "
            "(a FakeEmbedder, a ReplayEmbedder or a compatible object)"
        )
    return embedder


def check_texts(texts: object, name: str = "texts") -> list[Any]:
    """``texts`` as a list; a bare ``str`` is refused rather than split into its characters.

    The items are not checked here (ids and metadatas go through it too): the caller does.
    """
    if isinstance(texts, (str, bytes)):
        raise PlaceboragTypeError(
            f"{name}={shown(texts)} is a single {type(texts).__name__}; pass a list of texts, "
            f"such as [{shown(texts)}]"
        )
    if not isinstance(texts, Iterable):
        raise PlaceboragTypeError(
            f"{name}={shown(texts)} must be a list of str, not {type(texts).__name__}"
        )
    return list(texts)


def check_k(k: object, name: str = "k") -> int:
    """A framework's result count: :func:`placeborag._validation.check_k` from 0 (a framework
    answers ``k=0`` with no results, as its in-memory store does)."""
    return check_k_rule(k, name, minimum=0)


def document_vectors(embedder: Any, texts: Sequence[str]) -> np.ndarray:
    """Vectors of documents: ``embed_batch`` is the document side of every placeborag embedder."""
    return np.asarray(embedder.embed_batch(check_texts(texts)), dtype=np.float64)


def query_vectors(embedder: Any, texts: Sequence[str]) -> np.ndarray:
    """Vectors of queries: ``embed_queries`` where the embedder keeps queries apart (replay)."""
    embed = getattr(embedder, "embed_queries", None) or embedder.embed_batch
    return np.asarray(embed(list(texts)), dtype=np.float64)


class VectorFunctions:
    """A placeborag-shaped embedder over a framework's embedding model.

    A ``FakeVectorStore`` calls ``embed_batch`` for documents and ``embed_queries`` for
    queries; this forwards them to the ``model``'s document and query ``methods`` (named in
    that order), so the store ranks in the framework model's space and keeps its two
    namespaces apart.

    Inside ``with functions.supplying({text: vector})`` (on the same thread) ``embed_batch``
    answers those texts with the given vectors and asks the model only for the others: a
    LlamaIndex node that arrives with its embedding is not embedded a second time.

    Pickling and ``copy.deepcopy`` keep the model and the method names, and bind the methods
    again on the copy (a bound method LlamaIndex wraps cannot be pickled, nor can the
    thread-local the supplied vectors live in): a store over a framework model copies like
    the framework's own in-memory store.
    """

    def __init__(self, model: Any, methods: tuple[str, str], *, model_name: str) -> None:
        self.model = model
        self.methods = methods
        self.model_name = model_name
        self._bind()

    def _bind(self) -> None:
        self._documents: Callable[[list[str]], Iterable[Sequence[float]]] = getattr(
            self.model, self.methods[0]
        )
        self._query: Callable[[str], Sequence[float]] = getattr(self.model, self.methods[1])
        self._supplied = threading.local()

    def __getstate__(self) -> dict[str, Any]:
        return {"model": self.model, "methods": self.methods, "model_name": self.model_name}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.model = state["model"]
        self.methods = (state["methods"][0], state["methods"][1])
        self.model_name = state["model_name"]
        self._bind()

    @contextlib.contextmanager
    def supplying(
        self,
        vectors: Mapping[str, Sequence[float]],
        *,
        queries: Mapping[str, Sequence[float]] | None = None,
    ) -> Iterator[None]:
        """``embed_batch`` answers the texts of ``vectors``, ``embed_queries`` those of
        ``queries``, with the vectors given, on this thread, inside the block."""
        previous = (
            getattr(self._supplied, "vectors", None),
            getattr(self._supplied, "queries", None),
        )
        self._supplied.vectors = dict(vectors)
        self._supplied.queries = dict(queries or {})
        try:
            yield
        finally:
            self._supplied.vectors, self._supplied.queries = previous

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        supplied = getattr(self._supplied, "vectors", None) or {}
        missing = [text for text in dict.fromkeys(texts) if text not in supplied]
        computed = dict(zip(missing, self._documents(missing))) if missing else {}
        rows = [supplied[t] if t in supplied else computed[t] for t in texts]
        return np.asarray([list(row) for row in rows], dtype=np.float64)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        supplied = getattr(self._supplied, "queries", None) or {}
        return np.asarray(
            [list(supplied[text] if text in supplied else self._query(text)) for text in texts],
            dtype=np.float64,
        )

    def __repr__(self) -> str:
        return f"VectorFunctions(model_name={self.model_name!r})"


class GivenVectors:
    """A placeborag embedder behind which a ``FakeVectorStore`` also takes vectors given to it.

    A store over a bare ``FakeEmbedder`` ranks near-ties exactly from the texts, so it refuses
    ``upsert_vectors``; behind this wrapper the same embedder gives the same vectors, and the
    store ranks by the float32 rows it holds, a node's own embedding among them. The LlamaIndex
    and Haystack stores use it: ``SimpleVectorStore`` and ``InMemoryDocumentStore`` keep
    whatever vector a node or document carries.

    ``GivenVectors(None)`` has no embedder yet: like ``SimpleVectorStore`` and Chroma, the store
    takes its dimension from the first vectors it is given (:meth:`settle`), and its text side
    is then a ``FakeEmbedder`` of that dimension. A text embedded before any vector arrived (or
    :attr:`embedder` read first) settles it at ``FakeEmbedder()``'s default dimension.
    """

    def __init__(self, embedder: Any) -> None:
        self.model_name = "placeborag-fake"
        self._embedder: Any = None
        self.dimensions: int | None = None
        # True when the wrapper chose its embedder itself (no embedder was given).
        self.chosen = embedder is None
        if embedder is not None:
            self._use(resolve_embedder(embedder))

    def _use(self, embedder: Any) -> None:
        self._embedder = embedder
        dimensions = getattr(embedder, "dimensions", None)
        self.dimensions = dimensions if isinstance(dimensions, int) and dimensions > 0 else None
        self.model_name = getattr(embedder, "model_name", type(embedder).__name__)

    @property
    def pending(self) -> bool:
        """True while no embedder is chosen: the first vectors given will choose its dimension."""
        return self._embedder is None

    @property
    def embedder(self) -> Any:
        """The placeborag embedder of the text side (settled at the default if still pending)."""
        if self._embedder is None:
            self.settle(None)
        return self._embedder

    def settle(self, dimensions: int | None) -> None:
        """Choose the text side, once: a ``FakeEmbedder`` of ``dimensions`` (None: its default).

        A no-op when the embedder is chosen already. A 1-dimensional store (LlamaIndex's tests
        write ``MockEmbedding(embed_dim=1)`` vectors) takes vectors but has no fake text side:
        a cosine in one dimension is always 1 or -1, so ``FakeEmbedder`` needs two.
        """
        if self._embedder is not None:
            return
        from placeborag import FakeEmbedder

        if dimensions is None:
            self._use(FakeEmbedder())
        elif dimensions < 2:
            self._use(_NoTextSide(dimensions))
        else:
            self._use(FakeEmbedder(dimensions=dimensions))

    def settle_for(self, vectors: Iterable[Any]) -> None:
        """:meth:`settle` at the length of the first of ``vectors`` that is not None."""
        if self._embedder is None:
            for vector in vectors:
                if vector is not None:
                    self.settle(len(vector))
                    return

    def unsettle(self) -> None:
        """Back to pending (a write that settled the dimension was refused)."""
        self._embedder = None
        self.dimensions = None
        self.model_name = "placeborag-fake"

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        return document_vectors(self.embedder, texts)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return query_vectors(self.embedder, texts)

    def __getstate__(self) -> dict[str, Any]:
        return {"embedder": self._embedder, "chosen": self.chosen}

    def __setstate__(self, state: dict[str, Any]) -> None:
        GivenVectors.__init__(self, state["embedder"])
        self.chosen = state["chosen"]

    def __repr__(self) -> str:
        if self._embedder is None:
            return "GivenVectors(dimensions from the first vectors)"
        return f"GivenVectors({self._embedder!r})"


class _NoTextSide:
    """The text side of a store whose vectors have one dimension: there is none."""

    model_name = "placeborag-fake"

    def __init__(self, dimensions: int) -> None:
        self.dimensions = dimensions

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        raise PlaceboragValueError(
            f"this store holds {self.dimensions}-dimensional vectors (taken from the first ones "
            "it was given) and FakeEmbedder needs at least 2 dimensions, so it cannot embed a "
            "text; give every node/document its embedding, query with query_embedding, or build "
            "the store over an embedder"
        )

    def __repr__(self) -> str:
        return f"<no text side, dimensions={self.dimensions}>"


@contextlib.contextmanager
def settling(store: Any, vectors: Iterable[Any] | None) -> Iterator[None]:
    """Inside the block, a store built without an embedder has taken its dimension from the
    first of ``vectors`` (see :class:`GivenVectors`); a write refused inside leaves it as it
    was. A no-op for any other store, and once the store holds vectors."""
    embedder = store.embedder
    if not (isinstance(embedder, GivenVectors) and embedder.pending) or vectors is None:
        yield
        return
    embedder.settle_for(vectors)
    try:
        yield
    except BaseException:
        if not store.records().dimensions:
            embedder.unsettle()
        raise


# -- zero vectors -----------------------------------------------------------------------------

# A record written with an all-zero vector carries this metadata key. The store holds a
# placeholder unit row for it (FakeVectorStore refuses zero rows: their angle is undefined) and
# the adapters never let the store rank it: they place it themselves, as the profile's engine
# does (see zero_vector_rule).
ZERO_VECTOR = _documents.ZERO_VECTOR

# What each engine does with an all-zero vector under cosine (docs/reference: engine behaviour):
# chroma, qdrant, faiss and langchain score it as an orthogonal vector (cosine 0); lancedb never
# returns it; pgvector's distance is NaN, which sorts after every number.
_ZERO_RULES = {"lancedb": "never", "pgvector": "last"}


def zero_vector_rule(profile: Any) -> str:
    """``"cosine0"``, ``"never"`` or ``"last"``: where a profile's engine ranks a zero vector."""
    return _ZERO_RULES.get(profile.name, "cosine0")


def _is_zero(vector: Any) -> bool:
    return vector is not None and not np.any(np.asarray(vector, dtype=np.float64))


def mark_zero_vectors(
    vectors: Sequence[Any] | None, metadatas: Sequence[Mapping[str, Any] | None]
) -> tuple[list[Any] | None, list[Mapping[str, Any] | None]]:
    """``vectors`` with each all-zero row replaced by a placeholder unit row, and ``metadatas``
    with :data:`ZERO_VECTOR` set on those records (a key of the user's by that name is refused)."""
    for i, metadata in enumerate(metadatas):
        if metadata is not None and ZERO_VECTOR in metadata:
            raise PlaceboragValueError(
                f"metadatas[{i}] has key {shown(ZERO_VECTOR)}, which the adapter keeps for "
                "itself; rename that key"
            )
    if vectors is None or not any(_is_zero(v) for v in vectors):
        return (None if vectors is None else list(vectors)), list(metadatas)
    out_vectors: list[Any] = []
    out_metas: list[Mapping[str, Any] | None] = []
    for vector, metadata in zip(vectors, metadatas):
        if _is_zero(vector):
            placeholder = np.zeros(len(vector))
            placeholder[0] = 1.0
            out_vectors.append(placeholder)
            out_metas.append({**(metadata or {}), ZERO_VECTOR: True})
        else:
            out_vectors.append(vector)
            out_metas.append(metadata)
    return out_vectors, out_metas


def query_around_zero_vectors(
    store: Any,
    k: int,
    ids: Sequence[str] | None,
    run: Callable[[list[str] | None], list[Any]],
    admits: Callable[[Mapping[str, Any]], bool],
) -> list[Any]:
    """The top ``k`` of a query when records with zero vectors may be stored.

    ``run(ids)`` is the store's query restricted to ``ids`` (None: no restriction); ``admits``
    tells whether a zero-vector record's metadata passes the query's filters. The store ranks
    every other record; the zero-vector ones (insertion order among themselves) are placed by
    :func:`zero_vector_rule`: after every match with a positive cosine and those tied at 0, at
    the profile's score of cosine 0; after every match with a NaN score; or nowhere. A
    constant score merges exactly: the top ``k`` of the union is the merge of both top ``k``.
    """
    records = store.records()
    zero = [
        (i, t, m)
        for i, t, m in zip(records.ids, records.texts, records.metadata)
        if m.get(ZERO_VECTOR)
    ]
    if not zero:
        return run(None if ids is None else list(ids))
    zero_ids = {i for i, _, _ in zero}
    wanted = None if ids is None else set(ids)
    allowed = [i for i in (records.ids if ids is None else ids) if i not in zero_ids]
    matches = [m for m in run(allowed) if m.id in store]  # no FAISS padding around them
    rule = zero_vector_rule(store.profile)
    if rule == "never":
        return matches
    from placeborag import Match

    if rule == "last":
        score, at = math.nan, len(matches)
    else:
        score = store.profile.score(0.0)
        relevance = cosine_of_score(store.profile.score)
        at = next((n for n, m in enumerate(matches) if relevance(m.score) < 0.0), len(matches))
    placed = [
        Match(i, t, {key: v for key, v in m.items() if key != ZERO_VECTOR}, score)
        for i, t, m in zero
        if (wanted is None or i in wanted) and admits(m)
    ]
    return (matches[:at] + placed + matches[at:])[:k]


def write_in_order(
    store: Any,
    ids: Sequence[str],
    texts: Sequence[str],
    metadatas: Sequence[Mapping[str, Any] | None] | None,
    vectors: Sequence[Any] | None = None,
) -> None:
    """Write the records as that many single writes in this order would, in as few calls.

    ``FakeVectorStore.upsert_many`` takes an id once per call; a framework's ``add`` may
    repeat one (langchain's ``PGVector`` writes every chunk of a file under the file's id).
    The records are cut into runs without a repeated id, written one run after the other, so
    the store's ``on_existing_id`` decides each repeat exactly as it decides a repeat across
    calls: ``"duplicate"`` keeps them all, ``"replace"`` keeps the first place and the last
    record, ``"ignore"`` the first record, ``"move_to_end"`` the last one in the last place.
    Under ``"error"`` a repeated or already stored id refuses the whole call before anything
    is written. ``vectors[i]`` (None where the store should embed) writes that row with
    ``upsert_vectors``; an all-zero one is marked (see :func:`mark_zero_vectors`). Over a
    framework model the texts are embedded in one call first. A store built without an
    embedder takes its dimension from the first vector given (see :class:`GivenVectors`).
    """
    if metadatas is not None or vectors is not None:
        vectors, metadatas = mark_zero_vectors(
            vectors, [None] * len(ids) if metadatas is None else metadatas
        )
    with settling(store, vectors):
        _write_runs(store, ids, texts, metadatas, vectors)


def _write_runs(
    store: Any,
    ids: Sequence[str],
    texts: Sequence[str],
    metadatas: Sequence[Mapping[str, Any] | None] | None,
    vectors: Sequence[Any] | None,
) -> None:
    runs = _runs(ids, vectors)
    if len(runs) > 1:
        # The store checks each call before writing it; the later runs are checked here, so a
        # bad record anywhere refuses the whole write, as one call would.
        check_write(store, ids, texts, metadatas, vectors)
    embedder = store.embedder
    supplied: dict[str, Any] = {}
    if isinstance(embedder, VectorFunctions) and len(runs) > 1:
        wanted = [texts[i] for run in runs for i in run if vectors is None or vectors[i] is None]
        unique = list(dict.fromkeys(wanted))
        supplied = dict(zip(unique, embedder.embed_batch(unique).tolist())) if unique else {}
    context = embedder.supplying(supplied) if supplied else contextlib.nullcontext()
    with context:
        for run in runs:
            run_ids_list = [ids[i] for i in run]
            run_texts = [texts[i] for i in run]
            run_metas = None if metadatas is None else [metadatas[i] for i in run]
            if vectors is not None and vectors[run[0]] is not None:
                store.upsert_vectors(run_ids_list, [vectors[i] for i in run], run_texts, run_metas)
            else:
                store.upsert_many(run_ids_list, run_texts, run_metas)


def _runs(ids: Sequence[str], vectors: Sequence[Any] | None) -> list[list[int]]:
    """Positions cut into runs without a repeated id, each all given vectors or all texts."""
    runs: list[list[int]] = []
    seen: set[str] = set()
    kind = None
    for i, value in enumerate(ids):
        given = vectors is not None and vectors[i] is not None
        if not runs or value in seen or given != kind:
            runs.append([])
            seen = set()
            kind = given
        runs[-1].append(i)
        seen.add(value)
    return runs


def check_write(
    store: Any,
    ids: Sequence[str],
    texts: Sequence[str],
    metadatas: Sequence[Mapping[str, Any] | None] | None,
    vectors: Sequence[Any] | None = None,
) -> None:
    """Refuse a write the store would refuse in part, before any of it is written.

    What ``upsert_many`` checks per call, for a write made in several calls (batches, or the
    runs of :func:`write_in_order`); under ``on_existing_id="error"`` an id repeated anywhere
    in the write is refused too.
    """
    if store.profile.on_existing_id == "error":
        seen: dict[str, int] = {}
        for i, value in enumerate(ids):
            if value in seen:
                raise PlaceboragValueError(
                    f"ids[{i}]={shown(value)} repeats ids[{seen[value]}] and "
                    "on_existing_id='error' forbids writing an id twice; nothing was written"
                )
            seen[value] = i
    for i, value in enumerate(ids):
        check_id(value, f"ids[{i}]")
        if store.profile.on_existing_id == "error" and value in store:
            raise PlaceboragValueError(
                f"id {shown(value)} is already stored and on_existing_id='error' "
                "forbids writing it again"
            )
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise PlaceboragTypeError(
                f"texts[{i}]={shown(text)} must be a str, not {type(text).__name__}"
            )
    if metadatas is not None:
        check_metadatas(list(metadatas))
    if vectors is not None:
        dimensions = store_dimensions(store)
        for i, vector in enumerate(vectors):
            if vector is not None:
                check_vector(vector, f"vectors[{i}]")
                if dimensions is not None and len(vector) != dimensions:
                    raise PlaceboragValueError(
                        f"vectors[{i}] has {len(vector)} dimensions and the store holds "
                        f"{dimensions}-dimensional vectors"
                    )


def store_dimensions(store: Any) -> int | None:
    """The dimensions of the store's vectors: its records', else its embedder's, else None."""
    held = store.records().dimensions
    if held:
        return int(held)
    own = getattr(store.embedder, "dimensions", None)
    return own if isinstance(own, int) and own > 0 else None


def store_embedder(
    model: Any, wrapper: type[Any], framework: type[Any], methods: tuple[str, str]
) -> Any:
    """The placeborag-shaped embedder a ``FakeVectorStore`` needs for a framework ``model``.

    An adapter's own embedding class (``wrapper``) is unwrapped, so a ``FakeEmbedder`` still
    lets the store break ties in exact arithmetic; any other ``framework`` model is called
    through its document and query ``methods`` (named in that order); anything else must be
    a placeborag embedder (None for a ``FakeEmbedder()``).
    """
    if isinstance(model, wrapper):
        return model.embedder
    # Duck typing, not isinstance alone: a Mock(wraps=model) records calls and has the methods.
    if isinstance(model, framework) or all(
        callable(getattr(model, name, None)) for name in methods
    ):
        return VectorFunctions(
            model,
            methods,
            model_name=getattr(model, "model_name", None) or type(model).__name__,
        )
    return resolve_embedder(model)


def strict_state(model: Any) -> dict[str, Any]:
    """A pydantic model's pickled state, as pydantic builds it.

    LlamaIndex's ``BaseComponent.__getstate__`` drops, with a log line, every attribute that
    cannot be pickled, so a copied postprocessor or LLM lost its scorer or model and failed
    later with an ``AttributeError``. The adapters' components use this instead: an attribute
    that cannot be pickled makes ``pickle`` raise, naming it, and nothing is dropped.
    """
    from pydantic import BaseModel

    return BaseModel.__getstate__(model)


def strict_setstate(model: Any, state: dict[str, Any]) -> None:
    """Restore :func:`strict_state`'s state as pydantic does.

    LlamaIndex's ``BaseComponent.__setstate__`` calls ``__init__`` with the public fields,
    which rebuilt a component's private parts (its embedder, its store) from their defaults.
    """
    from pydantic import BaseModel

    BaseModel.__setstate__(model, state)


def check_options(options: dict[str, Any], method: str, allowed: Sequence[str]) -> None:
    """Refuse keyword arguments a method would otherwise ignore (a misspelled ``filter``)."""
    if options:
        names = ", ".join(repr(name) for name in sorted(options))
        raise PlaceboragTypeError(
            f"{method} got unexpected keyword argument(s) {names}; it accepts {', '.join(allowed)}"
        )


def check_scorer(scorer: object) -> None:
    if not all(callable(getattr(scorer, name, None)) for name in ("score", "ascore")):
        raise PlaceboragTypeError(
            f"scorer={shown(scorer)} must have score(query, documents) and ascore(query, "
            "documents) "
            "methods, like ScriptedScorer and GeometryScorer"
        )


def check_top_n(top_n: object) -> int | None:
    if top_n is None:
        return None
    if isinstance(top_n, bool) or not isinstance(top_n, int):
        raise PlaceboragTypeError(
            f"top_n={shown(top_n)} must be an int or None, not {type(top_n).__name__}"
        )
    if top_n < 1:
        raise PlaceboragValueError(
            f"top_n={shown(top_n)} must be >= 1 (or None for every document)"
        )
    return top_n


def rerank_order(scores: Sequence[float], count: int, top_n: int | None) -> list[tuple[int, float]]:
    """``(position, score)`` of the best ``top_n`` of ``count`` documents, best first.

    Higher scores are better, as every scoring model reports them; equal scores keep the
    retrieval order. A response with a score missing, extra or not finite cannot order the
    documents, so it raises instead of silently dropping or inventing one.
    """
    if len(scores) != count:
        raise PlaceboragValueError(
            f"the scorer returned {len(scores)} score(s) for {count} document(s); "
            "a reranker needs exactly one score per document"
        )
    for position, score in enumerate(scores):
        if not math.isfinite(score):
            raise PlaceboragValueError(
                f"the scorer returned scores[{position}]={shown(score)}; "
                "a reranker needs finite scores to order documents"
            )
    order = sorted(range(count), key=lambda i: (-scores[i], i))
    return [(i, float(scores[i])) for i in order[:top_n]]


# -- relevance: the cosine behind a profile's score ----------------------------------------------

# Each metric a profile reports is one of these functions of the cosine of two unit vectors;
# the inverse recovers the cosine from the reported number.
_INVERSES: tuple[tuple[Callable[[float], float], Callable[[float], float]], ...] = (
    (lambda c: c, lambda s: s),  # cosine similarity, dot product
    (lambda c: 1.0 - c, lambda s: 1.0 - s),  # cosine distance, 1 - dot
    (lambda c: -c, lambda s: -s),  # negative inner product
    (lambda c: 2.0 - 2.0 * c, lambda s: 1.0 - s / 2.0),  # squared L2
    (lambda c: math.sqrt(2.0 - 2.0 * c), lambda s: 1.0 - s * s / 2.0),  # L2
)
_PROBES = (-0.5, 0.0, 0.25, 0.75, 1.0)


def cosine_of_score(score: Callable[[float], float]) -> Callable[[float], float]:
    """The function mapping a profile's reported number back to the cosine it came from.

    The profile's ``score`` is recognised by its values at a few cosines; a custom profile with
    another monotone function is inverted by bisection over ``[-1, 1]``.
    """
    for forward, inverse in _INVERSES:
        if all(score(c) == forward(c) for c in _PROBES):
            return inverse
    increasing = score(1.0) > score(-1.0)

    def bisect(value: float) -> float:
        low, high = -1.0, 1.0
        for _ in range(64):
            middle = (low + high) / 2.0
            if (score(middle) < value) == increasing:
                low = middle
            else:
                high = middle
        return (low + high) / 2.0

    return bisect


# -- maximal marginal relevance ----------------------------------------------------------------


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    # Elementwise IEEE products and a correctly rounded sum (fsum): the same bits on every
    # machine, unlike a BLAS dot whose summation order depends on the CPU.
    return math.fsum((a * b).tolist())


def check_lambda_mult(lambda_mult: object) -> float:
    """MMR's relevance weight: a number between 0 and 1."""
    if isinstance(lambda_mult, bool) or not isinstance(lambda_mult, (int, float)):
        raise PlaceboragTypeError(
            f"lambda_mult={shown(lambda_mult)} must be a number between 0 and 1, "
            f"not {type(lambda_mult).__name__}"
        )
    if not 0.0 <= lambda_mult <= 1.0:
        raise PlaceboragValueError(f"lambda_mult={shown(lambda_mult)} must be between 0 and 1")
    return float(lambda_mult)


def mmr_order(
    query: np.ndarray,
    vectors: np.ndarray,
    k: int,
    lambda_mult: float,
    tiebreak: Sequence[int] | None = None,
) -> list[int]:
    """Positions of up to ``k`` of ``vectors`` chosen by maximal marginal relevance, in order.

    The first pick is the candidate closest to the query; each next one maximises
    ``lambda_mult * cos(query, d) - (1 - lambda_mult) * max cos(d, chosen)``, as LangChain's
    ``maximal_marginal_relevance`` does. Cosines are computed in float64 from correctly
    rounded sums, so the choice is the same on every machine; equal values go to the
    candidate with the smaller ``tiebreak`` key (its insertion number; by default its
    position), never to float noise.
    """
    check_lambda_mult(lambda_mult)
    count = len(vectors)
    if k == 0 or count == 0:
        return []
    rows = np.asarray(vectors, dtype=np.float64)
    q = np.asarray(query, dtype=np.float64)
    norms = [math.sqrt(_dot(row, row)) for row in rows]
    q_norm = math.sqrt(_dot(q, q))
    relevance = [_dot(q, row) / (q_norm * norm) for row, norm in zip(rows, norms)]
    redundancy = [-math.inf] * count
    chosen: list[int] = []
    left = list(range(count))
    keys = list(range(count)) if tiebreak is None else [int(key) for key in tiebreak]
    while left and len(chosen) < k:
        best, best_value = left[0], -math.inf
        for i in left:
            # The first pick is the most relevant candidate, whatever lambda_mult is.
            if chosen:
                value = lambda_mult * relevance[i] - (1.0 - lambda_mult) * redundancy[i]
            else:
                value = relevance[i]
            if value > best_value or (value == best_value and keys[i] < keys[best]):
                best, best_value = i, value
        chosen.append(best)
        left.remove(best)
        for i in left:
            similarity = _dot(rows[i], rows[best]) / (norms[i] * norms[best])
            redundancy[i] = max(redundancy[i], similarity)
    return chosen


# -- files ------------------------------------------------------------------------------------


def run_query(
    store: Any,
    text: str | None,
    vector: Any,
    k: int,
    where: Any,
    ids: Sequence[str] | None,
    context: Any,
) -> list[Any]:
    """``store.query`` for a text, ``store.query_by_vector`` for a vector; ``ids`` if given."""
    options: dict[str, Any] = {"context": context}
    if ids is not None:
        options["ids"] = list(ids)
    if text is None:
        return list(store.query_by_vector(vector, k, where, **options))
    return list(store.query(text, k, where, **options))
