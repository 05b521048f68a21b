"""Fuzzing the file loaders and writers with special paths, and the callbacks that call back.

Every loader (a recording, a scenario, a dump) and every writer (a report, a scenario, a dump,
a recording) is given each kind of path a hostile or careless caller can hand it: a FIFO, a
socket, a link to a character device, a directory, a dangling link, a link that loops, and a
regular file of random bytes. A loader loads it or refuses it with a PlaceboragError naming it,
or raises the OSError ``open()`` would (a missing file, a loop); it never blocks, never reads
a device, never replaces it. A kind the machine cannot make here is skipped, by name.

The re-entrant callbacks: a token counter, an access rule, a scorer's computed step, a chat
script's computed reply and an embedder, each calling back into the object that called it, on
several threads at once: every call finishes (no deadlock), with a result or a PlaceboragError.
"""

from __future__ import annotations

import os
import socket
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from _fuzz import FUZZ, FUZZ_SLOW, result_or_error, texts, tricky_json
from _guards import no_hang
from _race import race
from hypothesis import given
from hypothesis import strategies as st

from placeborag import FakeVectorStore, PlaceboragError, Recording, ScriptedScorer
from placeborag.query_engine import ScriptedChatModel, Sessions, StubKnowledgeStore

KINDS = ["fifo", "socket", "char-device-link", "directory", "dangling-link", "loop-link"]


def make(kind: str, path: Path) -> None:
    """A special file of ``kind`` at ``path``, or a skip naming what this machine refuses."""
    if kind == "fifo":
        if not hasattr(os, "mkfifo"):
            pytest.skip("fifo: this machine has no named pipes")
        os.mkfifo(path)
    elif kind == "socket":
        if not hasattr(socket, "AF_UNIX") or len(os.fsencode(path)) > 100:
            pytest.skip("socket: no Unix socket at a path this long here")
        server = socket.socket(socket.AF_UNIX)
        server.bind(os.fspath(path))
        server.close()  # the socket file stays
    elif kind == "char-device-link":
        if not Path("/dev/zero").exists():
            pytest.skip("char-device-link: this machine has no /dev/zero")
        path.symlink_to("/dev/zero")
    elif kind == "directory":
        path.mkdir()
    elif kind == "dangling-link":
        path.symlink_to(path.parent / "nowhere")
    else:
        path.symlink_to(path)


def loaded_or_refused(load: Callable[[], object]) -> object:
    """The loader's result, its PlaceboragError, or the OSError open() would raise."""
    with no_hang():
        try:
            return result_or_error(load)
        except OSError as error:
            assert error.errno is not None and error.filename, error
            return error


def _dump_loader(path: Path) -> Callable[[], object]:
    pytest.importorskip("langchain_core")
    from placeborag.integrations.langchain import PlaceboEmbeddings, PlaceboVectorStore

    return lambda: PlaceboVectorStore.load(path, PlaceboEmbeddings())


def _scenario_loader(path: Path) -> Callable[[], object]:
    pytest.importorskip("pandas")
    from placeborag.explore import Scenario

    return lambda: Scenario.load(path)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("loader", ["scenario", "dump", "manifest", "vectors"])
def test_every_loader_given_a_special_path_refuses_it_without_blocking(
    tmp_path: Path, kind: str, loader: str
) -> None:
    if loader in ("manifest", "vectors"):
        from placeborag import record_vectors

        record_vectors(
            tmp_path / "rec",
            embed_documents=lambda ts: [[1.0, 2.0] for _ in ts],
            documents=["a"],
            model="m",
        )
        target = tmp_path / "rec" / ("manifest.json" if loader == "manifest" else "vectors.bin")
        target.unlink()
        make(kind, target)
        outcome = loaded_or_refused(lambda: Recording.load(tmp_path / "rec"))
    else:
        target = tmp_path / "file.json"
        make(kind, target)
        load = _scenario_loader(target) if loader == "scenario" else _dump_loader(target)
        outcome = loaded_or_refused(load)
    assert isinstance(outcome, (PlaceboragError, OSError)), outcome


def _writer(writer: str, target: Path) -> Callable[[], object]:
    """The public writer ``writer`` aimed at ``target``."""
    if writer == "report":
        pytest.importorskip("plotly")
        from placeborag.explore import demo_scenario
        from placeborag.explore._report import write_report

        return lambda: write_report(target, demo_scenario(4))
    if writer == "scenario":
        pytest.importorskip("pandas")
        from placeborag.explore import demo_scenario

        return lambda: demo_scenario(4).save(target)
    if writer == "dump":
        pytest.importorskip("langchain_core")
        from placeborag.integrations.langchain import PlaceboVectorStore

        store = PlaceboVectorStore()
        store.add_texts(["a"])
        return lambda: store.dump(target)
    from placeborag import record_vectors

    return lambda: record_vectors(
        target, embed_documents=lambda ts: [[1.0] for _ in ts], documents=["a"], model="m"
    )


