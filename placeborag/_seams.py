"""The seam audit: tests that never touch a placeborag double, audited where they retrieve.

A suite written without placeborag fakes retrieval its own way: a patched search method, a
``MagicMock`` retriever, the framework's in-memory store over a constant embedding. What all of
them share is the *seam*: the framework call the application's code makes to retrieve.

* LangChain: ``BaseRetriever.invoke``/``ainvoke`` and every ``VectorStore`` subclass's search
  methods (``similarity_search`` and its variants, ``max_marginal_relevance_search``);
* LlamaIndex: ``BaseRetriever.retrieve``/``aretrieve`` and every vector store's ``query``;
* Haystack: the ``run`` of every component class whose name ends in ``Retriever``;
* any ``unittest.mock`` mock whose call answers retrieval results (a list of LangChain or
  Haystack ``Document``\\ s, LlamaIndex nodes, ``(document, score)`` pairs, or Haystack's
  ``{"documents": [...]}``).

During an audit these are wrapped (the frameworks already imported when a test begins; nothing
is imported here). A call at a seam is recorded with its answer; under a ``seam`` mutation
(``placeborag._mutations``) the outermost call receives another question, no filter or another
k, or its answer comes back reversed or empty. A double whose answer does not move when the
question, the filter or k does is *blind*: no retrieval bug can fail a test through it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import sys
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from placeborag import _mutations, _recorder

__all__ = [
    "answer_changed",
    "answered_nothing",
    "embedding_kind",
    "install_available",
    "names",
    "request_reached",
]

_QUERY = (
    "query",
    "input",
    "str_or_query_bundle",
    "query_str",
    "query_bundle",
    "embedding",
    "query_embedding",
)
_FILTER = ("filter", "filters", "where")
_K = ("k", "top_k", "similarity_top_k", "n_results", "fetch_k")
_LANGCHAIN_SEARCH = (
    "similarity_search",
    "similarity_search_with_score",
    "similarity_search_with_relevance_scores",
    "similarity_search_by_vector",
    "max_marginal_relevance_search",
    "max_marginal_relevance_search_by_vector",
)
_MARK = "_placeborag_seam"
_local = threading.local()  # .depth: seam calls under way in this thread
_done: set[str] = set()


@dataclasses.dataclass(frozen=True)
class SeamCall:
    name: str
    depth: int
    answer: Any  # canonical form of what it answered
    mutated_request: bool
    request: Any = None  # canonical form of the question it was asked (a vector: its digest)


def _depth() -> int:
    return int(getattr(_local, "depth", 0))


def names(run: _recorder.Run) -> set[str]:
    return {call.name for call in run.seams}


def request_reached(run: _recorder.Run) -> bool:
    """Whether a request mutation was delivered to a seam (a test may assert on it)."""
    return any(call.mutated_request for call in run.seams)


def answer_changed(
    control: _recorder.Run, run: _recorder.Run, volatile: frozenset[str] = frozenset()
) -> bool:
    """Whether the outermost seams answered otherwise than in the control run (metadata
    values that change run to run with nothing changed left out)."""
    strip = _recorder.strip
    return [strip(c.answer, volatile) for c in control.seams if c.depth == 0] != [
        strip(c.answer, volatile) for c in run.seams if c.depth == 0
    ]


def answered_nothing(control: _recorder.Run) -> bool:
    """The double answered nothing to every retrieval call (an empty index, say)."""
    outer = [c.answer for c in control.seams if c.depth == 0]
    return bool(outer) and all(empty(a) for a in outer)


# -- the embeddings behind a seam -------------------------------------------------------------


def embedding_kind(baseline: _recorder.Run, control: _recorder.Run) -> str | None:
    """``"constant"`` when a framework embedding gave different texts one vector, ``"random"``
    when it gave one text different vectors (in a run, or from one run to the next), else
    None. Decided from the vectors, never from a chance order of documents."""
    seen: dict[str, set[str]] = {}
    for run in (baseline, control):
        for text, key in run.embedded_texts:
            seen.setdefault(text, set()).add(key)
    if any(len(keys) > 1 for keys in seen.values()):
        return "random"
    if len(seen) >= 2 and len({next(iter(k)) for k in seen.values()}) == 1:
        return "constant"
    return None


# -- what a retrieval answer is ---------------------------------------------------------------


def _document_types() -> tuple[type, ...]:
    out: list[type] = []
    for module, name in (
        ("langchain_core.documents.base", "Document"),
        ("llama_index.core.schema", "NodeWithScore"),
        ("llama_index.core.schema", "BaseNode"),
        ("haystack.dataclasses.document", "Document"),
    ):
        mod = sys.modules.get(module)
        cls = getattr(mod, name, None) if mod is not None else None
        if isinstance(cls, type):
            out.append(cls)
    return tuple(out)


def _items(answer: Any) -> list[Any] | None:
    """The documents of a retrieval answer (None: not one)."""
    if isinstance(answer, dict) and isinstance(answer.get("documents"), list):
        return list(answer["documents"])
    nodes = getattr(answer, "nodes", None)
    if type(answer).__name__ == "VectorStoreQueryResult":
        return list(nodes or []) if nodes is not None else list(getattr(answer, "ids", None) or [])
    if isinstance(answer, list):
        return answer
    return None


def is_answer(answer: Any) -> bool:
    items = _items(answer)
    if items is None or not items:
        return isinstance(answer, dict) and "documents" in answer
    kinds = _document_types()
    first = items[0]
    if isinstance(first, tuple) and first:
        first = first[0]
    return bool(kinds) and isinstance(first, kinds)


def _form(run: _recorder.Run, answer: Any) -> Any:
    items = _items(answer)
    if items is None:
        return run.canon.form(repr(type(answer)))
    out = []
    for item in items:
        score = None
        if isinstance(item, tuple):
            item, score = item[0], (item[1] if len(item) > 1 else None)
        node = getattr(item, "node", None)
        if node is not None:  # LlamaIndex NodeWithScore
            score = getattr(item, "score", None)
            item = node
        text = (
            getattr(item, "page_content", None)
            or getattr(item, "content", None)
            or getattr(item, "text", None)
        )
        meta = getattr(item, "metadata", None) or getattr(item, "meta", None) or {}
        score = score if score is not None else getattr(item, "score", None)
        out.append(
            run.canon.form(
                (
                    text if isinstance(text, str) else _recorder.shown_object(item),
                    dict(meta) if isinstance(meta, dict) else {},
                    float(score) if isinstance(score, (int, float)) else None,
                )
            )
        )
    return ("seq", tuple(out))


def empty(answer_form: Any) -> bool:
    return bool(answer_form == ("seq", ()))


# -- the mutations at a seam ------------------------------------------------------------------


def _question(run: _recorder.Run, bound: dict[str, Any]) -> Any:
    """The canonical form of the question a call was asked (None: it names none)."""
    for name in _QUERY:
        value: Any = bound.get(name)
        if value is None:
            continue
        if type(value).__name__ == "VectorStoreQuery":
            value = value.query_embedding if value.query_embedding is not None else value.query_str
        elif type(value).__name__ == "QueryBundle":
            value = value.embedding if value.embedding is not None else value.query_str
        if isinstance(value, str):
            return ("text", value)
        try:
            array = np.asarray(value, dtype=np.float32)
        except (TypeError, ValueError):
            return None
        return ("vector", run.canon.form(array))
    return None


def _other_query(value: Any) -> Any:
    if isinstance(value, str):
        return _mutations.OTHER_QUESTION
    if isinstance(value, np.ndarray):
        return -value
    if (
        isinstance(value, (list, tuple))
        and value
        and all(isinstance(v, (int, float)) for v in value)
    ):
        return type(value)(-float(v) for v in value)
    if type(value).__name__ == "QueryBundle":
        return type(value)(query_str=_mutations.OTHER_QUESTION)
    if type(value).__name__ == "VectorStoreQuery" and hasattr(value, "__dataclass_fields__"):
        emb = value.query_embedding
        return dataclasses.replace(
            value,
            query_str=_mutations.OTHER_QUESTION if value.query_str is not None else None,
            query_embedding=[-float(v) for v in emb] if emb is not None else None,
        )
    return value


def _other_k(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, int):
        return value
    # One more than asked: a test asserting "at most k" notices it, as one asserting exactly k.
    return value + 1


def _mutate_request(mutation: str | None, depth: int, bound: dict[str, Any]) -> bool:
    """Change ``bound`` (the call's named arguments) as ``mutation`` says; True if changed."""
    changed = False
    if mutation == "seam-query" and depth == 0:
        for name in _QUERY:
            if name in bound and bound[name] is not None:
                new = _other_query(bound[name])
                if new is not bound[name]:
                    bound[name], changed = new, True
                break
    if mutation == "seam-filter":
        for name in _FILTER:
            if bound.get(name) is not None:
                bound[name], changed = None, True
        for name in _QUERY:
            value: Any = bound.get(name)
            if type(value).__name__ == "VectorStoreQuery" and (value.filters or value.doc_ids):
                bound[name] = dataclasses.replace(value, filters=None, doc_ids=None)
                changed = True
    if mutation == "seam-k":
        for name in _K:
            if name in bound and isinstance(bound[name], int):
                bound[name], changed = _other_k(bound[name]), True
        for name in _QUERY:
            value = bound.get(name)
            if type(value).__name__ == "VectorStoreQuery":
                bound[name] = dataclasses.replace(
                    value, similarity_top_k=_other_k(value.similarity_top_k)
                )
                changed = True
    return changed


def _carries(bound: dict[str, Any]) -> tuple[bool, bool]:
    filtered = any(bound.get(n) is not None for n in _FILTER)
    k = any(isinstance(bound.get(n), int) and not isinstance(bound.get(n), bool) for n in _K)
    for name in _QUERY:
        value: Any = bound.get(name)
        if type(value).__name__ == "VectorStoreQuery":
            # node_ids scope a query to its index (LlamaIndex passes every node's): no filter.
            filtered |= bool(value.filters or value.doc_ids)
            k = True
    return filtered, k


def _mutate_answer(mutation: str | None, answer: Any) -> Any:
    if mutation not in ("seam-reversed", "seam-emptied"):
        return answer
    if isinstance(answer, dict) and isinstance(answer.get("documents"), list):
        docs = answer["documents"]
        return {**answer, "documents": docs[::-1] if mutation == "seam-reversed" else []}
    if type(answer).__name__ == "VectorStoreQueryResult" and hasattr(
        answer, "__dataclass_fields__"
    ):

        def cut(seq: Any) -> Any:
            if seq is None:
                return None
            return list(seq)[::-1] if mutation == "seam-reversed" else []

        return dataclasses.replace(
            answer,
            nodes=cut(answer.nodes),
            similarities=cut(answer.similarities),
            ids=cut(answer.ids),
        )
    if isinstance(answer, list):
        return answer[::-1] if mutation == "seam-reversed" else []
    return answer


# -- the wrappers ---------------------------------------------------------------------------


def _bind(
    signature: inspect.Signature | None, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> (
    tuple[dict[str, Any], Callable[[dict[str, Any]], tuple[tuple[Any, ...], dict[str, Any]]]] | None
):
    """The named arguments of a call and how to call again with them changed."""
    if signature is None:
        bound: dict[str, Any] = dict(kwargs)
        if args:
            bound["query"] = args[0]

        def back(b: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
            b = dict(b)
            new_args = ((b.pop("query"), *args[1:])) if args else args
            return new_args, b

        return bound, back
    try:
        ba = signature.bind(*args, **kwargs)
    except TypeError:
        return None
    names = list(ba.arguments)

    def rebuild(b: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        for name in names:
            ba.arguments[name] = b[name]
        return ba.args, ba.kwargs

    return dict(ba.arguments), rebuild


class _Pending:
    """A seam call under way: what was asked (perhaps mutated) and how to record the answer."""

    def __init__(
        self,
        run: _recorder.Run,
        name: str,
        signature: inspect.Signature | None,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        known: bool,
    ) -> None:
        self.run, self.name = run, name
        self.depth = _depth()
        mutation = run.mutation
        self.mutation = mutation if mutation and mutation.startswith("seam-") else None
        self.args, self.kwargs = args, kwargs
        self.filtered = self.has_k = self.mutated_request = False
        self.request = None
        binding = _bind(signature, args, kwargs)
        if binding is not None:
            bound, rebuild = binding
            self.filtered, self.has_k = _carries(bound)
            # A mock's request is changed only where the usual run saw it answer retrieval.
            if (
                self.mutation is not None
                and known
                and _mutate_request(self.mutation, self.depth, bound)
            ):
                self.args, self.kwargs = rebuild(bound)
                self.mutated_request = True
            self.request = _question(run, bound)
        _local.depth = self.depth + 1

    def done(self) -> None:
        _local.depth = self.depth

    def answered(self, answer: Any, must_answer: bool) -> Any:
        if must_answer and not (is_answer(answer) or _retrieval_name(self.name, answer)):
            return answer
        if self.depth == 0:
            answer = _mutate_answer(self.mutation, answer)
        run = self.run
        with _recorder._lock:
            facts = run.facts
            facts.seam_calls += 1
            facts.seam_filtered |= self.filtered
            facts.seam_k |= self.has_k
            facts.seam_names.add(self.name)
            form = _form(run, answer)
            run.seams.append(
                SeamCall(self.name, self.depth, form, self.mutated_request, self.request)
            )
            if self.depth == 0:
                run.receive_form("seam", form)
        return answer


# A mock named like a retrieval method that answers a list (of mocks, say) is a seam too.
_RETRIEVAL_NAMES = frozenset(
    {
        "retrieve",
        "aretrieve",
        "invoke",
        "get_relevant_documents",
        "search",
        "query",
        "retrieve_documents",
        "search_documents",
        *_LANGCHAIN_SEARCH,
    }
)


def _retrieval_name(name: str, answer: Any) -> bool:
    last = name.rsplit(".", 1)[-1].rsplit(" ", 1)[-1]
    return isinstance(answer, list) and last in _RETRIEVAL_NAMES


def _known(run: _recorder.Run, name: str, must_answer: bool) -> bool:
    if not must_answer:
        return True
    reference = run.reference
    return reference is not None and name in reference.seam_names


def _wrap(cls: type, attr: str) -> None:
    original = cls.__dict__.get(attr)
    if original is None or getattr(original, _MARK, False) or not callable(original):
        return
    try:
        signature: inspect.Signature | None = inspect.signature(original)
    except (TypeError, ValueError):
        signature = None
    name = f"{cls.__name__}.{attr}"

    # Async entry points (ainvoke, aretrieve) are not wrapped: a documented limit.
    @functools.wraps(original)
    def method(*args: Any, **kwargs: Any) -> Any:
        run = _recorder.active()
        if run is None:
            return original(*args, **kwargs)
        pending = _Pending(run, name, signature, args, kwargs, True)
        try:
            answer = original(*pending.args, **pending.kwargs)
        finally:
            pending.done()
        return pending.answered(answer, False)

    setattr(method, _MARK, True)
    with contextlib.suppress(TypeError, AttributeError):  # a class that refuses: not a seam
        setattr(cls, attr, method)


def _observe_embedding(cls: type, attr: str, *, batch: bool) -> None:
    """Record which vector a framework embedding gives which text (nothing is changed)."""
    original = cls.__dict__.get(attr)
    if original is None or getattr(original, _MARK, False) or not callable(original):
        return

    @functools.wraps(original)
    def method(self: Any, texts: Any, *args: Any, **kwargs: Any) -> Any:
        out = original(self, texts, *args, **kwargs)
        run = _recorder.active()
        if run is not None:
            pairs = zip(texts, out) if batch else [(texts, out)]
            with _recorder._lock:
                for text, vector in pairs:
                    key = _recorder.vector_key(vector)
                    if isinstance(text, str) and key is not None:
                        run.embedded_texts.append((text, key))
        return out

    setattr(method, _MARK, True)
    with contextlib.suppress(TypeError, AttributeError):
        setattr(cls, attr, method)


def _subclasses(cls: type) -> list[type]:
    out: list[type] = []
    todo = [cls]
    while todo:
        c = todo.pop()
        sub: type
        for sub in c.__subclasses__():
            if sub not in out:
                out.append(sub)
                todo.append(sub)
    return out


def _placebo(cls: type) -> bool:
    return cls.__module__.startswith("placeborag.")


def install_available() -> None:
    """Wrap the seams of the frameworks imported so far (new subclasses included)."""
    modules = sys.modules
    if "unittest.mock" in modules and "mock" not in _done:
        _done.add("mock")
        _install_mock()
    retrievers = modules.get("langchain_core.retrievers")
    if retrievers is not None:
        base = retrievers.BaseRetriever
        _wrap(base, "invoke")
        for sub in _subclasses(base):
            if not _placebo(sub):
                _wrap(sub, "invoke")
    stores = modules.get("langchain_core.vectorstores.base")
    if stores is not None:
        for sub in _subclasses(stores.VectorStore):
            if _placebo(sub):
                continue
            for attr in _LANGCHAIN_SEARCH:
                _wrap(sub, attr)
    llama = modules.get("llama_index.core.base.base_retriever")
    if llama is not None:
        _wrap(llama.BaseRetriever, "retrieve")
    llama_stores = modules.get("llama_index.core.vector_stores.types")
    if llama_stores is not None:
        for base in (llama_stores.BasePydanticVectorStore,):
            for sub in _subclasses(base):
                if not _placebo(sub):
                    _wrap(sub, "query")
    embeddings = modules.get("langchain_core.embeddings.embeddings")
    if embeddings is not None:
        for sub in _subclasses(embeddings.Embeddings):
            if not _placebo(sub):
                _observe_embedding(sub, "embed_query", batch=False)
                _observe_embedding(sub, "embed_documents", batch=True)
    llama_embeddings = modules.get("llama_index.core.base.embeddings.base")
    if llama_embeddings is not None:
        for sub in _subclasses(llama_embeddings.BaseEmbedding):
            if not _placebo(sub):
                _observe_embedding(sub, "_get_query_embedding", batch=False)
                _observe_embedding(sub, "_get_text_embedding", batch=False)
                _observe_embedding(sub, "_get_text_embeddings", batch=True)
    haystack = modules.get("haystack.core.component.component")
    if haystack is not None:
        registry = getattr(getattr(haystack, "component", None), "registry", {})
        for qualified, cls in list(registry.items()):
            if qualified.rsplit(".", 1)[-1].endswith("Retriever") and not _placebo(cls):
                _wrap(cls, "run")


def _install_mock() -> None:
    import unittest.mock as mock

    original = mock.CallableMixin._execute_mock_call  # type: ignore[attr-defined]

    @functools.wraps(original)
    def _execute_mock_call(self: Any, /, *args: Any, **kwargs: Any) -> Any:
        run = _recorder.active()
        if run is None or isinstance(self, mock.AsyncMock) or _depth():
            return original(self, *args, **kwargs)
        name = f"mock {self._extract_mock_name()}"
        pending = _Pending(run, name, None, args, kwargs, _known(run, name, True))
        try:
            answer = original(self, *pending.args, **pending.kwargs)
        finally:
            pending.done()
        return pending.answered(answer, True)

    mock.CallableMixin._execute_mock_call = _execute_mock_call  # type: ignore[attr-defined]
