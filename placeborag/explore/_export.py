"""Export what the explorer shows as a pytest module a reviewer would accept.

:func:`build_export` takes the store on screen, the query, ``k`` and ``where`` and a corpus (a
selection of ids, or by default the smallest corpus that shows what the screen shows) and
writes a module that reads like a hand-written test: the documents as Python literals, one
per line; every store and embedder option the test depends on as a keyword argument; the
query, ``k`` and ``where`` as literals; a ``build_store()`` and a pytest fixture over it; and
one test per behaviour the ranking shows (post-filter starvation, a tie the profile's rule
decided, documents recall lost), each asserting the ordered ids as a list literal and the
behaviour in words, never a score's exact value. With no such behaviour the test pins the
ranking and says so. The docstring says what the test pins in the proof's words
(:func:`placeborag.explore._verdict.verdict`). Given ``under_test`` (a function of the
application), the module calls it with the designed store and asserts what it returns instead:
a test of the application, proved by the same mutants.

Every user value reaches the module through :mod:`placeborag.explore._literals` (``repr`` of
plain values and ``datetime`` constructor calls, read back with its ``read_literal``: what
``ast.literal_eval`` reads, and those calls); nothing the user typed lands in a docstring or a
comment, and a name only as ``[a-z0-9_]`` (the fixture's, :func:`identifier`) or as a checked
dotted name (the application's function, :func:`dotted_name`). Generated names never collide
with the module's own (:func:`fixture_name`). The preview (the ranking the module asserts) is
computed by building the store exactly as the module does, from the values read back.
:mod:`placeborag.explore._proof` then runs the module, and its mutants (the behaviour's setting
switched off), under pytest in a temporary folder.

A store whose vectors a :class:`~placeborag.FakeEmbedder` reproduces is rebuilt from texts and
the embedder's options: a native store, and a store an adapter filled over a ``FakeEmbedder``
(its embedder a wrapper naming the ``FakeEmbedder`` as ``.embedder``), checked row by row and
by the ranking. Its documents carry their own text (a LlamaIndex node's, not what LlamaIndex
embedded: :func:`placeborag.integrations.document_text`); what was embedded, where it differs,
is kept in ``HEADERS`` (what came before the text: a LlamaIndex node's metadata header) or,
where it is not a header and the text, in ``EMBEDDED``. Any other store (your vectors, a replay
recording) exports its vectors beside the module as a recording
(:func:`~placeborag.record_vectors`, pinned by the recording's full hash,
:attr:`~placeborag.Recording.sha256`) that the module replays with
:class:`~placeborag.ReplayEmbedder`. ``ids=`` names the exported documents (a mapping, or a
metadata key), so a re-export of the same documents gives the same bytes whatever ids the
application gave them.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from placeborag import (
    FakeEmbedder,
    FakeVectorStore,
    Match,
    PlaceboragTypeError,
    PlaceboragValueError,
    Recording,
    StoreOptions,
    get_profile,
    record_vectors,
)
from placeborag.explore._application import Application
from placeborag.explore._application import application as resolve_application
from placeborag.explore._export_names import (
    document_names,
    document_rows,
    fixture_name,
)
from placeborag.explore._literals import (
    LINE_LENGTH,
    has_dates,
    identifier,
    layout,
    literal,
    plain,
    read_node,
)
from placeborag.explore._scenario import Scenario
from placeborag.explore._verdict import (
    AS_EXPORTED,
    RECALL,
    STARVATION,
    TIE,
    Behaviour,
    Proof,
    claim,
    mutant_key,
    verdict,
)
from placeborag.toolkit import check_int, check_path, replace_directory, shown, write_text

__all__ = [
    "MAX_DOCUMENTS",
    "Behaviour",
    "Export",
    "Proof",
    "build_export",
    "export_pytest",
    "fixture_name",
    "smallest_corpus",
]

#: The most documents an export takes without ``max_documents=None``: a fixture is small.
MAX_DOCUMENTS = 200
#: The constructor's defaults: an option equal to its default is not written out.
_STORE_DEFAULTS: dict[str, Any] = {
    key: value for key, value in StoreOptions().items() if key not in ("profile", "filter_mode")
}
#: Options whose None means "the profile's own": one equal to the profile's is not written.
_PROFILE_OWN = ("metric", "tie_order", "on_existing_id", "pad_missing")
_EMBEDDER_DEFAULTS: dict[str, Any] = {
    "model_name": "placebo-embed-v1",
    "dimensions": 256,
    "clusters": None,
    "cluster_spread": 0.5,
    "cluster_match": "exact",
}
_VECTORS_SUFFIX = ".vectors"
#: Tie rules tried, in order, for a mutant that decides a tie differently.
_OTHER_TIE_RULES = ("reverse", "id", "insertion", "shuffle")


@dataclass(frozen=True)
class Export:
    """An exported test: the module's source, the conftest-ready fixture, the corpus and the
    ranking the module asserts, the behaviours it pins and, once run, the proof.

    ``ids`` are the exported documents' ids in the store, ``names`` the ids the module gives
    them (the same unless ``ids=`` named them). ``vectors`` holds the side files of a store
    whose vectors no ``FakeEmbedder`` reproduces (the recording's ``manifest.json`` and
    ``vectors.bin``), written to ``<module>.vectors/`` by :meth:`save`; ``None`` when the
    module rebuilds the store from texts. ``answer`` is what the application's function
    (``under_test``) returned on the designed store, the value the module asserts.
    """

    source: str
    conftest: str
    ids: tuple[str, ...]
    preview: tuple[Match, ...]
    behaviours: tuple[Behaviour, ...]
    mutants: Mapping[str, str] = field(repr=False)
    vectors: Mapping[str, bytes] | None = field(default=None, repr=False)
    proof: Proof | None = None
    names: tuple[str, ...] = ()
    answer: Any = field(default=None, repr=False)
    import_roots: tuple[str, ...] = field(default=(), repr=False)

    @property
    def verdict(self) -> str:
        """What the test pins, from the proof (or, unproved, from the behaviours found)."""
        if self.proof is not None:
            return self.proof.verdict
        return "not run yet: " + claim(self.behaviours)

    def save(self, path: str | os.PathLike[str], *, overwrite: bool = False) -> list[Path]:
        """Write the module to ``path`` (and its vectors to ``<path>.vectors/``), atomically.

        An existing file is never replaced unless ``overwrite=True``: it raises, naming it.
        Returns the paths written.
        """
        return _save(self.source, path, self.vectors, overwrite)

    def save_conftest(self, path: str | os.PathLike[str], *, overwrite: bool = False) -> list[Path]:
        """Write the fixture alone (for a ``conftest.py``) to ``path``, as :meth:`save`."""
        return _save(self.conftest, path, self.vectors, overwrite)


def _save(
    source: str, path: str | os.PathLike[str], vectors: Mapping[str, bytes] | None, overwrite: bool
) -> list[Path]:
    target = Path(check_path(path, "path", named=True))
    if target.suffix != ".py":
        raise PlaceboragValueError(f"path={shown(str(path))} must name a .py file")
    side = target.with_suffix(_VECTORS_SUFFIX)
    written = [target] + ([side] if vectors is not None else [])
    if not overwrite:
        existing = [p for p in written if p.exists()]
        if existing:
            raise PlaceboragValueError(
                f"{' and '.join(map(str, existing))} already"
                f" exist{'s' if len(existing) == 1 else ''}; pass overwrite=True (tick "
                "'overwrite' in the app) to replace it"
            )
    if vectors is not None:
        if side.exists() and not side.is_dir():
            raise PlaceboragValueError(f"{side} exists and is not a directory")
        extra = (
            sorted(p.name for p in side.iterdir() if p.name not in vectors) if side.is_dir() else []
        )
        if extra:
            raise PlaceboragValueError(
                f"{side} holds files other than the export's vectors ({', '.join(extra)}); "
                "refusing to replace it"
            )
        replace_directory(side, vectors)
    write_text(target, source)
    return written


def build_export(
    store: FakeVectorStore,
    query: str,
    k: int,
    where: Mapping[str, Any] | None = None,
    *,
    selection: Sequence[str] | None = None,
    name: str = "scenario",
    keep_metadata: bool | Sequence[str] | None = None,
    max_documents: int | None = MAX_DOCUMENTS,
    ids: Mapping[str, str] | str | None = None,
    under_test: str | Callable[..., Any] | None = None,
    prove: bool = True,
) -> Export:
    """A pytest module asserting the ranking of ``store``'s records for ``query``.

    ``selection`` (ids of ``store``) is the corpus; without it, :func:`smallest_corpus`. A
    selection of more than ``max_documents`` raises, naming the size of the smallest corpus
    that shows the same behaviour (``max_documents=None`` exports any size). Metadata keeps the
    keys ``where`` reads (``keep_metadata=True``: every key; a list: those keys too).

    ``ids`` names the exported documents: a mapping from the store's ids to the names the
    module uses (an id left out keeps its own), or a metadata key, whose value names each
    document (``ids="file_name"``: ``"shipping.txt"``, and ``"shipping.txt#1"``,
    ``"shipping.txt#2"`` where documents share one). ``under_test`` is the application's
    function, ``"package.module:function"`` or the function itself (defined at the top of an
    importable module): the module imports it, calls ``function(store, QUERY)`` with the
    designed store and asserts that it returns what it returned here (a plain value: ids, a
    text, a list or dict of them). With ``prove=True`` the module and its mutants are run
    under pytest (:attr:`Export.proof`).
    """
    _check_arguments(store, query, name, keep_metadata, max_documents)
    application = resolve_application(under_test)
    records = store.records()
    trace = store.trace(query, k, where)  # checks k and where as a query does
    k = int(trace.k)
    if selection is None:
        chosen = smallest_corpus(store, query, k, where)
    else:
        chosen = _selected(records, selection)
        if max_documents is not None and len(chosen) > max_documents:
            small = smallest_corpus(store, query, k, where)
            raise PlaceboragValueError(
                f"the selection holds {len(chosen):,} documents, more than max_documents="
                f"{max_documents:,}: a fixture is small. The smallest corpus that still shows "
                f"what the screen shows has {len(small):,} (the top-k window, what the other "
                "filter mode returns, the tie groups, the ids recall lost and the next k): "
                "export it with selection=None, or pass max_documents=None to export them all"
            )
    keep_ids = set(chosen)
    # By position, not by id: under on_existing_id="duplicate" two records share an id.
    positions = [p for p, i in enumerate(records.ids) if i in keep_ids]
    names = document_names(records, positions, ids)
    documents, embedded = document_rows(records, positions, names, _kept_keys(where, keep_metadata))
    spec = _Spec(
        documents=documents,
        query=plain(query, "query"),
        k=k,
        where=None if where is None else plain(dict(where), "where"),
        options=_store_options(store),
        fixture=fixture_name(name),
    )
    if application is not None:
        spec.application = application.named(spec.fixture)
    with tempfile.TemporaryDirectory(prefix="placeborag-export-") as folder:
        vectors, built = _rebuilt(spec, store, positions, embedded, Path(folder))
        preview = tuple(built.query(spec.query, k=k, where=spec.where))
        behaviours = _behaviours(built, spec)
        if application is not None:
            spec.answer = application.answer(spec.store(Path(folder) / "r"), spec.query)
    mutants = {
        mutant_key(b): _render(spec, preview, behaviours, {b.setting: b.flipped})
        for b in behaviours
    }
    source = _verified(_render(spec, preview, behaviours), spec)
    export = Export(
        source=source,
        conftest=_render(spec, preview, behaviours, conftest=True),
        ids=tuple(records.ids[p] for p in positions),
        preview=preview,
        behaviours=behaviours,
        mutants=mutants,
        vectors=vectors,
        names=tuple(names),
        answer=spec.answer,
        import_roots=() if application is None else (application.root,),
    )
    if prove:
        export = _proved(export, spec)
    return export


def _proved(export: Export, spec: _Spec) -> Export:
    """``export`` with its proof; a docstring the proof contradicts (a mutant that still
    passes) says what the proof found instead."""
    from placeborag.explore._proof import prove

    proof = prove(
        export.source,
        export.mutants,
        export.behaviours,
        vectors=export.vectors,
        import_roots=export.import_roots,
    )
    source = export.source
    if proof.outcomes.get(AS_EXPORTED) == "passed" and proof.verdict != verdict(export.behaviours):
        source = _verified(
            _render(spec, export.preview, export.behaviours, said=proof.verdict), spec
        )
    return dataclasses.replace(export, source=source, proof=proof)


def export_pytest(
    scenario: Scenario, *, selection: Sequence[str] | None = None, prove: bool = False
) -> str:
    """The source of a pytest module asserting ``scenario``'s ranking (see :func:`build_export`)."""
    if not isinstance(scenario, Scenario):
        raise PlaceboragTypeError(f"scenario={shown(scenario)} must be a Scenario")
    return build_export(
        scenario.store(),
        scenario.query,
        scenario.k,
        scenario.where,
        selection=selection,
        name=scenario.name,
        prove=prove,
    ).source