@pytest.mark.parametrize("kind", ["fifo", "socket", "char-device-link", "directory"])
@pytest.mark.parametrize("writer", ["report", "scenario", "dump", "recording"])
def test_every_writer_given_a_special_path_refuses_it_and_leaves_it(
    tmp_path: Path, kind: str, writer: str
) -> None:
    target = tmp_path / "out"
    make(kind, target)
    before = os.lstat(target)
    call = _writer(writer, target)
    with no_hang():
        try:
            outcome: object = result_or_error(call)
        except IsADirectoryError as error:  # what open(directory, "w") raises
            outcome = error
    if kind == "directory" and writer == "recording":
        assert outcome is not None  # an empty folder becomes the recording: allowed
        return
    assert isinstance(outcome, (PlaceboragError, IsADirectoryError)), outcome
    after = os.lstat(target)
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)


@FUZZ
@given(
    raw=st.one_of(st.binary(max_size=200), tricky_json),
    limit=st.integers(min_value=1, max_value=400),
    loader=st.sampled_from(["scenario", "dump", "manifest"]),
)
def test_any_bytes_under_any_limit_load_or_are_refused_by_name(
    raw: bytes, limit: int, loader: str
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        if loader == "manifest":
            (Path(folder) / "manifest.json").write_bytes(raw)
            (Path(folder) / "vectors.bin").write_bytes(b"\0" * 8)
            outcome = loaded_or_refused(lambda: Recording.load(folder, max_bytes=limit))
        else:
            path = Path(folder) / "file.json"
            path.write_bytes(raw)
            if loader == "scenario":
                pytest.importorskip("pandas")
                from placeborag.explore import Scenario

                outcome = loaded_or_refused(lambda: Scenario.load(path, max_bytes=limit))
            else:
                pytest.importorskip("langchain_core")
                from placeborag.integrations.langchain import PlaceboEmbeddings, PlaceboVectorStore

                outcome = loaded_or_refused(
                    lambda: PlaceboVectorStore.load(path, PlaceboEmbeddings(), max_bytes=limit)
                )
        if len(raw) > limit:
            assert isinstance(outcome, PlaceboragError) and "more than the limit" in str(outcome)


# -- re-entrant callbacks --------------------------------------------------------------------


def _calls_back(target: Callable[[], object], threads: int = 4) -> list[object]:
    """``target()`` on ``threads`` threads at once; every one must finish (no deadlock)."""
    outcomes: list[object] = []

    def run() -> None:
        outcomes.append(result_or_error(target))

    assert race(run, [()] * threads, timeout=60) == []
    assert len(outcomes) == threads
    return outcomes


@FUZZ_SLOW
@given(utterances=st.lists(texts, min_size=1, max_size=3), back=st.sampled_from(range(4)))
def test_a_token_counter_calling_back_into_its_sessions_never_deadlocks(
    utterances: list[str], back: int
) -> None:
    def counter(text: str) -> int:
        if back == 0:
            sessions.open("someone")
        elif back == 1:
            sessions.find(session, "conv-1")
        elif back == 2:
            len(sessions.conversations)
        else:
            sessions.start(session)  # a conversation with no turns counts nothing
        return len(text)

    sessions = Sessions(counter=counter)
    session = sessions.open("alice")
    _calls_back(lambda: sessions.start(session, *utterances))


@FUZZ_SLOW
@given(query=texts, back=st.sampled_from(["search", "calls", "queries"]))
def test_an_access_rule_calling_back_into_its_knowledge_store_never_deadlocks(
    query: str, back: str
) -> None:
    def access(identity: object, match: object) -> bool:
        if back == "search" and identity != "inner":
            knowledge.search(query, identity="inner")
        elif back == "calls":
            len(knowledge.calls)
        else:
            len(knowledge.queries)
        return True

    knowledge = StubKnowledgeStore(default=[{"id": "a", "text": "refund"}], access=access)
    _calls_back(lambda: knowledge.search(query, identity="outer"))


@FUZZ_SLOW
@given(query=texts)
def test_a_scorer_step_and_a_chat_reply_calling_back_never_deadlock(query: str) -> None:
    scorer = ScriptedScorer.scoring(lambda text: float(len(scorer.requests))).then_repeats()
    _calls_back(lambda: scorer.score(query, ["a", "b"]))
    model = ScriptedChatModel.answering(lambda request: str(len(model.requests))).then_repeats()
    _calls_back(lambda: model.invoke(query))


@FUZZ_SLOW
@given(texts_=st.lists(texts.filter(bool), min_size=1, max_size=3, unique=True))
def test_an_embedder_reading_its_store_while_it_embeds_never_deadlocks(
    texts_: list[str],
) -> None:
    from placeborag import FakeEmbedder

    class Peeking(FakeEmbedder):
        def embed_batch(self, batch):  # type: ignore[no-untyped-def]
            len(store)
            store.records()
            return super().embed_batch(batch)

    store = FakeVectorStore(embedder=Peeking(dimensions=8))
    _calls_back(lambda: store.upsert_many([f"id-{t}" for t in texts_], texts_))
    _calls_back(lambda: store.query(texts_[0], k=2))
