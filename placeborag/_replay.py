"""Recorded-vector replay: write a real model's vectors to disk once, answer from them forever.

This module owns the recording format, the recorder (:func:`record_vectors`), the verified
loader (:class:`Recording`), the replaying embedder (:class:`ReplayEmbedder`), its miss error
(:class:`UnrecordedText`) and the MiniLM recording shipped in ``placeborag/data/minilm``
(:func:`load_demo_recording`).

A recording is a directory of two files:

``vectors.bin``
    Every vector as raw little-endian ``float32`` or ``float64``, row-major, documents first and
    then queries, in manifest order.  No header, so the bytes depend only on the values and the
    sha256 is stable across numpy versions and platforms.
``manifest.json``
    UTF-8 JSON with sorted keys: format and version, model name, query instruction, dimension,
    dtype, the sha256 of ``vectors.bin``, a sha256 over the ordered texts, the sha256 of the
    whole recording (``recording_sha256``), the counts, the document and query entries
    (``id``, ``text``, ``metadata``) and free-form provenance.

Replay never calls a model.  A text that was not recorded, byte for byte, in the namespace it
is asked in (documents and queries are separate) raises :class:`UnrecordedText`; nothing is
invented and no neighbour's vector is handed out in its place.
"""

from __future__ import annotations

import collections
import hashlib
import heapq
import json
import os
import stat
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from placeborag import _files
from placeborag._errors import (
    PlaceboragTypeError,
    PlaceboragValueError,
    RecordingNotFound,
    UnrecordedText,
)
from placeborag._validation import (
    check_bool,
    check_choice,
    check_int,
    check_mapping,
    check_path,
    check_str,
    check_texts,
    check_unicode,
    dump_json,
    nearest,
    place_name,
    real_array,
    shown,
    walk,
)

if TYPE_CHECKING:
    if sys.version_info >= (3, 11):
        from importlib.resources.abc import Traversable
    else:
        from importlib.abc import Traversable

# UnrecordedText lives in placeborag._errors; imported above, it can still be imported from here.
__all__ = [
    "Recording",
    "ReplayEmbedder",
    "load_demo_recording",
    "record_vectors",
]

FORMAT = "placeborag-recording"
FORMAT_VERSION = 1
MANIFEST_FILE = "manifest.json"
VECTORS_FILE = "vectors.bin"
#: The most bytes :meth:`Recording.load` reads from a recording (its two files together) unless
#: told otherwise (``max_bytes=``): a loader given an untrusted recording allocates about
#: three times its vectors file and ten times its manifest, so this bounds its memory.
MAX_RECORDING_BYTES = 2 * 2**30
# The hash of everything that decides what replay answers; a 0.4.0 manifest has none.
_RECORDING_HASH = "recording_sha256"
# A reader racing a writer that replaces the recording reads again this often at most.
_READ_ATTEMPTS = 8
# Little-endian explicitly: the file must mean the same on every machine that reads it.
_DTYPES: dict[str, np.dtype[Any]] = {"float32": np.dtype("<f4"), "float64": np.dtype("<f8")}

_PLURAL = {"document": "documents", "query": "queries", "text": "texts"}
_JSON_KIND = {str: "a string", int: "an integer", list: "an array", dict: "an object"}

BatchEmbedder = Callable[[list[str]], Any]


def _quote(text: str, limit: int = 80) -> str:
    # Long chunks would drown the message; keep both ends, because the tail is where a stray
    # space or newline - the usual reason an exact lookup misses - shows up.
    if len(text) <= limit:
        return repr(text)
    keep = (limit - 5) // 2
    return repr(text[:keep]) + " ... " + repr(text[-keep:])


