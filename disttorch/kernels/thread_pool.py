"""The op pool: worker threads that each run one part of a split op while the caller runs
the first part (see :mod:`disttorch.kernels.threads` for what splits and when).

One hand-off, the caller and worker ``w``::

    caller                                worker w
    ------                                --------
    tasks[w] = (context, body, i, j)      watching posted[w]
    posted[w] += 1  --------------------> takes the GIL, reads tasks[w]
    body(0, i)   (NumPy lets go of the GIL)  body(i, j) in a copy of the caller's context
    watching done[w]                      lets go of the GIL, then done[w] = posted[w]
    done[w] seen  <----------------------
    raises the first error of any part

Each counter has one writer (``posted[w]`` the caller, ``done[w]`` worker ``w``) and only
grows, so no lock is needed: a counter is stored after what it announces, the reader loads
it with acquire ordering, and a task is read under the GIL the caller has let go of.

Waiting is where the time goes. A thread that sleeps in the kernel between ops leaves its
core idle, and on the 2-core development machine (a virtual machine) waking it took
50-100 us, after which it ran its part 10-50% slower than the caller ran an equal one.
OpenMP's threads spin for a while after each parallel region for that reason, and so do
these: with the ``fast`` extra (numba), a waiting thread, worker or caller, first watches
its counter in a compiled loop (:mod:`disttorch.kernels.spin_wait`) that does not hold the
GIL and yields the core at every turn (a process with work to do gets it), for about
:data:`SPIN_SECONDS`; only then does it sleep on a condition variable. Without numba it
sleeps at once. A worker reports a finished part from inside that loop, after letting go
of the GIL, so that the caller never has to sleep waiting for the GIL.

What is left of a hand-off is the GIL: the worker that sees its part while the caller
still runs Python sleeps until the caller's part enters NumPy (some 20 us on that
machine, against some 60 us for a pool of sleeping threads).

A part may also be a list of matrix products (rows of :mod:`disttorch.kernels.cblas_gemm`,
posted by :meth:`OpPool.run_products`): a worker waiting in its compiled loop runs it
there, without taking the GIL at all, and goes on waiting (with numba; without it there
are no such parts).
"""

from __future__ import annotations

import contextvars
import threading
import time
from typing import Any, Callable, List, Optional, Sequence, Tuple

import numpy as np

from disttorch.kernels.gemm_parts import FIELDS
from disttorch.kernels.jit import compiled

__all__ = ["MAX_PRODUCTS", "OpPool", "SPIN_SECONDS"]

#: How long a waiting thread watches its counter before it sleeps: a training step's split
#: ops mostly follow each other within a millisecond or two, and a spin keeps the core awake
#: for the next one; a longer pause (loading a batch, an all-reduce) lets it sleep. (On 2
#: cores, 5 ms gave the GPT of ``benchmarks/train_step.py --threads 2`` a 1-vs-2 ratio of
#: 0.87-0.96 over five runs, 2 ms 0.82-0.90, in the same A/B.)
SPIN_SECONDS = 0.005

#: The most matrix products (rows) one worker's part may hold (a part of more runs as
#: Python): attention's products over ``(batch, heads)`` come as a row per batch index.
MAX_PRODUCTS = 64

Part = Tuple[Callable[[int, int], Any], int, int]


PYTHON_PART, WAKE_CALLER = 1, 2  # spin_wait.serve's answers (besides 0: nothing posted)


def _load_spin() -> Tuple[Callable, Callable, Callable]:
    """The compiled loops (:mod:`disttorch.kernels.spin_wait`, which needs numba): waiting,
    a worker's serving and running matrix products, compiled or loaded from numba's cache
    now rather than in the first split."""
    from disttorch.kernels import cblas_gemm, spin_wait

    counters = np.zeros(3, np.int64)
    parts = np.zeros((1, MAX_PRODUCTS, FIELDS), np.int64)
    spin_wait.spin(counters, 0, 0, 1)
    assert (spin_wait.PYTHON_PART, spin_wait.WAKE_CALLER) == (PYTHON_PART, WAKE_CALLER)
    spin_wait.serve(counters, parts, np.zeros(1, np.int64), 0, 1, 0, 1)
    cblas_gemm.run_parts(parts[0], 0)
    return spin_wait.spin, spin_wait.serve, cblas_gemm.run_parts


