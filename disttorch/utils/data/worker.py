"""DataLoader worker processes: each takes batch indices from its own queue, loads and
collates the samples, and puts ``(batch_number, batch or error)`` on the shared result
queue. ``get_worker_info()`` tells dataset code which worker it runs in.

A worker runs its ops on one thread, as PyTorch's (``torch.get_num_threads()`` is 1 there).
A worker ends with the process that started it, even one killed by SIGKILL: on Linux it asks
for SIGTERM at its parent's death (``PR_SET_PDEATHSIG``, when its parent started it from the
main thread, since the signal follows the starting thread), and it checks its parent's pid
between batches (every second while idle) everywhere. On SIGTERM it removes the temporary
directory it made (``disttorch._mp_temp_dir``) and dies of the signal."""

from __future__ import annotations

import os
import pickle
import queue
import random
import signal
import sys
import traceback
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ... import _random
from ..._mp_temp_dir import remove_at_sigterm
from ...kernels import threads as _intraop

__all__ = ["WorkerInfo", "get_worker_info"]

_info: list = [None]
#: Seconds an idle worker waits for work before checking that its parent is still alive.
_PARENT_CHECK_INTERVAL = 1.0
_PR_SET_PDEATHSIG = 1


def _end_with_parent(parent_pid: int, started_by_main_thread: bool) -> None:
    """Ask for SIGTERM when the parent dies (Linux); exit now if it has died already."""
    if sys.platform.startswith("linux") and started_by_main_thread:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    if parent_pid and os.getppid() != parent_pid:
        os._exit(0)


@dataclass(frozen=True)
class WorkerInfo:
    """Which worker this is, of how many, its seed and its copy of the dataset."""

    id: int
    num_workers: int
    seed: int
    dataset: Any


def get_worker_info() -> WorkerInfo | None:
    """The current worker's info inside a DataLoader worker process; None in the main process."""
    return _info[0]


class _KeyErrorMessage(str):
    """A ``KeyError``'s message printed as it is (``KeyError`` shows its argument's repr)."""

    def __repr__(self) -> str:
        return self


@dataclass
class WorkerError:
    """An exception raised in a worker, carried to the main process with its traceback and,
    when it pickles, its class (re-raised as that class, as PyTorch's ``ExceptionWrapper``)."""

    worker_id: int
    exc_type: str
    message: str
    exc_class: type | None = None

    @classmethod
    def current(cls, worker_id: int) -> WorkerError:
        """The exception being handled in worker ``worker_id``."""
        error = sys.exc_info()[1]
        return cls(worker_id, type(error).__name__, traceback.format_exc(), _picklable(type(error)))

    def reraise(self) -> None:
        message = (
            f"Caught {self.exc_type} in DataLoader worker process {self.worker_id}.\nOriginal {self.message}"
        )
        if self.exc_class is KeyError:
            message = _KeyErrorMessage(message)
        elif getattr(self.exc_class, "message", None):  # (as PyTorch: such classes take message=)
            raise self.exc_class(message=message)
        try:
            error = self.exc_class(message) if self.exc_class is not None else RuntimeError(message)
        except Exception:  # a class that takes other arguments
            raise RuntimeError(message) from None
        raise error


def _picklable(kind: type) -> type | None:
    """``kind`` where it can be sent to the main process by reference, else None."""
    try:
        return kind if pickle.loads(pickle.dumps(kind)) is kind else None
    except Exception:
        return None


class _IterableExhausted:
    """Sent by a worker whose IterableDataset iterator ran out."""

    def __init__(self, worker_id: int) -> None:
        self.worker_id = worker_id


class _ResumeIteration:
    """Sent to a persistent worker before a new pass (it restarts its dataset iterator), and
    back from it as its acknowledgement."""

    def __init__(self, worker_id: int) -> None:
        self.worker_id = worker_id


def _iterate(dataset: Any, iterable: bool, worker_id: int) -> Any:
    """A new iterator over an iterable ``dataset`` (None for a map-style one), or the error
    making it raised, to answer the pass's batches with (as PyTorch's workers answer)."""
    if not iterable:
        return None
    try:
        return iter(dataset)
    except Exception:
        return WorkerError.current(worker_id)


def worker_loop(
    dataset: Any,
    index_queue: Any,
    result_queue: Any,
    fetch: Callable,
    worker_id: int,
    num_workers: int,
    seed: int,
    init_fn: Callable | None,
    iterable: bool,
    parent_pid: int = 0,
    started_by_main_thread: bool = False,
) -> None:
    """Body of a worker process; ends when it receives ``None`` or its parent ``parent_pid`` dies."""
    _end_with_parent(parent_pid, started_by_main_thread)
    remove_at_sigterm()
    # As PyTorch's workers: one thread per op (the cores are the training's and the other
    # workers'; a worker's first split would also start a pool and load the compiled kernels)
    _intraop.set_num_threads(1)
    _random.manual_seed(seed)
    random.seed(seed)
    # As PyTorch: NumPy's global state from a SeedSequence hash of (worker id, base seed)
    base = seed - worker_id
    np.random.seed(np.random.SeedSequence([worker_id, base & 0xFFFFFFFF, base >> 32, 0]).generate_state(4))
    _info[0] = WorkerInfo(worker_id, num_workers, seed, dataset)
    try:
        _serve(dataset, index_queue, result_queue, fetch, worker_id, init_fn, iterable, parent_pid)
    except KeyboardInterrupt:  # as PyTorch's workers: a Ctrl-C is the main process's to report
        # (and the exit does not wait to flush results no one may read, as PyTorch's workers
        # cancel their queue's join when told to end)
        result_queue.cancel_join_thread()


def _serve(
    dataset: Any,
    index_queue: Any,
    result_queue: Any,
    fetch: Callable,
    worker_id: int,
    init_fn: Callable | None,
    iterable: bool,
    parent_pid: int,
) -> None:
    """Run ``init_fn``, then answer the index queue's tasks until ``None`` or the parent's death."""
    try:
        if init_fn is not None:
            init_fn(worker_id)
    except Exception:
        result_queue.put((None, WorkerError.current(worker_id)))
        return
    it = _iterate(dataset, iterable, worker_id)
    while True:
        try:
            task = index_queue.get(timeout=_PARENT_CHECK_INTERVAL)
        except queue.Empty:
            if parent_pid and os.getppid() != parent_pid:
                return  # the parent died (re-parented to a reaper): nobody wants the batches
            continue
        if task is None:
            return
        if isinstance(task, _ResumeIteration):
            result_queue.put((None, _ResumeIteration(worker_id)))
            it = _iterate(dataset, iterable, worker_id)
            continue
        batch_no, indices = task
        if isinstance(it, WorkerError):
            result_queue.put((batch_no, it))
            continue
        try:
            if iterable:
                data = fetch(it, indices)
                if data is None:
                    result_queue.put((batch_no, _IterableExhausted(worker_id)))
                    continue
            else:
                data = fetch(dataset, indices)
            result_queue.put((batch_no, data))
        except Exception:
            result_queue.put((batch_no, WorkerError.current(worker_id)))
