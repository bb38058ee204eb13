"""The thread that takes the workers' results off the result queue for the loader's main loop.

Receiving a result can block for as long as the worker that sent it is stopped: a tensor in
shared memory is rebuilt by asking its sender for the segment's file descriptor, and a result
larger than the pipe's buffer is read only as fast as the sender writes it. Receiving in this
thread keeps every wait of the main loop short, so a stopped (SIGSTOP) or frozen worker still
ends in the loader's ``timeout`` and a dead one is still named, instead of a hang inside
``Queue.get``. The thread leaves once closed, at the latest when the worker it waits on is
killed (the descriptor's connection then breaks).
"""

from __future__ import annotations

import queue
import threading
from typing import Any

__all__ = ["ResultReceiver"]

#: How often the thread looks whether it was closed while no result arrives.
_POLL_S = 0.1


class _Failed:
    """A result that could not be received (carried to the main loop to be raised there)."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


class ResultReceiver:
    """Receive ``(batch_no, data)`` results from ``source`` (a ``multiprocessing`` queue)."""

    def __init__(self, source: Any) -> None:
        self._source = source
        self._results: queue.SimpleQueue = queue.SimpleQueue()
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._run, name="disttorch-dataloader-receiver", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._closed.is_set():
            try:
                item = self._source.get(timeout=_POLL_S)
            except queue.Empty:
                continue
            except Exception as e:  # the sender died or was killed while its result was read
                item = _Failed(e)
            self._results.put(item)

    def get(self, timeout: float) -> tuple[Any, Any]:
        """The next result; ``queue.Empty`` after ``timeout`` seconds, or what receiving raised."""
        item = self._results.get(timeout=timeout)
        if isinstance(item, _Failed):
            raise item.error
        return item

    def close(self, wait_s: float) -> None:
        """Stop receiving; wait up to ``wait_s`` seconds for the thread to leave."""
        self._closed.set()
        self._thread.join(wait_s)
