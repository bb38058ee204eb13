"""``torch.multiprocessing.spawn`` / ``start_processes``: run ``fn(i, *args)`` in ``nprocs``
processes, wait for them, and turn the first failure into an exception in the parent
(with the child's traceback) after stopping the others.

Unlike PyTorch's, waiting never hangs on children that cannot go on: when every child
still running is stopped by a signal (SIGSTOP, SIGTSTP; not a debugger's stop) for
``STOPPED_GRACE_S`` seconds, they are killed and the wait raises; and a ``spawn(join=True)``
that is interrupted ends its children before the exception leaves it.

A job without a secret (no ``DISTTORCH_JOB_SECRET``) on this host gets one: the children of
one call share a fresh secret, as ``disttorch-launch`` gives its ranks, so another user of the
host cannot reach their store or peers from loopback. Not when the store is on another host
(``MASTER_ADDR`` off loopback: a multi-node job needs the same secret everywhere) nor when
this process has already made a socket without a secret (its children may join it).
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import secrets
import signal
import sys
import time
import traceback
import warnings
from collections.abc import Callable
from typing import Any

from .._process_state import stopped_by_signal

__all__ = [
    "ProcessContext",
    "ProcessException",
    "ProcessExitedException",
    "ProcessRaisedException",
    "SpawnContext",
    "ENV_VAR_PARALLEL_START",
    "spawn",
    "start_processes",
]


#: PyTorch starts forkserver children from a thread pool when this variable is "1"; disttorch
#: starts them one by one whatever it says (each start is a fork of the server, milliseconds).
ENV_VAR_PARALLEL_START = "TORCH_MP_PARALLEL_START"


class ProcessException(Exception):
    """A spawned process failed."""

    def __init__(self, msg: str, error_index: int, pid: int) -> None:
        super().__init__(msg)
        self.msg, self.error_index, self.pid = msg, error_index, pid

    def __reduce__(self) -> tuple:
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A spawned process raised an exception (its traceback is in the message)."""


class ProcessExitedException(ProcessException):
    """A spawned process exited with a non-zero code or was killed by a signal."""

    def __init__(
        self, msg: str, error_index: int, error_pid: int, exit_code: int, signal_name: str | None = None
    ) -> None:
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self) -> tuple:
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code, self.signal_name)


#: seconds every remaining child may stay stopped by a signal before a wait gives up on them
STOPPED_GRACE_S = 30.0


#: the job secret disttorch.distributed authenticates connections with (``base/auth.py``)
_ENV_SECRET = "DISTTORCH_JOB_SECRET"


def _children_secret() -> str | None:
    """A fresh job secret for the children of one call, or ``None`` where they keep the
    environment's (see the module's docs)."""
    if os.environ.get(_ENV_SECRET):
        return None
    auth = sys.modules.get("disttorch.distributed.base.auth")
    if auth is not None and auth.configured_without_secret():
        return None
    master = os.environ.get("MASTER_ADDR", "localhost").strip().strip("[]")
    if master.lower() != "localhost":
        from ..distributed.base.addresses import is_loopback

        if not is_loopback(master):
            return None
    return secrets.token_hex(32)


def _wrap(fn: Callable, i: int, args: tuple, error_queue: Any, secret: str | None = None) -> None:
    if secret is not None:
        os.environ[_ENV_SECRET] = secret
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # the parent is stopping the job
    except Exception:  # noqa: BLE001 (any failure goes to the parent)
        error_queue.put(traceback.format_exc())
        sys.exit(1)


