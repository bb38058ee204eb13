"""Writing a checkpoint file: atomically, with the umask's permissions, errors naming the path.

The bytes go to a temporary file in the target's folder (created with mode 0666 minus the
umask, as ``open(path, "wb")`` would, or with the mode of the file it replaces), are
flushed to disk, and the file is renamed over the target, so a crash never leaves a
half-written file under the target's name. A target that exists and is not a regular file
(``/dev/null``, a FIFO) is written into directly. Any ``OSError`` (a full disk, a missing
folder, no permission) is re-raised naming the target.
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Callable
from typing import BinaryIO


def atomic_write(path: str, write: Callable[[BinaryIO], None]) -> None:
    """Call ``write(file)`` on a temporary file, then rename it to ``path``."""
    folder = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(folder, f".{os.path.basename(path)}.{secrets.token_hex(6)}.tmp")
    try:
        st = os.stat(path)
    except OSError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):  # /dev/null, a FIFO: write into it
        try:
            with open(path, "wb") as out:
                write(out)
        except OSError as exc:
            raise type(exc)(exc.errno, f"could not write {path}: {exc.strerror or exc}", path) from exc
        return
    mode = None if st is None else stat.S_IMODE(st.st_mode)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
        try:
            with os.fdopen(fd, "wb") as out:
                if mode is not None:
                    os.fchmod(out.fileno(), mode)
                write(out)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError as exc:
        raise type(exc)(exc.errno, f"could not write {path}: {exc.strerror or exc}", path) from exc
    _fsync_dir(folder)


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
