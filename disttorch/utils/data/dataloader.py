"""``DataLoader``: batches from a dataset, in the main process or in worker processes.

With ``num_workers > 0`` each worker process gets batches of indices round-robin
(``prefetch_factor`` in flight per worker) and the loader yields results in order.
Worker exceptions are re-raised in the main process with the worker's traceback; a
worker that dies is reported, never waited on forever. With ``persistent_workers`` the
workers outlive a pass, as PyTorch's: ``worker_init_fn`` runs once and their random streams
continue from one epoch to the next.
"""

from __future__ import annotations

import collections.abc
import itertools
import multiprocessing as mp
import os
import queue
import signal
import threading
import time
import warnings
import weakref
from typing import Any, Callable, Generic, Iterable, Iterator, TypeVar

import numpy as np

from ..._process_state import stopped_by_signal
from ..._random import Generator, _gen, _random_array
from . import graph_settings
from ._receiver import ResultReceiver
from .collate import default_collate, default_convert
from .datapipes.datapipe import IterDataPipe
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler
from .worker import WorkerError, _IterableExhausted, _ResumeIteration, worker_loop

__all__ = ["DataLoader"]

T_co = TypeVar("T_co", covariant=True)
_T = TypeVar("_T")
#: How often the main process looks for dead workers while it waits for a batch (PyTorch
#: learns of them from SIGCHLD at once).
_WORKER_CHECK_S = 0.1
#: How long a result broken off mid-read waits for its sender's death to be visible.
_DEATH_VISIBLE_S = 1.0
#: How long ending an iterator waits for each worker to leave before killing it, and how
#: long after a worker died (it may have died holding the result queue's lock, which the
#: others then wait for as they flush their last results on exit).
_WORKER_JOIN_S = 5.0
_WORKER_JOIN_AFTER_DEATH_S = 0.5
# the callables' types PyTorch's module names (libraries import them for their own hints)
_worker_init_fn_t = collections.abc.Callable[[int], None]
_collate_fn_t = collections.abc.Callable[[list[_T]], Any]


def _fetch_map(dataset: Any, indices: Any, collate: Callable, batched: bool) -> Any:
    if not batched:
        return collate(dataset[indices])
    many = getattr(dataset, "__getitems__", None)  # a batch in one call (HF datasets, Subset, ...)
    return collate(many(indices) if many else [dataset[i] for i in indices])


def _fetch_iter(it: Iterator, n: int | None, collate: Callable, drop_last: bool) -> Any:
    if n is None:
        try:
            return collate(next(it))
        except StopIteration:
            return None
    batch = list(itertools.islice(it, n))
    if not batch or (drop_last and len(batch) < n):
        return None
    return collate(batch)


def _await_a_death(workers: list, seconds: float) -> None:
    """After a result broke off mid-read (its connection reset): give its sender's death up to
    ``seconds`` to become visible. A killed process's sockets close while it exits, a moment
    before it can be waited for, and :func:`_check_workers` only sees a process that can."""
    deadline = time.monotonic() + seconds
    while all(w.is_alive() for w in workers) and time.monotonic() < deadline:
        time.sleep(0.005)


def _check_workers(workers: list) -> None:
    """Raise PyTorch's error for the first worker that ended while batches were due."""
    dead = [w for w in workers if not w.is_alive()]
    if not dead:
        return
    code = dead[0].exitcode
    if code is not None and code < 0:
        message = f"DataLoader worker (pid {dead[0].pid}) is killed by signal: {signal.strsignal(-code)}."
        if -code == signal.SIGBUS:
            message += (
                " It is possible that dataloader's workers are out of shared memory. "
                "Please try to raise your shared memory limit."
            )
    elif code:
        message = (
            f"DataLoader worker (pid {dead[0].pid}) exited unexpectedly with exit code {code}. "
            "Details are lost due to multiprocessing. Rerunning with num_workers=0 may give "
            "better error trace."
        )
    else:
        message = f"DataLoader worker (pid(s) {', '.join(str(w.pid) for w in dead)}) exited unexpectedly"
    raise RuntimeError(message)


