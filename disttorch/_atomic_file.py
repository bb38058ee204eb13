"""Writing a checkpoint file: atomically, with the umask's permissions, errors naming the path.

The bytes go to a temporary file in the target's folder (created with mode 0666 minus the
umask, as ``open(path, "wb")`` would, or with the mode of the file it replaces), are
flushed to disk, and the file is renamed over the target, so a crash never leaves a
half-written file under the target's name. A target that exists and is not a regular file
(``/dev/null``, a FIFO) is written into directly. A symbolic link is followed, as ``open``
follows it (PyTorch's ``torch.save`` writes the file a link names and keeps the link), unless
the caller says not to: the temporary file goes next to the file it names, under the
kernel's rule for links in world-writable sticky folders (``fs.protected_symlinks``). Any
``OSError`` (a full disk, a missing folder, no permission) is re-raised naming the target.

A write killed before its rename (SIGKILL, power loss) leaves its temporary file,
``.<target name>.<12 hex digits>.tmp``; whoever owns the folder's targets removes those
with :func:`remove_stale_temporaries` (the ``Checkpointer`` does at its next save or start).
A write holds an exclusive ``flock`` on its temporary file until the rename, so that removal
leaves alone the temporaries of writes still running (another job saving into the folder).
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import secrets
import stat
from collections.abc import Callable
from typing import BinaryIO

#: The temporary file of a write to target ``name``: ``.<name>.<token>.tmp``.
_TEMPORARY = re.compile(r"\.(?P<target>.+)\.[0-9a-f]{12}\.tmp")


def _temporary_path(path: str) -> str:
    folder, name = os.path.split(os.path.abspath(path))
    return os.path.join(folder, f".{name}.{secrets.token_hex(6)}.tmp")


def remove_stale_temporaries(folder: str, owns: Callable[[str], bool]) -> list[str]:
    """Remove the temporary files that killed writes to targets ``owns(name)`` in ``folder``
    left behind; return their paths. Only call it while no such write is running."""
    removed = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for name in names:
        match = _TEMPORARY.fullmatch(name)
        if match is not None and owns(match["target"]) and _remove_unlocked(os.path.join(folder, name)):
            removed.append(os.path.join(folder, name))
    return removed


def _remove_unlocked(tmp: str) -> bool:
    """Remove temporary file ``tmp`` unless a running write holds its lock."""
    try:
        fd = os.open(tmp, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.unlink(tmp)
        return True
    except OSError:  # (BlockingIOError: a write still running holds it)
        return False
    finally:
        os.close(fd)


def _locked_temporary(path: str) -> tuple[str, int]:
    """A new temporary file for ``path`` (mode 0666 minus the umask), open for writing and
    locked (see the module docs): its name and descriptor."""
    while True:
        tmp = _temporary_path(path)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
        fcntl.flock(fd, fcntl.LOCK_EX)
        if os.fstat(fd).st_nlink:
            return tmp, fd
        os.close(fd)  # removed as stale between its creation and the lock: another name


def _followed(path: str) -> str:
    """``path`` with its symbolic links followed (the file itself, not its folders'); a link
    in a world-writable sticky folder is followed only when its owner is this user or the
    folder's owner, as the kernel's ``fs.protected_symlinks`` has it for ``open``."""
    for _ in range(40):  # the kernel's limit of links followed
        try:
            link = os.lstat(path)
        except OSError:
            return path
        if not stat.S_ISLNK(link.st_mode):
            return path
        folder = os.path.dirname(os.path.abspath(path))
        where = os.stat(folder)
        shared = where.st_mode & stat.S_ISVTX and where.st_mode & stat.S_IWOTH
        if shared and link.st_uid not in (os.geteuid(), where.st_uid):
            raise PermissionError(errno.EACCES, "a link of another user in a shared folder", path)
        path = os.path.join(folder, os.readlink(path))
    raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), path)


class Staged:
    """Bytes written whole to a temporary file, waiting to be renamed over ``path``
    (:meth:`commit`) or dropped (:meth:`discard`): a save made of several files, written by
    several processes, renames none until every one is written. It holds the temporary's lock
    (``lock``, a descriptor) until then."""

    def __init__(self, tmp: str, path: str, lock: int) -> None:
        self.tmp, self.path, self._lock = tmp, path, lock

    def commit(self) -> None:
        """Rename the temporary over ``path`` (an error names ``path``; the temporary is removed)."""
        try:
            os.replace(self.tmp, self.path)
        except OSError as exc:
            self.discard()
            raise type(exc)(
                exc.errno, f"could not write {self.path}: {exc.strerror or exc}", self.path
            ) from exc
        self._unlock()
        _fsync_dir(os.path.dirname(os.path.abspath(self.path)))

    def discard(self) -> None:
        """Remove the temporary: ``path`` keeps what it held."""
        try:
            os.unlink(self.tmp)
        except OSError:
            pass
        self._unlock()

    def _unlock(self) -> None:
        if self._lock >= 0:
            os.close(self._lock)
            self._lock = -1


def stage_write(path: str, write: Callable[[BinaryIO], None], follow_links: bool = True) -> Staged | None:
    """Call ``write(file)`` on a temporary file next to ``path`` (or to the file that the link
    ``path`` names; with ``follow_links=False``, next to the link itself, which the rename then
    replaces: for the files a program keeps in a folder of its own, which must not lead out of
    it), flushed to disk; return it :class:`Staged`. A ``path`` that is not a regular file
    (``/dev/null``, a FIFO) is written into directly: then ``None``."""
    try:
        path = _followed(path) if follow_links else path
    except OSError as exc:
        raise type(exc)(exc.errno, f"could not write {path}: {exc.strerror or exc}", path) from exc
    try:
        st = os.stat(path) if follow_links else os.lstat(path)
    except OSError:
        st = None
    if st is not None and stat.S_ISLNK(st.st_mode):
        st = None  # replaced, not followed
    if st is not None and not stat.S_ISREG(st.st_mode):  # /dev/null, a FIFO: write into it
        try:
            with open(path, "wb") as out:
                write(out)
        except OSError as exc:
            raise type(exc)(exc.errno, f"could not write {path}: {exc.strerror or exc}", path) from exc
        return None
    mode = None if st is None else stat.S_IMODE(st.st_mode)
    try:
        tmp, fd = _locked_temporary(path)
        staged = Staged(tmp, path, os.dup(fd))  # (the lock stays with the duplicate once out closes)
        try:
            with os.fdopen(fd, "wb") as out:
                if mode is not None:
                    os.fchmod(out.fileno(), mode)
                write(out)
                out.flush()
                os.fsync(out.fileno())
        except BaseException:
            staged.discard()
            raise
    except OSError as exc:
        raise type(exc)(exc.errno, f"could not write {path}: {exc.strerror or exc}", path) from exc
    return staged


def atomic_write(path: str, write: Callable[[BinaryIO], None], follow_links: bool = True) -> None:
    """Call ``write(file)`` on a temporary file, then rename it to ``path`` (see :func:`stage_write`)."""
    staged = stage_write(path, write, follow_links)
    if staged is not None:
        staged.commit()


def _fsync_dir(folder: str) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
