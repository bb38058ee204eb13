"""Waiting loops for the op pool's threads (:mod:`disttorch.kernels.thread_pool`), compiled
by numba (the ``fast`` extra) and run without the GIL: a thread watches a counter that
another thread raises, yielding its core at every turn.

- ``spin(counters, index, value, turns)``: whether ``counters[index]`` reached ``value``
  within ``turns`` turns, each an atomic load and a ``sched_yield``.
- ``serve(counters, parts, counts, w, done, seen, turns)``: a worker's whole wait. It
  reports ``seen`` parts finished (``counters[done]``, an atomic store: after letting go of
  the GIL, so that the caller that sees the report finds the GIL free; had it to wait for
  the GIL, it would sleep in the kernel), then watches ``counters[w]``. Each part posted
  there that is a list of matrix products (``counts[w]`` rows of ``parts[w]``, see
  :mod:`disttorch.kernels.cblas_gemm`) it runs and reports at once, without ever taking the
  GIL. It returns ``(seen, status)``: :data:`PYTHON_PART` when a part for Python is posted
  (``counts[w]`` is 0), :data:`WAKE_CALLER` after reporting a part while the caller sleeps
  (``counters[-1]`` set: the caller waits on a condition variable, which only Python can
  notify), or :data:`IDLE` after ``turns`` turns with nothing posted.

Importing this module without numba raises ``ImportError`` (see :mod:`disttorch.kernels.jit`).
"""

from __future__ import annotations

from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from disttorch.kernels.cblas_gemm import run_parts
from disttorch.kernels.jit import njit

__all__ = ["IDLE", "PYTHON_PART", "WAKE_CALLER", "serve", "spin"]

IDLE, PYTHON_PART, WAKE_CALLER = 0, 1, 2  # why serve returned

_sched_yield = types.ExternalFunction("sched_yield", types.int32())


def _pointer(context, builder, array_type, array, index):
    """The address of ``array[index]`` in generated code."""
    view = context.make_array(array_type)(context, builder, array)
    return cgutils.get_item_pointer(context, builder, array_type, view, [index])


@intrinsic
def _load_acquire(typingctx, array, index):  # noqa: ARG001 - numba's signature
    def codegen(context, builder, signature, args):
        where = _pointer(context, builder, signature.args[0], *args)
        return builder.load_atomic(where, ordering="acquire", align=8)

    return types.int64(array, index), codegen


@intrinsic
def _store_release(typingctx, array, index, value):  # noqa: ARG001 - numba's signature
    def codegen(context, builder, signature, args):
        where = _pointer(context, builder, signature.args[0], args[0], args[1])
        builder.store_atomic(args[2], where, ordering="release", align=8)
        return context.get_dummy_value()

    return types.void(array, index, value), codegen


@njit()
def spin(counters, index, value, turns):  # pragma: no cover - compiled
    for _ in range(turns):
        if _load_acquire(counters, index) >= value:
            return True
        _sched_yield()
    return _load_acquire(counters, index) >= value


@njit()
def serve(counters, parts, counts, w, done, seen, turns):  # pragma: no cover - compiled
    _store_release(counters, done, seen)
    asleep = len(counters) - 1
    waited = 0
    while waited < turns:
        if _load_acquire(counters, w) > seen:
            if counts[w] == 0:
                return seen, PYTHON_PART
            run_parts(parts[w], counts[w])
            seen += 1
            _store_release(counters, done, seen)
            if _load_acquire(counters, asleep):
                return seen, WAKE_CALLER
            waited = 0
        else:
            _sched_yield()
            waited += 1
    return seen, PYTHON_PART if _load_acquire(counters, w) > seen else IDLE