def _texts_sha256(documents: Sequence[str], queries: Sequence[str]) -> str:
    payload = json.dumps(
        {"documents": list(documents), "queries": list(queries)},
        ensure_ascii=False,
        separators=(",", ":"),
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _recording_sha256(manifest: Mapping[str, Any], vectors_sha256: str) -> str:
    """The SHA-256 of everything that decides what a recording replays: the vectors (by their
    own hash), their dtype, byte order and shape, the model name, the query instruction, and
    every document's and query's id, text and metadata, in order. ``provenance`` is free-form
    and not covered. The same recording gives the same hash on every machine."""
    content = {
        "vectors_sha256": vectors_sha256,
        "dtype": manifest["dtype"],
        "byte_order": "little",
        "dimension": manifest["dimension"],
        "model": manifest["model"],
        "query_instruction": manifest["query_instruction"],
        **{
            kind: [
                {"id": e["id"], "text": e["text"], "metadata": e["metadata"]}
                for e in manifest[kind]
            ]
            for kind in ("documents", "queries")
        },
    }
    payload = json.dumps(
        content, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False
    )
    head = b"placeborag recording sha256\0"
    return hashlib.sha256(head + payload.encode("utf-8", "surrogatepass")).hexdigest()


def _check_str(value: object, name: str) -> str:
    return check_unicode(check_str(value, name), name)


def _check_texts(texts: object, name: str) -> list[str]:
    items = check_texts(texts, name)
    for i, text in enumerate(items):
        check_unicode(text, f"{name}[{i}]")
    return items


def _check_vectors(matrix: np.ndarray, texts: Sequence[str], kind: str) -> None:
    """Reject a row that is not finite or has a zero or infinite norm; ``matrix`` is float64."""
    finite = np.isfinite(matrix)
    if not finite.all():
        row, col = (int(i) for i in np.argwhere(~finite)[0])
        raise PlaceboragValueError(
            f"{kind} {_quote(texts[row])} ({_PLURAL[kind]}[{row}]) has the value "
            f"{shown(float(matrix[row, col]))} at index {col}; every value must be finite"
        )
    # Scale by the largest magnitude first: squaring 1e-200 underflows to 0 and squaring 1e200
    # overflows, and neither vector should be judged by that artefact.
    scale = np.abs(matrix).max(axis=1, initial=0.0)
    safe = np.where(scale > 0, scale, 1.0)[:, None]
    with np.errstate(over="ignore"):
        norms = scale * np.sqrt(np.einsum("ij,ij->i", matrix / safe, matrix / safe))
    bad = ~(np.isfinite(norms) & (norms > 0))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise PlaceboragValueError(
            f"{kind} {_quote(texts[row])} ({_PLURAL[kind]}[{row}]) has norm "
            f"{shown(float(norms[row]))}; "
            "the norm must be finite and > 0"
        )


def _as_matrix(
    vectors: object, labels: Sequence[str], source: str, dimension: int | None
) -> np.ndarray:
    """Turn what an embedding callable returned into an (n, d) float64 matrix, or say why not.

    ``labels`` names the text of each row for a message (``document 'a' (documents[0])``).
    """
    try:
        rows = list(vectors)  # type: ignore[call-overload]
    except TypeError:
        raise PlaceboragTypeError(
            f"{source} returned {shown(vectors)}; it must return one vector per text"
        ) from None
    if len(rows) != len(labels):
        raise PlaceboragValueError(
            f"{source} returned {len(rows)} vectors for {len(labels)} texts; "
            "it must return one vector per text"
        )
    out: list[np.ndarray] = []
    for label, row in zip(labels, rows, strict=True):
        try:
            vector = real_array(row)
        except (TypeError, ValueError, OverflowError):
            raise PlaceboragTypeError(
                f"{source} returned {shown(row)} for {label}; a vector must be"
                " numbers within float range"
            ) from None
        if vector is None:
            raise PlaceboragTypeError(
                f"{source} returned {shown(row)} for {label}; a vector must be real numbers"
                " (int or float; not bool, str or complex)"
            )
        if vector.ndim != 1:
            raise PlaceboragValueError(
                f"{source} returned an array of shape {vector.shape} for {label}; "
                "a vector must be one-dimensional"
            )
        if dimension is None:
            dimension = len(vector)
            if dimension == 0:
                raise PlaceboragValueError(f"{source} returned an empty vector for {label}")
        elif len(vector) != dimension:
            raise PlaceboragValueError(
                f"{source} returned {len(vector)} values for {label}; "
                f"expected {dimension} like the first vector"
            )
        out.append(vector)
    return np.stack(out) if out else np.empty((0, dimension or 0))


def _labels(texts: Sequence[str], kind: str) -> list[str]:
    """How a message names each text: ``document 'a' (documents[0])``."""
    return [f"{kind} {_quote(text)} ({_PLURAL[kind]}[{i}])" for i, text in enumerate(texts)]


def _entries(
    texts: Sequence[str],
    ids: Sequence[str] | None,
    metadata: Sequence[Mapping[str, Any]] | None,
    kind: str,
) -> list[dict[str, Any]]:
    """Build the manifest entries for one namespace, rejecting miscounts and duplicates."""
    width = max(3, len(str(max(len(texts) - 1, 0))))
    ids = (
        [f"{kind[0]}{i:0{width}d}" for i in range(len(texts))]
        if ids is None
        else _check_texts(ids, f"{kind}_ids")
    )
    metadata = [{} for _ in texts] if metadata is None else _sequence(metadata, f"{kind}_metadata")
    for name, values in ((f"{kind}_ids", ids), (f"{kind}_metadata", metadata)):
        if len(values) != len(texts):
            raise PlaceboragValueError(
                f"{name} has {len(values)} items for {len(texts)} {_PLURAL[kind]}; "
                f"give one per {kind}"
            )
    _first_duplicate(texts, _PLURAL[kind])
    _first_duplicate([_check_str(v, f"{kind}_ids[{i}]") for i, v in enumerate(ids)], f"{kind}_ids")
    entries = []
    for i, (text, id_, meta) in enumerate(zip(texts, ids, metadata, strict=True)):
        if not isinstance(meta, Mapping):
            raise PlaceboragTypeError(f"{kind}_metadata[{i}]={shown(meta)} must be a mapping")
        _check_keys(meta, f"{kind}_metadata[{i}]")
        entries.append({"id": id_, "text": text, "metadata": dict(meta)})
    return entries


def _check_keys(value: Mapping[Any, Any], name: str) -> None:
    """Refuse a key that is not a str at any depth: JSON would write 1, True and None as "1",
    "true" and "null", so the recording would not hold what it was given."""
    for place, item, is_key in walk(value):
        if is_key and not isinstance(item, str):
            raise PlaceboragTypeError(
                f"{place_name(name, place)} has the key {shown(item)} ({type(item).__name__});"
                " a key must be a str, as in a JSON object"
            )


def _sequence(values: object, name: str) -> list[Any]:
    # A mapping or a str is iterable too, but one per text is a list, not a single value.
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        raise PlaceboragTypeError(
            f"{name}={shown(values)} must be a sequence with one item per text, not a single value"
        )
    return list(values)


def _first_duplicate(values: Sequence[str], name: str, where: str = "") -> None:
    seen: dict[str, int] = {}
    for i, value in enumerate(values):
        if value in seen:
            raise PlaceboragValueError(
                (f"{where} has " if where else "")
                + f"{name}[{i}]={_quote(value)} repeats {name}[{seen[value]}]; "
                "each must be unique so a lookup is unambiguous"
            )
        seen[value] = i


def _dump_manifest(manifest: Mapping[str, Any]) -> bytes:
    text = dump_json(
        manifest, "metadata and provenance", ensure_ascii=False, sort_keys=True, indent=2
    )
    return (text + "\n").encode("utf-8")


def record_vectors(
    path: str | os.PathLike[str],
    *,
    embed_documents: BatchEmbedder,
    documents: Sequence[str],
    model: str,
    embed_query: BatchEmbedder | None = None,
    queries: Sequence[str] = (),
    query_instruction: str = "",
    document_ids: Sequence[str] | None = None,
    document_metadata: Sequence[Mapping[str, Any]] | None = None,
    query_ids: Sequence[str] | None = None,
    query_metadata: Sequence[Mapping[str, Any]] | None = None,
    provenance: Mapping[str, Any] | None = None,
    dtype: str = "float32",
    overwrite: bool = False,
) -> Recording:
    """Embed ``documents`` and ``queries`` once with a real model and write a recording to ``path``.

    ``embed_documents`` and ``embed_query`` are *batch* callables: each is called at most once,
    with a list of every text, and must return one vector per text.  Queries are sent as
    ``query_instruction + text`` (the instruction is applied here, once, and recorded), but
    they are recorded and later looked up by their bare text.  Without ``embed_query`` the
    queries go to ``embed_documents`` in the same single call as the documents.

    Everything is validated before the filesystem is touched: metadata and provenance are JSON
    with str keys at every depth, and every vector is real numbers (int or float; a bool, a
    numeric str or a complex is refused, not cast).  The directory is then written
    beside ``path`` and swapped into place in one step (see :mod:`placeborag._files`), so the
    path always holds one complete recording, the old or the new, even if the process is
    killed; a failed call leaves the previous recording and no hidden directory behind.
    ``overwrite=True`` replaces an existing recording (never a directory that holds anything
    but a recording).  A symbolic link at ``path`` is followed: the recording it points to is
    replaced, and the link stays.  Returns the recording as loaded back from disk.
    """
    target = check_path(path, "path", named=True)
    _check_str(model, "model")
    _check_str(query_instruction, "query_instruction")
    check_choice(dtype, "dtype", _DTYPES)
    check_bool(overwrite, "overwrite")
    documents = _check_texts(documents, "documents")
    queries = _check_texts(queries, "queries")
    if not documents:
        raise PlaceboragValueError("documents=[] must hold at least one text")
    for name, function in (("embed_documents", embed_documents), ("embed_query", embed_query)):
        if function is not None and not callable(function):
            raise PlaceboragTypeError(f"{name}={shown(function)} must be a callable")
    doc_entries = _entries(documents, document_ids, document_metadata, "document")
    query_entries = _entries(queries, query_ids, query_metadata, "query")
    provenance = {} if provenance is None else dict(check_mapping(provenance, "provenance"))
    _check_keys(provenance, "provenance")
    # Fail on unserialisable metadata now, not after paying for a model run.
    _dump_manifest({"documents": doc_entries, "queries": query_entries, "provenance": provenance})
    _check_target(target, overwrite)

    doc_matrix, query_matrix = _embedded(
        embed_documents, embed_query, documents, queries, query_instruction
    )
    raw = _stored_bytes(doc_matrix, query_matrix, dtype, documents, queries)
    vectors_sha256 = hashlib.sha256(raw).hexdigest()
    manifest = _manifest(
        model,
        (query_instruction, dtype, int(doc_matrix.shape[1]), vectors_sha256),
        (documents, queries),
        (doc_entries, query_entries),
        provenance,
    )
    manifest[_RECORDING_HASH] = _recording_sha256(manifest, vectors_sha256)
    try:
        _files.replace_directory(
            target,
            {VECTORS_FILE: raw, MANIFEST_FILE: _dump_manifest(manifest)},
            overwrite=overwrite,
        )
    except FileExistsError:  # another writer's recording arrived while this one was made
        raise _exists(target) from None
    return Recording.load(target, max_bytes=max(MAX_RECORDING_BYTES, 2 * len(raw)))


def _stored_bytes(
    doc_matrix: np.ndarray,
    query_matrix: np.ndarray,
    dtype: str,
    documents: list[str],
    queries: list[str],
) -> bytes:
    """The vectors as the recording stores them, checked after the cast (a float64 1e39
    becomes inf in float32): documents first, then queries, C order."""
    stored = _DTYPES[dtype]
    with np.errstate(over="ignore"):  # an overflow to inf is reported just below, by text
        doc_stored = doc_matrix.astype(stored)
        query_stored = query_matrix.astype(stored)
    _check_vectors(doc_stored.astype(np.float64), documents, "document")
    _check_vectors(query_stored.astype(np.float64), queries, "query")
    return np.concatenate([doc_stored, query_stored]).tobytes(order="C")


def _manifest(
    model: str,
    shape: tuple[str, str, int, str],
    texts: tuple[list[str], list[str]],
    entries: tuple[list[dict[str, Any]], list[dict[str, Any]]],
    provenance: dict[str, Any],
) -> dict[str, Any]:
    """A new recording's manifest, but its recording hash (``shape``: the query instruction,
    the dtype, the dimension and the vectors' sha256)."""
    query_instruction, dtype, dimension, vectors_sha256 = shape
    documents, queries = texts
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "model": model,
        "query_instruction": query_instruction,
        "dimension": dimension,
        "dtype": dtype,
        "byte_order": "little",
        "vectors_file": VECTORS_FILE,
        "vectors_sha256": vectors_sha256,
        "texts_sha256": _texts_sha256(documents, queries),
        "document_count": len(documents),
        "query_count": len(queries),
        "documents": entries[0],
        "queries": entries[1],
        "provenance": provenance,
    }


