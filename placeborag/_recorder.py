"""What one run of a test did with the doubles, and the mutation it runs under.

Only during ``pytest --placeborag-audit``: :func:`install` wraps the public methods of
``FakeVectorStore``, ``FakeEmbedder`` and the scorers (once per process; the doubles carry no
audit code of their own, and nothing changes for a session without the audit). Each test's runs
are recorded by :func:`begin`/:func:`end`:

* the **baseline** (the usual run, the one pytest reports): the :class:`~placeborag._mutations.
  Facts` that decide which mutations can apply, and, beside every query, the answer each
  answer- or request-side mutation would give (a mutation that changes no answer and no read of
  the log is not rerun);
* the **control**: the test again, nothing changed: a test failing it is not repeatable;
* one **mutated** run per mutation.

Each run keeps what the test *received* from the doubles (every answer and read, and the
embedder's vectors the test did not hand to a store), canonical: ids are named by the order
they were first written or seen, uuids by the order they appeared, so an application drawing
ids at random gives the same record run after run. A mutation *reached* the test when its
run's record differs from the control's; one that reached nothing cannot be evidence.

Threads a test leaves running are charged to no later test: a call from a thread started
during a run that was still alive when the run ended is not recorded (and not mutated).
"""

from __future__ import annotations

import functools
import hashlib
import re
import sys
import threading
import weakref
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from placeborag import _mutations, _touched
from placeborag._mutations import Call, Facts

__all__ = ["Change", "Run", "begin", "end", "install"]

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+| id='\d+'")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


@dataclass(frozen=True)
class Change:
    """One answer a mutation changed: the question and both answers, canonical and shown."""

    what: str  # "query 'refund policy' (k=2)" or "len(store)"
    usual: Any
    mutated: Any
    line: str | None = None  # file:line of the call in the test's own code
    call: tuple[Any, ...] | None = None  # (text, k, where, by vector) of the query

    def shortened(self) -> bool:
        """The mutated answer only lost items of the usual one (emptied or cut)."""
        u, m = self.usual, self.mutated
        if not (isinstance(u, list) and isinstance(m, list)) or len(m) >= len(u):
            return False
        it = iter(u)
        return all(any(x == y for y in it) for x in m)


class Canon:
    """Names what an application may draw at random by the order it first appeared."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.uuids: dict[str, int] = {}

    def see(self, ids: Iterable[Any]) -> None:
        for value in ids:
            if isinstance(value, str) and value not in self.ids:
                self.ids[value] = len(self.ids)

    def text(self, value: str) -> str:
        n = self.ids.get(value)
        if n is not None:
            return f"\x00id{n}"
        if "-" in value and _UUID.search(value):
            return _UUID.sub(
                lambda m: f"\x00uuid{self.uuids.setdefault(m.group(0).lower(), len(self.uuids))}",
                value,
            )
        return value

    def form(self, value: Any) -> Any:
        """A canonical, hashable, deterministic form of an observed value."""
        if isinstance(value, str):
            return self.text(value)
        if value is None or isinstance(value, (bool, int)):
            return value
        if isinstance(value, float):
            return repr(value)
        if isinstance(value, np.ndarray):
            return (
                "array",
                hashlib.sha256(np.ascontiguousarray(value, dtype=np.float32).tobytes()).hexdigest()[
                    :16
                ],
            )
        if isinstance(value, Mapping):
            return ("map", tuple(sorted((self.form(k), self.form(v)) for k, v in value.items())))
        if isinstance(value, (list, tuple)):
            return ("seq", tuple(self.form(v) for v in value))
        if isinstance(value, (set, frozenset)):
            return ("set", tuple(sorted(map(repr, (self.form(v) for v in value)))))
        fields = getattr(value, "__dataclass_fields__", None)
        if fields is not None and type(value).__name__ == "Match":
            # What came back, not how it was scored: a score that moves while the same records
            # come back in the same order is not an answer the test could act on.
            return ("Match", self.text(value.id), self.form(value.text), self.form(value.metadata))
        if fields is not None:
            return (type(value).__name__, tuple(self.form(getattr(value, f)) for f in fields))
        if isinstance(value, Sequence):  # a read-only view (a record's metadata, say)
            return ("seq", tuple(self.form(v) for v in value))
        # Anything else by its repr, without the memory address a default repr shows.
        return (type(value).__name__, self.text(_ADDRESS.sub("", repr(value))))


def strip(form: Any, volatile: frozenset[str]) -> Any:
    """``form`` without the mapping entries whose key is in ``volatile``."""
    if not volatile or not isinstance(form, tuple):
        return form
    if len(form) == 2 and form[0] == "map":
        return ("map", tuple((k, strip(v, volatile)) for k, v in form[1] if k not in volatile))
    return tuple(strip(part, volatile) for part in form)


def volatile_keys(one: Any, other: Any, found: set[str] | None = None) -> set[str]:
    """The mapping keys whose values differ between two forms of the same observation."""
    found = set() if found is None else found
    if not (isinstance(one, tuple) and isinstance(other, tuple)) or len(one) != len(other):
        return found
    if len(one) == 2 and one[0] == other[0] == "map":
        theirs = dict(other[1])
        for key, value in one[1]:
            if key in theirs and isinstance(key, str):
                if theirs[key] != value and not _nested(value):
                    found.add(key)
                else:
                    volatile_keys(value, theirs[key], found)
        return found
    for a, b in zip(one, other):
        volatile_keys(a, b, found)
    return found


def _nested(form: Any) -> bool:
    return isinstance(form, tuple) and len(form) == 2 and form[0] in ("map", "seq")


def volatile_between(one: Run, other: Run) -> frozenset[str]:
    """Metadata keys whose values changed between two runs with nothing changed."""
    found: set[str] = set()
    for a, b in zip(one.observed, other.observed):
        volatile_keys(a, b, found)
    return frozenset(found)


def _digest(form: Any) -> str:
    return hashlib.sha256(repr(form).encode("utf-8", "surrogatepass")).hexdigest()[:20]


def shown_object(value: Any) -> str:
    """An object's repr without the memory address or mock id a default repr shows."""
    return _ADDRESS.sub("", repr(value))