def _check_arguments(
    store: Any, query: Any, name: Any, keep_metadata: Any, max_documents: Any
) -> None:
    if not isinstance(store, FakeVectorStore):
        raise PlaceboragTypeError(
            f"store={shown(store)} must be a FakeVectorStore, not {type(store).__name__}"
        )
    if not isinstance(query, str):
        raise PlaceboragTypeError(f"query={shown(query)} must be a str, not {type(query).__name__}")
    if not isinstance(name, str):
        raise PlaceboragTypeError(f"name={shown(name)} must be a str, not {type(name).__name__}")
    if max_documents is not None:
        check_int(max_documents, "max_documents", minimum=1)
    if not (keep_metadata is None or isinstance(keep_metadata, bool)) and (
        isinstance(keep_metadata, (str, bytes))
        or not isinstance(keep_metadata, Sequence)
        or not all(isinstance(key, str) for key in keep_metadata)
    ):
        raise PlaceboragTypeError(
            f"keep_metadata={shown(keep_metadata)} must be None (the keys where reads), True "
            "(every key) or a list of key names"
        )
    if not isinstance(store.options["profile"], str):
        raise PlaceboragTypeError(
            f"the store's profile={store.options['profile']!r} is a Profile object; an export "
            "rebuilds the store from a profile name: build it with profile='<name>' and the "
            "options that change the profile (metric=, tie_order=, ...)"
        )