def _timed_out(workers: list, timeout: float) -> RuntimeError:
    """PyTorch's error for a batch not received within the loader's ``timeout``. The workers
    are killed first: one that hangs would otherwise be waited for again, ``_WORKER_JOIN_S``
    more, as the pass that fails stops them."""
    for w in workers:
        if w.is_alive():
            w.kill()
    return RuntimeError(f"DataLoader timed out after {timeout} seconds")


class _Fetch:
    """A picklable fetch function for worker processes."""

    def __init__(self, collate: Callable, batched: bool, iterable: bool, drop_last: bool) -> None:
        self.collate, self.batched, self.iterable, self.drop_last = collate, batched, iterable, drop_last

    def __call__(self, source: Any, indices: Any) -> Any:
        if self.iterable:
            return _fetch_iter(source, indices, self.collate, self.drop_last)
        return _fetch_map(source, indices, self.collate, self.batched)


class _BaseDataLoaderIter:
    """What iterating a ``DataLoader`` gives (as PyTorch's ``_BaseDataLoaderIter``): the
    batches of one pass, ``len()`` of the loader, and how many were yielded."""

    def __init__(self, loader: DataLoader) -> None:
        self._dataset, self._num_workers = loader.dataset, loader.num_workers
        self._index_sampler, self._auto_collation = loader._index_sampler, loader._auto_collation
        self._collate_fn, self._drop_last = loader.collate_fn, loader.drop_last
        self._length = loader._len_or_none()
        self._num_yielded = 0
        if loader.pin_memory:  # as PyTorch's CPU build: nothing to pin for
            # stacklevel 2: the subclass's __init__, so (as in PyTorch) the default filter shows
            # it once per kind of iterator, not at every loop over a loader
            warnings.warn(
                "'pin_memory' argument is set as true but no accelerator is found, then device "
                "pinned memory won't be used.",
                UserWarning,
                stacklevel=2,
            )

    def __iter__(self) -> _BaseDataLoaderIter:
        return self

    def __next__(self) -> Any:
        data = next(self._batches)
        self._num_yielded += 1
        return data

    def __len__(self) -> int:
        if self._length is None:
            raise TypeError("this DataLoader's dataset has no len()")
        return self._length

    def __getstate__(self) -> None:
        raise NotImplementedError(f"{type(self).__name__} cannot be pickled")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    """The iterator of a ``DataLoader`` with ``num_workers=0``: loads in this process."""

    def __init__(self, loader: DataLoader, batches: Iterator[Any]) -> None:
        # (this line is the one the pin_memory warning shows, word for word as PyTorch's)
        super().__init__(loader)
        self._batches = batches


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """The iterator of a ``DataLoader`` with worker processes; ``_shutdown_workers()`` stops
    them before the pass ends (they are also stopped when it ends or the iterator is freed)."""

    def __init__(self, loader: DataLoader, batches: Iterator[Any]) -> None:
        # (this line is the one the pin_memory warning shows, word for word as PyTorch's)
        super().__init__(loader)
        self._batches = batches
        self._loader = loader

    def _shutdown_workers(self) -> None:
        self._batches.close()  # type: ignore[attr-defined] # a generator: its finally stops the workers
        self._loader._shutdown_pool()  # persistent ones too


