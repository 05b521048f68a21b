"""Atomic writes: the path holds the old complete file or the new one, whatever happens.

The kill test runs each writer (the report, Scenario.save, record_vectors with overwrite=True)
in a forked child that overwrites one path in a loop, alternating two versions, and SIGKILLs
it at a random moment, 100 times in all; after every kill the path must load as one of the two
versions. The writer's test hook sleeps a random moment between its steps, so kills land inside
the write (between fsync and rename, between the rename and the cleanup) rather than around it.
"""

from __future__ import annotations

import contextlib
import errno
import multiprocessing
import os
import random
import signal
import sys
import time
from pathlib import Path

import pytest

from placeborag import PlaceboragValueError, _files

KILLS = 100


def test_write_text_replaces_the_file_and_keeps_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "page.html"
    path.write_text("old")
    path.chmod(0o640)
    _files.write_text(path, "new")
    assert path.read_text() == "new"
    assert path.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["page.html"]


def test_a_write_that_fails_before_the_rename_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "page.html"
    path.write_text("old")

    def fail(step: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_files, "_after_step", fail)
    with pytest.raises(OSError, match="No space left"):
        _files.write_text(path, "new")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["page.html"]


def test_replace_directory_swaps_a_whole_directory(tmp_path: Path) -> None:
    _files.replace_directory(tmp_path / "rec", {"a": b"1", "b": b"2"})
    _files.replace_directory(tmp_path / "rec", {"a": b"3", "b": b"4"})
    assert {p.name: p.read_bytes() for p in (tmp_path / "rec").iterdir()} == {
        "a": b"3",
        "b": b"4",
    }
    assert [p.name for p in tmp_path.iterdir()] == ["rec"]


@pytest.mark.skipif(os.name != "posix", reason="leftovers are told by flock, a POSIX lock")
def test_leftovers_are_swept_and_a_temporary_a_writer_holds_is_kept(tmp_path: Path) -> None:
    import fcntl

    old = tmp_path / ".page.html.999999999.abc.placeborag-tmp"  # a 0.4 name: pid in it
    abandoned = tmp_path / ".page.html.0a1b2c.placeborag-tmp"
    held = tmp_path / ".page.html.3d4e5f.placeborag-tmp"
    other = tmp_path / ".notes.txt.999999999.abc.placeborag-tmp"
    for path in (old, abandoned, held, other):
        path.write_text("partial")
    with open(held) as handle:  # a writer that could not lock the folder holds its own
        fcntl.flock(handle, fcntl.LOCK_EX)
        _files.write_text(tmp_path / "page.html", "new")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["page.html", held.name, other.name]
    )


@pytest.mark.skipif(os.name != "posix", reason="leftovers are told by flock, a POSIX lock")
def test_nothing_is_swept_while_another_writer_is_inside_the_folder(tmp_path: Path) -> None:
    import fcntl

    leftover = tmp_path / ".page.html.0a1b2c.placeborag-tmp"
    leftover.write_text("partial")
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)  # what a writer holds while its temporary exists
        _files.write_text(tmp_path / "page.html", "new")
        assert leftover.exists()
    finally:
        os.close(fd)
    _files.write_text(tmp_path / "page.html", "newer")
    assert [p.name for p in tmp_path.iterdir()] == ["page.html"]


def _pause_as_another_namespace(kind: str, path: str, ready, go, done) -> None:  # forked child
    """Write ``path`` as a writer in another PID namespace would: its process id means nothing
    here (0.4 named temporaries by pid and swept those whose pid was not running)."""
    from placeborag import _files as files

    os.getpid = lambda: 999_999_999  # a pid no process here has

    def pause(step: str) -> None:
        if step == "written":
            ready.set()
            go.wait(30)

    files._after_step = pause
    try:
        if kind == "file":
            files.write_text(path, "from the other container")
        else:
            files.replace_directory(path, {"a": b"from the other container"})
    except BaseException as error:  # the parent reports it
        done.send(repr(error))
        os._exit(1)
    done.send("ok")
    os._exit(0)