# -- the corpus ------------------------------------------------------------------------------


def smallest_corpus(
    store: FakeVectorStore, query: str, k: int, where: Mapping[str, Any] | None = None
) -> list[str]:
    """The smallest corpus that still shows what ``query`` does in ``store``, in the store's
    order: the top-k window (the post-filter's, in post mode), what the other filter mode
    returns, every member of a tie the ranking met, the ids recall lost from the top-k and the
    next ``k`` reachable records below the cut by score."""
    records = store.records()
    trace = store.trace(query, k, where)
    keep = set(trace.top_k) | set(trace.returned)
    if where:
        flipped = "pre" if store.filter_mode == "post" else "post"
        keep.update(store.with_options(filter_mode=flipped).trace(query, k, where).returned)
    for tie in trace.ties:
        keep.update(tie.ids)
    if trace.recall < 1:
        keep.update(trace.ideal_top_k)
    scores = np.asarray(trace.score, dtype=np.float64)
    sign = -1.0 if trace.higher_is_better else 1.0
    rest = [
        p
        for p, i in enumerate(trace.ids)
        if i not in keep and records.reachable[p] and not np.isnan(scores[p])
    ]
    rest.sort(key=lambda p: (sign * scores[p], p))
    keep.update(trace.ids[p] for p in rest[: trace.k])
    return [i for i in records.ids if i in keep]