class _WorkerPool:
    """A loader's worker processes, their index queues and the receiver of their results: one
    pass's, or with ``persistent_workers`` every pass's (``resume()`` between passes)."""

    def __init__(self, loader: DataLoader, fetch: _Fetch, base_seed: int) -> None:
        ctx = loader.multiprocessing_context
        if ctx is None or isinstance(ctx, str):
            ctx = mp.get_context(ctx or ("fork" if "fork" in mp.get_all_start_methods() else "spawn"))
        result_q = ctx.Queue()
        self.index_qs: list = []
        self.workers: list = []
        for wid in range(loader.num_workers):
            iq = ctx.Queue()
            w = ctx.Process(
                target=worker_loop,
                daemon=True,
                args=(
                    loader.dataset,
                    iq,
                    result_q,
                    fetch,
                    wid,
                    loader.num_workers,
                    base_seed + wid,
                    loader.worker_init_fn,
                    loader._iterable,
                    os.getpid(),
                    threading.current_thread() is threading.main_thread(),
                ),
            )
            w.start()
            self.index_qs.append(iq)
            self.workers.append(w)
        self.receiver = ResultReceiver(result_q)
        self.owner = os.getpid()  # a forked child neither uses nor stops its parent's workers
        # a loader dropped with its persistent workers stops them
        self._finalizer = weakref.finalize(
            loader, _stop_workers, self.index_qs, self.workers, self.receiver, self.owner
        )

    def resume(self, timeout: float) -> None:
        """Start a new pass: each worker restarts its dataset iterator and acknowledges; results
        of the pass before (one stopped early) still on their way are dropped. A worker that
        died since raises PyTorch's error naming it; one that does not answer (stopped) raises
        the loader's timeout error after ``timeout`` seconds (0: no limit)."""
        _check_workers(self.workers)
        for iq in self.index_qs:
            iq.put(_ResumeIteration(-1))
        waiting = set(range(len(self.workers)))
        since = time.monotonic()
        while waiting:
            try:
                _, data = self.receiver.get(timeout=_WORKER_CHECK_S)
            except queue.Empty:
                _check_workers(self.workers)
                if 0 < timeout <= time.monotonic() - since:
                    raise _timed_out(self.workers, timeout) from None
                continue
            if isinstance(data, _ResumeIteration):
                waiting.discard(data.worker_id)

    def shutdown(self) -> None:
        self._finalizer()


def _stop_workers(index_qs: list, workers: list, receiver: ResultReceiver, owner: int) -> None:
    """Ask every worker to leave, give them a moment (less if one died), then kill the rest;
    nothing in a process forked from ``owner`` (the workers are its parent's)."""
    if os.getpid() != owner:
        return
    for iq in index_qs:
        iq.put(None)
    died = any(w.exitcode not in (None, 0) or stopped_by_signal(w.pid) for w in workers)
    deadline = time.monotonic() + (_WORKER_JOIN_AFTER_DEATH_S if died else _WORKER_JOIN_S)
    for w in workers:  # one deadline for all: stopped workers cost it once, not each
        w.join(timeout=max(0.0, deadline - time.monotonic()))
        if w.is_alive():  # SIGKILL: a stopped (SIGSTOP) worker never ends on SIGTERM
            w.kill()
            w.join()
    receiver.close(_WORKER_JOIN_AFTER_DEATH_S)


def _warn_if_too_many_workers(num_workers: int) -> None:
    """PyTorch's warning when a loader would start more workers than the CPUs this process may
    use (``os.sched_getaffinity``, else ``os.cpu_count``), at the loader's line that checks (once
    when it is made, once for its iterators, under the default filter)."""
    if not num_workers:
        return
    cpuset_checked = hasattr(os, "sched_getaffinity")
    suggest = len(os.sched_getaffinity(0)) if cpuset_checked else os.cpu_count()
    if suggest is not None and num_workers <= suggest:
        return
    if suggest is None:
        advice = "DataLoader is not able to compute a suggested max number of worker in current system."
    else:
        unchecked = "" if cpuset_checked else " (`cpuset` is not taken into account)"
        advice = (
            f"Our suggested max number of worker in current system is {suggest}{unchecked}, which is "
            "smaller than what this DataLoader is going to create."
        )
    warnings.warn(
        f"This DataLoader will create {num_workers} worker processes in total. {advice} Please be "
        "aware that excessive worker creation might get DataLoader running slow or even freeze, "
        "lower the worker number to avoid potential slowness/freeze if necessary.",
        stacklevel=2,
    )


