"""DataLoader worker processes: each takes batch indices from its own queue, loads and
collates the samples, and puts ``(batch_number, batch or error)`` on the shared result
queue. ``get_worker_info()`` tells dataset code which worker it runs in."""
from __future__ import annotations

import queue
import random
import traceback
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ... import _random

__all__ = ["WorkerInfo", "get_worker_info"]

_info: list = [None]


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


@dataclass
class WorkerError:
    """An exception raised in a worker, carried to the main process with its traceback."""

    worker_id: int
    exc_type: str
    message: str

    def reraise(self) -> None:
        raise RuntimeError(f"Caught {self.exc_type} in DataLoader worker process {self.worker_id}.\n"
                           f"Original {self.message}")


class _IterableExhausted:
    """Sent by a worker whose IterableDataset iterator ran out."""

    def __init__(self, worker_id: int) -> None:
        self.worker_id = worker_id


def worker_loop(dataset: Any, index_queue: Any, result_queue: Any, fetch: Callable,
                worker_id: int, num_workers: int, seed: int, init_fn: Callable | None,
                iterable: bool) -> None:
    """Body of a worker process; ends when it receives ``None``."""
    _random.manual_seed(seed)
    random.seed(seed)
    np.random.seed(seed % 2 ** 32)
    _info[0] = WorkerInfo(worker_id, num_workers, seed, dataset)
    try:
        if init_fn is not None:
            init_fn(worker_id)
    except Exception:
        result_queue.put((None, WorkerError(worker_id, "Exception", traceback.format_exc())))
        return
    it = iter(dataset) if iterable else None
    while True:
        try:
            task = index_queue.get(timeout=5.0)
        except queue.Empty:
            continue
        if task is None:
            return
        batch_no, indices = task
        try:
            if iterable:
                data = fetch(it, indices)
                if data is None:
                    result_queue.put((batch_no, _IterableExhausted(worker_id)))
                    continue
            else:
                data = fetch(dataset, indices)
            result_queue.put((batch_no, data))
        except Exception as e:
            result_queue.put((batch_no, WorkerError(worker_id, type(e).__name__, traceback.format_exc())))