def _selected(records: Any, selection: Sequence[str]) -> list[str]:
    if isinstance(selection, (str, bytes, Mapping)) or not isinstance(
        selection, (Sequence, set, frozenset)
    ):
        raise PlaceboragTypeError(
            f"selection={shown(selection)} must be a list of ids, not {type(selection).__name__}"
        )
    wanted = list(selection)
    if not wanted:
        raise PlaceboragValueError(
            "selection=[] is empty: select at least one id (or pass selection=None to "
            "export the smallest corpus that shows the behaviour)"
        )
    for i, value in enumerate(wanted):
        if not isinstance(value, str):
            raise PlaceboragTypeError(
                f"selection[{i}]={shown(value)} must be a str id, not {type(value).__name__}"
            )
        records.position(value)  # an unknown id raises, naming the nearest ones
    keep = set(wanted)
    return [i for i in records.ids if i in keep]


def _kept_keys(where: Any, keep: bool | Sequence[str] | None) -> set[str] | None:
    """The metadata keys exported (None: every key)."""
    if keep is True:
        return None
    keys = _where_keys(where)
    if keep not in (None, False):
        keys.update(keep)  # type: ignore[arg-type]
    return keys


def _where_keys(where: Any) -> set[str]:
    """The metadata keys a filter reads (its non-operator keys, at any depth)."""
    keys: set[str] = set()
    if isinstance(where, Mapping):
        for key, value in where.items():
            if isinstance(key, str) and not key.startswith("$"):
                keys.add(key)
            keys |= _where_keys(value)
    elif isinstance(where, (list, tuple)):
        for item in where:
            keys |= _where_keys(item)
    return keys


# -- the store -------------------------------------------------------------------------------


def _store_options(store: FakeVectorStore) -> dict[str, Any]:
    """The options written out: the profile and filter mode always (the ranking rests on
    them), every other one that changes the store: not its constructor's default, and not
    the profile's own value given again (``metric="cosine"`` under ``"chroma"``)."""
    given = store.options
    profile = get_profile(given["profile"])
    options = {"profile": given["profile"], "filter_mode": store.filter_mode}
    for key, default in _STORE_DEFAULTS.items():
        value = plain(given[key], f"the store option {key}")
        if value == default and type(value) is type(default):
            continue
        if key in _PROFILE_OWN and value == getattr(profile, key):
            continue
        options[key] = value
    return options


