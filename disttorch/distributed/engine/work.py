"""``Work`` handles returned by ``async_op=True`` calls, and the ``Future`` behind them.

A collective issued with ``async_op=True`` is queued on its process group's communication
thread and a :class:`Work` is returned at once. ``work.wait()`` blocks until the collective
has finished and re-raises, in the caller's thread, any error the communication thread hit.
``work.get_future()`` gives a :class:`Future` whose ``then`` chains callbacks, as DDP
communication hooks use it.
"""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any, Callable

__all__ = ["Work", "Future"]


class Future:
    """The eventual value of an asynchronous operation (``torch.futures.Future``'s API subset).

    ``wait()`` returns the value or raises the error; ``then(fn)`` returns a new Future
    holding ``fn(self)`` once this one is done.
    """

    def __init__(self) -> None:
        self._done = threading.Event()
        self._value: Any = None
        self._error: BaseException | None = None
        self._callbacks: list[Callable[[Future], None]] = []
        self._lock = threading.Lock()

    def done(self) -> bool:
        """Whether a value or an error has been set."""
        return self._done.is_set()

    def wait(self, timeout: float | None = None) -> Any:
        """Block until done (at most ``timeout`` seconds), then return the value or raise.

        Raises:
            TimeoutError: not done within ``timeout`` seconds.
        """
        if not self._done.wait(timeout):
            raise TimeoutError(f"future not completed within {timeout} s")
        if self._error is not None:
            raise self._error
        return self._value

    def value(self) -> Any:
        """The value of a completed future (raises its error, if it has one)."""
        if not self.done():
            raise RuntimeError("Future.value() called before the future completed")
        return self.wait()

    def set_result(self, value: Any) -> None:
        self._value = value
        self._finish()

    def set_exception(self, error: BaseException) -> None:
        self._error = error
        self._finish()

    def add_done_callback(self, fn: Callable[[Future], None]) -> None:
        """Call ``fn(self)`` when done (at once if already done)."""
        with self._lock:
            if not self._done.is_set():
                self._callbacks.append(fn)
                return
        fn(self)

    def then(self, fn: Callable[[Future], Any]) -> Future:
        """A new Future completed with ``fn(self)`` (or its exception) once this one is done."""
        chained = Future()

        def run(fut: Future) -> None:
            try:
                chained.set_result(fn(fut))
            except BaseException as e:  # noqa: BLE001 - handed to the chained future
                chained.set_exception(e)

        self.add_done_callback(run)
        return chained

    def _finish(self) -> None:
        with self._lock:
            self._done.set()
            callbacks, self._callbacks = self._callbacks, []
        for fn in callbacks:
            fn(self)


def _seconds(timeout: timedelta | float | None) -> float | None:
    """``Work.wait``'s timeout in seconds; ``None`` for no limit (``None`` or zero)."""
    if timeout is None:
        return None
    if isinstance(timeout, timedelta):
        seconds = timeout.total_seconds()
    elif isinstance(timeout, (int, float)) and not isinstance(timeout, bool):
        seconds = float(timeout)
    else:
        raise TypeError(f"Work.wait(timeout=...) takes a datetime.timedelta or seconds, got {timeout!r}")
    if seconds < 0:
        raise ValueError(f"Work.wait(timeout=...) must not be negative, got {timeout!r}")
    return seconds or None


class Work:
    """Handle of one queued collective or point-to-point operation.

    Args:
        description: what the operation is, e.g. ``"all_reduce(float32[10]) #5"``.
        result: what :meth:`result` returns once completed (the output tensors).
    """

    def __init__(self, description: str, result: Any = None) -> None:
        self.description = description
        self._result = result
        self._future = Future()

    def __repr__(self) -> str:
        state = (
            ("failed" if self._future._error is not None else "completed")
            if self.is_completed()
            else "pending"
        )
        return f"Work({self.description}, {state})"

    def wait(self, timeout: timedelta | float | None = None) -> bool:
        """Block until the operation is done and return ``True``; re-raise its error.

        Args:
            timeout: how long to wait at most, a ``timedelta`` as in PyTorch or a number of
                seconds. ``None`` or zero (PyTorch's default ``timedelta(0)``): until done;
                the process group's own timeout still bounds every collective.

        Raises:
            TimeoutError: not done after ``timeout`` (the operation goes on).
            TypeError, ValueError: ``timeout`` is not a ``timedelta`` or a number of seconds,
                or is negative.
            DistError: the error the operation failed with.
        """
        timeout = _seconds(timeout)
        try:
            self._future.wait(timeout)
        except TimeoutError:
            if not self._future.done():
                raise TimeoutError(f"{self.description} did not complete within {timeout} s") from None
            raise
        return True

    def is_completed(self) -> bool:
        """Whether the operation has finished, successfully or not."""
        return self._future.done()

    def is_success(self) -> bool:
        """Whether the operation has finished without an error."""
        return self._future.done() and self._future._error is None

    def exception(self) -> BaseException | None:
        """The error the operation failed with, or ``None``."""
        return self._future._error

    def result(self) -> Any:
        """The operation's output tensors (waits for completion first)."""
        self.wait()
        return self._result

    def get_future(self) -> Future:
        """A :class:`Future` completed with :meth:`result`'s value when the work is done."""
        return self._future

    def _complete(self) -> None:
        self._future.set_result(self._result)

    def _fail(self, error: BaseException) -> None:
        self._future.set_exception(error)
