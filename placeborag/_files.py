"""Atomic writes: every file and directory placeborag writes appears whole or not at all.

Files (reports, scenarios, exports) go through :func:`write_text` / :func:`write_bytes`: the
data is written to a temporary file in the same folder, flushed and fsynced, then moved over
the path with ``os.replace``, which is atomic on POSIX and Windows within one filesystem. A
reader of the path sees the old complete file or the new complete file, never a truncated one;
a failure before the move (an unserialisable value, a full disk) leaves the old file untouched.

Directories (recordings) go through :func:`replace_directory`. A directory cannot be
``os.replace``-d over a non-empty one, so the scheme is:

1. write every file into a temporary sibling directory and fsync each one;
2. if nothing is at the path, rename the temporary directory to it (atomic);
3. otherwise *exchange* the two names in one system call (``renameat2(RENAME_EXCHANGE)`` on
   Linux, ``renamex_np(RENAME_SWAP)`` on macOS): the path goes from the old complete
   recording to the new one with no moment in between; the old one is then under the
   temporary name and is deleted;
4. where no exchange call exists (Windows, an old kernel, a filesystem that refuses it) the old
   directory is first renamed to a fixed backup name, ``.<name>.placeborag-previous``, then the
   new one takes the path. If the process dies between the two renames the path is briefly
   empty, so :func:`readable_directory` sends a reader to the backup, and the next write puts
   the backup back or removes it.

A symbolic link at the path is followed, by files and directories alike: what the link points
to is replaced as above, beside itself, and the link stays a link (as ``open(path, "w")`` treats
a link). A dangling link is followed to where it points, so the write creates that; a link that
loops is the ``OSError`` (``ELOOP``) ``open()`` raises. Replacing the link itself by a file or a
directory would silently cut it loose from what it names.

Temporary names are ``.<name>.<pid>.<random>.placeborag-tmp``: hidden, beside the path, and
carrying the writer's process id. A failed call removes its own; one left by a process that was
killed is removed by the next write to the same path once that process is gone, so nothing
hidden accumulates.

``_after_step`` is a test hook: the kill test sets it to sleep for a random moment between the
steps, so a SIGKILL lands inside the write rather than around it. It is ``None`` otherwise.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

__all__ = ["readable_directory", "replace_directory", "write_bytes", "write_text"]

_TMP_SUFFIX = ".placeborag-tmp"
_BACKUP_SUFFIX = ".placeborag-previous"

_after_step: Callable[[str], None] | None = None


def _step(name: str) -> None:
    if _after_step is not None:
        _after_step(name)


def write_text(path: str | os.PathLike[str], text: str, *, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` atomically (see the module docstring)."""
    write_bytes(path, text.encode(encoding))