class ProcessContext:
    """The processes of one :func:`start_processes` call; :meth:`join` waits for them."""

    def __init__(self, processes: list, error_queues: list) -> None:
        self.processes, self.error_queues = processes, error_queues
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def _wait(self, timeout: float | None) -> list:
        """The sentinels of the processes that ended within ``timeout``; ``[None]`` when
        waiting forever found every remaining process stopped for ``STOPPED_GRACE_S``."""
        if timeout is not None:
            return multiprocessing.connection.wait(list(self.sentinels), timeout=timeout)
        stopped_since = None
        while True:
            ready = multiprocessing.connection.wait(list(self.sentinels), timeout=min(1.0, STOPPED_GRACE_S))
            if ready:
                return ready
            now = time.monotonic()
            if not all(stopped_by_signal(self.processes[i].pid) for i in self.sentinels.values()):
                stopped_since = None
            elif stopped_since is None:
                stopped_since = now
            elif now - stopped_since >= STOPPED_GRACE_S:
                return [None]

    def stop(self, grace_period: float | None = None) -> None:
        """Terminate the processes still running (continuing stopped ones so they see it),
        wait ``grace_period`` seconds (default 10), then kill what is left."""
        for p in self.processes:
            if p.is_alive():
                p.terminate()
                try:
                    os.kill(p.pid, signal.SIGCONT)
                except OSError:
                    pass  # it has just ended
        for p in self.processes:
            p.join(grace_period if grace_period is not None else 10)
            if p.is_alive():
                p.kill()
                p.join()
        self.sentinels.clear()

    def pids(self) -> list[int]:
        """The process ids, by index."""
        return [int(p.pid) for p in self.processes]

    def join(self, timeout: float | None = None, grace_period: float | None = None) -> bool:
        """Wait up to ``timeout`` seconds (forever when None) for a process to end.

        Returns True when all ended successfully, False while some still run. When one
        failed, the others are terminated and ProcessRaisedException (it raised; its
        traceback is in the message) or ProcessExitedException (non-zero exit or signal)
        is raised. Waiting forever ends, with ProcessExitedException, when every process
        still running stays stopped by a signal for ``STOPPED_GRACE_S`` seconds.
        """
        if not self.sentinels:
            return True
        ready = self._wait(timeout)
        if ready == [None]:
            stalled = sorted(self.sentinels.values())
            self.stop(grace_period)
            p = self.processes[stalled[0]]
            raise ProcessExitedException(
                f"processes {stalled} stayed stopped by a signal for {STOPPED_GRACE_S:g} s while no "
                "other process was running; they were ended",
                stalled[0],
                p.pid,
                p.exitcode,
                signal.Signals(-p.exitcode).name if p.exitcode < 0 else None,
            )
        failed = None
        for sentinel in ready:
            i = self.sentinels.pop(sentinel)
            p = self.processes[i]
            p.join()
            if p.exitcode != 0 and failed is None:
                failed = i
        if failed is None:
            return not self.sentinels
        self.stop(grace_period)
        p, q = self.processes[failed], self.error_queues[failed]
        if not q.empty():
            tb = q.get()
            raise ProcessRaisedException(
                f"\n\n-- Process {failed} terminated with the following error:\n{tb}", failed, p.pid
            )
        if p.exitcode < 0:
            name = signal.Signals(-p.exitcode).name
            raise ProcessExitedException(
                f"process {failed} terminated with signal {name}", failed, p.pid, p.exitcode, name
            )
        raise ProcessExitedException(
            f"process {failed} terminated with exit code {p.exitcode}", failed, p.pid, p.exitcode
        )


class SpawnContext(ProcessContext):
    """:class:`ProcessContext` under its name before PyTorch 1.4 (warns)."""

    def __init__(self, processes: list, error_queues: list) -> None:
        warnings.warn("SpawnContext is renamed to ProcessContext since 1.4 release.", stacklevel=2)
        super().__init__(processes, error_queues)


def start_processes(
    fn: Callable,
    args: tuple = (),
    nprocs: int = 1,
    join: bool = True,
    daemon: bool = False,
    start_method: str = "spawn",
) -> ProcessContext | None:
    """Start ``nprocs`` processes (``start_method``: spawn, fork or forkserver) each
    running ``fn(i, *args)`` for its index ``i``. With ``join`` wait for all and return
    None (raising as :meth:`ProcessContext.join` does); else return the
    :class:`ProcessContext`."""
    if not isinstance(nprocs, int) or nprocs < 1:
        raise ValueError(f"nprocs must be a positive integer, got {nprocs!r}")
    ctx = multiprocessing.get_context(start_method)
    processes: list = []
    queues: list = []
    context = None
    secret = _children_secret()
    try:
        for i in range(nprocs):
            q = ctx.SimpleQueue()
            p = ctx.Process(target=_wrap, args=(fn, i, args, q, secret), daemon=daemon)
            p.start()
            processes.append(p)
            queues.append(q)
        context = ProcessContext(processes, queues)
        if not join:
            return context
        while not context.join():
            pass
    except BaseException:  # interrupted, also while starting (or a child failed): no child outlives the call
        (context or ProcessContext(processes, queues)).stop()
        raise
    return None


def spawn(
    fn: Callable,
    args: tuple = (),
    nprocs: int = 1,
    join: bool = True,
    daemon: bool = False,
    start_method: str = "spawn",
) -> ProcessContext | None:
    """:func:`start_processes` with the ``spawn`` start method by default (as PyTorch)."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)
