"""Atomic writes and guarded reads: every file placeborag writes appears whole or not at all, and
every file it loads is a regular file of bounded size, checked before a byte is read.

Files (reports, scenarios, exports) go through :func:`write_text` / :func:`write_bytes`: the
data is written to a temporary file in the same folder, flushed and fsynced, then moved over
the path with ``os.replace``, which is atomic on POSIX and Windows within one filesystem. A
reader of the path sees the old complete file or the new complete file, never a truncated one;
a failure before the move (an unserialisable value, a full disk) leaves the old file untouched.

Only regular files are written: a path that exists and is a directory, a FIFO, a device or a
socket is refused, naming the path, before anything is written (replacing ``/dev/null`` by a
file, as a root user once could, helps no one).

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

Two writers of one path at once both finish (the last one's version stays); with
``overwrite=False`` the second gets ``FileExistsError`` naming the path.

A symbolic link at the path is followed, by files and directories alike: what the link points
to is replaced as above, beside itself, and the link stays a link (as ``open(path, "w")`` treats
a link). A dangling link is followed to where it points, so the write creates that; a link that
loops is the ``OSError`` (``ELOOP``) ``open()`` raises. Replacing the link itself by a file or a
directory would silently cut it loose from what it names.

New files and folders get the modes ``open()`` and ``mkdir()`` would give them: ``0o666`` and
``0o777`` less the umask (the kernel applies it, so default ACLs apply too); a replaced file
keeps its mode.

Temporary names are ``.<name>.<random>.placeborag-tmp``: hidden and beside the path. A failed
call removes its own. A killed writer's are removed by a later write to the same folder, but
only when provably abandoned: every writer holds a shared ``flock`` on the folder from before
it creates its temporary until after it is renamed or removed (and an exclusive one on the
temporary itself), and leftovers are swept only by a writer that obtains the folder's lock
exclusively, without waiting. The kernel drops a killed process's locks, so a lock that cannot
be had means a live writer, in any process, container or PID namespace sharing the folder.
Where ``flock`` is missing (Windows) or refused (some network file systems), nothing is swept.

:func:`read_regular` is the loaders' one way to read a file they do not trust (a recording, a
scenario, a dump): opened without blocking (a FIFO cannot hang it), refused unless it is a
regular file, refused when larger than the caller's limit, all before it is read.

``_after_step`` is a test hook: the kill test sets it to sleep for a random moment between the
steps, so a SIGKILL lands inside the write rather than around it. It is ``None`` otherwise.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import stat
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from placeborag._errors import PlaceboragValueError
from placeborag._validation import shown

try:
    import fcntl
except ImportError:  # Windows: no flock, so nothing is swept
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "file_kind",
    "read_regular",
    "readable_directory",
    "replace_directory",
    "write_bytes",
    "write_text",
]

_TMP_SUFFIX = ".placeborag-tmp"
_BACKUP_SUFFIX = ".placeborag-previous"
_ATTEMPTS = 8  # a path another writer keeps changing: tries before giving up

_after_step: Callable[[str], None] | None = None


def _step(name: str) -> None:
    if _after_step is not None:
        _after_step(name)


def file_kind(mode: int) -> str:
    """What ``st_mode`` says a path is, as a message names it."""
    for test, kind in (
        (stat.S_ISREG, "a regular file"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a named pipe (FIFO)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return kind
    return "not a regular file"


def _refuse_special(target: Path, path: str | os.PathLike[str], *, directory: bool) -> None:
    """Refuse, by the caller's path, a destination that exists and is not what is written."""
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise _named(exc, path) from None
    if directory and stat.S_ISDIR(mode):
        return
    if not directory and stat.S_ISREG(mode):
        return
    if not directory and stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fspath(path))
    wanted = "directories" if directory else "regular files"
    raise PlaceboragValueError(
        f"path={shown(os.fspath(path))} is {file_kind(mode)}; placeborag writes {wanted} only and"
        " leaves it as it is"
    )