def _embedder_options(embedder: FakeEmbedder) -> dict[str, Any]:
    options = {
        "model_name": embedder.model_name,
        "dimensions": int(embedder.dimensions),
        "clusters": {str(k): [str(t) for t in v] for k, v in embedder.clusters.items()} or None,
        "cluster_spread": embedder.cluster_spread,
        "cluster_match": embedder.cluster_match,
    }
    return {
        key: plain(value, f"the embedder option {key}")
        for key, value in options.items()
        if value != _EMBEDDER_DEFAULTS[key]
    }


def _wrapped_fake(store: FakeVectorStore) -> FakeEmbedder | None:
    """The ``FakeEmbedder`` behind an adapter's wrapper (``.embedder``), if there is one."""
    inner = getattr(store.embedder, "embedder", None)
    return inner if type(inner) is FakeEmbedder else None


def _rebuilt(
    spec: _Spec,
    store: FakeVectorStore,
    positions: Sequence[int],
    embedded: dict[str, str] | None,
    folder: Path,
) -> tuple[dict[str, bytes] | None, FakeVectorStore]:
    """Decide how the module makes its store, set ``spec`` so, and build it: from texts and
    the embedder's options where a ``FakeEmbedder`` reproduces the vectors, else from a
    recording (whose files are returned). Exactly a ``FakeEmbedder``: a subclass may embed
    differently, so its vectors are recorded."""
    if type(store.embedder) is FakeEmbedder and embedded is not None:
        spec.embedder, spec.embedded = _embedder_options(store.embedder), embedded
        return None, spec.store(folder / "r")
    vectors, spec.sha256 = _recording(store, positions, spec.query, folder / "r")
    recorded = spec.store(folder / "r")
    fake = _wrapped_fake(store)
    if fake is not None and embedded is not None:
        texts = dataclasses.replace(spec, embedder=_embedder_options(fake), embedded=embedded)
        twin = texts.store(folder / "r")
        if _same_vectors(twin, recorded, spec.query) and _same_ranking(twin, recorded, spec):
            spec.embedder, spec.embedded, spec.sha256 = texts.embedder, embedded, ""
            return None, twin
    return vectors, recorded


def _same_vectors(a: FakeVectorStore, b: FakeVectorStore, query: str) -> bool:
    """The same rows bit for bit, and the same query vector."""
    return bool(
        np.array_equal(a.records().vectors, b.records().vectors)
        and np.array_equal(a.embed_query(query), b.embed_query(query))
    )


def _same_ranking(a: FakeVectorStore, b: FakeVectorStore, spec: _Spec) -> bool:
    """The same ids, in the same order, for the query and for every what-if a test tries."""
    whatifs: list[dict[str, Any]] = [{}, {"filter_mode": "pre"}, {"recall": 1.0}]
    whatifs += [{"tie_order": rule} for rule in _OTHER_TIE_RULES]
    for changes in whatifs:
        x, y = a.with_options(**changes), b.with_options(**changes)
        if [m.id for m in x.query(spec.query, k=spec.k, where=spec.where)] != [
            m.id for m in y.query(spec.query, k=spec.k, where=spec.where)
        ]:
            return False
    return True


def _recording(
    store: FakeVectorStore, positions: Sequence[int], query: str, folder: Path
) -> tuple[dict[str, bytes], str]:
    """The exported records' vectors and the query's as a recording: its files' bytes, and
    the recording's hash (of everything replay answers from).

    The rows are named ``DOCUMENTS[i]`` (the module's row ``i`` holds the id and text: two
    records may share a text, never a row) and recorded as float64, so the store's float32
    rows and its float64 query vector are held exactly.
    """
    records = store.records()
    rows = np.asarray(records.vectors[positions], dtype=np.float64)
    query_vector = np.asarray(store.embed_query(query), dtype=np.float64)
    model = getattr(store.embedder, "model_name", None)
    try:
        recording = record_vectors(
            folder,
            embed_documents=lambda _: rows,
            embed_query=lambda _: query_vector[None, :],
            documents=[f"DOCUMENTS[{i}]" for i in range(len(positions))],
            queries=[query],
            model=model if isinstance(model, str) else "exported vectors",
            provenance={"exported by": "placeborag.explore.build_export"},
            dtype="float64",
        )
    except PlaceboragValueError as exc:
        raise PlaceboragValueError(
            f"the vectors cannot be recorded beside the module (a recording is UTF-8 JSON): {exc}"
        ) from None
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}, recording.sha256