def vector_key(vector: Any) -> str | None:
    return _vector_key(vector)


def _vector_key(vector: Any) -> str | None:
    try:
        array = np.asarray(vector, dtype=np.float32)
    except (TypeError, ValueError):
        return None
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()[:20]


@dataclass
class _StoreState:
    ordinal: int
    snapshot: Any = None  # what a stale read still sees (None: empty, as when built)
    snapshot_taken: bool = False
    shape: tuple[Any, Any] | None = None  # (records view it was built from, shape-only twin)
    written: int = 0  # records written in this run (the write-lost mutation counts them)


@dataclass
class Run:
    """One run of a test: baseline (``mode=None``), control (``"control"``) or a mutation."""

    mode: str | None
    reference: Facts | None = None  # the baseline's facts, for a mutated run
    test_file: str | None = None
    facts: Facts = field(default_factory=Facts)
    doubles: set[str] = field(default_factory=set)
    received: Counter[tuple[int, Any]] = field(default_factory=Counter)  # (thread, form)
    observed: list[Any] = field(default_factory=list)  # the same forms, in order (volatility)
    answers: dict[str, list[Any]] = field(default_factory=dict)  # call -> (thread, answer)s
    lines: dict[str, str] = field(default_factory=dict)  # call -> where the test made it
    calls: dict[str, tuple[Any, ...]] = field(default_factory=dict)  # call -> its parts
    shown_as: dict[str, tuple[str, Any]] = field(default_factory=dict)  # id -> (text, meta)
    changes: dict[str, Change] = field(default_factory=dict)  # baseline: mutation -> example
    errors: dict[str, str] = field(default_factory=dict)
    canon: Canon = field(default_factory=Canon)
    stores: dict[int, _StoreState] = field(default_factory=dict)
    vector_texts: dict[str, str] = field(default_factory=dict)  # our embedder's rows -> text
    unforwarded: Counter[str] = field(default_factory=Counter)
    text_rows: dict[str, list[str]] = field(default_factory=dict)
    threads: set[int] = field(default_factory=set)  # ids of threads alive when it began
    seams: list[Any] = field(default_factory=list)  # the seam calls (placeborag._seams)
    embedded_texts: list[tuple[str, str]] = field(default_factory=list)  # framework embeddings

    @property
    def mutation(self) -> str | None:
        return None if self.mode in (None, "control") else self.mode

    @property
    def baseline(self) -> bool:
        return self.mode is None

    # -- what the test received ---------------------------------------------------------

    def receive(self, kind: str, value: Any) -> None:
        self.facts.reads += 1
        form = (kind, self.canon.form(value))
        self.received[(_thread(), form)] += 1
        self.observed.append(form)

    def receive_form(self, kind: str, form: Any) -> None:
        """Like :meth:`receive`, for a value already in its canonical form."""
        self.facts.reads += 1
        self.received[(_thread(), (kind, form))] += 1
        self.observed.append((kind, form))

    def forget(self, threads: set[int]) -> None:
        """Drop what threads still running at the end received: their count is chance."""
        if not threads:
            return
        self.received = Counter({k: n for k, n in self.received.items() if k[0] not in threads})
        self.answers = {
            d: kept
            for d, a in self.answers.items()
            if (kept := [x for x in a if x[0] not in threads])
        }

    def answer_lists(self, volatile: frozenset[str] = frozenset()) -> dict[str, list[Any]]:
        return {
            d: [[(i, _digest(strip(meta, volatile))) for i, meta in x[1]] for x in a]
            for d, a in self.answers.items()
        }

    def final_received(self, volatile: frozenset[str] = frozenset()) -> Counter[str]:
        """What the test received, each value by its digest, without the metadata keys
        ``volatile`` (values that change from run to run with nothing changed: a timestamp)."""
        out: Counter[str] = Counter()
        for (_, form), n in self.received.items():
            out[_digest(strip(form, volatile))] += n
        for key, n in self.unforwarded.items():
            if n > 0:
                out[_digest(("embedded", key))] += n
        return out

    def state_of(self, store: Any) -> _StoreState:
        state = self.stores.get(id(store))
        if state is None:
            state = self.stores[id(store)] = _StoreState(len(self.stores))
            self.doubles.update(_doubles_of(store))
        return state

    def forward_vector(self, vector: Any) -> str | None:
        """A vector handed to a store: the embedder's answer reached it, not the test. Returns
        the text it was embedded from, when it was."""
        key = _vector_key(vector)
        if key is None:
            return None
        if self.unforwarded.get(key, 0) > 0:
            self.unforwarded[key] -= 1
        return self.vector_texts.get(key)

    def forward_texts(self, texts: Iterable[str]) -> None:
        for text in texts:
            for key in self.text_rows.pop(text, ()):
                if self.unforwarded.get(key, 0) > 0:
                    self.unforwarded[key] -= 1

    def where_called(self) -> str | None:
        """The test's own line that led to this call (its file's innermost frame)."""
        if self.test_file is None:
            return None
        frame: Any = sys._getframe(2)
        while frame is not None:
            if frame.f_code.co_filename == self.test_file:
                return f"{frame.f_code.co_filename}:{frame.f_lineno}"
            frame = frame.f_back
        return None