def _turns_for(seconds: float, spin: Callable) -> int:
    """How many turns of ``spin`` take about ``seconds`` on this machine."""
    counters = np.zeros(1, np.int64)
    start = time.perf_counter()
    spin(counters, 0, 1, 2000)
    per_turn = max((time.perf_counter() - start) / 2000, 1e-8)
    return max(1, int(seconds / per_turn))


class OpPool:
    """``workers`` threads that run the parts of split ops, handed over by :meth:`run`."""

    def __init__(self, workers: int) -> None:
        loops = compiled(_load_spin)
        self.spin, self.serve, self.run_parts = loops if loops else (None, None, None)
        self.turns = _turns_for(SPIN_SECONDS, self.spin) if loops else 0
        # counters[w]: parts posted to worker w; counters[workers + w]: parts it finished;
        # counters[-1]: 1 while the caller sleeps waiting for parts
        self.counters = np.zeros(2 * workers + 1, np.int64)
        # products[w, :counts[w]]: the matrix products of the part posted to worker w (none:
        # a part for Python, in tasks[w])
        self.products = np.zeros((workers, MAX_PRODUCTS, FIELDS), np.int64)
        self.counts = np.zeros(workers, np.int64)
        self.tasks: List[Optional[Tuple[contextvars.Context, Callable, int, int]]] = [None] * workers
        self.errors: List[Optional[BaseException]] = [None] * workers
        self.posted = threading.Condition()  # a sleeping worker waits on it for a part
        self.finished = threading.Condition()  # a sleeping caller waits on it for the parts
        self.closing = False
        self.busy = 0  # workers 0 .. busy-1 may be running parts: _drain before posting more
        self.operands: Sequence[np.ndarray] = ()  # what the posted matrix products point into
        self.threads = [
            threading.Thread(target=self._serve, args=(w,), name=f"disttorch-intraop_{w}", daemon=True)
            for w in range(workers)
        ]
        for thread in self.threads:
            thread.start()

    def run(self, parts: Sequence[Part], meanwhile: Optional[Callable[[], Any]] = None) -> None:
        """Run ``parts[0]`` on this thread and ``parts[1:]`` on workers 0, 1, ...; return
        when all finished, raising the first error of any part. ``meanwhile`` (work that does
        not depend on the parts) runs on this thread after its own part, while it would
        otherwise wait for the workers'. One caller at a time (``threads.py`` holds its
        region lock around each split)."""
        self._drain()
        for w, (body, start, stop) in enumerate(parts[1:]):
            self.tasks[w] = (contextvars.copy_context(), body, start, stop)  # one each: a
            # context runs on one thread at a time
            self.counts[w] = 0
            self.counters[w] += 1
        self._post(len(parts) - 1)
        body, start, stop = parts[0]
        try:
            body(start, stop)
            if meanwhile is not None:
                meanwhile()
        finally:
            self._drain()
            # taken now, every one: an error this call does not raise (the caller's own came
            # first, or another worker's) must not be raised by the next split
            errors, self.errors[: len(parts) - 1] = self.errors[: len(parts) - 1], [None] * (len(parts) - 1)
        for error in errors:
            if error is not None:
                raise error

    @property
    def runs_products(self) -> bool:
        """Whether :meth:`run_products` may be called (numba compiled the pool's loops)."""
        return self.serve is not None

    def run_products(
        self,
        products: np.ndarray,
        bounds: Sequence[int],
        operands: Sequence[np.ndarray],
        meanwhile: Optional[Callable[[], Any]] = None,
    ) -> None:
        """Run the matrix products ``products[bounds[0]:bounds[1]]`` (rows laid out as
        :mod:`disttorch.kernels.gemm_parts` says) on this thread and each next slice of
        ``bounds`` on workers 0, 1, ... (at most :data:`MAX_PRODUCTS` a worker); return when
        all finished; ``meanwhile`` as in :meth:`run`. Each runs in compiled code, without
        the GIL. The rows hold only
        addresses: the pool keeps ``operands`` (the arrays they point into) alive until every
        part has finished, even when the wait is interrupted (``KeyboardInterrupt``)."""
        self._drain()
        self.operands = operands
        for w in range(len(bounds) - 2):
            count = bounds[w + 2] - bounds[w + 1]
            self.products[w, :count] = products[bounds[w + 1] : bounds[w + 2]]
            self.counts[w] = count
            self.counters[w] += 1
        self._post(len(bounds) - 2)
        try:
            self.run_parts(products[bounds[0] : bounds[1]], bounds[1] - bounds[0])
            if meanwhile is not None:
                meanwhile()
        finally:
            self._drain()

    def close(self) -> None:
        """Stop the workers (each finishes the part it runs) and wait for them."""
        self.closing = True
        with self.posted:
            self.counts[:] = 0
            self.counters[: len(self.threads)] += 1
            self.posted.notify_all()
        for thread in self.threads:
            thread.join()

    def _post(self, workers: int) -> None:
        """Wake the workers that sleep (parts were posted to workers ``0 .. workers-1``, in
        their counters)."""
        self.busy = workers
        with self.posted:
            self.posted.notify_all()

    def _drain(self) -> None:
        """Until every part posted has finished: spin, then sleep, with ``counters[-1]`` set
        so that a worker that reports notifies. (One that saw it unset just before reports
        without notifying; the caller notices within a millisecond.) A split whose wait was
        interrupted is drained by the next one before it posts anything."""
        for w in range(self.busy):
            done, posted = len(self.threads) + w, int(self.counters[w])
            if self._spin(done, posted):
                continue
            with self.finished:
                self.counters[-1] = 1
                while self.counters[done] < posted:
                    self.finished.wait(0.001)
                self.counters[-1] = 0
        self.busy, self.operands = 0, ()

    def _serve(self, w: int) -> None:
        """Worker ``w``: wait for a part, run it, report it; until the pool closes. With
        numba it waits in :func:`~disttorch.kernels.spin_wait.serve`, which runs the parts
        that are matrix products itself, and sleeps once that has spun for nothing."""
        seen, done = 0, len(self.threads) + w
        while True:
            if self.serve is not None and not self.counters[-1]:
                # report, serve the matrix products, and spin for the next part, without the GIL
                seen, status = self.serve(
                    self.counters, self.products, self.counts, w, done, seen, self.turns
                )
                if status == WAKE_CALLER:
                    with self.finished:
                        self.finished.notify_all()
                    continue
                ready = status == PYTHON_PART
            else:
                with self.finished:
                    self.counters[done] = seen
                    self.finished.notify_all()
                ready = self._spin(w, seen + 1)
            if not ready:
                with self.posted:
                    while self.counters[w] <= seen:
                        self.posted.wait()
            seen += 1
            if self.closing:
                return
            if self.counts[w]:
                self.run_parts(self.products[w], self.counts[w])  # (woke from sleep for it)
                continue
            context, body, start, stop = self.tasks[w]
            self.tasks[w] = None
            try:
                context.run(body, start, stop)
            except BaseException as error:  # noqa: BLE001 - raised again by the caller
                self.errors[w] = error

    def _spin(self, index: int, value: int) -> bool:
        """Whether ``counters[index]`` reached ``value`` while spinning (False at once
        without numba)."""
        return self.spin is not None and self.spin(self.counters, index, value, self.turns)
