"""``torch.distributed.elastic.multiprocessing.errors``: ``@record`` on a worker's entry point,
and the failure report of ``torch.distributed.launcher`` (``ChildFailedError``).

``@record`` writes an uncaught exception of the decorated function to ``TORCHELASTIC_ERROR_FILE``
in PyTorch's JSON form (``{"message": {"message": "ValueError: ...", "extraInfo":
{"py_callstack": ..., "timestamp": ...}}}``), where ``torchrun`` or ``disttorch-launch`` gave
the worker that path; the launcher's own report of the exception comes from its bootstrap
(``DISTTORCH_ERROR_FILE``, see ``disttorch._error_file``) with or without ``@record``. A
``ChildFailedError`` (a launch from inside the function failed) is not recorded as such: the
error file of its first failure is copied to ``TORCHELASTIC_ERROR_FILE`` with that failure's
exit code as ``errorCode``, as torchrun's agent does, so the root cause travels up. A
``SystemExit`` with code 0 inside the function returns None instead of ending the process,
as in PyTorch. Every exception passes through unchanged.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import json
import os
import signal
import socket
import time
import traceback
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["ChildFailedError", "ErrorHandler", "ProcessFailure", "get_error_handler", "record"]

_R = TypeVar("_R")


def record(fn: Callable[..., _R], error_handler: Any = None) -> Callable[..., _R | None]:
    """Decorate a worker's top-level function (``@record def main(): ...``): it runs as is,
    its uncaught exceptions are written to ``TORCHELASTIC_ERROR_FILE`` when that is set (and
    reach the launcher's report), a ``ChildFailedError``'s root cause is copied there, and
    ``sys.exit(0)`` inside it returns None. ``error_handler``: an object with PyTorch's
    ``ErrorHandler`` methods (``initialize``, ``record_exception``, ``dump_error_file``) to
    use instead."""
    handler = error_handler if error_handler is not None else get_error_handler()

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> _R | None:
        handler.initialize()
        try:
            return fn(*args, **kwargs)
        except SystemExit as stop:
            if stop.code == 0:
                return None
            raise
        except ChildFailedError as failed:
            _, failure = failed.get_first_failure()
            if failure.error_file != _NOT_AVAILABLE:
                handler.dump_error_file(failure.error_file, failure.exitcode)
            raise
        except Exception as error:
            handler.record_exception(error)
            raise

    return wrapper


_NOT_AVAILABLE = "<N/A>"


class ErrorHandler:
    """``@record``'s default handler, as PyTorch's ``ErrorHandler``, with its file formats."""

    def initialize(self) -> None:
        """Nothing to set up (the launcher's bootstrap reports faults)."""

    def record_exception(self, error: BaseException) -> None:
        """Write ``error`` (being handled) to ``TORCHELASTIC_ERROR_FILE`` as PyTorch's
        ``ErrorHandler.record_exception`` does; nothing when the variable is unset."""
        path = os.environ.get("TORCHELASTIC_ERROR_FILE")
        if not path:
            return
        data = {
            "message": {
                "message": f"{type(error).__name__}: {error}",
                "extraInfo": {"py_callstack": traceback.format_exc(), "timestamp": str(int(time.time()))},
            }
        }
        with open(path, "w") as f:
            json.dump(data, f)

    def dump_error_file(self, rootcause_error_file: str, error_code: int = 0) -> None:
        """Copy a failed child's error record to ``TORCHELASTIC_ERROR_FILE`` (replacing what
        is there), its ``errorCode`` set to ``error_code`` when that is not 0; nothing when
        the variable is unset."""
        with open(rootcause_error_file) as f:
            rootcause = json.load(f)
        if error_code and isinstance(rootcause.get("message"), dict):
            rootcause["message"]["errorCode"] = error_code
        path = os.environ.get("TORCHELASTIC_ERROR_FILE")
        if not path:
            return
        if os.path.exists(path):
            os.remove(path)
        with open(path, "w") as f:
            f.write(json.dumps(rootcause))


def get_error_handler() -> ErrorHandler:
    """The handler ``@record`` uses when given none (a new :class:`ErrorHandler`)."""
    return ErrorHandler()


@dataclasses.dataclass
class ProcessFailure:
    """A worker that failed: its local rank, pid and exit code, and what it reported (its
    traceback; PyTorch reads it from ``error_file``, disttorch's launcher sends it back)."""

    local_rank: int
    pid: int
    exitcode: int
    error_file: str = _NOT_AVAILABLE
    message: str = ""
    timestamp: int = dataclasses.field(default_factory=lambda: int(time.time()))

    def signal_name(self) -> str:
        """The signal that ended the worker (``SIGKILL``...), or ``<N/A>``."""
        if self.exitcode < 0:
            try:
                return signal.Signals(-self.exitcode).name
            except ValueError:
                return f"signal {-self.exitcode}"
        return _NOT_AVAILABLE

    def timestamp_isoformat(self) -> str:
        return datetime.datetime.fromtimestamp(self.timestamp).isoformat(sep="_")


class ChildFailedError(Exception):
    """Workers of a launch failed; the message lays out each, the first observed as the root
    cause, as PyTorch's does. ``failures`` maps global ranks to :class:`ProcessFailure`."""

    def __init__(self, name: str, failures: dict[int, ProcessFailure]) -> None:
        self.name, self.failures = name, failures
        super().__init__(self.format_msg())

    def get_first_failure(self) -> tuple[int, ProcessFailure]:
        rank = min(self.failures, key=lambda r: self.failures[r].timestamp)
        return rank, self.failures[rank]

    def format_msg(self, boarder_delim: str = "=", section_delim: str = "-") -> str:
        title = f"{self.name} FAILED"
        root, _ = self.get_first_failure()
        parts = {rank: self._format_failure(i, rank, f) for i, (rank, f) in enumerate(self.failures.items())}
        width = min(max([len(title), *(w for _, w in parts.values())]), 60)
        others = [text for rank, (text, _) in parts.items() if rank != root] or ["  <NO_OTHER_FAILURES>"]
        return "\n".join(
            [
                "",
                boarder_delim * width,
                title,
                section_delim * width,
                "Failures:",
                "\n".join(others),
                section_delim * width,
                "Root Cause (first observed failure):",
                parts[root][0],
                boarder_delim * width,
            ]
        )

    @staticmethod
    def _format_failure(idx: int, rank: int, failure: ProcessFailure) -> tuple[str, int]:
        name = failure.signal_name()
        text = (
            f"[{idx}]:\n  time      : {failure.timestamp_isoformat()}\n  host      : {socket.getfqdn()}\n"
            f"  rank      : {rank} (local_rank: {failure.local_rank})\n"
            f"  exitcode  : {failure.exitcode} (pid: {failure.pid}){'' if name == '<N/A>' else f' ({name})'}\n"
            f"  error_file: {failure.error_file}\n"
            f"  traceback : {failure.message.rstrip().replace(chr(10), chr(10) + '  ')}"
        )
        return text, max(len(line) for line in text.split("\n"))
