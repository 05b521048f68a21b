"""Fuzzing recorded-vector replay: what is recorded, and manifests tampered with at random."""

from __future__ import annotations

import json
import numbers
import os
import tempfile
from decimal import Decimal
from pathlib import Path

import numpy as np
from _fuzz import (
    FUZZ,
    FUZZ_SLOW,
    anything,
    json_values,
    nested,
    result_or_error,
    texts,
    tricky_json,
)
from hypothesis import given
from hypothesis import strategies as st

from placeborag import PlaceboragError, Recording, ReplayEmbedder, record_vectors


def model(texts_):
    return [[1.0 + len(t) % 5, 2.0, 0.5] for t in texts_]


@FUZZ_SLOW
@given(
    documents=st.one_of(st.lists(texts, min_size=0, max_size=4, unique=True), anything),
    metadata=st.one_of(st.none(), st.lists(json_values, max_size=4), anything),
    provenance=st.one_of(st.none(), st.dictionaries(texts, json_values, max_size=2), anything),
    dtype=st.one_of(st.sampled_from(["float32", "float64", "float16"]), anything),
    model_name=st.one_of(texts, anything),
)
def test_recording_anything_writes_a_loadable_recording_or_refuses(
    documents, metadata, provenance, dtype, model_name
):
    with tempfile.TemporaryDirectory() as folder:
        loaded = _record_or_refuse(
            Path(folder),
            documents=documents,
            document_metadata=metadata,
            provenance=provenance,
            dtype=dtype,
            model=model_name,
        )
        if loaded is not None:
            assert loaded.document_texts == tuple(documents)
            assert [p.name for p in Path(folder).iterdir()] == ["rec"]


def _record_or_refuse(folder: Path, **options) -> Recording | None:
    """What record_vectors(folder / "rec", ...) wrote, loaded again; None when it refused, in
    which case nothing was written and nothing is left behind."""
    path = folder / "rec"
    recording = result_or_error(lambda: record_vectors(path, embed_documents=model, **options))
    if isinstance(recording, PlaceboragError):
        assert list(folder.iterdir()) == []
        return None
    return Recording.load(path)


json_keys = st.one_of(
    texts, st.integers(-3, 3), st.booleans(), st.none(), st.floats(-2, 2), st.tuples()
)
keyed_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), texts),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(json_keys, inner, max_size=3),
    max_leaves=8,
)


@FUZZ_SLOW
@given(metadata=st.dictionaries(json_keys, keyed_values, max_size=3))
def test_recorded_metadata_loads_as_given_or_is_refused(metadata):
    # Keys of any kind at any depth: JSON would write 1 as "1"; refused, or kept exactly.
    with tempfile.TemporaryDirectory() as folder:
        loaded = _record_or_refuse(
            Path(folder), documents=["a"], document_metadata=[metadata], model="m"
        )
        if loaded is not None:
            assert loaded.document_metadata == (metadata,)


def test_recording_metadata_nested_3000_deep_is_refused(tmp_path):
    outcome = result_or_error(
        lambda: record_vectors(
            tmp_path / "rec",
            embed_documents=model,
            documents=["a"],
            document_metadata=[nested(3000)],
            model="m",
        )
    )
    assert isinstance(outcome, PlaceboragError)


MANIFEST_KEYS = [
    "format",
    "format_version",
    "model",
    "query_instruction",
    "dimension",
    "dtype",
    "byte_order",
    "vectors_file",
    "vectors_sha256",
    "texts_sha256",
    "document_count",
    "query_count",
    "documents",
    "queries",
    "provenance",
]


@FUZZ
@given(
    key=st.sampled_from(MANIFEST_KEYS),
    value=st.one_of(
        json_values,
        st.integers(-(10**40), 10**40),
        st.sampled_from([[{"id": 1}], [{"id": "x", "text": "a", "metadata": []}], {}, 0]),
    ),
    vectors=st.one_of(st.none(), st.binary(max_size=64)),
)
def test_a_tampered_recording_loads_verified_or_is_refused(key, value, vectors):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rec"
        record_vectors(path, embed_documents=model, documents=["a", "b"], model="m")
        manifest = json.loads((path / "manifest.json").read_text("utf-8"))
        manifest[key] = value
        (path / "manifest.json").write_text(json.dumps(manifest), "utf-8")
        if vectors is not None:
            (path / "vectors.bin").write_bytes(vectors)
        embedder = result_or_error(lambda: ReplayEmbedder.from_path(path))
        if not isinstance(embedder, PlaceboragError):
            assert np.asarray(embedder.embed_batch(["a", "b"])).shape == (2, embedder.dimensions)