def _embedded(
    embed_documents: BatchEmbedder,
    embed_query: BatchEmbedder | None,
    documents: list[str],
    queries: list[str],
    instruction: str,
) -> tuple[np.ndarray, np.ndarray]:
    """The documents' and the queries' vectors (each query sent as ``instruction + text``):
    one call of each callable, the queries in the documents' call without ``embed_query``."""
    instructed = [instruction + text for text in queries]
    query_labels = _labels(queries, "query")
    if embed_query is None:
        both = _as_matrix(
            embed_documents([*documents, *instructed]),
            [*_labels(documents, "document"), *query_labels],
            "embed_documents",
            None,
        )
        return both[: len(documents)], both[len(documents) :]
    doc_matrix = _as_matrix(
        embed_documents(list(documents)), _labels(documents, "document"), "embed_documents", None
    )
    if not instructed:
        return doc_matrix, np.empty((0, doc_matrix.shape[1]))
    query_matrix = _as_matrix(
        embed_query(instructed), query_labels, "embed_query", doc_matrix.shape[1]
    )
    return doc_matrix, query_matrix


def _exists(target: Path) -> PlaceboragValueError:
    return PlaceboragValueError(
        f"path={shown(str(target))} already exists; pass overwrite=True to replace the recording"
    )


def _check_target(target: Path, overwrite: bool) -> None:
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise _files._named(exc, target) from None
    if not stat.S_ISDIR(mode):
        raise PlaceboragValueError(
            f"path={shown(str(target))} exists and is {_files.file_kind(mode)}, not a directory;"
            " a recording is a directory"
        )
    contents = {child.name for child in target.iterdir()}
    if contents and not overwrite:
        raise _exists(target)
    if contents - {MANIFEST_FILE, VECTORS_FILE}:
        raise PlaceboragValueError(
            f"path={shown(str(target))} holds files other than a recording "
            f"({', '.join(sorted(contents - {MANIFEST_FILE, VECTORS_FILE}))}); "
            "refusing to replace it"
        )