@dataclass
class _Spec:
    """Everything the module is made of, as plain values."""

    documents: list[tuple[str, str, dict[str, Any]]]
    query: str
    k: int
    where: dict[str, Any] | None
    options: dict[str, Any]
    fixture: str
    embedder: dict[str, Any] | None = None
    embedded: dict[str, str] = field(default_factory=dict)
    sha256: str = ""
    application: Application | None = None
    answer: Any = None

    def headers(self) -> dict[str, str] | None:
        """What was embedded before each document's text, by id (sorted), where every
        embedded text is a header and the text (LlamaIndex's); else None (``EMBEDDED``)."""
        if not self.embedded:
            return None
        texts = {doc_id: text for doc_id, text, _ in self.documents}
        if not all(e.endswith(texts[i]) and e != texts[i] for i, e in self.embedded.items()):
            return None
        return {i: e[: len(e) - len(texts[i])] for i, e in sorted(self.embedded.items())}

    def store(self, recording: Path, **changes: Any) -> FakeVectorStore:
        """The store the module's ``build_store()`` makes (from the values read back)."""
        options = {**self.options, **changes}
        if self.embedder is not None:
            store = FakeVectorStore(embedder=FakeEmbedder(**self.embedder), **options)
            for doc_id, text, metadata in self.documents:
                store.upsert(doc_id, self.embedded.get(doc_id, text), metadata)
        else:
            loaded = Recording.load(recording, expected_sha256=self.sha256)
            store = FakeVectorStore(embedder=loaded.embedder(), **options)
            store.upsert_vectors(
                [doc_id for doc_id, _, _ in self.documents],
                loaded.document_vectors.astype("float32"),
                [text for _, text, _ in self.documents],
                [metadata for _, _, metadata in self.documents],
            )
        if self.options.get("visibility") == "manual":
            store.refresh()
        return store


# -- behaviours ------------------------------------------------------------------------------


def _behaviours(store: FakeVectorStore, spec: _Spec) -> tuple[Behaviour, ...]:
    """What the exported corpus shows, found by running it, each with the setting to flip."""
    q, k, where = spec.query, spec.k, spec.where
    found: list[Behaviour] = []
    returned = [m.id for m in store.query(q, k=k, where=where)]
    if store.filter_mode == "post" and where is not None and len(returned) < k:
        pre = [m.id for m in store.with_options(filter_mode="pre").query(q, k=k, where=where)]
        if len(pre) > len(returned):
            missing = tuple(i for i in pre if i not in returned)
            found.append(Behaviour(STARVATION, "filter_mode", "post", "pre", missing))
    trace = store.trace(q, k, where)
    ties = [t for t in trace.ties if t.kept and (t.at_cut or len(t.kept) > 1)]
    if ties:
        rule = store.profile.tie_order
        for other in _OTHER_TIE_RULES:
            if other == rule:
                continue
            twin = store.with_options(tie_order=other)
            if [m.id for m in twin.query(q, k=k, where=where)] != returned:
                ids = tuple(i for t in ties for i in t.ids)
                groups = tuple((t.ids, t.kept) for t in trace.ties if t.kept)
                found.append(Behaviour(TIE, "tie_order", rule, other, ids, groups))
                break
    if store.recall < 1:
        perfect = [m.id for m in store.with_options(recall=1.0).query(q, k=k, where=where)]
        lost = tuple(i for i in perfect if i not in returned)
        if lost:
            found.append(Behaviour(RECALL, "recall", store.recall, 1.0, lost))
    return tuple(found)


# -- the module ------------------------------------------------------------------------------


def _docstring(spec: _Spec, said: str, *, conftest: bool = False) -> str:
    """The module's docstring: what the test pins, in the verdict's words, then how the module
    is made. Only fixed phrases and setting values (never a user's string) are written."""
    if conftest:
        lines = ["The store of a test designed in placeborag's explorer, as a fixture."]
        about = "Copy it into a conftest.py and any test can take the same small corpus."
    else:
        lines = textwrap.wrap(said[0].upper() + said[1:] + ".", LINE_LENGTH - 3)
        about = (
            "Exported from placeborag's explorer. DOCUMENTS holds only the records the "
            "behaviour needs (id, text, the metadata the filter reads); build_store() makes "
            "the store with every option the test depends on."
        )
        if spec.application is not None:
            about += (
                " The test calls the application's function imported above with that store "
                "and asserts what it returns."
            )
        else:
            about += (
                " The tests assert which ids come back, in order, and the behaviour by name, "
                "never a score's value."
            )
    if spec.embedded:
        about += (
            " HEADERS holds what the framework embedded before a document's text."
            if spec.headers() is not None
            else " EMBEDDED holds what the framework embedded where it is not the text."
        )
    if spec.embedder is None:
        about += (
            " The vectors are replayed from the recording beside this file, pinned by the "
            "hash of all of it (RECORDING_SHA256)."
        )
    lines[0] = '"""' + lines[0]
    return "\n".join([*lines, "", *textwrap.wrap(about, LINE_LENGTH), '"""'])