def _thread() -> int:
    return id(threading.current_thread())


def _doubles_of(store: Any) -> tuple[str, ...]:
    embedder = type(store.embedder)
    if embedder.__module__.startswith("placeborag.") and embedder.__name__[:1] != "_":
        return ("FakeVectorStore", embedder.__name__)
    return ("FakeVectorStore",)


_lock = threading.RLock()
_run: Run | None = None
_local = threading.local()  # .inside: the audit's own computation, never recorded
_leaked: weakref.WeakSet[threading.Thread] = weakref.WeakSet()


def begin(mode: str | None, *, reference: Facts | None = None, test_file: str | None = None) -> Run:
    """Start recording a run: the baseline (None), the control ("control") or a mutation."""
    global _run
    if mode not in (None, "control"):
        _mutations.by_name(mode)
    run = Run(mode, reference, test_file)
    run.threads = {id(t) for t in threading.enumerate()}
    with _lock:
        _run = run
    return run


def end() -> Run | None:
    """Stop recording. Threads the run started that still run are charged to no later run."""
    global _run
    with _lock:
        run, _run = _run, None
    if run is None:
        return None
    left = set()
    for thread in threading.enumerate():
        if id(thread) not in run.threads and thread is not threading.current_thread():
            _leaked.add(thread)
            left.add(id(thread))
    run.forget(left)
    run.stores = {}
    return run