def write_text(path: str | os.PathLike[str], text: str, *, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` atomically (see the module docstring)."""
    write_bytes(path, text.encode(encoding))


def write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: a temporary sibling, fsync, ``os.replace``."""
    target = _followed(Path(path))
    parent = target.parent
    # An error names the path the caller gave, never the hidden temporary beside it.
    _refuse_special(target, path, directory=False)
    if not parent.is_dir():
        missing = errno.ENOENT if not os.path.lexists(parent) else errno.ENOTDIR
        raise _named(OSError(missing, os.strerror(missing)), path)
    with _writing(parent, target.name):
        try:
            temporary, fd = _new_temporary(parent, target.name, directory=False)
        except OSError as exc:
            raise _named(exc, path) from None
        try:
            with os.fdopen(fd, "wb") as handle:
                _lock_exclusively(handle.fileno())
                handle.write(data)
                handle.flush()
                _step("written")
                os.fsync(handle.fileno())
            # A new file has the mode open() gives it; a replaced one keeps its own.
            old_mode = _mode_of(target)
            if old_mode is not None:
                os.chmod(temporary, old_mode)
            _step("synced")
            _refuse_special(target, path, directory=False)  # raced in while this one wrote
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


def _new_temporary(parent: Path, name: str, *, directory: bool) -> tuple[Path, int]:
    """A new hidden temporary beside ``name``: created as ``open()`` / ``mkdir()`` would
    (``0o666`` / ``0o777`` less the umask), returned with an open descriptor of it."""
    for _ in range(100):
        temporary = parent / f".{name}.{secrets.token_hex(6)}{_TMP_SUFFIX}"
        try:
            if directory:
                os.mkdir(temporary, 0o777)
                return temporary, os.open(temporary, os.O_RDONLY | _O_CLOEXEC)
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_CLOEXEC | _O_NOFOLLOW | _O_BINARY
            return temporary, os.open(temporary, flags, 0o666)
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no unused temporary name", str(parent / name))


_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_BINARY = getattr(os, "O_BINARY", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def replace_directory(
    path: str | os.PathLike[str], files: Mapping[str, bytes], *, overwrite: bool = True
) -> None:
    """Make ``path`` a directory holding exactly ``files``, atomically (see the module docstring).

    The caller has already decided that whatever is at ``path`` may be replaced (when ``path``
    is a symbolic link: whatever the link points to, which is what is replaced). With
    ``overwrite=False`` a non-empty directory that appeared at ``path`` meanwhile (another
    writer's) is kept, and this call raises ``FileExistsError`` naming ``path``. Every
    ``OSError`` names ``path``, never the temporary.
    """
    target = _followed(Path(path))
    parent = target.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _named(exc, path) from None
    _refuse_special(target, path, directory=True)
    with _writing(parent, target.name):
        try:
            staging, fd = _new_temporary(parent, target.name, directory=True)
        except OSError as exc:
            raise _named(exc, path) from None
        try:
            _lock_exclusively(fd)
            _fill(staging, files)
            _step("synced")
            _place(staging, target, path, overwrite)
        except OSError as exc:
            raise _named(exc, path) from None
        finally:
            os.close(fd)
            # lexists/islink, not exists(): whatever the name holds now (the old recording
            # after an exchange, a link if one was raced in) is this call's to remove, never
            # followed.
            if os.path.islink(staging):
                with contextlib.suppress(OSError):
                    os.unlink(staging)
            elif os.path.lexists(staging):
                shutil.rmtree(staging, ignore_errors=True)
    _sync_directory(parent)


def _fill(staging: Path, files: Mapping[str, bytes]) -> None:
    for name, data in files.items():
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_CLOEXEC | _O_NOFOLLOW | _O_BINARY
        with os.fdopen(os.open(staging / name, flags, 0o666), "wb") as handle:
            handle.write(data)
            handle.flush()
            _step("written")
            os.fsync(handle.fileno())
    _sync_directory(staging)


def _place(staging: Path, target: Path, path: str | os.PathLike[str], overwrite: bool) -> None:
    """Move ``staging`` to ``target``: a rename onto nothing (or an empty directory), else an
    exchange, else two renames; another writer changing ``target`` meanwhile is retried."""
    for _ in range(_ATTEMPTS):
        if not overwrite or not os.path.lexists(target):
            try:
                os.rename(staging, target)
                return
            except OSError as exc:
                if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                    raise
                if not overwrite:  # another writer's recording arrived first: it stays
                    raise FileExistsError(
                        errno.EEXIST, "a recording appeared there meanwhile", os.fspath(path)
                    ) from None
                continue  # another writer made it first: replace it as an overwrite
        try:
            if _exchange(staging, target):
                _step("exchanged")
                return  # staging now holds the old recording
        except FileNotFoundError:
            continue  # another writer's exchange or rename took it away: start again
        backup = _backup(target)
        shutil.rmtree(backup, ignore_errors=True)
        try:
            os.replace(target, backup)
        except FileNotFoundError:
            continue
        _step("retired")
        os.replace(staging, target)
        _step("replaced")
        shutil.rmtree(backup, ignore_errors=True)
        return
    raise OSError(errno.EBUSY, "other writers kept replacing it", os.fspath(path))


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


def read_regular(
    path: Path,
    limit: int,
    what: str,
    raise_with: str,
    *,
    check_size: Callable[[int], Exception | None] | None = None,
) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them; checked before a byte
    is read: opened without blocking (a FIFO cannot hang the reader), refused unless a regular
    file (a device such as ``/dev/zero`` never ends), refused when larger than ``limit``.

    ``what`` names the file in a message; ``raise_with`` says how to allow more;
    ``check_size(size)`` returns an error to raise for a size the caller knows is wrong. A
    missing file is the ``OSError`` ``open()`` raises.
    """
    fd = os.open(path, os.O_RDONLY | _O_NONBLOCK | _O_CLOEXEC | _O_BINARY)
    try:
        status = os.fstat(fd)
        mode, size = status.st_mode, status.st_size
        if not stat.S_ISREG(mode):
            raise PlaceboragValueError(
                f"{what} is {file_kind(mode)}; placeborag reads regular files only"
            )
        wrong = None if check_size is None else check_size(size)
        if wrong is not None:
            raise wrong
        if size > limit:
            raise PlaceboragValueError(
                f"{what} holds {size:,} bytes, more than the limit of {limit:,}; {raise_with}"
            )
        if _O_NONBLOCK:
            os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:  # it grew while it was read
        raise PlaceboragValueError(
            f"{what} holds more than the limit of {limit:,} bytes; {raise_with}"
        )
    return data


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


def _mode_of(target: Path) -> int | None:
    try:
        return os.stat(target).st_mode & 0o7777
    except OSError:
        return None


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
    if error == errno.ENOENT:
        raise FileNotFoundError(error, os.strerror(error), str(b))
    raise OSError(error, os.strerror(error), str(b))


# -- the folder lock and the sweep ----------------------------------------------------------


def _lock_exclusively(fd: int) -> None:
    """Mark a temporary live: an exclusive lock on it, held until it is closed."""
    if fcntl is None:
        return
    with contextlib.suppress(OSError):
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


@contextlib.contextmanager
def _writing(parent: Path, name: str) -> Iterator[None]:
    """Hold the folder's shared lock while a temporary for ``name`` exists; first, when the
    lock can be had exclusively at once (no writer is inside), sweep ``name``'s leftovers."""
    if fcntl is None:
        yield
        return
    try:
        fd = os.open(parent, os.O_RDONLY | _O_CLOEXEC)
    except OSError:  # no read permission on the folder: no lock, so no sweep either
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            _sweep(parent, name)
        except BlockingIOError:
            pass  # a writer is inside: its leftovers, if any, wait for a later write
        except OSError:
            os.close(fd)  # a file system without flock: no lock, so no sweep
            fd = -1
        if fd >= 0:
            # From exclusive to shared, or wait for a sweeper to finish: this writer's
            # temporary exists only while the shared lock is held.
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_SH)
        yield
    finally:
        if fd >= 0:
            os.close(fd)  # releases the lock


def _sweep(parent: Path, name: str) -> None:
    """Remove ``name``'s temporaries and restore or remove its backup; called only with the
    folder's lock held exclusively, so no writer (that locks) has a temporary here."""
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
    prefix = f".{name}."
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return
    for entry in entries:
        if not (entry.name.startswith(prefix) and entry.name.endswith(_TMP_SUFFIX)):
            continue
        if _held(entry.path):
            continue  # a writer that could not lock the folder holds it
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                os.unlink(entry.path)


def _held(path: str) -> bool:
    """Whether a live writer holds the temporary ``path``'s own lock."""
    try:
        fd = os.open(path, os.O_RDONLY | _O_NONBLOCK | _O_CLOEXEC | _O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
    return False