def _render(
    spec: _Spec,
    preview: Sequence[Match],
    behaviours: Sequence[Behaviour],
    changes: Mapping[str, Any] | None = None,
    *,
    conftest: bool = False,
    said: str | None = None,
) -> str:
    options = {**spec.options, **(changes or {})}
    said = verdict(behaviours) if said is None else said
    lines = [_docstring(spec, said, conftest=conftest), ""]
    standard = ["import datetime"] if has_dates([spec.documents, spec.where]) else []
    if spec.embedder is None:
        standard.append("from pathlib import Path")
    if standard:
        lines += [*standard, ""]
    lines += ["import pytest", ""]
    names = (
        "FakeEmbedder, FakeVectorStore"
        if spec.embedder is not None
        else "FakeVectorStore, Recording"
    )
    lines += [f"from placeborag import {names}", ""]
    app = spec.application
    if app is not None and not conftest:
        alias = "" if app.alias == app.function else f" as {app.alias}"
        lines += [f"from {app.module} import {app.function}{alias}", ""]
    lines += [
        "# One document per line: id, text, metadata.",
        "# fmt: off",
        "DOCUMENTS = [",
        *(f"    {literal(document)}," for document in spec.documents),
        "]",
        "# fmt: on",
    ]
    headers = spec.headers()
    if headers is not None:
        lines += ["# What was embedded before each document's text (its metadata header), by id."]
        lines += layout("HEADERS = ", headers)
    elif spec.embedded:
        lines += ["# What was embedded, by id, where it is not the document's text."]
        lines += layout("EMBEDDED = ", dict(sorted(spec.embedded.items())))
    lines += layout("QUERY = ", spec.query)
    if app is None or conftest:  # the application's function picks its own k and filter
        lines += [f"K = {literal(spec.k)}"]
        lines += layout("WHERE = ", spec.where)
    if spec.embedder is None:
        lines += [
            "# The vectors of DOCUMENTS (row by row) and QUERY, recorded beside this file,",
            "# and the hash of the whole recording: vectors, dtype, shape, model, ids, texts.",
            f'VECTORS = Path(__file__).with_suffix("{_VECTORS_SUFFIX}")',
            f"RECORDING_SHA256 = {literal(spec.sha256)}",
        ]
    lines += ["", "", *_build_store(spec, options), "", ""]
    lines += [
        "@pytest.fixture",
        f"def {spec.fixture}():",
        '    """The designed store: DOCUMENTS under the options above."""',
        "    return build_store()",
    ]
    if not conftest:
        for test in _tests(spec, preview, behaviours):
            lines += ["", "", *test]
    return "\n".join(lines) + "\n"


def _build_store(spec: _Spec, options: Mapping[str, Any]) -> list[str]:
    lines = [
        "def build_store(**changes):",
        '    """A store holding DOCUMENTS; ``changes`` overrides options (a what-if)."""',
        "    store = FakeVectorStore(",
    ]
    if spec.embedder is None:
        lines.insert(2, "    recording = Recording.load(VECTORS, expected_sha256=RECORDING_SHA256)")
        lines.append("        embedder=recording.embedder(),")
    elif spec.embedder:
        lines.append("        embedder=FakeEmbedder(")
        for key, value in spec.embedder.items():
            lines += layout(f"{key}=", value, ",", 12)
        lines.append("        ),")
    else:
        lines.append("        embedder=FakeEmbedder(),")
    for key, value in options.items():
        lines += layout(f"{key}=", value, ",", 8)
    lines += ["        **changes,", "    )"]
    if spec.embedder is None:
        lines += [
            "    store.upsert_vectors(",
            "        [doc_id for doc_id, _, _ in DOCUMENTS],",
            '        recording.document_vectors.astype("float32"),  # the rows, bit for bit',
            "        [text for _, text, _ in DOCUMENTS],",
            "        [metadata for _, _, metadata in DOCUMENTS],",
            "    )",
        ]
    elif spec.headers() is not None:
        lines += [
            "    for doc_id, text, metadata in DOCUMENTS:",
            '        store.upsert(doc_id, HEADERS.get(doc_id, "") + text, metadata)',
        ]
    elif spec.embedded:
        lines += [
            "    for doc_id, text, metadata in DOCUMENTS:",
            "        store.upsert(doc_id, EMBEDDED.get(doc_id, text), metadata)",
        ]
    else:
        lines += [
            "    for doc_id, text, metadata in DOCUMENTS:",
            "        store.upsert(doc_id, text, metadata)",
        ]
    if options.get("visibility") == "manual":
        lines.append("    store.refresh()")
    lines.append("    return store")
    return lines