def _load_manifest(raw: bytes, where: str) -> dict[str, Any]:
    try:
        manifest = json.loads(raw.decode("utf-8"))
    except ValueError as exc:  # not UTF-8, not JSON, or an int of more than 4,300 digits
        raise PlaceboragValueError(f"{where} is not UTF-8 JSON: {exc}") from None
    except RecursionError:
        raise PlaceboragValueError(
            f"{where} is nested too deeply to read; a recording's metadata is plain JSON"
        ) from None
    if not isinstance(manifest, dict):
        raise PlaceboragValueError(
            f"{where} must hold a JSON object, not {type(manifest).__name__}"
        )
    if manifest.get("format") != FORMAT:
        raise PlaceboragValueError(
            f"{where} has format={shown(manifest.get('format'))}; expected {shown(FORMAT)}"
        )
    if manifest.get("format_version") != FORMAT_VERSION:
        raise PlaceboragValueError(
            f"{where} has format_version={shown(manifest.get('format_version'))}; "
            f"this placeborag reads {FORMAT_VERSION}"
        )
    expected = {
        "model": str,
        "query_instruction": str,
        "dimension": int,
        "dtype": str,
        "vectors_sha256": str,
        "texts_sha256": str,
        "document_count": int,
        "query_count": int,
        "documents": list,
        "queries": list,
        "provenance": dict,
    }
    for key, json_type in expected.items():
        value = manifest.get(key)
        # bool is an int to isinstance, but dimension=true is a broken manifest, not 1.
        if not isinstance(value, json_type) or isinstance(value, bool):
            raise PlaceboragValueError(
                f"{where} has {key}={shown(value)}; expected {_JSON_KIND[json_type]}"
            )
    for key, fixed in (("byte_order", "little"), ("vectors_file", VECTORS_FILE)):
        if manifest.get(key) != fixed:
            raise PlaceboragValueError(
                f"{where} has {key}={shown(manifest.get(key))}; this placeborag reads only"
                f" {shown(fixed)}"
            )
    if manifest["dimension"] < 1:
        raise PlaceboragValueError(
            f"{where} has dimension={shown(manifest['dimension'])}; must be >= 1"
        )
    if manifest["document_count"] < 1:
        raise PlaceboragValueError(
            f"{where} has document_count={shown(manifest['document_count'])}; a recording"
            " holds at least one document"
        )
    if manifest["dtype"] not in _DTYPES:
        raise PlaceboragValueError(
            f"{where} has dtype={shown(manifest['dtype'])}; expected one of "
            f"{', '.join(map(repr, _DTYPES))}"
        )
    for kind in ("document", "query"):
        _check_entries(manifest, kind, where)
    # Valid UTF-8 decodes to no lone surrogate; only a \\udXXX escape makes one.
    if b"\\ud" in raw.lower():
        _check_no_surrogate(manifest, where)
    return manifest