@pytest.mark.skipif(
    sys.platform == "win32" or "fork" not in multiprocessing.get_all_start_methods(),
    reason="forks a writer",
)
@pytest.mark.parametrize("kind", ["file", "directory"])
def test_a_live_writer_in_another_pid_namespace_keeps_its_temporary(
    tmp_path: Path, kind: str
) -> None:
    # issue 27: the sweep removed a live writer's temporary when that writer ran in another
    # PID namespace (a second container on a shared volume): its write then failed with
    # FileNotFoundError naming a path that exists.
    context = multiprocessing.get_context("fork")
    ready, go = context.Event(), context.Event()
    report, done = context.Pipe(duplex=False)
    target = tmp_path / ("page.html" if kind == "file" else "rec")
    child = context.Process(
        target=_pause_as_another_namespace, args=(kind, str(target), ready, go, done)
    )
    child.start()
    try:
        assert ready.wait(30)
        # This process writes another file in the same folder, sweeping if it may.
        _files.write_text(tmp_path / "other.html", "here")
        if kind == "file":
            _files.write_text(target, "here")
        else:
            _files.replace_directory(target, {"a": b"here"})
    finally:
        go.set()
        child.join(30)
    assert (report.recv(), child.exitcode) == ("ok", 0)
    if kind == "file":
        assert target.read_text() == "from the other container"
    else:
        assert (target / "a").read_bytes() == b"from the other container"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([target.name, "other.html"])


# -- the kill test --------------------------------------------------------------------------


PAGES = ("<p>old</p>\n" * 10, "<p>new</p>\n" * 200_000)


def _write_page(path: Path, version: int) -> None:
    """write_report with a pre-rendered page: the write is under test, not the rendering.

    Called in the forked children only (and under monkeypatch in the parent): it replaces
    render_report in the process that calls it.
    """
    from placeborag.explore import _report

    _report.render_report = lambda scenario=None, **options: PAGES[version]
    _report.write_report(path)


_SCENARIOS: list[object] = []


def _scenarios() -> list[object]:
    # Built once in the parent, so a forked child starts writing at once.
    if not _SCENARIOS:
        from placeborag.explore import demo_scenario

        _SCENARIOS.extend([demo_scenario(), demo_scenario(500)])
    return _SCENARIOS


def _model(scale: float):
    def embed(texts: list[str]) -> list[list[float]]:
        return [[scale, float(len(text) % 7) + 1.0, 1.0] for text in texts]

    return embed


def _record(path: Path, version: int) -> None:
    from placeborag import record_vectors

    count = (3, 300)[version]
    record_vectors(
        path,
        embed_documents=_model(1.0 + version),
        documents=[f"document {i}" for i in range(count)],
        model=f"model-{version}",
        overwrite=True,
    )


def _writer_loop(kind: str, path: str, seed: int, writes) -> None:  # runs in the child
    from placeborag import _files as files

    rng = random.Random(seed)
    files._after_step = lambda step: time.sleep(rng.random() * 0.002)
    target = Path(path)
    scenarios = _scenarios() if kind == "scenario" else None
    for i in range(100_000):
        version = (i + seed) % 2
        if kind == "report":
            _write_page(target, version)
        elif kind == "scenario":
            scenarios[version].save(target)
        else:
            _record(target, version)
        writes.value += 1  # one child at a time: no lock, which a kill could leave held
    os._exit(0)


def _loaded(kind: str, path: Path) -> object:
    if kind == "report":
        return path.read_text(encoding="utf-8")[:12]
    if kind == "scenario":
        from placeborag.explore import Scenario

        return len(Scenario.load(path).documents)
    from placeborag import Recording

    return Recording.load(path).model