def _verified(source: str, spec: _Spec) -> str:
    """``source`` once it parses and its data literals read back (``read_node``) to
    exactly the values exported; anything else is a bug here, and nothing is returned."""
    import ast

    from placeborag.explore._literals import same

    wanted: dict[str, Any] = {"DOCUMENTS": [list(d) for d in spec.documents], "QUERY": spec.query}
    if spec.application is None:
        wanted.update(K=spec.k, WHERE=spec.where)
    if spec.headers() is not None:
        wanted["HEADERS"] = spec.headers()
    elif spec.embedded:
        wanted["EMBEDDED"] = dict(sorted(spec.embedded.items()))
    found = {}
    for node in ast.parse(source).body:
        target = node.targets[0] if isinstance(node, ast.Assign) else None
        if isinstance(target, ast.Name) and target.id in wanted:
            found[target.id] = read_node(node.value)  # type: ignore[attr-defined]
    found["DOCUMENTS"] = [list(d) for d in found.get("DOCUMENTS", ())]
    if found.keys() != wanted.keys() or not all(same(found[k], wanted[k]) for k in wanted):
        raise PlaceboragValueError(  # pragma: no cover - a serialiser bug, never user data
            "the exported module does not read back to the exported data; please report this"
        )
    return source


def _tests(
    spec: _Spec, preview: Sequence[Match], behaviours: Sequence[Behaviour]
) -> list[list[str]]:
    store = spec.fixture
    ids = [m.id for m in preview]
    if spec.application is not None:
        return [_application_test(spec, behaviours)]
    head = [
        f"    matches = {store}.query(QUERY, k=K, where=WHERE)",
        "",
        *layout("assert [m.id for m in matches] == ", ids, "", 4),
    ]
    tests = []
    for b in behaviours:
        if b.name == STARVATION:
            body = [
                "    # The filter runs after the top-k cut, so fewer than K come back, while",
                "    # pre-filtering returns the filter's best matches, up to K:",
                f'    pre = {store}.with_options(filter_mode="pre")',
                *layout(
                    "assert [m.id for m in pre.query(QUERY, k=K, where=WHERE)] == ",
                    ids + list(b.ids),
                    "",
                    4,
                ),
            ]
            tests.append(_test("test_post_filtering_starves_the_top_k", store, head + body))
        elif b.name == TIE:
            body = [
                "    # These documents score exactly the same: the profile's tie rule decides",
                "    # which of them come back, and in which order.",
                f"    ties = {store}.trace(QUERY, K, WHERE).ties",
                *layout(
                    "assert [[list(t.ids), list(t.kept)] for t in ties if t.kept] == ",
                    [[list(ids), list(kept)] for ids, kept in b.groups],
                    "",
                    4,
                ),
                f"    assert {store}.profile.tie_order == {literal(b.value)}",
            ]
            name = f"test_a_tie_is_decided_by_{identifier(str(b.value))}_order"
            tests.append(_test(name, store, head + body))
        elif b.name == RECALL:
            body = [
                "    # A perfect index (recall=1.0) returns these too; this one lost them:",
                f"    perfect = {store}.with_options(recall=1.0)",
                "    ideal = [m.id for m in perfect.query(QUERY, k=K, where=WHERE)]",
                "    returned = [m.id for m in matches]",
                *layout("assert [i for i in ideal if i not in returned] == ", list(b.ids), "", 4),
            ]
            name = "test_recall_loses_documents_a_perfect_index_returns"
            tests.append(_test(name, store, head + body))
    if not tests:
        name = f"test_ranking_for_{identifier(spec.query, 40) or 'the_query'}"
        tests.append(_test(name, store, head))
    return tests


#: What each behaviour does, for the comment above the application's test.
_IN_WORDS = {
    STARVATION: "the filter runs after the top-k cut, so fewer matches come back than asked for",
    TIE: "documents that score exactly the same are ordered by the profile's tie rule",
    RECALL: "the index loses documents a perfect index returns",
}


def _application_test(spec: _Spec, behaviours: Sequence[Behaviour]) -> list[str]:
    """The application's function called with the designed store, its answer asserted."""
    app = spec.application
    assert app is not None
    shows = [_IN_WORDS[b.name] for b in behaviours]
    said = "The application's own code, on the designed store"
    said += (": " + "; ".join(shows) + ".") if shows else " (its ranking, no quirk)."
    body = [f"    # {line}" for line in textwrap.wrap(said, LINE_LENGTH - 6)]
    body += layout(f"assert {app.alias}({spec.fixture}, QUERY) == ", spec.answer, "", 4)
    return _test(app.test, spec.fixture, body)


def _test(name: str, store: str, body: list[str]) -> list[str]:
    return [f"def {name}({store}):", *body]