def _check_entries(manifest: Mapping[str, Any], kind: str, where: str) -> None:
    """The manifest's documents or queries: as many as counted, each an object with a str id,
    a str text and object metadata, no text or id twice."""
    entries = manifest[_PLURAL[kind]]
    if len(entries) != manifest[f"{kind}_count"]:
        raise PlaceboragValueError(
            f"{where} lists {len(entries)} {_PLURAL[kind]} but "
            f"{kind}_count={manifest[kind + '_count']}"
        )
    for i, entry in enumerate(entries):
        if not (
            isinstance(entry, dict)
            and isinstance(entry.get("id"), str)
            and isinstance(entry.get("text"), str)
            and isinstance(entry.get("metadata"), dict)
        ):
            raise PlaceboragValueError(
                f"{where} has {_PLURAL[kind]}[{i}]={shown(entry)}; expected an object with "
                "a str 'id', a str 'text' and an object 'metadata'"
            )
    _first_duplicate([entry["text"] for entry in entries], _PLURAL[kind], where)
    _first_duplicate([entry["id"] for entry in entries], f"{kind}_ids", where)


def _check_no_surrogate(manifest: Mapping[str, Any], where: str) -> None:
    """Refuse a lone surrogate anywhere in a manifest: record_vectors never writes one (it
    cannot be UTF-8), so it was edited in, and a text holding one cannot even be hashed."""
    for place, item, is_key in walk(manifest):
        if isinstance(item, str):
            name = place_name("", place)
            if is_key:
                name = f"{name} key" if name else "key"
            try:
                check_unicode(item, f"{where}: {name}")
            except PlaceboragValueError as error:
                raise PlaceboragValueError(
                    f"{error}; record_vectors never writes one, so the manifest was edited"
                ) from None


def _checked_pins(
    manifest: Mapping[str, Any], actual: str, expected_sha256: str | None, source: str
) -> str:
    """The recording's hash (of everything replay answers from), checked against the one its
    manifest records and a caller's pin; a pin of the vectors' hash alone (0.4.0's) warns."""
    whole = _recording_sha256(manifest, actual)
    recorded = manifest.get(_RECORDING_HASH)
    if recorded is not None and recorded != whole:
        raise PlaceboragValueError(
            f"the recording in {source} hashes to {shown(whole)} but {MANIFEST_FILE} records "
            f"{_RECORDING_HASH}={shown(recorded)}; its model, query instruction, dtype, "
            "dimension, ids or metadata were edited after recording: record it again"
        )
    if expected_sha256 is not None and expected_sha256 != whole:
        if expected_sha256 != actual:
            raise PlaceboragValueError(
                f"the recording in {source} has sha256 {shown(whole)} but expected_sha256="
                f"{shown(expected_sha256)}; the recording is not the one this caller pinned"
            )
        warnings.warn(
            f"expected_sha256={shown(expected_sha256)} is the sha256 of {VECTORS_FILE} "
            f"alone, which does not cover the dtype, shape, ids, texts, model or metadata; "
            f"pin recording.sha256 ({shown(whole)}) instead",
            DeprecationWarning,
            stacklevel=4,
        )
    return whole


