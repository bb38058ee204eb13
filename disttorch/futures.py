"""``torch.futures``: ``Future`` (a result that arrives later, with ``then`` callbacks),
``collect_all`` and ``wait_all``."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

__all__ = ["Future", "collect_all", "wait_all"]

T = TypeVar("T")


class Future(Generic[T]):
    """A value (or an error) set once, by ``set_result``/``set_exception``; ``wait()`` blocks
    until then, and callbacks added with ``then``/``add_done_callback`` run when it is set."""

    def __init__(self, *, devices: Any = None) -> None:
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._value: Any = None
        self._error: BaseException | None = None
        self._callbacks: list[Callable[[Future], None]] = []

    def done(self) -> bool:
        """Whether a result or an error has been set."""
        return self._done.is_set()

    def wait(self) -> T:
        """Block until set; return the result or raise the error."""
        self._done.wait()
        return self.value()

    def value(self) -> T:
        """The result (raises the error, if one was set); the future must be done."""
        if not self.done():
            raise RuntimeError("Future.value(): the future is not completed yet")
        if self._error is not None:
            raise self._error
        return self._value

    def _finish(self, value: Any, error: BaseException | None) -> None:
        with self._lock:
            if self._done.is_set():
                raise RuntimeError("Future can only be marked completed once")
            self._value, self._error = value, error
            self._done.set()
            callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb(self)

    def set_result(self, result: T) -> None:
        """Complete with ``result`` (once) and run the callbacks."""
        self._finish(result, None)

    def set_exception(self, result: BaseException) -> None:
        """Complete with the error ``result``: ``wait()`` raises it."""
        if not isinstance(result, BaseException):
            raise TypeError(f"set_exception expects an exception, got {type(result).__name__}")
        self._finish(None, result)

    def add_done_callback(self, callback: Callable[[Future[T]], None]) -> None:
        """Call ``callback(self)`` when done (now, if already done)."""
        with self._lock:
            if not self._done.is_set():
                self._callbacks.append(callback)
                return
        callback(self)

    def then(self, callback: Callable[[Future[T]], Any]) -> Future:
        """A new future holding ``callback(self)`` once this one is done (or its error)."""
        out: Future = Future()

        def run(fut: Future) -> None:
            try:
                out.set_result(callback(fut))
            except BaseException as e:  # noqa: BLE001  (the error travels in the future)
                out.set_exception(e)

        self.add_done_callback(run)
        return out


def collect_all(futures: list[Future]) -> Future[list[Future]]:
    """A future completed, with the list of ``futures``, when all of them are done."""
    out: Future[list[Future]] = Future()
    remaining = [len(futures)]
    lock = threading.Lock()
    if not futures:
        out.set_result([])

    def one_done(_: Future) -> None:
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            out.set_result(list(futures))

    for f in futures:
        f.add_done_callback(one_done)
    return out


def wait_all(futures: list[Future]) -> list:
    """Wait for every future; return their results (raising the first error met)."""
    return [f.wait() for f in futures]
