"""Optional compilation of the kernels' hottest loops with numba (the ``fast`` extra:
``pip install 'disttorch[fast]'``).

A kernel that has a compiled form hands a *builder* to :func:`compiled`: a function that
imports numba, compiles the loops and returns them. :func:`compiled` runs each builder once
per process and returns its result, or ``None`` when numba is not installed, cannot be
imported, fails to compile, or ``DISTTORCH_JIT=0`` is set (read at every call, so it can be
switched at run time). With ``None`` the kernel runs its NumPy form: both forms compute the
same numbers, and the tests run both. (The op pool's spin-wait, ``spin_wait.py``, has no
NumPy form: without it the pool's threads sleep between ops instead of spinning.) Compiled code is cached on disk (numba's
``cache=True``), so only the first process on a machine pays for compiling.

A fork (a data loader's workers, ``os.fork``, a ``multiprocessing`` pool) waits for a
builder or a numba compile running on another thread to finish: a child forked in the
middle of one would inherit its import lock or numba's compiler lock held by a thread it
does not have, and hang at its first compiled kernel. (The module numba's dispatcher imports
at its first call, ``numpy.ma``, is imported by :func:`njit`, inside the builders; disttorch's
subpackages imported on first use are imported inside :func:`fork_waits` too.)
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["compiled", "fork_waits", "njit", "vectorize"]

logger = logging.getLogger("disttorch.kernels")

_built: dict[Callable[[], Any], Any] = {}
_building: dict[int, int] = {}  # thread -> builders running on it (numba's import among them)
_built_one = threading.Condition()  # guards _building; held by a fork from its start to its end
_guard: list = []  # the listener of _keep_warnings_shown, once installed


def compiled(build: Callable[[], Any]) -> Any:
    """``build()``'s result (compiled once), or ``None`` to use the NumPy form."""
    if os.environ.get("DISTTORCH_JIT", "1") == "0":
        return None
    if build not in _built:
        with fork_waits():
            _built[build] = _build(build)
    return _built[build]


@contextlib.contextmanager
def fork_waits() -> Iterator[None]:
    """A block a fork on another thread waits for (a builder, a first import: a child forked
    in the middle would inherit its locks held by a thread it does not have)."""
    me = threading.get_ident()
    with _built_one:
        _building[me] = _building.get(me, 0) + 1
    try:
        yield
    finally:
        with _built_one:
            _building[me] -= 1
            if not _building[me]:
                del _building[me]
            _built_one.notify_all()


def _build(build: Callable[[], Any]) -> Any:
    try:
        return build()
    except ImportError:  # numba missing, or too old/new for this NumPy
        return None
    except Exception as error:  # noqa: BLE001 - e.g. no writable cache directory
        logger.warning("%s: compiled loops unavailable (%s); using NumPy", build.__module__, error)
        return None


#: How long a fork waits for other threads' builders or compiles before going on regardless.
FORK_WAIT_S = 60.0
_held_over_fork: list = []


def _before_fork() -> None:
    """Wait until no other thread runs a builder (new ones wait for the fork) and none holds
    numba's compiler lock, which the fork then holds (builders on this thread go on: the
    child has this thread)."""
    me = threading.get_ident()
    _built_one.acquire()
    _held_over_fork.append(_built_one)
    if not _built_one.wait_for(lambda: not _building.keys() - {me}, timeout=FORK_WAIT_S):
        logger.warning("fork: a kernel builder on another thread still runs after %.0f s", FORK_WAIT_S)
        return
    compiler = getattr(sys.modules.get("numba.core.compiler_lock"), "global_compiler_lock", None)
    lock = getattr(compiler, "_lock", None)
    if lock is not None:
        if lock.acquire(timeout=FORK_WAIT_S):
            _held_over_fork.append(lock)
        else:
            logger.warning("fork: a numba compile on another thread still runs after %.0f s", FORK_WAIT_S)


def _after_fork_in_parent() -> None:
    while _held_over_fork:
        _held_over_fork.pop().release()


def _after_fork_in_child() -> None:
    me = threading.get_ident()
    for thread in list(_building):  # those that waited out FORK_WAIT_S are not in the child
        if thread != me:
            del _building[thread]
    _after_fork_in_parent()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(
        before=_before_fork, after_in_parent=_after_fork_in_parent, after_in_child=_after_fork_in_child
    )


def njit(contract: bool = True, numpy_division: bool = False) -> Callable:
    """numba's ``njit`` as the kernels use it: cached on disk, no GIL, fused multiply-adds
    allowed (the only fast-math liberty: NaN and infinity behave as in NumPy). With
    ``contract=False``, for a loop that must give a NumPy form's bits, every multiply and
    add rounds on its own, as NumPy's passes do. With ``contract=False`` or
    ``numpy_division``, a division by zero gives NumPy's infinity or NaN instead of raising
    (without that check, divisions vectorise)."""
    import numba
    import numpy.ma  # noqa: F401 - numba's first typeof of an array imports it: here, a fork waits for it

    _keep_warnings_shown()
    error_model = "numpy" if numpy_division or not contract else "python"
    fastmath = {"contract"} if contract else False
    return numba.njit(cache=True, nogil=True, fastmath=fastmath, error_model=error_model)


def vectorize(signatures: list, **options: Any) -> Callable:
    """numba's ``vectorize`` (a ufunc of the given signatures, built now) with the program's
    shown warnings kept, as :func:`njit`'s compiles keep them: numba's ufunc builder leaves a
    ``warnings.catch_warnings`` block outside its compiler lock."""
    import numba

    _keep_warnings_shown()

    def build(fn: Callable) -> Any:
        _guard[0].on_start(None)
        try:
            return numba.vectorize(signatures, **options)(fn)
        finally:
            _guard[0].on_end(None)

    return build


def _keep_warnings_shown() -> None:
    """numba's compiler (and its cache loader) leaves many ``warnings.catch_warnings``
    blocks, and Python forgets at each which warnings it already showed (the ``default``
    action's once per line): a kernel compiled in the middle of a program would show the
    program's warnings again, where PyTorch shows them once. While numba holds its compiler
    lock, restoring the filters on leaving such a block is not counted as a change of them;
    filters that differ when it lets go (a lasting change) still are."""
    if _guard:
        return
    from numba.core import event

    names = [n for n in ("_filters_mutated", "_filters_mutated_lock_held") if hasattr(warnings, n)]

    class _Guard(event.Listener):
        depth = 0  # threads inside or waiting for the lock (numba counts a waiting one in)
        saved: list = []
        filters: list = []
        lock = threading.Lock()

        def on_start(self, ev: Any) -> None:
            with self.lock:
                if self.depth == 0:
                    self.saved = [getattr(warnings, n) for n in names]
                    self.filters = list(warnings.filters)
                    for n in names:
                        setattr(warnings, n, _unchanged)
                self.depth += 1

        def on_end(self, ev: Any) -> None:
            with self.lock:
                self.depth -= 1
                if self.depth == 0:
                    for n, f in zip(names, self.saved):
                        setattr(warnings, n, f)
                    if warnings.filters != self.filters and self.saved:
                        self.saved[0]()

    _guard.append(_Guard())
    event.register("numba:compiler_lock", _guard[0])


def _unchanged(*args: Any) -> None:
    """Stands for ``warnings._filters_mutated`` while numba compiles (see above)."""