class Recording:
    """A verified recording: texts, ids, metadata and float64 vectors, read-only.

    Build one with :meth:`load` (or get one back from :func:`record_vectors`); the constructor
    only stores what :meth:`load` has already checked.  ``document_vectors`` and
    ``query_vectors`` are read-only ``(n, dimension)`` float64 arrays whose rows follow
    ``document_texts`` / ``query_texts``.  ``sha256`` is the hash of everything replay answers
    from: vectors, dtype, shape, ids, texts, model, query instruction and metadata.
    """

    def __init__(
        self,
        *,
        source: str,
        manifest: Mapping[str, Any],
        sha256: str,
        document_vectors: np.ndarray,
        query_vectors: np.ndarray,
    ) -> None:
        self.source = source
        self.model: str = manifest["model"]
        self.query_instruction: str = manifest["query_instruction"]
        self.dimension: int = manifest["dimension"]
        self.dtype: str = manifest["dtype"]
        #: The hash of everything replay answers from (see ``docs/replay.md``): what
        #: ``expected_sha256=`` pins.
        self.sha256: str = sha256
        #: The sha256 of ``vectors.bin`` alone (what ``sha256`` was before 0.5).
        self.vectors_sha256: str = manifest["vectors_sha256"]
        self.provenance: Mapping[str, Any] = manifest["provenance"]
        docs, queries = manifest["documents"], manifest["queries"]
        self.document_ids: tuple[str, ...] = tuple(e["id"] for e in docs)
        self.document_texts: tuple[str, ...] = tuple(e["text"] for e in docs)
        self.document_metadata: tuple[Mapping[str, Any], ...] = tuple(e["metadata"] for e in docs)
        self.query_ids: tuple[str, ...] = tuple(e["id"] for e in queries)
        self.query_texts: tuple[str, ...] = tuple(e["text"] for e in queries)
        self.query_metadata: tuple[Mapping[str, Any], ...] = tuple(e["metadata"] for e in queries)
        self.document_vectors = document_vectors
        self.query_vectors = query_vectors

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str] | Traversable,
        *,
        expected_sha256: str | None = None,
        max_bytes: int = MAX_RECORDING_BYTES,
    ) -> Recording:
        """Read and verify the recording in directory ``path``.

        Both files must be regular files, together at most ``max_bytes``
        (:data:`MAX_RECORDING_BYTES` by default), and ``vectors.bin`` exactly as large as the
        manifest says, all checked before the vectors are read. Then the sha256 of
        ``vectors.bin`` is checked against the manifest, the texts hash, the recording's hash
        (everything replay answers from: see ``docs/replay.md``) and ``expected_sha256`` when
        given, before any vector is decoded; then every vector (finite values, finite non-zero
        norm); a lone surrogate anywhere in the manifest is refused as tampering.  Any failure
        is a ValueError that names what was found and what was expected.  A recording being
        replaced while it is read is read again, so a reader gets the old recording or the new
        one.  ``path`` may also be an :mod:`importlib.resources` traversable, so a recording
        inside a zipped package loads.
        """
        if expected_sha256 is not None:
            _check_str(expected_sha256, "expected_sha256")
        check_int(max_bytes, "max_bytes", minimum=1)
        if isinstance(path, (str, os.PathLike)) or not hasattr(path, "joinpath"):
            checked = check_path(path, "path")
            for attempt in range(_READ_ATTEMPTS):
                before = _identity(checked)
                try:
                    return cls._load(
                        _files.readable_directory(checked), str(checked), expected_sha256, max_bytes
                    )
                except (PlaceboragValueError, OSError):
                    # A writer replaced the recording while it was read (its manifest and
                    # vectors then disagree, or a file vanished): read the new one.
                    if attempt + 1 == _READ_ATTEMPTS or _identity(checked) == before:
                        raise
            raise AssertionError("unreachable")  # pragma: no cover
        return cls._load(path, str(path), expected_sha256, max_bytes)

    @classmethod
    def _load(
        cls,
        root: Path | Traversable,
        source: str,
        expected_sha256: str | None,
        max_bytes: int,
    ) -> Recording:
        where = f"{MANIFEST_FILE} in {source}"
        manifest_raw = _read(root, MANIFEST_FILE, source, max_bytes, None)
        manifest = _load_manifest(manifest_raw, where)
        doc_texts = [e["text"] for e in manifest["documents"]]
        query_texts = [e["text"] for e in manifest["queries"]]
        dtype = _DTYPES[manifest["dtype"]]
        rows = len(doc_texts) + len(query_texts)
        dimension = manifest["dimension"]
        expected_size = rows * dimension * dtype.itemsize

        def wrong_size(size: int) -> PlaceboragValueError | None:
            if size == expected_size:
                return None
            # shown(): a forged dimension may be an int too long for repr.
            return PlaceboragValueError(
                f"{VECTORS_FILE} in {source} holds {size} bytes; {len(doc_texts)} documents + "
                f"{len(query_texts)} queries x {shown(dimension)} dimensions x {dtype.itemsize}"
                f" bytes ({manifest['dtype']}) = {shown(expected_size)} expected"
            )

        raw = _read(root, VECTORS_FILE, source, max_bytes - len(manifest_raw), wrong_size)
        error = wrong_size(len(raw))
        if error is not None:  # it changed size while it was read
            raise error
        actual = hashlib.sha256(raw).hexdigest()
        if actual != manifest["vectors_sha256"]:
            raise PlaceboragValueError(
                f"{VECTORS_FILE} in {source} has sha256 {shown(actual)} but {MANIFEST_FILE} "
                "records "
                f"{shown(manifest['vectors_sha256'])}; the vectors changed after recording"
            )
        texts_hash = _texts_sha256(doc_texts, query_texts)
        if texts_hash != manifest["texts_sha256"]:
            raise PlaceboragValueError(
                f"the texts in {where} hash to {shown(texts_hash)} but it "
                "records "
                f"texts_sha256={shown(manifest['texts_sha256'])}; a text was edited after "
                "recording, "
                "so its vector no longer belongs to it: record it again"
            )
        whole = _checked_pins(manifest, actual, expected_sha256, source)
        matrix = np.frombuffer(raw, dtype=dtype).reshape(rows, dimension).astype(np.float64)
        documents, queries = matrix[: len(doc_texts)], matrix[len(doc_texts) :]
        _check_vectors(documents, doc_texts, "document")
        _check_vectors(queries, query_texts, "query")
        documents.flags.writeable = False
        queries.flags.writeable = False
        return cls(
            source=source,
            manifest=manifest,
            sha256=whole,
            document_vectors=documents,
            query_vectors=queries,
        )

    def embedder(self, *, queries: Iterable[str] | None = None) -> ReplayEmbedder:
        """A :class:`ReplayEmbedder` over this recording (``queries`` as in its constructor)."""
        return ReplayEmbedder(self, queries=queries)

    def __repr__(self) -> str:
        return (
            f"Recording(model={self.model!r}, documents={len(self.document_texts)}, "
            f"queries={len(self.query_texts)}, dimension={self.dimension}, dtype={self.dtype!r}, "
            f"sha256={self.sha256[:12]!r})"
        )


