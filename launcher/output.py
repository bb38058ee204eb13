"""Rank output: each worker's stdout and stderr, line by line, prefixed, to console and log files.

One :class:`LinePump` thread per worker stream reads the pipe, cuts it into whole lines (a
progress bar's ``\\r`` ends a line too, so it redraws with its prefix) and
writes them, prefixed with ``[rank<k>]: ``, to the launcher's own stdout or stderr (a rank's
stdout goes to stdout, its stderr to stderr). A line is written with one call under the
console's lock, so lines of different ranks never interleave within a line. Log files get
the same lines without a prefix. The launcher's own messages go to stderr as ``[launcher] ...``.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from typing import BinaryIO, Optional

MAX_LINE = 1 << 20  # a "line" longer than this is cut, so a rank without newlines cannot exhaust memory


class Console:
    """A locked, flushed writer for one of the launcher's own streams (stdout or stderr):
    a binary stream, or the name of ``sys``'s stream, whose buffer is looked up at each write
    (so a ``sys.stderr`` replaced after import, by pytest's capture or a program embedding the
    launcher, is the one written)."""

    def __init__(self, stream: BinaryIO | str) -> None:
        self._stream = stream
        self._lock = threading.Lock()
        self._broken = False

    def write(self, data: bytes) -> None:
        """Write ``data`` (whole lines) at once; a closed console (e.g. ``| head``) is ignored."""
        with self._lock:
            if self._broken:
                return
            try:
                stream = getattr(sys, self._stream).buffer if isinstance(self._stream, str) else self._stream
                stream.write(data)
                stream.flush()
            except (OSError, ValueError):
                self._broken = True  # keep draining the workers' pipes so they never block


stdout = Console("stdout")
stderr = Console("stderr")


def say(message: str) -> None:
    """Print a launcher message to stderr, every line prefixed with ``[launcher] ``."""
    stderr.write("".join(f"[launcher] {line}\n" for line in message.split("\n")).encode("utf-8", "replace"))


class LinePump(threading.Thread):
    """Copies one worker stream, line by line, to a console (prefixed) and/or a log file.

    Args:
        pipe: the read end of the worker's stdout or stderr pipe (closed when done).
        prefix: put before every console line, e.g. ``b"[rank1]: "``.
        console: where the lines are shown, or ``None`` (redirected or filtered out).
        log_path: a file receiving the lines without prefix, or ``None``.
    """

    def __init__(
        self, pipe: BinaryIO, prefix: bytes, console: Optional[Console], log_path: Optional[str]
    ) -> None:
        super().__init__(name=f"pump {prefix.decode().strip()}", daemon=True)
        self._pipe = pipe
        self._prefix = prefix
        self._console = console
        self._log: Optional[BinaryIO] = None
        self._log_path = log_path
        if log_path is not None:
            os.makedirs(os.path.dirname(log_path), exist_ok=True)
            self._log = open(log_path, "ab")

    def run(self) -> None:
        fd = self._pipe.fileno()
        pending = b""
        try:
            while True:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                pending += chunk
                cut = _last_line_end(pending)
                if cut == 0 and len(pending) >= MAX_LINE:
                    pending, cut = pending + b"\n", len(pending) + 1
                if cut:
                    self._emit(pending[:cut])
                    pending = pending[cut:]
            if pending:
                self._emit(pending + b"\n")  # the last line had no newline
        finally:
            self._pipe.close()
            if self._log is not None:
                try:
                    self._log.close()
                except OSError as exc:
                    self._drop_log(exc)

    def _emit(self, lines: bytes) -> None:
        """Write whole lines (each ending in \\n, \\r\\n or \\r): raw to the log, prefixed to the console."""
        if self._log is not None:
            try:
                self._log.write(lines)
                self._log.flush()
            except OSError as exc:  # a full disk: the rank goes on, its pipe still drained
                self._drop_log(exc)
        if self._console is not None:
            self._console.write(b"".join(self._prefix + line for line in _LINE.findall(lines)))

    def _drop_log(self, exc: OSError) -> None:
        log, self._log = self._log, None
        try:
            log.close()
        except OSError:
            pass  # the buffered bytes cannot be written either
        rank = self._prefix.decode().strip(" :[]")
        say(f"cannot write {self._log_path}: {exc.strerror or exc}; the rest is not logged ({rank} goes on)")


# A line ends with "\n", "\r\n", or a lone "\r" (progress bars redraw their line with it).
_LINE = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n)")


def _last_line_end(data: bytes) -> int:
    """Where the last complete line of ``data`` ends (0: none). A final "\\r" waits for the
    next read, which may bring the "\\n" of a "\\r\\n"."""
    return max(data.rfind(b"\n"), data.rfind(b"\r", 0, len(data) - 1)) + 1