def write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: a temporary sibling, fsync, ``os.replace``."""
    target = _followed(Path(path))
    parent = target.parent
    # An error names the path the caller gave, never the hidden temporary beside it.
    if target.is_dir():
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fspath(path))
    if not parent.is_dir():
        missing = errno.ENOENT if not os.path.lexists(parent) else errno.ENOTDIR
        raise _named(OSError(missing, os.strerror(missing)), path)
    _sweep(parent, target.name)
    try:
        fd, name = tempfile.mkstemp(
            prefix=f".{target.name}.{os.getpid()}.", suffix=_TMP_SUFFIX, dir=parent
        )
    except OSError as exc:
        raise _named(exc, path) from None
    temporary = Path(name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            _step("written")
            os.fsync(handle.fileno())
        # mkstemp makes the file private (0600); keep the mode of the file being replaced, or
        # give a new one the usual mode of a document.
        os.chmod(temporary, _mode_of(target, 0o644))
        _step("synced")
        os.replace(temporary, target)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise _named(exc, path) from None
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    _sync_directory(parent)


def _named(error: OSError, path: str | os.PathLike[str]) -> OSError:
    """``error`` (its type and errno kept) naming ``path`` alone, not a temporary."""
    if error.errno is None:
        return error
    return OSError(error.errno, error.strerror or os.strerror(error.errno), os.fspath(path))


def replace_directory(path: str | os.PathLike[str], files: Mapping[str, bytes]) -> None:
    """Make ``path`` a directory holding exactly ``files``, atomically (see the module docstring).

    The caller has already decided that whatever is at ``path`` may be replaced (when ``path``
    is a symbolic link: whatever the link points to, which is what is replaced).
    """
    target = _followed(Path(path))
    parent = target.parent
    parent.mkdir(parents=True, exist_ok=True)
    _sweep(parent, target.name)
    staging = Path(
        tempfile.mkdtemp(prefix=f".{target.name}.{os.getpid()}.", suffix=_TMP_SUFFIX, dir=parent)
    )
    try:
        # mkdtemp makes the directory private (0700); a recording is data meant to be shared.
        os.chmod(staging, 0o755)
        for name, data in files.items():
            with open(staging / name, "wb") as handle:
                handle.write(data)
                handle.flush()
                _step("written")
                os.fsync(handle.fileno())
        _sync_directory(staging)
        _step("synced")
        if not os.path.lexists(target):
            os.replace(staging, target)
        elif _exchange(staging, target):
            _step("exchanged")
            # staging now holds the old recording.
        else:
            backup = _backup(target)
            shutil.rmtree(backup, ignore_errors=True)
            os.replace(target, backup)
            _step("retired")
            os.replace(staging, target)
            _step("replaced")
            shutil.rmtree(backup, ignore_errors=True)
    finally:
        # lexists/islink, not exists(): whatever the name holds now (the old recording after
        # an exchange, a link if one was raced in) is this call's to remove, never followed.
        if os.path.islink(staging):
            with contextlib.suppress(OSError):
                os.unlink(staging)
        elif os.path.lexists(staging):
            shutil.rmtree(staging, ignore_errors=True)
    _sync_directory(parent)


def readable_directory(path: Path) -> Path:
    """``path``, or its backup when a writer died between the two renames of step 4 (the
    backup of what ``path`` links to, when it is a symbolic link)."""
    try:
        path = _followed(path)
    except OSError:
        return path  # a looping link: reading it gives the OSError open() gives
    if not os.path.lexists(path):
        backup = _backup(path)
        if backup.is_dir():
            return backup
    return path


def _followed(path: Path) -> Path:
    """``path``, or what it links to when it is a symbolic link (followed to the end, even
    when dangling); a link that loops raises the ``OSError`` ``open()`` would."""
    if not os.path.islink(path):
        return path
    try:
        resolved = path.resolve()
    except RuntimeError:  # Python < 3.13 on a loop; 3.13 returns a path that is still a link
        resolved = path
    if os.path.islink(resolved):
        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), str(path))
    return resolved


def _backup(target: Path) -> Path:
    return target.with_name(f".{target.name}{_BACKUP_SUFFIX}")


def _mode_of(target: Path, default: int) -> int:
    try:
        return target.stat().st_mode & 0o7777
    except OSError:
        return default


def _sync_directory(directory: Path) -> None:
    # The rename itself must reach the disk for the new file to survive a power cut; a
    # directory cannot be opened for fsync on Windows, where NTFS journals the rename.
    if os.name != "posix":
        return
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _exchange(a: Path, b: Path) -> bool:
    """Swap the names ``a`` and ``b`` in one system call; False where the system cannot."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    except OSError:
        return False
    if sys.platform.startswith("linux"):
        renameat2 = getattr(libc, "renameat2", None)
        if renameat2 is None:
            return False
        at_fdcwd, rename_exchange = -100, 2
        result = renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
    elif sys.platform == "darwin":
        renamex_np = getattr(libc, "renamex_np", None)
        if renamex_np is None:
            return False
        rename_swap = 2
        result = renamex_np(os.fsencode(a), os.fsencode(b), rename_swap)
    else:
        return False
    if result == 0:
        return True
    error = ctypes.get_errno()
    if error in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
        return False
    raise OSError(error, os.strerror(error), str(b))


def _sweep(parent: Path, name: str) -> None:
    """Remove temporaries for ``name`` left by processes that no longer run; restore a backup."""
    target = parent / name
    backup = _backup(target)
    if os.path.lexists(backup):
        if not os.path.lexists(target):
            with contextlib.suppress(OSError):
                os.replace(backup, target)
        else:
            # Beside a complete path, a backup is what a writer killed after its second
            # rename left behind.
            shutil.rmtree(backup, ignore_errors=True)
    if os.name != "posix":
        return  # os.kill(pid, 0) is no liveness probe on Windows
    prefix = f".{name}."
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return
    for entry in entries:
        if not (entry.name.startswith(prefix) and entry.name.endswith(_TMP_SUFFIX)):
            continue
        pid_text = entry.name[len(prefix) :].split(".", 1)[0]
        if not pid_text.isdigit() or _alive(int(pid_text)):
            continue
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                os.unlink(entry.path)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True  # another thread of this process may be writing it right now
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True