@FUZZ
@given(
    kind=st.sampled_from(["documents", "queries"]),
    field=st.sampled_from(["id", "text", "metadata"]),
    value=st.one_of(texts, json_values, st.dictionaries(texts, texts, max_size=2)),
)
def test_a_tampered_entry_loads_verified_or_is_refused(kind, field, value):
    # texts holds lone surrogates: json.dumps writes them as "\ud800" escapes.
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rec"
        record_vectors(path, embed_documents=model, documents=["a", "b"], queries=["q"], model="m")
        manifest = json.loads((path / "manifest.json").read_text("utf-8"))
        manifest[kind][0][field] = value
        (path / "manifest.json").write_text(json.dumps(manifest), "utf-8")
        embedder = result_or_error(lambda: ReplayEmbedder.from_path(path))
        if not isinstance(embedder, PlaceboragError):
            assert field != "text" or value == {"documents": "a", "queries": "q"}[kind]
            assert np.asarray(embedder.embed_batch(["a", "b"])).shape == (2, 3)


@FUZZ
@given(raw=st.one_of(st.binary(max_size=200), tricky_json))
def test_a_manifest_of_random_bytes_is_refused(raw):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rec"
        record_vectors(path, embed_documents=model, documents=["a"], model="m")
        (path / "manifest.json").write_bytes(raw)
        assert isinstance(result_or_error(lambda: Recording.load(path)), PlaceboragError)


@FUZZ
@given(text=st.one_of(texts, anything), queries=st.one_of(st.none(), anything))
def test_replay_lookups_answer_or_name_the_miss(text, queries):
    with tempfile.TemporaryDirectory() as folder:
        recording = record_vectors(
            Path(folder) / "rec",
            embed_documents=model,
            documents=["a", "b"],
            queries=["q"],
            model="m",
        )
        embedder = result_or_error(lambda: recording.embedder(queries=queries))
        if isinstance(embedder, PlaceboragError):
            return
        for call in (embedder.embed, embedder.embed_query):
            result_or_error(lambda call=call: call(text))
        result_or_error(lambda: embedder.embed_batch(text))


vector_values = st.one_of(
    st.floats(),
    st.sampled_from(
        [10**400, 1e39, 1e-320, 0.0, True, np.bool_(False), "1.0", None, 1 + 2j, Decimal("0.5")]
    ),
    anything,
)


def _real(value):
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


@FUZZ
@given(
    returned=st.one_of(
        st.lists(st.lists(vector_values, max_size=3), max_size=3),
        st.lists(st.lists(st.floats(-10, 10), min_size=2, max_size=2), min_size=2, max_size=2),
        anything,
    ),
    dtype=st.sampled_from(["float32", "float64"]),
)
def test_recording_whatever_a_model_returns_records_it_or_refuses(returned, dtype):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rec"
        recording = result_or_error(
            lambda: record_vectors(
                path,
                embed_documents=lambda texts_: returned,
                documents=["a", "b"],
                model="m",
                dtype=dtype,
            )
        )
        if isinstance(recording, PlaceboragError):
            assert list(Path(folder).iterdir()) == []
        else:
            assert recording.document_vectors.shape[0] == 2
            if isinstance(returned, list) and all(isinstance(row, list) for row in returned):
                # only real numbers are recorded: a bool, a "1.0" or a complex is refused
                assert all(_real(value) for row in returned for value in row)


@FUZZ
@given(path=st.one_of(texts.map(lambda t: t.replace("/", "")), anything))
def test_a_recording_path_of_any_kind_is_used_or_refused(path):
    with tempfile.TemporaryDirectory() as folder:
        previous = Path.cwd()
        os.chdir(folder)
        try:
            result_or_error(
                lambda: record_vectors(path, embed_documents=model, documents=["a"], model="m")
            )
            result_or_error(lambda: Recording.load(path))
        finally:
            os.chdir(previous)