@pytest.mark.skipif(
    sys.platform == "win32" or "fork" not in multiprocessing.get_all_start_methods(),
    reason="kills forked writers",
)
@pytest.mark.parametrize("kind", ["report", "scenario", "recording"])
def test_a_writer_killed_at_random_points_always_leaves_a_loadable_path(
    tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("plotly")
    pytest.importorskip("sklearn")
    context = multiprocessing.get_context("fork")
    path = tmp_path / {"report": "r.html", "scenario": "s.json", "recording": "rec"}[kind]
    if kind == "report":
        path.write_text(PAGES[0], encoding="utf-8")
        expected = {"<p>old</p>\n<", "<p>new</p>\n<"}
    elif kind == "scenario":
        _scenarios()[0].save(path)
        expected = {len(s.documents) for s in _scenarios()}
    else:
        _record(path, 0)
        expected = {"model-0", "model-1"}
    rng = random.Random(f"issue 13 kill test {kind}")
    # Imported once here, before the forks, so a child starts writing at once.
    from placeborag.explore import _report

    writes = context.Value("i", 0, lock=False)
    seen = set()
    kills = KILLS // 3 + (1 if kind == "report" else 0)  # 34 + 33 + 33 = 100
    for attempt in range(kills):
        child = context.Process(target=_writer_loop, args=(kind, str(path), attempt, writes))
        child.start()
        if attempt % 4 in (0, 1):
            # Every other pair of children is let finish its first write (one of each
            # version) before the random moment, so both versions reach the path even on a
            # machine too loaded to write a large one within 0.12 s.
            done = writes.value
            deadline = time.monotonic() + 30
            while writes.value == done and time.monotonic() < deadline:
                time.sleep(0.001)
        time.sleep(rng.uniform(0.0, 0.12))
        os.kill(child.pid, signal.SIGKILL)
        child.join()
        value = _loaded(kind, path)
        assert value in expected, f"after kill {attempt}: {value!r}"
        seen.add(value)
    # Not vacuous: the children finished writes, and both versions were at the path.
    assert writes.value > 0
    assert seen == expected
    # A normal write afterwards sweeps what the killed writers left.
    if kind == "report":
        monkeypatch.setattr(_report, "render_report", _report.render_report)
        _write_page(path, 0)
    elif kind == "scenario":
        _scenarios()[0].save(path)
    else:
        _record(path, 0)
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


@pytest.mark.skipif(os.name != "posix", reason="symlinks need no privilege on POSIX")
def test_writing_through_a_symlink_replaces_the_file_it_points_to(tmp_path: Path) -> None:
    (tmp_path / "real.html").write_text("old")
    (tmp_path / "link.html").symlink_to("real.html")
    _files.write_text(tmp_path / "link.html", "new")
    assert (tmp_path / "link.html").is_symlink()
    assert (tmp_path / "real.html").read_text() == "new"


# -- a symbolic link at the path: followed by every writer ----------------------------------


def _write_as(kind: str, path: Path, version: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Write version 0 or 1 of ``kind`` at ``path`` through the package's public writer."""
    if kind == "report":
        from placeborag.explore import _report

        monkeypatch.setattr(_report, "render_report", lambda scenario=None, **o: PAGES[version])
        _report.write_report(path)
    elif kind == "scenario":
        pytest.importorskip("pandas")
        from placeborag.explore import demo_scenario

        demo_scenario((20, 40)[version]).save(path)
    elif kind == "export":
        pytest.importorskip("langchain_core")
        from placeborag.integrations.langchain import PlaceboVectorStore

        store = PlaceboVectorStore()
        store.add_texts([f"text {i}" for i in range(1 + version)])
        store.dump(path)
    else:
        _record(path, version)


def _version_at(kind: str, path: Path) -> int:
    if kind == "report":
        return PAGES.index(path.read_text(encoding="utf-8"))
    if kind == "scenario":
        from placeborag.explore import Scenario

        return (20, 40).index(len(Scenario.load(path).documents))
    if kind == "export":
        import json

        return len(json.loads(path.read_text(encoding="utf-8"))["records"]) - 1
    from placeborag import Recording

    return int(Recording.load(path).model.removeprefix("model-"))


WRITERS = ["report", "scenario", "export", "recording"]
NAMES = {"report": "r.html", "scenario": "s.json", "export": "e.json", "recording": "rec"}


@pytest.mark.skipif(os.name != "posix", reason="symlinks need no privilege on POSIX")
@pytest.mark.parametrize("kind", WRITERS)
def test_every_writer_follows_a_symlink_and_replaces_what_it_points_to(
    tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A recording written through a link replaced the link by a directory (the recording it
    # named kept its old content) and left a hidden .link.*.placeborag-tmp behind.
    data, links = tmp_path / "data", tmp_path / "links"
    data.mkdir()
    links.mkdir()
    real, link = data / NAMES[kind], links / NAMES[kind]
    _write_as(kind, real, 0, monkeypatch)
    link.symlink_to(real)
    _write_as(kind, link, 1, monkeypatch)
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert _version_at(kind, real) == 1
    assert _version_at(kind, link) == 1
    assert [p.name for p in data.iterdir()] == [real.name]
    assert [p.name for p in links.iterdir()] == [link.name]


@pytest.mark.skipif(os.name != "posix", reason="symlinks need no privilege on POSIX")
@pytest.mark.parametrize("kind", WRITERS)
def test_every_writer_follows_a_dangling_symlink_and_refuses_a_looping_one(
    tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / NAMES[kind])
    _write_as(kind, dangling, 1, monkeypatch)
    assert dangling.is_symlink()
    assert _version_at(kind, tmp_path / NAMES[kind]) == 1
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    with pytest.raises(OSError) as excinfo:  # what open(loop, "w") raises
        _write_as(kind, loop, 0, monkeypatch)
    assert excinfo.value.errno == errno.ELOOP
    assert loop.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["dangling", "loop", NAMES[kind]])


def test_a_write_that_cannot_happen_names_the_given_path_not_a_temporary(
    tmp_path: Path,
) -> None:
    (tmp_path / "adir").mkdir()

    with pytest.raises(IsADirectoryError) as is_dir:
        _files.write_text(tmp_path / "adir", "x")
    with pytest.raises(FileNotFoundError) as missing:
        _files.write_text(tmp_path / "missing" / "x.html", "x")

    assert is_dir.value.filename == str(tmp_path / "adir")
    assert missing.value.filename == str(tmp_path / "missing" / "x.html")
    assert "placeborag-tmp" not in str(is_dir.value) + str(missing.value)
    assert [p.name for p in tmp_path.rglob("*")] == ["adir"]


# -- special files at the destination ------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes need POSIX")
@pytest.mark.parametrize("kind", WRITERS)
def test_every_writer_refuses_a_fifo_at_the_path_by_name_and_leaves_it(
    tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 27: every writer swapped a FIFO (or a device) at the destination for a file.
    import stat

    fifo = tmp_path / NAMES[kind]
    os.mkfifo(fifo)
    with pytest.raises(PlaceboragValueError) as excinfo:
        _write_as(kind, fifo, 1, monkeypatch)
    assert str(fifo) in str(excinfo.value)
    assert "a named pipe (FIFO)" in str(excinfo.value)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert [p.name for p in tmp_path.iterdir()] == [fifo.name]


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="needs /dev/null")
@pytest.mark.parametrize("kind", WRITERS)
def test_every_writer_refuses_a_link_to_a_device_and_leaves_the_device(
    tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 27: run as root, `placeborag report --out /dev/null` replaced /dev/null itself.
    # The guard keeps the old code (which would do it) from touching the real /dev/null.
    real_replace = os.replace

    def guarded(source: object, destination: object) -> None:
        assert os.fspath(destination) != "/dev/null", "replaced /dev/null"  # type: ignore[call-overload]
        real_replace(source, destination)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "replace", guarded)
    link = tmp_path / NAMES[kind]
    link.symlink_to("/dev/null")
    with pytest.raises(PlaceboragValueError) as excinfo:
        _write_as(kind, link, 1, monkeypatch)
    assert str(link) in str(excinfo.value)
    assert "a character device" in str(excinfo.value)
    assert not [p for p in Path("/dev").iterdir() if p.name.startswith(".null.")]


def test_the_cli_refuses_a_fifo_as_its_output_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("named pipes need POSIX")
    pytest.importorskip("plotly")
    from placeborag._cli import main

    fifo = tmp_path / "out.html"
    os.mkfifo(fifo)
    assert main(["report", "--out", str(fifo)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("placeborag report: ") and "a named pipe (FIFO)" in err
    assert "Traceback" not in err


# -- the umask ------------------------------------------------------------------------------


@pytest.mark.skipif(os.name != "posix", reason="the umask is POSIX")
@pytest.mark.parametrize("umask", [0o077, 0o022, 0o002])
def test_new_files_and_folders_follow_the_umask(tmp_path: Path, umask: int) -> None:
    # issue 27: new files were 0644 and recording folders 0755 under umask 077, so a
    # recording of private documents became world-readable.
    old = os.umask(umask)
    try:
        _files.write_text(tmp_path / "page.html", "new")
        _record(tmp_path / "rec", 0)
    finally:
        os.umask(old)
    assert (tmp_path / "page.html").stat().st_mode & 0o777 == 0o666 & ~umask
    assert (tmp_path / "rec").stat().st_mode & 0o777 == 0o777 & ~umask
    for name in ("manifest.json", "vectors.bin"):
        assert (tmp_path / "rec" / name).stat().st_mode & 0o777 == 0o666 & ~umask


# -- errors name the path the caller gave ---------------------------------------------------


def test_a_recording_that_cannot_be_written_names_the_given_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 27: record_vectors' file-system errors named the hidden temporary or no path.
    def full(step: str) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(_files, "_after_step", full)
    with pytest.raises(OSError) as excinfo:
        _record(tmp_path / "rec", 0)
    assert (excinfo.value.errno, excinfo.value.filename) == (errno.ENOSPC, str(tmp_path / "rec"))
    assert "placeborag-tmp" not in str(excinfo.value)
    assert list(tmp_path.iterdir()) == []


# -- concurrent writers and readers of one recording ----------------------------------------


def _two_writers_at_once(path: Path, overwrite: bool, monkeypatch: pytest.MonkeyPatch) -> list:
    """Two threads record ``path`` at once, both past their checks before either moves its
    directory into place; returns what each raised (None: it finished)."""
    import threading

    from placeborag import record_vectors

    barrier = threading.Barrier(2, timeout=30)
    met = threading.local()

    def meeting(move):  # both threads decide how to move before either moves
        def moved(source, destination):
            if os.fspath(destination) == str(path) and not getattr(met, "done", False):
                met.done = True
                with contextlib.suppress(threading.BrokenBarrierError):
                    barrier.wait()
            return move(source, destination)

        return moved

    monkeypatch.setattr(os, "replace", meeting(os.replace))
    monkeypatch.setattr(os, "rename", meeting(os.rename))
    outcome: list[object] = [None, None]

    def write(n: int) -> None:
        try:
            record_vectors(
                path,
                embed_documents=_model(1.0 + n),
                documents=["a", "b"],
                model=f"model-{n}",
                overwrite=overwrite,
            )
        except BaseException as error:
            outcome[n] = error

    threads = [threading.Thread(target=write, args=(n,)) for n in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return outcome


@pytest.mark.parametrize("existing", [False, True], ids=["new", "over-an-old-one"])
def test_two_writers_overwriting_one_recording_at_once_both_finish(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, existing: bool
) -> None:
    # issue 27: concurrent writers got a raw ENOTEMPTY naming temporaries.
    from placeborag import Recording

    path = tmp_path / "rec"
    if existing:
        _record(path, 0)
    assert _two_writers_at_once(path, True, monkeypatch) == [None, None]
    assert Recording.load(path).model in {"model-0", "model-1"}
    assert [p.name for p in tmp_path.iterdir()] == ["rec"]


def test_of_two_writers_creating_one_recording_the_second_is_told_it_exists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from placeborag import Recording

    path = tmp_path / "rec"
    outcome = _two_writers_at_once(path, False, monkeypatch)
    (error,) = [e for e in outcome if e is not None]
    assert isinstance(error, PlaceboragValueError)
    assert error.args == (
        f"path={str(path)!r} already exists; pass overwrite=True to replace the recording",
    )
    assert Recording.load(path).model == f"model-{outcome.index(None)}"
    assert [p.name for p in tmp_path.iterdir()] == ["rec"]


@pytest.mark.parametrize("exchange", [True, False], ids=["rename-exchange", "two-renames"])
def test_a_reader_of_a_recording_being_replaced_sees_the_old_or_the_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exchange: bool
) -> None:
    # issue 27: reading a recording while another writer replaced it gave false "vectors
    # changed" or RecordingNotFound errors. A bounded loop: 24 overwrites, read all along.
    import threading

    from placeborag import Recording

    if not exchange:
        monkeypatch.setattr(_files, "_exchange", lambda a, b: False)
    path = tmp_path / "rec"
    _record(path, 0)
    stop = threading.Event()
    errors: list[BaseException] = []
    seen: set[str] = set()

    def read() -> None:
        while not stop.is_set():
            try:
                seen.add(Recording.load(path).model)
            except BaseException as error:
                errors.append(error)
                return

    readers = [threading.Thread(target=read) for _ in range(2)]
    for reader in readers:
        reader.start()
    try:
        for i in range(24):
            _record(path, (i + 1) % 2)
    finally:
        stop.set()
        for reader in readers:
            reader.join(30)
    assert errors == []
    assert seen <= {"model-0", "model-1"} and seen
    assert [p.name for p in tmp_path.iterdir()] == ["rec"]