def active() -> Run | None:
    run = _run
    if run is None or getattr(_local, "inside", False):
        return None
    if _leaked and threading.current_thread() in _leaked:
        return None
    return run


class inside:
    """The audit's own queries (a twin's answer): not recorded, not mutated."""

    def __enter__(self) -> None:
        self.before = getattr(_local, "inside", False)
        self.quiet = getattr(_touched.local, "quiet", False)
        _local.inside = _touched.local.quiet = True

    def __exit__(self, *exc: object) -> None:
        _local.inside, _touched.local.quiet = self.before, self.quiet


# -- the instrumented doubles ------------------------------------------------------------------

_installed = False


def install() -> None:
    """Wrap the doubles' public methods (idempotent; only the audit calls it)."""
    global _installed
    with _lock:
        if _installed:
            return
        _installed = True
    from placeborag._embedder import FakeEmbedder
    from placeborag._scoring import _RecordingScorer
    from placeborag._store import FakeVectorStore

    _install_store(FakeVectorStore)
    _install_embedder(FakeEmbedder)
    original_arrive = _RecordingScorer._arrive

    @functools.wraps(original_arrive)
    def _arrive(self: Any, query: str, documents: Any) -> Any:
        call = original_arrive(self, query, documents)
        run = active()
        if run is not None:
            with _lock:
                run.doubles.add(type(self).__name__)
        return call

    _RecordingScorer._arrive = _arrive  # type: ignore[method-assign]


def _install_embedder(cls: Any) -> None:
    def wrap(name: str, batch: bool) -> None:
        original = getattr(cls, name)

        @functools.wraps(original)
        def method(self: Any, texts: Any) -> Any:
            run = active()
            if run is None:
                return original(self, texts)
            out = original(self, texts)  # checks the input as usual, raises as usual
            listed = list(texts) if batch else [texts]
            if run.mutation == "shape-only":
                shaped = _mutations.shape_vectors([str(t) for t in listed], self.dimensions)
                if name == "embed":
                    out = shaped[0].tolist()
                elif name == "embed_batch":
                    out = shaped.tolist()
                else:
                    out = shaped
            rows = [out] if not batch else out
            with _lock:
                run.doubles.add("FakeEmbedder")
                run.facts.embedded = True
                for text, row in zip(listed, rows):
                    key = _vector_key(row)
                    if key is None:
                        continue
                    run.vector_texts[key] = str(text)
                    run.unforwarded[key] += 1
                    run.text_rows.setdefault(str(text), []).append(key)
            return out

        setattr(cls, name, method)

    wrap("embed", False)
    wrap("embed_batch", True)
    wrap("embed_array", True)


def _tuple_ids(ids: Any) -> Any:
    if ids is None or isinstance(ids, (str, bytes)):
        return ids
    try:
        return tuple(ids)
    except TypeError:
        return ids


def _describe(call: Call, default_k: int) -> str:
    text = call.text if call.text is not None else "<a vector>"
    parts = [f"query {text!r}", f"k={call.k_or(default_k)}"]
    if call.where is not None:
        parts.append(f"where={dict(call.where)!r}")
    if call.ids is not None:
        parts.append(f"ids={list(call.ids)!r}")
    return ", ".join(parts)


def _install_store(cls: Any) -> None:
    _install_lifecycle(cls)
    _install_queries(cls)
    _install_writes(cls)
    _install_delete(cls)
    _install_reads(cls)


def _install_lifecycle(cls: Any) -> None:
    """A store built during a run reads stale as empty; ``refresh()`` catches a stale read up."""
    original_init = cls.__init__
    original_refresh = cls.refresh

    @functools.wraps(original_init)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        run = active()
        if run is not None:
            with _lock:
                state = run.state_of(self)
                state.snapshot, state.snapshot_taken = None, True

    @functools.wraps(original_refresh)
    def refresh(self: Any) -> None:
        original_refresh(self)
        run = active()
        if run is None or self.visibility != "immediate":
            return
        with inside():
            snapshot = self.with_options()
        with _lock:
            state = run.state_of(self)
            state.snapshot, state.snapshot_taken = snapshot, True

    cls.__init__ = __init__
    cls.refresh = refresh