class DataLoader(Generic[T_co]):
    """Iterate over ``dataset`` in batches, as ``torch.utils.data.DataLoader``.

    Args:
        dataset: a map-style or iterable dataset.
        batch_size: samples per batch (None: no batching, samples are converted only).
        shuffle: reshuffle every epoch (map-style datasets).
        sampler / batch_sampler: custom index order / batches (exclusive with shuffle etc.).
        num_workers: worker processes (0 loads in the main process).
        collate_fn: merges a list of samples (default: ``default_collate``).
        drop_last: drop the last incomplete batch.
        generator: generator for the shuffling order and worker seeds.
        timeout: seconds to wait for a worker's batch, or a persistent worker's start of a
            pass, before raising (0: no limit, as PyTorch's; a dead worker is still named
            within 0.1 s, a stopped one is waited for).
        pin_memory / pin_memory_device: accepted; there is no accelerator memory to pin for
            (a warning, as PyTorch's CPU build gives).
        in_order: batches always come in sampler order here (``in_order=False`` allows, but
            does not need, another order).
    """

    def __init__(
        self,
        dataset: Any,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Sampler | Iterable | None = None,
        batch_sampler: Sampler | Iterable | None = None,
        num_workers: int = 0,
        collate_fn: Callable | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable | None = None,
        multiprocessing_context: Any = None,
        generator: Generator | None = None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        if num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; use num_workers=0 to disable multiprocessing."
            )
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing."
                "let num_workers > 0 to enable multiprocessing, otherwise set "
                "prefetch_factor to None."
            )
        self.dataset = dataset
        self.num_workers, self.timeout = num_workers, timeout
        self.prefetch_factor = 2 if prefetch_factor is None and num_workers else prefetch_factor
        self.worker_init_fn, self.generator = worker_init_fn, generator
        self.multiprocessing_context = multiprocessing_context
        self.persistent_workers = persistent_workers
        self._persistent_seed: int | None = None  # the base seed persistent workers keep
        self._pool: _WorkerPool | None = None  # the persistent workers, between passes
        self.pin_memory, self.pin_memory_device, self.in_order = pin_memory, pin_memory_device, in_order
        self._iterator: _BaseDataLoaderIter | None = None
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if isinstance(dataset, IterDataPipe):  # shuffle switches the DataPipe's shufflers
                if shuffle is not None:
                    self.dataset = dataset = graph_settings.apply_shuffle_settings(dataset, shuffle=shuffle)
            elif shuffle:
                raise ValueError(
                    f"DataLoader with IterableDataset: expected unspecified shuffle "
                    f"option, but got shuffle={shuffle}"
                )
            if sampler is not None or batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified sampler and batch_sampler options"
                )
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, "
                    "shuffle, sampler, and drop_last"
                )
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive with drop_last"
            )
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size, self.drop_last = batch_size, drop_last
        self.sampler, self.batch_sampler = sampler, batch_sampler
        self._auto_collation = batch_sampler is not None or (self._iterable and batch_size is not None)
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        _warn_if_too_many_workers(num_workers)

    @property
    def _index_sampler(self) -> Any:
        return self.batch_sampler if self._auto_collation else self.sampler

    def _len_or_none(self) -> int | None:
        try:
            return len(self)
        except TypeError:
            return None

    def __len__(self) -> int:
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        return len(self._index_sampler)

    def __iter__(self) -> _BaseDataLoaderIter:
        fetch = _Fetch(self.collate_fn, self._auto_collation, self._iterable, self.drop_last)
        if isinstance(self.dataset, IterDataPipe):  # as PyTorch: a seed for its random pipes first
            shared = int(_random_array(_gen(self.generator), (), np.dtype(np.int64), None, None))
            graph_settings.apply_random_seed(self.dataset, Generator().manual_seed(shared))
        # As PyTorch, every iterator draws its workers' base seed first (one int64 random_()
        # from ``generator`` or the default generator), before the sampler draws anything;
        # with persistent workers PyTorch keeps its first iterator, so it draws only once.
        base_seed = self._persistent_seed
        if base_seed is None:
            base_seed = int(_random_array(_gen(self.generator), (), np.dtype(np.int64), None, None))
            if self.persistent_workers and self.num_workers > 0:
                self._persistent_seed = base_seed
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self, self._single_process(fetch))
        _warn_if_too_many_workers(self.num_workers)  # as PyTorch's: when made, and for each iterator
        return _MultiProcessingDataLoaderIter(self, self._multi_process(fetch, base_seed))

    def _single_process(self, fetch: _Fetch) -> Iterator[Any]:
        if self._iterable:
            it = iter(self.dataset)
            while True:
                data = fetch(it, self.batch_size)
                if data is None:
                    return
                yield data
        else:
            for indices in self._index_sampler:
                yield fetch(self.dataset, indices)

    def _multi_process(self, fetch: _Fetch, base_seed: int) -> Iterator[Any]:
        pool = self._pool
        self._pool = None
        if pool is not None and pool.owner != os.getpid():
            pool = None  # forked: the parent's workers stay the parent's
        if pool is None:
            pool = _WorkerPool(self, fetch, base_seed)
        else:  # persistent workers: the same processes, RNG streams and dataset copies as before
            try:
                pool.resume(self.timeout)
            except BaseException:
                pool.shutdown()
                raise
        keep = False
        try:
            yield from self._drive(pool.index_qs, pool.receiver, pool.workers)
            keep = self.persistent_workers
        except GeneratorExit:  # the loop stopped early; persistent workers stay for the next pass
            keep = self.persistent_workers
            raise
        finally:
            if keep:
                self._shutdown_pool()  # (a pass begun while this one was paused kept its own)
                self._pool = pool
            else:
                pool.shutdown()

    def _shutdown_pool(self) -> None:
        """Stop the persistent workers (a later pass starts new ones)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown()

    def _drive(self, index_qs: list, receiver: ResultReceiver, workers: list) -> Iterator[Any]:
        """Keep ``prefetch_factor`` batches per worker in flight; yield results in order."""
        n_workers = len(workers)
        tasks: Iterator = (
            iter(self._index_sampler) if not self._iterable else itertools.repeat(self.batch_size)
        )
        sent = received = 0
        pending: dict[int, Any] = {}
        exhausted: set[int] = set()
        done_sending = False

        def send_one() -> None:
            nonlocal sent, done_sending
            if done_sending:
                return
            live = [w for w in range(n_workers) if w not in exhausted]
            if not live:
                done_sending = True
                return
            try:
                task = next(tasks)
            except StopIteration:
                done_sending = True
                return
            index_qs[live[sent % len(live)] if self._iterable else sent % n_workers].put((sent, task))
            sent += 1

        for _ in range(self.prefetch_factor * n_workers):
            send_one()
        while received < sent:
            waited_since = time.monotonic()
            while received not in pending:
                try:
                    batch_no, data = receiver.get(timeout=_WORKER_CHECK_S)
                except queue.Empty:
                    _check_workers(workers)
                    if 0 < self.timeout <= time.monotonic() - waited_since:
                        raise _timed_out(workers, self.timeout) from None
                    continue
                except Exception:  # a result broken off by its sender's death: name the death
                    _await_a_death(workers, _DEATH_VISIBLE_S)
                    _check_workers(workers)
                    raise
                if isinstance(data, WorkerError):
                    data.reraise()
                pending[batch_no] = data
            data = pending.pop(received)
            received += 1
            if isinstance(data, _IterableExhausted):
                exhausted.add(data.worker_id)
                send_one()
            else:
                send_one()  # before the batch goes out, as PyTorch's (a loop stopped here sent it)
                yield data