def _identity(path: Path) -> tuple[str, int, int] | None:
    """Which directory ``path`` leads a reader to now, and by which name (a writer's exchange
    changes the directory; its first rename, to the backup name, changes the name)."""
    try:
        where = _files.readable_directory(path)
        st = os.stat(where)
    except OSError:
        return None
    return (str(where), st.st_dev, st.st_ino)


def _read(
    root: Path | Traversable,
    name: str,
    source: str,
    limit: int,
    wrong_size: Callable[[int], Exception | None] | None,
) -> bytes:
    """The bytes of ``name`` in the recording ``root``: a regular file of at most ``limit``
    bytes, and (``wrong_size``) of exactly the size the manifest says, checked before reading."""
    if isinstance(root, Path) and root.exists() and not root.is_dir():
        raise RecordingNotFound(
            f"no recording at {source}: it is a file; a recording is a directory holding"
            f" {MANIFEST_FILE} and {VECTORS_FILE}"
        )
    if not isinstance(root, Path):
        try:
            return root.joinpath(name).read_bytes()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            raise RecordingNotFound(f"no recording at {source}: {name} is missing") from None
    try:
        return _files.read_regular(
            root / name,
            limit,
            f"{name} in {source}",
            f"Recording.load(..., max_bytes=) reads larger recordings ({MAX_RECORDING_BYTES:,} by"
            " default)",
            check_size=wrong_size,
        )
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        raise RecordingNotFound(f"no recording at {source}: {name} is missing") from None