def _install_queries(cls: Any) -> None:
    """Queries: recorded, predicted under each mutation (the baseline), mutated (a rerun)."""
    original_query = cls.query
    original_by_vector = cls.query_by_vector

    def run_query(self: Any, call: Call, context: Any) -> Any:
        return _recorded_query(self, call, context, _ask_original)

    def query(
        self: Any,
        text: Any,
        k: Any = None,
        where: Any = None,
        *,
        ids: Any = None,
        context: Any = None,
    ) -> Any:
        if _run is None:
            return original_query(self, text, k, where, ids=ids, context=context)
        return run_query(self, Call(text, None, k, where, _tuple_ids(ids)), context)

    def query_by_vector(
        self: Any,
        vector: Any,
        k: Any = None,
        where: Any = None,
        *,
        text: Any = None,
        ids: Any = None,
        context: Any = None,
    ) -> Any:
        if _run is None:
            return original_by_vector(self, vector, k, where, text=text, ids=ids, context=context)
        if vector is None:
            return original_by_vector(self, vector, k, where, text=text, ids=ids, context=context)
        return run_query(self, Call(text, vector, k, where, _tuple_ids(ids)), context)

    def _ask_original(store: Any, call: Call, context: Any) -> Any:
        if call.vector is not None:
            return original_by_vector(
                store,
                call.vector,
                call.k,
                call.where,
                text=call.text,
                ids=call.ids,
                context=context,
            )
        return original_query(store, call.text, call.k, call.where, ids=call.ids, context=context)

    cls.query = functools.wraps(original_query)(query)
    cls.query_by_vector = functools.wraps(original_by_vector)(query_by_vector)


def _answer(
    run: Run, state: _StoreState, store: Any, name: str, call: Call, source: str | None
) -> list[Any]:
    with inside():
        return _mutations.answer_under(
            name,
            store,
            call,
            snapshot=state.snapshot,
            shape_twin=lambda: _shape_twin(state, store),
            shape_query=lambda c: _shape_call(c, source, store),
        )


def _predict(
    run: Run,
    state: _StoreState,
    store: Any,
    call: Call,
    source: str | None,
    matches: list[Any],
    described: str,
    immediate: bool,
) -> None:
    """Beside the usual answer: what each answer- and request-side mutation answers."""
    usual = [m.id for m in matches]
    for mutation in _mutations.store_mutations():
        name = mutation.name
        if mutation.side == "write" or name in run.changes or name in run.errors:
            continue
        if mutation.skip_reason(run.facts) is not None:
            continue
        if name == "stale-reads" and not immediate:
            continue
        try:
            if mutation.side == "request":
                sent = _mutations.request_under(name, store, call)
                with inside():
                    other = _mutations.ask(store.with_options(), sent)
            else:
                other = _answer(run, state, store, name, call, source)
        except Exception as error:  # the audit's failure, never the test's
            with _lock:
                run.errors.setdefault(name, f"{type(error).__name__}: {error}")
            continue
        mutated = [m.id for m in other]
        if _records(other) != _records(matches):  # a score alone moving is no change
            with _lock:
                run.canon.see(mutated)
                run.changes[name] = Change(
                    described,
                    usual,
                    mutated,
                    run.lines.get(described),
                    run.calls.get(described),
                )


def _recorded_query(self: Any, call: Call, context: Any, ask_original: Any) -> Any:
    """One query during a run: recorded, mutated as the run says, predicted (baseline)."""
    run = active()
    if run is None:
        return ask_original(self, call, context)
    default_k = self.profile.default_k
    with _lock:
        state = run.state_of(self)
        facts = run.facts
        facts.queries += 1
        facts.filtered |= call.where is not None
        facts.restricted |= call.ids is not None
        if isinstance(call.where, Mapping):
            facts.filter_keys |= _field_names(call.where)
        facts.k_given |= call.k is not None and call.k != default_k
        immediate = self.visibility == "immediate"
        facts.immediate |= immediate
        if call.ids is not None:
            run.canon.see(i for i in call.ids if isinstance(i, str))
        if not state.snapshot_taken:  # built before the run: stale from now on
            with inside():
                state.snapshot, state.snapshot_taken = self.with_options(), True
    source = None
    if call.vector is not None:
        source = run.forward_vector(call.vector)
    elif isinstance(call.text, str):
        run.forward_texts([call.text])
    mutation = run.mutation
    side = _mutations.by_name(mutation).side if mutation else None
    sent = _mutations.request_under(mutation, self, call) if side == "request" else call  # type: ignore[arg-type]
    matches = ask_original(self, sent, context)
    if side in ("embedder", "answer") and not (mutation == "stale-reads" and not immediate):
        matches = _answer(run, state, self, mutation, call, source)  # type: ignore[arg-type]
    described = _describe(call, default_k)
    real = [m for m in matches if not _mutations.is_padding(m)]
    with _lock:
        run.canon.see(m.id for m in real)
        for m in real:
            run.shown_as.setdefault(run.canon.text(m.id), (m.text, m.metadata))
        run.answers.setdefault(described, []).append(
            (
                _thread(),
                [(run.canon.text(m.id), run.canon.form(m.metadata)) for m in real],
            )
        )
        run.calls.setdefault(
            described, (call.text, call.k_or(default_k), call.where, call.vector is not None)
        )
        if described not in run.lines:
            line = run.where_called()
            if line is not None:
                run.lines[described] = line
    if run.baseline:
        _predict(run, state, self, call, source, matches, described, immediate)
    with _lock:
        run.receive("query", matches)
    return matches


