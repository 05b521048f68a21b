"""Atomic writes: the path holds the old complete file or the new one, whatever happens.

The kill test runs each writer (the report, Scenario.save, record_vectors with overwrite=True)
in a forked child that overwrites one path in a loop, alternating two versions, and SIGKILLs
it at a random moment, 100 times in all; after every kill the path must load as one of the two
versions. The writer's test hook sleeps a random moment between its steps, so kills land inside
the write (between fsync and rename, between the rename and the cleanup) rather than around it.
"""

from __future__ import annotations

import errno
import multiprocessing
import os
import random
import signal
import sys
import time
from pathlib import Path

import pytest

from placeborag import _files

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


@pytest.mark.skipif(os.name != "posix", reason="liveness of a process id is probed on POSIX")
def test_temporaries_of_dead_writers_are_swept_and_live_ones_kept(tmp_path: Path) -> None:
    dead = tmp_path / ".page.html.999999999.abc.placeborag-tmp"
    mine = tmp_path / f".page.html.{os.getpid()}.abc.placeborag-tmp"
    other = tmp_path / ".notes.txt.999999999.abc.placeborag-tmp"
    for path in (dead, mine, other):
        path.write_text("partial")
    _files.write_text(tmp_path / "page.html", "new")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["page.html", mine.name, other.name]
    )


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