class ReplayEmbedder:
    """An embedder that answers only with recorded vectors.

    Documents: :meth:`embed`, :meth:`embed_batch`, :meth:`embed_documents`.  Queries:
    :meth:`embed_query`, :meth:`embed_queries`.  The two namespaces never mix.  ``queries``
    limits which recorded queries this embedder exposes (a replay boundary for, say, held-out
    questions; not access control): naming one that is not recorded raises
    :class:`UnrecordedText` here, at construction.  Every answer is a fresh float64 copy of the
    recorded vector (not re-normalised); every answered call is kept in :attr:`calls`.
    """

    def __init__(self, recording: Recording, *, queries: Iterable[str] | None = None) -> None:
        if not isinstance(recording, Recording):
            raise PlaceboragTypeError(
                f"recording={shown(recording)} must be a Recording; use"
                " ReplayEmbedder.from_path(path) to load one from a directory"
            )
        query_rows = {text: i for i, text in enumerate(recording.query_texts)}
        if queries is not None:
            wanted = _check_texts(queries, "queries")
            for text in wanted:
                if text not in query_rows:
                    raise _miss(recording, text, "query", query_rows, label="queries=")
            query_rows = {text: query_rows[text] for text in dict.fromkeys(wanted)}
        self._recording = recording
        self._document_rows = {text: i for i, text in enumerate(recording.document_texts)}
        self._query_rows = query_rows
        self._calls: list[tuple[str, tuple[str, ...]]] = []

    @classmethod
    def from_path(
        cls,
        path: str | os.PathLike[str] | Traversable,
        *,
        queries: Iterable[str] | None = None,
        expected_sha256: str | None = None,
        max_bytes: int = MAX_RECORDING_BYTES,
    ) -> ReplayEmbedder:
        """Load and verify the recording at ``path`` (see :meth:`Recording.load`) and wrap it."""
        recording = Recording.load(path, expected_sha256=expected_sha256, max_bytes=max_bytes)
        return cls(recording, queries=queries)

    @property
    def recording(self) -> Recording:
        return self._recording

    @property
    def model_name(self) -> str:
        return self._recording.model

    @property
    def dimensions(self) -> int:
        return self._recording.dimension

    @property
    def query_instruction(self) -> str:
        """The prefix the model was given for queries at recording time; replay adds nothing."""
        return self._recording.query_instruction

    @property
    def queries(self) -> tuple[str, ...]:
        """The recorded query texts this embedder answers, in recording order."""
        return tuple(self._query_rows)

    @property
    def calls(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """Each answered call as ``(method name, texts)``, oldest first."""
        return tuple(self._calls)

    def embed(self, text: str) -> list[float]:
        """The recorded vector of document ``text``."""
        vector = self._rows("embed", [_check_str(text, "text")], "document")[0]
        return cast("list[float]", vector.tolist())

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        """The recorded vectors of documents ``texts`` as an ``(n, dimensions)`` float64 array."""
        return self._rows("embed_batch", _check_texts(texts, "texts"), "document")

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """The recorded vectors of documents ``texts`` as lists (LangChain's shape)."""
        vectors = self._rows("embed_documents", _check_texts(texts, "texts"), "document")
        return cast("list[list[float]]", vectors.tolist())

    def embed_query(self, text: str) -> list[float]:
        """The recorded vector of query ``text``."""
        vector = self._rows("embed_query", [_check_str(text, "text")], "query")[0]
        return cast("list[float]", vector.tolist())

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """The recorded vectors of queries ``texts`` as an ``(n, dimensions)`` float64 array."""
        return self._rows("embed_queries", _check_texts(texts, "texts"), "query")

    def _rows(self, method: str, texts: list[str], kind: str) -> np.ndarray:
        rows = self._document_rows if kind == "document" else self._query_rows
        for text in texts:
            if text not in rows:
                raise _miss(self._recording, text, kind, rows)
        self._calls.append((method, tuple(texts)))
        matrix = (
            self._recording.document_vectors
            if kind == "document"
            else self._recording.query_vectors
        )
        # Fancy indexing copies, so a caller mutating the answer never reaches the recording.
        return matrix[np.array([rows[t] for t in texts], dtype=np.intp)].reshape(
            len(texts), self.dimensions
        )

    def __repr__(self) -> str:
        return (
            f"ReplayEmbedder(model_name={self.model_name!r}, "
            f"documents={len(self._document_rows)}, "
            f"queries={len(self._query_rows)}/{len(self._recording.query_texts)}, "
            f"dimensions={self.dimensions})"
        )


def _miss(
    recording: Recording, text: str, kind: str, exposed: Mapping[str, int], label: str = ""
) -> UnrecordedText:
    """Build the error for a lookup miss: why it missed and the nearest texts that would hit."""
    other = "query" if kind == "document" else "document"
    other_texts = recording.query_texts if kind == "document" else recording.document_texts
    own_texts = recording.document_texts if kind == "document" else recording.query_texts
    subject = f"{kind} {_quote(text)}" + (f" (named in {label})" if label else "")
    if text in own_texts:
        reason = f"{subject} is recorded but outside this embedder's queries="
    elif text in other_texts:
        reason = f"{subject} was not recorded: it is recorded as a {other}, not as a {kind}"
    else:
        reason = f"{subject} was not recorded"
    candidates = _nearest(text, exposed)
    plural = _PLURAL[kind]
    if candidates:
        listed = f"nearest recorded {plural}: {', '.join(_quote(c) for c in candidates)}"
    else:
        listed = f"no {plural} are available"
    message = (
        f"{reason}; {listed}. Replay matches text byte for byte and never calls a model "
        f"({shown(recording.model)}): record the text to use it"
    )
    return UnrecordedText(message, text=text, kind=kind, candidates=candidates)


_SHORTLIST = 12  # texts whose exact similarity a miss computes, after a linear screen


def _nearest(text: str, texts: Iterable[str], n: int = 3) -> tuple[str, ...]:
    """The ``n`` recorded texts most like ``text`` (difflib's ratio, ties by the text), in time
    linear in the recording: every text is screened by the characters it shares with ``text``
    (an upper bound on the ratio, one pass over each text), and only the best
    :data:`_SHORTLIST` get the exact, quadratic ratio."""
    wanted = collections.Counter(text)
    size = len(text)

    def bound(other: str) -> float:
        shared = sum((wanted & collections.Counter(other)).values())
        total = size + len(other)
        return 2.0 * shared / total if total else 1.0

    # heapq.nsmallest keeps the order stable and deterministic: best bound, then the text.
    shortlist = heapq.nsmallest(_SHORTLIST, texts, key=lambda other: (-bound(other), other))
    # The exact ratio, by the one "did you mean" rule, over the shortlist only.
    return nearest(text, shortlist, n=n, cutoff=0.0)


def load_demo_recording() -> Recording:
    """The recording shipped with placeborag: all-MiniLM-L6-v2 over a small support knowledge base.

    36 documents (refunds, shipping, accounts, billing, privacy; English, German and
    Hungarian) with ``topic``, ``lang``, ``tier`` and ``year`` metadata, and 12 questions whose
    metadata holds the hand-labelled ``relevant`` document ids and the ``expected_top3`` ids the
    real model ranked first at recording time.  Returns the :class:`Recording`; call
    ``.embedder()`` on it for a :class:`ReplayEmbedder`.
    """
    from importlib.resources import files

    return Recording.load(files("placeborag").joinpath("data").joinpath("minilm"))