def _records(matches: list[Any]) -> list[tuple[Any, ...]]:
    return [(m.id, m.text, m.metadata) for m in matches]


def _field_names(where: Mapping[str, Any]) -> set[str]:
    names: set[str] = set()
    for key, value in where.items():
        if not isinstance(key, str):
            continue
        if key.startswith("$"):
            if isinstance(value, (list, tuple)):
                for part in value:
                    if isinstance(part, Mapping):
                        names |= _field_names(part)
            elif isinstance(value, Mapping):
                names |= _field_names(value)
        else:
            names.add(key)
    return names


def _shape_twin(state: _StoreState, store: Any) -> Any:
    records = store.records()
    if state.shape is not None and state.shape[0] is records:
        return state.shape[1]
    dims = records.dimensions or getattr(store.embedder, "dimensions", None) or 256
    twin = store.reembedded(_mutations.ShapeOnlyEmbedder(int(dims)))
    state.shape = (records, twin)
    return twin


def _shape_call(call: Call, source: str | None, store: Any) -> Call:
    """Under shape-only, a query vector our embedder made from a text is that text's
    shape-only vector (as it is in the mutated run, where the embedder answers it)."""
    if call.vector is None or source is None:
        return call
    from dataclasses import replace

    dims = len(np.asarray(call.vector))
    return replace(call, vector=_mutations.shape_vectors([source], dims)[0])


def _install_writes(cls: Any) -> None:
    original_upsert = cls.upsert
    original_many = cls.upsert_many
    original_vectors = cls.upsert_vectors

    @functools.wraps(original_upsert)
    def upsert(self: Any, id: Any, text: Any, metadata: Any = None) -> None:
        if _run is None:
            return original_upsert(self, id, text, metadata)  # type: ignore[no-any-return]

        def do(rows: Any, metas: list[Any]) -> None:
            if rows is not None and not rows:
                return None
            return original_upsert(self, id, text, metas[0])  # type: ignore[no-any-return]

        return _write(self, [id], [text], [metadata], do)  # type: ignore[no-any-return]

    @functools.wraps(original_many)
    def upsert_many(self: Any, ids: Any, texts: Any, metadatas: Any = None) -> None:
        if _run is None:
            return original_many(self, ids, texts, metadatas)  # type: ignore[no-any-return]
        try:
            id_list, text_list = list(ids), list(texts)
            meta_list = list(metadatas) if metadatas is not None else [None] * len(id_list)
        except TypeError:
            return original_many(self, ids, texts, metadatas)  # type: ignore[no-any-return]

        def do(rows: Any, metas: list[Any]) -> None:
            if rows is None:
                given = metas if metadatas is not None else None
                return original_many(self, id_list, text_list, given)  # type: ignore[no-any-return]
            return original_many(  # type: ignore[no-any-return]
                self,
                [id_list[i] for i in rows],
                [text_list[i] for i in rows],
                [metas[i] for i in rows],
            )

        return _write(self, id_list, text_list, meta_list, do)  # type: ignore[no-any-return]

    @functools.wraps(original_vectors)
    def upsert_vectors(
        self: Any, ids: Any, vectors: Any, texts: Any = None, metadatas: Any = None
    ) -> None:
        run = active()
        if run is None:
            return original_vectors(self, ids, vectors, texts, metadatas)  # type: ignore[no-any-return]
        try:
            id_list, vector_list = list(ids), list(vectors)
            text_list = list(texts) if texts is not None else None
            meta_list = list(metadatas) if metadatas is not None else [None] * len(id_list)
        except TypeError:
            return original_vectors(self, ids, vectors, texts, metadatas)  # type: ignore[no-any-return]
        for vector in vector_list:
            run.forward_vector(vector)

        def do(rows: Any, metas: list[Any]) -> None:
            given = metas if metadatas is not None else None
            if rows is None:
                return original_vectors(self, id_list, vector_list, text_list, given)  # type: ignore[no-any-return]
            if not rows:
                return None
            return original_vectors(  # type: ignore[no-any-return]
                self,
                [id_list[i] for i in rows],
                [vector_list[i] for i in rows],
                None if text_list is None else [text_list[i] for i in rows],
                None if given is None else [given[i] for i in rows],
            )

        return _write(self, id_list, text_list or [""] * len(id_list), meta_list, do)  # type: ignore[no-any-return]

    cls.upsert = upsert
    cls.upsert_many = upsert_many
    cls.upsert_vectors = upsert_vectors


def _write(self: Any, ids: list[Any], texts: list[Any], metas: list[Any], do: Any) -> Any:
    """Run a write (``do(rows, metas)``) as the run's mutation says; count it."""
    run = active()
    if run is None:
        return do(None, metas)
    with _lock:
        state = run.state_of(self)
        run.canon.see(ids)
        for value, text, meta in zip(ids, texts, metas):
            if isinstance(value, str):
                run.shown_as.setdefault(run.canon.text(value), (text, meta))
    run.forward_texts(t for t in texts if isinstance(t, str))
    rows = None
    mutation = run.mutation
    if mutation == "write-lost":
        rows = _mutations.kept_rows(mutation, run.reference, state.ordinal, state.written, len(ids))
    elif mutation == "metadata-key-lost" and run.reference is not None:
        key = run.reference.dropped_key()
        if key is not None:
            metas = _mutations.without_key(metas, key)
    result = do(rows, metas)
    with _lock:
        state.written += len(ids)
        run.facts.written[state.ordinal] = run.facts.written.get(state.ordinal, 0) + len(ids)
        for meta in metas:
            if isinstance(meta, Mapping):
                for key in meta:
                    if isinstance(key, str):
                        run.facts.metadata_keys[key] = run.facts.metadata_keys.get(key, 0) + 1
    return result


def _install_delete(cls: Any) -> None:
    original_delete = cls.delete

    @functools.wraps(original_delete)
    def delete(self: Any, ids: Any, *, missing_ok: bool = False) -> Any:
        run = active()
        if run is None:
            return original_delete(self, ids, missing_ok=missing_ok)
        if run.mutation == "delete-ignored":
            with inside():
                result = original_delete(self.with_options(), ids, missing_ok=missing_ok)
        else:
            result = original_delete(self, ids, missing_ok=missing_ok)
        with _lock:
            run.state_of(self)
            run.facts.deleted += int(result)
        return result

    cls.delete = delete


def _install_reads(cls: Any) -> None:
    """Every read of a store is something the test received."""

    def observed(name: str, log: bool = False) -> None:
        original = cls.__dict__[name]
        if isinstance(original, property):
            getter: Any = original.fget

            def fget(self: Any) -> Any:
                value = getter(self)
                run = active()
                if run is not None:
                    with _lock:
                        run.state_of(self)
                        run.facts.read_log |= log
                        run.receive(name, value)
                return value

            setattr(cls, name, property(functools.wraps(getter)(fget), doc=original.__doc__))
            return

        @functools.wraps(original)
        def method(self: Any, *args: Any, **kwargs: Any) -> Any:
            value = original(self, *args, **kwargs)
            run = active()
            if run is not None:
                with _lock:
                    run.state_of(self)
                    run.receive(name, (args, value))
            return value

        setattr(cls, name, method)

    for name in ("__len__", "__contains__", "get", "records", "ids", "pending_writes"):
        observed(name)
    for name in ("queries", "last_query", "query_count"):
        observed(name, log=True)
